//! API.md section 5 (roles and permissions) and section 3 (API keys).

use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{
    As, NewApiKey, NewRecord, NewRole, NewRoleAssignment, NewSubject, NewUser, TestApp, spawn_app,
    text,
};

/// (collection path, permission resource) of every school resource.
fn resources() -> Vec<(String, &'static str)> {
    let (s, e, x) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
    vec![
        ("/api/v1/school/sessions/".into(), "academicsession"),
        (
            format!("/api/v1/school/sessions/{s}/exam-sessions/"),
            "examsession",
        ),
        (
            format!("/api/v1/school/sessions/{s}/exam-sessions/{e}/exams/"),
            "exam",
        ),
        (
            format!("/api/v1/school/sessions/{s}/exam-sessions/{e}/exams/{x}/marks/"),
            "mark",
        ),
        ("/api/v1/school/departments/".into(), "department"),
        ("/api/v1/school/subjects/".into(), "subject"),
        ("/api/v1/school/classes/".into(), "academicclass"),
        ("/api/v1/school/students/".into(), "student"),
        ("/api/v1/school/teachers/".into(), "teacherprofile"),
        (
            "/api/v1/school/teacher-assignments/".into(),
            "teacherassignment",
        ),
        (
            "/api/v1/school/teacher-grade-comments/".into(),
            "teachergradecomment",
        ),
        ("/api/v1/school/session-setup/".into(), "sessionsetup"),
        ("/api/v1/school/general-settings/".into(), "generalsettings"),
        (
            "/api/v1/school/academic-settings/".into(),
            "academicsettings",
        ),
        ("/api/v1/school/roles/".into(), "schoolrole"),
        (
            "/api/v1/school/role-assignments/".into(),
            "userroleassignment",
        ),
        ("/api/v1/school/attendance/".into(), "attendance"),
        ("/api/v1/school/guardians/".into(), "guardian"),
        ("/api/v1/school/enrollments/".into(), "enrollment"),
        ("/api/v1/school/users/".into(), "user"),
    ]
}

#[test]
fn the_matrix_covers_every_resource_of_the_catalogue() {
    use school_service::auth::permissions::Resource;
    let covered: Vec<&str> = resources().iter().map(|(_, codename)| *codename).collect();
    for resource in Resource::ALL {
        // Report settings are one record with their own endpoint
        // (tests/api/resources/settings.rs). Report cards are only read, at their own paths
        // (tests/api/report_cards/cards.rs). Events, history and webhooks: their own paths and
        // rules (tests/api/events/feed.rs, tests/api/webhooks/subscriptions.rs).
        if matches!(
            *resource,
            Resource::ReportSettings
                | Resource::ReportCard
                | Resource::Event
                | Resource::History
                | Resource::Webhook
                | Resource::OauthClient
        ) {
            continue;
        }
        assert!(
            covered.contains(&resource.codename()),
            "add {} to resources() in tests/api/auth/access.rs",
            resource.codename()
        );
    }
}

/// Whether the answer shows the permission check let the request through: anything but
/// 403 `permission_denied` (later checks answer 200, 400 or 404 here).
fn passed(reply: &crate::helpers::Reply) -> bool {
    assert_ne!(reply.status.as_u16(), 500, "{}", reply.body);
    !(reply.status == 403 && reply.code() == "permission_denied")
}

async fn check_matrix(app: &TestApp, who: &As) {
    let me = app.get("/api/v1/school/auth/me/", who).await;
    let granted: Vec<String> = me.body["permissions"]
        .as_array()
        .expect("perms")
        .iter()
        .filter_map(|p| p.as_str().map(String::from))
        .collect();
    for (path, resource) in resources() {
        let item = format!("{path}{}/", Uuid::new_v4());
        let cases = [
            ("view", Method::GET, path.clone(), None),
            ("add", Method::POST, path.clone(), Some(json!({}))),
            ("change", Method::PATCH, item.clone(), Some(json!({}))),
            ("change", Method::PUT, item.clone(), Some(json!({}))),
            ("delete", Method::DELETE, item.clone(), None),
        ];
        for (action, method, url, body) in cases {
            let reply = app.request(method.clone(), &url, who, body).await;
            // A method the resource does not offer (users: no PUT, no DELETE) answers 405
            // before any permission check.
            if reply.status == 405 && resource == "user" {
                continue;
            }
            let allowed = granted.contains(&format!("{action}_{resource}"));
            assert_eq!(
                passed(&reply),
                allowed,
                "{method} {url} for {:?}: {} {}",
                me.body["roles"],
                reply.status,
                reply.body
            );
        }
    }
    let report = app.get("/api/v1/school/report-settings/", who).await;
    assert_eq!(
        passed(&report),
        granted.contains(&"view_reportsettings".to_owned())
    );
}

