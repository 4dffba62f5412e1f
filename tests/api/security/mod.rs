//! Regression tests for the findings of a security review of the running server, one test
//! per finding.

use std::time::Duration;

use diesel::{Connection, RunQueryDsl, pg::PgConnection};
use serde_json::{Value, json};

use crate::helpers::{As, NewRecord, NewSubject, PASSWORD, TestApp, spawn_app, spawn_app_with};

const SCHOOL_LOGIN: &str = "/api/v1/school/auth/login/";
const USERS: &str = "/api/v1/system/users/";

async fn user_id(app: &TestApp, who: &As, email: &str) -> String {
    let list = app.get(&format!("{USERS}?search={email}"), who).await;
    list.assert(200, None);
    list.body["results"][0]["id"]
        .as_str()
        .expect("user id")
        .to_owned()
}

#[tokio::test]
async fn only_a_superuser_may_change_a_superuser() {
    let app = spawn_app().await;
    let staff = app.as_staff().await;
    let root = app.as_root().await;
    let root_id = user_id(&app, &staff, "root@platform.test").await;
    let root_user = format!("{USERS}{root_id}/");
    for change in [
        json!({"password": "taken-over-123"}),
        json!({"is_active": false}),
        json!({"first_name": "Mallory"}),
        json!({"is_staff": false}),
    ] {
        app.patch(&root_user, &staff, change)
            .await
            .assert(403, Some("permission_denied"));
    }
    // Nothing changed: the superuser still logs in with the old password, names intact.
    let login = app.system_login("root@platform.test").await;
    assert_eq!(login["user"]["first_name"], "root");
    // Staff may still manage ordinary users, and superusers may change superusers.
    let plain_id = user_id(&app, &staff, "plain@platform.test").await;
    app.patch(
        &format!("{USERS}{plain_id}/"),
        &staff,
        json!({"first_name": "Plain"}),
    )
    .await
    .assert(200, None);
    app.patch(&root_user, &root, json!({"first_name": "Root"}))
        .await
        .assert(200, None);
}

#[tokio::test]
async fn simultaneous_wrong_logins_cannot_exceed_the_limit() {
    let app = spawn_app_with(|c| c.login_rate_per_minute = 10).await;
    let school = As::school("alpha");
    let attempts = (0..30).map(|_| {
        app.post(
            SCHOOL_LOGIN,
            &school,
            json!({"identifier": "admin@alpha.test", "password": "wrong-password"}),
        )
    });
    let replies = futures_util::future::join_all(attempts).await;
    let refused = replies.iter().filter(|r| r.status == 401).count();
    let throttled = replies.iter().filter(|r| r.status == 429).count();
    assert_eq!(refused + throttled, 30, "only 401 and 429 expected");
    assert!(refused <= 10, "{refused} wrong passwords were checked");
    // Successful logins release their place: a right password after nine wrong ones
    // leaves room for one more wrong one.
    let fresh = spawn_app_with(|c| c.login_rate_per_minute = 10).await;
    for _ in 0..9 {
        fresh
            .post(
                SCHOOL_LOGIN,
                &school,
                json!({"identifier": "teacher@alpha.test", "password": "wrong-password"}),
            )
            .await
            .assert(401, Some("invalid_credentials"));
    }
    fresh.school_login("alpha", "teacher@alpha.test").await;
    fresh
        .post(
            SCHOOL_LOGIN,
            &school,
            json!({"identifier": "teacher@alpha.test", "password": "wrong-password"}),
        )
        .await
        .assert(401, Some("invalid_credentials"));
    fresh
        .post(
            SCHOOL_LOGIN,
            &school,
            json!({"identifier": "teacher@alpha.test", "password": PASSWORD}),
        )
        .await
        .assert(429, Some("throttled"));
}

#[tokio::test]
async fn spellings_of_one_phone_number_share_a_throttle_count() {
    let app = spawn_app_with(|c| c.login_rate_per_minute = 3).await;
    let root = app.as_root().await;
    let tenant = app.school_login("alpha", "admin@alpha.test").await["tenant"]["id"].clone();
    app.post(
        USERS,
        &root,
        json!({"phone": "+15550100000", "password": PASSWORD, "client": tenant}),
    )
    .await
    .assert(201, None);
    let school = As::school("alpha");
    for spelling in ["+1 555 0100000", "15550100000", "+1-555-010-0000"] {
        app.post(
            SCHOOL_LOGIN,
            &school,
            json!({"identifier": spelling, "password": "wrong-password"}),
        )
        .await
        .assert(401, Some("invalid_credentials"));
    }
    for spelling in ["+15550100000", "1 (555) 010-0000", "1.555.010.0000"] {
        app.post(
            SCHOOL_LOGIN,
            &school,
            json!({"identifier": spelling, "password": PASSWORD}),
        )
        .await
        .assert(429, Some("throttled"));
    }
}

