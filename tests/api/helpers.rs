//! Test harness: each test gets its own database, cloned from a template that is migrated
//! and seeded once per run, and its own server on a free port.
//!
//! The template holds two schools, `alpha` (alpha.localhost) and `beta` (beta.localhost),
//! each with an `admin` user (admin role), a `teacher` user (teacher role and profile) and
//! a `norole` user, plus a platform superuser `root@platform.test`, a staff admin
//! `staff@platform.test` and a plain platform user `plain@platform.test`.

use std::{
    sync::{Arc, OnceLock},
    time::Duration,
};

use diesel::{Connection, RunQueryDsl, pg::PgConnection};
use reqwest::{Method, StatusCode};
use school_service::{
    auth::{password, roles},
    config::Config,
    db::{
        Db,
        migrations::migrate_public,
        models::{NewUser, User},
        pool::PoolMode,
    },
    school::teachers::TeacherView,
    startup::Application,
    tenancy::{
        SchemaName, Tenant, TenantDirectory, TenantRef,
        provision::{NewTenant, create_tenant},
        school_migrations::build_school_schema_to,
    },
};
use serde_json::{Value, json};
use uuid::Uuid;

pub const PASSWORD: &str = "password-123";
pub const JWT_SECRET: &str = "integration-test-secret-0123456789abcdef";
pub const SCHOOLS: [&str; 2] = ["alpha", "beta"];

fn server_url() -> String {
    std::env::var("TEST_PG_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into())
}

fn run_id() -> &'static str {
    static RUN_ID: OnceLock<String> = OnceLock::new();
    RUN_ID.get_or_init(|| std::env::var("TEST_RUN_ID").unwrap_or_else(|_| "local".into()))
}

fn admin_conn() -> PgConnection {
    PgConnection::establish(&format!("{}/postgres", server_url())).expect("connect to PostgreSQL")
}

/// Creates the run's template database once (across test processes, under an advisory lock).
fn template() -> String {
    static TEMPLATE: OnceLock<String> = OnceLock::new();
    TEMPLATE
        .get_or_init(|| {
            let name = format!("school_tpl_{}", run_id());
            let mut conn = admin_conn();
            diesel::sql_query("SELECT pg_advisory_lock(471100)")
                .execute(&mut conn)
                .expect("lock");
            let exists = diesel::sql_query(format!(
                "SELECT 1 FROM pg_database WHERE datname = '{name}'"
            ))
            .execute(&mut conn)
            .expect("query")
                == 1;
            if !exists {
                let building = format!("{name}_building");
                diesel::sql_query(format!("DROP DATABASE IF EXISTS {building} WITH (FORCE)"))
                    .execute(&mut conn)
                    .expect("drop");
                diesel::sql_query(format!("CREATE DATABASE {building}"))
                    .execute(&mut conn)
                    .expect("create");
                seed(&format!("{}/{building}", server_url()));
                diesel::sql_query(format!("ALTER DATABASE {building} RENAME TO {name}"))
                    .execute(&mut conn)
                    .expect("rename");
            }
            diesel::sql_query("SELECT pg_advisory_unlock(471100)")
                .execute(&mut conn)
                .expect("unlock");
            name
        })
        .clone()
}

