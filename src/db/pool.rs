//! The connection pool, and the one place blocking database work is run off the executor.
//!
//! Two modes ([`PoolMode`]). In session mode pooled connections remember which school
//! schema their `search_path` is bound to (see `tenancy::conn`), so a connection that
//! already serves a school costs no extra round trip. In transaction mode (behind
//! PgBouncer's transaction pooling) nothing depends on session state: every unit of work is
//! one transaction, a school's bound with `SET LOCAL`, and no named prepared statements.

use std::{str::FromStr, time::Duration};

use actix_web::web;
use diesel::{
    Connection,
    connection::CacheSize,
    pg::PgConnection,
    r2d2::{ConnectionManager, ManageConnection},
};

use crate::{
    db::schema_name::SchemaName,
    error::{ApiError, ApiResult},
};

/// How this server shares database connections (`DB_POOL_MODE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PoolMode {
    /// Talking to PostgreSQL directly (or through a session pooler): connections keep
    /// their `search_path` between requests and prepared statements are cached.
    #[default]
    Session,
    /// Behind a transaction pooler (PgBouncer `pool_mode = transaction`): each unit of work
    /// runs in one transaction that binds its own schema, and statements are unnamed.
    Transaction,
}

impl FromStr for PoolMode {
    type Err = String;

    fn from_str(raw: &str) -> Result<Self, String> {
        match raw.to_ascii_lowercase().as_str() {
            "session" => Ok(Self::Session),
            "transaction" => Ok(Self::Transaction),
            _ => Err(format!(
                "'{raw}' is not a pool mode; use session or transaction"
            )),
        }
    }
}

/// Opens one connection set up for `mode` (outside the pool: migrations, probes).
pub fn connect(database_url: &str, mode: PoolMode) -> diesel::ConnectionResult<PgConnection> {
    Ok(set_up(PgConnection::establish(database_url)?, mode))
}

/// What every connection of `mode` needs, pooled or not.
fn set_up(mut conn: PgConnection, mode: PoolMode) -> PgConnection {
    if mode == PoolMode::Transaction {
        // Named statements would outlive the transaction on a server connection that the
        // pooler hands to someone else next; unnamed ones are parsed and run in one go.
        conn.set_prepared_statement_cache_size(CacheSize::Disabled);
    }
    conn
}

/// Refuses session mode through a transaction pooler, where a session-level `SET
/// search_path` would reach other clients: two connections opened one after the other
/// that share one PostgreSQL backend can only come from such a pooler. When the database
/// cannot be reached the check is skipped (the server starts and answers 503 meanwhile).
pub fn check_pool_mode(database_url: &str, mode: PoolMode) -> anyhow::Result<()> {
    use diesel::{RunQueryDsl, dsl::sql, sql_types::Integer};
    if mode == PoolMode::Transaction {
        return Ok(());
    }
    let backend = |conn: &mut PgConnection| {
        diesel::select(sql::<Integer>("pg_backend_pid()")).get_result::<i32>(conn)
    };
    let probe = || -> anyhow::Result<(i32, i32)> {
        // Probed with unnamed statements: named ones would collide behind such a pooler.
        let mut first = connect(database_url, PoolMode::Transaction)?;
        let first_pid = backend(&mut first)?;
        let mut second = connect(database_url, PoolMode::Transaction)?;
        Ok((first_pid, backend(&mut second)?))
    };
    match probe() {
        Ok((first, second)) if first == second => anyhow::bail!(
            "DATABASE_URL leads through a transaction pooler (two connections shared one \
             PostgreSQL backend): set DB_POOL_MODE=transaction"
        ),
        Ok(_) => Ok(()),
        Err(err) => {
            log::warn!("could not check DB_POOL_MODE against the database: {err}");
            Ok(())
        }
    }
}

