//! A school's OneRoster integration clients (OAuth 2.0 client credentials, RFC 6749 4.4)
//! and the access tokens issued to them. Secrets and tokens are long random strings kept
//! only as their keyed hash (HMAC-SHA256 under the server secret, as API keys are), so a
//! fast hash is as safe as a slow one; a token is found by its hash and is usable only
//! while its client is not revoked, so a revocation takes effect at the next request.

use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use hmac::{Hmac, Mac};
use rand::{Rng, distributions::Alphanumeric};
use serde::Serialize;
use sha2::Sha256;
use uuid::Uuid;

use super::super::schema::{oauth_clients as t, oauth_tokens};
use crate::{error::ApiResult, tenancy::TenantConn};

/// The OneRoster 1.2 scopes, as URIs.
pub const SCOPE_PREFIX: &str = "https://purl.imsglobal.org/spec/or/v1p2/scope/";
pub const SCOPES: &[&str] = &[
    "https://purl.imsglobal.org/spec/or/v1p2/scope/roster-core.readonly",
    "https://purl.imsglobal.org/spec/or/v1p2/scope/roster.readonly",
    "https://purl.imsglobal.org/spec/or/v1p2/scope/roster-demographics.readonly",
    "https://purl.imsglobal.org/spec/or/v1p2/scope/gradebook.readonly",
    "https://purl.imsglobal.org/spec/or/v1p2/scope/gradebook.createput",
    "https://purl.imsglobal.org/spec/or/v1p2/scope/gradebook.delete",
];

const SECRET_LEN: usize = 48;
/// `last_used_at` is written at most this often per client.
const LAST_USED_GRANULARITY_SECS: i64 = 60;

fn random_string(len: usize) -> String {
    rand::thread_rng()
        .sample_iter(&Alphanumeric)
        .take(len)
        .map(char::from)
        .collect()
}

/// The keyed hash of a secret or token (hex).
fn keyed_hash(key: &str, value: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key.as_bytes()).expect("HMAC takes any key");
    mac.update(value.as_bytes());
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// An integration client as answered (never its secret).
#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct OauthClient {
    pub id: Uuid,
    #[schema(max_length = 100)]
    pub name: String,
    #[schema(max_length = 64)]
    pub client_id: String,
    #[serde(serialize_with = "present_scopes")]
    #[schema(value_type = Vec<String>)]
    pub scopes: Vec<Option<String>>,
    #[serde(skip)]
    pub created_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

fn present_scopes<S: serde::Serializer>(
    scopes: &[Option<String>],
    s: S,
) -> Result<S::Ok, S::Error> {
    s.collect_seq(scopes.iter().flatten())
}

impl OauthClient {
    pub fn scope_list(&self) -> Vec<String> {
        self.scopes.iter().flatten().cloned().collect()
    }
}

/// What an access token stands for: its client and the scopes granted.
#[derive(Debug, Clone)]
pub struct Grant {
    pub client: Uuid,
    pub client_name: String,
    pub scopes: Vec<String>,
}

impl Grant {
    /// Who the school's history and events name for this token's writes.
    pub fn actor(&self) -> crate::school::Actor {
        crate::school::Actor::oauth_client(self.client, self.client_name.clone())
    }

    /// Whether the token holds scope `name` (the part after the scope prefix).
    pub fn has(&self, name: &str) -> bool {
        self.scopes
            .iter()
            .any(|scope| scope.strip_prefix(SCOPE_PREFIX) == Some(name))
    }
}

/// The clients of this school (oldest first), with their count.
pub fn page(conn: &mut TenantConn, offset: i64, limit: i64) -> ApiResult<(i64, Vec<OauthClient>)> {
    let count = t::table.count().get_result(conn.pg())?;
    let rows = t::table
        .order((t::created_at, t::id))
        .offset(offset)
        .limit(limit)
        .select(OauthClient::as_select())
        .load(conn.pg())?;
    Ok((count, rows))
}

pub fn find(conn: &mut TenantConn, id: Uuid) -> ApiResult<Option<OauthClient>> {
    Ok(t::table
        .find(id)
        .select(OauthClient::as_select())
        .first(conn.pg())
        .optional()?)
}

/// Stores a new client; answers its record and the plain secret (shown once).
pub fn create(
    conn: &mut TenantConn,
    key: &str,
    name: &str,
    scopes: &[String],
    created_by: Option<Uuid>,
) -> ApiResult<(OauthClient, String)> {
    let secret = random_string(SECRET_LEN);
    let record = diesel::insert_into(t::table)
        .values((
            t::name.eq(name),
            t::client_id.eq(random_string(24)),
            t::secret_hash.eq(keyed_hash(key, &secret)),
            t::scopes.eq(scopes.iter().cloned().map(Some).collect::<Vec<_>>()),
            t::created_by.eq(created_by),
        ))
        .returning(OauthClient::as_returning())
        .get_result(conn.pg())?;
    Ok((record, secret))
}

