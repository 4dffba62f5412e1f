//! A teacher writes grade comments in their own name only: an omitted or null teacher is
//! theirs, another teacher's profile or a school-wide comment is refused; holders of
//! `change_teacherprofile` manage every comment.

use serde_json::{Value, json};

use crate::helpers::{PASSWORD, spawn_app};

const PATH: &str = "/api/v1/school/teacher-grade-comments/";

#[tokio::test]
async fn teachers_write_only_their_own_grade_comments() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let teacher = app.as_school_user("alpha", "teacher").await;
    let root = app.as_root().await;
    let own = app.get("/api/v1/school/auth/me/", &teacher).await.body["teacher"]["id"].clone();
    assert!(own.is_string(), "the teacher has a profile");
    let alpha = app
        .get("/api/v1/system/tenants/?search=alpha", &root)
        .await
        .body["results"][0]["id"]
        .clone();
    app.post(
        "/api/v1/system/users/",
        &root,
        json!({"email": "second@alpha.test", "password": PASSWORD, "client": alpha,
               "roles": ["teacher"], "teacher": true}),
    )
    .await
    .assert(201, None);
    let second = app.as_school_user_at("alpha", "second@alpha.test").await;
    let other = app.get("/api/v1/school/auth/me/", &second).await.body["teacher"]["id"].clone();
    assert!(other.is_string() && other != own);
    let body = |teacher: Value| json!({"teacher": teacher, "grade": "A", "min_mark": 80, "max_mark": 100, "comment": "Fine"});

    // Omitted or null: the caller's own profile, never school-wide.
    let mut mine = Vec::new();
    for given in [
        json!({"grade": "A", "min_mark": 80, "max_mark": 100, "comment": "Fine"}),
        body(Value::Null),
        body(own.clone()),
    ] {
        let created = app.post(PATH, &teacher, given).await;
        created.assert(201, None);
        assert_eq!(created.body["teacher"], own, "{}", created.body);
        mine.push(created.body["id"].as_str().expect("id").to_owned());
    }
    // Another teacher's profile: refused, nothing written.
    let before = app.get(PATH, &admin).await.body["count"].clone();
    app.post(PATH, &teacher, body(other.clone()))
        .await
        .assert(403, Some("permission_denied"));
    assert_eq!(app.get(PATH, &admin).await.body["count"], before);
    let item = format!("{PATH}{}/", mine[0]);
    app.patch(&item, &teacher, json!({"teacher": other}))
        .await
        .assert(403, Some("permission_denied"));
    let patched = app.patch(&item, &teacher, json!({"teacher": null})).await;
    patched.assert(200, None);
    assert_eq!(patched.body["teacher"], own);

    // A school-wide comment (an admin's) and another teacher's: not the teacher's to change.
    let school_wide = app.post(PATH, &admin, body(Value::Null)).await;
    school_wide.assert(201, None);
    assert_eq!(
        school_wide.body["teacher"],
        Value::Null,
        "managers write school-wide ones"
    );
    let theirs = app.post(PATH, &second, body(Value::Null)).await;
    assert_eq!(theirs.assert(201, None).body["teacher"], other);
    for id in [&school_wide.body["id"], &theirs.body["id"]] {
        let id = id.as_str().expect("id");
        let item = format!("{PATH}{id}/");
        app.patch(&item, &teacher, json!({"comment": "Mine now"}))
            .await
            .assert(403, Some("permission_denied"));
        app.request(
            reqwest::Method::PUT,
            &item,
            &teacher,
            Some(body(own.clone())),
        )
        .await
        .assert(403, Some("permission_denied"));
        app.delete(&item, &teacher)
            .await
            .assert(403, Some("permission_denied"));
        app.delete(&format!("{PATH}{id}/soft-delete/"), &teacher)
            .await
            .assert(403, Some("permission_denied"));
        let still = app.get(&item, &admin).await;
        still.assert(200, None);
        assert_eq!(still.body["comment"], "Fine");
    }
    // The admin manages anyone's.
    app.patch(
        &format!("{PATH}{}/", theirs.body["id"].as_str().expect("id")),
        &admin,
        json!({"teacher": own}),
    )
    .await
    .assert(200, None);
    // The rule is in the OpenAPI document.
    let doc = app
        .get("/api/v1/schema/", &crate::helpers::As::main())
        .await
        .body;
    let create = &doc["paths"][PATH]["post"]["description"];
    assert!(
        create
            .as_str()
            .unwrap_or("")
            .contains("change_teacherprofile"),
        "{create}"
    );
}
