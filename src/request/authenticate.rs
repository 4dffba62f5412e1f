//! Stage 3, authenticate: who the caller is (a token's user or an API key) and whether
//! that caller belongs to the request's school; on the main domain without `X-Tenant`, the
//! tenant stage's token branch (the school a valid token's claim names) runs here too.
//! What a caller presents is read from the headers at extraction (no I/O); checking it
//! costs a cached look-up for a token's user (`cache::users`) and for a known API key
//! (`cache::api_keys`; one platform query the first time).

use std::sync::Arc;

use actix_web::http::header::{self, HeaderMap, HeaderValue};
use chrono::Utc;
use diesel::pg::PgConnection;

use crate::{
    auth::{
        api_key::{self, ApiKeyRecord},
        jwt::{Claims, JwtKeys, Layer, TokenType},
    },
    cache::{api_keys::CachedKey, users::UserCache},
    db::models::User,
    error::{ApiError, ApiResult},
    request::tenant,
    state::AppState,
    tenancy::{HostKind, TenantDirectory, TenantRef},
};

/// What the request's headers present, unchecked.
pub enum Credentials {
    None,
    Bearer(String),
    /// An `Authorization` header that is not `Bearer <token>`.
    Malformed,
    ApiKey(String),
}

/// The credentials in `headers`: `Authorization` first, else `X-Api-Key` when API keys
/// count (they do not on system endpoints).
pub fn credentials(headers: &HeaderMap, accept_api_key: bool) -> Credentials {
    if let Some(value) = headers.get(header::AUTHORIZATION) {
        return match visible_text(value).and_then(|value| value.split_once(' ')) {
            Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => match token.trim() {
                "" => Credentials::Malformed,
                token => Credentials::Bearer(token.to_owned()),
            },
            _ => Credentials::Malformed,
        };
    }
    match headers.get("x-api-key") {
        Some(value) if accept_api_key => {
            Credentials::ApiKey(visible_text(value).unwrap_or("").trim().to_owned())
        }
        _ => Credentials::None,
    }
}

/// The value as text if it is all visible ASCII or tabs, as `HeaderValue::to_str` checks,
/// but over all the bytes at once rather than a branch for each: a token is a few hundred
/// bytes, read on every request.
fn visible_text(value: &HeaderValue) -> Option<&str> {
    let bytes = value.as_bytes();
    let visible = bytes.iter().fold(true, |all, &b| {
        all & ((b' '..=b'~').contains(&b) | (b == b'\t'))
    });
    visible.then(|| std::str::from_utf8(bytes).ok()).flatten()
}

/// Who a request authenticated as, before its roles are loaded.
pub enum Authenticated {
    User(Arc<User>),
    Key(Arc<CachedKey>),
}

impl Authenticated {
    pub fn user_id(&self) -> Option<uuid::Uuid> {
        match self {
            Self::User(user) => Some(user.id),
            Self::Key(_) => None,
        }
    }
}

/// Credentials whose form is checked (a token decoded), not yet who they belong to.
enum Presented {
    Token(Claims),
    Key(String),
}

/// The school (by address, else by the token's claim) and who is calling it.
pub async fn school_caller(
    state: &AppState,
    host: &HostKind,
    x_tenant: Option<&str>,
    credentials: Credentials,
) -> ApiResult<(TenantRef, Authenticated)> {
    let by_address = tenant::by_address(host, x_tenant, &state.directory).await?;
    // Why the request cannot authenticate is reported after tenant selection (API.md 2).
    let presented = present(&state.jwt, credentials);
    let (tenant, presented) = school_of(by_address, presented, &state.directory).await?;
    let caller = match presented {
        Presented::Token(claims) => Authenticated::User(token_user(state, claims, &tenant).await?),
        Presented::Key(key) => Authenticated::Key(api_key(state, key, &tenant).await?),
    };
    if tenant::x_tenant_conflicts(host, x_tenant) {
        return Err(ApiError::TenantMismatch(
            "the X-Tenant header names another school",
        ));
    }
    Ok((tenant, caller))
}

