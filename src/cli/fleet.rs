//! Commands over every school's schema version: `migrate` and `tenant status`.

use std::{
    io::{IsTerminal, Write},
    sync::atomic::{AtomicUsize, Ordering},
    time::Duration,
};

use clap::Args;

use super::ops::blocking;
use crate::{
    config::Config,
    db::{Db, migrations::migrate_public},
    error::ApiError,
    tenancy::{
        SchemaName, TenantRef,
        fleet::{FleetOptions, migrate_schools},
        provision,
        school_migrations::{applied_versions, pending_count},
    },
};

#[derive(Args, Debug)]
pub struct MigrateArgs {
    /// Schools migrated at the same time, each on its own connection.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    jobs: u32,
    /// Migrate only this school (repeatable).
    #[arg(long = "schema")]
    schemas: Vec<String>,
    /// Migrate N schools first; if any of them fails, stop before the rest.
    #[arg(long, value_name = "N", default_value_t = 0)]
    canary: usize,
}

/// A pool of exactly `jobs` connections: a fleet command opens no more than that (plus the
/// public migration's own connection, closed before the schools start).
fn fleet_db(config: &Config, jobs: u32) -> Db {
    Db::with_mode(
        config.database_url.expose(),
        jobs,
        config.db_pool_timeout.max(Duration::from_secs(30)),
        config.db_pool_mode,
    )
}

/// The schools named by `--schema` (all of them when none is), in schema-name order.
fn select_schools(db: &Db, names: &[String]) -> anyhow::Result<Vec<TenantRef>> {
    let all = provision::all_tenants(db)?;
    if names.is_empty() {
        return Ok(all);
    }
    let unknown: Vec<&str> = names
        .iter()
        .filter(|name| !all.iter().any(|t| t.schema_name.as_str() == name.as_str()))
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        anyhow::bail!("no school has schema {}", unknown.join(", "));
    }
    Ok(all
        .into_iter()
        .filter(|t| names.iter().any(|name| t.schema_name.as_str() == name))
        .collect())
}

/// `migrate`: the public schema, then the schools (see `tenancy::fleet`). Prints one line
/// per failed school and a summary; fails (exit 1) when any school failed.
pub(super) async fn migrate(config: &Config, args: MigrateArgs) -> anyhow::Result<()> {
    let (url, mode) = (config.database_url.expose().to_owned(), config.db_pool_mode);
    let applied = blocking(move || migrate_public(&url, mode)).await?;
    println!("public schema: {} migration(s) applied", applied.len());
    let db = fleet_db(config, args.jobs);
    let options = FleetOptions {
        jobs: args.jobs as usize,
        canary: args.canary,
    };
    let report = blocking(move || {
        let schools = select_schools(&db, &args.schemas).map_err(ApiError::internal)?;
        let done = AtomicUsize::new(0);
        let show_progress = std::io::stderr().is_terminal();
        let on_done = || {
            let done = done.fetch_add(1, Ordering::Relaxed) + 1;
            if show_progress {
                eprint!("\rmigrating schools: {done} done");
            }
        };
        let report = migrate_schools(&db, &schools, options, crate::auth::roles::SEED, &on_done);
        if show_progress && done.load(Ordering::Relaxed) > 0 {
            eprintln!();
        }
        report
    })
    .await?;
    for (schema, failure) in report.failures() {
        let version = failure.version.as_deref().unwrap_or("-");
        println!("failed: {schema} at {version}: {}", failure.message);
    }
    println!("{}", report.summary());
    match report.failed() {
        0 => Ok(()),
        failed => anyhow::bail!("{failed} school(s) failed to migrate"),
    }
}

/// `tenant status`: every school (or only those behind, with `pending_only`), with its
/// latest applied version and the number of migrations it has not applied.
pub(super) async fn status(config: &Config, pending_only: bool) -> anyhow::Result<()> {
    let db = fleet_db(config, 1);
    let rows = blocking(move || {
        let schools = provision::all_tenants(&db)?;
        let schemas: Vec<SchemaName> = schools.iter().map(|t| t.schema_name.clone()).collect();
        let applied = db.with_conn(|conn| Ok(applied_versions(conn, &schemas)?))?;
        Ok::<_, ApiError>(
            schemas
                .into_iter()
                .map(|schema| {
                    let versions = applied.get(schema.as_str()).cloned().unwrap_or_default();
                    let latest = versions.iter().max().cloned();
                    (schema, latest, pending_count(&versions))
                })
                .collect::<Vec<_>>(),
        )
    })
    .await?;
    let mut out = std::io::stdout().lock();
    for (schema, latest, pending) in rows {
        if pending_only && pending == 0 {
            continue;
        }
        let latest = latest.as_deref().unwrap_or("-");
        // A reader that closes the pipe early (`| head`) just ends the listing.
        if writeln!(out, "{schema}\t{latest}\t{pending} pending").is_err() {
            break;
        }
    }
    Ok(())
}
