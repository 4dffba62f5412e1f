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
//! The rule: a school's work stays on its homes; a connection may idle while a school
//! waits a moment for its home, since its catalog entries are warm there and cold elsewhere
//! (rebuilding them costs more than the wait: docs/performance.md, "Fleet memory").
//! - a unit of work that arrives while one of its homes is idle takes it. When its homes
//!   are busy it waits, and may borrow a connection that is not its home
//!   - at once, only a connection that has served its school before (*warm*: it costs the
//!     backend nothing new), when [`BORROW_QUEUE`] older units of work already wait for
//!     the same home;
//!   - the same after waiting `borrow_after` (`DB_POOL_BORROW_AFTER_MS`, default
//!     [`BORROW_AFTER`]): one busy school's long units of work (writes) spread over the
//!     connections that know it, while its short ones (reads) come back to a home that is
//!     still hot (its lane's thread awake, its backend's caches warm);
//!   - any connection after `borrow_any_after` (`DB_POOL_BORROW_ANY_AFTER_MS`, default ten
//!     times `borrow_after`): warm first, then a spill slot (nobody's home:
//!     [`Dispatcher::with_spill`]), then its best ranked; warm for it from then on.
//! - a connection that comes back goes to the oldest waiting unit of work whose home it is;
//!   else to a waiter it is warm for, or one that has waited `borrow_any_after` (warm
//!   first, then the one that ranks it highest; the oldest of equals); when nobody
//!   may take it, it stays idle.
//! - a waiter that has seen [`PASSED_OVER_LIMIT`] times the pool's size of connections go to
//!   younger waiters gets the next one whatever it is, so nobody waits for long behind its
//!   own busy homes. (A limit of once the pool's size made about a third of all units of
//!   work borrow under saturation, every school reaching most connections within a few
//!   passes; four times keeps the borrowing to the imbalance of the moment.)
//! - a waiter that has waited `borrow_any_after` comes first when a connection or a
//!   running place frees, before waiters whose homes are idle: it takes the idle
//!   connection that suits it best (of several such waiters, the one an idle connection
//!   suits best). Else, while the running is full, it waited on for its own busy home
//!   behind younger waiters: the tail of a cold first pass over many schools
//!   (docs/performance.md, "Fleet memory").
//!
//! A spill slot keeps the schools that waited long out of other schools' homes: under load,
//! their lent backends otherwise grew by 1-4 MiB over a few passes (docs/performance.md,
//! "Fleet memory on a fifth machine").
//!
//! Platform work (no school) has every connection as home. `homes == 0` switches affinity
//! off: every connection is everyone's home, and waiters are served in arrival order.
//!
//! At most `running` units of work hold connections at once (`DB_POOL_RUNNING`), however
//! many connections there are: the pool's size says how many backends share the schools'
//! catalog entries, `running` how much work the CPU is given at once. A unit of work that
//! finds the running full waits, even for an idle home. When one finishes, a waiter whose
//! home is the connection that came back takes it if one is among the oldest `running`
//! waiters (that lane's thread is awake); else the oldest waiter whose home is idle takes
//! it; else one the rule lets borrow an idle connection.
//!
//! A pool may spread the schools over its first connections only
//! ([`Dispatcher::with_spread`]) and [`widen`](Dispatcher::widen) to all of them, once:
//! schools are ranked over the connections they are spread over, so widening from `n` to
//! `size` moves a school's first home only when one of the new connections outranks it
//! (about `1 - n / size` of them), and each old connection keeps a subset of its schools.

use std::{
    collections::{HashSet, VecDeque},
    sync::{
        Mutex,
        atomic::{AtomicUsize, Ordering},
        mpsc,
    },
    time::Duration,
};

use crate::observability::metrics;

mod ranking;
mod state;
pub use ranking::{Preference, ranking, school_key};
use state::{Lend, State, Waiter};

/// How long a unit of work whose homes are busy waits for one before it may borrow a
/// connection that knows its school, by default (`DB_POOL_BORROW_AFTER_MS`; any connection
/// after `DB_POOL_BORROW_ANY_AFTER_MS`, ten times as long by default): about one short unit
/// of work, so a home usually comes back in time.
pub const BORROW_AFTER: Duration = Duration::from_millis(2);

/// How long a unit of work waits before it may borrow any connection, by default
/// (`DB_POOL_BORROW_ANY_AFTER_MS`): ten times `borrow_after`.
pub fn default_borrow_any_after(borrow_after: Duration) -> Duration {
    borrow_after.saturating_mul(10)
}

/// How many older units of work may wait for a school's home before a younger one borrows
/// a connection that knows its school.
pub const BORROW_QUEUE: usize = 2;

/// How many times the pool's size a waiter may be passed over by younger waiters taking
/// their homes before it gets the next connection, home or not.
pub const PASSED_OVER_LIMIT: usize = 4;

