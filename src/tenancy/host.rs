//! Classifies each request by its `Host` header, before routing: the main domain, a
//! school's domain, or unknown. Only `Host` counts; `Forwarded` and `X-Forwarded-Host` are
//! never used to pick a school.

use actix_web::{
    Error, HttpMessage, HttpRequest,
    body::{BoxBody, MessageBody},
    dev::{ServiceRequest, ServiceResponse},
    http::{
        Uri,
        header::{self, HeaderMap},
    },
    middleware::Next,
    web,
};

use crate::{error::ApiError, observability::scrape, state::AppState, tenancy::TenantRef};

/// What the request's host is; put in the request extensions by `classify_host`.
#[derive(Clone, Debug)]
pub enum HostKind {
    Main,
    Tenant(TenantRef),
}

/// Paths answered on every host, known or not.
fn is_host_independent(path: &str) -> bool {
    matches!(path, "/healthz/" | "/readyz/")
        || path.starts_with("/api/v1/schema/")
        || path.starts_with("/api/v1/docs/")
}

pub async fn classify_host(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    // The path as the router will match it (percent-escapes of unreserved characters
    // decoded): `/api/v1/%73ystem/` must be judged as `/api/v1/system/`.
    let path = req.match_info().as_str().to_owned();
    let Some(state) = req.app_data::<web::Data<AppState>>().cloned() else {
        return Err(ApiError::internal(anyhow::anyhow!("application state missing")).into());
    };
    let metrics_path = path == scrape::PATH;
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
    if is_host_independent(&path) {
        return next
            .call(req)
            .await
            .map(ServiceResponse::map_into_boxed_body);
    }
    let host = request_host(req.headers(), req.uri());
    let kind = if state.config.main_domains.contains(&host) {
        HostKind::Main
    } else {
        let snapshot = match state.directory.snapshot().await {
            Ok(snapshot) => snapshot,
            Err(err) => return Ok(req.error_response(err)),
        };
        match snapshot.by_domain(&host) {
            Some(tenant) if !tenant.is_active => {
                return Ok(req.error_response(ApiError::TenantInactive));
            }
            Some(tenant) => HostKind::Tenant(tenant.clone()),
            None => return Ok(req.error_response(ApiError::TenantNotFound)),
        }
    };
    // Platform paths (the system API, metrics, the admin console) exist on the main
    // domain only.
    let platform_path = path.starts_with("/api/v1/system/")
        || metrics_path
        || path == "/"
        || path.starts_with(crate::api::console::PATH);
    if matches!(kind, HostKind::Tenant(_)) && platform_path {
        return Ok(req.error_response(ApiError::not_found()));
    }
    req.extensions_mut().insert(kind);
    next.call(req)
        .await
        .map(ServiceResponse::map_into_boxed_body)
}

/// The host name of the request, lower-cased, without port or trailing dot.
fn request_host(headers: &HeaderMap, uri: &Uri) -> String {
    let raw = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .or_else(|| uri.host())
        .unwrap_or("");
    normalize_host(raw)
}

/// The host a request that got past `classify_host` was matched on (a main domain or a
/// registered school domain), with the port the client named: what links back to this
/// server are built from, rather than the raw `Host` header.
pub fn public_host(req: &HttpRequest) -> String {
    let host = request_host(req.headers(), req.uri());
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host
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

pub fn normalize_host(raw: &str) -> String {
    let raw = raw.trim();
    let without_port = if let Some(rest) = raw.strip_prefix('[') {
        // An IPv6 literal: `[::1]:8000`.
        rest.split(']').next().unwrap_or("")
    } else {
        raw.rsplit_once(':').map_or(raw, |(host, _port)| host)
    };
    without_port.trim_end_matches('.').to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::normalize_host;

    #[test]
    fn strips_port_case_and_trailing_dot() {
        assert_eq!(
            normalize_host("Greenwood.Localhost:8000"),
            "greenwood.localhost"
        );
        assert_eq!(
            normalize_host("greenwood.localhost."),
            "greenwood.localhost"
        );
        assert_eq!(normalize_host("127.0.0.1:8000"), "127.0.0.1");
        assert_eq!(normalize_host("[::1]:8000"), "::1");
        assert_eq!(normalize_host("localhost"), "localhost");
    }
}
