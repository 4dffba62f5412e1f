//! School resources on the generic CRUD path: round trips, soft deletion, limits.

use serde_json::json;

use crate::helpers::spawn_app;

const CLASSES: &str = "/api/v1/school/classes/";

#[tokio::test]
async fn classes_round_trip_with_soft_delete_and_uniqueness() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let created = app
        .post(CLASSES, &admin, json!({"name": "Form 1", "level": 1}))
        .await;
    created.assert(201, None);
    let id = created.body["id"].as_str().expect("id").to_owned();
    assert_eq!(created.body["is_deleted"], false);
    assert_eq!(created.body["created_by"], created.body["updated_by"]);
    let item = format!("{CLASSES}{id}/");
    app.get(&item, &admin).await.assert(200, None);
    app.post(CLASSES, &admin, json!({"name": "Form 1"}))
        .await
        .assert(409, Some("conflict"));
    let patched = app.patch(&item, &admin, json!({"level": 2})).await;
    patched.assert(200, None);
    assert_eq!(
        (patched.body["name"].clone(), patched.body["level"].clone()),
        (json!("Form 1"), json!(2))
    );
    // PUT replaces: the omitted optional field returns to its default.
    let replaced = app
        .request(
            reqwest::Method::PUT,
            &item,
            &admin,
            Some(json!({"name": "Form One"})),
        )
        .await;
    replaced.assert(200, None);
    assert_eq!(replaced.body["level"], json!(null));
    app.request(
        reqwest::Method::PUT,
        &item,
        &admin,
        Some(json!({"level": 3})),
    )
    .await
    .assert(400, Some("validation_error"));

    app.patch(&item, &admin, json!({"is_deleted": true}))
        .await
        .assert(200, None);
    app.get(&item, &admin).await.assert(404, Some("not_found"));
    assert_eq!(app.get(CLASSES, &admin).await.body["count"], 0);
    assert_eq!(
        app.get(&format!("{CLASSES}?include_deleted=true"), &admin)
            .await
            .body["count"],
        1
    );
    // A live class may reuse the name of a deleted one.
    app.post(CLASSES, &admin, json!({"name": "Form One"}))
        .await
        .assert(201, None);
    let restored = app
        .patch(
            &format!("{item}?include_deleted=true"),
            &admin,
            json!({"is_deleted": false}),
        )
        .await;
    restored.assert(409, Some("conflict"));
    app.delete(&format!("{item}?include_deleted=true"), &admin)
        .await
        .assert(204, None);
    app.get(&format!("{item}?include_deleted=true"), &admin)
        .await
        .assert(404, Some("not_found"));
}

#[tokio::test]
async fn class_fields_are_validated_at_their_edges() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    app.post(
        CLASSES,
        &admin,
        json!({"name": "x".repeat(255), "level": 100}),
    )
    .await
    .assert(201, None);
    for bad in [
        json!({"name": "y".repeat(256)}),
        json!({"name": ""}),
        json!({"name": null}),
        json!({"name": 5}),
        json!({"name": "z", "level": 101}),
        json!({"name": "z", "level": "1"}),
        json!({"name": "z", "is_deleted": 1}),
        json!({}),
    ] {
        let reply = app.post(CLASSES, &admin, bad.clone()).await;
        reply.assert(400, Some("validation_error"));
        assert!(reply.body["errors"].is_object(), "{bad}");
    }
    app.get(&format!("{CLASSES}not-a-uuid/"), &admin)
        .await
        .assert(400, Some("invalid_id"));
    app.get(&format!("{CLASSES}{}/", uuid::Uuid::new_v4()), &admin)
        .await
        .assert(404, Some("not_found"));
    app.get(&format!("{CLASSES}?page=0"), &admin)
        .await
        .assert(400, Some("invalid_query"));
    app.get(&format!("{CLASSES}?page=2"), &admin)
        .await
        .assert(404, Some("invalid_page"));
    let list = app
        .get(&format!("{CLASSES}?page_size=500&search=XXX"), &admin)
        .await;
    list.assert(200, None);
    assert_eq!(list.body["count"], 1);
}

#[tokio::test]
async fn teachers_may_view_classes_but_not_change_them() {
    let app = spawn_app().await;
    let teacher = app.as_school_user("alpha", "teacher").await;
    app.get(CLASSES, &teacher).await.assert(200, None);
    app.post(CLASSES, &teacher, json!({"name": "X"}))
        .await
        .assert(403, Some("permission_denied"));
    let norole = app.as_school_user("alpha", "norole").await;
    app.get(CLASSES, &norole)
        .await
        .assert(403, Some("permission_denied"));
    app.get("/api/v1/school/permissions/", &norole)
        .await
        .assert(200, None);
}
