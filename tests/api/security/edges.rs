//! Second review, findings 2-4: entity tags of the built-in files, the docs page's
//! headers and hosts, and edge answers that must follow API.md 2 like every other.

use serde_json::json;

use crate::helpers::{TestApp, spawn_app, spawn_app_with};

const ASSETS: [&str; 9] = [
    "/admin/",
    "/admin/console.js",
    "/admin/shared.js",
    "/admin/shared.css",
    "/favicon.ico",
    "/api/v1/docs/",
    "/api/v1/docs/swagger-ui-bundle.js",
    "/api/v1/docs/swagger-ui.css",
    "/api/v1/docs/init.js",
];

async fn fetch(
    app: &TestApp,
    path: &str,
    host: &str,
    if_none_match: Option<&str>,
) -> reqwest::Response {
    let mut req = app
        .client
        .get(format!("{}{path}", app.address))
        .header("Host", host);
    if let Some(tag) = if_none_match {
        req = req.header("If-None-Match", tag);
    }
    req.send().await.expect("request")
}

fn header<'a>(res: &'a reqwest::Response, name: &str) -> &'a str {
    res.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

#[tokio::test]
async fn every_built_in_file_has_a_quoted_entity_tag_of_its_own() {
    let app = spawn_app().await;
    let mut tags = Vec::new();
    for path in ASSETS {
        let res = fetch(&app, path, "localhost", None).await;
        assert_eq!(res.status(), 200, "{path}");
        let tag = header(&res, "etag").to_owned();
        assert!(
            tag.len() > 2 && tag.starts_with('"') && tag.ends_with('"'),
            "{path}: ETag {tag:?}"
        );
        for fresh in [
            tag.clone(),
            format!("W/{tag}"),
            format!("\"other\", {tag}"),
            "*".into(),
        ] {
            let res = fetch(&app, path, "localhost", Some(&fresh)).await;
            assert_eq!(res.status(), 304, "{path} with If-None-Match {fresh:?}");
        }
        for stale in ["", " ", "x, ,y", "\"\"", "\"stale\""] {
            let res = fetch(&app, path, "localhost", Some(stale)).await;
            assert_eq!(res.status(), 200, "{path} with If-None-Match {stale:?}");
            assert!(!res.bytes().await.expect("body").is_empty());
        }
        tags.push(tag);
    }
    tags.sort();
    tags.dedup();
    assert_eq!(tags.len(), ASSETS.len(), "each file has its own tag");
}

#[tokio::test]
async fn the_docs_page_has_the_console_headers_keeps_no_authorization_and_stays_on_the_main_domain()
{
    let app = spawn_app().await;
    for path in ASSETS.iter().filter(|p| p.starts_with("/api/v1/docs/")) {
        let res = fetch(&app, path, "localhost", None).await;
        assert_eq!(res.status(), 200);
        assert!(
            header(&res, "content-security-policy").contains("script-src 'self'"),
            "{path}"
        );
        assert_eq!(header(&res, "x-frame-options"), "DENY", "{path}");
        assert_eq!(header(&res, "x-content-type-options"), "nosniff", "{path}");
    }
    let init = fetch(&app, "/api/v1/docs/init.js", "localhost", None)
        .await
        .text()
        .await
        .expect("text");
    assert!(init.contains("persistAuthorization: false"), "{init}");
    for host in ["alpha.localhost", "unknown.example"] {
        let res = fetch(&app, "/api/v1/docs/", host, None).await;
        assert_eq!(res.status(), 404, "docs page on {host}");
        assert_eq!(header(&res, "content-type"), "application/problem+json");
    }
    // The document itself stays on every address (API.md).
    let schema = fetch(&app, "/api/v1/schema/", "alpha.localhost", None).await;
    assert_eq!(schema.status(), 200);
}

#[tokio::test]
async fn a_refused_preflight_is_a_problem_and_cors_headers_need_cors() {
    let app = spawn_app().await;
    let res = app
        .client
        .request(
            reqwest::Method::OPTIONS,
            format!("{}/api/v1/school/sessions/", app.address),
        )
        .header("Host", "alpha.localhost")
        .header("Origin", "https://evil.example.com")
        .header("Access-Control-Request-Method", "GET")
        .send()
        .await
        .expect("preflight");
    assert_eq!(res.status(), 403);
    assert_eq!(header(&res, "content-type"), "application/problem+json");
    assert!(!header(&res, "x-request-id").is_empty());
    assert!(header(&res, "access-control-allow-origin").is_empty());
    let body: serde_json::Value = res.json().await.expect("json");
    assert_eq!(body["code"], "cors_refused");

    let without_cors = spawn_app_with(|config| config.cors_allowed_origins.clear()).await;
    let res = without_cors
        .client
        .get(format!("{}/healthz", without_cors.address))
        .header("Origin", "https://app.example.org")
        .send()
        .await
        .expect("get");
    assert_eq!(res.status(), 200);
    for name in [
        "access-control-expose-headers",
        "access-control-allow-origin",
        "vary",
    ] {
        assert!(
            res.headers().get(name).is_none(),
            "{name} sent while CORS is off"
        );
    }
}

#[tokio::test]
async fn one_rule_for_pages_past_the_last_however_far() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let sessions = "/api/v1/school/sessions/";
    for page in [
        "2",
        "10000001",
        "9223372036854775807",
        "9223372036854775808",
        "99999999999999999999999",
    ] {
        app.get(&format!("{sessions}?page={page}"), &admin)
            .await
            .assert(404, Some("invalid_page"));
    }
    for page in ["0", "-1", "abc", "1.5", "", "00"] {
        app.get(&format!("{sessions}?page={page}"), &admin)
            .await
            .assert(400, Some("invalid_query"));
    }
    let clamped = app
        .get(
            &format!("{sessions}?page_size=99999999999999999999999"),
            &admin,
        )
        .await;
    clamped.assert(200, None);
    assert_eq!(clamped.body["count"], json!(0));
}
