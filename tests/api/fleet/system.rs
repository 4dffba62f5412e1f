//! API.md section 4: the system API and the command line.

use std::process::Command;

use serde_json::{Value, json};

use crate::helpers::{As, NewRecord, NewTenant, NewUser, spawn_app};

const TENANTS: &str = "/api/v1/system/tenants/";

#[tokio::test]
async fn creating_a_tenant_provisions_its_schema_and_roles() {
    let app = spawn_app().await;
    let root = app.as_root().await;
    let reply = NewTenant {
        schema_name: "gamma",
        name: "Gamma School",
        domains: &["Gamma.localhost", "g.example.org"],
    }
    .post(&app, &root)
    .await;
    reply.assert(201, None);
    assert_eq!(reply.body["schema_name"], "gamma");
    assert_eq!(reply.body["is_active"], true);
    let domains = reply.body["domains"].as_array().expect("domains");
    assert_eq!(domains.len(), 2);
    assert_eq!(domains[0]["domain"], "gamma.localhost");
    assert_eq!(domains[0]["is_primary"], true);
    assert_eq!(domains[1]["is_primary"], false);
    let id = reply.body["id"].as_str().expect("id").to_owned();

    // A user of the new school can log in on its domain, with a default role.
    NewUser {
        email: Some("head@gamma.test"),
        password: "password-123",
        client: Some(&id),
        roles: Some(&["principal"]),
        ..Default::default()
    }
    .post(&app, &root)
    .await
    .assert(201, None);
    let login = app.school_login("gamma", "head@gamma.test").await;
    assert_eq!(login["roles"], json!(["principal"]));

    app.post(
        TENANTS,
        &root,
        json!({"schema_name": "gamma", "name": "Again"}),
    )
    .await
    .assert(409, Some("conflict"));
    NewTenant {
        schema_name: "delta",
        name: "Delta",
        domains: &["gamma.localhost"],
    }
    .post(&app, &root)
    .await
    .assert(409, Some("conflict"));
    for bad in [
        "public",
        "pg_x",
        "information_schema",
        "Bad",
        "1x",
        "x-y",
        "x\"; drop schema public; --",
    ] {
        let reply = app
            .post(TENANTS, &root, json!({"schema_name": bad, "name": "X"}))
            .await;
        reply.assert(400, Some("validation_error"));
        assert!(reply.body["errors"]["schema_name"].is_array(), "{bad}");
    }
    NewTenant {
        schema_name: "epsilon",
        name: "E",
        domains: &["localhost"],
    }
    .post(&app, &root)
    .await
    .assert(400, Some("validation_error"));
}

#[tokio::test]
async fn domains_keep_one_primary() {
    let app = spawn_app().await;
    let root = app.as_root().await;
    let id = app.tenant_id(&root, "alpha").await;
    let path = format!("{TENANTS}{id}/domains/");
    app.post(&path, &root, json!({"domain": "alpha2.localhost"}))
        .await
        .assert(201, None);
    let reply = app
        .post(
            &path,
            &root,
            json!({"domain": "alpha3.localhost", "is_primary": true}),
        )
        .await;
    reply.assert(201, None);
    let list = app.get(&path, &root).await;
    let primaries: Vec<&Value> = list.body["results"]
        .as_array()
        .expect("list")
        .iter()
        .filter(|d| d["is_primary"] == true)
        .collect();
    assert_eq!(primaries.len(), 1);
    assert_eq!(primaries[0]["domain"], "alpha3.localhost");
    app.post(&path, &root, json!({"domain": "beta.localhost"}))
        .await
        .assert(409, Some("conflict"));
    // The new domain routes at once.
    let token = app.school_token("alpha", "admin").await;
    app.get(
        "/api/v1/school/auth/me/",
        &As::host("alpha3.localhost").token(&token),
    )
    .await
    .assert(200, None);
}

