//! Academic sessions (the spec's create envelope, one active session) and exam sessions.

use futures_util::future::join_all;
use serde_json::{Value, json};

use crate::helpers::{NewRecord, NewSession, spawn_app};

const SESSIONS: &str = "/api/v1/school/sessions/";

fn session(name: &str) -> Value {
    json!({"name": name, "start_date": "2026-09-01T00:00:00Z", "end_date": "2027-07-31", "is_active": false})
}

#[tokio::test]
async fn creating_a_session_answers_the_envelope_and_activates_it_alone() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let first = app.post(SESSIONS, &admin, session("2026/27")).await;
    first.assert(201, None);
    assert_eq!(first.body["created"], true);
    let data = &first.body["data"];
    assert_eq!(data["start_date"], "2026-09-01");
    assert_eq!(data["end_date"], "2027-07-31");
    assert_eq!(data["is_active"], "true");
    for key in ["id", "name", "created_at", "updated_at"] {
        assert!(data.get(key).is_some(), "{key}");
    }
    let first_id = data["id"].as_str().expect("id").to_owned();
    let second = app.post(SESSIONS, &admin, session("2027/28")).await;
    let second_id = second.body["data"]["id"].as_str().expect("id").to_owned();
    let old = app.get(&format!("{SESSIONS}{first_id}/"), &admin).await;
    assert_eq!(old.body["is_active"], false);
    assert_eq!(old.body["start_date"], "2026-09-01T00:00:00Z");
    // PATCH is_active: true activates one and deactivates the others.
    app.patch(
        &format!("{SESSIONS}{first_id}/"),
        &admin,
        json!({"is_active": true}),
    )
    .await
    .assert(200, None);
    assert_eq!(
        app.get(&format!("{SESSIONS}{second_id}/"), &admin)
            .await
            .body["is_active"],
        false
    );
    // A PUT without is_active leaves it as it is.
    let put = app
        .request(
            reqwest::Method::PUT,
            &format!("{SESSIONS}{first_id}/"),
            &admin,
            Some(json!({"name": "Renamed", "start_date": "2026-09-01", "end_date": "2027-07-31"})),
        )
        .await;
    put.assert(200, None);
    assert_eq!(put.body["is_active"], true);
    app.patch(
        &format!("{SESSIONS}{first_id}/"),
        &admin,
        json!({"end_date": "2020-01-01"}),
    )
    .await
    .assert(400, Some("validation_error"));
    NewSession::new("x", "2026-09-01T00:00:00", "2027-01-01")
        .post(&app, &admin)
        .await
        .assert(400, Some("validation_error"));
}

#[tokio::test]
async fn concurrent_creates_leave_exactly_one_active_session() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let creates = (0..12).map(|i| {
        let (app, admin) = (&app, &admin);
        async move {
            app.post(SESSIONS, admin, session(&format!("S{i}")))
                .await
                .assert(201, None)
                .status
        }
    });
    join_all(creates).await;
    let list = app.get(&format!("{SESSIONS}?page_size=100"), &admin).await;
    let active = list.body["results"]
        .as_array()
        .expect("list")
        .iter()
        .filter(|s| s["is_active"] == true)
        .count();
    assert_eq!(list.body["count"], 12);
    assert_eq!(active, 1);
}

#[tokio::test]
async fn exam_sessions_live_under_their_academic_session() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let a = app.post(SESSIONS, &admin, session("A")).await.body["data"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let b = app.post(SESSIONS, &admin, session("B")).await.body["data"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let path = format!("{SESSIONS}{a}/exam-sessions/");
    let created = app
        .post(&path, &admin, json!({"name": "Midterm", "term": "Term 1"}))
        .await;
    created.assert(201, None);
    assert_eq!(created.body["academic_session"], json!(a));
    let id = created.body["id"].as_str().expect("id");
    app.get(&format!("{path}{id}/"), &admin)
        .await
        .assert(200, None);
    app.get(&format!("{SESSIONS}{b}/exam-sessions/{id}/"), &admin)
        .await
        .assert(404, Some("not_found"));
    app.get(
        &format!("{SESSIONS}{}/exam-sessions/", uuid::Uuid::new_v4()),
        &admin,
    )
    .await
    .assert(404, Some("not_found"));
    app.get(&format!("{SESSIONS}nope/exam-sessions/{id}/"), &admin)
        .await
        .assert(400, Some("invalid_id"));
    app.post(&path, &admin, json!({"name": "x", "term": "t".repeat(51)}))
        .await
        .assert(400, Some("validation_error"));
    assert_eq!(
        app.get(&format!("{path}?search=term 1"), &admin).await.body["count"],
        1
    );
    // The academic session is referenced: a real delete conflicts.
    app.delete(&format!("{SESSIONS}{a}/"), &admin)
        .await
        .assert(409, Some("conflict"));
}
