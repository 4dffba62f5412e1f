//! Migrating many schools: `jobs` at a time, each school in its own transaction (fully
//! migrated or untouched), a failing school reported without stopping the others, and an
//! optional canary of schools that go first and stop the run if any of them fails.

use std::sync::{
    Mutex,
    atomic::{AtomicUsize, Ordering},
};

use crate::{
    db::Db,
    error::ApiResult,
    tenancy::{
        SchemaName, TenantRef,
        school_migrations::SchoolSeed,
        school_migrations::{
            MigrationFailure, applied_versions, known_permissions, migrate_school, pending_count,
        },
    },
};

/// What `migrate` does with the schools it is given.
#[derive(Debug, Clone, Copy)]
pub struct FleetOptions {
    /// Schools migrated at the same time, each on its own connection (at least 1).
    pub jobs: usize,
    /// Schools (among those behind) migrated first; if any of them fails, the rest are not
    /// attempted.
    pub canary: usize,
}

#[derive(Debug)]
pub enum Outcome {
    UpToDate,
    /// The versions applied.
    Migrated(Vec<String>),
    Failed(MigrationFailure),
    /// Left alone because a canary school failed.
    NotAttempted,
}

#[derive(Debug)]
pub struct SchoolOutcome {
    pub schema: SchemaName,
    pub outcome: Outcome,
}

#[derive(Debug)]
pub struct FleetReport {
    /// In the order the schools were given.
    pub schools: Vec<SchoolOutcome>,
    pub canary_failed: bool,
}

impl FleetReport {
    fn count(&self, which: impl Fn(&Outcome) -> bool) -> usize {
        self.schools.iter().filter(|s| which(&s.outcome)).count()
    }

    pub fn failures(&self) -> impl Iterator<Item = (&SchemaName, &MigrationFailure)> {
        self.schools.iter().filter_map(|s| match &s.outcome {
            Outcome::Failed(failure) => Some((&s.schema, failure)),
            _ => None,
        })
    }

    pub fn failed(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Failed(_)))
    }

    /// `N schools: A up to date, B migrated, C failed` (and how many were not attempted
    /// after a failed canary).
    pub fn summary(&self) -> String {
        let mut line = format!(
            "{} schools: {} up to date, {} migrated, {} failed",
            self.schools.len(),
            self.count(|o| matches!(o, Outcome::UpToDate)),
            self.count(|o| matches!(o, Outcome::Migrated(_))),
            self.failed(),
        );
        if self.canary_failed {
            let skipped = self.count(|o| matches!(o, Outcome::NotAttempted));
            line.push_str(&format!(
                ", {skipped} not attempted (a canary school failed)"
            ));
        }
        line
    }
}

/// Brings `schools` up to date (see the module). One query per 500 schools finds those
/// behind; only they take a connection. `on_done` is called after each school migrated or
/// failed. Opens at most `options.jobs` connections from `db`.
pub fn migrate_schools(
    db: &Db,
    schools: &[TenantRef],
    options: FleetOptions,
    seed: SchoolSeed,
    on_done: &(dyn Fn() + Sync),
) -> ApiResult<FleetReport> {
    let schemas: Vec<SchemaName> = schools.iter().map(|t| t.schema_name.clone()).collect();
    let (applied, known) = db.with_conn(|conn| {
        Ok((
            applied_versions(conn, &schemas)?,
            known_permissions(conn, &schemas)?,
        ))
    })?;
    let catalogue = (seed.codenames)();
    let mut outcomes: Vec<Option<Outcome>> = schools
        .iter()
        .map(|t| {
            let behind = applied
                .get(t.schema_name.as_str())
                .is_none_or(|versions| pending_count(versions) > 0);
            // A codename new to the school: the seed grants it to the default roles.
            let permissions_behind = known
                .get(t.schema_name.as_str())
                .is_none_or(|codes| catalogue.iter().any(|c| !codes.contains(c)));
            (!behind && !permissions_behind).then_some(Outcome::UpToDate)
        })
        .collect();
    let behind: Vec<usize> = (0..schools.len())
        .filter(|&i| outcomes[i].is_none())
        .collect();
    let (canary, rest) = behind.split_at(options.canary.min(behind.len()));
    let migrate_all = |indices: &[usize]| {
        in_parallel(indices.len(), options.jobs, |n| {
            let outcome = migrate_one(db, &schools[indices[n]], seed);
            on_done();
            outcome
        })
    };
    let canary_outcomes = migrate_all(canary);
    let canary_failed = canary_outcomes
        .iter()
        .any(|outcome| matches!(outcome, Outcome::Failed(_)));
    let rest_outcomes = if canary_failed {
        rest.iter().map(|_| Outcome::NotAttempted).collect()
    } else {
        migrate_all(rest)
    };
    for (&index, outcome) in canary
        .iter()
        .chain(rest)
        .zip(canary_outcomes.into_iter().chain(rest_outcomes))
    {
        outcomes[index] = Some(outcome);
    }
    Ok(FleetReport {
        schools: schemas
            .into_iter()
            .zip(outcomes)
            .map(|(schema, outcome)| SchoolOutcome {
                schema,
                outcome: outcome.unwrap_or(Outcome::NotAttempted),
            })
            .collect(),
        canary_failed,
    })
}

fn migrate_one(db: &Db, tenant: &TenantRef, seed: SchoolSeed) -> Outcome {
    let result = db
        .with_tenant(tenant, |conn| Ok(migrate_school(conn, seed)))
        .unwrap_or_else(|err| Err(MigrationFailure::from(err)));
    match result {
        Ok(applied) if applied.is_empty() => Outcome::UpToDate,
        Ok(applied) => Outcome::Migrated(applied),
        Err(failure) => Outcome::Failed(failure),
    }
}

/// Runs `work(0..count)` on `jobs` threads (at most `count`), each taking the next index
/// when it is free; answers the results in index order.
pub fn in_parallel<T: Send>(count: usize, jobs: usize, work: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..count).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, count.max(1)) {
            scope.spawn(|| {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= count {
                        break;
                    }
                    let result = work(index);
                    results.lock().unwrap_or_else(|e| e.into_inner())[index] = Some(result);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .flatten()
        .collect()
}