#[tokio::test]
async fn department_teacher_lists_are_capped_and_checked_in_one_go() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let teacher = app.school_login("alpha", "teacher@alpha.test").await["teacher"]["id"].clone();
    let subject = NewSubject::new("Maths", "M1").post(&app, &admin).await.body["id"].clone();
    let ids =
        |n: usize| -> Vec<String> { (0..n).map(|_| uuid::Uuid::new_v4().to_string()).collect() };
    let department = |teachers: Value| json!({"name": "Science", "hod": teacher, "subject": subject, "teachers": teachers});
    let too_many = app
        .post(
            "/api/v1/school/departments/",
            &admin,
            department(json!(ids(201))),
        )
        .await;
    too_many.assert(400, Some("validation_error"));
    assert!(
        too_many.body["errors"]["teachers"][0]
            .as_str()
            .unwrap_or("")
            .contains("200"),
        "{}",
        too_many.body
    );
    // 200 unknown ids: every one is reported.
    let unknown = app
        .post(
            "/api/v1/school/departments/",
            &admin,
            department(json!(ids(200))),
        )
        .await;
    unknown.assert(400, Some("validation_error"));
    assert_eq!(
        unknown.body["errors"]["teachers"].as_array().map(Vec::len),
        Some(200)
    );
    // A known teacher among unknown ones: only the unknown are reported.
    let mut mixed = ids(2);
    mixed.push(teacher.as_str().expect("id").to_owned());
    let reply = app
        .post(
            "/api/v1/school/departments/",
            &admin,
            department(json!(mixed)),
        )
        .await;
    reply.assert(400, Some("validation_error"));
    assert_eq!(
        reply.body["errors"]["teachers"].as_array().map(Vec::len),
        Some(2)
    );
    app.post(
        "/api/v1/school/departments/",
        &admin,
        department(json!([teacher])),
    )
    .await
    .assert(201, None);
    // The documented limit is the enforced one.
    let doc = app.get("/api/v1/schema/", &As::main()).await.body;
    let schema = serde_json::to_string(&doc).expect("doc");
    assert!(schema.contains("\"maxItems\":200"), "maxItems documented");
}

#[tokio::test]
async fn percent_encoded_system_paths_stay_off_school_addresses() {
    let app = spawn_app().await;
    let root = app.as_root().await;
    let token = root.token.clone().expect("token");
    for path in [
        "/api/v1/%73ystem/tenants/",
        "/api/v1/sys%74em/users/",
        "/api/v1/%73%79%73%74%65%6d/auth/me/",
    ] {
        app.get(path, &As::school("alpha").token(&token))
            .await
            .assert(404, Some("not_found"));
    }
    // On the main domain the router decodes the same path and serves it.
    app.get("/api/v1/%73ystem/tenants/", &root)
        .await
        .assert(200, None);
}

#[tokio::test]
async fn x_tenant_naming_another_school_is_refused_on_login_and_refresh() {
    let app = spawn_app().await;
    let alpha = As::school("alpha");
    let creds = json!({"identifier": "admin@alpha.test", "password": PASSWORD});
    app.post(SCHOOL_LOGIN, &alpha.clone().tenant("beta"), creds.clone())
        .await
        .assert(403, Some("tenant_mismatch"));
    let login = app
        .post(SCHOOL_LOGIN, &alpha.clone().tenant("alpha"), creds)
        .await;
    login.assert(200, None);
    let refresh = json!({"refresh": login.body["refresh"]});
    app.post(
        "/api/v1/school/auth/refresh/",
        &alpha.clone().tenant("beta"),
        refresh.clone(),
    )
    .await
    .assert(403, Some("tenant_mismatch"));
    // The refused attempt did not use up the refresh token.
    app.post("/api/v1/school/auth/refresh/", &alpha, refresh)
        .await
        .assert(200, None);
}

