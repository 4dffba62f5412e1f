//! Writes that one write makes through another store name the same actor (API.md 9, 11):
//! a student's class change moves their enrollment, an enrollment moves its student's
//! class, a new school user takes a guardian record; each of these second writes is the
//! user's in history and events, never the system's.

use serde_json::{Value, json};

use crate::helpers::{As, PASSWORD, TestApp, spawn_app};

const HISTORY: &str = "/api/v1/school/history/";

/// A created record's id (a session answers `{data, ...}`, as activating one says more).
fn id(body: &Value) -> String {
    body["id"]
        .as_str()
        .or(body["data"]["id"].as_str())
        .expect("id")
        .to_owned()
}

async fn created(app: &TestApp, path: &str, who: &As, body: Value) -> String {
    id(&app.post(path, who, body).await.assert(201, None).body)
}

async fn user_id(app: &TestApp, who: &As) -> String {
    let me = app.get("/api/v1/school/auth/me/", who).await;
    me.body["user"]["id"].as_str().expect("user id").to_owned()
}

/// The history entries of `resource` about `student`, newest first.
async fn entries_about(app: &TestApp, admin: &As, student: &str, resource: &str) -> Vec<Value> {
    let reply = app
        .get(&format!("{HISTORY}?student={student}"), admin)
        .await;
    reply.assert(200, None);
    reply.body["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|e| e["resource"] == resource)
        .cloned()
        .collect()
}

#[tokio::test]
async fn a_write_a_hook_makes_names_the_user_who_made_the_first() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let admin_id = user_id(&app, &admin).await;
    created(
        &app,
        "/api/v1/school/sessions/",
        &admin,
        json!({"name": "2026", "start_date": "2026-01-01", "end_date": "2026-12-31"}),
    )
    .await;
    let (one, two) = (
        created(
            &app,
            "/api/v1/school/classes/",
            &admin,
            json!({"name": "One"}),
        )
        .await,
        created(
            &app,
            "/api/v1/school/classes/",
            &admin,
            json!({"name": "Two"}),
        )
        .await,
    );
    let student = created(
        &app,
        "/api/v1/school/students/",
        &admin,
        json!({"admission_number": "ACT-1", "first_name": "Ada", "last_name": "L",
               "academic_class": one}),
    )
    .await;
    // The student's class moves: their enrollment follows, in the admin's name.
    app.patch(
        &format!("/api/v1/school/students/{student}/"),
        &admin,
        json!({"academic_class": two}),
    )
    .await
    .assert(200, None);
    let enrollments = entries_about(&app, &admin, &student, "enrollment").await;
    let actions: Vec<&str> = enrollments
        .iter()
        .map(|e| e["action"].as_str().expect("action"))
        .collect();
    assert_eq!(actions, ["updated", "created"], "{enrollments:?}");
    for entry in &enrollments {
        assert_eq!(entry["actor"]["type"], "user", "{entry}");
        assert_eq!(entry["actor"]["id"], admin_id.as_str(), "{entry}");
    }
    assert_eq!(
        enrollments[0]["changes"]["academic_class"],
        json!([one, two])
    );

    // The enrollment is written back to class One: the student's class follows, in the
    // admin's name too.
    let enrollment = enrollments[0]["record"]
        .as_str()
        .expect("record")
        .to_owned();
    app.patch(
        &format!("/api/v1/school/enrollments/{enrollment}/"),
        &admin,
        json!({"academic_class": one}),
    )
    .await
    .assert(200, None);
    let students = entries_about(&app, &admin, &student, "student").await;
    assert_eq!(students[0]["changes"]["academic_class"], json!([two, one]));
    assert_eq!(students[0]["actor"]["type"], "user");
    assert_eq!(students[0]["actor"]["id"], admin_id.as_str());
}

#[tokio::test]
async fn a_new_user_takes_a_guardian_record_through_its_store() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let admin_id = user_id(&app, &admin).await;
    let guardian = created(
        &app,
        "/api/v1/school/guardians/",
        &admin,
        json!({"first_name": "Pat", "last_name": "Parent", "students": []}),
    )
    .await;
    let body = |email: &str| {
        json!({"email": email, "password": PASSWORD, "first_name": "Pat", "last_name": "Parent",
               "roles": ["guardian"], "guardian": guardian})
    };
    let user = app
        .post("/api/v1/school/users/", &admin, body("pat@alpha.test"))
        .await;
    user.assert(201, None);
    assert_eq!(user.body["guardian"], guardian.as_str());
    let user = id(&user.body);
    let record = app
        .get(&format!("/api/v1/school/guardians/{guardian}/"), &admin)
        .await;
    assert_eq!(record.body["user"], user.as_str());
    assert_eq!(record.body["updated_by"], admin_id.as_str());
    // The link is a guardian.updated event, as every write through the store is.
    let events = app
        .get("/api/v1/school/events/?type=guardian.updated", &admin)
        .await;
    events.assert(200, None);
    let linked: Vec<&Value> = events.body["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|e| e["data"]["id"] == guardian.as_str())
        .collect();
    assert_eq!(linked.len(), 1, "{}", events.body);
    assert_eq!(linked[0]["data"]["user"], user.as_str());
    // A record that has an account already is refused, and nothing is written.
    app.post("/api/v1/school/users/", &admin, body("other@alpha.test"))
        .await
        .assert(400, Some("validation_error"));
    let list = app
        .get("/api/v1/school/users/?search=other@alpha", &admin)
        .await;
    assert_eq!(list.body["count"], 0);
}
