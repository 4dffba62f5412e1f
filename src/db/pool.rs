//! The connection pool, and the one place blocking database work is run off the executor.
//!
//! Pooled connections remember which school schema their `search_path` is bound to (see
//! `tenancy::conn`), so a connection that already serves a school costs no extra round trip.

use std::time::Duration;

use actix_web::web;
use diesel::{
    pg::PgConnection,
    r2d2::{ConnectionManager, ManageConnection},
};

use crate::{
    error::{ApiError, ApiResult},
    tenancy::{SchemaName, TenantConn, TenantRef},
};

/// A pooled PostgreSQL connection plus what the pool needs to know about its state.
pub struct PgConn {
    pub(crate) conn: PgConnection,
    /// The schema `search_path` is set to; `None` when unknown or unbound. Only
    /// `TenantConn::bind` writes it.
    pub(crate) bound_schema: Option<SchemaName>,
    /// Set when the connection failed in a way that makes it unusable (server gone), so the
    /// pool discards it instead of handing it out again.
    broken: bool,
}

pub struct Manager {
    inner: ConnectionManager<PgConnection>,
}

impl ManageConnection for Manager {
    type Connection = PgConn;
    type Error = diesel::r2d2::Error;

    fn connect(&self) -> Result<PgConn, Self::Error> {
        Ok(PgConn {
            conn: self.inner.connect()?,
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
    /// Builds the pool without connecting: the server starts even while the database is
    /// down, and answers 503 until it is back.
    pub fn new(database_url: &str, max_size: u32, checkout_timeout: Duration) -> Self {
        let pool = r2d2::Pool::builder()
            .max_size(max_size)
            .min_idle(Some(0))
            .connection_timeout(checkout_timeout)
            // A dead connection is detected when it fails (and then discarded), so the
            // common checkout costs no extra `SELECT 1` round trip.
            .test_on_check_out(false)
            .build_unchecked(Manager {
                inner: ConnectionManager::new(database_url),
            });
        Self { pool }
    }

    pub(crate) fn checkout(&self) -> ApiResult<PooledConn> {
        Ok(self.pool.get()?)
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

    /// Runs `work` on a connection bound to `tenant`'s schema, on the blocking thread pool.
    pub async fn run_in_tenant<T, F>(&self, tenant: TenantRef, work: F) -> ApiResult<T>
    where
        F: FnOnce(&mut TenantConn) -> ApiResult<T> + Send + 'static,
        T: Send + 'static,
    {
        let db = self.clone();
        web::block(move || db.with_tenant(&tenant, work)).await?
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
        F: FnOnce(&mut TenantConn, Option<crate::db::models::User>) -> ApiResult<T>
            + Send
            + 'static,
        T: Send + 'static,
    {
        let db = self.clone();
        web::block(move || {
            let (mut conn, user) = TenantConn::bind_loading_user(db.checkout()?, tenant, user_id)?;
            let result = work(&mut conn, user);
            mark_if_lost(conn.pooled_mut(), &result);
            result
        })
        .await?
    }

    /// The synchronous form of `run_in_tenant`, for the CLI and blocking contexts.
    pub fn with_tenant<T>(
        &self,
        tenant: &TenantRef,
        work: impl FnOnce(&mut TenantConn) -> ApiResult<T>,
    ) -> ApiResult<T> {
        let mut conn = TenantConn::bind(self.checkout()?, tenant.clone())?;
        let result = work(&mut conn);
        mark_if_lost(conn.pooled_mut(), &result);
        result
    }

    /// Runs `work` synchronously on a public connection (CLI, start-up).
    pub fn with_conn<T>(
        &self,
        work: impl FnOnce(&mut PgConnection) -> ApiResult<T>,
    ) -> ApiResult<T> {
        let mut pooled = self.checkout()?;
        let result = work(&mut pooled.conn);
        mark_if_lost(&mut pooled, &result);
        result
    }

    /// Connections currently open and idle, for diagnostics and tests.
    pub fn state(&self) -> r2d2::State {
        self.pool.state()
    }
}

fn mark_if_lost<T>(pooled: &mut PooledConn, result: &ApiResult<T>) {
    if matches!(result, Err(ApiError::ServiceUnavailable)) {
        pooled.broken = true;
    }
}