fn seed(url: &str) {
    migrate_public(url, PoolMode::Session).expect("public migrations");
    let db = Db::new(url, 2, Duration::from_secs(10));
    let hash = password::hash(PASSWORD, 4).expect("hash");
    let user = |email: &str, client: Option<Uuid>, superuser: bool, staff: bool| NewUser {
        id: Uuid::new_v4(),
        email: Some(email.to_owned()),
        phone: None,
        password_hash: hash.clone(),
        first_name: email.split('@').next().unwrap_or("").to_owned(),
        last_name: "Test".into(),
        is_superuser: superuser,
        is_staff: staff,
        client_id: client,
    };
    db.with_conn(|conn| {
        User::insert(conn, &user("root@platform.test", None, true, true))?;
        User::insert(conn, &user("staff@platform.test", None, false, true))?;
        User::insert(conn, &user("plain@platform.test", None, false, false))?;
        Ok(())
    })
    .expect("platform users");
    for (index, school) in SCHOOLS.iter().enumerate() {
        let new = NewTenant::parse(
            school,
            &format!("School {}", index + 1),
            &[format!("{school}.localhost")],
        )
        .expect("tenant");
        let row = create_tenant(&db, &new, roles::SEED).expect("provision");
        let directory = TenantDirectory::new(db.clone());
        let tenant = directory.find_schema(school).expect("tenant in directory");
        db.with_tenant(&tenant, |conn| {
            let admin = User::insert(
                conn.pg(),
                &user(&format!("admin@{school}.test"), Some(row.id), false, false),
            )?;
            roles::assign_by_name(conn, admin.id, "admin")?;
            let teacher = User::insert(
                conn.pg(),
                &user(
                    &format!("teacher@{school}.test"),
                    Some(row.id),
                    false,
                    false,
                ),
            )?;
            roles::assign_by_name(conn, teacher.id, "teacher")?;
            TeacherView::create_for_user(
                conn,
                teacher.id,
                &school_service::school::Actor::system(),
            )?;
            User::insert(
                conn.pg(),
                &user(&format!("norole@{school}.test"), Some(row.id), false, false),
            )?;
            Ok(())
        })
        .expect("school users");
    }
}

/// Runs the real binary: `command` split on spaces, with `DATABASE_URL` and `env`.
/// Answers (success, stdout, stderr).
pub fn cli(db_url: &str, command: &str, env: &[(&str, &str)]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_school-service"))
        .args(command.split_whitespace())
        .env("DATABASE_URL", db_url)
        .env("BCRYPT_COST", "4")
        .env("RUST_LOG", "warn")
        .envs(env.iter().copied())
        .output()
        .expect("run the binary");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// The real binary serving on a free port, its log (stderr) read as it comes.
pub struct ServerProcess {
    pub port: u16,
    child: std::process::Child,
    reader: std::io::BufReader<std::process::ChildStderr>,
    log: String,
}

impl ServerProcess {
    /// Starts `school-service serve` on `db_url` with `env`, and waits for its port.
    pub fn start(db_url: &str, env: &[(&str, &str)]) -> Self {
        use std::io::BufRead;
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_school-service"))
            .arg("serve")
            .env("DATABASE_URL", db_url)
            .env("JWT_SECRET", JWT_SECRET)
            .env("BIND_ADDR", "127.0.0.1:0")
            .env("BCRYPT_COST", "4")
            .envs(env.iter().copied())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn server");
        let mut reader = std::io::BufReader::new(child.stderr.take().expect("stderr"));
        let mut log = String::new();
        let port = loop {
            let mut line = String::new();
            assert!(
                reader.read_line(&mut line).expect("read") > 0,
                "server exited: {log}"
            );
            log.push_str(&line);
            if let Some(rest) = line.split("(port ").nth(1) {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                break digits.parse::<u16>().expect("port");
            }
        };
        Self {
            port,
            child,
            reader,
            log,
        }
    }

    /// Stops the server; answers everything it logged.
    pub fn stop(mut self) -> String {
        use std::io::Read;
        let _ = self.child.kill();
        let _ = self.child.wait();
        let mut rest = String::new();
        let _ = self.reader.read_to_string(&mut rest);
        self.log + &rest
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
        })
        .await,
    )
}

/// A JWT of `claims` signed (HS256) with `secret`.
pub fn forge(claims: Value, secret: &str) -> String {
    jsonwebtoken::encode(
        &jsonwebtoken::Header::default(),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()),
    )
    .expect("encode")
}

/// A school schema `schema` built as it stood at tenant migration `version` (an existing
/// school that `migrate` has yet to bring up to date); not registered as a tenant.
pub fn school_at_version(db: &Db, schema: &str, version: &str) -> TenantRef {
    let tenant: TenantRef = Arc::new(Tenant {
        id: Uuid::new_v4(),
        schema_name: SchemaName::parse(schema).expect("name"),
        name: schema.into(),
        is_active: true,
    });
    db.with_conn(|conn| {
        diesel::sql_query(format!("CREATE SCHEMA {schema}")).execute(conn)?;
        Ok(())
    })
    .expect("schema");
    db.with_tenant(&tenant, |conn| {
        conn.transaction(|conn| build_school_schema_to(conn, version))
    })
    .expect("the schema at that version");
    tenant
}

