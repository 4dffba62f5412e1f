//! The one map of per-school (or per-client) state.

use std::{collections::HashMap, hash::Hash, sync::Mutex};

/// Above this many keys, the next new key first drops the idle entries.
const PRUNE_AT: usize = 1024;

/// State per key (a school's schema name, a client's address), made on first use. The map
/// stays small: once it holds [`PRUNE_AT`] keys, adding one drops every entry its owner
/// calls idle (one that holds nothing back and would be made the same way again).
pub struct PerKey<K, V> {
    entries: Mutex<HashMap<K, V>>,
}

impl<K: Hash + Eq + Clone, V> Default for PerKey<K, V> {
    fn default() -> Self {
        Self {
            entries: Mutex::default(),
        }
    }
}

impl<K: Hash + Eq + Clone, V> PerKey<K, V> {
    /// Runs `with` on `key`'s entry (made by `make` when missing), under the map's lock.
    /// `idle` says which entries may be dropped when the map is full.
    pub fn with<R>(
        &self,
        key: &K,
        make: impl FnOnce() -> V,
        idle: impl Fn(&V) -> bool,
        with: impl FnOnce(&mut V) -> R,
    ) -> R {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(entry) = entries.get_mut(key) {
            return with(entry);
        }
        if entries.len() >= PRUNE_AT {
            entries.retain(|_, entry| !idle(entry));
        }
        with(entries.entry(key.clone()).or_insert_with(make))
    }

    /// How many keys have an entry.
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::{PRUNE_AT, PerKey};

    #[test]
    fn a_full_map_drops_its_idle_entries_before_adding_a_key() {
        let map: PerKey<usize, bool> = PerKey::default();
        for key in 0..PRUNE_AT {
            // Every other entry busy.
            map.with(&key, || key % 2 == 0, |busy| !busy, |_| ());
        }
        assert_eq!(map.len(), PRUNE_AT);
        let made = map.with(&PRUNE_AT, || true, |busy| !busy, |busy| *busy);
        assert!(made);
        assert_eq!(map.len(), PRUNE_AT / 2 + 1, "the idle half is gone");
        assert!(
            map.with(&0, || false, |busy| !busy, |busy| *busy),
            "a busy entry is kept"
        );
    }
}
