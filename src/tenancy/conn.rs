//! `TenantConn`: the only way to get a connection for school queries, and it is always
//! bound to one school's schema.
//!
//! Every query function over school tables takes `&mut TenantConn`, never a bare
//! `PgConnection`, and the only constructors set `search_path` (or check the pooled
//! connection is already set to that schema). So a school query cannot run against another
//! school's schema, or against none.
//!
//! Behind a transaction pooler (`PoolMode::Transaction`) a session-level `SET` would stay
//! on a server connection that the pooler hands to another client next. There the
//! constructors open a transaction and bind with `set_config(.., is_local => true)`, and
//! the binding ends with that transaction in [`TenantConn::finish`] (or on drop): no
//! school query can run outside it.

use diesel::{
    connection::{AnsiTransactionManager, TransactionManager},
    pg::PgConnection,
    prelude::*,
};

use crate::{
    db::{
        Db,
        commit_watch::Handed,
        models::User,
        pool::{PoolMode, PooledConn, Turn, mark_if_lost, set_config},
        schema_public::users,
    },
    error::{ApiError, ApiResult},
    tenancy::{ReadScope, Tenant, TenantRef, numbering, read_scope::Reader},
};

pub struct TenantConn {
    pooled: PooledConn,
    tenant: TenantRef,
    /// Transaction mode: the transaction the binding lives in is still open.
    binding_open: bool,
    /// Who reads: whose records the school layer's reads answer, and what they disclosed
    /// (set at authentication).
    reader: Reader,
    /// Events written in the open transaction, still to number at its commit (and the
    /// next one's `tx_position`).
    unnumbered: i32,
}

impl TenantConn {
    /// Takes `pooled` for `tenant`, not yet bound unless it already is (session mode). In
    /// transaction mode it opens the transaction the binding will live in.
    fn open(mut pooled: PooledConn, tenant: TenantRef) -> ApiResult<Self> {
        let transactional = pooled.mode == PoolMode::Transaction;
        if transactional {
            AnsiTransactionManager::begin_transaction(&mut pooled.conn)?;
        }
        Ok(Self {
            pooled,
            tenant,
            binding_open: transactional,
            reader: Reader::default(),
            unnumbered: 0,
        })
    }

    /// Whether the pooled connection's session is already bound to this school.
    fn already_bound(&self) -> bool {
        !self.binding_open && self.pooled.bound_schema.as_ref() == Some(&self.tenant.schema_name)
    }

    /// `set_config('search_path', ..)`: session-wide in session mode (and remembered by
    /// the pool), local to the binding transaction in transaction mode, where the
    /// statement limit is set with it (session mode set it when the connection opened).
    /// The remembered schema is cleared first, so a failed binding leaves the connection
    /// unbound rather than wrongly marked.
    fn set_path(&mut self) -> ApiResult<()> {
        self.pooled.bound_schema = None;
        let schema = self.tenant.schema_name.quoted();
        let local = self.binding_open;
        if local {
            let timeout = self.pooled.statement_timeout.to_string();
            diesel::select((
                set_config("search_path", schema, true),
                set_config("statement_timeout", timeout, true),
            ))
            .execute(self.pg())?;
        } else {
            diesel::select(set_config("search_path", schema, false)).execute(self.pg())?;
        }
        self.remember_path();
        Ok(())
    }

    fn remember_path(&mut self) {
        if !self.binding_open {
            self.pooled.bound_schema = Some(self.tenant.schema_name.clone());
        }
    }

    /// Binds a pooled connection to `tenant` inside one `REPEATABLE READ, READ ONLY`
    /// transaction, in either pool mode: every query of the unit of work reads the same
    /// moment of the database (public tables included). The binding is local to that
    /// transaction and ends with it in `finish`.
    pub(crate) fn bind_snapshot(mut pooled: PooledConn, tenant: TenantRef) -> ApiResult<Self> {
        AnsiTransactionManager::begin_transaction_sql(
            &mut pooled.conn,
            "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY",
        )?;
        let mut conn = Self {
            pooled,
            tenant,
            binding_open: true,
            reader: Reader::default(),
            unnumbered: 0,
        };
        conn.set_path()?;
        Ok(conn)
    }

    /// Binds a pooled connection to `tenant`. In session mode the setting is made outside
    /// any transaction, so no rollback can undo it, and skipped when the connection is
    /// already bound there. In transaction mode the binding is local to a transaction
    /// opened here.
    pub(crate) fn bind(pooled: PooledConn, tenant: TenantRef) -> ApiResult<Self> {
        let mut conn = Self::open(pooled, tenant)?;
        if !conn.already_bound() {
            conn.set_path()?;
        }
        Ok(conn)
    }

