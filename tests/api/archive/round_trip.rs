//! A school exported, dropped and imported answers exactly as before, here and on another
//! platform; the export endpoint streams the same archive.

use std::{collections::BTreeMap, sync::Arc};

use serde_json::Value;

use super::{ALPHA_LOGINS, assert_same_answers, cli_ok, export, fill_school, scratch, walk};
use crate::helpers::{As, PASSWORD, TestApp, TestDb, spawn_app, spawn_app_on};

/// Alpha filled with one of everything: its API key, its id, and every answer of the
/// school API as its admin reads it.
async fn filled_and_read(app: &TestApp) -> (String, String, BTreeMap<String, Value>) {
    let key = fill_school(app).await;
    let root = app.as_root().await;
    let tenant_id = app.tenant_id(&root, "alpha").await;
    let admin = app.as_school_user("alpha", "admin").await;
    let before = walk(app, &admin, &root, &tenant_id).await;
    (key, tenant_id, before)
}

/// The restored alpha on `app` answers as `before`: every user signs in, the walk reads
/// the same, and the school's API key still works.
async fn answers_as_before(
    app: &TestApp,
    before: &BTreeMap<String, Value>,
    tenant_id: &str,
    key: &str,
) {
    for login in ALPHA_LOGINS {
        app.school_login("alpha", login).await;
    }
    let admin = app.as_school_user("alpha", "admin").await;
    let after = walk(app, &admin, &app.as_root().await, tenant_id).await;
    assert_same_answers(before, &after);
    app.get("/api/v1/school/subjects/", &As::school("alpha").key(key))
        .await
        .assert(200, None);
}

#[tokio::test]
async fn a_school_comes_back_exactly_after_export_drop_and_import() {
    let app = spawn_app().await;
    let (key, tenant_id, before) = filled_and_read(&app).await;
    assert!(before.len() > 30, "the walk reads the whole school API");

    let db = app.db.url.clone();
    let archive = export(&db, "alpha", "");
    cli_ok(&db, "tenant delete --schema alpha --drop-schema");
    let out = cli_ok(&db, &format!("tenant import --file {}", archive.display()));
    assert!(
        out.contains("as schema alpha (domains: alpha.localhost)")
            && out.contains("5 users, 1 API keys"),
        "{out}"
    );

    // A server with nothing cached from before.
    let after_app = spawn_app_on(app.db.clone()).await;
    answers_as_before(&after_app, &before, &tenant_id, &key).await;
    std::fs::remove_file(archive).ok();
}

#[tokio::test]
async fn an_uncompressed_archive_on_standard_output_restores_under_new_names() {
    let app = spawn_app().await;
    let db = app.db.url.clone();
    let root = app.as_root().await;
    let tenant_id = app.tenant_id(&root, "alpha").await;
    let admin = app.as_school_user("alpha", "admin").await;
    let before = walk(&app, &admin, &root, &tenant_id).await;
    // A plain tar of text files is UTF-8 through and through.
    let tar = cli_ok(&db, "tenant export --schema alpha --out - --no-compress");
    assert!(tar.contains("manifest.json") && tar.contains("admin@alpha.test"));
    let path = scratch("alpha.tar");
    std::fs::write(&path, tar).expect("write");
    cli_ok(&db, "tenant delete --schema alpha --drop-schema");
    let out = cli_ok(
        &db,
        &format!(
            "tenant import --file {} --schema gamma --domain gamma.localhost --domain www.gamma.localhost",
            path.display()
        ),
    );
    assert!(
        out.contains("as schema gamma (domains: gamma.localhost, www.gamma.localhost)"),
        "{out}"
    );
    let after_app = spawn_app_on(app.db.clone()).await;
    let login = after_app.school_login("gamma", "admin@alpha.test").await;
    let admin = As::school("gamma").token(login["access"].as_str().expect("access"));
    let classes = "/api/v1/school/classes/?page_size=200&include_deleted=true";
    assert_eq!(
        after_app.get(classes, &admin).await.body,
        before[classes],
        "the same records under the new schema and domain"
    );
    let record = after_app
        .get(
            &format!("/api/v1/system/tenants/{tenant_id}/"),
            &after_app.as_root().await,
        )
        .await;
    assert_eq!(record.body["schema_name"], "gamma");
    assert_eq!(record.body["domains"][0]["domain"], "gamma.localhost");
    assert_eq!(record.body["domains"][0]["is_primary"], true);
    std::fs::remove_file(path).ok();
}

