//! `POST /api/v1/school/oauth/token/`: OAuth 2.0 client credentials (RFC 6749 4.4) for a
//! school's integration clients. Client authentication by HTTP Basic or by the
//! `client_id`/`client_secret` form fields; errors as RFC 6749 5.2 (`{"error": ...}`), not
//! problem+json. Failed client authentications are throttled like logins (per client id
//! and per address), answering 429 with `Retry-After`.

use actix_web::{
    HttpRequest, HttpResponse,
    http::{StatusCode, header},
    web,
};
use base64::Engine;
use futures_util::StreamExt;
use serde_json::json;

use crate::{
    api::{
        openapi::{
            Auth, Op,
            schema::{integer, object, string},
        },
        routes::Mount,
    },
    error::{ApiError, ApiResult},
    request::SchoolRequest,
    school::oneroster::clients::{self, SCOPES},
};

/// How long an access token lives.
pub const TOKEN_TTL_SECS: i64 = 3600;
/// The largest token request read.
const MAX_FORM_BYTES: usize = 16 * 1024;

pub fn mount(m: &mut Mount) {
    m.endpoint("/api/v1/school/oauth/token/").post(
        token,
        Op::new(
            "oneroster",
            "Issue an access token to an integration client (OAuth 2.0 client credentials)",
            Auth::None,
        )
        .description(Some(
            "Body `application/x-www-form-urlencoded`: `grant_type=client_credentials`, an \
             optional space-separated `scope` of OneRoster 1.2 scope URIs (none: every scope \
             the client holds), and the client's credentials by HTTP Basic or as \
             `client_id` and `client_secret`. Errors as RFC 6749 5.2: `invalid_client` \
             (401), `invalid_request`, `invalid_scope`, `unsupported_grant_type` (400); 429 \
             with `Retry-After` after too many failed attempts.",
        ))
        .ok(
            200,
            Some(object(vec![
                ("access_token", string()),
                ("token_type", string()),
                ("expires_in", integer()),
                ("scope", string()),
            ])),
        )
        .errors(&[401, 429]),
    );
}

/// An RFC 6749 5.2 error answer.
fn oauth_error(status: StatusCode, error: &str, description: &str) -> HttpResponse {
    let mut answer = HttpResponse::build(status);
    answer
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::PRAGMA, "no-cache"));
    if status == StatusCode::UNAUTHORIZED {
        answer.insert_header((header::WWW_AUTHENTICATE, "Basic realm=\"oneroster\""));
    }
    answer.json(json!({"error": error, "error_description": description}))
}

/// The request's form fields; `None` when the body is not a form.
async fn read_form(req: &HttpRequest, mut payload: web::Payload) -> Option<Vec<(String, String)>> {
    let content_type = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let essence = content_type.split(';').next().unwrap_or("").trim();
    if !essence.eq_ignore_ascii_case("application/x-www-form-urlencoded") {
        return None;
    }
    let mut bytes = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.ok()?;
        if bytes.len() + chunk.len() > MAX_FORM_BYTES {
            return None;
        }
        bytes.extend_from_slice(&chunk);
    }
    serde_urlencoded::from_bytes(&bytes).ok()
}

/// The credentials of an `Authorization: Basic` header (RFC 6749 2.3.1: each part
/// form-urlencoded), if one is given; `Some(None)` for a malformed one.
fn basic_credentials(req: &HttpRequest) -> Option<Option<(String, String)>> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return Some(None);
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok());
    let unescape = |part: &str| {
        percent_encoding::percent_decode_str(&part.replace('+', " "))
            .decode_utf8()
            .map(|s| s.into_owned())
            .ok()
    };
    Some(decoded.and_then(|text| {
        let (id, secret) = text.split_once(':')?;
        Some((unescape(id)?, unescape(secret)?))
    }))
}

fn field<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_str())
}

