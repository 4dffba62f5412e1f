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

use diesel::{Connection, connection::CacheSize, pg::PgConnection};

use tokio::sync::OwnedSemaphorePermit;

use crate::{
    db::{
        affinity::school_key,
        commit_watch::CommitWatch,
        lanes::{Lanes, Missed},
        recycle::RecycleSettings,
        schema_name::SchemaName,
        slots::{SlotTicket, Slots},
    },
    error::{ApiError, ApiResult},
    fairness::Turns,
    observability::metrics,
};

pub use crate::db::slots::PooledConn;

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

/// How the pool is sized and shared, and how long one statement may run.
#[derive(Clone, Debug)]
pub struct PoolSettings {
    /// Connections in the pool (`DB_POOL_SIZE`).
    pub size: u32,
    /// How long a unit of work waits for its turn and its connection before a 503.
    pub checkout_timeout: Duration,
    pub mode: PoolMode,
    /// At most this many units of work of one school hold connections at once
    /// (`DB_POOL_PER_SCHOOL`); the rest of that school's requests wait for its own turns.
    pub per_school: u32,
    /// `statement_timeout` for every statement (`DB_STATEMENT_TIMEOUT_MS`); `None`: no limit
    /// (the CLI: migrations may take long).
    pub statement_timeout: Option<Duration>,
    /// Which connections each school's work prefers, and when connections are replaced.
    pub affinity: AffinitySettings,
}

/// School affinity and connection recycling (see `db::affinity`, `db::recycle`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AffinitySettings {
    /// Home connections per school (`DB_POOL_HOMES`); 0: none, any connection serves any
    /// school as it comes.
    pub homes: usize,
    /// How long a unit of work whose homes are busy waits for one before it may borrow a
    /// connection that knows its school (`DB_POOL_BORROW_AFTER_MS`;
    /// `affinity::BORROW_AFTER` by default).
    pub borrow_after: Duration,
    /// How long before it may borrow any connection (`DB_POOL_BORROW_ANY_AFTER_MS`; ten
    /// times `borrow_after` by default): the first pass's tail against backends' memory.
    pub borrow_any_after: Duration,
    /// At most this many units of work hold connections at once (`DB_POOL_RUNNING`):
    /// the CPU's share, where the pool's size is the schools' (how many backends share
    /// their catalog entries). `None`: the pool's size.
    pub running: Option<usize>,
    /// Whether the schools are spread over the first connections only at first (`None`:
    /// over all of them from the start).
    pub narrow: Option<Narrow>,
    /// Connections that are nobody's home, where work that waited long for a busy home
    /// borrows first (`DB_POOL_SPILL`; `Dispatcher::with_spill`), part of the pool's size.
    /// `None`: one when the pool follows the schools past the CPU's size
    /// (`Config::fit_pool_to_schools` adds it to the size), else none.
    pub spill: Option<usize>,
    pub recycling: RecycleSettings,
}

/// A pool that spreads the schools over its first `spread` connections (its spill
/// connections among them, which are nobody's home) until their backends
/// would outgrow the memory budget, or their memory cannot be read; then over all of them,
/// once (`Slots::widen`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Narrow {
    pub spread: usize,
    /// The schools the server counted at start: each memory reading is projected from the
    /// schools the backend has served to its share of them (`ConnLife::would_outgrow`).
    pub schools: u64,
}

impl Narrow {
    /// Of the first `spread` connections, those that are homes: all but the first `spill`.
    pub fn home_connections(&self, spill: usize) -> usize {
        self.spread.saturating_sub(spill).max(1)
    }

    /// The schools each home connection of the first `spread` is home to.
    pub fn homes_per_connection(&self, homes: usize, spill: usize) -> usize {
        let schools = usize::try_from(self.schools).unwrap_or(usize::MAX);
        schools.saturating_mul(homes.max(1)) / self.home_connections(spill)
    }
}

impl Default for AffinitySettings {
    /// One home per school: each backend caches about `1 / size` of the schools.
    fn default() -> Self {
        Self {
            homes: 1,
            borrow_after: super::affinity::BORROW_AFTER,
            borrow_any_after: super::affinity::default_borrow_any_after(
                super::affinity::BORROW_AFTER,
            ),
            running: None,
            narrow: None,
            spill: None,
            recycling: RecycleSettings::default(),
        }
    }
}

