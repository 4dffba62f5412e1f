//! The host check at the edge, before routing: each request's host is classified
//! (`request::host`, stage 1) and each path kept on the hosts it belongs to: the
//! platform's paths (system API, metrics, the admin console) on the main domain, the
//! school app on school addresses, `/metrics` on its own listener when one is set.
//! Nothing is handed on: what needs the host's kind after routing classifies it again
//! (a comparison and a cached look-up).

use actix_web::{
    Error, HttpRequest,
    body::{BoxBody, MessageBody},
    dev::{ServiceRequest, ServiceResponse},
    http::header::{self, HeaderMap},
    middleware::Next,
};

use crate::{
    api::{console, docs, metrics, school_app},
    error::ApiError,
    request::{
        host::{kind, request_host},
        identity::LogIdentity,
    },
    state::AppState,
    tenancy::host::HostKind,
};

/// Paths answered on every host, known or not.
fn is_host_independent(path: &str) -> bool {
    matches!(path, "/healthz/" | "/readyz/") || path.starts_with("/api/v1/schema/")
}

pub async fn classify_host(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let state = AppState::of(req.request())?;
    // The path as the router will match it (percent-escapes of unreserved characters
    // decoded): `/api/v1/%73ystem/` must be judged as `/api/v1/system/`.
    let path = req.match_info().as_str();
    let metrics_path = path == metrics::PATH;
    if let Some(metrics_addr) = state.config.metrics_addr {
        // The metrics listener serves `/metrics` alone, and only it does.
        let on_metrics_listener = req.app_config().local_addr() == metrics_addr;
        if on_metrics_listener && metrics_path {
            return next
                .call(req)
                .await
                .map(ServiceResponse::map_into_boxed_body);
        }
        if on_metrics_listener || metrics_path {
            return Ok(req.error_response(ApiError::not_found()));
        }
    }
    if is_host_independent(path) {
        return next
            .call(req)
            .await
            .map(ServiceResponse::map_into_boxed_body);
    }
    let place = Place::of(path);
    let main_domains = &state.config.main_domains;
    let host = kind(req.headers(), req.uri(), main_domains, &state.directory).await;
    let school = match host {
        Ok(HostKind::Tenant(school)) if place != Place::Platform => Some(school),
        Ok(HostKind::Main) if place != Place::School => None,
        Ok(_) => return Ok(req.error_response(ApiError::not_found())),
        Err(err) => return Ok(req.error_response(err)),
    };
    if let Some(school) = school {
        // The school the access log names until the request authenticates (`identity`).
        LogIdentity::of_school(school).note(req.request());
    }
    next.call(req)
        .await
        .map(ServiceResponse::map_into_boxed_body)
}

/// The host a request that got past `classify_host` was matched on (a main domain or a
/// registered school domain), with the port the client named: what links back to this
/// server are built from, rather than the raw `Host` header.
pub fn public_host(req: &HttpRequest) -> String {
    let host = request_host(req.headers(), req.uri());
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.into_owned()
    };
    match request_port(req.headers()) {
        Some(port) => format!("{host}:{port}"),
        None => host,
    }
}

/// The port of the `Host` header, when it names a valid one.
fn request_port(headers: &HeaderMap) -> Option<u16> {
    let raw = headers.get(header::HOST)?.to_str().ok()?.trim();
    let port = match raw.strip_prefix('[') {
        Some(rest) => rest.split_once("]:")?.1,
        None => raw.rsplit_once(':')?.1,
    };
    port.parse().ok()
}

/// Where a path is served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// Platform paths (the system API, metrics, the admin console, the docs page): the
    /// main domain only.
    Platform,
    /// The school app and OneRoster: school addresses only.
    School,
    /// The school API and `/`, which leads to one or the other.
    Either,
}

impl Place {
    fn of(path: &str) -> Self {
        if path.starts_with("/api/v1/school/") {
            Self::Either
        } else if path.starts_with("/api/v1/system/")
            || path == metrics::PATH
            || path.starts_with(console::PATH)
            || path.starts_with(docs::PATH)
        {
            Self::Platform
        } else if path.starts_with(school_app::PATH) || path.starts_with("/ims/") {
            // The school app, and OneRoster (API.md 8).
            Self::School
        } else {
            Self::Either
        }
    }
}
