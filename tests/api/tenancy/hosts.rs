//! API.md section 1: addresses and tenant selection; section 2: wire-format basics.

use serde_json::json;

use crate::helpers::{As, spawn_app};

#[tokio::test]
async fn health_answers_on_every_host_and_ready_checks_the_database() {
    let app = spawn_app().await;
    for host in ["localhost", "alpha.localhost", "unknown.example.org"] {
        let reply = app.get("/healthz", &As::host(host)).await;
        reply.assert(200, None);
        assert_eq!(reply.body, json!({"status": "ok"}));
        app.get("/readyz/", &As::host(host)).await.assert(200, None);
    }
}

#[tokio::test]
async fn unknown_hosts_get_tenant_not_found_on_every_path() {
    let app = spawn_app().await;
    for path in [
        "/api/v1/school/auth/me/",
        "/api/v1/system/auth/me/",
        "/no/such/path/",
    ] {
        app.get(path, &As::host("nowhere.localhost"))
            .await
            .assert(404, Some("tenant_not_found"));
    }
}

#[tokio::test]
async fn school_paths_on_the_main_domain_need_a_selected_tenant() {
    let app = spawn_app().await;
    app.get("/api/v1/school/permissions/", &As::main())
        .await
        .assert(404, Some("tenant_not_found"));
    app.get("/api/v1/school/permissions/", &As::main().tenant("nosuch"))
        .await
        .assert(404, Some("tenant_not_found"));
    // Selected by X-Tenant: authentication is next.
    app.get("/api/v1/school/permissions/", &As::main().tenant("alpha"))
        .await
        .assert(401, Some("not_authenticated"));
    let token = app.school_token("alpha", "admin").await;
    // Selected by the token's tenant claim.
    app.get("/api/v1/school/auth/me/", &As::main().token(&token))
        .await
        .assert(200, None);
    app.get(
        "/api/v1/school/auth/me/",
        &As::main().token(&token).tenant("alpha"),
    )
    .await
    .assert(200, None);
}

#[tokio::test]
async fn conflicting_selections_are_tenant_mismatch() {
    let app = spawn_app().await;
    let alpha = app.school_token("alpha", "admin").await;
    app.get(
        "/api/v1/school/auth/me/",
        &As::main().token(&alpha).tenant("beta"),
    )
    .await
    .assert(403, Some("tenant_mismatch"));
    app.get(
        "/api/v1/school/auth/me/",
        &As::school("alpha").token(&alpha).tenant("beta"),
    )
    .await
    .assert(403, Some("tenant_mismatch"));
    app.get("/api/v1/school/auth/me/", &As::school("beta").token(&alpha))
        .await
        .assert(403, Some("tenant_mismatch"));
}

#[tokio::test]
async fn system_paths_on_a_tenant_address_are_not_found() {
    let app = spawn_app().await;
    let reply = app
        .post(
            "/api/v1/system/auth/login/",
            &As::school("alpha"),
            json!({"identifier": "root@platform.test", "password": "x"}),
        )
        .await;
    reply.assert(404, Some("not_found"));
}

#[tokio::test]
async fn only_the_host_header_selects_a_tenant() {
    let app = spawn_app().await;
    let res = app
        .client
        .get(format!("{}/api/v1/school/permissions/", app.address))
        .header("Host", "localhost")
        .header("X-Forwarded-Host", "alpha.localhost")
        .header("Forwarded", "host=alpha.localhost")
        .send()
        .await
        .expect("send");
    crate::helpers::TestApp::read(res)
        .await
        .assert(404, Some("tenant_not_found"));
}

#[tokio::test]
async fn a_deactivated_tenant_answers_tenant_inactive_before_authentication() {
    let app = spawn_app().await;
    let token = app.school_token("alpha", "admin").await;
    let root = app.as_root().await;
    let tenants = app.get("/api/v1/system/tenants/", &root).await;
    let alpha_id = tenants.body["results"]
        .as_array()
        .expect("list")
        .iter()
        .find(|t| t["schema_name"] == "alpha")
        .expect("alpha")["id"]
        .as_str()
        .expect("id")
        .to_owned();
    app.patch(
        &format!("/api/v1/system/tenants/{alpha_id}/"),
        &root,
        json!({"is_active": false}),
    )
    .await
    .assert(200, None);
    app.get("/api/v1/school/auth/me/", &As::school("alpha"))
        .await
        .assert(403, Some("tenant_inactive"));
    app.get(
        "/api/v1/school/auth/me/",
        &As::school("alpha").token(&token),
    )
    .await
    .assert(403, Some("tenant_inactive"));
    app.post(
        "/api/v1/school/auth/login/",
        &As::school("alpha"),
        json!({"identifier": "admin@alpha.test", "password": "password-123"}),
    )
    .await
    .assert(403, Some("tenant_inactive"));
    app.get("/api/v1/school/auth/me/", &As::main().tenant("alpha"))
        .await
        .assert(403, Some("tenant_inactive"));
    app.patch(
        &format!("/api/v1/system/tenants/{alpha_id}/"),
        &root,
        json!({"is_active": true}),
    )
    .await
    .assert(200, None);
    app.get(
        "/api/v1/school/auth/me/",
        &As::school("alpha").token(&token),
    )
    .await
    .assert(200, None);
}