/// Revokes client `id` and drops its tokens; `false` when there is none.
pub fn revoke(conn: &mut TenantConn, id: Uuid) -> ApiResult<bool> {
    let Some(client) = find(conn, id)? else {
        return Ok(false);
    };
    if client.revoked_at.is_none() {
        diesel::update(t::table.find(id))
            .set(t::revoked_at.eq(Utc::now()))
            .execute(conn.pg())?;
    }
    diesel::delete(oauth_tokens::table.filter(oauth_tokens::client_id.eq(id)))
        .execute(conn.pg())?;
    Ok(true)
}

/// The live (not revoked) client with these credentials, if they are right.
pub fn authenticate(
    conn: &mut TenantConn,
    key: &str,
    client_id: &str,
    secret: &str,
) -> ApiResult<Option<OauthClient>> {
    if client_id.is_empty() || secret.is_empty() {
        return Ok(None);
    }
    Ok(t::table
        .filter(t::client_id.eq(client_id))
        .filter(t::secret_hash.eq(keyed_hash(key, secret)))
        .filter(t::revoked_at.is_null())
        .select(OauthClient::as_select())
        .first(conn.pg())
        .optional()?)
}

/// Issues an access token of `client` for `scopes`, valid `ttl`; answers the plain token.
/// Expired tokens of the school are swept out on the way.
pub fn issue_token(
    conn: &mut TenantConn,
    key: &str,
    client: Uuid,
    scopes: &[String],
    ttl: Duration,
) -> ApiResult<String> {
    let now = Utc::now();
    diesel::delete(oauth_tokens::table.filter(oauth_tokens::expires_at.lt(now)))
        .execute(conn.pg())?;
    let token = random_string(SECRET_LEN);
    diesel::insert_into(oauth_tokens::table)
        .values((
            oauth_tokens::token_hash.eq(keyed_hash(key, &token)),
            oauth_tokens::client_id.eq(client),
            oauth_tokens::scopes.eq(scopes.iter().cloned().map(Some).collect::<Vec<_>>()),
            oauth_tokens::expires_at.eq(now + ttl),
        ))
        .execute(conn.pg())?;
    diesel::update(t::table.find(client))
        .set(t::last_used_at.eq(now))
        .execute(conn.pg())?;
    Ok(token)
}

/// The columns the query below selects, in order.
type TokenRow = (Uuid, String, Vec<Option<String>>, Option<DateTime<Utc>>);

/// What a presented access token grants in this school: `None` when it is unknown,
/// expired, or its client is revoked. Records the client's use.
pub fn grant_of(conn: &mut TenantConn, key: &str, token: &str) -> ApiResult<Option<Grant>> {
    let now = Utc::now();
    let found: Option<TokenRow> = oauth_tokens::table
        .inner_join(t::table)
        .filter(oauth_tokens::token_hash.eq(keyed_hash(key, token)))
        .filter(oauth_tokens::expires_at.gt(now))
        .filter(t::revoked_at.is_null())
        .select((t::id, t::name, oauth_tokens::scopes, t::last_used_at))
        .first(conn.pg())
        .optional()?;
    let Some((client, client_name, scopes, last_used)) = found else {
        return Ok(None);
    };
    if last_used.is_none_or(|at| now - at >= Duration::seconds(LAST_USED_GRANULARITY_SECS)) {
        diesel::update(t::table.find(client))
            .set(t::last_used_at.eq(now))
            .execute(conn.pg())?;
    }
    Ok(Some(Grant {
        client,
        client_name,
        scopes: scopes.into_iter().flatten().collect(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_random_and_hashes_keyed() {
        assert_ne!(random_string(48), random_string(48));
        assert_eq!(keyed_hash("k", "s"), keyed_hash("k", "s"));
        assert_ne!(keyed_hash("k", "s"), keyed_hash("l", "s"));
    }

    #[test]
    fn a_grant_holds_scopes_by_their_short_name() {
        let grant = Grant {
            client: Uuid::nil(),
            client_name: String::new(),
            scopes: vec![SCOPES[3].to_owned()],
        };
        assert!(grant.has("gradebook.readonly"));
        assert!(!grant.has("gradebook.delete"));
    }
}
