//! Change events (API.md 9) and history (API.md 11), written by the store's write path in
//! the change's own transaction: every kind of write emits its event, a rolled-back write
//! none; the feed reads them in commit order from stable cursors; history answers who
//! changed a mark, an attendance record or a student, and how.

use std::{sync::Arc, time::Duration};

use school_service::{
    db::Db,
    error::ApiError,
    school::{
        Actor, Store,
        classes::{Classes, NewClass as ClassRow},
    },
    tenancy::{SchemaName, Tenant},
};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{
    As, ConfirmMark, NewApiKey, NewClass, NewMark, NewRecord, NewSession, NewStudent, NewSubject,
    TakeAttendance, TestApp, spawn_app, text,
};

const EVENTS: &str = "/api/v1/school/events/";
const HISTORY: &str = "/api/v1/school/history/";

/// Every event of the school's feed from the start, in order (read 7 at a time, so the
/// cursors are followed).
pub(super) async fn feed(app: &TestApp, who: &As) -> Vec<Value> {
    let mut events = Vec::new();
    let mut path = format!("{EVENTS}?limit=7");
    loop {
        let reply = app.get(&path, who).await;
        reply.assert(200, None);
        let page = reply.body["results"].as_array().expect("results").clone();
        let next = reply.body["next"].as_str().expect("next").to_owned();
        if page.is_empty() {
            return events;
        }
        events.extend(page);
        path = format!("{EVENTS}?limit=7&after={next}");
    }
}

pub(super) fn types(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["type"].as_str().expect("type").to_owned())
        .collect()
}

fn id_of(reply: &crate::helpers::Reply) -> String {
    reply.body["id"].as_str().expect("id").to_owned()
}

#[tokio::test]
async fn every_kind_of_write_emits_its_event_in_commit_order() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let start = feed(&app, &admin).await.len();

    // CRUD: create, update, soft delete, restore, real delete.
    let subject = NewSubject::new("Maths", "MA").post(&app, &admin).await;
    subject.assert(201, None);
    let subject_path = format!("/api/v1/school/subjects/{}/", id_of(&subject));
    app.patch(&subject_path, &admin, json!({"name": "Mathematics"}))
        .await
        .assert(200, None);
    app.patch(&subject_path, &admin, json!({"is_deleted": true}))
        .await
        .assert(200, None);
    app.patch(
        &format!("{subject_path}?include_deleted=true"),
        &admin,
        json!({"is_deleted": false}),
    )
    .await
    .assert(200, None);
    let class = NewClass::named("Gone").post(&app, &admin).await;
    app.delete(
        &format!("/api/v1/school/classes/{}/", id_of(&class)),
        &admin,
    )
    .await
    .assert(204, None);
    // A special operation over several records.
    app.request(
        reqwest::Method::DELETE,
        "/api/v1/school/subjects/bulk-soft-delete/",
        &admin,
        Some(json!({"ids": [id_of(&subject)]})),
    )
    .await
    .assert(200, None);
    // Activation: a second session deactivates the first (its own event).
    let first = NewSession::new("S1", "2026-01-01", "2026-12-31")
        .post(&app, &admin)
        .await;
    first.assert(201, None);
    let fixture = app.exam_fixture(&admin, "EV").await;
    // confirm-students: created, then updated.
    NewStudent::new("EV-1", "Ada", "L")
        .post(&app, &admin)
        .await
        .assert(201, None);
    let marks = fixture.marks();
    for mark in [40, 52] {
        ConfirmMark(NewMark {
            marks: &marks,
            studentadmissionnumber: "EV-1",
            mark: Some(mark),
            ..Default::default()
        })
        .post(&app, &admin)
        .await
        .assert(200, None);
    }
    app.request(
        reqwest::Method::PATCH,
        "/api/v1/school/report-settings/",
        &admin,
        Some(json!({"footer_text": "Thanks"})),
    )
    .await
    .assert(200, None);

    let events = feed(&app, &admin).await;
    let mine = &events[start..];
    let seen = types(mine);
    let expected_in_order = [
        "subject.created",
        "subject.updated",
        "subject.deleted",
        "subject.updated",
        "academic_class.created",
        "academic_class.deleted",
        "subject.deleted",
        "academic_session.created",
        "academic_session.updated",
        "academic_session.created",
        "exam_session.created",
        "subject.created",
        "academic_class.created",
        "exam.created",
        "student.created",
        "mark.created",
        "mark.updated",
        "report_settings.updated",
    ];
    assert_eq!(seen, expected_in_order, "events: {seen:?}");
    // `data` is the record as the API answers it after the change (before, for a delete).
    assert_eq!(mine[1]["data"]["name"], "Mathematics");
    assert_eq!(mine[2]["data"]["is_deleted"], true);
    assert_eq!(mine[5]["data"]["name"], "Gone");
    assert_eq!(mine[8]["data"]["id"], first.body["data"]["id"]);
    assert_eq!(mine[8]["data"]["is_active"], false);
    assert_eq!(mine[16]["data"]["mark"], 52);
    for event in mine {
        assert!(Uuid::parse_str(event["id"].as_str().expect("id")).is_ok());
        assert!(
            event["timestamp"]
                .as_str()
                .expect("timestamp")
                .ends_with('Z')
        );
    }
    let timestamps: Vec<&str> = mine
        .iter()
        .map(|e| e["timestamp"].as_str().expect("ts"))
        .collect();
    let mut sorted = timestamps.clone();
    sorted.sort();
    assert_eq!(timestamps, sorted, "commit order");
    // A take: one event per record.
    let class_id = fixture.class.as_str().expect("class").to_owned();
    let student = NewStudent::new("EV-2", "Bo", "K")
        .in_class(&class_id)
        .post(&app, &admin)
        .await;
    let student = [id_of(&student).to_owned()];
    for status in ["present", "late"] {
        TakeAttendance::all(&class_id, "2026-03-02", &student, status)
            .post(&app, &admin)
            .await
            .assert(200, None);
    }
    let after = feed(&app, &admin).await;
    assert_eq!(
        types(&after[events.len()..]),
        [
            // A student with a class is enrolled in the active session (API.md 10), in
            // the student's own transaction.
            "enrollment.created",
            "student.created",
            "attendance.created",
            "attendance.updated"
        ]
    );
}

