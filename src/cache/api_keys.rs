//! Each API key's record, cached by the key's keyed hash, so that a request with a known
//! key costs no platform query before the school's unit of work (a query there was a
//! second hop to the pool per request: an API key's read ran at 0.65x a staff read).
//!
//! Dropped at once by this process's key writes (all of them: revocations are rare), and
//! by other processes' through the `api_keys` NOTIFY that a trigger on `public.api_keys`
//! sends when a key is revoked, deleted or otherwise changed (not for `last_used_at`):
//! a key revoked anywhere stops working within the listener's poll interval (250 ms), as
//! for users and roles. Expiry is checked at every use, cached or not.

use std::sync::{
    Arc,
    atomic::{AtomicI64, Ordering},
};

use chrono::{DateTime, Utc};

use crate::{
    auth::api_key::{ApiKeyRecord, LAST_USED_GRANULARITY_SECS},
    cache::Cache,
};

/// A key's record as loaded, and when this process last recorded a use of it.
#[derive(Debug)]
pub struct CachedKey {
    /// Shared with the requests' callers (`Principal::ApiKey`): not copied per request.
    pub record: Arc<ApiKeyRecord>,
    /// Unix seconds of this process's last write of `last_used_at` (0: none).
    recorded_use: AtomicI64,
}

impl CachedKey {
    pub fn new(record: ApiKeyRecord) -> Self {
        Self {
            record: Arc::new(record),
            recorded_use: AtomicI64::new(0),
        }
    }

    /// Whether this use is to be recorded (`last_used_at`): when neither the record nor
    /// this process has one within the granularity. True for one caller only, so a busy
    /// key is written once a minute per process, not by every request in between.
    pub fn claim_use(&self, now: DateTime<Utc>) -> bool {
        let now = now.timestamp();
        let stored = self.record.last_used_at.map_or(0, |at| at.timestamp());
        let recorded = self.recorded_use.load(Ordering::Acquire);
        if now - stored.max(recorded) < LAST_USED_GRANULARITY_SECS {
            return false;
        }
        self.recorded_use
            .compare_exchange(recorded, now, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}

pub struct ApiKeyCache(Cache<String, Arc<CachedKey>>);

impl Default for ApiKeyCache {
    fn default() -> Self {
        Self(Cache::new("api_keys"))
    }
}

impl ApiKeyCache {
    /// The cached key whose keyed hash is `hash`, if any.
    pub fn get(&self, hash: &str) -> Option<Arc<CachedKey>> {
        self.0.get(hash)
    }

    /// The generation to pass to `insert` for a load that starts now.
    pub fn generation(&self) -> u64 {
        self.0.generation()
    }

    /// Caches a key loaded since `generation`, unless an invalidation came in between.
    pub fn insert(&self, generation: u64, hash: String, key: Arc<CachedKey>) {
        self.0.insert(generation, hash, key);
    }

    pub fn invalidate_all(&self) {
        self.0.clear();
    }
}

/// Changes of `public.api_keys` by any process (a trigger sends `api_keys`).
impl crate::db::notify::Subscriber for ApiKeyCache {
    fn channel(&self) -> &'static str {
        "api_keys"
    }

    fn notified(&self, payload: &str) {
        if payload == "*" {
            self.invalidate_all();
        } else {
            self.0.remove(payload);
        }
    }

    fn missed(&self) {
        self.invalidate_all();
    }
}
