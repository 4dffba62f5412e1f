//! The login endpoints' own stages, shared by the system and school ones: the throttled
//! credential check (a user's password, on the bcrypt queue), token refresh and revocation.

use actix_web::HttpRequest;
use serde_json::Value;

use crate::{
    auth::{
        jwt::{Claims, Layer, TokenPair, TokenType},
        password,
    },
    db::models::{Identifier, User, revoked_token},
    error::{ApiError, ApiResult, FieldErrors},
    request::authenticate::load_token_user,
    state::AppState,
};

/// A request body, as the API reads it (a JSON object).
type JsonObject = serde_json::Map<String, Value>;

pub struct LoginInput {
    identifier: String,
    password: String,
}

impl LoginInput {
    /// `{"identifier" | "email" | "phone": ..., "password": ...}`.
    pub fn parse(body: &JsonObject) -> ApiResult<Self> {
        let mut errors = FieldErrors::new();
        let key = ["identifier", "email", "phone"]
            .into_iter()
            .find(|k| body.contains_key(*k));
        let identifier = match key.map(|k| (k, &body[k])) {
            Some((_, Value::String(s))) if !s.trim().is_empty() && !s.contains('\0') => {
                s.trim().to_owned()
            }
            Some((k, _)) => {
                errors.add(k, "a non-empty string is required");
                String::new()
            }
            None => {
                errors.add("identifier", "this field is required");
                String::new()
            }
        };
        let password = match body.get("password") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(_) => {
                errors.add("password", "a non-empty string is required");
                String::new()
            }
            None => {
                errors.add("password", "this field is required");
                String::new()
            }
        };
        errors.into_result(Self {
            identifier,
            password,
        })
    }
}

fn client_address(req: &HttpRequest) -> String {
    // The socket peer only: forwarding headers are client-controlled.
    req.peer_addr()
        .map(|addr| addr.ip().to_string())
        .unwrap_or_default()
}

/// Checks credentials (throttled); answers the active user they belong to. Layer and
/// tenant rules are the caller's.
pub async fn verify_credentials(
    state: &AppState,
    req: &HttpRequest,
    input: LoginInput,
) -> ApiResult<User> {
    let client = client_address(req);
    let attempt = state
        .throttle
        .reserve(&Identifier::throttle_key(&input.identifier), &client)
        .map_err(|wait| {
            crate::observability::metrics::login_throttled();
            ApiError::Throttled(wait)
        })?;
    let user = match Identifier::parse(&input.identifier) {
        Some(identifier) => {
            state
                .db
                .run(move |conn| Ok(User::find_by_identifier(conn, &identifier)?))
                .await?
        }
        None => None,
    };
    // bcrypt runs without holding a database connection; unknown users are checked
    // against a dummy hash so both failures take the same time.
    // A user without a password yet is checked against the dummy hash too, and refused.
    let has_password = user
        .as_ref()
        .is_some_and(|u| password::is_set(&u.password_hash));
    let stored = user
        .as_ref()
        .filter(|_| has_password)
        .map_or_else(|| state.dummy_hash.clone(), |u| u.password_hash.clone());
    let password = input.password;
    let matches = state.verify_password(password, stored).await? && has_password;
    match user {
        // Dropping the attempt releases it: successful logins do not count.
        Some(user) if matches && user.is_active => {
            let id = user.id;
            state
                .db
                .run(move |conn| Ok(User::record_login(conn, id)?))
                .await?;
            Ok(user)
        }
        _ => {
            attempt.failed();
            Err(ApiError::InvalidCredentials)
        }
    }
}

/// The decoded refresh token of `layer` in the body's `refresh` field.
fn refresh_claims(state: &AppState, body: &JsonObject, layer: Layer) -> ApiResult<Claims> {
    let token = match body.get("refresh") {
        Some(Value::String(s)) if !s.is_empty() => s,
        Some(_) => {
            return Err(ApiError::validation(
                "refresh",
                "a non-empty string is required",
            ));
        }
        None => return Err(ApiError::validation("refresh", "this field is required")),
    };
    state.jwt.decode(token, TokenType::Refresh, layer)
}

/// Validates a refresh token of `layer` and answers the new tokens: a new access token,
/// plus a new refresh token (and the old one revoked) when rotation is on. `check` runs
/// on the decoded claims and loaded user before anything is revoked.
pub async fn refresh(
    state: &AppState,
    body: &JsonObject,
    layer: Layer,
    check: impl FnOnce(&Claims, &User) -> ApiResult<()> + Send + 'static,
) -> ApiResult<(String, Option<String>)> {
    let claims = refresh_claims(state, body, layer)?;
    let rotate = state.config.rotate_refresh_tokens;
    let user = state
        .db
        .run(move |conn| {
            let user = load_token_user(conn, &claims)?;
            check(&claims, &user)?;
            // Rotating revokes the token; the insert also tells whether it already was.
            let already_revoked = if rotate {
                !revoked_token::revoke(conn, claims.jti, claims.expires_at())?
            } else {
                revoked_token::is_revoked(conn, claims.jti)?
            };
            if already_revoked {
                return Err(ApiError::TokenNotValid("token has been revoked"));
            }
            Ok((user, claims))
        })
        .await?;
    let (user, claims) = user;
    if rotate {
        let TokenPair { access, refresh } =
            state
                .jwt
                .issue_pair(user.id, user.token_version, layer, claims.tenant.as_deref())?;
        Ok((access, Some(refresh)))
    } else {
        Ok((
            state.jwt.issue(
                user.id,
                user.token_version,
                layer,
                claims.tenant.as_deref(),
                TokenType::Access,
            )?,
            None,
        ))
    }
}

/// Revokes the refresh token in `{refresh}`; it must be of `layer` and belong to `user_id`.
pub fn revoke_refresh(
    state: &AppState,
    body: &JsonObject,
    layer: Layer,
    user_id: uuid::Uuid,
) -> ApiResult<Claims> {
    let claims = refresh_claims(state, body, layer)?;
    if claims.sub != user_id {
        return Err(ApiError::TokenNotValid(
            "this refresh token belongs to another user",
        ));
    }
    Ok(claims)
}