#[tokio::test]
async fn deleting_a_tenant_deactivates_or_drops_it() {
    let app = spawn_app().await;
    let root = app.as_root().await;
    let staff = app.as_staff().await;
    let beta = app.tenant_id(&root, "beta").await;
    app.delete(&format!("{TENANTS}{beta}/"), &staff)
        .await
        .assert(204, None);
    let reply = app.get(&format!("{TENANTS}{beta}/"), &staff).await;
    reply.assert(200, None);
    assert_eq!(reply.body["is_active"], false);
    app.delete(&format!("{TENANTS}{beta}/?drop_schema=true"), &staff)
        .await
        .assert(403, Some("permission_denied"));
    app.delete(&format!("{TENANTS}{beta}/?drop_schema=true"), &root)
        .await
        .assert(204, None);
    app.get(&format!("{TENANTS}{beta}/"), &root)
        .await
        .assert(404, Some("not_found"));
    app.get("/healthz", &As::school("beta"))
        .await
        .assert(200, None);
    app.get("/api/v1/school/auth/me/", &As::school("beta"))
        .await
        .assert(404, Some("tenant_not_found"));
    app.get(&format!("{TENANTS}not-a-uuid/"), &root)
        .await
        .assert(400, Some("invalid_id"));
}

#[tokio::test]
async fn system_endpoints_need_a_platform_admin() {
    let app = spawn_app().await;
    app.get(TENANTS, &As::main())
        .await
        .assert(401, Some("not_authenticated"));
    let plain = app.system_login("plain@platform.test").await;
    app.get(
        TENANTS,
        &As::main().token(plain["access"].as_str().expect("a")),
    )
    .await
    .assert(403, Some("permission_denied"));
    let staff = app.as_staff().await;
    let reply = app.get(TENANTS, &staff).await;
    reply.assert(200, None);
    assert_eq!(reply.body["count"], 2);
    // An API key counts as no credentials here.
    app.get(TENANTS, &As::main().key("whatever"))
        .await
        .assert(401, Some("not_authenticated"));
}

#[tokio::test]
async fn user_creation_rules() {
    let app = spawn_app().await;
    let root = app.as_root().await;
    let staff = app.as_staff().await;
    let alpha = app.tenant_id(&root, "alpha").await;
    let users = "/api/v1/system/users/";
    let superuser = NewUser {
        email: Some("su@x.test"),
        password: "password-123",
        is_superuser: Some(true),
        ..Default::default()
    };
    superuser
        .post(&app, &staff)
        .await
        .assert(403, Some("permission_denied"));
    let reply = superuser.post(&app, &root).await;
    reply.assert(201, None);
    assert_eq!(reply.body["is_superuser"], true);
    assert_eq!(reply.body["first_name"], "");
    assert!(reply.body.get("password").is_none() && reply.body.get("password_hash").is_none());
    app.post(
        users,
        &root,
        json!({"email": "SU@x.test", "password": "password-123"}),
    )
    .await
    .assert(409, Some("conflict"));
    let reply = app
        .post(
            users,
            &root,
            json!({"email": "r@x.test", "password": "password-123", "roles": ["admin"]}),
        )
        .await;
    reply.assert(400, Some("validation_error"));
    assert!(reply.body["errors"]["roles"].is_array());
    app.post(users, &root, json!({"password": "password-123"}))
        .await
        .assert(400, Some("validation_error"));
    app.post(
        users,
        &root,
        json!({"email": "short@x.test", "password": "short"}),
    )
    .await
    .assert(400, Some("validation_error"));
    app.post(
        users,
        &root,
        json!({"email": "not-an-email", "password": "password-123"}),
    )
    .await
    .assert(400, Some("validation_error"));
    app.post(
        users,
        &root,
        json!({"email": "c@x.test", "password": "password-123", "client": uuid::Uuid::new_v4()}),
    )
    .await
    .assert(400, Some("validation_error"));
    app.post(users, &root, json!({"email": "c@x.test", "password": "password-123", "client": alpha, "roles": ["nosuchrole"]})).await.assert(400, Some("validation_error"));
    let reply = app.post(users, &root, json!({"email": "c@x.test", "password": "password-123", "client": alpha, "roles": ["office"], "first_name": "Cee"})).await;
    reply.assert(201, None);
    assert_eq!(reply.body["client"], json!(alpha));
    let id = reply.body["id"].as_str().expect("id");
    app.patch(
        &format!("{users}{id}/"),
        &staff,
        json!({"is_superuser": true}),
    )
    .await
    .assert(403, Some("permission_denied"));
    let reply = app
        .patch(
            &format!("{users}{id}/"),
            &staff,
            json!({"last_name": "Dee"}),
        )
        .await;
    reply.assert(200, None);
    assert_eq!(reply.body["last_name"], "Dee");
    let list = app.get(&format!("{users}?search=cee"), &staff).await;
    assert_eq!(list.body["count"], 1);
}

