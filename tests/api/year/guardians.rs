//! A guardian across school years (API.md 10, 11): what a guardian reads of a past year is
//! read through their child's enrollments, so after a promotion they still see last year's
//! exams, marks and report cards of the old class, and never the old class's other
//! students (nor, in the new year, the new classmates').

use serde_json::{Value, json};

use crate::{
    helpers::{As, NewClass, NewRecord, NewSubject, TestApp, spawn_app},
    resources::guardians::{Family, family},
};

/// Every answer the guardian gets for `paths`: each 200, with none of `f.secrets` in it.
async fn shown(app: &TestApp, f: &Family, path: &str) -> Value {
    let reply = app.get(path, &f.guardian).await;
    reply.assert(200, None);
    let text = reply.body.to_string();
    for secret in &f.secrets {
        assert!(
            !text.contains(secret.as_str()),
            "{path} answered {secret}: {text}"
        );
    }
    reply.body
}

fn ids(list: &Value) -> Vec<String> {
    list["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["id"].as_str().expect("id").to_owned())
        .collect()
}

#[tokio::test]
async fn a_promoted_childs_guardian_still_reads_last_years_exams_of_the_old_class() {
    let app = spawn_app().await;
    let f = family(&app).await;
    let admin: &As = &f.admin;
    let a = f.student('a').to_owned();
    let next_class = NewClass::named("Form A2").post(&app, admin).await;
    next_class.assert(201, None);
    let next_class = next_class.body["id"].as_str().expect("id").to_owned();
    // A and C move on to A2 together; B graduates.
    let rollover = app
        .post(
            &format!("/api/v1/school/sessions/{}/rollover/", f.session),
            admin,
            json!({"name": "2027", "start_date": "2027-01-01", "end_date": "2027-12-31",
                   "promotions": [{"from_class": f.class_a, "to_class": next_class},
                                  {"from_class": f.class_b, "to_class": null}]}),
        )
        .await;
    rollover.assert(200, None);
    let next_session = rollover.body["session"]["id"]
        .as_str()
        .expect("new session")
        .to_owned();
    let child = app
        .get(&format!("/api/v1/school/students/{a}/"), &f.guardian)
        .await;
    assert_eq!(child.assert(200, None).body["academic_class"], next_class);

    // Last year: the exam session, the old class's exam, A's mark only, A's card only.
    let year = format!(
        "/api/v1/school/sessions/{}/exam-sessions/{}/",
        f.session, f.exam_session
    );
    let sessions = shown(&app, &f, "/api/v1/school/sessions/").await;
    let mut seen = ids(&sessions);
    seen.sort();
    let mut both = vec![f.session.clone(), next_session.clone()];
    both.sort();
    assert_eq!(seen, both, "last year's session and this year's");
    let exam_sessions = shown(
        &app,
        &f,
        &format!("/api/v1/school/sessions/{}/exam-sessions/", f.session),
    )
    .await;
    assert_eq!(ids(&exam_sessions), [f.exam_session.as_str()]);
    let exams = shown(&app, &f, &format!("{year}exams/")).await;
    assert_eq!(ids(&exams), [f.exam_a.as_str()], "{exams}");
    shown(&app, &f, &format!("{year}exams/{}/", f.exam_a)).await;
    app.get(&format!("{year}exams/{}/", f.exam_b), &f.guardian)
        .await
        .assert(404, Some("not_found"));
    let marks = shown(&app, &f, &format!("{year}exams/{}/marks/", f.exam_a)).await;
    assert_eq!(marks["count"], 1);
    assert_eq!(marks["results"][0]["studentadmissionnumber"], "FAM-A");
    let subjects = shown(&app, &f, "/api/v1/school/subjects/").await;
    assert_eq!(subjects["count"], 1, "the subject of the old class's exam");
    let card = shown(&app, &f, &format!("{year}report-cards/{a}/")).await;
    assert_eq!(card["student"]["id"], a);
    assert_eq!(card["academic_class"]["id"], f.class_a, "last year's class");
    assert!(
        card["subjects"].as_array().is_some_and(|s| !s.is_empty()),
        "{card}"
    );
    for query in [String::new(), format!("?academic_class={}", f.class_a)] {
        let cards = shown(&app, &f, &format!("{year}report-cards/{query}")).await;
        let cards = cards.as_array().expect("cards");
        assert_eq!(cards.len(), 1, "{query}: {cards:?}");
        assert_eq!(cards[0]["student"]["id"], a);
    }

    // This year: an exam of the new class is theirs too; the old class's new exam is not.
    let exam_sessions = format!("/api/v1/school/sessions/{next_session}/exam-sessions/");
    let term = app
        .post(
            &exam_sessions,
            admin,
            json!({"name": "Term 1", "term": "T1"}),
        )
        .await;
    term.assert(201, None);
    let term = term.body["id"].as_str().expect("id").to_owned();
    let subject = NewSubject::new("Subject N", "S-N")
        .post(&app, admin)
        .await
        .body["id"]
        .clone();
    let mut new_exams = Vec::new();
    for class in [&next_class, &f.class_a] {
        let exam = app
            .post(
                &format!("{exam_sessions}{term}/exams/"),
                admin,
                json!({"name": "New exam", "subject": subject, "academic_class": class}),
            )
            .await;
        exam.assert(201, None);
        new_exams.push(exam.body["id"].as_str().expect("id").to_owned());
    }
    let exams = shown(&app, &f, &format!("{exam_sessions}{term}/exams/")).await;
    assert_eq!(ids(&exams), [new_exams[0].as_str()], "{exams}");
    // The new classmates (C, promoted with A) stay out of every class list.
    for session in [&f.session, &next_session] {
        let path = format!(
            "/api/v1/school/students/?academic_session={session}&academic_class={}",
            f.class_a
        );
        let reply = app.get(&path, &f.guardian).await;
        if reply.status.is_success() {
            assert!(ids(&shown(&app, &f, &path).await).iter().all(|id| *id == a));
        }
    }
}