async fn user_with_roles(app: &TestApp, school: &str, email: &str, roles: &[&str]) -> As {
    let root = app.as_root().await;
    let id = app.tenant_id(&root, school).await;
    NewUser {
        email: Some(email),
        password: "password-123",
        client: Some(&id),
        roles: Some(roles),
        ..Default::default()
    }
    .create(app, &root)
    .await;
    As::school(school).token(
        app.school_login(school, email).await["access"]
            .as_str()
            .expect("access"),
    )
}

#[tokio::test]
async fn every_default_role_is_enforced_on_every_resource_and_method() {
    let app = spawn_app().await;
    for role in [
        "admin",
        "principal",
        "office",
        "teacher",
        "student",
        "guardian",
    ] {
        let who = user_with_roles(&app, "alpha", &format!("{role}2@alpha.test"), &[role]).await;
        check_matrix(&app, &who).await;
    }
}

#[tokio::test]
async fn users_without_roles_reach_only_me_and_permissions() {
    let app = spawn_app().await;
    let norole = app.as_school_user("alpha", "norole").await;
    let me = app.get("/api/v1/school/auth/me/", &norole).await;
    me.assert(200, None);
    assert_eq!(me.body["permissions"], json!([]));
    let all = app.get("/api/v1/school/permissions/", &norole).await;
    assert_eq!(
        all.body,
        json!(school_service::auth::permissions::all_codenames())
    );
    for (path, _) in resources() {
        app.get(&path, &norole)
            .await
            .assert(403, Some("permission_denied"));
    }
}

#[tokio::test]
async fn custom_roles_grant_exactly_their_permissions_and_changes_apply_at_once() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let role = NewRole::new("subject-viewer", &["view_subject", "view_subject"])
        .post(&app, &admin)
        .await;
    role.assert(201, None);
    assert_eq!(role.body["permissions"], json!(["view_subject"]));
    NewRole::new("bad", &["fly_subject"])
        .post(&app, &admin)
        .await
        .assert(400, Some("validation_error"));
    app.post(
        "/api/v1/school/roles/",
        &admin,
        json!({"name": "subject-viewer"}),
    )
    .await
    .assert(409, Some("conflict"));
    let norole = app.school_login("alpha", "norole@alpha.test").await;
    let who = As::school("alpha").token(norole["access"].as_str().expect("a"));
    let assignment = NewRoleAssignment {
        user: text(&norole["user"]["id"]),
        role: text(&role.body["id"]),
    }
    .post(&app, &admin)
    .await;
    assignment.assert(201, None);
    app.get("/api/v1/school/subjects/", &who)
        .await
        .assert(200, None);
    NewSubject::new("x", "x")
        .post(&app, &who)
        .await
        .assert(403, Some("permission_denied"));
    app.get("/api/v1/school/classes/", &who)
        .await
        .assert(403, Some("permission_denied"));
    // The role is in use: a real delete conflicts.
    app.delete(
        &format!(
            "/api/v1/school/roles/{}/",
            role.body["id"].as_str().expect("id")
        ),
        &admin,
    )
    .await
    .assert(409, Some("conflict"));
    // Removing the assignment takes effect on the next request.
    app.delete(
        &format!(
            "/api/v1/school/role-assignments/{}/",
            assignment.body["id"].as_str().expect("id")
        ),
        &admin,
    )
    .await
    .assert(204, None);
    app.get("/api/v1/school/subjects/", &who)
        .await
        .assert(403, Some("permission_denied"));
}