#[tokio::test]
async fn the_downloaded_archive_restores_the_school_on_another_platform() {
    let app = spawn_app().await;
    let (key, tenant_id, before) = filled_and_read(&app).await;
    let root = app.as_root().await;

    let url = format!("{}/api/v1/system/tenants/{tenant_id}/export/", app.address);
    let res = app
        .client
        .get(&url)
        .header("Host", "localhost")
        .bearer_auth(root.token.as_deref().expect("token"))
        .send()
        .await
        .expect("download");
    assert_eq!(res.status().as_u16(), 200);
    let header = |name: &str| {
        res.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    assert_eq!(header("content-type"), "application/octet-stream");
    let disposition = header("content-disposition");
    assert!(
        disposition.starts_with("attachment; filename=\"alpha-")
            && disposition.ends_with(".tar.gz\""),
        "{disposition}"
    );
    let bytes = res.bytes().await.expect("body");
    assert_eq!(&bytes[..2], &[0x1f, 0x8b], "gzip");
    let path = scratch("download.tar.gz");
    std::fs::write(&path, &bytes).expect("write");

    let other = Arc::new(
        tokio::task::spawn_blocking(TestDb::empty)
            .await
            .expect("db"),
    );
    cli_ok(&other.url, "migrate");
    cli_ok(
        &other.url,
        &format!("user create-superuser --email root@platform.test --password {PASSWORD}"),
    );
    cli_ok(
        &other.url,
        &format!("tenant import --file {}", path.display()),
    );
    let there = spawn_app_on(other.clone()).await;
    answers_as_before(&there, &before, &tenant_id, &key).await;
    std::fs::remove_file(path).ok();
}

#[tokio::test]
async fn only_superusers_export_and_bad_ids_are_problems() {
    let app = spawn_app().await;
    let root = app.as_root().await;
    let tenant_id = app.tenant_id(&root, "alpha").await;
    let path = format!("/api/v1/system/tenants/{tenant_id}/export/");
    app.get(&path, &As::main())
        .await
        .assert(401, Some("not_authenticated"));
    app.get(&path, &app.as_staff().await)
        .await
        .assert(403, Some("permission_denied"));
    let school_admin = app.as_school_user("alpha", "admin").await;
    app.get(
        &path,
        &As::main().token(school_admin.token.as_deref().expect("token")),
    )
    .await
    .assert(401, Some("token_not_valid"));
    app.get(
        &format!("/api/v1/system/tenants/{}/export/", uuid::Uuid::new_v4()),
        &root,
    )
    .await
    .assert(404, Some("not_found"));
    app.get("/api/v1/system/tenants/nope/export/", &root)
        .await
        .assert(400, Some("invalid_id"));
}

#[tokio::test]
async fn export_and_import_work_behind_a_transaction_pooler() {
    let Some(app) = crate::helpers::spawn_app_through_pgbouncer().await else {
        return;
    };
    let bouncer = crate::helpers::pgbouncer_url().expect("pgbouncer");
    let pooled = crate::helpers::through_pgbouncer(&bouncer, &app.db.url);
    let env = [("DB_POOL_MODE", "transaction"), super::SIGNED[0]];
    let root = app.as_root().await;
    let tenant_id = app.tenant_id(&root, "alpha").await;
    let admin = app.as_school_user("alpha", "admin").await;
    let classes = "/api/v1/school/classes/?page_size=200&include_deleted=true";
    app.post(
        "/api/v1/school/classes/",
        &admin,
        serde_json::json!({"name": "Pooled"}),
    )
    .await
    .assert(201, None);
    let before = app.get(classes, &admin).await.body;

    // The server streams the archive from a snapshot taken through the pooler.
    let res = app
        .client
        .get(format!(
            "{}/api/v1/system/tenants/{tenant_id}/export/",
            app.address
        ))
        .header("Host", "localhost")
        .bearer_auth(root.token.as_deref().expect("token"))
        .send()
        .await
        .expect("download");
    assert_eq!(res.status().as_u16(), 200);
    let downloaded = scratch("pooled.tar.gz");
    std::fs::write(&downloaded, res.bytes().await.expect("body")).expect("write");
    // And the CLI exports, drops and imports through it.
    let exported = scratch("pooled-cli.tar.gz");
    let run = |command: String| {
        let (ok, out, err) = crate::helpers::cli(&pooled, &command, &env);
        assert!(ok, "`{command}` failed: {err}");
        out
    };
    run(format!(
        "tenant export --schema alpha --out {}",
        exported.display()
    ));
    run("tenant delete --schema alpha --drop-schema".into());
    run(format!("tenant import --file {}", exported.display()));
    let after_app = spawn_app_on(app.db.clone()).await;
    let admin = after_app.as_school_user("alpha", "admin").await;
    assert_eq!(after_app.get(classes, &admin).await.body, before);
    run("tenant delete --schema alpha --drop-schema".into());
    run(format!("tenant import --file {}", downloaded.display()));
    let admin = spawn_app_on(app.db.clone()).await;
    let who = admin.as_school_user("alpha", "admin").await;
    assert_eq!(admin.get(classes, &who).await.body, before);
    std::fs::remove_file(downloaded).ok();
    std::fs::remove_file(exported).ok();
}
