//! The school year (API.md 10): enrollments by session, a student's class as the active
//! session's enrollment, the migration that fills enrollments for existing schools, and the
//! rollover (plan equal to apply, last year unchanged, one apply per session).

use std::time::Duration;

use diesel::{Connection, QueryableByName, RunQueryDsl, pg::PgConnection, sql_types};
use school_service::{auth::roles, db::Db, tenancy::school_migrations::migrate_school};
use serde_json::{Value, json};

use crate::helpers::{As, TestApp, TestDb, school_at_version, spawn_app};

const SESSIONS: &str = "/api/v1/school/sessions/";
const CLASSES: &str = "/api/v1/school/classes/";
const STUDENTS: &str = "/api/v1/school/students/";
const ENROLLMENTS: &str = "/api/v1/school/enrollments/";

fn id_of(body: &Value, pointer: &str) -> String {
    body.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no {pointer} in {body}"))
        .to_owned()
}

async fn created(app: &TestApp, who: &As, path: &str, body: Value) -> Value {
    let reply = app.post(path, who, body).await;
    reply.assert(201, None);
    reply.body.clone()
}

async fn new_session(app: &TestApp, who: &As, name: &str) -> String {
    let body = json!({"name": name, "start_date": "2025-09-01", "end_date": "2026-07-31"});
    id_of(&created(app, who, SESSIONS, body).await, "/data/id")
}

async fn new_class(app: &TestApp, who: &As, name: &str, level: Option<i32>) -> String {
    let body = json!({"name": name, "level": level});
    id_of(&created(app, who, CLASSES, body).await, "/id")
}

async fn new_student(app: &TestApp, who: &As, number: &str, class: &str) -> String {
    let body = json!({"admission_number": number, "first_name": "Zoë", "last_name": number, "academic_class": class});
    id_of(&created(app, who, STUDENTS, body).await, "/id")
}

async fn enrollments_of(app: &TestApp, who: &As, query: &str) -> Vec<Value> {
    let reply = app.get(&format!("{ENROLLMENTS}?page_size=200&{query}"), who).await;
    reply.assert(200, None);
    reply.body["results"].as_array().expect("results").clone()
}

#[tokio::test]
async fn a_students_class_is_their_enrollment_in_the_active_session() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let session = new_session(&app, &admin, "2025/26").await;
    let (one, two) = (
        new_class(&app, &admin, "One", Some(1)).await,
        new_class(&app, &admin, "Two", Some(2)).await,
    );
    let ann = new_student(&app, &admin, "A-1", &one).await;
    let mine = enrollments_of(&app, &admin, &format!("student={ann}")).await;
    assert_eq!(mine.len(), 1, "creating a student with a class enrolls them");
    assert_eq!(
        (&mine[0]["academic_class"], &mine[0]["academic_session"], &mine[0]["status"]),
        (&json!(one), &json!(session), &json!("active"))
    );

    // PATCHing the class moves the enrollment; no second one appears.
    app.patch(&format!("{STUDENTS}{ann}/"), &admin, json!({"academic_class": two}))
        .await
        .assert(200, None);
    let mine = enrollments_of(&app, &admin, &format!("student={ann}")).await;
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0]["academic_class"], json!(two));

    // An enrollment written for the active session sets the student's class.
    let bob = id_of(
        &created(&app, &admin, STUDENTS, json!({"admission_number": "B-1", "first_name": "Bob", "last_name": "Lee"})).await,
        "/id",
    );
    let enrollment = created(
        &app,
        &admin,
        ENROLLMENTS,
        json!({"student": bob, "academic_class": one, "academic_session": session}),
    )
    .await;
    assert_eq!(enrollment["status"], "active");
    let bob_now = app.get(&format!("{STUDENTS}{bob}/"), &admin).await;
    assert_eq!(bob_now.body["academic_class"], json!(one));
    app.patch(
        &format!("{ENROLLMENTS}{}/", id_of(&enrollment, "/id")),
        &admin,
        json!({"academic_class": two}),
    )
    .await
    .assert(200, None);
    assert_eq!(
        app.get(&format!("{STUDENTS}{bob}/"), &admin).await.body["academic_class"],
        json!(two)
    );
    // One live enrollment per (student, session).
    app.post(
        ENROLLMENTS,
        &admin,
        json!({"student": bob, "academic_class": one, "academic_session": session}),
    )
    .await
    .assert(409, Some("conflict"));
    // References and the status are checked.
    let bad = app
        .post(
            ENROLLMENTS,
            &admin,
            json!({"student": bob, "academic_class": uuid::Uuid::new_v4(), "academic_session": session, "status": "gone"}),
        )
        .await;
    bad.assert(400, Some("validation_error"));
    assert!(bad.body["errors"]["academic_class"].is_array() && bad.body["errors"]["status"].is_array());

    // A class emptied by hand withdraws the active enrollment.
    app.patch(&format!("{STUDENTS}{ann}/"), &admin, json!({"academic_class": null}))
        .await
        .assert(200, None);
    let mine = enrollments_of(&app, &admin, &format!("student={ann}")).await;
    assert_eq!(mine[0]["status"], "withdrawn");

    // Teachers may read enrollments but not write them; office may write.
    let teacher = app.as_school_user("alpha", "teacher").await;
    app.get(ENROLLMENTS, &teacher).await.assert(200, None);
    app.post(ENROLLMENTS, &teacher, json!({})).await.assert(403, Some("permission_denied"));
    app.get(&format!("{ENROLLMENTS}?status=nope"), &admin)
        .await
        .assert(400, Some("invalid_query"));
}

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = sql_types::Text)]
    number: String,
    #[diesel(sql_type = sql_types::Text)]
    class: String,
    #[diesel(sql_type = sql_types::Text)]
    session: String,
}

