//! API keys: generation, keyed hashing and lookup. Keys are 48 random alphanumeric
//! characters (about 285 bits), so a fast keyed hash (HMAC-SHA256 under the server secret)
//! is as safe as a slow one and costs microseconds per request.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use hmac::{Hmac, Mac};
use rand::{Rng, distributions::Alphanumeric};
use serde::Serialize;
use sha2::Sha256;
use uuid::Uuid;

use crate::db::{
    page::{Span, page},
    schema_public::api_keys,
};

pub const KEY_LEN: usize = 48;
pub const PREFIX_LEN: usize = 8;
/// `last_used_at` is written at most this often per key, so that a busy key does not turn
/// every read into a write.
pub const LAST_USED_GRANULARITY_SECS: i64 = 60;

pub fn generate() -> String {
    rand::thread_rng()
        .sample_iter(&Alphanumeric)
        .take(KEY_LEN)
        .map(char::from)
        .collect()
}

pub fn hash(secret: &str, key: &str) -> String {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key length");
    mac.update(key.as_bytes());
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = api_keys, check_for_backend(diesel::pg::Pg))]
pub struct ApiKeyRecord {
    pub id: Uuid,
    pub name: String,
    pub prefix: String,
    #[serde(rename = "tenant")]
    pub tenant_id: Option<Uuid>,
    pub read_only: bool,
    pub expires_at: Option<DateTime<Utc>>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// A key to create: the record's writable fields, and the key itself (only its prefix and
/// keyed hash are stored).
pub struct NewApiKey {
    pub name: String,
    pub tenant_id: Option<Uuid>,
    pub read_only: bool,
    pub expires_at: Option<DateTime<Utc>>,
    pub created_by: Uuid,
}

impl ApiKeyRecord {
    /// One page (oldest first) of the keys whose name or prefix holds `search`
    /// (case-insensitive), and the count of all of them.
    pub fn page(
        conn: &mut PgConnection,
        search: Option<&str>,
        span: Span,
    ) -> QueryResult<(i64, Vec<Self>)> {
        let pattern = search.map(crate::db::like_pattern);
        let matching = || {
            let q = api_keys::table.select(Self::as_select()).into_boxed();
            match &pattern {
                Some(pattern) => q.filter(
                    api_keys::name
                        .ilike(pattern.clone())
                        .or(api_keys::prefix.ilike(pattern.clone())),
                ),
                None => q,
            }
        };
        page(conn, matching, (api_keys::created_at, api_keys::id), span)
    }

    pub fn find(conn: &mut PgConnection, id: Uuid) -> QueryResult<Option<Self>> {
        api_keys::table
            .find(id)
            .select(Self::as_select())
            .first(conn)
            .optional()
    }

    /// Stores a new key; answers its record and the plain key (shown once).
    pub fn create(
        conn: &mut PgConnection,
        secret: &str,
        new: &NewApiKey,
    ) -> QueryResult<(Self, String)> {
        let key = generate();
        let record = diesel::insert_into(api_keys::table)
            .values((
                api_keys::id.eq(Uuid::new_v4()),
                api_keys::name.eq(&new.name),
                api_keys::prefix.eq(&key[..PREFIX_LEN]),
                api_keys::key_hash.eq(hash(secret, &key)),
                api_keys::tenant_id.eq(new.tenant_id),
                api_keys::read_only.eq(new.read_only),
                api_keys::expires_at.eq(new.expires_at),
                api_keys::created_by.eq(new.created_by),
            ))
            .returning(Self::as_returning())
            .get_result(conn)?;
        Ok((record, key))
    }

    /// Revokes key `id` (a revoked key stays revoked as it was); `false` when there is none.
    pub fn revoke(conn: &mut PgConnection, id: Uuid) -> QueryResult<bool> {
        let found: Option<Option<DateTime<Utc>>> = api_keys::table
            .find(id)
            .select(api_keys::revoked_at)
            .first(conn)
            .optional()?;
        if let Some(None) = found {
            diesel::update(api_keys::table.find(id))
                .set(api_keys::revoked_at.eq(Utc::now()))
                .execute(conn)?;
        }
        Ok(found.is_some())
    }

    pub fn is_usable(&self, now: DateTime<Utc>) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|at| at > now)
    }

    /// Finds the key with this plain text, whatever its state.
    /// The key whose keyed hash (`hash`) is `key_hash`, if any.
    pub fn find_by_hash(conn: &mut PgConnection, key_hash: &str) -> QueryResult<Option<Self>> {
        api_keys::table
            .filter(api_keys::key_hash.eq(key_hash))
            .select(Self::as_select())
            .first(conn)
            .optional()
    }

    /// Records a use of key `id` (the caller decides how often:
    /// `cache::api_keys::CachedKey::claim_use`).
    pub fn record_use(conn: &mut PgConnection, id: Uuid, now: DateTime<Utc>) -> QueryResult<()> {
        diesel::update(api_keys::table.find(id))
            .set(api_keys::last_used_at.eq(now))
            .execute(conn)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_long_random_and_hash_stably() {
        let (a, b) = (generate(), generate());
        assert_eq!(a.len(), KEY_LEN);
        assert_ne!(a, b);
        assert_eq!(hash("s", &a), hash("s", &a));
        assert_ne!(hash("s", &a), hash("t", &a));
        assert_eq!(hash("s", &a).len(), 64);
    }
}
