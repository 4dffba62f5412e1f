//! `DB_POOL_MODE=transaction` for real: the server and the CLI behind the PgBouncer that
//! `make test` starts (transaction pooling, two server connections per database), where a
//! session setting left on a server connection would reach the next client at once.

use std::{sync::Arc, time::Duration};

use diesel::{RunQueryDsl, dsl::sql, sql_types::Text};
use futures_util::future::join_all;
use school_service::{
    db::{Db, pool::PoolMode},
    error::ApiResult,
    tenancy::TenantDirectory,
};
use serde_json::{Value, json};

use crate::helpers::{
    As, NewClass, NewRecord, NewSession, NewStudent, NewTenant, NewUser, PASSWORD, SCHOOL_AUTH,
    TestApp, TestDb, cli, pgbouncer_url, spawn_app_through_pgbouncer, text, through_pgbouncer,
};

/// The names of the classes `who` can list (all pages).
async fn class_names(app: &TestApp, who: &As) -> Vec<String> {
    let reply = app.get("/api/v1/school/classes/?page_size=200", who).await;
    reply.assert(200, None);
    reply.body["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|c| c["name"].as_str().expect("name").to_owned())
        .collect()
}

#[tokio::test]
async fn two_schools_interleaved_with_failing_writes_stay_apart() {
    let Some(app) = spawn_app_through_pgbouncer().await else {
        return;
    };
    let schools = [
        ("alpha", app.as_school_user("alpha", "admin").await),
        ("beta", app.as_school_user("beta", "admin").await),
    ];
    let requests = (0..160).map(|i| {
        let (school, who) = &schools[i % 2];
        let app = &app;
        async move {
            let classes = "/api/v1/school/classes/";
            match (i / 2) % 8 {
                // A new class of this school.
                0 | 1 => vec![
                    app.post(classes, who, json!({"name": format!("{school}-{i}")}))
                        .await,
                ],
                // A duplicate: the insert fails in the database and is rolled back.
                2 => vec![
                    app.post(classes, who, json!({"name": format!("{school}-dup")}))
                        .await,
                    app.post(classes, who, json!({"name": format!("{school}-dup")}))
                        .await,
                ],
                // A reference to the other school's record, and a bad value.
                3 => {
                    vec![
                        NewStudent::new(&format!("{school}-{i}"), "A", "B")
                            .in_class(&uuid::Uuid::new_v4().to_string())
                            .post(app, who)
                            .await,
                        app.post(
                            classes,
                            who,
                            json!({"name": format!("{school}-x"), "level": 1000}),
                        )
                        .await,
                    ]
                }
                // Reads.
                4 | 5 => vec![app.get(classes, who).await],
                _ => vec![app.get("/api/v1/school/auth/me/", who).await],
            }
        }
    });
    let replies: Vec<_> = join_all(requests).await.into_iter().flatten().collect();
    let server_errors: Vec<_> = replies
        .iter()
        .filter(|r| r.status.is_server_error())
        .collect();
    assert!(server_errors.is_empty(), "5xx answers: {server_errors:?}");
    for reply in &replies {
        assert!(
            matches!(reply.status.as_u16(), 200 | 201 | 400 | 409),
            "unexpected {reply:?}"
        );
    }
    for (school, who) in &schools {
        let names = class_names(&app, who).await;
        let own = |n: &&String| n.starts_with(&format!("{school}-"));
        assert!(names.iter().all(|n| own(&n)), "{school} sees {names:?}");
        // 20 new classes each, plus one of each duplicate pair.
        assert_eq!(names.len(), 21, "{school}: {names:?}");
        let me = app.get("/api/v1/school/auth/me/", who).await;
        assert_eq!(me.body["tenant"]["schema_name"], *school);
    }
}

#[tokio::test]
async fn no_binding_outlives_its_unit_of_work() {
    let Some(bouncer) = pgbouncer_url() else {
        return;
    };
    let db = tokio::task::spawn_blocking(TestDb::new).await.expect("db");
    let url = through_pgbouncer(&bouncer, &db.url);
    tokio::task::spawn_blocking(move || {
        let pool = Db::with_mode(&url, 4, Duration::from_secs(5), PoolMode::Transaction);
        let directory = Arc::new(TenantDirectory::new(pool.clone()));
        let alpha = directory.find_schema("alpha").expect("alpha");
        let beta = directory.find_schema("beta").expect("beta");
        let path = |conn: &mut diesel::PgConnection| -> ApiResult<String> {
            Ok(diesel::select(sql::<Text>("current_setting('search_path')")).get_result(conn)?)
        };
        for round in 0..40 {
            let tenant = if round % 2 == 0 { &alpha } else { &beta };
            let bound = pool
                .with_tenant(tenant, |conn| path(conn.pg()))
                .expect("bound");
            assert_eq!(bound, tenant.schema_name.quoted());
            // A failed unit of work rolls back, binding included.
            let failed: ApiResult<()> = pool.with_tenant(tenant, |conn| {
                diesel::sql_query("SELECT * FROM no_such_table").execute(conn.pg())?;
                Ok(())
            });
            assert!(failed.is_err());
            // Whatever server connection the pooler hands out next carries no school.
            let public = pool.with_conn(path).expect("public");
            assert!(
                !public.contains("alpha") && !public.contains("beta"),
                "a binding leaked: {public}"
            );
        }
    })
    .await
    .expect("blocking");
}

#[tokio::test]
async fn auth_sessions_and_marks_flows_work_through_the_pooler() {
    let Some(app) = spawn_app_through_pgbouncer().await else {
        return;
    };
    let alpha = As::school("alpha");
    // Auth: login, me, refresh with rotation, reuse refused, logout.
    let login = app.school_login("alpha", "admin@alpha.test").await;
    let admin = alpha
        .clone()
        .token(login["access"].as_str().expect("access"));
    app.get("/api/v1/school/auth/me/", &admin)
        .await
        .assert(200, None);
    let refresh = json!({"refresh": login["refresh"]});
    let rotated = app
        .post("/api/v1/school/auth/refresh/", &alpha, refresh.clone())
        .await;
    rotated.assert(200, None);
    app.post("/api/v1/school/auth/refresh/", &alpha, refresh)
        .await
        .assert(401, Some("token_not_valid"));
    app.logout(SCHOOL_AUTH, &admin, &rotated.body["refresh"])
        .await
        .assert(204, None);
    // Sessions: concurrent creates leave one active.
    let names: Vec<String> = (0..8).map(|i| format!("S{i}")).collect();
    let sessions: Vec<_> = (names.iter())
        .map(|name| NewSession::new(name, "2026-01-01", "2026-12-31"))
        .collect();
    let creates = sessions.iter().map(|session| session.post(&app, &admin));
    for reply in join_all(creates).await {
        reply.assert(201, None);
    }
    let sessions = app
        .get("/api/v1/school/sessions/?page_size=200", &admin)
        .await;
    let active = sessions.body["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|s| s["is_active"] == true)
        .count();
    assert_eq!(active, 1);
    // Marks: concurrent confirm-students for one student make one live mark.
    let fixture = app.exam_fixture(&admin, "pgb").await;
    NewStudent::new("ADM-1", "Ada", "L")
        .post(&app, &admin)
        .await
        .assert(201, None);
    let confirm = format!("{}confirm-students/", fixture.marks());
    let confirms = (0..8).map(|i| {
        app.post(
            &confirm,
            &admin,
            json!({"studentadmissionnumber": "ADM-1", "mark": 50 + i}),
        )
    });
    for reply in join_all(confirms).await {
        reply.assert(200, None);
    }
    let marks = app.get(&fixture.marks(), &admin).await;
    assert_eq!(marks.body["count"], 1);
    // A role taken away takes effect on the next request (the cache hears of it through
    // LISTEN on the direct connection).
    let teacher = app.as_school_user("alpha", "teacher").await;
    app.get("/api/v1/school/classes/", &teacher)
        .await
        .assert(200, None);
    let assignment = app.role_assignment_of(&admin, &teacher).await;
    app.delete(&assignment, &admin).await.assert(204, None);
    app.get("/api/v1/school/classes/", &teacher)
        .await
        .assert(403, Some("permission_denied"));
    // Provisioning through the pooler: a school created by the system API works at once.
    let root = app.as_root().await;
    let gamma = NewTenant {
        schema_name: "gamma",
        name: "Gamma",
        domains: &["gamma.localhost"],
    }
    .post(&app, &root)
    .await;
    gamma.assert(201, None);
    let gamma: Value = gamma.body;
    NewUser {
        email: Some("head@gamma.test"),
        password: PASSWORD,
        client: Some(text(&gamma["id"])),
        roles: Some(&["admin"]),
        ..Default::default()
    }
    .post(&app, &root)
    .await
    .assert(201, None);
    let head = app.as_school_user_at("gamma", "head@gamma.test").await;
    NewClass::named("G1")
        .post(&app, &head)
        .await
        .assert(201, None);
}

#[tokio::test]
async fn the_command_line_works_through_the_pooler_and_session_mode_is_refused() {
    let Some(bouncer) = pgbouncer_url() else {
        return;
    };
    let db = tokio::task::spawn_blocking(TestDb::new).await.expect("db");
    let url = through_pgbouncer(&bouncer, &db.url);
    tokio::task::spawn_blocking(move || {
        let transaction = [("DB_POOL_MODE", "transaction")];
        for command in [
            "migrate",
            "tenant create --schema delta --name Delta --domain delta.localhost",
            "user create --tenant delta --email t@delta.test --password password-123 --role teacher --teacher",
            "migrate",
            "tenant list",
            "tenant delete --schema delta --drop-schema",
        ] {
            let (ok, _, err) = cli(&url, command, &transaction);
            assert!(ok, "{command}: {err}");
        }
        // Session mode through a transaction pooler is a clear one-line error, not a leak.
        let (ok, _, err) = cli(&url, "tenant list", &[]);
        assert!(!ok, "session mode through the pooler must be refused");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains("DB_POOL_MODE=transaction"), "{err}");
        let (ok, _, err) = cli(&url, "tenant list", &[("DB_POOL_MODE", "bogus")]);
        assert!(!ok);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains("DB_POOL_MODE"), "{err}");
        // Transaction mode needs a direct connection for LISTEN.
        let (ok, _, err) = cli(
            &url,
            "serve",
            &[("DB_POOL_MODE", "transaction"), ("APP_ENV", "development"), ("BIND_ADDR", "127.0.0.1:0")],
        );
        assert!(!ok);
        assert!(err.contains("DATABASE_LISTEN_URL"), "{err}");
    })
    .await
    .expect("blocking");
}
