//! API.md section 3 (tokens, login, refresh, logout, throttling) and spec part 5 rules 1-7.

//! Well-formed bodies are typed (`Login`, `app.refresh`); the malformed ones stay raw JSON,
//! as they are what those tests are about.

use serde_json::{Value, json};

use crate::helpers::{
    As, JWT_SECRET, Login, NewRecord, NewUser, PASSWORD, SCHOOL_AUTH, SYSTEM_AUTH, forge,
    spawn_app, spawn_app_with,
};

const SCHOOL_LOGIN: &str = "/api/v1/school/auth/login/";

#[tokio::test]
async fn school_login_answers_tokens_and_tenant_context() {
    let app = spawn_app().await;
    let body = app.school_login("alpha", "teacher@alpha.test").await;
    assert!(body["access"].is_string() && body["refresh"].is_string());
    assert_eq!(body["user"]["email"], "teacher@alpha.test");
    assert_eq!(body["tenant"]["schema_name"], "alpha");
    assert_eq!(body["roles"], json!(["teacher"]));
    assert!(body["teacher"]["id"].is_string());
    assert_eq!(body["teacher"]["user"], body["user"]["id"]);
    let admin = app.school_login("alpha", "ADMIN@Alpha.TEST").await;
    assert_eq!(admin["roles"], json!(["admin"]));
    assert_eq!(admin["teacher"], Value::Null);
    for key in [
        "id",
        "email",
        "phone",
        "first_name",
        "last_name",
        "client",
        "is_superuser",
        "is_staff",
    ] {
        assert!(admin["user"].get(key).is_some(), "user.{key}");
    }
    assert!(admin["user"].get("password_hash").is_none());
}

#[tokio::test]
async fn login_layers_are_enforced() {
    let app = spawn_app().await;
    // Rule 1: a school user on system auth.
    Login::of("admin@alpha.test")
        .post(&app, SYSTEM_AUTH, &As::main())
        .await
        .assert(403, Some("wrong_auth_layer"));
    // Rule 2: a platform admin on school auth.
    Login::of("root@platform.test")
        .post(&app, SCHOOL_AUTH, &As::school("alpha"))
        .await
        .assert(403, Some("wrong_auth_layer"));
    // A user of another school.
    Login::of("admin@alpha.test")
        .post(&app, SCHOOL_AUTH, &As::school("beta"))
        .await
        .assert(403, Some("tenant_mismatch"));
    let system = app.system_login("root@platform.test").await;
    assert_eq!(system["user"]["is_superuser"], true);
    assert_eq!(system["user"]["client"], Value::Null);
}

#[tokio::test]
async fn bad_credentials_and_bad_requests() {
    let app = spawn_app().await;
    let school = As::school("alpha");
    Login {
        identifier: "admin@alpha.test",
        password: "wrong-password",
    }
    .post(&app, SCHOOL_AUTH, &school)
    .await
    .assert(401, Some("invalid_credentials"));
    Login::of("nobody@alpha.test")
        .post(&app, SCHOOL_AUTH, &school)
        .await
        .assert(401, Some("invalid_credentials"));
    app.post(SCHOOL_LOGIN, &school, json!({"password": PASSWORD}))
        .await
        .assert(400, Some("validation_error"));
    let reply = app
        .post(SCHOOL_LOGIN, &school, json!({"identifier": 5}))
        .await;
    reply.assert(400, Some("validation_error"));
    assert!(
        reply.body["errors"]["identifier"].is_array()
            && reply.body["errors"]["password"].is_array()
    );
    // `email` is accepted in place of `identifier`.
    app.post(
        SCHOOL_LOGIN,
        &school,
        json!({"email": "admin@alpha.test", "password": PASSWORD}),
    )
    .await
    .assert(200, None);
}

#[tokio::test]
async fn phone_logins_and_long_passwords() {
    let app = spawn_app().await;
    let root = app.as_root().await;
    let alpha = app.get("/api/v1/system/tenants/", &root).await.body["results"][0]["id"].clone();
    let long = format!("{}A", "p".repeat(100));
    NewUser {
        phone: Some("+254 700 000 001"),
        password: &long,
        client: alpha.as_str(),
        ..Default::default()
    }
    .create(&app, &root)
    .await;
    let school = As::school("alpha");
    app.post(
        SCHOOL_LOGIN,
        &school,
        json!({"phone": "+254700000001", "password": long}),
    )
    .await
    .assert(200, None);
    // Same first 72 bytes, different tail: refused.
    let other = format!("{}B", "p".repeat(100));
    Login {
        identifier: "+254700000001",
        password: &other,
    }
    .post(&app, SCHOOL_AUTH, &school)
    .await
    .assert(401, Some("invalid_credentials"));
}

