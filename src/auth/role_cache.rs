//! Each user's roles and permissions per school, cached so that authorising a request
//! costs no query. Dropped per school at once by this process's role writes, and by other
//! processes' through the `school_roles` NOTIFY that every role write sends
//! (`roles::announce_change`; the tenant directory's listener forwards it).

use std::{
    collections::HashMap,
    sync::{
        RwLock,
        atomic::{AtomicU64, Ordering},
    },
};

use uuid::Uuid;

use crate::{
    auth::{permissions::PermissionSet, roles},
    error::ApiResult,
    observability::metrics,
    tenancy::TenantConn,
};

/// The cache's name in metrics.
const CACHE: &str = "roles";

/// Past this many entries the cache starts over rather than grow without bound.
const MAX_ENTRIES: usize = 100_000;

/// A user's role names and what they grant, in one school.
type Grants = (Vec<String>, PermissionSet);

#[derive(Default)]
pub struct RoleCache {
    /// (schema name, user id) → grants.
    entries: RwLock<HashMap<(String, Uuid), Grants>>,
    /// Bumped by every invalidation, so a load that raced one is not cached.
    generation: AtomicU64,
}

impl RoleCache {
    /// The user's role names and permissions in the connection's school.
    pub fn get_or_load(
        &self,
        conn: &mut TenantConn,
        user_id: Uuid,
    ) -> ApiResult<(Vec<String>, PermissionSet)> {
        let key = (conn.tenant().schema_name.as_str().to_owned(), user_id);
        if let Some(hit) = self
            .entries
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            metrics::cache_lookup(CACHE, true);
            return Ok(hit.clone());
        }
        metrics::cache_lookup(CACHE, false);
        let generation = self.generation.load(Ordering::Acquire);
        let loaded = roles::for_user(conn, user_id)?;
        let mut entries = self.entries.write().unwrap_or_else(|e| e.into_inner());
        if self.generation.load(Ordering::Acquire) == generation {
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
            entries.insert(key, loaded.clone());
        }
        Ok(loaded)
    }

    /// Drops what is cached for one school.
    pub fn invalidate_school(&self, schema: &str) {
        metrics::cache_invalidated(CACHE);
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.entries
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|(s, _), _| s != schema);
    }

    /// Drops everything.
    pub fn invalidate_all(&self) {
        metrics::cache_invalidated(CACHE);
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.entries
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}

/// Role writes of any process (`roles::announce_change` sends `school_roles`).
impl crate::db::notify::Subscriber for RoleCache {
    fn channel(&self) -> &'static str {
        "school_roles"
    }

    fn notified(&self, schema: &str) {
        self.invalidate_school(schema);
    }

    fn missed(&self) {
        self.invalidate_all();
    }
}
