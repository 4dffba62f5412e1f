//! One school's schema version: a new school is created at the current version from the
//! baseline (`TENANT_BASELINE`), an existing one catches up by replaying the migrations it
//! has not applied, all of them in one transaction; and every school's applied versions
//! read in a few queries.

use std::collections::HashMap;

use diesel::{connection::SimpleConnection, pg::PgConnection, prelude::*, sql_types};

use crate::{
    db::{
        migrations::{TENANT_BASELINE, TENANT_MIGRATIONS},
        sql_migrations::{SqlMigration, split_statements},
    },
    error::{ApiError, ApiResult},
    tenancy::{SchemaName, TenantConn},
};

/// diesel's table of applied migrations, as diesel creates it (the baseline has it too).
const CREATE_MIGRATIONS_TABLE: &str = "CREATE TABLE IF NOT EXISTS __diesel_schema_migrations (\
     version VARCHAR(50) PRIMARY KEY NOT NULL, \
     run_on TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP)";

/// Schools' migration tables read in one query: enough to keep a status over 10,000
/// schools at 20 queries, few enough that the query's table locks fit PostgreSQL's lock
/// table (64 per connection by default, shared).
const SCHOOLS_PER_STATUS_QUERY: usize = 500;

/// How a script of DDL reaches the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DdlDelivery {
    /// The whole script as one query: one round trip (PostgreSQL).
    OneQuery,
    /// One statement per query: Citus refuses a multi-statement string on a distributed
    /// schema.
    EachStatement,
}

impl DdlDelivery {
    fn run(self, conn: &mut PgConnection, sql: &str) -> QueryResult<()> {
        match self {
            Self::OneQuery => conn.batch_execute(sql),
            Self::EachStatement => split_statements(sql)
                .into_iter()
                .try_for_each(|statement| conn.batch_execute(statement)),
        }
    }
}

/// Creates the bound school's schema (which must not exist yet) at the current version:
/// the baseline script, the versions it stands for recorded as applied, then any migration
/// newer than the baseline. Runs in the caller's transaction; creates no trigger.
pub fn create_school_schema(conn: &mut TenantConn, delivery: DdlDelivery) -> ApiResult<()> {
    let versions = baseline_versions()?;
    // The `;` after the baseline ends its last statement even if the file did not.
    let script = format!(
        "CREATE SCHEMA {};\n{}\n;\n{}",
        conn.tenant().schema_name.quoted(),
        TENANT_BASELINE.sql,
        record_versions_sql(&versions)
    );
    delivery.run(conn.pg(), &script)?;
    for migration in TENANT_MIGRATIONS.pending(&versions) {
        apply(conn.pg(), migration).map_err(ApiError::internal)?;
    }
    Ok(())
}

/// Tenant migrations that cancel out: 2026-11-22-000001 creates the role triggers and
/// 000003 drops them. A school built to 000003 or later records both without running
/// them, so no trigger is ever created (Citus refuses triggers on distributed tables).
const TRIGGER_PAIR: [&str; 2] = ["20261122000001", "20261122000003"];

/// Builds the bound school's schema, which exists and is empty, up to `version` and no
/// further (restoring an archive made at that version): from the baseline when `version`
/// is the baseline's or later, else by replaying the history. Statement by statement, so
/// it runs on Citus too; in the caller's transaction.
pub fn build_school_schema_to(conn: &mut TenantConn, version: &str) -> ApiResult<()> {
    let baseline = baseline_versions()?;
    let mut recorded: Vec<String> = Vec::new();
    if baseline.last().is_some_and(|last| last.as_str() <= version) {
        let script = format!(
            "{}\n;\n{}",
            TENANT_BASELINE.sql,
            record_versions_sql(&baseline)
        );
        DdlDelivery::EachStatement.run(conn.pg(), &script)?;
        recorded = baseline;
    } else {
        conn.pg().batch_execute(CREATE_MIGRATIONS_TABLE)?;
    }
    let skip_pair = version >= TRIGGER_PAIR[1];
    let wanted: Vec<&SqlMigration> = TENANT_MIGRATIONS
        .pending(&recorded)
        .filter(|m| m.version().as_str() <= version)
        .collect();
    for migration in wanted {
        if skip_pair && TRIGGER_PAIR.contains(&migration.version().as_str()) {
            conn.pg()
                .batch_execute(&record_versions_sql(&[migration.version()]))?;
        } else {
            apply(conn.pg(), migration).map_err(ApiError::internal)?;
        }
    }
    Ok(())
}

