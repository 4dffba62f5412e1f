//! Per-test databases: a template migrated and seeded once per run, cloned for each test
//! (built per test on Citus), dropped when the test ends.

use std::{
    sync::{Arc, OnceLock},
    time::Duration,
};

use diesel::{Connection, RunQueryDsl, pg::PgConnection};
use school_service::{
    auth::{password, roles},
    db::{
        Db,
        migrations::migrate_public,
        models::{NewUser, User},
        pool::PoolMode,
    },
    school::teachers::TeacherView,
    tenancy::{
        SchemaName, Tenant, TenantDirectory, TenantRef,
        provision::{NewTenant, create_tenant},
        school_migrations::build_school_schema_to,
    },
};
use uuid::Uuid;

use super::{PASSWORD, SCHOOLS};

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
