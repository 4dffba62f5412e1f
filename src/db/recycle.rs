//! When a pooled connection is replaced, and the thread that replaces it.
//!
//! A backend's caches only grow (see `db::affinity`): a connection is replaced once it has
//! served `max_schools` distinct schools or lived `max_lifetime`, whichever comes first.
//! Replacing happens off the request path: the connection that is due keeps serving
//! while the recycler thread opens its successor, which takes over at the slot's next
//! checkout; the old one is closed by the recycler too. One replacement is opened at a
//! time, and every connection's lifetime is drawn between three quarters of
//! `max_lifetime` and all of it, so connections opened together are not all replaced
//! together. Connections idle for `idle_timeout` are closed (reopened on next use).

use std::{
    collections::HashSet,
    sync::{Weak, mpsc},
    time::{Duration, Instant},
};

use rand::Rng;

use crate::db::{pool::PgConn, slots::Slots};

/// How long pooled connections live (`DB_POOL_MAX_LIFETIME_SECS`, `DB_POOL_MAX_SCHOOLS`,
/// `DB_POOL_IDLE_TIMEOUT_SECS`); `None`: no such limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecycleSettings {
    pub max_lifetime: Option<Duration>,
    pub max_schools: Option<usize>,
    pub idle_timeout: Option<Duration>,
}

impl Default for RecycleSettings {
    /// Thirty and ten minutes are r2d2's defaults, which the pool had before. A school's
    /// five common reads leave about 50 KB of caches in a backend (docs/performance.md,
    /// "Fleet memory"): 1,000 schools bound a backend near 50 MiB however many schools
    /// the server has, and at 2,000 schools on the default pool (about 330 homes per
    /// connection) a connection is replaced only after borrowing widely.
    fn default() -> Self {
        Self {
            max_lifetime: Some(Duration::from_secs(30 * 60)),
            max_schools: Some(1_000),
            idle_timeout: Some(Duration::from_secs(10 * 60)),
        }
    }
}

/// Why a connection was replaced (the metric's label).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    Lifetime,
    Schools,
}

impl Reason {
    pub fn label(self) -> &'static str {
        match self {
            Self::Lifetime => "lifetime",
            Self::Schools => "schools",
        }
    }
}

/// What one connection has done so far.
#[derive(Debug)]
pub struct ConnLife {
    opened: Instant,
    /// This connection's own lifetime: `max_lifetime` scaled by a factor in [0.75, 1].
    lifetime: Option<Duration>,
    /// The schools it has served, by `affinity::school_key`.
    schools: HashSet<u64>,
    last_used: Instant,
}

impl ConnLife {
    pub fn new(settings: &RecycleSettings) -> Self {
        Self::with_share(settings, rand::thread_rng().gen_range(0.75..=1.0))
    }

    /// A life whose lifetime is `share` of the maximum.
    pub fn with_share(settings: &RecycleSettings, share: f64) -> Self {
        let now = Instant::now();
        Self {
            opened: now,
            lifetime: settings.max_lifetime.map(|max| max.mul_f64(share)),
            schools: HashSet::new(),
            last_used: now,
        }
    }

    pub fn served(&mut self, school: Option<u64>) {
        if let Some(key) = school {
            self.schools.insert(key);
        }
    }

    pub fn used(&mut self, now: Instant) {
        self.last_used = now;
    }

    pub fn schools(&self) -> usize {
        self.schools.len()
    }

    /// Whether the connection should be replaced, and why.
    pub fn due(&self, settings: &RecycleSettings, now: Instant) -> Option<Reason> {
        if settings
            .max_schools
            .is_some_and(|max| self.schools.len() >= max)
        {
            return Some(Reason::Schools);
        }
        self.lifetime
            .filter(|&lifetime| now.duration_since(self.opened) >= lifetime)
            .map(|_| Reason::Lifetime)
    }

    pub fn idle_too_long(&self, settings: &RecycleSettings, now: Instant) -> bool {
        settings
            .idle_timeout
            .is_some_and(|timeout| now.duration_since(self.last_used) >= timeout)
    }
}

/// Work for the recycler thread.
pub enum Job {
    /// Open a successor for the connection in this slot.
    Replace(usize),
    /// Close a connection that is no longer used.
    Close(Box<PgConn>),
}

/// How often idle connections are looked at.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// Runs until the pool is dropped (its sender with it).
pub fn spawn(slots: Weak<Slots>, jobs: mpsc::Receiver<Job>) {
    let spawned = std::thread::Builder::new()
        .name("db-pool-recycler".into())
        .spawn(move || {
            loop {
                match jobs.recv_timeout(SWEEP_EVERY) {
                    Ok(Job::Close(conn)) => drop(conn),
                    Ok(Job::Replace(slot)) => match slots.upgrade() {
                        Some(slots) => slots.open_successor(slot),
                        None => return,
                    },
                    Err(mpsc::RecvTimeoutError::Timeout) => match slots.upgrade() {
                        Some(slots) => slots.sweep(Instant::now()),
                        None => return,
                    },
                    Err(mpsc::RecvTimeoutError::Disconnected) => return,
                }
            }
        });
    if let Err(err) = spawned {
        log::error!("could not start the pool's recycler thread: {err}");
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::{ConnLife, Reason, RecycleSettings};

    fn settings(schools: usize, lifetime_secs: u64) -> RecycleSettings {
        RecycleSettings {
            max_lifetime: Some(Duration::from_secs(lifetime_secs)),
            max_schools: Some(schools),
            idle_timeout: Some(Duration::from_secs(60)),
        }
    }

    #[test]
    fn a_connection_is_due_after_its_distinct_schools_not_its_requests() {
        let settings = settings(3, 3600);
        let mut life = ConnLife::with_share(&settings, 1.0);
        let now = Instant::now();
        for _ in 0..100 {
            life.served(Some(1));
            life.served(Some(2));
            life.served(None);
        }
        assert_eq!(life.schools(), 2);
        assert_eq!(life.due(&settings, now), None);
        life.served(Some(3));
        assert_eq!(life.due(&settings, now), Some(Reason::Schools));
    }

    #[test]
    fn a_connection_is_due_after_its_own_lifetime() {
        let settings = settings(1000, 100);
        let life = ConnLife::with_share(&settings, 0.75);
        let opened = Instant::now();
        assert_eq!(life.due(&settings, opened + Duration::from_secs(74)), None);
        assert_eq!(
            life.due(&settings, opened + Duration::from_secs(76)),
            Some(Reason::Lifetime)
        );
    }

    #[test]
    fn lifetimes_are_spread_so_connections_are_not_replaced_together() {
        let settings = settings(1000, 1000);
        let lifetimes: Vec<Duration> = (0..50)
            .map(|_| ConnLife::new(&settings).lifetime.expect("lifetime"))
            .collect();
        assert!(
            lifetimes
                .iter()
                .all(|l| l.as_secs() >= 749 && l.as_secs() <= 1000)
        );
        let distinct: std::collections::HashSet<_> = lifetimes.iter().collect();
        assert!(distinct.len() > 40, "{lifetimes:?}");
    }

    #[test]
    fn no_limits_means_never_due() {
        let settings = RecycleSettings {
            max_lifetime: None,
            max_schools: None,
            idle_timeout: None,
        };
        let mut life = ConnLife::new(&settings);
        (0..10_000).for_each(|key| life.served(Some(key)));
        let later = Instant::now() + Duration::from_secs(1_000_000);
        assert_eq!(life.due(&settings, later), None);
        assert!(!life.idle_too_long(&settings, later));
    }
}