fn baseline_versions() -> ApiResult<Vec<String>> {
    TENANT_BASELINE.versions(&TENANT_MIGRATIONS).ok_or_else(|| {
        ApiError::internal(anyhow::anyhow!(
            "TENANT_BASELINE.through ({}) names no tenant migration",
            TENANT_BASELINE.through
        ))
    })
}

/// `INSERT` of applied versions (digits only: derived from folder names at build time).
fn record_versions_sql(versions: &[String]) -> String {
    let rows: Vec<String> = versions.iter().map(|v| format!("('{v}')")).collect();
    format!(
        "INSERT INTO __diesel_schema_migrations (version) VALUES {};",
        rows.join(", ")
    )
}

/// Why a school could not be migrated: the migration that failed (none when the school
/// failed before reaching one) and the database's error. The school is left as it was.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", version.as_deref().unwrap_or("before any migration"))]
pub struct MigrationFailure {
    pub version: Option<String>,
    pub message: String,
}

impl From<diesel::result::Error> for MigrationFailure {
    fn from(err: diesel::result::Error) -> Self {
        Self {
            version: None,
            message: err.to_string(),
        }
    }
}

impl From<ApiError> for MigrationFailure {
    fn from(err: ApiError) -> Self {
        let message = match err {
            // Its own text is only "internal error": the cause is what an operator needs.
            ApiError::Internal(cause) => format!("{cause:#}"),
            other => other.to_string(),
        };
        Self {
            version: None,
            message,
        }
    }
}

/// Runs one migration's statements and records its version.
fn apply(conn: &mut PgConnection, migration: &SqlMigration) -> Result<(), MigrationFailure> {
    let version = migration.version();
    let run = |conn: &mut PgConnection| -> QueryResult<()> {
        for statement in migration.statements() {
            conn.batch_execute(statement)?;
        }
        conn.batch_execute(&record_versions_sql(std::slice::from_ref(&version)))
    };
    run(conn).map_err(|err| MigrationFailure {
        version: Some(version.clone()),
        message: err.to_string(),
    })
}

/// Brings the bound school up to date in one transaction: every migration it has not
/// applied, in order, then the seed (default roles when the school has none, codenames new
/// to the school granted to the default roles: see `SchoolSeed`). On any
/// failure the transaction rolls back, so the school is fully migrated or untouched.
/// Concurrent runs on one school wait for each other (a transaction-scoped advisory lock),
/// and the second finds nothing left to do. Answers the versions applied.
pub fn migrate_school(
    conn: &mut TenantConn,
    seed: SchoolSeed,
) -> Result<Vec<String>, MigrationFailure> {
    let schema = conn.tenant().schema_name.as_str().to_owned();
    conn.transaction(|conn| {
        diesel::sql_query(
            "SELECT pg_advisory_xact_lock(hashtext('school-service migrate'), hashtext($1))",
        )
        .bind::<sql_types::Text, _>(&schema)
        .execute(conn.pg())?;
        conn.pg().batch_execute(CREATE_MIGRATIONS_TABLE)?;
        let applied: Vec<String> =
            diesel::sql_query("SELECT version FROM __diesel_schema_migrations")
                .load::<Version>(conn.pg())?
                .into_iter()
                .map(|row| row.version)
                .collect();
        let mut newly_applied = Vec::new();
        for migration in TENANT_MIGRATIONS.pending(&applied) {
            apply(conn.pg(), migration)?;
            newly_applied.push(migration.version());
        }
        (seed.apply)(conn)?;
        Ok(newly_applied)
    })
}