    /// Binds like `bind`, and loads the user `user_id` (from `public.users`) on the way. A
    /// connection that must be rebound sets its search_path inside the user query itself
    /// (`set_config`), so rebinding costs no extra round trip; that query reads only
    /// `public.*`, so it does not depend on the path it changes. Rows in, path set: when no
    /// user matches, `set_config` did not run and runs on its own.
    pub(crate) fn bind_loading_user(
        pooled: PooledConn,
        tenant: TenantRef,
        user_id: uuid::Uuid,
    ) -> ApiResult<(Self, Option<User>)> {
        let mut conn = Self::open(pooled, tenant)?;
        if conn.already_bound() {
            let user = User::find(conn.pg(), user_id)?;
            return Ok((conn, user));
        }
        conn.pooled.bound_schema = None;
        let schema = conn.tenant.schema_name.quoted();
        let local = conn.binding_open;
        let timeout = conn.pooled.statement_timeout.to_string();
        let row: Option<(String, String, User)> = users::table
            .filter(users::id.eq(user_id))
            .select((
                set_config("search_path", schema, local),
                set_config("statement_timeout", timeout, local),
                User::as_select(),
            ))
            .first(conn.pg())
            .optional()?;
        match row {
            Some((_, _, user)) => {
                conn.remember_path();
                Ok((conn, Some(user)))
            }
            None => {
                conn.set_path()?;
                Ok((conn, None))
            }
        }
    }

    /// Ends the unit of work with its result: in transaction mode commits on success
    /// (numbering its events first) and rolls back on failure, which ends the binding. A
    /// connection lost on the way is marked so the pool discards it.
    pub(crate) fn finish<T>(mut self, result: ApiResult<T>) -> ApiResult<T> {
        let result = if self.binding_open {
            self.binding_open = false;
            match result {
                Ok(value) => self.commit_outermost().map(|()| value).map_err(Into::into),
                Err(err) => {
                    self.unnumbered = 0;
                    if AnsiTransactionManager::rollback_transaction(self.pg()).is_err() {
                        self.pooled.broken = true;
                    }
                    Err(err)
                }
            }
        } else {
            // Events are placed only inside a transaction (`place_events`), and the
            // outermost `transaction` numbers them at its commit: none is left here.
            debug_assert_eq!(self.unnumbered, 0, "events left unnumbered");
            result
        };
        mark_if_lost(&mut self.pooled, &result);
        result
    }

    pub fn tenant(&self) -> &Tenant {
        &self.tenant
    }

    /// Whose records this unit of work reads (see `ReadScope`).
    pub fn read_scope(&self) -> &ReadScope {
        &self.reader.scope
    }

    /// Narrows every scoped read of this unit of work (a guardian's request).
    pub fn narrow_reads(&mut self, scope: ReadScope) {
        self.reader.scope = scope;
    }

    /// The reader of this unit of work (scope and disclosures; see `Reader`).
    pub fn reader(&mut self) -> &mut Reader {
        &mut self.reader
    }

    /// The underlying connection, for running diesel queries. Its `search_path` is this
    /// tenant's schema; platform tables are schema-qualified (`public.*`) and work too.
    pub fn pg(&mut self) -> &mut PgConnection {
        &mut self.pooled.conn
    }