#[tokio::test]
async fn a_rolled_back_write_leaves_no_event_and_a_refused_one_none() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let before = feed(&app, &admin).await.len();
    // Refused by the database (a live code taken) after validation.
    NewSubject::new("A", "DUP")
        .post(&app, &admin)
        .await
        .assert(201, None);
    NewSubject::new("B", "DUP")
        .post(&app, &admin)
        .await
        .assert(409, Some("conflict"));
    // Written through the store, then rolled back by a failure later in the transaction.
    let url = app.db.url.clone();
    tokio::task::spawn_blocking(move || {
        let db = Db::new(&url, 1, Duration::from_secs(10));
        let school = Arc::new(Tenant {
            id: Uuid::new_v4(),
            schema_name: SchemaName::parse("alpha").expect("name"),
            name: "alpha".into(),
            is_active: true,
        });
        let result: Result<(), ApiError> = db.with_tenant(&school, |conn| {
            conn.transaction(|conn| {
                let new = ClassRow {
                    name: "Never".into(),
                    level: None,
                    is_deleted: false,
                };
                Classes::create(conn, (), new, &Actor::system())?;
                Err(ApiError::Conflict("refused after the write".into()))
            })
        });
        assert!(result.is_err());
    })
    .await
    .expect("rolled back");
    let events = feed(&app, &admin).await;
    assert_eq!(types(&events[before..]), ["subject.created"]);
    let classes = app
        .get("/api/v1/school/classes/?search=Never", &admin)
        .await;
    assert_eq!(classes.body["count"], 0);
}

#[tokio::test]
async fn the_feed_reads_again_from_a_cursor_and_refuses_bad_ones() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    for n in 0..5 {
        NewClass::named(&format!("C{n}"))
            .post(&app, &admin)
            .await
            .assert(201, None);
    }
    let all = app.get(&format!("{EVENTS}?limit=1000"), &admin).await;
    let every = all.body["results"].as_array().expect("results").clone();
    let end = all.body["next"].as_str().expect("next").to_owned();
    let first = app.get(&format!("{EVENTS}?limit=2"), &admin).await;
    let cursor = first.body["next"].as_str().expect("next").to_owned();
    let again = app.get(&format!("{EVENTS}?limit=2"), &admin).await;
    assert_eq!(first.body, again.body);
    let rest = app
        .get(&format!("{EVENTS}?after={cursor}&limit=1000"), &admin)
        .await;
    let rest = rest.body["results"].as_array().expect("results").clone();
    assert_eq!(rest.as_slice(), &every[2..]);
    // No new events: `next` is the cursor given.
    let quiet = app.get(&format!("{EVENTS}?after={end}"), &admin).await;
    assert_eq!(quiet.body, json!({"results": [], "next": end}));
    // By type.
    let classes = app
        .get(
            &format!("{EVENTS}?type=academic_class.created&limit=1000"),
            &admin,
        )
        .await;
    let classes = classes.body["results"].as_array().expect("results").clone();
    assert!(classes.len() >= 5);
    assert!(
        classes
            .iter()
            .all(|e| e["type"] == "academic_class.created")
    );
    for bad in [
        "limit=0",
        "limit=1001",
        "limit=x",
        "after=abc",
        "after=-1",
        "after=99999999",
    ] {
        app.get(&format!("{EVENTS}?{bad}"), &admin)
            .await
            .assert(400, Some("invalid_query"));
    }
    // `view_event`: teachers do not hold it (office does: see the role catalogue's test).
    let teacher = app.as_school_user("alpha", "teacher").await;
    app.get(EVENTS, &teacher)
        .await
        .assert(403, Some("permission_denied"));
    // Isolation: another school's feed carries none of these.
    let beta = app.as_school_user("beta", "admin").await;
    let theirs = feed(&app, &beta).await;
    let ids: Vec<&Value> = every.iter().map(|e| &e["id"]).collect();
    assert!(theirs.iter().all(|e| !ids.contains(&&e["id"])));
}