#[tokio::test]
async fn roles_belong_to_one_school() {
    let app = spawn_app().await;
    let alpha_admin = app.as_school_user("alpha", "admin").await;
    let beta_admin = app.as_school_user("beta", "admin").await;
    let role = NewRole::new("alpha-only", &["view_exam"])
        .post(&app, &alpha_admin)
        .await;
    let beta_roles = app
        .get("/api/v1/school/roles/?search=alpha-only", &beta_admin)
        .await;
    assert_eq!(beta_roles.body["count"], 0);
    let beta_user = app.school_login("beta", "norole@beta.test").await["user"]["id"].clone();
    let reply = NewRoleAssignment {
        user: text(&beta_user),
        role: text(&role.body["id"]),
    }
    .post(&app, &beta_admin)
    .await;
    reply.assert(400, Some("validation_error"));
    // A user of another school cannot be given a role here.
    let reply = NewRoleAssignment {
        user: text(&beta_user),
        role: text(&role.body["id"]),
    }
    .post(&app, &alpha_admin)
    .await;
    reply.assert(400, Some("validation_error"));
    assert!(reply.body["errors"]["user"].is_array());
}

async fn make_key(app: &TestApp, root: &As, key: NewApiKey<'_>) -> (String, Value) {
    let reply = key.post(app, root).await;
    reply.assert(201, None);
    (
        reply.body["key"].as_str().expect("key").to_owned(),
        reply.body.clone(),
    )
}

#[tokio::test]
async fn api_keys_scoped_global_and_read_only() {
    let app = spawn_app().await;
    let root = app.as_root().await;
    let alpha = app.tenant_id(&root, "alpha").await;
    let alpha_sync = NewApiKey::named("alpha sync").of_school(&alpha);
    let (scoped, record) = make_key(&app, &root, alpha_sync).await;
    assert!(scoped.len() >= 32);
    assert_eq!(record["prefix"], json!(&scoped[..8]));
    for key in [
        "id",
        "name",
        "prefix",
        "tenant",
        "read_only",
        "expires_at",
        "last_used_at",
        "created_at",
        "revoked_at",
    ] {
        assert!(record.get(key).is_some(), "{key}");
    }
    let (global, _) = make_key(&app, &root, NewApiKey::named("global")).await;
    let reader = NewApiKey::named("reader").read_only();
    let (read_only, _) = make_key(&app, &root, reader).await;

    let classes = "/api/v1/school/classes/";
    let created = app
        .post(
            classes,
            &As::school("alpha").key(&scoped),
            json!({"name": "By key"}),
        )
        .await;
    created.assert(201, None);
    assert_eq!(created.body["created_by"], Value::Null);
    app.get(classes, &As::school("beta").key(&scoped))
        .await
        .assert(403, Some("tenant_mismatch"));
    app.get(classes, &As::school("alpha").key(&global))
        .await
        .assert(200, None);
    app.get(classes, &As::school("beta").key(&global))
        .await
        .assert(200, None);
    app.get(classes, &As::main().tenant("beta").key(&global))
        .await
        .assert(200, None);
    app.get(classes, &As::main().key(&global))
        .await
        .assert(404, Some("tenant_not_found"));
    let reader = As::school("alpha").key(&read_only);
    app.get(classes, &reader).await.assert(200, None);
    app.post(classes, &reader, json!({"name": "x"}))
        .await
        .assert(403, Some("permission_denied"));
    let id = created.body["id"].as_str().expect("id");
    app.patch(&format!("{classes}{id}/"), &reader, json!({"name": "y"}))
        .await
        .assert(403, Some("permission_denied"));
    app.delete(&format!("{classes}{id}/"), &reader)
        .await
        .assert(403, Some("permission_denied"));

    let me = app.get("/api/v1/school/auth/me/", &reader).await;
    me.assert(200, None);
    assert_eq!(me.body["user"], Value::Null);
    assert_eq!(me.body["api_key"]["read_only"], true);
    assert!(
        me.body["permissions"]
            .as_array()
            .expect("p")
            .iter()
            .all(|p| p.as_str().expect("s").starts_with("view_"))
    );

    // The plain key is shown once: never in lists or retrievals.
    let list = app.get("/api/v1/system/api-keys/", &root).await;
    assert_eq!(list.body["count"], 3);
    assert!(!list.body.to_string().contains(&scoped));
    // The list searches names and prefixes.
    let found = app.get("/api/v1/system/api-keys/?search=SYNC", &root).await;
    assert_eq!(found.body["count"], 1);
    assert_eq!(found.body["results"][0]["name"], "alpha sync");
    let by_prefix = app
        .get(
            &format!("/api/v1/system/api-keys/?search={}", &global[..8]),
            &root,
        )
        .await;
    assert_eq!(by_prefix.body["results"][0]["name"], "global");
    let one = app
        .get(
            &format!(
                "/api/v1/system/api-keys/{}/",
                record["id"].as_str().expect("id")
            ),
            &root,
        )
        .await;
    assert!(!one.body.to_string().contains(&scoped));
    assert!(one.body["last_used_at"].is_string(), "use is recorded");
}

