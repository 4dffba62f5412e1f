//! Integration clients and the token endpoint (API.md 8, RFC 6749 4.4 and 5.2).

use serde_json::json;

use super::{SCOPE, new_client, token_request};
use crate::helpers::{As, spawn_app};

#[tokio::test]
async fn a_client_is_created_with_its_secret_once_and_listed_without_it() {
    let app = spawn_app().await;
    let created = new_client(&app, "alpha", None).await;
    let secret = created["client_secret"].as_str().expect("secret");
    assert!(secret.len() >= 32);
    assert_eq!(created["scopes"].as_array().expect("scopes").len(), 6);
    for key in [
        "id",
        "name",
        "client_id",
        "scopes",
        "created_at",
        "last_used_at",
        "revoked_at",
    ] {
        assert!(created.get(key).is_some(), "{key} missing: {created}");
    }
    let admin = app.as_school_user("alpha", "admin").await;
    let list = app.get("/api/v1/school/oauth-clients/", &admin).await;
    list.assert(200, None);
    assert_eq!(list.body["count"], 1);
    assert!(list.body["results"][0].get("client_secret").is_none());
    let one = app
        .get(
            &format!(
                "/api/v1/school/oauth-clients/{}/",
                created["id"].as_str().expect("id")
            ),
            &admin,
        )
        .await;
    one.assert(200, None);
    assert!(one.body.get("client_secret").is_none());
    assert!(!one.body.to_string().contains(secret));
    // Another school does not see it.
    let beta = app.as_school_user("beta", "admin").await;
    app.get("/api/v1/school/oauth-clients/", &beta)
        .await
        .assert(200, None);
    app.get(
        &format!(
            "/api/v1/school/oauth-clients/{}/",
            created["id"].as_str().expect("id")
        ),
        &beta,
    )
    .await
    .assert(404, Some("not_found"));
}

#[tokio::test]
async fn only_admins_manage_clients_and_scopes_are_checked() {
    let app = spawn_app().await;
    let teacher = app.as_school_user("alpha", "teacher").await;
    app.post(
        "/api/v1/school/oauth-clients/",
        &teacher,
        json!({"name": "x"}),
    )
    .await
    .assert(403, Some("permission_denied"));
    app.get("/api/v1/school/oauth-clients/", &teacher)
        .await
        .assert(403, Some("permission_denied"));
    let admin = app.as_school_user("alpha", "admin").await;
    let bad = app
        .post(
            "/api/v1/school/oauth-clients/",
            &admin,
            json!({"name": "x", "scopes": ["roster.readonly"]}),
        )
        .await;
    bad.assert(400, Some("validation_error"));
    assert!(bad.body["errors"]["scopes"].is_array());
    app.post("/api/v1/school/oauth-clients/", &admin, json!({"name": ""}))
        .await
        .assert(400, Some("validation_error"));
}

#[tokio::test]
async fn the_token_endpoint_follows_rfc_6749() {
    let app = spawn_app().await;
    let client = new_client(
        &app,
        "alpha",
        Some(&["roster.readonly", "gradebook.readonly"]),
    )
    .await;
    let id = client["client_id"].as_str().expect("id");
    let secret = client["client_secret"].as_str().expect("secret");
    let grant = [("grant_type", "client_credentials")];
    // HTTP Basic, no scope: every scope the client holds.
    let (status, body) = token_request(&app, "alpha", Some((id, secret)), &grant).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["token_type"], "bearer");
    assert!(body["expires_in"].as_i64().expect("expires_in") > 0);
    let scopes: Vec<&str> = body["scope"].as_str().expect("scope").split(' ').collect();
    assert_eq!(scopes.len(), 2);
    // Form credentials, a scope subset plus one not held: only what is held is granted.
    let asked = format!("{SCOPE}roster.readonly {SCOPE}gradebook.delete");
    let (status, body) = token_request(
        &app,
        "alpha",
        None,
        &[
            ("grant_type", "client_credentials"),
            ("client_id", id),
            ("client_secret", secret),
            ("scope", &asked),
        ],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["scope"], format!("{SCOPE}roster.readonly"));
    // Wrong secret, unknown client, no credentials: invalid_client 401.
    for basic in [Some((id, "wrong")), Some(("nobody", secret)), None] {
        let (status, body) = token_request(&app, "alpha", basic, &grant).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (401, Some("invalid_client"))
        );
    }
    // The client belongs to alpha only.
    let (status, body) = token_request(&app, "beta", Some((id, secret)), &grant).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (401, Some("invalid_client"))
    );
    let (status, body) = token_request(
        &app,
        "alpha",
        Some((id, secret)),
        &[("grant_type", "password")],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("unsupported_grant_type"))
    );
    let (status, body) = token_request(
        &app,
        "alpha",
        Some((id, secret)),
        &[("grant_type", "client_credentials"), ("scope", "admin")],
    )
    .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (400, Some("invalid_scope"))
    );
}

#[tokio::test]
async fn wrong_client_secrets_are_throttled_like_logins() {
    let app = crate::helpers::spawn_app_with(|c| c.login_rate_per_minute = 3).await;
    let client = new_client(&app, "alpha", None).await;
    let id = client["client_id"].as_str().expect("id");
    let grant = [("grant_type", "client_credentials")];
    for _ in 0..3 {
        let (status, _) = token_request(&app, "alpha", Some((id, "wrong")), &grant).await;
        assert_eq!(status, 401);
    }
    let (status, _) = token_request(&app, "alpha", Some((id, "wrong")), &grant).await;
    assert_eq!(status, 429);
}

#[tokio::test]
async fn the_cli_creates_a_client_that_gets_tokens() {
    let app = spawn_app().await;
    let (ok, out, err) = crate::helpers::cli(
        &app.db.url,
        &format!(
            "tenant oauth-client create --schema alpha --name Classroom --scope {SCOPE}roster.readonly"
        ),
        &[("JWT_SECRET", crate::helpers::JWT_SECRET)],
    );
    assert!(ok, "{err}");
    let printed: serde_json::Value = serde_json::from_str(out.trim()).expect("one JSON object");
    assert_eq!(
        printed["scopes"],
        json!([format!("{SCOPE}roster.readonly")])
    );
    let (status, body) = token_request(
        &app,
        "alpha",
        Some((
            printed["client_id"].as_str().expect("id"),
            printed["client_secret"].as_str().expect("secret"),
        )),
        &[("grant_type", "client_credentials")],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (ok, _, _) = crate::helpers::cli(
        &app.db.url,
        "tenant oauth-client create --schema nowhere --name X",
        &[],
    );
    assert!(!ok);
    let _ = As::main();
}
