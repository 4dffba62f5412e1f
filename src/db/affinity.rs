//! Which pooled connection a unit of work gets: school affinity.
//!
//! PostgreSQL keeps the catalog entries of every relation a backend has touched (relcache,
//! catcache, plans) for the backend's whole life, and with a schema per school every school
//! has relations of its own. A pool that hands any school to any connection makes every
//! backend cache every school's relations. Here each school has *home* connections instead,
//! so each backend caches about `homes / size` of the schools.
//!
//! A school's connections are ranked by rendezvous hashing (highest `score(school, slot)`
//! first); its homes are the first `homes` of that ranking. Growing the pool from `n` to
//! `n + 1` connections moves only the schools whose top ranks the new slot enters, about
//! `homes / (n + 1)` of them.
//!
//! The rule: a school's work stays on its homes, unless another connection would
//! otherwise sit idle with nobody of its own waiting.
//! - a unit of work that arrives while one of its homes is idle takes it; when only other
//!   connections are idle it waits up to [`BORROW_AFTER`] for a home to come back, then
//!   borrows the first idle one in its school's ranking. (Borrowing at once spread each
//!   school over most connections whenever the pool was not saturated: see
//!   docs/performance.md, "Fleet memory".)
//! - a connection that comes back goes to the oldest waiting unit of work whose home it is;
//!   when it is nobody's home, to the waiter that ranks it highest (the oldest of those), so
//!   a school that borrows borrows its next choices, the same few connections every time,
//!   not whichever one happens to come back.
//! - a waiter that has seen [`PASSED_OVER_LIMIT`] times the pool's size of connections go to
//!   younger waiters gets the next one whatever it is, so nobody waits for long behind its
//!   own busy homes. (A limit of once the pool's size made about a third of all units of
//!   work borrow under saturation, every school reaching most connections within a few
//!   passes; four times keeps the borrowing to the imbalance of the moment.)
//!
//! Platform work (no school) has every connection as home. `homes == 0` switches affinity
//! off: every connection is everyone's home, and waiters are served in arrival order.

use std::{
    collections::VecDeque,
    hash::{DefaultHasher, Hash, Hasher},
    sync::{Mutex, mpsc},
    time::Duration,
};

use tokio::sync::oneshot;

use crate::{db::schema_name::SchemaName, observability::metrics};

/// How long a unit of work whose homes are busy waits for one before it borrows an idle
/// connection, by default (`DB_POOL_BORROW_AFTER_MS`): about one short unit of work, so a
/// home usually comes back in time.
pub const BORROW_AFTER: Duration = Duration::from_millis(2);

/// How many times the pool's size a waiter may be passed over by younger waiters taking
/// their homes before it gets the next connection, home or not.
pub const PASSED_OVER_LIMIT: usize = 4;

/// A school's key for hashing: stable for the life of the build.
pub fn school_key(school: &SchemaName) -> u64 {
    let mut hasher = DefaultHasher::new();
    school.as_str().hash(&mut hasher);
    hasher.finish()
}

