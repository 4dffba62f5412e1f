//! Deviations from API.md that black-box tests found, each pinned down.

use serde_json::json;

use crate::helpers::{As, JWT_SECRET, PASSWORD, TestApp, forge, spawn_app};

/// A token with exactly API.md's claims (no `ver`), for `user` of `tenant`.
fn contract_token(user: &serde_json::Value, tenant: &str) -> String {
    let now = chrono::Utc::now().timestamp();
    forge(
        json!({"sub": user, "token_type": "access", "jti": uuid::Uuid::new_v4(),
               "iat": now, "exp": now + 60, "layer": "school", "tenant": tenant}),
        JWT_SECRET,
    )
}

#[tokio::test]
async fn tokens_with_exactly_the_contracts_claims_are_accepted() {
    let app = spawn_app().await;
    let login = app.school_login("alpha", "admin@alpha.test").await;
    let user = &login["user"]["id"];
    let me = "/api/v1/school/auth/me/";
    app.get(
        me,
        &As::school("alpha").token(&contract_token(user, "alpha")),
    )
    .await
    .assert(200, None);
    // Naming another school: the tenant mismatch, not a malformed token.
    app.get(
        me,
        &As::school("beta").token(&contract_token(user, "alpha")),
    )
    .await
    .assert(403, Some("tenant_mismatch"));
    app.get(
        me,
        &As::school("alpha").token(&contract_token(user, "beta")),
    )
    .await
    .assert(403, Some("tenant_mismatch"));
    // Once the user's tokens are revoked (password change), a token without `ver` is
    // refused like any older token.
    let root = app.as_root().await;
    let id = user.as_str().expect("id");
    app.patch(
        &format!("/api/v1/system/users/{id}/"),
        &root,
        json!({"password": "another-password-1"}),
    )
    .await
    .assert(200, None);
    app.get(
        me,
        &As::school("alpha").token(&contract_token(user, "alpha")),
    )
    .await
    .assert(401, Some("token_not_valid"));
}

#[tokio::test]
async fn an_empty_json_body_is_malformed_json() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let post = |path: &'static str, who: &As, content_type: Option<&'static str>| {
        let mut req = app
            .client
            .post(format!("{}{path}", app.address))
            .header("Host", &who.host);
        if let Some(token) = &who.token {
            req = req.bearer_auth(token);
        }
        if let Some(content_type) = content_type {
            req = req.header("Content-Type", content_type);
        }
        req.send()
    };
    for path in [
        "/api/v1/school/sessions/",
        "/api/v1/school/classes/",
        "/api/v1/school/auth/login/",
    ] {
        let reply = TestApp::read(
            post(path, &admin, Some("application/json"))
                .await
                .expect("send"),
        )
        .await;
        reply.assert(400, Some("malformed_json"));
    }
    // No body and no content type: an empty object, so the fields are reported missing.
    let reply = TestApp::read(
        post("/api/v1/school/classes/", &admin, None)
            .await
            .expect("send"),
    )
    .await;
    reply.assert(400, Some("validation_error"));
    assert!(reply.body["errors"]["name"].is_array());
}

#[tokio::test]
async fn a_conflicting_x_tenant_on_a_school_address_is_refused_on_login() {
    let app = spawn_app().await;
    app.post(
        "/api/v1/school/auth/login/",
        &As::school("alpha").tenant("beta"),
        json!({"identifier": "admin@alpha.test", "password": PASSWORD}),
    )
    .await
    .assert(403, Some("tenant_mismatch"));
}

#[tokio::test]
async fn the_document_keeps_nullable_limits_and_states_exam_uniqueness() {
    let app = spawn_app().await;
    let doc = app.get("/api/v1/schema/", &As::main()).await.body;
    assert_eq!(
        doc["components"]["schemas"]["Mark"]["properties"]["symbol"]["maxLength"],
        255
    );
    let exams = "/api/v1/school/sessions/{session_pk}/exam-sessions/{exam_session_pk}/exams/";
    let description = doc["paths"][exams]["post"]["description"]
        .as_str()
        .unwrap_or("");
    assert!(
        description.contains("(exam session, subject, academic class)"),
        "{description}"
    );
    // And the rule holds.
    let admin = app.as_school_user("alpha", "admin").await;
    let fixture = app.exam_fixture(&admin, "unique").await;
    app.post(
        &fixture.exams,
        &admin,
        json!({"name": "Again", "subject": fixture.subject, "academic_class": fixture.class}),
    )
    .await
    .assert(409, Some("conflict"));
}