/// Runs `school-service` with `command` split on spaces (so no argument may contain one).
fn cli(db_url: &str, command: &str) -> (bool, String, String) {
    crate::helpers::cli(db_url, command, &[])
}

#[tokio::test]
async fn the_command_line_provisions_schools_and_users() {
    let app = spawn_app().await;
    let url = app.db.url.clone();
    tokio::task::spawn_blocking(move || {
        let (ok, _, err) = cli(&url, "tenant create --schema zeta --name Zeta-High --domain zeta.localhost");
        assert!(ok, "{err}");
        let (ok, _, err) = cli(&url, "tenant create --schema zeta --name Zeta-Again");
        assert!(!ok);
        assert_eq!(err.trim().lines().count(), 1, "one-line error: {err}");
        let (ok, _, err) = cli(&url, "tenant create --schema Bad-Name --name X");
        assert!(!ok && err.contains("schema"), "{err}");
        let (ok, out, _) = cli(&url, "tenant list");
        assert!(ok && out.contains("zeta") && out.contains("alpha"));
        let (ok, _, err) = cli(&url, "user create --tenant zeta --email t@zeta.test --password password-123 --role teacher --teacher --first-name Tea");
        assert!(ok, "{err}");
        let (ok, _, err) = cli(&url, "user create-superuser --phone +15550001111 --password password-123");
        assert!(ok, "{err}");
        let (ok, _, _) = cli(&url, "user create-superuser --password password-123");
        assert!(!ok);
        let (ok, out, err) = cli(&url, "migrate");
        assert!(
            ok && out.contains("3 schools: 3 up to date, 0 migrated, 0 failed"),
            "{out}{err}"
        );
    })
    .await
    .expect("cli");
    let login = app.school_login("zeta", "t@zeta.test").await;
    assert_eq!(login["roles"], json!(["teacher"]));
    assert!(login["teacher"]["id"].is_string());
    assert_eq!(login["teacher"]["name"], "Tea");
    app.post(
        "/api/v1/system/auth/login/",
        &As::main(),
        json!({"phone": "+15550001111", "password": "password-123"}),
    )
    .await
    .assert(200, None);

    let url = app.db.url.clone();
    tokio::task::spawn_blocking(move || {
        let (ok, _, err) = cli(&url, "tenant delete --schema zeta");
        assert!(ok, "{err}");
    })
    .await
    .expect("cli");
    // Another process changed the registry: the server's directory hears of it.
    let mut inactive = false;
    for _ in 0..40 {
        if app
            .get("/api/v1/school/auth/me/", &As::school("zeta"))
            .await
            .code()
            == "tenant_inactive"
        {
            inactive = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(
        inactive,
        "the CLI's deactivation reached the running server"
    );
    let url = app.db.url.clone();
    tokio::task::spawn_blocking(move || {
        let (ok, _, err) = cli(&url, "tenant delete --schema zeta --drop-schema");
        assert!(ok, "{err}");
        let (ok, out, _) = cli(&url, "tenant list");
        assert!(ok && !out.contains("zeta"));
    })
    .await
    .expect("cli");
}

#[tokio::test]
async fn serve_refuses_to_start_without_a_secret_outside_development() {
    let out = tokio::task::spawn_blocking(|| {
        Command::new(env!("CARGO_BIN_EXE_school-service"))
            .arg("serve")
            .env_remove("JWT_SECRET")
            .env_remove("APP_ENV")
            .env("BIND_ADDR", "127.0.0.1:0")
            .output()
            .expect("run the binary")
    })
    .await
    .expect("spawn");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("JWT_SECRET"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[tokio::test]
async fn migrate_brings_each_school_to_the_latest_version() {
    let app = spawn_app().await;
    let url = app.db.url.clone();
    let (ok, out, err) = tokio::task::spawn_blocking(move || {
        use diesel::{Connection, RunQueryDsl, connection::SimpleConnection};
        // Put `beta` back at the first school migration.
        let mut conn = diesel::pg::PgConnection::establish(&url).expect("connect");
        diesel::sql_query("SET search_path TO beta")
            .execute(&mut conn)
            .expect("path");
        for statement in [
            include_str!(
                "../../../tenant_migrations/2026-11-28-400001_webhook_signal_once/down.sql"
            ),
            include_str!("../../../tenant_migrations/2026-11-27-400001_report_remarks/down.sql"),
            include_str!("../../../tenant_migrations/2026-11-26-500002_disclosures/down.sql"),
            include_str!("../../../tenant_migrations/2026-11-26-500001_guardians/down.sql"),
            include_str!("../../../tenant_migrations/2026-11-26-400002_webhooks/down.sql"),
            include_str!("../../../tenant_migrations/2026-11-26-400001_events_history/down.sql"),
            include_str!("../../../tenant_migrations/2026-11-26-300001_enrollments/down.sql"),
            include_str!("../../../tenant_migrations/2026-11-26-200001_oneroster/down.sql"),
            include_str!("../../../tenant_migrations/2026-11-24-000002_live_counts/down.sql"),
            include_str!("../../../tenant_migrations/2026-11-24-000001_attendance/down.sql"),
            include_str!("../../../tenant_migrations/2026-11-23-000001_search_trgm/down.sql"),
            "ALTER TABLE beta.academic_sessions DROP CONSTRAINT academic_sessions_deleted_inactive",
            "ALTER TABLE beta.user_role_assignments DROP COLUMN updated_by, DROP COLUMN updated_at",
            "DELETE FROM beta.__diesel_schema_migrations WHERE version > '20261121000001'",
        ] {
            conn.batch_execute(statement).expect(statement);
        }
        let migrated = cli(&url, "migrate");
        let (_, behind, _) = cli(&url, "tenant status --pending");
        assert_eq!(behind, "", "every school is up to date");
        migrated
    })
    .await
    .expect("migrate");
    assert!(ok, "{err}");
    assert!(
        out.contains("2 schools: 1 up to date, 1 migrated, 0 failed"),
        "{out}"
    );
}

/// Operators' commands open what they use and nothing more: listing or exporting a school
/// hashes no password (a bcrypt at cost 22 takes minutes here, so one would show) and
/// loads no directory of every school.
#[tokio::test]
async fn commands_that_create_no_account_hash_no_password() {
    let app = spawn_app().await;
    let url = app.db.url.clone();
    tokio::task::spawn_blocking(move || {
        let out = std::env::temp_dir().join(format!("cli-no-hash-{}.tar.gz", uuid::Uuid::new_v4()));
        let slow = [("BCRYPT_COST", "22")];
        let started = std::time::Instant::now();
        let (ok, listed, err) = crate::helpers::cli(&url, "tenant list", &slow);
        assert!(ok && listed.contains("alpha"), "{err}");
        let export = format!("tenant export --schema alpha --out {}", out.display());
        let (ok, _, err) = crate::helpers::cli(&url, &export, &slow);
        assert!(ok, "{err}");
        let (ok, _, err) =
            crate::helpers::cli(&url, "tenant export --schema nowhere --out -", &slow);
        assert!(
            !ok && err.contains("no school has the schema name 'nowhere'"),
            "{err}"
        );
        let _ = std::fs::remove_file(&out);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the commands took {:?}: a password was hashed",
            started.elapsed()
        );
    })
    .await
    .expect("cli");
}