#[tokio::test]
async fn revoked_expired_and_unknown_keys_are_refused() {
    let app = spawn_app().await;
    let root = app.as_root().await;
    let (key, record) = make_key(&app, &root, NewApiKey::named("short-lived")).await;
    let school = As::school("alpha");
    app.get("/api/v1/school/classes/", &school.clone().key(&key))
        .await
        .assert(200, None);
    app.delete(
        &format!(
            "/api/v1/system/api-keys/{}/",
            record["id"].as_str().expect("id")
        ),
        &root,
    )
    .await
    .assert(204, None);
    app.get("/api/v1/school/classes/", &school.clone().key(&key))
        .await
        .assert(401, Some("invalid_api_key"));
    app.get("/api/v1/school/classes/", &school.clone().key("not-a-key"))
        .await
        .assert(401, Some("invalid_api_key"));
    app.get("/api/v1/school/classes/", &school.clone().key(""))
        .await
        .assert(401, Some("invalid_api_key"));
    let past = (chrono::Utc::now() - chrono::Duration::seconds(5)).to_rfc3339();
    NewApiKey {
        name: "old",
        expires_at: Some(&past),
        ..Default::default()
    }
    .post(&app, &root)
    .await
    .assert(400, Some("validation_error"));
    let soon = (chrono::Utc::now() + chrono::Duration::milliseconds(1500)).to_rfc3339();
    let soon = NewApiKey {
        expires_at: Some(&soon),
        ..NewApiKey::named("soon")
    };
    let (expiring, _) = make_key(&app, &root, soon).await;
    app.get("/api/v1/school/classes/", &school.clone().key(&expiring))
        .await
        .assert(200, None);
    tokio::time::sleep(std::time::Duration::from_millis(1700)).await;
    app.get("/api/v1/school/classes/", &school.key(&expiring))
        .await
        .assert(401, Some("invalid_api_key"));
    let staff = app.as_staff().await;
    NewApiKey::named("")
        .post(&app, &staff)
        .await
        .assert(400, Some("validation_error"));
    let plain = app.system_login("plain@platform.test").await;
    app.get(
        "/api/v1/system/api-keys/",
        &As::main().token(plain["access"].as_str().expect("a")),
    )
    .await
    .assert(403, Some("permission_denied"));
}

#[tokio::test]
async fn the_plain_key_never_reaches_the_log() {
    let app = spawn_app().await;
    let root = app.as_root().await;
    let (key, _) = make_key(&app, &root, NewApiKey::named("logged?")).await;
    let url = app.db.url.clone();
    let (stderr, key_for_child) = tokio::task::spawn_blocking(move || {
        let server = crate::helpers::ServerProcess::start(&url, &[("RUST_LOG", "debug")]);
        for path in ["/api/v1/school/classes/", "/api/v1/school/nothing/"] {
            let _ = reqwest::blocking::Client::new()
                .get(format!("http://127.0.0.1:{}{path}", server.port))
                .header("Host", "alpha.localhost")
                .header("X-API-KEY", &key)
                .send()
                .expect("request");
        }
        (server.stop(), key)
    })
    .await
    .expect("server");
    assert!(
        stderr.contains("path=/api/v1/school/classes"),
        "the access log line is there: {stderr}"
    );
    assert!(
        !stderr.contains(&key_for_child),
        "the key leaked into the log"
    );
}

#[tokio::test]
async fn role_changes_made_by_another_process_reach_the_cache() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let teacher = app.as_school_user("alpha", "teacher").await;
    app.get("/api/v1/school/classes/", &teacher)
        .await
        .assert(200, None);
    // Another server process on the same database (its own caches) takes the teacher's
    // role away.
    let other = crate::helpers::spawn_app_on(app.db.clone()).await;
    let assignment = other.role_assignment_of(&admin, &teacher).await;
    other.delete(&assignment, &admin).await.assert(204, None);
    let mut refused = false;
    for _ in 0..40 {
        if app.get("/api/v1/school/classes/", &teacher).await.status == 403 {
            refused = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(
        refused,
        "the cached roles were dropped after another process changed them"
    );
}
