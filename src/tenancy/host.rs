//! What a request's host is: the main domain or a school's domain (`HostKind`). Which
//! host a request names is read from its headers at the HTTP edge (`api::host`: only
//! `Host` counts; `Forwarded` and `X-Forwarded-Host` never pick a school).

use std::{borrow::Cow, sync::Arc};

use crate::{
    error::ApiError,
    tenancy::{TenantDirectory, TenantRef},
};

/// What the request's host is (`request::host` computes it).
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

/// A `Host` header's name, lower-cased, without port or trailing dot (read from the
/// request in `request::host`). Borrowed unless it had to be lower-cased.
pub fn normalize_host(raw: &str) -> Cow<'_, str> {
    let raw = raw.trim();
    let without_port = if let Some(rest) = raw.strip_prefix('[') {
        // An IPv6 literal: `[::1]:8000`.
        rest.split(']').next().unwrap_or("")
    } else {
        raw.rsplit_once(':').map_or(raw, |(host, _port)| host)
    };
    let name = without_port.trim_end_matches('.');
    if name.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(name.to_ascii_lowercase())
    } else {
        Cow::Borrowed(name)
    }
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