/// Rendezvous score of `slot` for the school keyed `key` (splitmix64's finaliser over
/// both: cheap, and every bit of the inputs moves every bit of the score).
fn score(key: u64, slot: usize) -> u64 {
    let mut z = key ^ (slot as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The slots `0..size` in the school's order of preference.
pub fn ranking(key: u64, size: usize) -> Vec<usize> {
    let mut slots: Vec<usize> = (0..size).collect();
    slots.sort_by_key(|&slot| std::cmp::Reverse(score(key, slot)));
    slots
}

/// Which connections a unit of work prefers.
#[derive(Clone, Debug)]
pub enum Preference {
    /// Any connection is as good as any other (platform work, or affinity off).
    Any,
    /// A school's: slots in its order of preference, the first `homes` of them its homes.
    School { ranking: Vec<usize>, homes: usize },
}

impl Preference {
    fn is_home(&self, slot: usize) -> bool {
        match self {
            Self::Any => true,
            Self::School { ranking, homes } => ranking[..*homes].contains(&slot),
        }
    }

    /// Where `slot` stands in this order of preference (0: first).
    fn rank_of(&self, slot: usize) -> usize {
        match self {
            Self::Any => 0,
            Self::School { ranking, .. } => ranking
                .iter()
                .position(|&s| s == slot)
                .unwrap_or(usize::MAX),
        }
    }

    /// The first idle slot in this order of preference.
    fn pick(&self, idle: &[bool]) -> Option<usize> {
        match self {
            Self::Any => idle.iter().position(|&free| free),
            Self::School { ranking, .. } => ranking.iter().copied().find(|&slot| idle[slot]),
        }
    }
}

/// How a waiting unit of work is told which slot it got.
pub enum Grant {
    Async(oneshot::Sender<usize>),
    Blocking(mpsc::SyncSender<usize>),
    /// Queued work itself (`db::lanes`): called with the slot where it is released, under
    /// the dispatcher's lock, so it only hands the work on (false: the work is gone).
    Hand(Box<dyn FnOnce(usize) -> bool + Send>),
}

impl Grant {
    /// False when the waiter is gone (it gave up): the slot is not theirs.
    fn send(self, slot: usize) -> bool {
        match self {
            Self::Async(sender) => sender.send(slot).is_ok(),
            Self::Blocking(sender) => sender.try_send(slot).is_ok(),
            Self::Hand(hand) => hand(slot),
        }
    }
}

/// The outcome of [`Dispatcher::claim`].
pub enum Claim {
    /// This slot is now the caller's.
    Now(usize),
    /// Queued under this id: the slot arrives through the grant.
    Queued(u64),
}

struct Waiter {
    id: u64,
    preference: Preference,
    /// Connections that went to younger waiters while this one waited.
    passed_over: usize,
    grant: Grant,
}

struct State {
    idle: Vec<bool>,
    waiters: VecDeque<Waiter>,
    next_id: u64,
}

/// Hands out the slots `0..size`, one holder each, by the rule in the module comment.
pub struct Dispatcher {
    homes: usize,
    size: usize,
    state: Mutex<State>,
}

impl Dispatcher {
    /// `size` slots, all idle; each school has `homes` of them (0: no affinity).
    pub fn new(size: usize, homes: usize) -> Self {
        Self {
            homes: homes.min(size),
            size,
            state: Mutex::new(State {
                idle: vec![true; size],
                waiters: VecDeque::new(),
                next_id: 0,
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What work bound to `school` (or to none) prefers.
    pub fn preference(&self, school: Option<u64>) -> Preference {
        match school {
            Some(key) if self.homes > 0 => Preference::School {
                ranking: ranking(key, self.size),
                homes: self.homes,
            },
            _ => Preference::Any,
        }
    }

    /// An idle slot now, or a place in the queue; `grant` is used only when queued.
    /// (An idle connection that is not a home is not taken now: see [`Self::borrow`].)
    pub fn claim(&self, preference: Preference, grant: Grant) -> Claim {
        let mut state = self.state();
        if let Some(slot) = preference.pick(&state.idle) {
            if preference.is_home(slot) {
                state.idle[slot] = false;
                metrics::pool_placement(true);
                return Claim::Now(slot);
            }
        }
        let id = state.next_id;
        state.next_id += 1;
        state.waiters.push_back(Waiter {
            id,
            preference,
            passed_over: 0,
            grant,
        });
        Claim::Queued(id)
    }

    /// After [`BORROW_AFTER`]: waiter `id`, still queued, borrows the first idle connection
    /// in its ranking. `None`: none is idle (it keeps waiting), or its slot was already sent.
    pub fn borrow(&self, id: u64) -> Option<usize> {
        let mut state = self.state();
        let at = state.waiters.iter().position(|waiter| waiter.id == id)?;
        let slot = state.waiters[at].preference.pick(&state.idle)?;
        state.waiters.remove(at);
        state.idle[slot] = false;
        metrics::pool_placement(false);
        Some(slot)
    }

    /// Takes `slot` if it is idle (the pool's upkeep, between units of work).
    pub fn claim_idle(&self, slot: usize) -> bool {
        let mut state = self.state();
        let idle = state.idle.get(slot).copied().unwrap_or(false);
        if idle {
            state.idle[slot] = false;
        }
        idle
    }

    /// Gives up waiting: true when the waiter was still queued. False means its slot was
    /// already sent, and the caller must take it from its grant (and release it).
    pub fn cancel(&self, id: u64) -> bool {
        let mut state = self.state();
        let queued = state.waiters.iter().position(|waiter| waiter.id == id);
        queued.map(|at| state.waiters.remove(at)).is_some()
    }

    /// `slot` is free again: to a waiter by the rule, else idle.
    pub fn release(&self, slot: usize) {
        let mut state = self.state();
        loop {
            let Some(at) = Self::next_holder(&mut state, slot, self.size * PASSED_OVER_LIMIT)
            else {
                state.idle[slot] = true;
                return;
            };
            let waiter = state.waiters.remove(at).expect("waiter index");
            let home = waiter.preference.is_home(slot);
            if waiter.grant.send(slot) {
                metrics::pool_placement(home);
                return;
            }
        }
    }

    /// Which waiter gets `slot`: the oldest one passed over `limit` times, else the oldest
    /// whose home it is, else the one that ranks it highest (the oldest of those). Waiters
    /// older than the one chosen are passed over once more.
    fn next_holder(state: &mut State, slot: usize, limit: usize) -> Option<usize> {
        let oldest = state.waiters.front()?;
        if oldest.passed_over >= limit {
            return Some(0);
        }
        let home_of = state
            .waiters
            .iter()
            .position(|waiter| waiter.preference.is_home(slot));
        let at = home_of.unwrap_or_else(|| {
            let ranks = state.waiters.iter().map(|w| w.preference.rank_of(slot));
            // `min_by_key` keeps the first of equals: the oldest.
            ranks
                .enumerate()
                .min_by_key(|&(_, rank)| rank)
                .map_or(0, |(at, _)| at)
        });
        for older in state.waiters.iter_mut().take(at) {
            older.passed_over += 1;
        }
        Some(at)
    }

    /// Slots idle now.
    pub fn idle_count(&self) -> usize {
        self.state().idle.iter().filter(|&&free| free).count()
    }
}

#[cfg(test)]
mod tests;