#[tokio::test]
async fn tokens_are_strictly_checked() {
    let app = spawn_app().await;
    let login = app.school_login("alpha", "admin@alpha.test").await;
    let (access, refresh) = (
        login["access"].as_str().expect("a"),
        login["refresh"].as_str().expect("r"),
    );
    let me = "/api/v1/school/auth/me/";
    let school = As::school("alpha");
    app.get(me, &school.clone().token(access))
        .await
        .assert(200, None);
    app.get(me, &school)
        .await
        .assert(401, Some("not_authenticated"));
    // A refresh token is not an access token, and the reverse.
    app.get(me, &school.clone().token(refresh))
        .await
        .assert(401, Some("token_not_valid"));
    app.refresh(SCHOOL_AUTH, &school, &Value::from(access))
        .await
        .assert(401, Some("token_not_valid"));
    // A school token on system endpoints, and a system token on school endpoints.
    app.get("/api/v1/system/auth/me/", &As::main().token(access))
        .await
        .assert(401, Some("token_not_valid"));
    let system = app.system_login("root@platform.test").await["access"]
        .as_str()
        .expect("a")
        .to_owned();
    app.get(me, &school.clone().token(&system))
        .await
        .assert(401, Some("token_not_valid"));
    // Not `Bearer <token>`.
    let res = app
        .client
        .get(format!("{}{me}", app.address))
        .header("Host", "alpha.localhost")
        .header("Authorization", format!("Token {access}"))
        .send()
        .await
        .expect("send");
    crate::helpers::TestApp::read(res)
        .await
        .assert(401, Some("token_not_valid"));

    let user_id = login["user"]["id"].clone();
    let now = chrono::Utc::now().timestamp();
    let claims = |exp: i64| json!({"sub": user_id, "token_type": "access", "jti": uuid::Uuid::new_v4(), "iat": now - 100, "exp": exp, "layer": "school", "tenant": "alpha", "ver": 0});
    // Well-formed and correctly signed: accepted, so the refusals below are about one thing each.
    app.get(
        me,
        &school.clone().token(&forge(claims(now + 60), JWT_SECRET)),
    )
    .await
    .assert(200, None);
    app.get(
        me,
        &school.clone().token(&forge(claims(now - 1), JWT_SECRET)),
    )
    .await
    .assert(401, Some("token_not_valid"));
    app.get(
        me,
        &school.clone().token(&forge(
            claims(now + 60),
            "some-other-secret-some-other-secret",
        )),
    )
    .await
    .assert(401, Some("token_not_valid"));
    let payload = access.split('.').nth(1).expect("payload");
    let alg_none = format!("eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.{payload}.");
    app.get(me, &school.clone().token(&alg_none))
        .await
        .assert(401, Some("token_not_valid"));
    app.get(me, &school.token("garbage"))
        .await
        .assert(401, Some("token_not_valid"));
}

#[tokio::test]
async fn refresh_rotates_and_refuses_reuse() {
    let app = spawn_app().await;
    let login = app.school_login("alpha", "admin@alpha.test").await;
    let school = As::school("alpha");
    let first = app.refresh(SCHOOL_AUTH, &school, &login["refresh"]).await;
    first.assert(200, None);
    assert!(first.body["access"].is_string() && first.body["refresh"].is_string());
    app.get(
        "/api/v1/school/auth/me/",
        &school
            .clone()
            .token(first.body["access"].as_str().expect("a")),
    )
    .await
    .assert(200, None);
    // The rotated token is revoked.
    app.refresh(SCHOOL_AUTH, &school, &login["refresh"])
        .await
        .assert(401, Some("token_not_valid"));
    // A school refresh token on another school is a mismatch.
    app.refresh(SCHOOL_AUTH, &As::school("beta"), &first.body["refresh"])
        .await
        .assert(403, Some("tenant_mismatch"));
    // System refresh.
    let system = app.system_login("root@platform.test").await;
    let reply = app
        .refresh(SYSTEM_AUTH, &As::main(), &system["refresh"])
        .await;
    reply.assert(200, None);
    app.refresh(SYSTEM_AUTH, &As::main(), &system["refresh"])
        .await
        .assert(401, Some("token_not_valid"));
}

#[tokio::test]
async fn refresh_without_rotation_answers_access_only() {
    let app = spawn_app_with(|c| c.rotate_refresh_tokens = false).await;
    let login = app.school_login("alpha", "admin@alpha.test").await;
    let reply = app
        .refresh(SCHOOL_AUTH, &As::school("alpha"), &login["refresh"])
        .await;
    reply.assert(200, None);
    assert!(reply.body.get("refresh").is_none());
    app.refresh(SCHOOL_AUTH, &As::school("alpha"), &login["refresh"])
        .await
        .assert(200, None);
}

