//! Hostile input in every writable field: always a 4xx (or an accepted literal), never a
//! 5xx, and a refused write leaves the stored record as it was.

use serde_json::{Value, json};

use crate::helpers::{As, NewRecord, NewStudent, NewSubject, TestApp, spawn_app};

fn hostile_values() -> Vec<Value> {
    let mut deep = json!(1);
    for _ in 0..200 {
        deep = json!([deep]);
    }
    vec![
        json!("'; DROP TABLE subjects; --"),
        json!("x".repeat(10_001)),
        json!("nul\u{0}byte"),
        json!(12345),
        json!(-1.5),
        json!(true),
        json!([1, "two"]),
        json!({"nested": {"object": 1}}),
        json!(null),
        json!(""),
        json!(9_223_372_036_854_775_807i64),
        deep,
    ]
}

const READ_ONLY: [&str; 7] = [
    "id",
    "created_at",
    "updated_at",
    "created_by",
    "updated_by",
    "exam",
    "academic_session",
];

async fn sweep(app: &TestApp, who: &As, collection: &str, valid: Value) {
    let created = app.post(collection, who, valid.clone()).await;
    created.assert(201, None);
    let record = if created.body.get("data").is_some() {
        created.body["data"].clone()
    } else {
        created.body.clone()
    };
    let item = format!("{collection}{}/", record["id"].as_str().expect("id"));
    let fields: Vec<String> = valid.as_object().expect("object").keys().cloned().collect();
    for field in fields.iter().filter(|f| !READ_ONLY.contains(&f.as_str())) {
        for value in hostile_values() {
            let before = app
                .get(&format!("{item}?include_deleted=true"), who)
                .await
                .body;
            let reply = app
                .patch(
                    &format!("{item}?include_deleted=true"),
                    who,
                    json!({ field.clone(): value }),
                )
                .await;
            assert!(
                reply.status.as_u16() < 500,
                "PATCH {item} {field}: {}",
                reply.body
            );
            if reply.status.is_client_error() {
                let after = app
                    .get(&format!("{item}?include_deleted=true"), who)
                    .await
                    .body;
                assert_eq!(
                    before, after,
                    "a refused PATCH of {field} changed the record"
                );
            }
            let mut body = valid.clone();
            body[field.as_str()] = value;
            let reply = app.post(collection, who, body).await;
            assert!(
                reply.status.as_u16() < 500,
                "POST {collection} {field}: {}",
                reply.body
            );
        }
    }
    // A body nested past the parser's limit is malformed JSON, not a crash.
    let nested = format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000));
    let res = app
        .client
        .post(format!("{}{collection}", app.address))
        .header("Host", &who.host)
        .bearer_auth(who.token.as_deref().unwrap_or(""))
        .header("Content-Type", "application/json")
        .body(nested)
        .send()
        .await
        .expect("send");
    TestApp::read(res).await.assert(400, Some("malformed_json"));
}

#[tokio::test]
async fn hostile_input_never_fails_the_server() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let teacher_id =
        app.get("/api/v1/school/teachers/", &admin).await.body["results"][0]["id"].clone();
    let fixture = app.exam_fixture(&admin, "H0").await;
    let (subject, class, exams, exam) = (
        fixture.subject.clone(),
        fixture.class.clone(),
        fixture.exams.clone(),
        fixture.exam.clone(),
    );
    let other_subject = NewSubject::new("S2", "S2").post(&app, &admin).await.body["id"].clone();
    NewStudent::new("H-1", "A", "B")
        .post(&app, &admin)
        .await
        .assert(201, None);
    let exam_sessions = fixture.exam_sessions.clone();

    let cases = vec![
        (
            "/api/v1/school/sessions/".to_owned(),
            json!({"name": "H", "start_date": "2026-01-01", "end_date": "2026-02-01", "is_active": true, "is_deleted": false}),
        ),
        (
            exam_sessions.clone(),
            json!({"name": "H", "term": "T", "start_date": "2026-01-01", "end_date": "2026-02-01", "is_deleted": false}),
        ),
        (
            exams.clone(),
            json!({"name": "H", "subject": other_subject, "academic_class": class, "teacher": teacher_id, "max_mark": 50, "is_deleted": false}),
        ),
        (
            format!("{exams}{exam}/marks/"),
            json!({"studentadmissionnumber": "H-1", "mark": 5, "symbol": "A", "comment": "c", "is_deleted": false}),
        ),
        (
            "/api/v1/school/departments/".to_owned(),
            json!({"name": "H", "hod": teacher_id, "subject": subject, "teachers": [teacher_id], "is_deleted": false}),
        ),
        (
            "/api/v1/school/subjects/".to_owned(),
            json!({"name": "H", "code": "H1", "is_deleted": false}),
        ),
        (
            "/api/v1/school/classes/".to_owned(),
            json!({"name": "H", "level": 3, "is_deleted": false}),
        ),
        (
            "/api/v1/school/students/".to_owned(),
            json!({"admission_number": "H-2", "first_name": "F", "last_name": "L", "academic_class": class, "is_deleted": false}),
        ),
        (
            "/api/v1/school/teacher-assignments/".to_owned(),
            json!({"teacher": teacher_id, "academic_class": class, "subject": subject, "is_deleted": false}),
        ),
        (
            "/api/v1/school/teacher-grade-comments/".to_owned(),
            json!({"teacher": teacher_id, "grade": "A", "min_mark": 1, "max_mark": 2, "comment": "c", "is_deleted": false}),
        ),
        (
            "/api/v1/school/session-setup/".to_owned(),
            json!({"session_type": "exam_session", "status": "pending", "current_step": 1}),
        ),
        (
            "/api/v1/school/general-settings/".to_owned(),
            json!({"school_name": "H", "address": "A", "phone": "P", "email": "h@h.test", "logo": "l"}),
        ),
        (
            "/api/v1/school/academic-settings/".to_owned(),
            json!({"pass_mark": 40, "max_mark": 90, "terms_per_session": 2, "grading_scale": []}),
        ),
        (
            "/api/v1/school/roles/".to_owned(),
            json!({"name": "H", "permissions": ["view_exam"]}),
        ),
    ];
    for (collection, valid) in cases {
        sweep(&app, &admin, &collection, valid).await;
    }
    let report = app
        .get("/api/v1/school/report-settings/", &admin)
        .await
        .body;
    for field in ["show_position", "footer_text", "principal_signature"] {
        for value in hostile_values() {
            let reply = app
                .patch(
                    "/api/v1/school/report-settings/",
                    &admin,
                    json!({ field: value }),
                )
                .await;
            assert!(reply.status.as_u16() < 500, "{}", reply.body);
        }
    }
    assert!(report.is_object());
}
