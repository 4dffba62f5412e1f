//! A request's host: which one it names (only `Host` counts; `Forwarded` and
//! `X-Forwarded-Host` are never used to pick a school), and what it is: the main domain or
//! a school's domain (`HostKind`, decided by `api::host::classify_host`).

use std::sync::Arc;

use actix_web::{
    HttpRequest,
    http::{
        Uri,
        header::{self, HeaderMap},
    },
};

use crate::{
    error::ApiError,
    tenancy::{TenantDirectory, TenantRef},
};

/// What the request's host is; put in the request extensions by `api::host`.
#[derive(Clone, Debug)]
pub enum HostKind {
    Main,
    Tenant(TenantRef),
}

/// What `host` is: a main domain, or an active school's domain (403 `tenant_inactive` for
/// an inactive school's, 404 `tenant_not_found` for an unknown one).
pub async fn resolve(
    host: &str,
    main_domains: &[String],
    directory: &Arc<TenantDirectory>,
) -> Result<HostKind, ApiError> {
    if main_domains.iter().any(|main| main == host) {
        return Ok(HostKind::Main);
    }
    match directory.snapshot().await?.by_domain(host) {
        Some(tenant) if !tenant.is_active => Err(ApiError::TenantInactive),
        Some(tenant) => Ok(HostKind::Tenant(tenant.clone())),
        None => Err(ApiError::TenantNotFound),
    }
}

/// The host name of the request, lower-cased, without port or trailing dot.
pub fn request_host(headers: &HeaderMap, uri: &Uri) -> String {
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