impl PoolSettings {
    /// A session-mode pool of `size` with no per-school cap and no statement limit.
    pub fn new(size: u32, checkout_timeout: Duration) -> Self {
        Self {
            size,
            checkout_timeout,
            mode: PoolMode::Session,
            per_school: size,
            statement_timeout: None,
            affinity: AffinitySettings::default(),
        }
    }

    /// The value `statement_timeout` is set to (`0`: none).
    fn statement_timeout_setting(&self) -> String {
        self.statement_timeout.map_or_else(
            || "0".to_owned(),
            |limit| format!("{}ms", limit.as_millis()),
        )
    }
}

/// The default share of the pool one school may hold: all of it but one connection, so
/// another school's first request always finds one. A school holds that many only while
/// it is alone on the server (`SCHOOL_ALONE_AFTER_MS`); while others have requests its
/// in-flight cap (`default_in_flight`) is far lower. Half the pool kept a busy school
/// alone queued on its one home (docs/performance.md, "A sixth machine").
pub fn default_per_school(pool_size: u32) -> u32 {
    pool_size.saturating_sub(1).max(1)
}

/// Schools per connection when the pool follows the number of schools
/// (`pool_size_for_schools`).
pub const SCHOOLS_PER_CONNECTION: u64 = 100;

/// The most home connections the number of schools sizes: they, the spill connection
/// (`AffinitySettings::spill`) and a successor being opened, each replaced at the default
/// memory budget (`DB_POOL_MAX_BACKEND_MIB`, 48; measured at most 50 MiB of `Pss_Anon`),
/// stay under 1 GiB together (20 x 50 MiB).
pub const MAX_POOL_FOR_SCHOOLS: u32 = 18;

/// The pool for a server that finds `schools` schools at start and was given no
/// `DB_POOL_SIZE`: one connection per hundred schools, never fewer than `base` (the
/// CPU's size, `2 x cores + 2`) nor more than `MAX_POOL_FOR_SCHOOLS` (unless `base` is).
/// Each backend caches the catalog entries of the schools it serves, 165-220 KiB a
/// school, and never drops them; with one home per school, a hundred schools a
/// connection keep a backend near 30 MiB (docs/performance.md, "Fleet memory").
pub fn pool_size_for_schools(base: u32, schools: u64) -> u32 {
    let wanted = u32::try_from(schools.div_ceil(SCHOOLS_PER_CONNECTION)).unwrap_or(u32::MAX);
    wanted.min(MAX_POOL_FOR_SCHOOLS).max(base)
}

/// The default number of one school's requests in flight while other schools have some
/// (`SCHOOL_MAX_IN_FLIGHT`): a sixth of the pool, rounded up. The default pool being twice
/// the cores plus two, that is about a third of the cores: on two cores, one request. A
/// second one let a school searching without pause double the others' p99 and halve
/// their throughput (docs/performance.md, "Sixth run").
pub fn default_in_flight(pool_size: u32) -> u32 {
    pool_size.div_ceil(6).max(1)
}

/// How many requests a school alone on the server has in flight (`SCHOOL_ALONE_AFTER_MS`):
/// twice its share of the pool, so each connection it holds has its next request waiting
/// while the worker writes out the answer before. With the share itself as the cap, a
/// connection idled for that hand-back after every request (docs/performance.md, "A
/// seventh machine").
pub fn alone_in_flight(per_school: u32) -> u32 {
    per_school.saturating_mul(2)
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
    /// The `statement_timeout` every unit of work runs under (`0`: none). Session mode
    /// sets it once when the connection opens; transaction mode with every binding, local
    /// to the unit of work's transaction.
    pub(crate) statement_timeout: Arc<str>,
    /// Who waits for this process's commits of events (`TenantConn` tells it).
    pub(crate) commits: Arc<CommitWatch>,
}

/// Opens the pool's connections, set up for the pool's mode and statement limit.
pub struct Connector {
    database_url: String,
    mode: PoolMode,
    statement_timeout: Arc<str>,
    commits: Arc<CommitWatch>,
}

impl Connector {
    pub fn connect(&self) -> diesel::ConnectionResult<PgConn> {
        use diesel::RunQueryDsl;
        let mut conn = connect(&self.database_url, self.mode)?;
        if self.mode == PoolMode::Session {
            diesel::sql_query(format!(
                "SET statement_timeout = '{}'",
                self.statement_timeout
            ))
            .execute(&mut conn)
            .map_err(|err| diesel::ConnectionError::BadConnection(err.to_string()))?;
        }
        Ok(PgConn {
            conn,
            mode: self.mode,
            bound_schema: None,
            broken: false,
            statement_timeout: self.statement_timeout.clone(),
            commits: self.commits.clone(),
        })
    }
}

