//! The connection pool, and the one place blocking database work is run off the executor.
//!
//! Two modes ([`PoolMode`]). In session mode pooled connections remember which school
//! schema their `search_path` is bound to (see `tenancy::conn`), so a connection that
//! already serves a school costs no extra round trip. In transaction mode (behind
//! PgBouncer's transaction pooling) nothing depends on session state: every unit of work is
//! one transaction, a school's bound with `SET LOCAL`, and no named prepared statements.

use std::{
    str::FromStr,
    sync::Arc,
    time::{Duration, Instant},
};

use actix_web::web;
use diesel::{
    Connection,
    connection::CacheSize,
    pg::PgConnection,
    r2d2::{ConnectionManager, ManageConnection},
};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::{
    db::schema_name::SchemaName,
    error::{ApiError, ApiResult},
    observability::metrics,
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
    /// One permit per pooled connection, handed out in arrival order (see [`Turn`]).
    turns: Arc<Semaphore>,
    checkout_timeout: Duration,
}

/// A unit of work's turn at the pool. Async callers take one before they move to a
/// blocking thread: at most as many units of work as there are connections then reach the
/// pool, so none waits in its checkout, where a thread that has just returned a connection
/// can take it again ahead of the threads woken for it (under load that left a few
/// requests waiting up to a second). Waiting happens here instead, in order, on the
/// executor.
pub(crate) struct Turn {
    _permit: OwnedSemaphorePermit,
    /// How long the unit of work waited for its turn.
    queued: Duration,
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
        Self {
            pool,
            turns: Arc::new(Semaphore::new(max_size as usize)),
            checkout_timeout,
        }
    }

    /// Waits (in arrival order, at most the checkout timeout) for a turn at the pool.
    pub(crate) async fn turn(&self) -> ApiResult<Turn> {
        let started = Instant::now();
        let permit =
            tokio::time::timeout(self.checkout_timeout, self.turns.clone().acquire_owned())
                .await
                .ok()
                .and_then(Result::ok);
        match permit {
            Some(permit) => Ok(Turn {
                _permit: permit,
                queued: started.elapsed(),
            }),
            None => {
                metrics::pool_checkout(started.elapsed(), true);
                Err(ApiError::ServiceUnavailable)
            }
        }
    }

    /// A connection from the pool; `turn` is the caller's turn, when it took one (its wait
    /// counts as waiting for the connection).
    pub(crate) fn checkout(&self, turn: Option<&Turn>) -> ApiResult<PooledConn> {
        let started = Instant::now();
        let checked_out = self.pool.get();
        let queued = turn.map_or(Duration::ZERO, |turn| turn.queued);
        metrics::pool_checkout(queued + started.elapsed(), checked_out.is_err());
        Ok(checked_out?)
    }

    /// Runs `job` on the blocking thread pool once this unit of work has its turn at the
    /// pool: how every async caller reaches the database.
    pub(crate) async fn in_turn<T, F>(&self, job: F) -> ApiResult<T>
    where
        F: FnOnce(&Db, &Turn) -> ApiResult<T> + Send + 'static,
        T: Send + 'static,
    {
        let turn = self.turn().await?;
        let db = self.clone();
        web::block(move || job(&db, &turn)).await?
    }

    /// Runs `work` on a pooled connection on the blocking thread pool. Use for platform
    /// (public schema) queries only: the connection is bound to no particular school.
    pub async fn run<T, F>(&self, work: F) -> ApiResult<T>
    where
        F: FnOnce(&mut PgConnection) -> ApiResult<T> + Send + 'static,
        T: Send + 'static,
    {
        self.in_turn(move |db, turn| db.with_conn_in(Some(turn), work))
            .await
    }

    /// Runs `work` synchronously on a public connection (CLI, start-up).
    pub fn with_conn<T>(
        &self,
        work: impl FnOnce(&mut PgConnection) -> ApiResult<T>,
    ) -> ApiResult<T> {
        self.with_conn_in(None, work)
    }

    fn with_conn_in<T>(
        &self,
        turn: Option<&Turn>,
        work: impl FnOnce(&mut PgConnection) -> ApiResult<T>,
    ) -> ApiResult<T> {
        let mut pooled = self.checkout(turn)?;
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::Db;
    use crate::error::ApiError;

    /// No database is needed: the pool connects lazily.
    fn db(size: u32) -> Db {
        Db::new(
            "postgres://nobody@127.0.0.1:1/none",
            size,
            Duration::from_millis(50),
        )
    }

    #[actix_web::test]
    async fn turns_are_as_many_as_connections_and_waiting_ends_in_503() {
        let db = db(2);
        let first = db.turn().await.expect("first turn");
        let _second = db.turn().await.expect("second turn");
        assert!(matches!(db.turn().await, Err(ApiError::ServiceUnavailable)));
        drop(first);
        assert!(
            db.turn().await.is_ok(),
            "a returned turn is handed out again"
        );
    }

    #[actix_web::test]
    async fn turns_are_handed_out_in_arrival_order() {
        let db = db(1);
        let held = db.turn().await.expect("turn");
        let order = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut waiters = Vec::new();
        for n in 0..5 {
            let (db, order) = (db.clone(), order.clone());
            waiters.push(actix_rt::spawn(async move {
                let _turn = db.turn().await.expect("turn");
                order.lock().expect("order").push(n);
            }));
            // Each waiter queues before the next one is spawned.
            actix_rt::task::yield_now().await;
        }
        drop(held);
        for waiter in waiters {
            waiter.await.expect("waiter");
        }
        assert_eq!(*order.lock().expect("order"), vec![0, 1, 2, 3, 4]);
    }
}
