//! A OneRoster request: the school by its address, the bearer token of one of its
//! integration clients, the scopes the operation needs, and errors as the binding's
//! status-info payload (`imsx_codeMajor`, `imsx_severity`, `imsx_description`,
//! `imsx_CodeMinor`) instead of problem+json.
//!
//! A client is a party outside the school: the students its reads answer are disclosures
//! (API.md 11), noted by the reads (`disclosed`) and queued for the disclosure log once the
//! read is answered, as `SchoolRequest::run` does for API keys.

use actix_web::{
    HttpRequest, HttpResponse, ResponseError,
    http::{Method, StatusCode, header},
    web,
};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::{
    error::{ApiError, ApiResult},
    request::{disclose::disclosures_of, host},
    school::{
        disclosures::{Disclosures, Party, PartyKind},
        oneroster::{
            clients,
            clients::Grant,
            roster::{Entity, Provider},
        },
    },
    state::AppState,
    tenancy::{HostKind, TenantConn},
};

/// An error as the REST binding answers it.
#[derive(Debug)]
pub struct OrError {
    pub status: StatusCode,
    /// The binding's `imsx_CodeMinor` value (`unknownobject`, `invalid_filter_field`, ...).
    pub minor: &'static str,
    pub description: String,
}

impl OrError {
    pub fn new(status: StatusCode, minor: &'static str, description: impl Into<String>) -> Self {
        Self {
            status,
            minor,
            description: description.into(),
        }
    }

    pub fn bad(minor: &'static str, description: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, minor, description)
    }

    pub fn unknown(what: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "unknownobject",
            format!("no {what} has this sourcedId"),
        )
    }
}

impl std::fmt::Display for OrError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.status, self.minor, self.description)
    }
}

impl ResponseError for OrError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        let mut answer = HttpResponse::build(self.status);
        if self.status == StatusCode::UNAUTHORIZED {
            answer.insert_header((header::WWW_AUTHENTICATE, "Bearer realm=\"oneroster\""));
        }
        answer.json(json!({
            "imsx_codeMajor": "failure",
            "imsx_severity": "error",
            "imsx_description": self.description,
            "imsx_CodeMinor": {"imsx_codeMinorField": [{
                "imsx_codeMinorFieldName": "TargetEndSystem",
                "imsx_codeMinorFieldValue": self.minor,
            }]},
        }))
    }
}

impl From<ApiError> for OrError {
    fn from(err: ApiError) -> Self {
        let status = err.status_code();
        match err {
            ApiError::NotFound(_) | ApiError::TenantNotFound => {
                Self::new(StatusCode::NOT_FOUND, "unknownobject", "no such object")
            }
            err @ ApiError::Validation(_) => Self::bad("invaliddata", err.to_string()),
            ApiError::Conflict(detail) => Self::new(StatusCode::CONFLICT, "invaliddata", detail),
            ApiError::TenantInactive => Self::new(status, "forbidden", "the school is inactive"),
            ApiError::ServiceUnavailable
            | ApiError::SchoolBusy
            | ApiError::DatabaseTimeout
            | ApiError::SchoolRateLimited(_) => {
                Self::new(status, "server_busy", "the server is busy; retry later")
            }
            other => {
                log::error!("oneroster request failed: {other:?}");
                Self::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal_server_error",
                    "internal error",
                )
            }
        }
    }
}

/// Which scopes open an operation: any one of them.
pub type Scopes = &'static [&'static str];

pub const ROSTER_READ: Scopes = &["roster-core.readonly", "roster.readonly"];
pub const DEMOGRAPHICS_READ: Scopes = &["roster-demographics.readonly", "roster.readonly"];
pub const GRADEBOOK_READ: Scopes = &["gradebook.readonly"];
pub const GRADEBOOK_PUT: Scopes = &["gradebook.createput"];
pub const GRADEBOOK_DELETE: Scopes = &["gradebook.delete"];

