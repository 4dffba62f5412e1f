//! Classifies each request by its host before routing (see `tenancy::host`), and keeps
//! each path on the hosts it belongs to: the platform's paths (system API, metrics, the
//! admin console) on the main domain, the school app on school addresses, `/metrics` on
//! its own listener when one is set.

use actix_web::{
    Error, HttpMessage,
    body::{BoxBody, MessageBody},
    dev::{ServiceRequest, ServiceResponse},
    middleware::Next,
    web,
};

use crate::{
    api::{body::announces_no_body, console, docs, metrics, school_app},
    auth::{AppState, school_admission::Admitted},
    error::ApiError,
    tenancy::host::{self, HostKind, request_host},
};

/// Paths answered on every host, known or not.
fn is_host_independent(path: &str) -> bool {
    matches!(path, "/healthz/" | "/readyz/") || path.starts_with("/api/v1/schema/")
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
    if is_host_independent(&path) {
        return next
            .call(req)
            .await
            .map(ServiceResponse::map_into_boxed_body);
    }
    let host = request_host(req.headers(), req.uri());
    let kind = match host::resolve(&host, &state.config.main_domains, &state.directory).await {
        Ok(kind) => kind,
        Err(err) => return Ok(req.error_response(err)),
    };
    // Platform paths (the system API, metrics, the admin console, the docs page) exist on
    // the main domain only, the school app on school addresses only (`/` leads to one or
    // the other).
    let platform_path = path.starts_with("/api/v1/system/")
        || metrics_path
        || path.starts_with(console::PATH)
        || path.starts_with(docs::PATH);
    // OneRoster (API.md 8) is served on school addresses only.
    let school_path = path.starts_with(school_app::PATH) || path.starts_with("/ims/");
    let misplaced = match kind {
        HostKind::Tenant(_) => platform_path,
        HostKind::Main => school_path,
    };
    if misplaced {
        return Ok(req.error_response(ApiError::not_found()));
    }
    // A school's requests without a body take their school's turn here, before any work
    // is done on them; the others once their body is in (`SchoolRequest::run`).
    let admitted = match (&kind, &state.school_admission) {
        (HostKind::Tenant(tenant), Some(admission)) if announces_no_body(req.headers()) => {
            match admission.admit(&tenant.schema_name).await {
                Ok(permit) => Some(permit),
                Err(err) => return Ok(req.error_response(err)),
            }
        }
        _ => None,
    };
    if admitted.is_some() {
        req.extensions_mut().insert(Admitted);
    }
    req.extensions_mut().insert(kind);
    let answered = next
        .call(req)
        .await
        .map(ServiceResponse::map_into_boxed_body);
    drop(admitted);
    answered
}
