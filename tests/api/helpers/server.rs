//! A server in the test process on its own database: the test configuration, `spawn_app`
//! and its variants (another server on the same database, one behind PgBouncer).

use std::{sync::Arc, time::Duration};

use school_service::{
    config::{Config, PoolSizing},
    db::pool::PoolMode,
    startup::Application,
};

use super::{JWT_SECRET, TestDb};

pub struct TestApp {
    pub address: String,
    /// `http://127.0.0.1:<port>` of the `METRICS_ADDR` listener, when configured.
    pub metrics_address: Option<String>,
    pub client: reqwest::Client,
    pub db: Arc<TestDb>,
}

/// The platform key tests sign and check school archives with (`ARCHIVE_SIGNING_KEY`).
pub const ARCHIVE_SIGNING_KEY: &str = "test-archive-signing-key-of-this-platform";

pub fn test_config(db_url: &str) -> Config {
    Config {
        database_url: db_url.into(),
        db_pool_mode: PoolMode::Session,
        database_listen_url: Some(db_url.into()),
        bind_addr: "127.0.0.1:0".parse().expect("addr"),
        main_domains: vec!["localhost".into(), "127.0.0.1".into()],
        jwt_secret: JWT_SECRET.into(),
        insecure_dev_secret: false,
        access_token_ttl: Duration::from_secs(300),
        refresh_token_ttl: Duration::from_secs(3600),
        rotate_refresh_tokens: true,
        bcrypt_cost: 4,
        db_pool_size: 4,
        db_pool_sizing: PoolSizing::Fixed,
        db_pool_timeout: Duration::from_secs(5),
        db_pool_per_school: 2,
        db_statement_timeout: Some(Duration::from_secs(10)),
        max_body_bytes: 1024 * 1024,
        request_header_timeout: Duration::from_secs(5),
        request_body_timeout: Duration::from_secs(10),
        keep_alive: Duration::from_secs(5),
        login_rate_per_minute: 1000,
        school_rate_per_second: None,
        school_rate_burst: None,
        school_rate_max_delay: Duration::from_secs(1),
        school_max_in_flight: Some(2),
        school_alone_after: Duration::from_millis(100),
        cors_allowed_origins: vec!["https://app.example.org".into()],
        public_scheme: "http".into(),
        token_purge_interval: Duration::from_secs(3600),
        metrics_addr: None,
        archive_signing_key: Some(ARCHIVE_SIGNING_KEY.into()),
        db_pool_affinity: Default::default(),
        events: school_service::config::EventSettings::default(),
        import_max_rows: 20_000,
        import_max_bytes: 20 * 1024 * 1024,
    }
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

pub async fn spawn_app_with(adjust: impl FnOnce(&mut Config)) -> TestApp {
    let db = Arc::new(
        tokio::task::spawn_blocking(TestDb::new)
            .await
            .expect("test db"),
    );
    spawn_app_on_with(db, adjust).await
}

/// Another server on an existing test database (a second process, as far as caches go).
pub async fn spawn_app_on(db: Arc<TestDb>) -> TestApp {
    spawn_app_on_with(db, |_| {}).await
}

pub async fn spawn_app_on_with(db: Arc<TestDb>, adjust: impl FnOnce(&mut Config)) -> TestApp {
    let mut config = test_config(&db.url);
    adjust(&mut config);
    let app = Application::build(config).expect("build app");
    let address = format!("http://127.0.0.1:{}", app.port());
    let metrics_address = app
        .metrics_port()
        .map(|port| format!("http://127.0.0.1:{port}"));
    tokio::spawn(app.run_until_stopped());
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    TestApp {
        address,
        metrics_address,
        client,
        db,
    }
}

/// The PgBouncer in transaction pooling mode that `make test` starts (`TEST_PGBOUNCER_URL`,
/// server part only). `None` under a plain `cargo test` without one, where the tests that
/// need it say so and pass; `make test` sets `TEST_REQUIRE_PGBOUNCER`, so there they fail.
pub fn pgbouncer_url() -> Option<String> {
    match std::env::var("TEST_PGBOUNCER_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            assert!(
                std::env::var("TEST_REQUIRE_PGBOUNCER").is_err(),
                "TEST_PGBOUNCER_URL is not set but PgBouncer is required"
            );
            eprintln!("no PgBouncer (TEST_PGBOUNCER_URL unset): `make test` starts one");
            None
        }
    }
}

/// `url` (a database URL on the PostgreSQL server) as reached through PgBouncer.
pub fn through_pgbouncer(bouncer: &str, url: &str) -> String {
    format!(
        "{bouncer}/{}",
        url.rsplit('/').next().expect("database name")
    )
}

/// A server whose pool talks to PgBouncer in transaction mode (8 connections to a pooler
/// that keeps 2 server connections per database); `LISTEN` goes to PostgreSQL directly.
pub async fn spawn_app_through_pgbouncer() -> Option<TestApp> {
    let bouncer = pgbouncer_url()?;
    Some(
        spawn_app_with(move |config| {
            config.database_listen_url = Some(config.database_url.clone());
            config.database_url = through_pgbouncer(&bouncer, config.database_url.expose()).into();
            config.db_pool_mode = PoolMode::Transaction;
            config.db_pool_size = 8;
            // Two server connections behind PgBouncer, with the whole suite on two cores:
            // a school's queue can pass 5 s there. These tests check what reaches each
            // school, not how fast; a wait answered 503 would hide what they look for.
            config.db_pool_timeout = Duration::from_secs(30);
        })
        .await,
    )
}
