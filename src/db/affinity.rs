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
//! The rule: a school's work waits for its home while the home's queue is short, and
//! borrows another connection only when the home is really backed up.
//! - a unit of work that arrives while one of its homes is idle takes it.
//! - it may *borrow* its next choice (the first connection after its homes in its school's
//!   ranking), when idle, once its home is backed up: [`BorrowRule::queue`] or more other
//!   units of work wait for the same home (so some of them wait for at least that many
//!   units of work plus the running one). It may borrow any idle connection (the first in
//!   its ranking) once it has waited [`BorrowRule::after`], when its own school holds its
//!   home (one busy school runs side by side as its turns allow), or when about to time
//!   out. Until then
//!   it waits for its home even while other connections are idle: a short wait for a
//!   warm backend costs less than a backend that meets every school (its caches grow with
//!   each one, and the memory budget recycles it, cold, several times a pass over the
//!   fleet: docs/performance.md, "Fleet memory").
//! - a connection that comes back goes to the oldest waiting unit of work whose home it is;
//!   when it is nobody's home, to the waiter that may borrow and ranks it highest (the
//!   oldest of those), so a school that borrows borrows its next choices, the same few
//!   connections every time; when nobody may borrow yet, it stays idle.
//! - a waiter that has seen [`PASSED_OVER_LIMIT`] times the pool's size of connections go to
//!   younger waiters gets the next one whatever it is, so nobody waits for long behind its
//!   own busy homes.
//!
//! The waiting side asks [`Dispatcher::borrow`] again every [`Dispatcher::borrow_after`]
//! (`db::lanes`, `db::slots`), so a unit of work whose home is held by a long one borrows
//! an idle connection even when no other connection comes back meanwhile.
//!
//! Platform work (no school) has every connection as home. `homes == 0` switches affinity
//! off: every connection is everyone's home, and waiters are served in arrival order.

use std::{
    collections::VecDeque,
    sync::{Mutex, mpsc},
    time::{Duration, Instant},
};

use tokio::sync::oneshot;

use crate::observability::metrics;

mod preference;

pub use preference::{Preference, ranking, school_key};

/// When a unit of work whose homes are busy may borrow another connection
/// (`DB_POOL_BORROW_QUEUE`, `DB_POOL_BORROW_AFTER_MS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BorrowRule {
    /// Borrow when at least this many other units of work wait for the same home.
    pub queue: usize,
    /// Borrow after waiting this long, whatever the home's queue.
    pub after: Duration,
}

impl Default for BorrowRule {
    /// Two others plus the running one is about three units of work's wait (a few ms under
    /// load). 50 ms means a long unit of work holds the home, not a queue: with 10 ms, under
    /// saturation most waits passed it and 23 % (6 connections) to 37 % (12) of units of
    /// work borrowed; with 50 ms, 14-16 % on 12 (docs/performance.md, "Fleet memory, run of
    /// 2026-11-26 night").
    fn default() -> Self {
        Self {
            queue: 2,
            after: Duration::from_millis(50),
        }
    }
}

/// How many times the pool's size a waiter may be passed over by younger waiters taking
/// their homes before it gets the next connection, home or not.
pub const PASSED_OVER_LIMIT: usize = 4;

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

/// The outcome of [`Dispatcher::borrow`].
#[derive(Debug, PartialEq, Eq)]
pub enum Borrow {
    /// This idle slot is now the caller's.
    Now(usize),
    /// Still queued: not allowed to borrow yet, or nothing idle. Ask again later.
    Wait,
    /// No longer queued: its slot was already sent through the grant (or it cancelled).
    Granted,
}

struct Waiter {
    id: u64,
    preference: Preference,
    since: Instant,
    /// Connections that went to younger waiters while this one waited.
    passed_over: usize,
    grant: Grant,
}

struct State {
    idle: Vec<bool>,
    /// Which school's work holds each slot (`None`: idle, or platform work).
    holder: Vec<Option<u64>>,
    waiters: VecDeque<Waiter>,
    /// How many queued waiters wait for each slot as their home (`Preference::queue`).
    queued: Vec<usize>,
    next_id: u64,
}