/// Authenticates the request's client on the school of its address, checks `scopes`,
/// then runs `work` on a connection bound to the school, all on one pooled connection.
pub async fn run<T, F>(http: &HttpRequest, scopes: Scopes, work: F) -> Result<T, OrError>
where
    F: FnOnce(&mut TenantConn, &Provider, &Grant) -> Result<T, OrError> + Send + 'static,
    T: Send + 'static,
{
    let state = http
        .app_data::<web::Data<AppState>>()
        .cloned()
        .ok_or_else(|| OrError::from(ApiError::internal(anyhow::anyhow!("state missing"))))?;
    let main_domains = &state.config.main_domains;
    let host = host::kind(http.headers(), http.uri(), main_domains, &state.directory).await;
    let tenant = match host? {
        HostKind::Tenant(tenant) => tenant,
        HostKind::Main => {
            return Err(OrError::new(
                StatusCode::NOT_FOUND,
                "unknownobject",
                "no such path",
            ));
        }
    };
    let token = http
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, token)| scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty())
        .map(|(_, token)| token.trim().to_owned())
        .ok_or_else(|| {
            OrError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorisedrequest",
                "a bearer token is required",
            )
        })?;
    let connection_info = http.connection_info().clone();
    let provider = Provider {
        base: format!(
            "{}://{}/ims/oneroster",
            connection_info.scheme(),
            connection_info.host()
        ),
        org_id: tenant.id,
        org_name: tenant.name.clone(),
    };
    let key = state.config.jwt_secret.clone();
    let reading = matches!(*http.method(), Method::GET | Method::HEAD);
    let target = http.uri().to_string();
    let school = tenant.clone();
    let log = state.clone();
    state
        .db
        .run_in_tenant(tenant, move |conn| {
            let Some(grant) = clients::grant_of(conn, key.expose(), &token)? else {
                return Ok(Err(OrError::new(
                    StatusCode::UNAUTHORIZED,
                    "unauthorisedrequest",
                    "the token is unknown, expired or revoked",
                )));
            };
            if !scopes.iter().any(|scope| grant.has(scope)) {
                return Ok(Err(OrError::new(
                    StatusCode::FORBIDDEN,
                    "forbidden",
                    format!("the token lacks the scope ({})", scopes.join(" or ")),
                )));
            }
            if reading {
                conn.reader().record_disclosures();
            }
            // A refused write leaves nothing behind.
            let answer = conn.transaction(|conn| work(conn, &provider, &grant));
            if reading && answer.is_ok() {
                let party = Party::new(PartyKind::OauthClient, grant.client, &grant.client_name);
                let disclosed = conn.reader().take_disclosed();
                log.disclosures
                    .record(school, disclosures_of(&party, &target, disclosed));
            }
            Ok(answer)
        })
        .await?
}

/// Notes the students `records` (a read's answer, before `fields=` narrows it) are about,
/// as records of kind `what`, when the reader is a party outside the school: every
/// sourcedId in them (their own, or a part of a joined one, and those of their references,
/// such as an enrollment's `user` or a result's `student`) that names a student of the
/// school. One query; nothing for other readers.
pub fn disclosed(conn: &mut TenantConn, what: &'static str, records: &[Entity]) -> ApiResult<()> {
    if !conn.reader().is_disclosing() {
        return Ok(());
    }
    let mut ids = Vec::new();
    for record in records {
        sourced_ids(record, &mut ids);
    }
    ids.sort_unstable();
    ids.dedup();
    let students = Disclosures::students_among(conn, &ids)?;
    conn.reader().disclosed(students, what);
    Ok(())
}

/// The UUIDs of every `sourcedId` in `object` and the objects within it.
fn sourced_ids(object: &serde_json::Map<String, Value>, ids: &mut Vec<Uuid>) {
    for (key, value) in object {
        match value {
            Value::String(id) if key == "sourcedId" => {
                ids.extend(id.split('.').filter_map(|part| Uuid::parse_str(part).ok()));
            }
            Value::Object(inner) => sourced_ids(inner, ids),
            Value::Array(items) => {
                for item in items {
                    if let Value::Object(inner) = item {
                        sourced_ids(inner, ids);
                    }
                }
            }
            _ => {}
        }
    }
}

impl From<diesel::result::Error> for OrError {
    fn from(err: diesel::result::Error) -> Self {
        ApiError::from(err).into()
    }
}