#[tokio::test]
async fn unknown_paths_methods_and_trailing_slashes() {
    let app = spawn_app().await;
    app.get("/api/v1/school/nothing-here/", &As::school("alpha"))
        .await
        .assert(404, Some("not_found"));
    let reply = app
        .delete("/api/v1/school/auth/login/", &As::school("alpha"))
        .await;
    reply.assert(405, Some("method_not_allowed"));
    assert_eq!(
        reply.headers.get("allow").and_then(|v| v.to_str().ok()),
        Some("POST")
    );
    // No trailing slash answers the same, without a redirect.
    let token = app.school_token("alpha", "admin").await;
    app.get("/api/v1/school/auth/me", &As::school("alpha").token(&token))
        .await
        .assert(200, None);
}

#[tokio::test]
async fn every_response_carries_a_request_id_and_echoes_the_clients() {
    let app = spawn_app().await;
    let res = app
        .client
        .get(format!("{}/healthz", app.address))
        .header("X-Request-Id", "abc-123")
        .send()
        .await
        .expect("send");
    assert_eq!(
        res.headers()
            .get("x-request-id")
            .and_then(|v| v.to_str().ok()),
        Some("abc-123")
    );
    let reply = app.get("/nope/", &As::host("nowhere")).await;
    assert!(reply.headers.get("x-request-id").is_some());
}

#[tokio::test]
async fn body_errors_are_problems() {
    let app = spawn_app().await;
    let url = format!("{}/api/v1/school/auth/login/", app.address);
    let send = |body: &'static str, content_type: &'static str| {
        app.client
            .post(&url)
            .header("Host", "alpha.localhost")
            .header("Content-Type", content_type)
            .body(body)
            .send()
    };
    let reply =
        crate::helpers::TestApp::read(send("{not json", "application/json").await.expect("send"))
            .await;
    reply.assert(400, Some("malformed_json"));
    let reply =
        crate::helpers::TestApp::read(send("[1, 2]", "application/json").await.expect("send"))
            .await;
    reply.assert(400, Some("malformed_json"));
    let reply = crate::helpers::TestApp::read(
        send("identifier=x", "application/x-www-form-urlencoded")
            .await
            .expect("send"),
    )
    .await;
    reply.assert(415, Some("unsupported_media_type"));
    let big = format!("{{\"identifier\": \"{}\"}}", "a".repeat(2 * 1024 * 1024));
    let res = app
        .client
        .post(&url)
        .header("Host", "alpha.localhost")
        .header("Content-Type", "application/json")
        .body(big)
        .send()
        .await
        .expect("send");
    crate::helpers::TestApp::read(res)
        .await
        .assert(413, Some("payload_too_large"));
}

#[tokio::test]
async fn cors_allows_configured_origins_only() {
    let app = spawn_app().await;
    let preflight = |origin: &'static str| {
        app.client
            .request(
                reqwest::Method::OPTIONS,
                format!("{}/api/v1/school/auth/me/", app.address),
            )
            .header("Host", "alpha.localhost")
            .header("Origin", origin)
            .header("Access-Control-Request-Method", "GET")
            .header("Access-Control-Request-Headers", "authorization, x-tenant")
            .send()
    };
    let ok = preflight("https://app.example.org").await.expect("send");
    assert_eq!(
        ok.headers()
            .get("access-control-allow-origin")
            .and_then(|v| v.to_str().ok()),
        Some("https://app.example.org")
    );
    let refused = preflight("https://evil.example.com").await.expect("send");
    assert!(
        refused
            .headers()
            .get("access-control-allow-origin")
            .is_none()
    );
}