/// How a waiting unit of work is told which slot it got.
pub enum Grant {
    /// A thread blocked on the receiver (`Slots::take_blocking`: work outside the lanes).
    Blocking(mpsc::SyncSender<usize>),
    /// Queued work itself (`db::lanes`): called with the slot where it is released, under
    /// the dispatcher's lock, so it only hands the work on (false: the work is gone).
    Hand(Box<dyn FnOnce(usize) -> bool + Send>),
}

impl Grant {
    /// False when the waiter is gone (it gave up): the slot is not theirs.
    fn send(self, slot: usize) -> bool {
        match self {
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

/// Hands out the slots `0..spread` of `0..size`, one holder each, by the rule in the
/// module comment.
pub struct Dispatcher {
    homes: usize,
    /// The first this many slots are nobody's home (`with_spill`).
    spill: usize,
    size: usize,
    /// The slots handed out: the first this many (`State::idle`'s length, read here
    /// without the lock to rank a school's slots).
    spread: AtomicUsize,
    /// At most this many units of work hold slots at once.
    running: usize,
    state: Mutex<State>,
}

impl Dispatcher {
    /// `size` slots, all idle; each school has `homes` of them (0: no affinity); all of
    /// them may be held at once.
    pub fn new(size: usize, homes: usize) -> Self {
        Self {
            homes: homes.min(size),
            spill: 0,
            size,
            spread: AtomicUsize::new(size),
            running: size,
            state: Mutex::new(State {
                idle: vec![true; size],
                warm: vec![HashSet::new(); size],
                waiters: VecDeque::new(),
                next_id: 0,
            }),
        }
    }

    /// The first `spill` slots are nobody's home (at least one slot stays a home; none
    /// without affinity): they come first, after a school's homes, for a unit of work that
    /// borrows a connection where nothing knows its school. So a unit of work that waited
    /// long does not bring its school into a home of other schools, whose backend would
    /// keep it for good; the spill connection's backend is replaced when it outgrows its
    /// budget like any other.
    pub fn with_spill(mut self, spill: usize) -> Self {
        self.spill = if self.homes == 0 {
            0
        } else {
            spill.min(self.size.saturating_sub(1))
        };
        // The spread keeps a home besides them, whichever of the two was set first.
        let spread = self.spread();
        self.with_spread(spread)
    }

    /// Whether `slot` is nobody's home (`with_spill`).
    pub fn is_spill(&self, slot: usize) -> bool {
        slot < self.spill
    }

    /// How many slots are nobody's home (`with_spill`, after its clamping).
    pub fn spill(&self) -> usize {
        self.spill
    }

    /// At most `running` units of work hold slots at once (at least one, at most all).
    pub fn with_running(mut self, running: usize) -> Self {
        self.running = running.clamp(1, self.size.max(1));
        self
    }

    /// Only the first `spread` slots are handed out (at least one home besides the spill
    /// slots) until [`Dispatcher::widen`].
    pub fn with_spread(self, spread: usize) -> Self {
        let spread = spread.clamp(self.spill + 1, self.size.max(1));
        self.spread.store(spread, Ordering::Release);
        let mut state = self.state();
        state.idle.resize(spread, true);
        state.warm.resize_with(spread, HashSet::new);
        drop(state);
        self
    }

    /// Hands out every slot from now on; true when some were not. Waiters queued before
    /// keep their ranking over the slots handed out then (a new slot is no home of theirs,
    /// but they may borrow it); work that comes after ranks all of them.
    pub fn widen(&self) -> bool {
        let mut state = self.state();
        if state.idle.len() >= self.size {
            return false;
        }
        state.idle.resize(self.size, true);
        state.warm.resize_with(self.size, HashSet::new);
        self.spread.store(self.size, Ordering::Release);
        true
    }

    /// How many slots are handed out (the first ones).
    pub fn spread(&self) -> usize {
        self.spread.load(Ordering::Acquire)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What work bound to `school` (or to none) prefers: its ranking of the slots handed
    /// out that may be homes, with the spill slots after its homes.
    pub fn preference(&self, school: Option<u64>) -> Preference {
        let spill = self.spill;
        let Some(key) = school.filter(|_| self.homes > 0) else {
            return Preference::Any { spill };
        };
        // At least one slot besides the spill slots is handed out (`with_spread`).
        let mut order = ranking(key, self.spread());
        let homes = self.homes.min(order.len().saturating_sub(spill));
        if spill > 0 {
            // The spill slots in the school's own order: several of them share the schools.
            let spills: Vec<usize> = order.iter().copied().filter(|&s| s < spill).collect();
            order.retain(|&slot| slot >= spill);
            order.splice(homes..homes, spills);
        }
        Preference::School {
            key,
            ranking: order,
            homes,
        }
    }

    /// An idle slot now (a home, or one the rule lets it borrow at once), or a place in the
    /// queue; `grant` is used only when queued.
    pub fn claim(&self, preference: Preference, grant: Grant) -> Claim {
        let mut state = self.state();
        let room = state.held() < self.running;
        if let Some(slot) = preference.pick(&state.idle).filter(|_| room) {
            let slot = if preference.is_home(slot) {
                Some(slot)
            } else {
                let home = preference.first_home();
                let queued = state.waiters.iter();
                let queued = queued.filter(|w| w.preference.first_home() == home).count();
                state.best_idle(&preference, Lend::of(0, queued))
            };
            if let Some(slot) = slot {
                state.idle[slot] = false;
                metrics::pool_placement(preference.is_home(slot));
                return Claim::Now(slot);
            }
        }
        let id = state.next_id;
        state.next_id += 1;
        state.waiters.push_back(Waiter {
            id,
            preference,
            passed_over: 0,
            waited: 0,
            grant,
        });
        Claim::Queued(id)
    }

    /// Called at each borrowing time a unit of work has waited (`borrow_after`, then
    /// `borrow_any_after`): waiter `id`, still queued, may borrow more widely (the
    /// connections that know its school the first time, any connection from the second),
    /// and takes the idle one that suits it best.
    /// `None`: none is idle (it keeps waiting, and may be lent one that comes back), or its
    /// slot was already sent.
    pub fn borrow(&self, id: u64) -> Option<usize> {
        let mut state = self.state();
        let at = state.waiters.iter().position(|waiter| waiter.id == id)?;
        let waiter = &mut state.waiters[at];
        waiter.waited = waiter.waited.saturating_add(1);
        let lend = Lend::of(waiter.waited, 0);
        if state.held() >= self.running {
            return None;
        }
        let slot = state.best_idle(&state.waiters[at].preference, lend)?;
        let waiter = state.waiters.remove(at).expect("waiter index");
        state.idle[slot] = false;
        metrics::pool_placement(waiter.preference.is_home(slot));
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

    /// `slot`'s connection has served `school` (a new one for it), after forgetting the
    /// schools it had served when `fresh` (a new connection in the slot).
    pub fn served(&self, slot: usize, school: Option<u64>, fresh: bool) {
        let mut state = self.state();
        let Some(warm) = state.warm.get_mut(slot) else {
            return;
        };
        if fresh {
            warm.clear();
        }
        warm.extend(school);
    }

    /// Gives up waiting: true when the waiter was still queued. False means its slot was
    /// already sent, and the caller must take it from its grant (and release it).
    pub fn cancel(&self, id: u64) -> bool {
        let mut state = self.state();
        let queued = state.waiters.iter().position(|waiter| waiter.id == id);
        queued.map(|at| state.waiters.remove(at)).is_some()
    }

    /// `slot` is free again: it, or the running place it frees, to a waiter by the rule;
    /// else idle.
    pub fn release(&self, slot: usize) {
        let mut state = self.state();
        // Waiters may be kept from idle homes only while the running is full.
        let was_full = state.held() >= self.running;
        state.idle[slot] = true;
        while state.held() < self.running {
            let limit = state.idle.len() * PASSED_OVER_LIMIT;
            let window = if was_full { self.running } else { 0 };
            let Some((at, to)) = Self::next_holder(&mut state, slot, limit, window) else {
                return;
            };
            let waiter = state.waiters.remove(at).expect("waiter index");
            let home = waiter.preference.is_home(to);
            state.idle[to] = false;
            if waiter.grant.send(to) {
                metrics::pool_placement(home);
                return;
            }
            state.idle[to] = true;
        }
    }

    /// Which waiter gets a slot now that `slot` is idle, and which slot: the oldest one
    /// passed over `limit` times gets `slot`; else one that may take any connection gets
    /// the idle one that suits it best (`State::long_waiter`); else the oldest whose home
    /// is `slot` (or, when the running was full, `window` > 0, any idle slot:
    /// `State::home_waiter`), else of those the rule lets borrow `slot` the one that ranks
    /// it highest (the oldest of those), else (the running was full) the oldest the rule
    /// lets borrow any idle slot. Waiters older than the one chosen are passed over once
    /// more.
    fn next_holder(
        state: &mut State,
        slot: usize,
        limit: usize,
        window: usize,
    ) -> Option<(usize, usize)> {
        let oldest = state.waiters.front()?;
        if oldest.passed_over >= limit {
            return Some((0, slot));
        }
        let any_idle = window > 0;
        let home_of = || {
            if any_idle {
                return state.home_waiter(slot, window);
            }
            let mut waiters = state.waiters.iter();
            let at = waiters.position(|w| w.preference.is_home(slot));
            at.map(|at| (at, slot))
        };
        let lender = || state.lender_of(slot).map(|at| (at, slot));
        // Those that may take any connection first (`State::long_waiter`).
        let chosen = state
            .long_waiter()
            .or_else(home_of)
            .or_else(lender)
            .or_else(|| any_idle.then(|| state.borrowing_waiter()).flatten());
        let (at, to) = chosen?;
        for older in state.waiters.iter_mut().take(at) {
            older.passed_over += 1;
        }
        Some((at, to))
    }

    /// Slots idle now.
    pub fn idle_count(&self) -> usize {
        self.state().idle.iter().filter(|&&free| free).count()
    }
}

#[cfg(test)]
mod tests;