/// A per-test database, dropped when the test ends.
pub struct TestDb {
    pub name: String,
    pub url: String,
}

impl TestDb {
    pub fn new() -> Self {
        let name = format!(
            "school_t_{}_{}",
            run_id(),
            &Uuid::new_v4().simple().to_string()[..12]
        );
        if let Some(workers) = citus_workers() {
            return Self::new_on_citus(name, &workers);
        }
        let template = template();
        let mut conn = admin_conn();
        let mut attempts = 0;
        // Two clones of one template at the same instant can collide; retry briefly.
        while let Err(err) =
            diesel::sql_query(format!("CREATE DATABASE {name} TEMPLATE {template}"))
                .execute(&mut conn)
        {
            attempts += 1;
            assert!(attempts < 50, "cannot clone the template: {err}");
            std::thread::sleep(Duration::from_millis(100));
        }
        let url = format!("{}/{name}", server_url());
        Self { name, url }
    }

    /// An empty database on the same server (another platform, say), dropped like the
    /// others; `school-service migrate` makes it a platform.
    pub fn empty() -> Self {
        let name = format!(
            "school_t_{}_{}",
            run_id(),
            &Uuid::new_v4().simple().to_string()[..12]
        );
        diesel::sql_query(format!("CREATE DATABASE {name}"))
            .execute(&mut admin_conn())
            .expect("create database");
        let url = format!("{}/{name}", server_url());
        Self { name, url }
    }

    /// `make test-citus`: `TEST_PG_URL` is a Citus coordinator and `TEST_CITUS_WORKERS`
    /// its workers. A Citus database cannot be cloned from a template (its maintenance
    /// daemon holds a connection to it), so each test builds and seeds its own: the
    /// database on every node, the extension, the workers registered.
    fn new_on_citus(name: String, workers: &[String]) -> Self {
        let node_url = |host_port: &str| format!("postgres://postgres@{host_port}");
        let coordinator = server_url();
        let coordinator_host = coordinator
            .rsplit('@')
            .next()
            .expect("host:port")
            .to_owned();
        for server in
            std::iter::once(coordinator.clone()).chain(workers.iter().map(|w| node_url(w)))
        {
            let mut conn = PgConnection::establish(&format!("{server}/postgres")).expect("node");
            diesel::sql_query(format!("CREATE DATABASE {name}"))
                .execute(&mut conn)
                .expect("create database");
            let mut db = PgConnection::establish(&format!("{server}/{name}")).expect("node db");
            diesel::sql_query("CREATE EXTENSION citus")
                .execute(&mut db)
                .expect("citus");
        }
        let url = format!("{coordinator}/{name}");
        let mut db = PgConnection::establish(&url).expect("coordinator");
        let (host, port) = coordinator_host.rsplit_once(':').expect("port");
        diesel::sql_query(format!(
            "SELECT citus_set_coordinator_host('{host}', {port})"
        ))
        .execute(&mut db)
        .expect("coordinator host");
        for worker in workers {
            let (host, port) = worker.rsplit_once(':').expect("port");
            // The first databases of a run, made at once, sometimes find a worker not yet
            // taking their connection ("failure on connection marked as essential").
            let mut attempts = 0;
            while let Err(err) =
                diesel::sql_query(format!("SELECT citus_add_node('{host}', {port})"))
                    .execute(&mut db)
            {
                attempts += 1;
                assert!(attempts < 10, "add node: {err}");
                std::thread::sleep(Duration::from_millis(300));
            }
        }
        seed(&url);
        // The schools really are distributed schemas, each placed on a worker.
        let distributed: i64 = diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(
            "(SELECT count(*) FROM citus_schemas)",
        ))
        .get_result(&mut db)
        .expect("citus_schemas");
        assert_eq!(
            distributed,
            SCHOOLS.len() as i64,
            "school schemas distributed"
        );
        Self { name, url }
    }
}

