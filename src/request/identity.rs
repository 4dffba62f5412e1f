//! Who a request's access-log line names (`api::access`): its school and user.
//!
//! The one value still handed on through the request's extensions, and why: the access
//! log wraps the whole service and learns of a request only its answer, while the caller
//! is known inside the extractor's `run`; answers are built by each handler and, for
//! errors, by `ApiError` with no request at hand, so no single place could carry the
//! identity back on the response. Written at the edge for a school's address
//! (`api::host`, the school before any authentication) and by `run` once the caller is
//! known; read by the access log alone.

use actix_web::{HttpMessage, HttpRequest};
use uuid::Uuid;

use crate::tenancy::TenantRef;

/// Who is calling, as far as the request log is concerned.
#[derive(Clone, Debug, Default)]
pub struct LogIdentity {
    pub tenant: Option<TenantRef>,
    pub user: Option<Uuid>,
}

impl LogIdentity {
    /// A request on `school`'s address, not (yet) authenticated.
    pub fn of_school(school: TenantRef) -> Self {
        Self {
            tenant: Some(school),
            user: None,
        }
    }

    /// Notes the identity for the request's log line (replacing the address's school).
    pub fn note(self, http: &HttpRequest) {
        http.extensions_mut().insert(self);
    }
}