#[tokio::test]
async fn migrate_fills_the_active_sessions_enrollments_of_an_existing_school() {
    tokio::task::spawn_blocking(|| {
        let test_db = TestDb::new();
        let db = Db::new(&test_db.url, 2, Duration::from_secs(10));
        let school = school_at_version(&db, "older_year", "20261124000002");
        let mut conn = PgConnection::establish(&test_db.url).expect("connect");
        for statement in [
            "INSERT INTO older_year.academic_sessions (name, start_date, end_date, is_active) VALUES \
             ('Old', '2024-09-01', '2025-07-31', false), ('Now', '2025-09-01', '2026-07-31', true)",
            "INSERT INTO older_year.academic_classes (name, level) VALUES ('One', 1), ('Two', 2)",
            "INSERT INTO older_year.students (admission_number, first_name, last_name, academic_class_id, is_deleted) \
             SELECT 'S-' || g, 'F', 'L', (SELECT id FROM older_year.academic_classes WHERE name = CASE WHEN g % 2 = 0 THEN 'One' ELSE 'Two' END), g = 5 \
             FROM generate_series(1, 6) g",
            "INSERT INTO older_year.students (admission_number, first_name, last_name) VALUES ('NO-CLASS', 'F', 'L')",
        ] {
            diesel::sql_query(statement).execute(&mut conn).expect(statement);
        }
        db.with_tenant(&school, |conn| Ok(migrate_school(conn, roles::SEED)))
            .expect("bind")
            .expect("migrate");
        let rows: Vec<Row> = diesel::sql_query(
            "SELECT s.admission_number AS number, c.name AS class, a.name AS session \
             FROM older_year.enrollments e JOIN older_year.students s ON s.id = e.student_id \
             JOIN older_year.academic_classes c ON c.id = e.academic_class_id \
             JOIN older_year.academic_sessions a ON a.id = e.academic_session_id \
             WHERE e.status = 'active' AND NOT e.is_deleted ORDER BY s.admission_number",
        )
        .load(&mut conn)
        .expect("enrollments");
        let got: Vec<(String, String, String)> = rows
            .into_iter()
            .map(|r| (r.number, r.class, r.session))
            .collect();
        let want: Vec<(String, String, String)> = [("S-1", "Two"), ("S-2", "One"), ("S-3", "Two"), ("S-4", "One"), ("S-6", "One")]
            .iter()
            .map(|(n, c)| (n.to_string(), c.to_string(), "Now".to_string()))
            .collect();
        assert_eq!(got, want, "live students with a class, in the active session only");
    })
    .await
    .expect("test");
}
