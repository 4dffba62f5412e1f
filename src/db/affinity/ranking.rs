//! Which connections a school's work prefers: each school ranks the pool's slots by
//! rendezvous hashing (`ranking`); its homes are the first of them (see `affinity`).

use std::hash::{DefaultHasher, Hash, Hasher};

use crate::db::schema_name::SchemaName;

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
    /// Any connection is as good as any other (platform work, or affinity off), but the
    /// first `spill` slots (nobody's home, kept for long waiters) come last.
    Any { spill: usize },
    /// A school's (keyed `key`): slots in its order of preference, the first `homes` of
    /// them its homes.
    School {
        key: u64,
        ranking: Vec<usize>,
        homes: usize,
    },
}

impl Preference {
    pub(super) fn is_home(&self, slot: usize) -> bool {
        match self {
            Self::Any { .. } => true,
            Self::School { ranking, homes, .. } => ranking[..*homes].contains(&slot),
        }
    }

    /// Where `slot` stands in this order of preference (0: first).
    pub(super) fn rank_of(&self, slot: usize) -> usize {
        match self {
            Self::Any { spill } => usize::from(slot < *spill),
            Self::School { ranking, .. } => ranking
                .iter()
                .position(|&s| s == slot)
                .unwrap_or(usize::MAX),
        }
    }

    /// The first idle slot in this order of preference.
    pub(super) fn pick(&self, idle: &[bool]) -> Option<usize> {
        match self {
            Self::Any { spill } => {
                let last = (*spill).min(idle.len());
                let free = |slot: &usize| idle[*slot];
                (last..idle.len()).chain(0..last).find(free)
            }
            Self::School { ranking, .. } => ranking.iter().copied().find(|&slot| idle[slot]),
        }
    }

    /// The school's first home: the queue a waiter counts itself in.
    pub(super) fn first_home(&self) -> Option<usize> {
        match self {
            Self::Any { .. } => None,
            Self::School { ranking, .. } => ranking.first().copied(),
        }
    }

    pub(super) fn key(&self) -> Option<u64> {
        match self {
            Self::Any { .. } => None,
            Self::School { key, .. } => Some(*key),
        }
    }
}