/// What the request authenticates with (a school access token decoded), or why it cannot.
fn present(jwt: &JwtKeys, credentials: Credentials) -> ApiResult<Presented> {
    match credentials {
        Credentials::None => Err(ApiError::NotAuthenticated),
        Credentials::Malformed => Err(ApiError::TokenNotValid(
            "the Authorization header must be 'Bearer <token>'",
        )),
        Credentials::Bearer(token) => jwt
            .decode(&token, TokenType::Access, Layer::School)
            .map(Presented::Token),
        Credentials::ApiKey(key) => Ok(Presented::Key(key)),
    }
}

/// The school chosen by the address, or (main domain, no `X-Tenant`) by a valid token's
/// `tenant` claim: nothing else can choose there.
async fn school_of(
    by_address: Option<TenantRef>,
    presented: ApiResult<Presented>,
    directory: &Arc<TenantDirectory>,
) -> ApiResult<(TenantRef, Presented)> {
    match (by_address, presented) {
        (Some(tenant), presented) => Ok((tenant, presented?)),
        (None, Ok(Presented::Token(claims))) => {
            let schema = claims.tenant.as_deref().unwrap_or_default();
            let tenant = tenant::by_claim(schema, directory).await?;
            Ok((tenant, Presented::Token(claims)))
        }
        (None, Ok(Presented::Key(_)) | Err(ApiError::NotAuthenticated)) => {
            Err(ApiError::TenantNotFound)
        }
        (None, Err(err)) => Err(err),
    }
}

/// The token's user (from the cache, else one platform query), if it may still use the
/// token and belongs to `tenant`.
async fn token_user(state: &AppState, claims: Claims, tenant: &TenantRef) -> ApiResult<Arc<User>> {
    let users = state.user_cache.clone();
    let user = match users.get(claims.sub) {
        Some(user) if usable(&user, &claims) => user,
        Some(_) => return Err(revoked()),
        None => {
            let claims = claims.clone();
            let user = state
                .db
                .run(move |conn| cached_token_user(conn, &users, &claims))
                .await?;
            Arc::new(user)
        }
    };
    if user.client_id != Some(tenant.id)
        || claims.tenant.as_deref() != Some(tenant.schema_name.as_str())
    {
        return Err(ApiError::TenantMismatch(
            "this token was issued for another school",
        ));
    }
    Ok(user)
}

/// The API key's record, if usable and not scoped to another school: from the key cache,
/// else one platform query (the record is kept, usable or not, so a revoked key costs no
/// query either).
async fn api_key(state: &AppState, key: String, tenant: &TenantRef) -> ApiResult<Arc<CachedKey>> {
    if key.is_empty() {
        return Err(ApiError::InvalidApiKey);
    }
    let hash = api_key::hash(state.config.jwt_secret.expose(), &key);
    let cached = match state.key_cache.get(&hash) {
        Some(cached) => cached,
        None => {
            let generation = state.key_cache.generation();
            let lookup = hash.clone();
            let record = state
                .db
                .run(move |conn| Ok(ApiKeyRecord::find_by_hash(conn, &lookup)?))
                .await?
                .ok_or(ApiError::InvalidApiKey)?;
            let cached = Arc::new(CachedKey::new(record));
            state.key_cache.insert(generation, hash, cached.clone());
            cached
        }
    };
    let record = &cached.record;
    if !record.is_usable(Utc::now()) {
        return Err(ApiError::InvalidApiKey);
    }
    if record.tenant_id.is_some_and(|id| id != tenant.id) {
        return Err(ApiError::TenantMismatch(
            "this API key is scoped to another school",
        ));
    }
    Ok(cached)
}

/// The user a valid access or refresh token names, if still allowed to use it.
pub fn load_token_user(conn: &mut PgConnection, claims: &Claims) -> ApiResult<User> {
    usable_token_user(User::find(conn, claims.sub)?, claims)
}

/// `load_token_user` through the user cache.
pub fn cached_token_user(
    conn: &mut PgConnection,
    users: &UserCache,
    claims: &Claims,
) -> ApiResult<User> {
    if let Some(user) = users.get(claims.sub) {
        return usable_token_user(Some(User::clone(&user)), claims);
    }
    let generation = users.generation();
    let user = User::find(conn, claims.sub)?;
    if let Some(user) = &user {
        users.insert(generation, user);
    }
    usable_token_user(user, claims)
}

/// `user` (the token's subject) if it is active and the token is of its current version.
fn usable_token_user(user: Option<User>, claims: &Claims) -> ApiResult<User> {
    user.filter(|user| usable(user, claims)).ok_or_else(revoked)
}

