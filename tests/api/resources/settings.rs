//! Grade comments, session setup and the three kinds of settings. Most requests here are
//! the validation cases themselves, so their bodies stay raw JSON.

use serde_json::json;

use crate::helpers::{GRADE_COMMENTS, NewGradeComment, NewRecord, spawn_app};

#[tokio::test]
async fn grade_comment_soft_delete_is_idempotent() {
    let app = spawn_app().await;
    let teacher = app.as_school_user("alpha", "teacher").await;
    let path = GRADE_COMMENTS;
    let created = NewGradeComment::new("A", 80..=100, "Excellent")
        .create(&app, &teacher)
        .await;
    let id = &created.id;
    app.post(
        path,
        &teacher,
        json!({"grade": "B", "min_mark": 80, "max_mark": 70, "comment": "x"}),
    )
    .await
    .assert(400, Some("validation_error"));
    app.post(
        path,
        &teacher,
        json!({"grade": "B".repeat(11), "min_mark": 1, "max_mark": 2, "comment": "x"}),
    )
    .await
    .assert(400, Some("validation_error"));
    let soft = format!("{path}{id}/soft-delete/");
    for _ in 0..2 {
        let reply = app.delete(&soft, &teacher).await;
        reply.assert(200, None);
        assert_eq!(reply.body, json!({"deleted": true}));
    }
    app.get(&format!("{path}{id}/"), &teacher)
        .await
        .assert(404, Some("not_found"));
    assert_eq!(
        app.get(&format!("{path}{id}/?include_deleted=true"), &teacher)
            .await
            .body["is_deleted"],
        true
    );
    app.delete(
        &format!("{path}{}/soft-delete/", uuid::Uuid::new_v4()),
        &teacher,
    )
    .await
    .assert(404, Some("not_found"));
    app.delete(&format!("{path}nope/soft-delete/"), &teacher)
        .await
        .assert(400, Some("invalid_id"));
}

#[tokio::test]
async fn session_setup_put_replaces_with_defaults() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let path = "/api/v1/school/session-setup/";
    let created = app
        .post(
            path,
            &admin,
            json!({"session_type": "academic_session", "status": "pending", "current_step": 2}),
        )
        .await;
    created.assert(201, None);
    let item = format!("{path}{}/", created.body["id"].as_str().expect("id"));
    let put = app
        .request(
            reqwest::Method::PUT,
            &item,
            &admin,
            Some(json!({"session_type": "exam_session", "current_step": 2147483647})),
        )
        .await;
    put.assert(200, None);
    assert_eq!(put.body["status"], "not_started");
    assert_eq!(put.body["current_step"], 2147483647);
    for key in [
        "id",
        "session_type",
        "academic_session",
        "exam_session",
        "status",
        "current_step",
        "created_at",
        "updated_at",
    ] {
        assert!(put.body.get(key).is_some(), "{key}");
    }
    for bad in [
        json!({"current_step": 2147483648i64}),
        json!({"session_type": "other"}),
        json!({"status": "done"}),
        json!({"academic_session": uuid::Uuid::new_v4()}),
    ] {
        app.patch(&item, &admin, bad)
            .await
            .assert(400, Some("validation_error"));
    }
    app.request(
        reqwest::Method::PUT,
        &item,
        &admin,
        Some(json!({"status": "pending"})),
    )
    .await
    .assert(400, Some("validation_error"));
}

#[tokio::test]
async fn general_and_academic_settings_and_the_report_singleton() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let general = "/api/v1/school/general-settings/";
    let body = json!({"school_name": "Alpha High", "address": "1 Road", "phone": "+1 555", "email": "office@alpha.test"});
    let created = app.post(general, &admin, body).await;
    created.assert(201, None);
    let item = format!("{general}{}/", created.body["id"].as_str().expect("id"));
    let patched = app
        .patch(
            &item,
            &admin,
            json!({"logo": "https://cdn/logo.png", "school_name": "Alpha"}),
        )
        .await;
    patched.assert(200, None);
    assert_eq!(patched.body["logo"], "https://cdn/logo.png");
    app.patch(&item, &admin, json!({"email": "not-an-email"}))
        .await
        .assert(400, Some("validation_error"));
    app.patch(&item, &admin, json!({"school_name": "s".repeat(256)}))
        .await
        .assert(400, Some("validation_error"));
    app.delete(&item, &admin).await.assert(204, None);
    app.get(&item, &admin).await.assert(404, Some("not_found"));

    let academic = "/api/v1/school/academic-settings/";
    let created = app
        .post(
            academic,
            &admin,
            json!({"grading_scale": [{"symbol": "A", "min": 80, "max": 100},
                                     {"symbol": "F", "min": 0, "max": 79}]}),
        )
        .await;
    created.assert(201, None);
    // A scale must grade every mark once: a gap or an overlap is a 400 naming the band.
    for (bands, names) in [
        (
            json!([{"symbol": "A", "min": 80, "max": 100}, {"symbol": "B", "min": 72, "max": 79},
                   {"symbol": "F", "min": 0, "max": 69}]),
            "band B (72-79): marks 70 to 71 have no grade",
        ),
        (
            json!([{"symbol": "A", "min": 75, "max": 100}, {"symbol": "F", "min": 0, "max": 79}]),
            "band A (75-100) overlaps band F (0-79)",
        ),
    ] {
        let refused = app
            .patch(
                &format!("{academic}{}/", created.body["id"].as_str().expect("id")),
                &admin,
                json!({"grading_scale": bands}),
            )
            .await;
        refused.assert(400, Some("validation_error"));
        assert!(
            refused.body["errors"]["grading_scale"][0]
                .as_str()
                .unwrap_or("")
                .contains(names),
            "{}",
            refused.body
        );
    }
    // Lowering the maximum mark below the scale's top is refused the same way.
    app.patch(
        &format!("{academic}{}/", created.body["id"].as_str().expect("id")),
        &admin,
        json!({"max_mark": 90}),
    )
    .await
    .assert(400, Some("validation_error"));
    assert_eq!(
        (
            created.body["pass_mark"].clone(),
            created.body["terms_per_session"].clone()
        ),
        (json!(50), json!(3))
    );
    app.post(academic, &admin, json!({"terms_per_session": 7}))
        .await
        .assert(400, Some("validation_error"));
    app.post(
        academic,
        &admin,
        json!({"grading_scale": [{"symbol": "A", "min": 90, "max": 10}]}),
    )
    .await
    .assert(400, Some("validation_error"));
    let item = format!("{academic}{}/", created.body["id"].as_str().expect("id"));
    app.delete(&item, &admin).await.assert(204, None);

    let report = "/api/v1/school/report-settings/";
    let teacher = app.as_school_user("alpha", "teacher").await;
    let first = app.get(report, &teacher).await;
    first.assert(200, None);
    assert_eq!(first.body["show_position"], true);
    assert_eq!(first.body["footer_text"], "");
    app.patch(report, &teacher, json!({"footer_text": "x"}))
        .await
        .assert(403, Some("permission_denied"));
    let patched = app
        .patch(
            report,
            &admin,
            json!({"footer_text": "Signed", "show_position": false}),
        )
        .await;
    patched.assert(200, None);
    assert_eq!(
        app.get(report, &teacher).await.body["footer_text"],
        "Signed"
    );
    let put = app
        .request(
            reqwest::Method::PUT,
            report,
            &admin,
            Some(json!({"principal_signature": "P"})),
        )
        .await;
    assert_eq!(
        (
            put.body["show_position"].clone(),
            put.body["footer_text"].clone()
        ),
        (json!(true), json!(""))
    );
}
