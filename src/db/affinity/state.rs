//! The dispatcher's state under its lock: which slots are idle, which schools each slot's
//! connection has served, and the waiting units of work; and the rule's questions about
//! it (who may take which slot now). `Dispatcher` (the parent module) decides with them.

use std::collections::{HashSet, VecDeque};

use super::{BORROW_QUEUE, Grant, Preference};

/// Which connections that are not its homes a waiting unit of work may take now (the rule
/// in `affinity`'s module comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Lend {
    None,
    /// The connections that have served its school before (warm).
    Warm,
    Any,
}

impl Lend {
    /// By the rule: `waited` of the borrowing times have passed (`borrow_after`, then
    /// `borrow_any_after`: the caller's [`Dispatcher::borrow`](super::Dispatcher::borrow)
    /// calls), `queued_ahead` older units of work wait for the same home.
    pub(super) fn of(waited: u8, queued_ahead: usize) -> Self {
        match waited {
            2.. => Self::Any,
            1 => Self::Warm,
            0 if queued_ahead >= BORROW_QUEUE => Self::Warm,
            0 => Self::None,
        }
    }

    /// Whether it may take a slot; `warm`: the slot has served its school before.
    fn allows(self, preference: &Preference, warm: bool) -> bool {
        match (self, preference) {
            (Self::Any, _) | (_, Preference::Any { .. }) => true,
            (Self::None, _) => false,
            (Self::Warm, _) => warm,
        }
    }
}

pub(super) struct Waiter {
    pub(super) id: u64,
    pub(super) preference: Preference,
    /// Connections that went to younger waiters while this one waited.
    pub(super) passed_over: usize,
    /// How many of the borrowing times have passed (`Dispatcher::borrow`): 1
    /// (`borrow_after`), it may borrow a warm connection; 2 (`borrow_any_after`), any.
    pub(super) waited: u8,
    pub(super) grant: Grant,
}

pub(super) struct State {
    /// One entry per slot the schools are spread over (`Dispatcher::spread`).
    pub(super) idle: Vec<bool>,
    /// The schools each slot's connection has served (`Slots::checkout` reports them):
    /// lending a connection to one of them costs its backend nothing new.
    pub(super) warm: Vec<HashSet<u64>>,
    pub(super) waiters: VecDeque<Waiter>,
    pub(super) next_id: u64,
}

impl State {
    /// Whether `slot`'s connection has served this school's work before.
    pub(super) fn is_warm(&self, slot: usize, preference: &Preference) -> bool {
        preference
            .key()
            .is_some_and(|key| self.warm[slot].contains(&key))
    }

    /// How well `slot` suits a waiter the rule lets take it (lower is better: warm first,
    /// then by its ranking); `None`: the rule does not let it. `warm_always`: a slot that
    /// has served the school may go to it whatever `lend` says (a connection coming back).
    pub(super) fn standing(
        &self,
        slot: usize,
        preference: &Preference,
        lend: Lend,
        warm_always: bool,
    ) -> Option<(bool, usize)> {
        let warm = self.is_warm(slot, preference);
        let allowed = (warm && warm_always) || lend.allows(preference, warm);
        allowed.then(|| (!warm, preference.rank_of(slot)))
    }

    /// The idle slot the rule lets a unit of work take that suits it best.
    pub(super) fn best_idle(&self, preference: &Preference, lend: Lend) -> Option<usize> {
        let idle = (0..self.idle.len()).filter(|&slot| self.idle[slot]);
        idle.filter_map(|slot| Some((self.standing(slot, preference, lend, false)?, slot)))
            .min()
            .map(|(_, slot)| slot)
    }

    /// Slots held (not idle): at most `Dispatcher::running` by units of work, and the
    /// pool's upkeep may hold one more.
    pub(super) fn held(&self) -> usize {
        self.idle.iter().filter(|&&free| !free).count()
    }

    /// Each waiter, oldest first, with what the rule lets it borrow now (its count of older
    /// waiters for the same first home decides a backed-up home); platform work, which
    /// has every slot as home, is left out.
    pub(super) fn lenders(&self) -> impl Iterator<Item = (usize, &Preference, Lend)> {
        let mut queued = vec![0; self.idle.len()];
        self.waiters
            .iter()
            .enumerate()
            .filter_map(move |(at, waiter)| {
                let home = waiter.preference.first_home()?;
                let lend = Lend::of(waiter.waited, queued[home]);
                queued[home] += 1;
                Some((at, &waiter.preference, lend))
            })
    }

    /// The oldest waiter with an idle home, and that home (`returning` first); but one
    /// whose home is `returning` among the `window` oldest comes before older ones: its
    /// lane's thread is awake, where another home's would have to be woken.
    pub(super) fn home_waiter(&self, returning: usize, window: usize) -> Option<(usize, usize)> {
        let mut oldest = self.waiters.iter().take(window);
        if let Some(at) = oldest.position(|waiter| waiter.preference.is_home(returning)) {
            return Some((at, returning));
        }
        self.waiters.iter().enumerate().find_map(|(at, waiter)| {
            let preference = &waiter.preference;
            if preference.is_home(returning) {
                return Some((at, returning));
            }
            let idle_home = (0..self.idle.len()).find(|&s| self.idle[s] && preference.is_home(s));
            idle_home.map(|slot| (at, slot))
        })
    }

    /// The oldest waiter the rule lets borrow an idle connection, and the one that suits
    /// it best.
    pub(super) fn borrowing_waiter(&self) -> Option<(usize, usize)> {
        self.lenders().find_map(|(at, preference, lend)| {
            self.best_idle(preference, lend).map(|slot| (at, slot))
        })
    }

    /// Of the waiters that may take any connection (they have waited `borrow_any_after`),
    /// the one an idle connection suits best, and that connection (warm
    /// first, then by its ranking; the oldest of equals).
    pub(super) fn long_waiter(&self) -> Option<(usize, usize)> {
        let may_take_any = |waiter: &Waiter| Lend::of(waiter.waited, 0) == Lend::Any;
        if !self.waiters.iter().any(may_take_any) {
            return None;
        }
        let long = self.lenders().filter(|&(_, _, lend)| lend == Lend::Any);
        long.filter_map(|(at, preference, lend)| {
            let slot = self.best_idle(preference, lend)?;
            Some((self.standing(slot, preference, lend, false)?, at, slot))
        })
        .min()
        .map(|(_, at, slot)| (at, slot))
    }

    /// Of the waiters the rule lets borrow `slot`, the one it suits best (the oldest of
    /// equals).
    pub(super) fn lender_of(&self, slot: usize) -> Option<usize> {
        let standings = self.lenders().filter_map(|(at, preference, lend)| {
            Some((self.standing(slot, preference, lend, true)?, at))
        });
        // The best standing; of equals, the oldest (`min` compares `at` next).
        standings.min().map(|(_, at)| at)
    }
}
