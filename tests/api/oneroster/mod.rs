//! OneRoster 1.2 (issue 37, API.md 8): integration clients, the token endpoint, the
//! rostering and gradebook REST binding.

mod clients;
mod gradebook;
mod rostering;

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{As, TestApp};

pub const SCOPE: &str = "https://purl.imsglobal.org/spec/or/v1p2/scope/";
pub const ROSTER: &str = "/ims/oneroster/rostering/v1p2/";
pub const GRADEBOOK: &str = "/ims/oneroster/gradebook/v1p2/";

/// An integration client of `school`, made by its admin: (record with `client_secret`).
pub async fn new_client(app: &TestApp, school: &str, scopes: Option<&[&str]>) -> Value {
    let admin = app.as_school_user(school, "admin").await;
    let mut body = json!({"name": "LMS"});
    if let Some(scopes) = scopes {
        body["scopes"] = scopes.iter().map(|s| format!("{SCOPE}{s}")).collect();
    }
    let reply = app
        .post("/api/v1/school/oauth-clients/", &admin, body)
        .await;
    reply.assert(201, None);
    reply.body
}

/// Posts a token request as a form on `school`'s address.
pub async fn token_request(
    app: &TestApp,
    school: &str,
    basic: Option<(&str, &str)>,
    form: &[(&str, &str)],
) -> (u16, Value) {
    let mut req = app
        .client
        .post(format!("{}/api/v1/school/oauth/token/", app.address))
        .header("Host", format!("{school}.localhost"))
        .form(form);
    if let Some((id, secret)) = basic {
        req = req.basic_auth(id, Some(secret));
    }
    let reply = TestApp::read(req.send().await.expect("token request")).await;
    (reply.status.as_u16(), reply.body)
}

/// A bearer token of a new client of `school` holding `scopes` (all six when `None`).
pub async fn oneroster_token(app: &TestApp, school: &str, scopes: Option<&[&str]>) -> String {
    let client = new_client(app, school, scopes).await;
    let id = client["client_id"].as_str().expect("client_id");
    let secret = client["client_secret"].as_str().expect("secret");
    let (status, body) = token_request(
        app,
        school,
        Some((id, secret)),
        &[("grant_type", "client_credentials")],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["access_token"].as_str().expect("token").to_owned()
}

/// A OneRoster request with a bearer token on `school`'s address.
pub async fn or_request(
    app: &TestApp,
    method: Method,
    school: &str,
    token: &str,
    path: &str,
    body: Option<Value>,
) -> crate::helpers::Reply {
    app.request(method, path, &As::school(school).token(token), body)
        .await
}

pub async fn or_get(app: &TestApp, school: &str, token: &str, path: &str) -> crate::helpers::Reply {
    or_request(app, Method::GET, school, token, path, None).await
}
