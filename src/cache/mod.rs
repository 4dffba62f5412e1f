//! The in-process caches the request stages read instead of querying: token users
//! ([`users`], for authenticate) and their roles per school ([`roles`], for require). Both
//! live in `AppState`; writes (and other processes' NOTIFYs, `db::notify`) drop entries.
//!
//! The shape they share: a bounded map whose invalidations bump a generation, so that a
//! value loaded while an invalidation raced it is not kept.

pub mod api_keys;
pub mod roles;
pub mod users;

use std::{
    borrow::Borrow,
    collections::HashMap,
    hash::Hash,
    sync::{
        RwLock,
        atomic::{AtomicU64, Ordering},
    },
};

use crate::observability::metrics;

/// Past this many entries a cache starts over rather than grow without bound.
const MAX_ENTRIES: usize = 100_000;

pub struct Cache<K, V> {
    /// The cache's name in metrics.
    name: &'static str,
    entries: RwLock<HashMap<K, V>>,
    generation: AtomicU64,
}

impl<K: Eq + Hash, V: Clone> Cache<K, V> {
    pub fn new(name: &'static str) -> Self {
        Self {
            name,
            entries: RwLock::new(HashMap::new()),
            generation: AtomicU64::new(0),
        }
    }

    pub fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        let hit = self
            .entries
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .cloned();
        metrics::cache_lookup(self.name, hit.is_some());
        hit
    }

    /// Take it before loading a value; `insert` keeps the value only if no invalidation
    /// came in between.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    pub fn insert(&self, generation: u64, key: K, value: V) {
        let mut entries = self.entries.write().unwrap_or_else(|e| e.into_inner());
        if self.generation.load(Ordering::Acquire) != generation {
            return;
        }
        if entries.len() >= MAX_ENTRIES {
            entries.clear();
        }
        entries.insert(key, value);
    }

    /// Drops one entry.
    pub fn remove<Q>(&self, key: &Q)
    where
        K: Borrow<Q>,
        Q: Eq + Hash + ?Sized,
    {
        metrics::cache_invalidated(self.name);
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.entries
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(key);
    }

    /// Drops the entries `keep` refuses.
    pub fn retain(&self, keep: impl FnMut(&K, &mut V) -> bool) {
        metrics::cache_invalidated(self.name);
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.entries
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .retain(keep);
    }

    pub fn clear(&self) {
        self.retain(|_, _| false);
    }
}

#[cfg(test)]
mod tests {
    use super::Cache;

    #[test]
    fn a_load_that_raced_an_invalidation_is_not_kept() {
        let cache: Cache<u32, &str> = Cache::new("test");
        let before = cache.generation();
        cache.insert(before, 1, "one");
        assert_eq!(cache.get(&1), Some("one"));
        let loading = cache.generation();
        cache.remove(&1);
        cache.insert(loading, 1, "stale");
        assert_eq!(cache.get(&1), None);
        cache.insert(cache.generation(), 1, "fresh");
        assert_eq!(cache.get(&1), Some("fresh"));
        cache.clear();
        assert_eq!(cache.get(&1), None);
    }
}