/// The application's handle on the database: clone it freely.
#[derive(Clone)]
pub struct Db {
    /// The connections, one slot each, handed out with school affinity (see [`Turn`] and
    /// `db::affinity`).
    slots: Arc<Slots>,
    /// Each school's own turns, taken before the pool's: a school's units of work first
    /// wait (in arrival order) for one of its `per_school` permits, and only then queue for
    /// the pool. A school whose requests hold connections for long fills its own share and
    /// waits behind itself; the rest of the pool stays free for the other schools.
    school_turns: Arc<Turns<SchemaName>>,
    /// A thread per connection, running the units of work granted its slot.
    lanes: Arc<Lanes>,
    checkout_timeout: Duration,
    /// Schools whose commits of events someone here waits for (`db::commit_watch`).
    commits: Arc<CommitWatch>,
}

/// A unit of work's turn at the pool: the right to one connection slot, chosen for its
/// school (`db::affinity`), held while the work runs on the slot's lane (`db::lanes`).
pub(crate) struct Turn {
    /// The slot, until `checkout` takes the connection in it (which then frees the slot).
    ticket: std::sync::Mutex<Option<SlotTicket>>,
    /// The school's own turn, for work bound to a school.
    _school_permit: Option<OwnedSemaphorePermit>,
    /// The school's hashing key, for work bound to a school.
    school: Option<u64>,
    /// How long the unit of work waited for its turn.
    queued: Duration,
}

/// Connections open and idle now, and how many the schools are spread over.
#[derive(Clone, Copy, Debug)]
pub struct PoolState {
    pub connections: u32,
    pub idle_connections: u32,
    pub spread: u32,
}

impl Db {
    /// A session-mode pool with no per-school cap and no statement limit.
    pub fn new(database_url: &str, max_size: u32, checkout_timeout: Duration) -> Self {
        Self::open(database_url, &PoolSettings::new(max_size, checkout_timeout))
    }

    /// Like [`Db::new`], in `mode`.
    pub fn with_mode(
        database_url: &str,
        max_size: u32,
        checkout_timeout: Duration,
        mode: PoolMode,
    ) -> Self {
        let settings = PoolSettings {
            mode,
            ..PoolSettings::new(max_size, checkout_timeout)
        };
        Self::open(database_url, &settings)
    }

    /// Builds the pool without connecting: the server starts even while the database is
    /// down, and answers 503 until it is back. A dead connection is detected when it
    /// fails (and then discarded), so the common checkout costs no extra round trip.
    pub fn open(database_url: &str, settings: &PoolSettings) -> Self {
        let commits = Arc::new(CommitWatch::default());
        let connector = Connector {
            database_url: database_url.to_owned(),
            mode: settings.mode,
            statement_timeout: settings.statement_timeout_setting().into(),
            commits: commits.clone(),
        };
        let size = settings.size.max(1) as usize;
        Self {
            lanes: Lanes::new(size),
            slots: Slots::new(size, &settings.affinity, connector),
            school_turns: Arc::new(Turns::new(
                settings.per_school.clamp(1, settings.size.max(1)) as usize,
            )),
            checkout_timeout: settings.checkout_timeout,
            commits,
        }
    }

    /// Whom this process's commits of events wake (the relay in `serve`).
    pub fn commit_watch(&self) -> &Arc<CommitWatch> {
        &self.commits
    }

    /// A connection from the pool; `turn` is the caller's turn, when it took one (its wait
    /// counts as waiting for the connection): the connection of the turn's slot. Without
    /// one (or when its slot was already used), this thread waits for any slot.
    pub(crate) fn checkout(&self, turn: Option<&Turn>) -> ApiResult<PooledConn> {
        let started = Instant::now();
        let reserved = turn.and_then(|turn| {
            let mut ticket = turn.ticket.lock().unwrap_or_else(|p| p.into_inner());
            ticket.take()
        });
        let ticket = reserved.or_else(|| self.slots.take_blocking(self.checkout_timeout));
        let queued = turn.map_or(Duration::ZERO, |turn| turn.queued);
        metrics::pool_checkout(queued + started.elapsed(), ticket.is_none());
        let ticket = ticket.ok_or(ApiError::ServiceUnavailable)?;
        self.slots
            .checkout(ticket, turn.and_then(|turn| turn.school))
    }