    /// Runs `work` in a transaction (a savepoint when one is already open), keeping the
    /// bound connection type, so query functions compose. The outermost one numbers its
    /// events just before its COMMIT (in transaction mode that is `finish`'s).
    pub fn transaction<T, E>(
        &mut self,
        work: impl FnOnce(&mut TenantConn) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<diesel::result::Error>,
    {
        let outermost = self.transaction_depth()? == 0;
        AnsiTransactionManager::begin_transaction(self.pg())?;
        match work(self) {
            Ok(value) if outermost => {
                self.commit_outermost()?;
                Ok(value)
            }
            Ok(value) => {
                AnsiTransactionManager::commit_transaction(self.pg())?;
                Ok(value)
            }
            Err(err) => match AnsiTransactionManager::rollback_transaction(self.pg()) {
                // The original error is the one worth reporting.
                Ok(()) | Err(diesel::result::Error::BrokenTransactionManager) => Err(err),
                Err(rollback_err) => Err(rollback_err.into()),
            },
        }
        .inspect_err(|_| {
            if outermost {
                self.unnumbered = 0;
            }
        })
    }

    /// How many transactions (and savepoints) are open on the connection.
    fn transaction_depth(&mut self) -> diesel::QueryResult<u32> {
        Ok(
            AnsiTransactionManager::transaction_manager_status_mut(self.pg())
                .transaction_depth()?
                .map_or(0, std::num::NonZeroU32::get),
        )
    }

    /// Runs a school write: in the open transaction, or in one of its own when none is
    /// open (a session-mode unit of work that did not open one), so its record and its
    /// events always commit together, numbered.
    pub fn writing<T>(
        &mut self,
        work: impl FnOnce(&mut TenantConn) -> ApiResult<T>,
    ) -> ApiResult<T> {
        match self.transaction_depth()? {
            0 => self.transaction(work),
            _ => work(self),
        }
    }

    /// Places for `count` events about to be written (their `tx_position`s, in order,
    /// from the returned one): the open transaction numbers them at its commit. Refused
    /// outside a transaction: an event committed on its own would never be numbered.
    pub fn place_events(&mut self, count: usize) -> ApiResult<i32> {
        if self.transaction_depth()? == 0 {
            return Err(ApiError::internal(anyhow::anyhow!(
                "events written outside a transaction"
            )));
        }
        let first = self.unnumbered;
        let count = i32::try_from(count).map_err(ApiError::internal)?;
        self.unnumbered = first.checked_add(count).ok_or_else(|| {
            ApiError::internal(anyhow::anyhow!("too many events in one transaction"))
        })?;
        Ok(first)
    }

    /// Commits the outermost transaction; one that wrote events numbers them (and signals
    /// the relays) in the COMMIT's own round trip (`numbering`). On failure the transaction
    /// is ended here too: rolled back, as diesel's own commit does.
    fn commit_outermost(&mut self) -> diesel::QueryResult<()> {
        if self.unnumbered == 0 {
            return AnsiTransactionManager::commit_transaction(self.pg());
        }
        self.unnumbered = 0;
        let committed = numbering::number_signal_and_commit(self.pg());
        if committed.is_ok() {
            self.wake_relay();
        } else if self.transaction_depth().unwrap_or(0) > 0 {
            // A statement before the COMMIT failed: the transaction is still open.
            if AnsiTransactionManager::rollback_transaction(self.pg()).is_err() {
                self.pooled.broken = true;
            }
        }
        committed
    }
}

impl TenantConn {
    /// After a commit that numbered events: a relay of this process delivering for the
    /// school is woken, with the new events read for it here when it asks for them and the
    /// connection's session is still bound to the school (session mode; in transaction
    /// mode the binding ended with the commit). A read that fails is not the write's
    /// failure: the relay then looks itself.
    fn wake_relay(&mut self) {
        let (commits, tenant) = (self.pooled.commits.clone(), self.tenant.clone());
        // Only session mode remembers a binding (`remember_path`), and there it outlives
        // the commit; in transaction mode it ended with the commit.
        let bound = self.pooled.bound_schema.as_ref() == Some(&tenant.schema_name);
        commits.committed(&tenant.schema_name, |after| {
            if !bound {
                return None;
            }
            match numbering::events_after(self, after, HANDED_AT_MOST) {
                Ok(events) => Some(Handed {
                    after,
                    full: i64::try_from(events.len()).unwrap_or(i64::MAX) >= HANDED_AT_MOST,
                    events,
                }),
                Err(err) => {
                    log::warn!(
                        "reading {}'s new events for its relay: {err}",
                        tenant.schema_name
                    );
                    let lost: ApiResult<()> = Err(err.into());
                    mark_if_lost(&mut self.pooled, &lost);
                    None
                }
            }
        });
    }
}

/// Events a writer reads at most for the relay after its commit (the relay asks only
/// when it has caught up, so a few; a full read makes it look itself).
const HANDED_AT_MOST: i64 = 64;

/// The ways to run work on a connection bound to a school.
impl Db {
    /// Runs `work` on a connection bound to `tenant`'s schema, on the connection's lane.
    pub async fn run_in_tenant<T, F>(&self, tenant: TenantRef, work: F) -> ApiResult<T>
    where
        F: FnOnce(&mut TenantConn) -> ApiResult<T> + Send + 'static,
        T: Send + 'static,
    {
        let school = tenant.schema_name.clone();
        self.in_turn(Some(&school), move |db, turn| {
            db.with_tenant_in(Some(turn), &tenant, work)
        })
        .await
    }