/// The workers of the Citus cluster under test (`TEST_CITUS_WORKERS`), if any.
pub fn citus_workers() -> Option<Vec<String>> {
    let workers = std::env::var("TEST_CITUS_WORKERS").ok()?;
    Some(
        workers
            .split(',')
            .map(str::trim)
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect(),
    )
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let drop = |server: String| {
            if let Ok(mut conn) = PgConnection::establish(&format!("{server}/postgres")) {
                let _ = diesel::sql_query(format!(
                    "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                    self.name
                ))
                .execute(&mut conn);
            }
        };
        drop(server_url());
        for worker in citus_workers().unwrap_or_default() {
            drop(format!("postgres://postgres@{worker}"));
        }
    }
}

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

/// A response, read whole.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl Reply {
    /// The problem `code` of an error answer.
    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or("")
    }

    #[track_caller]
    pub fn assert(&self, status: u16, code: Option<&str>) -> &Self {
        assert_eq!(
            self.status.as_u16(),
            status,
            "unexpected status; body: {}",
            self.body
        );
        if let Some(code) = code {
            assert_eq!(self.code(), code, "unexpected code; body: {}", self.body);
            let content_type = self
                .headers
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            assert_eq!(content_type, "application/problem+json");
        }
        self
    }
}

/// How a request reaches the server: host and credentials.
#[derive(Clone, Default)]
pub struct As {
    pub host: String,
    pub token: Option<String>,
    pub api_key: Option<String>,
    pub x_tenant: Option<String>,
}

impl As {
    pub fn host(host: &str) -> Self {
        Self {
            host: host.into(),
            ..Self::default()
        }
    }
    pub fn school(school: &str) -> Self {
        Self::host(&format!("{school}.localhost"))
    }
    pub fn main() -> Self {
        Self::host("localhost")
    }
    pub fn token(mut self, token: &str) -> Self {
        self.token = Some(token.into());
        self
    }
    pub fn key(mut self, key: &str) -> Self {
        self.api_key = Some(key.into());
        self
    }
    pub fn tenant(mut self, schema: &str) -> Self {
        self.x_tenant = Some(schema.into());
        self
    }
}

