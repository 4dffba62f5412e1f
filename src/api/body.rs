//! Reading JSON request bodies by hand, so that body errors (413, 415, malformed JSON)
//! come after authentication and path checks, as API.md section 2 orders them.

use actix_web::{HttpRequest, http::header, web};
use futures_util::StreamExt;
use serde_json::{Map, Value};

use crate::{error::ApiError, state::AppState};

/// The limits when no configuration is at hand (as `MAX_BODY_BYTES` and
/// `REQUEST_BODY_TIMEOUT_MS` default to).
const DEFAULT_LIMIT: usize = 1024 * 1024;
const DEFAULT_BODY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

pub type JsonObject = Map<String, Value>;

/// A body read but not yet judged: handlers hold it until the checks that come first
/// (existence of the path's records) have passed, then unwrap it.
pub type PendingBody = Result<JsonObject, ApiError>;

/// Reads the body as a JSON object, up to the configured `MAX_BODY_BYTES`. A body that is
/// absent (empty, with no JSON content type, or on a DELETE) reads as `{}`; an empty body
/// declared as JSON is not valid JSON. A body that has not arrived whole within
/// `REQUEST_BODY_TIMEOUT_MS` is refused (408), so a client sending a byte a second holds
/// no more than that.
pub async fn read_object(req: &HttpRequest, payload: web::Payload) -> PendingBody {
    let (limit, timeout) = req.app_data::<web::Data<AppState>>().map_or(
        (DEFAULT_LIMIT, DEFAULT_BODY_TIMEOUT),
        |state| {
            (
                state.config.max_body_bytes,
                state.config.request_body_timeout,
            )
        },
    );
    tokio::time::timeout(timeout, read_within(req, payload, limit))
        .await
        .unwrap_or_else(|_| {
            Err(ApiError::BodyTimeout(
                u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            ))
        })
}

/// The body length the head declares: `None` without `Content-Length`, `Some(None)` when
/// its value is no number.
fn declared_length(headers: &header::HeaderMap) -> Option<Option<u64>> {
    headers
        .get(header::CONTENT_LENGTH)
        .map(|value| value.to_str().ok().and_then(|v| v.trim().parse().ok()))
}

/// Whether nothing is left to arrive once the head is in: no `Content-Length` above zero,
/// not chunked.
pub fn announces_no_body(headers: &header::HeaderMap) -> bool {
    !headers.contains_key(header::TRANSFER_ENCODING)
        && matches!(declared_length(headers), None | Some(Some(0)))
}

async fn read_within(req: &HttpRequest, mut payload: web::Payload, limit: usize) -> PendingBody {
    let declared = declared_length(req.headers()).flatten();
    if declared.is_some_and(|len| len > limit as u64) {
        return Err(ApiError::PayloadTooLarge(limit));
    }
    let mut bytes = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk
            .map_err(|err| ApiError::MalformedJson(format!("could not read the body: {err}")))?;
        if bytes.len() + chunk.len() > limit {
            return Err(ApiError::PayloadTooLarge(limit));
        }
        bytes.extend_from_slice(&chunk);
    }
    let blank = bytes.iter().all(u8::is_ascii_whitespace);
    let json = is_json(req);
    if blank && (!json || req.method() == actix_web::http::Method::DELETE) {
        return Ok(JsonObject::new());
    }
    if !json {
        return Err(ApiError::UnsupportedMediaType);
    }
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(ApiError::MalformedJson("expected a JSON object".into())),
        Err(err) => Err(ApiError::MalformedJson(format!("JSON parse error: {err}"))),
    }
}

fn is_json(req: &HttpRequest) -> bool {
    let Some(content_type) = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}