#[tokio::test]
async fn history_says_who_changed_a_mark_and_how() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let fixture = app.exam_fixture(&admin, "HI").await;
    let student = NewStudent::new("HI-1", "Ada", "L").post(&app, &admin).await;
    let student_id = id_of(&student);
    let marks = fixture.marks();
    let mark = ConfirmMark(NewMark {
        marks: &marks,
        studentadmissionnumber: "HI-1",
        mark: Some(38),
        ..Default::default()
    })
    .post(&app, &admin)
    .await;
    mark.assert(200, None);
    let mark_id = id_of(&mark);
    // An API key changes it: the actor is the key, by name.
    let root = app.as_root().await;
    let school = app
        .get("/api/v1/system/tenants/?search=alpha", &root)
        .await
        .body["results"][0]["id"]
        .clone();
    let key = NewApiKey::named("gradebook sync")
        .of_school(text(&school))
        .post(&app, &root)
        .await;
    key.assert(201, None);
    let key_id = key.body["id"].clone();
    let by_key = As::school("alpha").key(key.body["key"].as_str().expect("key"));
    let mark_path = format!("{}{mark_id}/", fixture.marks());
    app.patch(&mark_path, &by_key, json!({"mark": 52}))
        .await
        .assert(200, None);
    app.patch(&mark_path, &admin, json!({"is_deleted": true}))
        .await
        .assert(200, None);

    let history = app
        .get(&format!("{HISTORY}?record={mark_id}"), &admin)
        .await;
    history.assert(200, None);
    assert_eq!(history.body["count"], 3);
    let entries = history.body["results"].as_array().expect("results");
    let actions: Vec<&str> = entries
        .iter()
        .map(|e| e["action"].as_str().expect("action"))
        .collect();
    assert_eq!(actions, ["deleted", "updated", "created"], "newest first");
    // The decimal score (OneRoster's, API.md 8) follows the whole mark.
    assert_eq!(
        entries[1]["changes"],
        json!({"mark": [38, 52], "score": [38, 52]})
    );
    assert_eq!(
        entries[1]["actor"],
        json!({"type": "api_key", "id": key_id, "name": "gradebook sync"})
    );
    assert_eq!(entries[2]["changes"]["mark"], json!([null, 38]));
    assert_eq!(entries[0]["changes"]["mark"], json!([52, null]));
    assert_eq!(entries[0]["actor"]["type"], "user");
    assert!(
        entries[0]["actor"]["name"]
            .as_str()
            .is_some_and(|n| !n.is_empty())
    );
    // Replaying the entries from empty gives the mark's last value.
    let mut value = Value::Null;
    for entry in entries.iter().rev() {
        if entry["action"] != "deleted" {
            if let Some(pair) = entry["changes"].get("mark") {
                value = pair[1].clone();
            }
        }
    }
    assert_eq!(value, 52);
    // Everything about the student: the student's own creation and the mark's entries.
    let about = app
        .get(&format!("{HISTORY}?student={student_id}"), &admin)
        .await;
    assert_eq!(about.body["count"], 4);
    assert_eq!(about.body["results"][3]["resource"], "student");
    // Neither parameter, a bad id, or a caller without `view_history`.
    app.get(HISTORY, &admin)
        .await
        .assert(400, Some("invalid_query"));
    app.get(&format!("{HISTORY}?record=x"), &admin)
        .await
        .assert(400, Some("invalid_query"));
    let teacher = app.as_school_user("alpha", "teacher").await;
    app.get(&format!("{HISTORY}?record={mark_id}"), &teacher)
        .await
        .assert(403, Some("permission_denied"));
    // Entries stay after their record is really deleted.
    let other = NewStudent::new("HI-2", "Bo", "K").post(&app, &admin).await;
    app.delete(
        &format!("/api/v1/school/students/{}/", id_of(&other)),
        &admin,
    )
    .await
    .assert(204, None);
    let gone = app
        .get(&format!("{HISTORY}?record={}", id_of(&other)), &admin)
        .await;
    assert_eq!(gone.body["count"], 2);
    assert_eq!(
        gone.body["results"][0]["changes"]["admission_number"],
        json!(["HI-2", null])
    );
}