impl TestApp {
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        who: &As,
        body: Option<Value>,
    ) -> Reply {
        let mut req = self
            .client
            .request(method, format!("{}{}", self.address, path))
            .header("Host", &who.host);
        if let Some(token) = &who.token {
            req = req.bearer_auth(token);
        }
        if let Some(key) = &who.api_key {
            req = req.header("X-API-KEY", key);
        }
        if let Some(schema) = &who.x_tenant {
            req = req.header("X-Tenant", schema);
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        let res = req.send().await.expect("request");
        Self::read(res).await
    }

    pub async fn read(res: reqwest::Response) -> Reply {
        let status = res.status();
        let headers = res.headers().clone();
        let bytes = res.bytes().await.expect("body");
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or(Value::String(String::from_utf8_lossy(&bytes).into()))
        };
        Reply {
            status,
            headers,
            body,
        }
    }

    pub async fn get(&self, path: &str, who: &As) -> Reply {
        self.request(Method::GET, path, who, None).await
    }
    pub async fn post(&self, path: &str, who: &As, body: Value) -> Reply {
        self.request(Method::POST, path, who, Some(body)).await
    }
    pub async fn patch(&self, path: &str, who: &As, body: Value) -> Reply {
        self.request(Method::PATCH, path, who, Some(body)).await
    }
    pub async fn delete(&self, path: &str, who: &As) -> Reply {
        self.request(Method::DELETE, path, who, None).await
    }

    /// Logs in to a school; answers the whole login body.
    pub async fn school_login(&self, school: &str, identifier: &str) -> Value {
        let reply = self
            .post(
                "/api/v1/school/auth/login/",
                &As::school(school),
                json!({"identifier": identifier, "password": PASSWORD}),
            )
            .await;
        reply.assert(200, None);
        reply.body
    }

    /// An access token of `who@school.test` on `school`.
    pub async fn school_token(&self, school: &str, who: &str) -> String {
        self.school_login(school, &format!("{who}@{school}.test"))
            .await["access"]
            .as_str()
            .expect("access")
            .to_owned()
    }

    /// The path of `user`'s (first) role assignment, read as `admin` of the same school.
    pub async fn role_assignment_of(&self, admin: &As, user: &As) -> String {
        let user_id = self.get("/api/v1/school/auth/me/", user).await.body["user"]["id"].clone();
        let assignments = self
            .get("/api/v1/school/role-assignments/?page_size=200", admin)
            .await;
        let id = assignments.body["results"]
            .as_array()
            .expect("results")
            .iter()
            .find(|a| a["user"] == user_id)
            .expect("the user's assignment")["id"]
            .as_str()
            .expect("id")
            .to_owned();
        format!("/api/v1/school/role-assignments/{id}/")
    }

    /// Logged in as `identifier` (password `PASSWORD`) on `school`'s own address.
    pub async fn as_school_user_at(&self, school: &str, identifier: &str) -> As {
        let login = self.school_login(school, identifier).await;
        As::school(school).token(login["access"].as_str().expect("access"))
    }

    /// Logged in as `who` of `school`, on the school's own address.
    pub async fn as_school_user(&self, school: &str, who: &str) -> As {
        As::school(school).token(&self.school_token(school, who).await)
    }

    pub async fn system_login(&self, identifier: &str) -> Value {
        let reply = self
            .post(
                "/api/v1/system/auth/login/",
                &As::main(),
                json!({"identifier": identifier, "password": PASSWORD}),
            )
            .await;
        reply.assert(200, None);
        reply.body
    }

    pub async fn as_root(&self) -> As {
        As::main().token(
            self.system_login("root@platform.test").await["access"]
                .as_str()
                .expect("access"),
        )
    }

    pub async fn as_staff(&self) -> As {
        As::main().token(
            self.system_login("staff@platform.test").await["access"]
                .as_str()
                .expect("access"),
        )
    }
}

/// An academic session with one exam session, a subject, a class and one exam of them.
pub struct ExamFixture {
    /// `/api/v1/school/sessions/{s}/exam-sessions/`
    pub exam_sessions: String,
    /// `/api/v1/school/sessions/{s}/exam-sessions/{e}/exams/`
    pub exams: String,
    pub exam: String,
    pub subject: Value,
    pub class: Value,
}

impl ExamFixture {
    pub fn marks(&self) -> String {
        format!("{}{}/marks/", self.exams, self.exam)
    }
}

impl TestApp {
    /// Creates an [`ExamFixture`] as `who` (an admin); `tag` keeps names unique.
    pub async fn exam_fixture(&self, who: &As, tag: &str) -> ExamFixture {
        let id = |reply: Reply, key: &str| {
            reply
                .assert(201, None)
                .body
                .pointer(key)
                .and_then(Value::as_str)
                .expect("id")
                .to_owned()
        };
        let session = id(
            self.post(
                "/api/v1/school/sessions/",
                who,
                json!({"name": tag, "start_date": "2026-01-01", "end_date": "2026-12-31"}),
            )
            .await,
            "/data/id",
        );
        let exam_sessions = format!("/api/v1/school/sessions/{session}/exam-sessions/");
        let exam_session = id(
            self.post(&exam_sessions, who, json!({"name": tag, "term": "T1"}))
                .await,
            "/id",
        );
        let subject = self
            .post(
                "/api/v1/school/subjects/",
                who,
                json!({"name": tag, "code": tag}),
            )
            .await
            .body["id"]
            .clone();
        let class = self
            .post("/api/v1/school/classes/", who, json!({"name": tag}))
            .await
            .body["id"]
            .clone();
        let exams = format!("{exam_sessions}{exam_session}/exams/");
        let exam = id(
            self.post(
                &exams,
                who,
                json!({"name": tag, "subject": subject, "academic_class": class}),
            )
            .await,
            "/id",
        );
        ExamFixture {
            exam_sessions,
            exams,
            exam,
            subject,
            class,
        }
    }
}
