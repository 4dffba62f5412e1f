//! The outermost middleware: request id, W3C trace context, the in-flight count, request
//! metrics, and one access-log line per request.

use std::{borrow::Cow, time::Instant};

use actix_web::{
    Error, HttpMessage, HttpRequest, ResponseError,
    body::{EitherBody, MessageBody},
    dev::{ServiceRequest, ServiceResponse},
    http::header::{HeaderName, HeaderValue},
    middleware::Next,
    web,
};

use crate::{
    api::router::{Matched, RouteTable},
    error::ApiError,
    observability::metrics,
    request::identity::LogIdentity,
    state::AppState,
};

/// Answers errors of the middleware below the service's own (a CORS preflight that
/// actix-cors refuses) as problem+json, like every other error.
fn as_problem<B: MessageBody>(res: ServiceResponse<B>) -> ServiceResponse<EitherBody<B>> {
    let refused = res
        .response()
        .error()
        .and_then(|err| err.as_error::<actix_cors::CorsError>())
        .map(ToString::to_string);
    match refused {
        None => res.map_into_left_body(),
        Some(detail) => {
            let (req, _) = res.into_parts();
            let problem = ApiError::CorsRefused(detail).error_response();
            ServiceResponse::new(req, problem).map_into_right_body()
        }
    }
}

/// A new request id (the client's `X-Request-Id` is kept when it is sane).
fn new_request_id() -> HeaderValue {
    let mut buffer = uuid::Uuid::encode_buffer();
    let id = uuid::Uuid::new_v4().hyphenated().encode_lower(&mut buffer);
    HeaderValue::from_str(id).unwrap_or(HeaderValue::from_static("-"))
}

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");

/// The caller's W3C trace context (`traceparent: 00-<trace id>-<parent id>-<flags>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceContext {
    pub trace_id: String,
    pub parent_id: String,
}

impl TraceContext {
    /// Parses a `traceparent` value; anything malformed (or an all-zero id) is ignored,
    /// as the W3C recommendation asks.
    pub fn parse(raw: &str) -> Option<Self> {
        let mut parts = raw.trim().split('-');
        let (version, trace_id, parent_id, flags) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        let hex = |s: &str, len: usize| {
            s.len() == len
                && s.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        };
        let valid = hex(version, 2)
            && version != "ff"
            && (version != "00" || parts.next().is_none())
            && hex(trace_id, 32)
            && trace_id.bytes().any(|b| b != b'0')
            && hex(parent_id, 16)
            && parent_id.bytes().any(|b| b != b'0')
            && hex(flags, 2);
        valid.then(|| Self {
            trace_id: trace_id.to_owned(),
            parent_id: parent_id.to_owned(),
        })
    }
}

/// Counts a request as in flight for as long as it lives (also when it fails or is cancelled).
struct InFlight(web::Data<AppState>);

impl InFlight {
    fn enter(state: web::Data<AppState>) -> Self {
        state
            .in_flight
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        metrics::in_flight(1.0);
        Self(state)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0
            .in_flight
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        metrics::in_flight(-1.0);
    }
}

/// The route a request was matched to: the API's route table's pattern, else the pattern
/// of one of actix's own routes (the console's and the app's pages, `/metrics`).
fn route_of(req: &HttpRequest) -> Cow<'_, str> {
    let table = req.app_data::<web::Data<RouteTable>>();
    let matched = req.extensions().get::<Matched>().copied();
    let pattern = table.and_then(|table| match matched {
        Some(matched) => Some(table.matched_pattern(matched)),
        // Answered before the router was reached (by the host check, say): the path says.
        None => table.pattern_of(req.match_info().as_str()),
    });
    match pattern {
        Some(pattern) => Cow::Borrowed(pattern),
        None => Cow::Owned(
            req.match_pattern()
                .unwrap_or_else(|| "unmatched".to_owned()),
        ),
    }
}

/// Assigns the request id, reads the trace context, and when the answer is out records
/// the request's metrics and writes its log line: request id, school, user, method, route,
/// path, status, latency and trace. Internal errors are logged with their cause here,
/// where the request id is known. Credentials are never part of a log line.
pub async fn access_log<B: MessageBody>(
    req: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<EitherBody<B>>, Error> {
    let started = Instant::now();
    // The client's id is kept as its header value (no copy), a new one made in one go.
    let request_id = req
        .headers()
        .get(&REQUEST_ID)
        .filter(|v| {
            let v = v.as_bytes();
            !v.is_empty() && v.len() <= 128 && v.iter().all(u8::is_ascii_graphic)
        })
        .cloned()
        .unwrap_or_else(new_request_id);
    let trace = req
        .headers()
        .get(&TRACEPARENT)
        .and_then(|v| v.to_str().ok())
        .and_then(TraceContext::parse);
    let _in_flight = req
        .app_data::<web::Data<AppState>>()
        .map(|state| InFlight::enter(state.clone()));
    let method = req.method().clone();
    // The path as the client sent it (routing may normalise the request's own).
    let uri = req.uri().clone();
    let mut res = as_problem(next.call(req).await?);
    res.headers_mut().insert(REQUEST_ID, request_id.clone());
    let request_id = request_id.to_str().unwrap_or("-");
    let path = uri.path();
    let route = route_of(res.request());
    let status = res.status().as_u16();
    let elapsed = started.elapsed();
    metrics::record_request(&route, method.as_str(), status, elapsed);
    if let Some(ApiError::Internal(cause)) = res
        .response()
        .error()
        .and_then(|e| e.as_error::<ApiError>())
    {
        log::error!(target: "access", request_id = request_id; "internal error: {cause:#}");
    }
    if log::log_enabled!(target: "access", log::Level::Info) {
        // Noted by the host check and the request's `run` (`request::identity` says why).
        let extensions = res.request().extensions();
        let identity = extensions.get::<LogIdentity>();
        let school = identity
            .and_then(|i| i.tenant.as_ref())
            .map_or("-", |tenant| tenant.schema_name.as_str());
        let mut user_buffer = uuid::Uuid::encode_buffer();
        let user = identity
            .and_then(|i| i.user)
            .map_or("-", |user| user.hyphenated().encode_lower(&mut user_buffer));
        let (trace_id, parent_id) = trace
            .as_ref()
            .map_or(("-", "-"), |t| (t.trace_id.as_str(), t.parent_id.as_str()));
        log::info!(
            target: "access",
            request_id = request_id,
            school = school,
            user = user,
            method = method.as_str(),
            route = route.as_ref(),
            path = path,
            status = status,
            latency_ms = (elapsed.as_secs_f64() * 100_000.0).round() / 100.0,
            trace_id = trace_id,
            parent_id = parent_id;
            "{method} {path} {status}"
        );
    }
    Ok(res)
}

#[cfg(test)]
mod tests {
    use super::TraceContext;

    #[test]
    fn traceparent_is_parsed_strictly() {
        let ok = TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
            .expect("valid");
        assert_eq!(ok.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(ok.parent_id, "00f067aa0ba902b7");
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e4736x-00f067aa0ba902b7-01",
        ] {
            assert!(TraceContext::parse(bad).is_none(), "{bad}");
        }
    }
}
