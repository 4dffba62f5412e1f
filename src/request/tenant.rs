//! Stage 2, tenant: which school a request is for, before any credentials are read.

use std::sync::Arc;

use crate::{
    error::{ApiError, ApiResult},
    tenancy::{HostKind, TenantDirectory, TenantRef},
};

/// The school chosen by the address: the host's, or on the main domain the one `X-Tenant`
/// names. `Ok(None)`: the main domain without `X-Tenant` (only a token may choose then).
/// An inactive school is refused (403 `tenant_inactive`), an unknown one 404.
pub async fn by_address(
    host: &HostKind,
    x_tenant: Option<&str>,
    directory: &Arc<TenantDirectory>,
) -> ApiResult<Option<TenantRef>> {
    let tenant = match (host, x_tenant) {
        (HostKind::Tenant(tenant), _) => tenant.clone(),
        (HostKind::Main, Some(schema)) => by_schema(schema, directory).await?,
        (HostKind::Main, None) => return Ok(None),
    };
    active(tenant).map(Some)
}

/// The school a token's `tenant` claim names (the main domain without `X-Tenant`).
pub async fn by_claim(schema: &str, directory: &Arc<TenantDirectory>) -> ApiResult<TenantRef> {
    active(by_schema(schema, directory).await?)
}

async fn by_schema(schema: &str, directory: &Arc<TenantDirectory>) -> ApiResult<TenantRef> {
    (directory.snapshot().await?.by_schema(schema).cloned()).ok_or(ApiError::TenantNotFound)
}

fn active(tenant: TenantRef) -> ApiResult<TenantRef> {
    if tenant.is_active {
        Ok(tenant)
    } else {
        Err(ApiError::TenantInactive)
    }
}

/// On a school's address, an `X-Tenant` naming another school (API.md 1: refused, once
/// the credentials are known good).
pub fn x_tenant_conflicts(host: &HostKind, x_tenant: Option<&str>) -> bool {
    match (host, x_tenant) {
        (HostKind::Tenant(tenant), Some(schema)) => schema != tenant.schema_name.as_str(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::{active, x_tenant_conflicts};
    use crate::{
        db::schema_name::SchemaName,
        error::ApiError,
        tenancy::{HostKind, Tenant},
    };

    fn school(name: &str, is_active: bool) -> Arc<Tenant> {
        Arc::new(Tenant {
            id: uuid::Uuid::new_v4(),
            schema_name: SchemaName::parse(name).expect("name"),
            name: name.into(),
            is_active,
        })
    }

    #[test]
    fn x_tenant_conflicts_only_with_another_school_on_a_school_address() {
        let host = HostKind::Tenant(school("alpha", true));
        assert!(x_tenant_conflicts(&host, Some("beta")));
        assert!(!x_tenant_conflicts(&host, Some("alpha")));
        assert!(!x_tenant_conflicts(&host, None));
        assert!(!x_tenant_conflicts(&HostKind::Main, Some("beta")));
    }

    #[test]
    fn an_inactive_school_is_refused() {
        assert!(active(school("alpha", true)).is_ok());
        assert!(matches!(
            active(school("alpha", false)),
            Err(ApiError::TenantInactive)
        ));
    }
}