#[tokio::test]
async fn logout_revokes_the_refresh_token() {
    let app = spawn_app().await;
    let login = app.school_login("alpha", "admin@alpha.test").await;
    let school = As::school("alpha");
    let authed = school.clone().token(login["access"].as_str().expect("a"));
    app.logout(SCHOOL_AUTH, &school, &login["refresh"])
        .await
        .assert(401, Some("not_authenticated"));
    let reply = app.logout(SCHOOL_AUTH, &authed, &login["refresh"]).await;
    reply.assert(204, None);
    app.refresh(SCHOOL_AUTH, &school, &login["refresh"])
        .await
        .assert(401, Some("token_not_valid"));

    let system = app.system_login("staff@platform.test").await;
    let as_staff = As::main().token(system["access"].as_str().expect("a"));
    app.logout(SYSTEM_AUTH, &as_staff, &system["refresh"])
        .await
        .assert(204, None);
    app.refresh(SYSTEM_AUTH, &As::main(), &system["refresh"])
        .await
        .assert(401, Some("token_not_valid"));
}

#[tokio::test]
async fn deactivation_and_password_changes_end_sessions_for_good() {
    let app = spawn_app().await;
    let root = app.as_root().await;
    let login = app.school_login("alpha", "teacher@alpha.test").await;
    let user_id = login["user"]["id"].as_str().expect("id").to_owned();
    let old = As::school("alpha").token(login["access"].as_str().expect("a"));
    app.get("/api/v1/school/auth/me/", &old)
        .await
        .assert(200, None);
    let user_path = format!("/api/v1/system/users/{user_id}/");
    app.patch(&user_path, &root, json!({"is_active": false}))
        .await
        .assert(200, None);
    app.get("/api/v1/school/auth/me/", &old)
        .await
        .assert(401, Some("token_not_valid"));
    Login::of("teacher@alpha.test")
        .post(&app, SCHOOL_AUTH, &As::school("alpha"))
        .await
        .assert(401, Some("invalid_credentials"));
    app.patch(&user_path, &root, json!({"is_active": true}))
        .await
        .assert(200, None);
    // Reactivation does not revive tokens issued before the deactivation.
    app.get("/api/v1/school/auth/me/", &old)
        .await
        .assert(401, Some("token_not_valid"));
    app.refresh(SCHOOL_AUTH, &As::school("alpha"), &login["refresh"])
        .await
        .assert(401, Some("token_not_valid"));
    let fresh = app.as_school_user("alpha", "teacher").await;
    app.get("/api/v1/school/auth/me/", &fresh)
        .await
        .assert(200, None);
    app.patch(&user_path, &root, json!({"password": "a-new-password"}))
        .await
        .assert(200, None);
    app.get("/api/v1/school/auth/me/", &fresh)
        .await
        .assert(401, Some("token_not_valid"));
    Login {
        identifier: "teacher@alpha.test",
        password: "a-new-password",
    }
    .post(&app, SCHOOL_AUTH, &As::school("alpha"))
    .await
    .assert(200, None);
}

#[tokio::test]
async fn failed_logins_are_throttled() {
    let app = spawn_app_with(|c| c.login_rate_per_minute = 3).await;
    let school = As::school("alpha");
    let bad = Login {
        identifier: "admin@alpha.test",
        password: "wrong-password",
    };
    for _ in 0..3 {
        bad.post(&app, SCHOOL_AUTH, &school)
            .await
            .assert(401, Some("invalid_credentials"));
    }
    // Malformed requests do not count, but are not let through either once blocked.
    let reply = Login::of("admin@alpha.test")
        .post(&app, SCHOOL_AUTH, &school)
        .await;
    reply.assert(429, Some("throttled"));
    let retry: u64 = reply
        .headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("Retry-After");
    assert!((1..=60).contains(&retry));
}

#[tokio::test]
async fn me_answers_user_tenant_roles_permissions_and_teacher() {
    let app = spawn_app().await;
    let teacher = app.as_school_user("alpha", "teacher").await;
    let me = app.get("/api/v1/school/auth/me/", &teacher).await;
    me.assert(200, None);
    assert_eq!(me.body["tenant"]["schema_name"], "alpha");
    assert_eq!(me.body["roles"], json!(["teacher"]));
    let permissions: Vec<&str> = me.body["permissions"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(permissions.contains(&"change_mark") && !permissions.contains(&"delete_mark"));
    assert!(permissions.windows(2).all(|w| w[0] < w[1]));
    assert!(me.body["teacher"]["id"].is_string());

    let plain = app.system_login("plain@platform.test").await;
    let reply = app
        .get(
            "/api/v1/system/auth/me/",
            &As::main().token(plain["access"].as_str().expect("a")),
        )
        .await;
    reply.assert(200, None);
    assert_eq!(reply.body["user"]["email"], "plain@platform.test");
}