#[derive(QueryableByName)]
struct Version {
    #[diesel(sql_type = sql_types::Text)]
    version: String,
}

#[derive(QueryableByName)]
struct SchoolVersions {
    #[diesel(sql_type = sql_types::Text)]
    schema_name: String,
    #[diesel(sql_type = sql_types::Nullable<sql_types::Array<sql_types::Text>>)]
    versions: Option<Vec<String>>,
}

/// The versions each school of `schemas` has applied, read from their migration tables
/// with one query per `SCHOOLS_PER_STATUS_QUERY` schools; a school without a migration
/// table has applied none.
pub fn applied_versions(
    conn: &mut PgConnection,
    schemas: &[SchemaName],
) -> QueryResult<HashMap<String, Vec<String>>> {
    read_column_per_school(conn, schemas, "__diesel_schema_migrations", "version")
}

/// The permission codenames each school of `schemas` has recorded as known (granted to its
/// default roles when they were new); a school without the table knows none.
pub fn known_permissions(
    conn: &mut PgConnection,
    schemas: &[SchemaName],
) -> QueryResult<HashMap<String, Vec<String>>> {
    read_column_per_school(conn, schemas, "known_permissions", "codename")
}

/// `column` of `table` in each school of `schemas`, with one query per
/// `SCHOOLS_PER_STATUS_QUERY` schools (names are constants of this module).
fn read_column_per_school(
    conn: &mut PgConnection,
    schemas: &[SchemaName],
    table: &str,
    column: &str,
) -> QueryResult<HashMap<String, Vec<String>>> {
    #[derive(QueryableByName)]
    struct Schema {
        #[diesel(sql_type = sql_types::Text)]
        nspname: String,
    }
    let with_table: std::collections::HashSet<String> = diesel::sql_query(
        "SELECT n.nspname::text AS nspname FROM pg_class c \
         JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE c.relname = $1 AND c.relkind IN ('r', 'p')",
    )
    .bind::<sql_types::Text, _>(table)
    .load::<Schema>(conn)?
    .into_iter()
    .map(|row| row.nspname)
    .collect();
    let mut applied: HashMap<String, Vec<String>> = schemas
        .iter()
        .map(|schema| (schema.as_str().to_owned(), Vec::new()))
        .collect();
    let readable: Vec<&SchemaName> = schemas
        .iter()
        .filter(|schema| with_table.contains(schema.as_str()))
        .collect();
    for chunk in readable.chunks(SCHOOLS_PER_STATUS_QUERY) {
        // Names are validated `SchemaName`s: safe to quote into SQL.
        let query = chunk
            .iter()
            .map(|schema| {
                format!(
                    "SELECT '{}'::text AS schema_name, array_agg({column}::text) AS versions \
                     FROM {}.{table}",
                    schema.as_str(),
                    schema.quoted()
                )
            })
            .collect::<Vec<_>>()
            .join(" UNION ALL ");
        for row in diesel::sql_query(query).load::<SchoolVersions>(conn)? {
            applied.insert(row.schema_name, row.versions.unwrap_or_default());
        }
    }
    Ok(applied)
}

/// The tenant migrations not in `applied`, counted.
pub fn pending_count(applied: &[String]) -> usize {
    TENANT_MIGRATIONS.pending(applied).count()
}

/// What a school's schema gets once its tables exist or are brought up to date: the
/// default roles, and the permission codenames it has not seen yet granted to them. Handed
/// in by the caller (the auth layer), so provisioning and migration do not depend on it.
#[derive(Clone, Copy)]
pub struct SchoolSeed {
    /// Creates the default roles when the school has none; grants each codename new to
    /// the school (not in its `known_permissions`) to the default roles that have it by
    /// default, once, and records it as known. Runs after every migration of a school.
    pub apply: fn(&mut TenantConn) -> ApiResult<()>,
    /// Every codename of the catalogue: a school whose `known_permissions` lacks one is
    /// visited by `migrate` even when no migration is pending.
    pub codenames: fn() -> Vec<String>,
}