    /// Like `run_in_tenant`, loading user `user_id` while binding (see
    /// `TenantConn::bind_loading_user`): the authentication query and the binding share one
    /// round trip.
    pub async fn run_in_tenant_as<T, F>(
        &self,
        tenant: TenantRef,
        user_id: uuid::Uuid,
        work: F,
    ) -> ApiResult<T>
    where
        F: FnOnce(&mut TenantConn, Option<User>) -> ApiResult<T> + Send + 'static,
        T: Send + 'static,
    {
        let school = tenant.schema_name.clone();
        self.in_turn(Some(&school), move |db, turn| {
            let pooled = db.checkout(Some(turn))?;
            let (mut conn, user) = TenantConn::bind_loading_user(pooled, tenant, user_id)?;
            let result = work(&mut conn, user);
            conn.finish(result)
        })
        .await
    }

    /// The synchronous form of `run_in_tenant`, for the CLI and blocking contexts.
    pub fn with_tenant<T>(
        &self,
        tenant: &TenantRef,
        work: impl FnOnce(&mut TenantConn) -> ApiResult<T>,
    ) -> ApiResult<T> {
        self.with_tenant_in(None, tenant, work)
    }

    /// Like `with_tenant`, for work with an error type of its own: `work`'s error ends the
    /// unit of work like any other (rolled back) and is answered as it is.
    pub fn with_tenant_for<T, E: From<ApiError>>(
        &self,
        tenant: &TenantRef,
        work: impl FnOnce(&mut TenantConn) -> Result<T, E>,
    ) -> Result<T, E> {
        let conn = TenantConn::bind(self.checkout(None)?, tenant.clone())?;
        finish_for(conn, work)
    }

    /// Runs `work` on a connection bound to `tenant` inside one `REPEATABLE READ, READ
    /// ONLY` transaction (see `TenantConn::bind_snapshot`): a consistent read of the
    /// whole school, such as an export.
    pub fn with_tenant_snapshot<T, E: From<ApiError>>(
        &self,
        tenant: &TenantRef,
        work: impl FnOnce(&mut TenantConn) -> Result<T, E>,
    ) -> Result<T, E> {
        self.with_tenant_snapshot_in(None, tenant, work)
    }

    /// The asynchronous form of `with_tenant_snapshot`, taking the school's turn first.
    pub async fn run_in_tenant_snapshot<T, F>(&self, tenant: TenantRef, work: F) -> ApiResult<T>
    where
        F: FnOnce(&mut TenantConn) -> ApiResult<T> + Send + 'static,
        T: Send + 'static,
    {
        let school = tenant.schema_name.clone();
        self.in_turn(Some(&school), move |db, turn| {
            db.with_tenant_snapshot_in(Some(turn), &tenant, work)
        })
        .await
    }

    fn with_tenant_snapshot_in<T, E: From<ApiError>>(
        &self,
        turn: Option<&Turn>,
        tenant: &TenantRef,
        work: impl FnOnce(&mut TenantConn) -> Result<T, E>,
    ) -> Result<T, E> {
        let conn = TenantConn::bind_snapshot(self.checkout(turn)?, tenant.clone())?;
        finish_for(conn, work)
    }

    fn with_tenant_in<T>(
        &self,
        turn: Option<&Turn>,
        tenant: &TenantRef,
        work: impl FnOnce(&mut TenantConn) -> ApiResult<T>,
    ) -> ApiResult<T> {
        let mut conn = TenantConn::bind(self.checkout(turn)?, tenant.clone())?;
        let result = work(&mut conn);
        conn.finish(result)
    }
}

/// Runs `work` on `conn` and ends the unit of work with its result. A failed `work` rolls
/// back (a connection that cannot roll back, say one left inside a `COPY`, is discarded by
/// the pool) and its own error is answered.
fn finish_for<T, E: From<ApiError>>(
    mut conn: TenantConn,
    work: impl FnOnce(&mut TenantConn) -> Result<T, E>,
) -> Result<T, E> {
    match work(&mut conn) {
        Ok(value) => Ok(conn.finish(Ok(value))?),
        Err(err) => {
            let failed: ApiResult<()> = Err(ApiError::internal(anyhow::anyhow!("work failed")));
            // The rollback's own outcome is recorded on the connection; `err` is the news.
            let _ = conn.finish(failed);
            Err(err)
        }
    }
}

impl Drop for TenantConn {
    /// A unit of work that never reached `finish` (a panic) must not hand the pool a
    /// connection inside its bound transaction.
    fn drop(&mut self) {
        if self.binding_open
            && AnsiTransactionManager::rollback_transaction(&mut self.pooled.conn).is_err()
        {
            self.pooled.broken = true;
        }
    }
}