/// A pooled PostgreSQL connection plus what the pool needs to know about its state.
pub struct PgConn {
    pub(crate) conn: PgConnection,
    pub(crate) mode: PoolMode,
    /// The schema `search_path` is set to; `None` when unknown or unbound. Only
    /// `TenantConn::bind` writes it.
    pub(crate) bound_schema: Option<SchemaName>,
    /// Set when the connection failed in a way that makes it unusable (server gone), so the
    /// pool discards it instead of handing it out again.
    pub(crate) broken: bool,
}

pub struct Manager {
    inner: ConnectionManager<PgConnection>,
    mode: PoolMode,
}

impl ManageConnection for Manager {
    type Connection = PgConn;
    type Error = diesel::r2d2::Error;

    fn connect(&self) -> Result<PgConn, Self::Error> {
        Ok(PgConn {
            conn: set_up(self.inner.connect()?, self.mode),
            mode: self.mode,
            bound_schema: None,
            broken: false,
        })
    }

    fn is_valid(&self, conn: &mut PgConn) -> Result<(), Self::Error> {
        self.inner.is_valid(&mut conn.conn)
    }

    fn has_broken(&self, conn: &mut PgConn) -> bool {
        conn.broken || self.inner.has_broken(&mut conn.conn)
    }
}

pub type PooledConn = r2d2::PooledConnection<Manager>;

/// The application's handle on the database: clone it freely.
#[derive(Clone)]
pub struct Db {
    pool: r2d2::Pool<Manager>,
}

impl Db {
    /// A session-mode pool (see [`Db::with_mode`]).
    pub fn new(database_url: &str, max_size: u32, checkout_timeout: Duration) -> Self {
        Self::with_mode(database_url, max_size, checkout_timeout, PoolMode::Session)
    }

    /// Builds the pool without connecting: the server starts even while the database is
    /// down, and answers 503 until it is back.
    pub fn with_mode(
        database_url: &str,
        max_size: u32,
        checkout_timeout: Duration,
        mode: PoolMode,
    ) -> Self {
        let pool = r2d2::Pool::builder()
            .max_size(max_size)
            .min_idle(Some(0))
            .connection_timeout(checkout_timeout)
            // A dead connection is detected when it fails (and then discarded), so the
            // common checkout costs no extra `SELECT 1` round trip.
            .test_on_check_out(false)
            .build_unchecked(Manager {
                inner: ConnectionManager::new(database_url),
                mode,
            });
        Self { pool }
    }

    pub(crate) fn checkout(&self) -> ApiResult<PooledConn> {
        let started = std::time::Instant::now();
        let checked_out = self.pool.get();
        crate::observability::metrics::pool_checkout(started.elapsed(), checked_out.is_err());
        Ok(checked_out?)
    }

    /// Runs `work` on a pooled connection on the blocking thread pool. Use for platform
    /// (public schema) queries only: the connection is bound to no particular school.
    pub async fn run<T, F>(&self, work: F) -> ApiResult<T>
    where
        F: FnOnce(&mut PgConnection) -> ApiResult<T> + Send + 'static,
        T: Send + 'static,
    {
        let db = self.clone();
        web::block(move || db.with_conn(work)).await?
    }

    /// Runs `work` synchronously on a public connection (CLI, start-up).
    pub fn with_conn<T>(
        &self,
        work: impl FnOnce(&mut PgConnection) -> ApiResult<T>,
    ) -> ApiResult<T> {
        let mut pooled = self.checkout()?;
        let result = match pooled.mode {
            PoolMode::Session => work(&mut pooled.conn),
            // One transaction, so the work's statements reach one server connection.
            PoolMode::Transaction => pooled.conn.transaction(work),
        };
        mark_if_lost(&mut pooled, &result);
        result
    }

    /// Connections currently open and idle, for diagnostics and tests.
    pub fn state(&self) -> r2d2::State {
        self.pool.state()
    }
}

pub(crate) fn mark_if_lost<T>(pooled: &mut PooledConn, result: &ApiResult<T>) {
    if matches!(result, Err(ApiError::ServiceUnavailable)) {
        pooled.broken = true;
    }
}
