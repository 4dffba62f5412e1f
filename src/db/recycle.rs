//! When a pooled connection is replaced, and the thread that replaces it.
//!
//! A backend's caches only grow (see `db::affinity`): a connection is replaced once its
//! backend holds `max_backend_bytes` of its own memory, has served `max_schools` distinct
//! schools, or has lived `max_lifetime`, whichever comes first. The memory is what the
//! backend says of itself (`pg_backend_memory_contexts`), read by the recycler thread
//! after every [`MEASURE_EVERY`] new schools the connection serves, while the slot is
//! still held but the request already answered: the cost of a school differs with what
//! its users read (about 50 KB to several hundred), so a byte budget bounds what a count
//! cannot. Replacing happens off the request path too: the connection that is due keeps
//! serving while the recycler opens its successor, which takes over at the slot's next
//! checkout; the old one is closed by the recycler. One replacement is opened at a time,
//! and each connection's lifetime and memory budget are drawn between three quarters of
//! the maximum and all of it, so connections opened together, which with affinity grow
//! alike, are not replaced together. Connections idle for `idle_timeout` are closed
//! (reopened on next use).

use std::{
    collections::HashSet,
    sync::{Weak, mpsc},
    time::{Duration, Instant},
};

use rand::Rng;

use crate::db::{
    pool::PgConn,
    slots::{SlotTicket, Slots},
};

/// How long pooled connections live (`DB_POOL_MAX_LIFETIME_SECS`, `DB_POOL_MAX_SCHOOLS`,
/// `DB_POOL_MAX_BACKEND_MIB`, `DB_POOL_IDLE_TIMEOUT_SECS`); `None`: no such limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecycleSettings {
    pub max_lifetime: Option<Duration>,
    pub max_schools: Option<usize>,
    /// The backend's own memory (`pg_backend_memory_contexts`) past which it is replaced.
    /// Session mode only: behind a transaction pooler the backend is PgBouncer's choice.
    pub max_backend_bytes: Option<u64>,
    pub idle_timeout: Option<Duration>,
}

/// How many new schools a connection serves between two reads of its backend's memory.
pub const MEASURE_EVERY: usize = 16;

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
            max_backend_bytes: Some(DEFAULT_MAX_BACKEND_MIB << 20),
            idle_timeout: Some(Duration::from_secs(10 * 60)),
        }
    }
}

/// The default of `DB_POOL_MAX_BACKEND_MIB`.
pub const DEFAULT_MAX_BACKEND_MIB: u64 = 48;

/// Why a connection was replaced (the metric's label).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    Lifetime,
    Schools,
    Memory,
}

impl Reason {
    pub fn label(self) -> &'static str {
        match self {
            Self::Lifetime => "lifetime",
            Self::Schools => "schools",
            Self::Memory => "memory",
        }
    }
}

