//! The outermost middleware: request id, W3C trace context, the in-flight count, request
//! metrics, and one access-log line per request.

use std::time::Instant;

use actix_web::{
    Error, HttpMessage, ResponseError,
    body::{EitherBody, MessageBody},
    dev::{ServiceRequest, ServiceResponse},
    http::header::{HeaderName, HeaderValue},
    middleware::Next,
    web,
};

use crate::{
    auth::AppState, auth::context::LogIdentity, error::ApiError, observability::metrics,
    tenancy::HostKind,
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

/// The request id of a request: the client's `X-Request-Id` when it is sane, else new.
#[derive(Clone, Debug)]
pub struct RequestId(pub String);

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

/// Assigns the request id, reads the trace context, and when the answer is out records
/// the request's metrics and writes its log line: request id, school, user, method, route,
/// path, status, latency and trace. Internal errors are logged with their cause here,
/// where the request id is known. Credentials are never part of a log line.
pub async fn access_log<B: MessageBody>(
    req: ServiceRequest,
    next: Next<B>,
) -> Result<ServiceResponse<EitherBody<B>>, Error> {
    let started = Instant::now();
    let request_id = req
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty() && v.len() <= 128 && v.bytes().all(|b| b.is_ascii_graphic()))
        .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned);
    let trace = req
        .headers()
        .get(&TRACEPARENT)
        .and_then(|v| v.to_str().ok())
        .and_then(TraceContext::parse);
    req.extensions_mut().insert(RequestId(request_id.clone()));
    let _in_flight = req
        .app_data::<web::Data<AppState>>()
        .map(|state| InFlight::enter(state.clone()));
    let method = req.method().clone();
    let path = req.path().to_owned();
    let mut res = as_problem(next.call(req).await?);
    if let Ok(value) = HeaderValue::from_str(&request_id) {
        res.headers_mut().insert(REQUEST_ID, value);
    }
    let route = res
        .request()
        .match_pattern()
        .unwrap_or_else(|| "unmatched".to_owned());
    let status = res.status().as_u16();
    let elapsed = started.elapsed();
    metrics::record_request(&route, method.as_str(), status, elapsed);
    let (school, user) = {
        let extensions = res.request().extensions();
        let identity = extensions.get::<LogIdentity>().cloned().unwrap_or_default();
        let school = identity
            .tenant
            .or_else(|| match extensions.get::<HostKind>() {
                Some(HostKind::Tenant(t)) => Some(t.schema_name.to_string()),
                _ => None,
            });
        (school, identity.user.map(|u| u.to_string()))
    };
    if let Some(ApiError::Internal(cause)) = res
        .response()
        .error()
        .and_then(|e| e.as_error::<ApiError>())
    {
        log::error!(target: "access", request_id = request_id.as_str(); "internal error: {cause:#}");
    }
    let (trace_id, parent_id) = trace
        .as_ref()
        .map_or(("-", "-"), |t| (t.trace_id.as_str(), t.parent_id.as_str()));
    log::info!(
        target: "access",
        request_id = request_id.as_str(),
        school = school.as_deref().unwrap_or("-"),
        user = user.as_deref().unwrap_or("-"),
        method = method.as_str(),
        route = route.as_str(),
        path = path.as_str(),
        status = status,
        latency_ms = (elapsed.as_secs_f64() * 100_000.0).round() / 100.0,
        trace_id = trace_id,
        parent_id = parent_id;
        "{method} {path} {status}"
    );
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
