//! Each token user's row, cached so that authenticating a request costs no query: the
//! active flag and token version (what makes a token usable), the school and the names.
//!
//! Dropped per user at once by this process's user writes, and by other processes'
//! through the `users` NOTIFY that a trigger on `public.users` sends for every update and
//! delete (the change listener forwards it): a deactivation or password change made
//! anywhere stops the user's tokens within the listener's poll interval (250 ms), as for
//! roles. Bounded: past `MAX_ENTRIES` the cache starts over.

use std::{
    collections::HashMap,
    sync::{
        Arc, RwLock,
        atomic::{AtomicU64, Ordering},
    },
};

use uuid::Uuid;

use crate::{db::models::User, observability::metrics};

const MAX_ENTRIES: usize = 100_000;
/// The cache's name in metrics.
const CACHE: &str = "users";

#[derive(Default)]
pub struct UserCache {
    entries: RwLock<HashMap<Uuid, Arc<User>>>,
    /// Bumped by every invalidation, so a load that raced one is not cached.
    generation: AtomicU64,
}

impl UserCache {
    /// The cached row of `id`, if any.
    pub fn get(&self, id: Uuid) -> Option<Arc<User>> {
        let hit = self
            .entries
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
            .cloned();
        metrics::cache_lookup(CACHE, hit.is_some());
        hit
    }

    /// The generation to pass to `insert` for a load that starts now.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Caches a row loaded since `generation`, unless an invalidation came in between.
    pub fn insert(&self, generation: u64, user: &User) {
        let mut entries = self.entries.write().unwrap_or_else(|e| e.into_inner());
        if self.generation.load(Ordering::Acquire) != generation {
            return;
        }
        if entries.len() >= MAX_ENTRIES {
            entries.clear();
        }
        entries.insert(user.id, Arc::new(user.clone()));
    }

    pub fn invalidate(&self, id: Uuid) {
        metrics::cache_invalidated(CACHE);
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.entries
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
    }

    pub fn invalidate_all(&self) {
        metrics::cache_invalidated(CACHE);
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.entries
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}

/// Updates and deletes of `public.users` by any process (a trigger sends `users`).
impl crate::db::notify::Subscriber for UserCache {
    fn channel(&self) -> &'static str {
        "users"
    }

    fn notified(&self, payload: &str) {
        match Uuid::parse_str(payload) {
            Ok(id) => self.invalidate(id),
            Err(_) => self.invalidate_all(),
        }
    }

    fn missed(&self) {
        self.invalidate_all();
    }
}
