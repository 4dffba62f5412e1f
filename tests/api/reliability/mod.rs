//! Under load and faults: the database going away, PgBouncer, one school's fair share,
//! admission, pool affinity, counts kept by triggers, metrics and logs.

mod admission;
mod fairness;
mod live_counts;
mod observability;
mod pgbouncer;
mod pool_affinity;
mod proxy;
mod resilience;
