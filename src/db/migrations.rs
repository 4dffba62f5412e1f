//! Embedded migrations: `migrations/` for the public schema, `tenant_migrations/` for every
//! school schema. Each school schema has its own `__diesel_schema_migrations` table (the
//! connection's search_path is that schema), so schools can be at different versions and
//! `migrate` brings each one up to date. New schools start from `TENANT_BASELINE`, the
//! current school schema in one script, instead of replaying the history.

use diesel::prelude::*;
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};

use crate::{
    db::{
        pool::{PoolMode, connect},
        sql_migrations::{SqlMigrations, TenantBaseline, sql_migration},
    },
    error::ApiError,
};

pub const PUBLIC_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations");
/// Every folder of `tenant_migrations/`, in order (a test checks none is missing).
pub const TENANT_MIGRATIONS: SqlMigrations = SqlMigrations(&[
    sql_migration!("2026-11-21-000001_school"),
    sql_migration!("2026-11-22-000001_role_change_notify"),
    sql_migration!("2026-11-22-000002_deleted_session_inactive"),
    sql_migration!("2026-11-22-000003_role_notify_from_app"),
    sql_migration!("2026-11-22-000004_role_assignment_audit"),
    sql_migration!("2026-11-23-000001_search_trgm"),
    sql_migration!("2026-11-24-000001_attendance"),
    sql_migration!("2026-11-24-000002_live_counts"),
    sql_migration!("2026-11-26-200001_oneroster"),
    sql_migration!("2026-11-26-300001_enrollments"),
    sql_migration!("2026-11-26-400001_events_history"),
    sql_migration!("2026-11-26-400002_webhooks"),
    sql_migration!("2026-11-26-500001_guardians"),
    sql_migration!("2026-11-26-500002_disclosures"),
    sql_migration!("2026-11-27-400001_report_remarks"),
    sql_migration!("2026-11-28-400001_webhook_signal_once"),
    sql_migration!("2026-11-29-400001_events_numbered_by_app"),
]);

/// What a new school is created from: `tenant_migrations/baseline.sql`, the schema the
/// migrations above make through `through`. A new migration goes into its folder (for the
/// schools that exist) and into the baseline (for new ones), and `through` moves to it;
/// `tests/api/fleet/baseline.rs` fails until both give the same catalog.
pub const TENANT_BASELINE: TenantBaseline = TenantBaseline {
    sql: include_str!("../../tenant_migrations/baseline.sql"),
    through: "2026-11-29-400001_events_numbered_by_app",
};

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

pub(crate) fn migration_error(err: Box<dyn std::error::Error + Send + Sync>) -> ApiError {
    match err.downcast::<diesel::result::Error>() {
        Ok(db_err) => ApiError::from(*db_err),
        Err(other) => ApiError::internal(anyhow::anyhow!("migration failed: {other}")),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_tenant_migration_folder_is_listed_in_order() {
        let mut folders: Vec<String> =
            std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/tenant_migrations"))
                .expect("tenant_migrations/")
                .filter_map(Result::ok)
                .filter(|entry| entry.path().join("up.sql").exists())
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect();
        folders.sort();
        let listed: Vec<&str> = super::TENANT_MIGRATIONS
            .0
            .iter()
            .map(|m| m.folder())
            .collect();
        assert_eq!(listed, folders);
    }
}