impl State {
    /// `slot` is now held by work of this preference.
    fn hold(&mut self, slot: usize, preference: &Preference) {
        self.idle[slot] = false;
        self.holder[slot] = preference.key();
    }

    fn remove(&mut self, at: usize) -> Option<Waiter> {
        let waiter = self.waiters.remove(at)?;
        if let Some(home) = waiter.preference.queue() {
            self.queued[home] -= 1;
        }
        Some(waiter)
    }
}

/// Hands out the slots `0..size`, one holder each, by the rule in the module comment.
pub struct Dispatcher {
    homes: usize,
    size: usize,
    rule: BorrowRule,
    state: Mutex<State>,
}

impl Dispatcher {
    /// `size` slots, all idle; each school has `homes` of them (0: no affinity); the
    /// default borrowing rule.
    pub fn new(size: usize, homes: usize) -> Self {
        Self::with_rule(size, homes, BorrowRule::default())
    }

    pub fn with_rule(size: usize, homes: usize, rule: BorrowRule) -> Self {
        Self {
            homes: homes.min(size),
            size,
            rule,
            state: Mutex::new(State {
                idle: vec![true; size],
                holder: vec![None; size],
                waiters: VecDeque::new(),
                queued: vec![0; size],
                next_id: 0,
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How often a queued unit of work asks [`Self::borrow`] again (at least every
    /// millisecond: 0 would spin).
    pub fn borrow_after(&self) -> Duration {
        self.rule.after.max(Duration::from_millis(1))
    }

    /// What work bound to `school` (or to none) prefers.
    pub fn preference(&self, school: Option<u64>) -> Preference {
        match school {
            Some(key) if self.homes > 0 => Preference::school(key, self.size, self.homes),
            _ => Preference::Any,
        }
    }

    /// Which connections a waiter may take that are not its home, as the worst rank in its
    /// school's order it may take (`None`: only its home). When other units of work wait for
    /// the same home (`state.queued` counts it too when `itself` is 1), its next choice
    /// only: a school borrows the same connection every time, so each connection serves its
    /// homes and the schools it is next choice of, not any. Any connection when its own
    /// school already holds the home (the school is busy: its units of work run side by
    /// side as its turns allow, as before; one school on a few connections costs little),
    /// when it has waited long, or has been passed over too often.
    fn may_borrow(
        &self,
        state: &State,
        waiter: &Waiter,
        itself: usize,
        now: Instant,
    ) -> Option<usize> {
        let (others, own_school_at_home) = waiter.preference.queue().map_or((0, false), |home| {
            let own =
                waiter.preference.key().is_some() && state.holder[home] == waiter.preference.key();
            (state.queued[home] - itself, own)
        });
        if own_school_at_home
            || now.duration_since(waiter.since) >= self.rule.after
            || waiter.passed_over >= self.size * PASSED_OVER_LIMIT
        {
            Some(usize::MAX)
        } else if others >= self.rule.queue {
            Some(self.homes)
        } else {
            None
        }
    }

    /// An idle home now, an idle connection to borrow when the home is backed up, or a
    /// place in the queue; `grant` is used only when queued.
    pub fn claim(&self, preference: Preference, grant: Grant) -> Claim {
        let mut state = self.state();
        if let Some(slot) = preference.pick_home(&state.idle) {
            state.hold(slot, &preference);
            metrics::pool_placement(true);
            return Claim::Now(slot);
        }
        let now = Instant::now();
        let id = state.next_id;
        state.next_id += 1;
        let waiter = Waiter {
            id,
            preference,
            since: now,
            passed_over: 0,
            grant,
        };
        if let Some(worst) = self.may_borrow(&state, &waiter, 0, now) {
            let allowed = preference.pick(&state.idle);
            if let Some(slot) = allowed.filter(|&slot| preference.rank_of(slot) <= worst) {
                state.hold(slot, &preference);
                metrics::pool_placement(false);
                return Claim::Now(slot);
            }
        }
        if let Some(home) = preference.queue() {
            state.queued[home] += 1;
        }
        state.waiters.push_back(waiter);
        Claim::Queued(id)
    }

    /// Waiter `id`, still queued, borrows the first idle connection in its ranking if the
    /// rule lets it now (its home backed up, or it waited long enough).
    pub fn borrow(&self, id: u64) -> Borrow {
        self.borrow_if(id, false)
    }

    /// Waiter `id`, still queued, borrows the first idle connection in its ranking whatever
    /// the rule: it is about to give up (an idle connection beats a timeout).
    pub fn borrow_anyway(&self, id: u64) -> Borrow {
        self.borrow_if(id, true)
    }

    fn borrow_if(&self, id: u64, anyway: bool) -> Borrow {
        let mut state = self.state();
        let Some(at) = state.waiters.iter().position(|waiter| waiter.id == id) else {
            return Borrow::Granted;
        };
        let waiter = &state.waiters[at];
        let worst = match anyway {
            true => Some(usize::MAX),
            false => self.may_borrow(&state, waiter, 1, Instant::now()),
        };
        let Some(worst) = worst else {
            return Borrow::Wait;
        };
        let allowed = waiter.preference.pick(&state.idle);
        let Some(slot) = allowed.filter(|&slot| waiter.preference.rank_of(slot) <= worst) else {
            return Borrow::Wait;
        };
        let home = waiter.preference.is_home(slot);
        let preference = waiter.preference;
        state.remove(at);
        state.hold(slot, &preference);
        metrics::pool_placement(home);
        Borrow::Now(slot)
    }

    /// Takes `slot` if it is idle (the pool's upkeep, between units of work).
    pub fn claim_idle(&self, slot: usize) -> bool {
        let mut state = self.state();
        let idle = state.idle.get(slot).copied().unwrap_or(false);
        if idle {
            state.hold(slot, &Preference::Any);
        }
        idle
    }

    /// Gives up waiting: true when the waiter was still queued. False means its slot was
    /// already sent, and the caller must take it from its grant (and release it).
    pub fn cancel(&self, id: u64) -> bool {
        let mut state = self.state();
        let queued = state.waiters.iter().position(|waiter| waiter.id == id);
        queued.and_then(|at| state.remove(at)).is_some()
    }

    /// `slot` is free again: to a waiter by the rule, else idle.
    pub fn release(&self, slot: usize) {
        let mut state = self.state();
        let now = Instant::now();
        loop {
            let Some(at) = self.next_holder(&mut state, slot, now) else {
                state.idle[slot] = true;
                state.holder[slot] = None;
                return;
            };
            let waiter = state.remove(at).expect("waiter index");
            let home = waiter.preference.is_home(slot);
            state.holder[slot] = waiter.preference.key();
            if waiter.grant.send(slot) {
                metrics::pool_placement(home);
                return;
            }
        }
    }

    /// Which waiter gets `slot`: the oldest one passed over too often, else the oldest
    /// whose home it is, else, of those that may borrow, the one that ranks it highest (the
    /// oldest of those); `None`: nobody may have it yet. Waiters older than the one chosen
    /// are passed over once more.
    fn next_holder(&self, state: &mut State, slot: usize, now: Instant) -> Option<usize> {
        let oldest = state.waiters.front()?;
        if oldest.passed_over >= self.size * PASSED_OVER_LIMIT {
            return Some(0);
        }
        let home_of = state
            .waiters
            .iter()
            .position(|waiter| waiter.preference.is_home(slot));
        let at = match home_of {
            Some(at) => at,
            None => {
                let mut best: Option<(usize, usize)> = None;
                for (at, waiter) in state.waiters.iter().enumerate() {
                    let rank = waiter.preference.rank_of(slot);
                    if self
                        .may_borrow(state, waiter, 1, now)
                        .is_none_or(|worst| rank > worst)
                    {
                        continue;
                    }
                    // Strictly better only: the first of equals is the oldest.
                    if best.is_none_or(|(_, best_rank)| rank < best_rank) {
                        best = Some((at, rank));
                    }
                }
                best?.0
            }
        };
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