    /// Runs `job` on a connection's lane (`db::lanes`) once this unit of work has its turn
    /// at the pool (and, for work bound to `school`, first its school's turn, in arrival
    /// order on the executor): how every async caller reaches the database. Waits at most
    /// the checkout timeout in all for both, then answers 503.
    pub(crate) async fn in_turn<T, F>(&self, school: Option<&SchemaName>, job: F) -> ApiResult<T>
    where
        F: FnOnce(&Db, &Turn) -> ApiResult<T> + Send + 'static,
        T: Send + 'static,
    {
        let started = Instant::now();
        let deadline = started + self.checkout_timeout;
        let school_permit = match school {
            Some(school) => {
                let turns = self.school_turns.of(school);
                match tokio::time::timeout_at(deadline.into(), turns.acquire_owned()).await {
                    Ok(Ok(permit)) => Some(permit),
                    _ => return Err(self.missed_turn(started)),
                }
            }
            None => None,
        };
        let key = school.map(school_key);
        let db = self.clone();
        // Work on a lane sees the runtime it came from, as on the blocking pool.
        let runtime = tokio::runtime::Handle::try_current().ok();
        let work = move |ticket| {
            let _runtime = runtime.as_ref().map(tokio::runtime::Handle::enter);
            let turn = Turn {
                ticket: std::sync::Mutex::new(Some(ticket)),
                _school_permit: school_permit,
                school: key,
                queued: started.elapsed(),
            };
            job(&db, &turn)
        };
        match self.lanes.run(&self.slots, key, deadline, work).await {
            Ok(answer) => answer,
            Err(Missed::Timeout) => Err(self.missed_turn(started)),
            Err(Missed::Failed) => Err(ApiError::internal(anyhow::anyhow!(
                "a unit of work failed on its database lane"
            ))),
        }
    }

    /// No turn came within the checkout timeout.
    fn missed_turn(&self, started: Instant) -> ApiError {
        metrics::pool_checkout(started.elapsed(), true);
        ApiError::ServiceUnavailable
    }

    /// Runs `work` on a pooled connection on its lane (`db::lanes`). Use for platform
    /// (public schema) queries only: the connection is bound to no particular school.
    pub async fn run<T, F>(&self, work: F) -> ApiResult<T>
    where
        F: FnOnce(&mut PgConnection) -> ApiResult<T> + Send + 'static,
        T: Send + 'static,
    {
        self.in_turn(None, move |db, turn| db.with_conn_in(Some(turn), work))
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
            // One transaction, so the work's statements reach one server connection; the
            // statement limit is local to it, like everything else set there.
            PoolMode::Transaction => {
                let timeout = pooled.statement_timeout.clone();
                pooled.conn.transaction(|conn| {
                    set_local_statement_timeout(conn, &timeout)?;
                    work(conn)
                })
            }
        };
        mark_if_lost(&mut pooled, &result);
        result
    }

    /// Opens the connections not open yet, one after the other on the pool's recycler
    /// thread, each while it is idle: the first requests then find them open.
    pub fn open_connections(&self) {
        self.slots.open_all();
    }

    /// Connections currently open and idle, for diagnostics and tests.
    pub fn state(&self) -> PoolState {
        let (connections, idle_connections) = self.slots.counts();
        PoolState {
            connections,
            idle_connections,
            spread: u32::try_from(self.slots.spread()).unwrap_or(u32::MAX),
        }
    }

    /// How many distinct schools each open connection has served since it opened.
    pub fn schools_per_connection(&self) -> Vec<usize> {
        self.slots.schools_per_connection()
    }
}

diesel::define_sql_function! {
    /// PostgreSQL `set_config(setting, value, is_local)`.
    fn set_config(setting: diesel::sql_types::Text, value: diesel::sql_types::Text, is_local: diesel::sql_types::Bool) -> diesel::sql_types::Text;
}

fn set_local_statement_timeout(conn: &mut PgConnection, timeout: &str) -> ApiResult<()> {
    use diesel::RunQueryDsl;
    diesel::select(set_config("statement_timeout", timeout, true)).execute(conn)?;
    Ok(())
}

/// What the pool learns from a unit of work's result: a lost connection is discarded, a
/// cancelled statement counted (the connection itself is fine).
pub(crate) fn mark_if_lost<T>(pooled: &mut PooledConn, result: &ApiResult<T>) {
    match result {
        Err(ApiError::ServiceUnavailable) => pooled.broken = true,
        Err(ApiError::DatabaseTimeout) => metrics::statement_timed_out(),
        _ => {}
    }
}

#[cfg(test)]
mod tests;