#[tokio::test]
async fn a_deleted_session_is_never_active() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let sessions = "/api/v1/school/sessions/";
    let dates =
        |name: &str| json!({"name": name, "start_date": "2026-01-01", "end_date": "2026-12-31"});
    let current = app.post(sessions, &admin, dates("Current")).await;
    current.assert(201, None);
    let current_id = current.body["data"]["id"].as_str().expect("id").to_owned();
    let mut deleted_body = dates("Deleted");
    deleted_body["is_deleted"] = json!(true);
    let deleted = app.post(sessions, &admin, deleted_body).await;
    deleted.assert(201, None);
    assert_eq!(deleted.body["data"]["is_active"], "false");
    let deleted_id = deleted.body["data"]["id"].as_str().expect("id").to_owned();
    // The active session stayed active.
    let still = app.get(&format!("{sessions}{current_id}/"), &admin).await;
    assert_eq!(still.body["is_active"], true);
    // A deleted session cannot be activated; restoring and activating together works.
    let deleted_url = format!("{sessions}{deleted_id}/?include_deleted=true");
    let refused = app
        .patch(&deleted_url, &admin, json!({"is_active": true}))
        .await;
    refused.assert(400, Some("validation_error"));
    assert!(refused.body["errors"]["is_active"].is_array());
    let restored = app
        .patch(
            &deleted_url,
            &admin,
            json!({"is_active": true, "is_deleted": false}),
        )
        .await;
    restored.assert(200, None);
    assert_eq!(restored.body["is_active"], true);
    // Deleting the active session deactivates it.
    let gone = app
        .patch(
            &format!("{sessions}{deleted_id}/"),
            &admin,
            json!({"is_deleted": true}),
        )
        .await;
    gone.assert(200, None);
    assert_eq!(gone.body["is_active"], false);
    let active = app
        .get(&format!("{sessions}?include_deleted=true"), &admin)
        .await;
    let active_deleted = active.body["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|s| s["is_active"] == true && s["is_deleted"] == true)
        .count();
    assert_eq!(active_deleted, 0);
}

#[tokio::test]
async fn expired_revoked_tokens_are_purged_on_a_timer() {
    let app = spawn_app_with(|c| c.token_purge_interval = Duration::from_millis(200)).await;
    let url = app.db.url.clone();
    let count = move |sql: &'static str| {
        let url = url.clone();
        async move {
            tokio::task::spawn_blocking(move || {
                let mut conn = PgConnection::establish(&url).expect("connect");
                diesel::sql_query(sql).execute(&mut conn).expect("sql")
            })
            .await
            .expect("join")
        }
    };
    count(
        "INSERT INTO revoked_tokens (jti, expires_at) VALUES \
         (gen_random_uuid(), now() - interval '1 minute'), \
         (gen_random_uuid(), now() + interval '1 hour')",
    )
    .await;
    let mut left = usize::MAX;
    for _ in 0..50 {
        left = count("SELECT 1 FROM revoked_tokens").await;
        if left == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(left, 1, "the expired entry is purged, the live one kept");
    assert_eq!(
        count("SELECT 1 FROM revoked_tokens WHERE expires_at > now()").await,
        1
    );
}

#[tokio::test]
async fn pagination_links_use_the_configured_scheme_and_the_matched_host() {
    let app = spawn_app().await;
    let root = app.as_root().await;
    let token = root.token.clone().expect("token");
    let list = |host: &'static str, forwarded: &'static str| {
        app.client
            .get(format!("{}{USERS}?page_size=1", app.address))
            .header("Host", host)
            .header("X-Forwarded-Proto", forwarded)
            .header("X-Forwarded-Host", "evil.example")
            .bearer_auth(&token)
            .send()
    };
    let reply = TestApp::read(list("LocalHost.:8443", "javascript").await.expect("send")).await;
    reply.assert(200, None);
    assert_eq!(
        reply.body["next"],
        format!("http://localhost:8443{USERS}?page_size=1&page=2")
    );
    let https = spawn_app_with(|c| c.public_scheme = "https".into()).await;
    let admin = https.as_school_user("alpha", "admin").await;
    for name in ["A", "B"] {
        https
            .post("/api/v1/school/classes/", &admin, json!({"name": name}))
            .await
            .assert(201, None);
    }
    let page = https
        .get("/api/v1/school/classes/?page_size=1&page=2", &admin)
        .await;
    page.assert(200, None);
    assert_eq!(
        page.body["previous"],
        "https://alpha.localhost/api/v1/school/classes/?page_size=1&page=1"
    );
}

mod disclosures;
mod edges;
mod hostile;
mod roles;

/// Every secret in `Config` is a `Secret`: a logged configuration shows none of them (the
/// database password, the token key, the archive key).
#[test]
fn a_printed_configuration_shows_no_secret() {
    let mut config =
        crate::helpers::test_config("postgres://school:db-password-9f2c@127.0.0.1:5432/x");
    config.database_listen_url = Some("postgres://school:listen-password-4e1a@127.0.0.1/x".into());
    let printed = format!("{config:?}");
    for secret in [
        "db-password-9f2c",
        "listen-password-4e1a",
        crate::helpers::JWT_SECRET,
        crate::helpers::ARCHIVE_SIGNING_KEY,
    ] {
        assert!(!printed.contains(secret), "{secret} printed in {printed}");
    }
    assert!(printed.contains("Secret(..)"));
}