/// What one connection has done so far.
#[derive(Debug)]
pub struct ConnLife {
    opened: Instant,
    /// This connection's share of the maxima, in [0.75, 1].
    share: f64,
    /// This connection's own lifetime: `max_lifetime` scaled by its share.
    lifetime: Option<Duration>,
    /// Its backend's memory at the last read, and how many schools it had served then.
    memory: Option<u64>,
    schools_at_reading: usize,
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
            share,
            lifetime: settings.max_lifetime.map(|max| max.mul_f64(share)),
            memory: None,
            schools_at_reading: 0,
            schools: HashSet::new(),
            last_used: now,
        }
    }

    /// Counts a unit of work for `school`; true when the school is new to the connection.
    pub fn served(&mut self, school: Option<u64>) -> bool {
        school.is_some_and(|key| self.schools.insert(key))
    }

    /// Whether the backend's memory should be read now: a budget is set, and the
    /// connection has served [`MEASURE_EVERY`] new schools since the last reading.
    pub fn reading_due(&self, settings: &RecycleSettings) -> bool {
        settings.max_backend_bytes.is_some()
            && self.schools.len() >= self.schools_at_reading + MEASURE_EVERY
    }

    /// What the backend's memory was read to be (`None`: the read failed; the next is
    /// due after as many new schools again, not at every unit of work).
    pub fn read_memory(&mut self, bytes: Option<u64>) {
        self.memory = bytes.or(self.memory);
        self.schools_at_reading = self.schools.len();
    }

    /// Whether the backend would outgrow its budget serving `homes` schools, at the cost
    /// per school its last reading showed (its memory over the schools it had served then;
    /// what a new backend holds is counted in, so the projection errs high).
    pub fn would_outgrow(&self, settings: &RecycleSettings, homes: usize) -> bool {
        let (Some(budget), Some(memory)) = (self.budget(settings), self.memory) else {
            return false;
        };
        let served = self.schools_at_reading.max(1);
        memory as f64 * homes as f64 / served as f64 >= budget as f64
    }

    /// This connection's memory budget: its share of `max_backend_bytes`.
    fn budget(&self, settings: &RecycleSettings) -> Option<u64> {
        let max = settings.max_backend_bytes?;
        Some((max as f64 * self.share) as u64)
    }

    pub fn used(&mut self, now: Instant) {
        self.last_used = now;
    }

    pub fn schools(&self) -> usize {
        self.schools.len()
    }

    /// Whether the connection should be replaced, and why.
    pub fn due(&self, settings: &RecycleSettings, now: Instant) -> Option<Reason> {
        if let (Some(budget), Some(memory)) = (self.budget(settings), self.memory) {
            if memory >= budget {
                return Some(Reason::Memory);
            }
        }
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
    /// Read the backend memory of this connection, whose slot the ticket still holds,
    /// then put it back.
    Measure(Box<PgConn>, SlotTicket),
    /// Close a connection that is no longer used.
    Close(Box<PgConn>),
    /// Open every slot's connection not open yet.
    Open,
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
                    Ok(Job::Measure(conn, ticket)) => {
                        let slots = ticket.slots().clone();
                        slots.measure(*conn, ticket);
                    }
                    Ok(Job::Open) => match slots.upgrade() {
                        Some(slots) => slots.open_idle(),
                        None => return,
                    },
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

    use super::{ConnLife, MEASURE_EVERY, Reason, RecycleSettings};

    fn settings(schools: usize, lifetime_secs: u64) -> RecycleSettings {
        RecycleSettings {
            max_lifetime: Some(Duration::from_secs(lifetime_secs)),
            max_schools: Some(schools),
            max_backend_bytes: Some(32 << 20),
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
            max_backend_bytes: None,
            idle_timeout: None,
        };
        let mut life = ConnLife::new(&settings);
        (0..10_000).for_each(|key| {
            life.served(Some(key));
        });
        assert!(!life.reading_due(&settings));
        let later = Instant::now() + Duration::from_secs(1_000_000);
        assert_eq!(life.due(&settings, later), None);
        assert!(!life.idle_too_long(&settings, later));
    }

    #[test]
    fn memory_is_read_every_few_new_schools_and_a_backend_over_its_budget_is_due() {
        let settings = settings(1000, 3600);
        let mut life = ConnLife::with_share(&settings, 0.75);
        let now = Instant::now();
        for key in 0..MEASURE_EVERY as u64 - 1 {
            assert!(life.served(Some(key)), "new school {key}");
            assert!(!life.served(Some(key)), "not new twice");
        }
        assert!(!life.reading_due(&settings));
        life.served(Some(1_000));
        assert!(life.reading_due(&settings));
        // Its budget is three quarters of 32 MiB: 24 MiB.
        life.read_memory(Some(23 << 20));
        assert!(
            !life.reading_due(&settings),
            "read: due again after more schools"
        );
        assert_eq!(life.due(&settings, now), None);
        life.read_memory(Some(25 << 20));
        assert_eq!(life.due(&settings, now), Some(Reason::Memory));
    }

    #[test]
    fn a_reading_is_projected_to_the_homes_the_backend_will_serve() {
        let settings = settings(10_000, 3600);
        let mut life = ConnLife::with_share(&settings, 0.75);
        assert!(!life.would_outgrow(&settings, 1_000), "no reading yet");
        for key in 0..MEASURE_EVERY as u64 {
            life.served(Some(key));
        }
        // 16 schools in 2 MiB: 128 KiB a school. The budget is 24 MiB (3/4 of 32).
        life.read_memory(Some(2 << 20));
        assert!(!life.would_outgrow(&settings, 16), "what it holds now");
        assert!(
            !life.would_outgrow(&settings, 191),
            "191 x 128 KiB < 24 MiB"
        );
        assert!(life.would_outgrow(&settings, 192), "192 x 128 KiB = 24 MiB");
        let unbudgeted = RecycleSettings {
            max_backend_bytes: None,
            ..settings
        };
        assert!(!life.would_outgrow(&unbudgeted, 1_000_000));
    }
}
