//! Embedded migrations: `migrations/` for the public schema, `tenant_migrations/` for every
//! school schema. Each school schema has its own `__diesel_schema_migrations` table (the
//! connection's search_path is that schema), so schools can be at different versions and
//! `migrate` brings each one up to date.

use diesel::prelude::*;
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};

use crate::{
    db::pool::{PoolMode, connect},
    error::ApiError,
    tenancy::TenantConn,
};

pub const PUBLIC_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations");
pub const TENANT_MIGRATIONS: EmbeddedMigrations = embed_migrations!("tenant_migrations");

/// Brings the public schema up to date; returns the versions applied. Uses a connection of
/// its own, and one transaction whose `search_path` is local to it, so no setting outlives
/// it (behind a transaction pooler, a session `SET` would reach other clients).
pub fn migrate_public(database_url: &str, mode: PoolMode) -> Result<Vec<String>, ApiError> {
    let mut conn = connect(database_url, mode)
        .map_err(|err| ApiError::internal(anyhow::anyhow!("cannot connect: {err}")))?;
    conn.transaction(|conn| {
        // Not the server default `"$user", public`: a school schema may be called `postgres`.
        diesel::sql_query("SET LOCAL search_path TO public").execute(conn)?;
        let applied = conn
            .run_pending_migrations(PUBLIC_MIGRATIONS)
            .map_err(migration_error)?;
        Ok(applied.iter().map(ToString::to_string).collect())
    })
}

/// Brings one school schema up to date; returns the versions applied.
pub fn migrate_tenant(conn: &mut TenantConn) -> Result<Vec<String>, ApiError> {
    let applied = conn
        .pg()
        .run_pending_migrations(TENANT_MIGRATIONS)
        .map_err(migration_error)?;
    Ok(applied.iter().map(ToString::to_string).collect())
}

/// Whether a school schema has migrations still to run.
pub fn tenant_has_pending(conn: &mut TenantConn) -> Result<bool, ApiError> {
    conn.pg()
        .has_pending_migration(TENANT_MIGRATIONS)
        .map_err(migration_error)
}

fn migration_error(err: Box<dyn std::error::Error + Send + Sync>) -> ApiError {
    match err.downcast::<diesel::result::Error>() {
        Ok(db_err) => ApiError::from(*db_err),
        Err(other) => ApiError::internal(anyhow::anyhow!("migration failed: {other}")),
    }
}
