//! Resources moved onto the one `Store` shape answer as before: report settings (one record
//! per school, written through the store), sessions' `is_active` left by a PUT without it,
//! departments' teachers; and lists whose filters are read once at the edge (history,
//! school users).

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{As, TestApp, spawn_app};

const REPORT: &str = "/api/v1/school/report-settings/";
const SESSIONS: &str = "/api/v1/school/sessions/";

async fn put(app: &TestApp, path: &str, who: &As, body: Value) -> crate::helpers::Reply {
    app.request(Method::PUT, path, who, Some(body)).await
}

#[tokio::test]
async fn report_settings_are_one_record_written_through_the_store() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;

    let first = app.get(REPORT, &admin).await;
    first.assert(200, None);
    assert_eq!(first.body["show_position"], true);
    assert_eq!(first.body["footer_text"], "");
    assert!(first.body.get("id").is_none(), "{}", first.body);

    let patched = app
        .patch(REPORT, &admin, json!({"footer_text": "Keep reading"}))
        .await;
    patched.assert(200, None);
    assert_eq!(patched.body["footer_text"], "Keep reading");
    assert_eq!(patched.body["show_position"], true);

    // A PUT sets every field: the ones left out take their defaults.
    let replaced = put(&app, REPORT, &admin, json!({"show_position": false})).await;
    replaced.assert(200, None);
    assert_eq!(replaced.body["show_position"], false);
    assert_eq!(replaced.body["footer_text"], "");

    let bad = app
        .patch(REPORT, &admin, json!({"show_position": "yes"}))
        .await;
    bad.assert(400, Some("validation_error"));
    assert_eq!(app.get(REPORT, &admin).await.body["show_position"], false);

    // Its events carry the record as answered.
    let feed = app
        .get(
            "/api/v1/school/events/?type=report_settings.updated",
            &admin,
        )
        .await;
    feed.assert(200, None);
    let events = feed.body["results"].as_array().expect("results");
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[1]["data"]["show_position"], false);
}

#[tokio::test]
async fn a_session_put_without_is_active_leaves_it() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let body = json!({"name": "2030/31", "start_date": "2030-09-01T00:00:00Z",
        "end_date": "2031-07-31T00:00:00Z"});
    let created = app.post(SESSIONS, &admin, body.clone()).await;
    created.assert(201, None);
    let id = created.body["data"]["id"].as_str().expect("id").to_owned();
    let path = format!("{SESSIONS}{id}/");
    let replaced = put(&app, &path, &admin, body).await;
    replaced.assert(200, None);
    assert_eq!(replaced.body["is_active"], true);
}

#[tokio::test]
async fn history_and_school_user_filters_are_read_once() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let history = "/api/v1/school/history/";
    app.get(&format!("{history}?record=x"), &admin)
        .await
        .assert(400, Some("invalid_query"));
    app.get(&format!("{history}?student=x"), &admin)
        .await
        .assert(400, Some("invalid_query"));
    app.get(history, &admin)
        .await
        .assert(400, Some("invalid_query"));
    app.get(&format!("{history}?page=0&record=x"), &admin)
        .await
        .assert(400, Some("invalid_query"));
    let nil = "00000000-0000-0000-0000-000000000000";
    let empty = app.get(&format!("{history}?record={nil}"), &admin).await;
    empty.assert(200, None);
    assert_eq!(empty.body["count"], 0);

    let users = "/api/v1/school/users/";
    let teachers = app
        .get(&format!("{users}?role=%20teacher%20"), &admin)
        .await;
    teachers.assert(200, None);
    let untrimmed = app.get(&format!("{users}?role=teacher"), &admin).await;
    assert_eq!(teachers.body["count"], untrimmed.body["count"]);
    let nobody = app.get(&format!("{users}?role=nobody"), &admin).await;
    assert_eq!(nobody.body["count"], 0);
}
