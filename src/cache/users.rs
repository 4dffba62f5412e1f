//! Each token user's row, cached so that authenticating a request costs no query: the
//! active flag and token version (what makes a token usable), the school and the names.
//!
//! Dropped per user at once by this process's user writes, and by other processes'
//! through the `users` NOTIFY that a trigger on `public.users` sends for every update and
//! delete (the change listener forwards it): a deactivation or password change made
//! anywhere stops the user's tokens within the listener's poll interval (250 ms), as for
//! roles.

use std::sync::Arc;

use uuid::Uuid;

use crate::{cache::Cache, db::models::User};

pub struct UserCache(Cache<Uuid, Arc<User>>);

impl Default for UserCache {
    fn default() -> Self {
        Self(Cache::new("users"))
    }
}

impl UserCache {
    /// The cached row of `id`, if any.
    pub fn get(&self, id: Uuid) -> Option<Arc<User>> {
        self.0.get(&id)
    }

    /// The generation to pass to `insert` for a load that starts now.
    pub fn generation(&self) -> u64 {
        self.0.generation()
    }

    /// Caches a row loaded since `generation`, unless an invalidation came in between.
    pub fn insert(&self, generation: u64, user: &User) {
        self.0.insert(generation, user.id, Arc::new(user.clone()));
    }

    pub fn invalidate(&self, id: Uuid) {
        self.0.remove(&id);
    }

    pub fn invalidate_all(&self) {
        self.0.clear();
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
