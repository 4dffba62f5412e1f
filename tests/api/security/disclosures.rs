//! Disclosures (API.md 11): reads of students' records by an API key are logged per
//! student, off the read's path; reads by staff, by guardians and of the disclosures
//! themselves are not.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{
    helpers::{ApiKey, As, NewApiKey, NewRecord, TestApp, spawn_app},
    resources::guardians::family,
};

fn disclosures_of(student: &str) -> String {
    format!("/api/v1/school/students/{student}/disclosures/")
}

/// The student's disclosures once `expected` are there (they are written within a fraction
/// of a second), or as they are after a few seconds.
async fn settled(app: &TestApp, admin: &As, student: &str, expected: usize) -> Value {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let reply = app.get(&disclosures_of(student), admin).await;
        reply.assert(200, None);
        let count = reply.body["count"].as_u64().expect("count") as usize;
        if count >= expected || Instant::now() > deadline {
            return reply.body;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A read-only API key of alpha named `name`: the caller with it, and the key.
async fn reading_key(app: &TestApp, name: &str) -> (As, ApiKey) {
    let root = app.as_root().await;
    let school = app.tenant_id(&root, "alpha").await;
    let created = NewApiKey::named(name)
        .of_school(&school)
        .read_only()
        .create(app, &root)
        .await;
    (As::school("alpha").key(&created.key), created)
}

#[tokio::test]
async fn an_api_key_read_of_a_class_is_disclosed_for_each_of_its_students() {
    let app = spawn_app().await;
    let f = family(&app).await;
    let (key, created) = reading_key(&app, "SIS export").await;
    let key_id = created.id.clone();

    // Staff and guardians read first: nothing is disclosed.
    for student in ['a', 'b', 'c'].map(|letter| f.student(letter)) {
        app.get(&format!("/api/v1/school/students/{student}/"), &f.admin)
            .await
            .assert(200, None);
    }
    app.get("/api/v1/school/students/", &f.guardian)
        .await
        .assert(200, None);

    let class = format!("/api/v1/school/classes/{}/students/", f.class_a);
    let read = app.get(&class, &key).await;
    assert_eq!(read.assert(200, None).body["count"], 2);
    for letter in ['a', 'c'] {
        let body = settled(&app, &f.admin, f.student(letter), 1).await;
        assert_eq!(body["count"], 1, "{letter}: {body}");
        let entry = &body["results"][0];
        assert_eq!(
            entry["party"],
            json!({"type": "api_key", "id": key_id, "name": "SIS export"})
        );
        let what = entry["what"].as_str().expect("what");
        assert!(
            what.starts_with("student") && what.contains(&class),
            "{what}"
        );
        assert!(
            entry["at"].as_str().is_some_and(|at| at.ends_with('Z')),
            "{entry}"
        );
    }
    // B was not in the class read; the staff's reads of B were not disclosures.
    let b = settled(&app, &f.admin, f.student('b'), 1).await;
    assert_eq!(b["count"], 0, "{b}");

    // A read of marks and of a report card: one entry per student a read answers, newest
    // first; reading the disclosures (even with the key) discloses nothing.
    let marks = format!(
        "/api/v1/school/sessions/{}/exam-sessions/{}/exams/{}/marks/",
        f.session, f.exam_session, f.exam_b
    );
    assert_eq!(
        app.get(&marks, &key).await.assert(200, None).body["count"],
        1
    );
    let card = format!(
        "/api/v1/school/sessions/{}/exam-sessions/{}/report-cards/{}/",
        f.session,
        f.exam_session,
        f.student('b')
    );
    app.get(&card, &key).await.assert(200, None);
    let b = settled(&app, &f.admin, f.student('b'), 2).await;
    assert_eq!(b["count"], 2, "{b}");
    let newest = b["results"][0]["what"].as_str().expect("what");
    assert!(
        newest.starts_with("report_card, student") && newest.contains(&card),
        "{newest}"
    );
    assert!(
        b["results"][1]["what"]
            .as_str()
            .expect("what")
            .starts_with("mark")
    );
    app.get(&disclosures_of(f.student('b')), &key)
        .await
        .assert(200, None);
    let a_card = card.replace(f.student('b'), f.student('a'));
    app.get(&a_card, &f.guardian).await.assert(200, None);
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(settled(&app, &f.admin, f.student('b'), 3).await["count"], 2);
    assert_eq!(settled(&app, &f.admin, f.student('a'), 2).await["count"], 1);
}

#[tokio::test]
async fn disclosures_need_view_history_and_a_student() {
    let app = spawn_app().await;
    let teacher = app.as_school_user("alpha", "teacher").await;
    let admin = app.as_school_user("alpha", "admin").await;
    let unknown = uuid::Uuid::new_v4().to_string();
    app.get(&disclosures_of(&unknown), &teacher)
        .await
        .assert(403, Some("permission_denied"));
    app.get(&disclosures_of(&unknown), &admin)
        .await
        .assert(404, Some("not_found"));
    app.get(&disclosures_of("nope"), &admin)
        .await
        .assert(400, Some("invalid_id"));
}

#[tokio::test]
async fn an_integration_clients_reads_are_disclosed_for_each_student_they_answer() {
    use crate::oneroster::{ROSTER, new_client, or_get, roster, token_request};
    let app = spawn_app().await;
    let r = roster(&app, "alpha").await;
    let client = new_client(&app, "alpha", None).await;
    let (status, token) = token_request(
        &app,
        "alpha",
        Some((
            client["client_id"].as_str().expect("client_id"),
            client["client_secret"].as_str().expect("secret"),
        )),
        &[("grant_type", "client_credentials")],
    )
    .await;
    assert_eq!(status, 200, "{token}");
    let token = token["access_token"].as_str().expect("token").to_owned();
    // The school's own staff read first: nothing is disclosed.
    app.get("/api/v1/school/students/", &r.admin)
        .await
        .assert(200, None);
    // A class roster: one entry per student it lists.
    let roster_path = format!("{ROSTER}classes/{}/students", r.class_sid());
    let listed = or_get(&app, "alpha", &token, &roster_path).await;
    listed.assert(200, None);
    // One student's record, narrowed by `fields=` to what names nobody: still theirs.
    let one = format!("{ROSTER}users/{}?fields=status", r.students[0]);
    or_get(&app, "alpha", &token, &one).await.assert(200, None);
    // Records about no student disclose nothing.
    or_get(&app, "alpha", &token, &format!("{ROSTER}orgs"))
        .await
        .assert(200, None);
    let first = settled(&app, &r.admin, &r.students[0], 2).await;
    assert_eq!(first["count"], 2, "{first}");
    let party = json!({"type": "oauth_client", "id": client["id"], "name": "LMS"});
    for entry in first["results"].as_array().expect("results") {
        assert_eq!(entry["party"], party);
    }
    let newest = first["results"][0]["what"].as_str().expect("what");
    // The request as the server saw it (its paths end with a slash).
    assert!(
        newest.starts_with("user")
            && newest.contains(&format!("users/{}", r.students[0]))
            && newest.contains("fields=status"),
        "{newest}"
    );
    let older = first["results"][1]["what"].as_str().expect("what");
    assert!(
        older.contains(&format!("classes/{}/students", r.class_sid())),
        "{older}"
    );
    for student in &r.students[1..] {
        let body = settled(&app, &r.admin, student, 1).await;
        assert_eq!(body["count"], 1, "{body}");
        assert_eq!(body["results"][0]["party"], party);
    }
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert_eq!(settled(&app, &r.admin, &r.students[1], 2).await["count"], 1);
}

#[tokio::test]
async fn an_api_keys_oneroster_export_is_disclosed_for_every_student() {
    use crate::oneroster::roster;
    let app = spawn_app().await;
    let r = roster(&app, "alpha").await;
    let (key, _) = reading_key(&app, "nightly export").await;
    let export = "/api/v1/school/oneroster/export/";
    // The staff's download is no disclosure; the key's is one for each student.
    let staff = app.get(export, &r.admin).await;
    assert_eq!(staff.status.as_u16(), 200);
    let by_key = app.get(export, &key).await;
    assert_eq!(by_key.status.as_u16(), 200);
    for student in &r.students {
        let body = settled(&app, &r.admin, student, 1).await;
        assert_eq!(body["count"], 1, "{body}");
        assert_eq!(body["results"][0]["party"]["name"], "nightly export");
        let what = body["results"][0]["what"].as_str().expect("what");
        assert!(
            what.starts_with("oneroster_export") && what.contains(export),
            "{what}"
        );
    }
}
