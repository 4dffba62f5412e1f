//! A school's order of preference over the pool's connections: rendezvous hashing, computed
//! on the fly (nothing allocated per unit of work: this is on every request's path).

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

/// The slots `0..size` in the school's order of preference (for tests and tools; the
/// dispatcher ranks slots on the fly, without allocating).
pub fn ranking(key: u64, size: usize) -> Vec<usize> {
    let mut slots: Vec<usize> = (0..size).collect();
    slots.sort_by_key(|&slot| std::cmp::Reverse(score(key, slot)));
    slots
}

/// Which connections a unit of work prefers. Nothing is allocated: a school's ranking is
/// its scores, computed when needed (a few multiplications per slot, pools are small).
#[derive(Clone, Copy, Debug)]
pub enum Preference {
    /// Any connection is as good as any other (platform work, or affinity off).
    Any,
    /// A school's: slots by descending score for `key`, the first `homes` of them its homes;
    /// `first` is its first choice.
    School {
        key: u64,
        size: usize,
        homes: usize,
        first: usize,
    },
}

impl Preference {
    pub(super) fn school(key: u64, size: usize, homes: usize) -> Self {
        let first = (0..size).max_by_key(|&slot| score(key, slot)).unwrap_or(0);
        Self::School {
            key,
            size,
            homes,
            first,
        }
    }

    pub(super) fn is_home(&self, slot: usize) -> bool {
        match *self {
            Self::Any => true,
            Self::School {
                homes: 1, first, ..
            } => slot == first,
            Self::School { homes, .. } => self.rank_of(slot) < homes,
        }
    }

    /// Where `slot` stands in this order of preference (0: first).
    pub(super) fn rank_of(&self, slot: usize) -> usize {
        match *self {
            Self::Any => 0,
            Self::School { key, size, .. } if slot < size => {
                let own = score(key, slot);
                (0..size).filter(|&other| score(key, other) > own).count()
            }
            Self::School { .. } => usize::MAX,
        }
    }

    /// The first idle slot in this order of preference.
    pub(super) fn pick(&self, idle: &[bool]) -> Option<usize> {
        match *self {
            Self::Any => idle.iter().position(|&free| free),
            Self::School { first, .. } if idle.get(first) == Some(&true) => Some(first),
            Self::School { key, .. } => (0..idle.len())
                .filter(|&slot| idle[slot])
                .max_by_key(|&slot| score(key, slot)),
        }
    }

    /// The first idle home (homes are the first of the ranking: when the first idle slot
    /// is not a home, no home is idle).
    pub(super) fn pick_home(&self, idle: &[bool]) -> Option<usize> {
        match *self {
            Self::School {
                homes: 1, first, ..
            } => (idle.get(first) == Some(&true)).then_some(first),
            _ => self.pick(idle).filter(|&slot| self.is_home(slot)),
        }
    }

    /// The school's key (`None`: platform work).
    pub(super) fn key(&self) -> Option<u64> {
        match *self {
            Self::Any => None,
            Self::School { key, .. } => Some(key),
        }
    }

    /// The home whose queue this work joins (`None`: platform work, any slot will do).
    pub(super) fn queue(&self) -> Option<usize> {
        match *self {
            Self::Any => None,
            Self::School { first, .. } => Some(first),
        }
    }
}