/// Whether `user` may still use a token with these claims.
fn usable(user: &User, claims: &Claims) -> bool {
    user.is_active && user.token_version == claims.ver
}

fn revoked() -> ApiError {
    ApiError::TokenNotValid("the user is inactive or the token was revoked")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use actix_web::test::TestRequest;
    use uuid::Uuid;

    use super::{Credentials, Presented, credentials, present, usable, visible_text};
    use crate::{
        auth::jwt::{JwtKeys, Layer, TokenType},
        db::models::User,
        error::ApiError,
    };

    fn presented(headers: &[(&str, &str)], accept_api_key: bool) -> Credentials {
        let mut req = TestRequest::default();
        for header in headers {
            req = req.insert_header(*header);
        }
        credentials(req.to_http_request().headers(), accept_api_key)
    }

    #[test]
    fn the_authorization_header_comes_first_and_keys_count_only_where_accepted() {
        let bearer = presented(&[("authorization", "bearer  abc ")], true);
        assert!(matches!(bearer, Credentials::Bearer(token) if token == "abc"));
        for malformed in ["Basic abc", "Bearer ", "Bearer"] {
            let header = [("authorization", malformed), ("x-api-key", "k")];
            assert!(matches!(presented(&header, true), Credentials::Malformed));
        }
        let key = presented(&[("x-api-key", " k1 ")], true);
        assert!(matches!(key, Credentials::ApiKey(key) if key == "k1"));
        assert!(matches!(
            presented(&[("x-api-key", "k1")], false),
            Credentials::None
        ));
        assert!(matches!(presented(&[], true), Credentials::None));
    }

    #[test]
    fn a_value_is_text_exactly_where_the_header_type_says_so() {
        for byte in 0..=u8::MAX {
            let raw = [b'B', b'e', b'a', b'r', b'e', b'r', b' ', b'x', byte, b'y'];
            let Ok(value) = actix_web::http::header::HeaderValue::from_bytes(&raw) else {
                continue;
            };
            assert_eq!(
                visible_text(&value),
                value.to_str().ok(),
                "byte {byte:#04x}"
            );
        }
        let header = [("authorization", "Bearer t\u{e9}")];
        assert!(matches!(presented(&header, true), Credentials::Malformed));
    }

    #[test]
    fn only_a_school_access_token_is_presented() {
        let keys = JwtKeys::new("secret", Duration::from_secs(60), Duration::from_secs(60));
        let issue = |layer, kind| {
            let token = keys.issue(Uuid::new_v4(), 0, layer, Some("alpha"), kind);
            Credentials::Bearer(token.expect("token"))
        };
        let access = present(&keys, issue(Layer::School, TokenType::Access));
        assert!(
            matches!(access, Ok(Presented::Token(claims)) if claims.tenant.as_deref() == Some("alpha"))
        );
        assert!(present(&keys, issue(Layer::System, TokenType::Access)).is_err());
        assert!(present(&keys, issue(Layer::School, TokenType::Refresh)).is_err());
        assert!(matches!(
            present(&keys, Credentials::None),
            Err(ApiError::NotAuthenticated)
        ));
        assert!(matches!(
            present(&keys, Credentials::Malformed),
            Err(ApiError::TokenNotValid(_))
        ));
    }

    #[test]
    fn a_token_is_usable_by_an_active_user_of_its_version() {
        let keys = JwtKeys::new("secret", Duration::from_secs(60), Duration::from_secs(60));
        let now = chrono::Utc::now();
        let mut user = User {
            id: Uuid::new_v4(),
            email: None,
            phone: None,
            password_hash: String::new(),
            first_name: String::new(),
            last_name: String::new(),
            is_active: true,
            is_superuser: false,
            is_staff: false,
            client_id: None,
            token_version: 2,
            created_at: now,
            updated_at: now,
            last_login: None,
        };
        let token = keys.issue(user.id, 2, Layer::School, Some("alpha"), TokenType::Access);
        let claims = keys
            .decode(&token.expect("token"), TokenType::Access, Layer::School)
            .expect("claims");
        assert!(usable(&user, &claims));
        user.token_version = 3;
        assert!(!usable(&user, &claims));
        user.token_version = 2;
        user.is_active = false;
        assert!(!usable(&user, &claims));
    }
}