async fn token(request: SchoolRequest, payload: web::Payload) -> ApiResult<HttpResponse> {
    let tenant = request.tenant_for_login().await?;
    let http = request.http().clone();
    let Some(form) = read_form(&http, payload).await else {
        return Ok(oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "the body must be application/x-www-form-urlencoded",
        ));
    };
    let (client_id, secret) = match (basic_credentials(&http), field(&form, "client_id")) {
        (Some(Some(credentials)), _) => credentials,
        (Some(None), _) => {
            return Ok(oauth_error(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                "malformed client authentication",
            ));
        }
        (None, Some(id)) => (
            id.to_owned(),
            field(&form, "client_secret").unwrap_or("").to_owned(),
        ),
        (None, None) => {
            return Ok(oauth_error(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                "client authentication is required",
            ));
        }
    };
    match field(&form, "grant_type") {
        Some("client_credentials") => {}
        Some(_) => {
            return Ok(oauth_error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                "only client_credentials is supported",
            ));
        }
        None => {
            return Ok(oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "grant_type is required",
            ));
        }
    }
    let requested: Option<Vec<String>> =
        field(&form, "scope").map(|scope| scope.split_whitespace().map(str::to_owned).collect());
    if let Some(unknown) = requested
        .iter()
        .flatten()
        .find(|s| !SCOPES.contains(&s.as_str()))
    {
        return Ok(oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_scope",
            &format!("unknown scope {unknown}"),
        ));
    }
    let state = request.state();
    let peer = http
        .peer_addr()
        .map(|addr| addr.ip().to_string())
        .unwrap_or_default();
    let throttle_key = format!("oauth:{}:{client_id}", tenant.schema_name);
    let attempt = match state.throttle.reserve(&throttle_key, &peer) {
        Ok(attempt) => attempt,
        Err(wait) => {
            return Ok(HttpResponse::TooManyRequests()
                .insert_header((header::RETRY_AFTER, wait.to_string()))
                .insert_header((header::CACHE_CONTROL, "no-store"))
                .json(json!({"error": "invalid_client",
                             "error_description": "too many failed attempts; retry later"})));
        }
    };
    let key = state.config.jwt_secret.clone();
    let issued = state
        .db
        .run_in_tenant(tenant, move |conn| {
            let Some(client) = clients::authenticate(conn, key.expose(), &client_id, &secret)?
            else {
                return Ok(None);
            };
            let held = client.scope_list();
            let granted: Vec<String> = match requested {
                None => held,
                Some(requested) => requested
                    .into_iter()
                    .filter(|scope| held.contains(scope))
                    .collect(),
            };
            if granted.is_empty() {
                return Ok(Some(Err(())));
            }
            let ttl = chrono::Duration::seconds(TOKEN_TTL_SECS);
            let token = clients::issue_token(conn, key.expose(), client.id, &granted, ttl)?;
            Ok::<_, ApiError>(Some(Ok((token, granted))))
        })
        .await?;
    match issued {
        None => {
            attempt.failed();
            Ok(oauth_error(
                StatusCode::UNAUTHORIZED,
                "invalid_client",
                "unknown client or wrong secret",
            ))
        }
        Some(Err(())) => Ok(oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_scope",
            "the client holds none of the requested scopes",
        )),
        Some(Ok((token, granted))) => Ok(HttpResponse::Ok()
            .insert_header((header::CACHE_CONTROL, "no-store"))
            .insert_header((header::PRAGMA, "no-cache"))
            .json(json!({
                "access_token": token,
                "token_type": "bearer",
                "expires_in": TOKEN_TTL_SECS,
                "scope": granted.join(" "),
            }))),
    }
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    #[test]
    fn basic_credentials_are_decoded_and_unescaped() {
        let encoded = base64::engine::general_purpose::STANDARD.encode("my%20id:s%3Acret");
        let req = TestRequest::default()
            .insert_header((header::AUTHORIZATION, format!("Basic {encoded}")))
            .to_http_request();
        assert_eq!(
            basic_credentials(&req),
            Some(Some(("my id".to_owned(), "s:cret".to_owned())))
        );
        let req = TestRequest::default()
            .insert_header((header::AUTHORIZATION, "Basic !!!"))
            .to_http_request();
        assert_eq!(basic_credentials(&req), Some(None));
    }
}
