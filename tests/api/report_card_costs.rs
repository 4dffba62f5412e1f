//! What one report-card request may cost: a long comment costs what the cell shows, not
//! the square of its length, and one PDF holds a bounded number of cards.

use std::time::{Duration, Instant};

use diesel::{Connection, RunQueryDsl, pg::PgConnection};
use serde_json::{Value, json};

use crate::helpers::{As, TestApp, spawn_app};

/// A class of one student with a mark in each of six subjects; answers (the student's card
/// path, the class's cards path, class id).
async fn six_subject_card(app: &TestApp, admin: &As) -> (String, String, String) {
    let id = |reply: &crate::helpers::Reply, pointer: &str| -> String {
        reply
            .body
            .pointer(pointer)
            .and_then(Value::as_str)
            .expect("id")
            .to_owned()
    };
    let session = app
        .post(
            "/api/v1/school/sessions/",
            admin,
            json!({"name": "2026", "start_date": "2026-01-01", "end_date": "2026-12-31"}),
        )
        .await;
    let session = id(session.assert(201, None), "/data/id");
    let exam_sessions = format!("/api/v1/school/sessions/{session}/exam-sessions/");
    let exam_session = app
        .post(
            &exam_sessions,
            admin,
            json!({"name": "Term 1", "term": "T1"}),
        )
        .await;
    let exam_session = id(exam_session.assert(201, None), "/id");
    let class = app
        .post("/api/v1/school/classes/", admin, json!({"name": "Form 6"}))
        .await;
    let class = id(class.assert(201, None), "/id");
    let student = app
        .post(
            "/api/v1/school/students/",
            admin,
            json!({"admission_number": "C-1", "first_name": "Ada", "last_name": "Long", "academic_class": class}),
        )
        .await;
    let student = id(student.assert(201, None), "/id");
    let exams = format!("{exam_sessions}{exam_session}/exams/");
    for n in 0..6 {
        let subject = app
            .post(
                "/api/v1/school/subjects/",
                admin,
                json!({"name": format!("Subject {n}"), "code": format!("S{n}")}),
            )
            .await;
        let subject = id(subject.assert(201, None), "/id");
        let exam = app
            .post(
                &exams,
                admin,
                json!({"name": format!("Paper {n}"), "subject": subject, "academic_class": class}),
            )
            .await;
        let exam = id(exam.assert(201, None), "/id");
        app.post(
            &format!("{exams}{exam}/marks/"),
            admin,
            json!({"studentadmissionnumber": "C-1", "mark": 60 + n}),
        )
        .await
        .assert(201, None);
    }
    let cards = format!("{exam_sessions}{exam_session}/report-cards/");
    (format!("{cards}{student}/"), cards, class)
}

/// The fastest of a few PDF answers to GET `path`.
async fn pdf_time(app: &TestApp, path: &str, who: &As) -> Duration {
    let mut best = Duration::MAX;
    for _ in 0..5 {
        let started = Instant::now();
        let res = app
            .client
            .get(format!("{}{path}", app.address))
            .header("Host", &who.host)
            .bearer_auth(who.token.as_deref().expect("token"))
            .header("Accept", "application/pdf")
            .send()
            .await
            .expect("request");
        assert_eq!(res.status(), 200);
        let bytes = res.bytes().await.expect("body");
        assert!(bytes.starts_with(b"%PDF-"));
        best = best.min(started.elapsed());
    }
    best
}

#[tokio::test]
async fn a_ten_thousand_character_comment_costs_what_a_short_one_does() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let (card, _, _) = six_subject_card(&app, &admin).await;
    let comments = "/api/v1/school/teacher-grade-comments/";
    let comment = app
        .post(
            comments,
            &admin,
            json!({"grade": "P", "min_mark": 0, "max_mark": 100, "comment": "Well done!"}),
        )
        .await;
    let comment = comment.assert(201, None).body["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let short = pdf_time(&app, &card, &admin).await;
    app.patch(
        &format!("{comments}{comment}/"),
        &admin,
        json!({"comment": "Keep going. ".repeat(834)[..10_000].to_owned()}),
    )
    .await
    .assert(200, None);
    let long = pdf_time(&app, &card, &admin).await;
    assert!(
        long < short * 2,
        "a 10,000-character comment took {long:?}, a 10-character one {short:?}"
    );
}

#[tokio::test]
async fn one_pdf_holds_a_bounded_number_of_cards() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let (_, cards, class) = six_subject_card(&app, &admin).await;
    let mut conn = PgConnection::establish(&app.db.url).expect("connect");
    diesel::sql_query(format!(
        "INSERT INTO alpha.students (admission_number, first_name, last_name, academic_class_id) \
         SELECT 'B-' || g, 'Many', 'Students', '{class}' FROM generate_series(1, 500) g"
    ))
    .execute(&mut conn)
    .expect("students");
    for path in [cards.clone(), format!("{cards}?academic_class={class}")] {
        let res = app
            .client
            .get(format!("{}{path}", app.address))
            .header("Host", &admin.host)
            .bearer_auth(admin.token.as_deref().expect("token"))
            .header("Accept", "application/pdf")
            .send()
            .await
            .expect("request");
        let reply = TestApp::read(res).await;
        reply.assert(400, Some("invalid_query"));
        let detail = reply.body["detail"].as_str().unwrap_or("");
        assert!(
            detail.contains("at most 500 report cards") && detail.contains("501"),
            "{detail}"
        );
    }
    // The same cards as JSON are answered.
    let all = app.get(&cards, &admin).await;
    all.assert(200, None);
    assert_eq!(all.body.as_array().map(Vec::len), Some(501));
}
