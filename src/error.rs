//! The one error type of the HTTP API and its mapping to RFC 9457 problem details.
//!
//! Handlers and query functions return `ApiError`; `ResponseError` turns it into an
//! `application/problem+json` body with a stable `code`. Internal causes are never put in a
//! body: they are logged (with the request id) by the access-log middleware.

use std::collections::BTreeMap;

use actix_web::{
    HttpResponse, ResponseError,
    http::{Method, StatusCode, header},
};
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use serde_json::json;

/// Field name → messages, as answered in the `errors` member of a validation problem.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FieldErrors(BTreeMap<String, Vec<String>>);

impl FieldErrors {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn single(field: &str, message: impl Into<String>) -> Self {
        let mut errors = Self::new();
        errors.add(field, message);
        errors
    }

    pub fn add(&mut self, field: &str, message: impl Into<String>) {
        self.0
            .entry(field.to_owned())
            .or_default()
            .push(message.into());
    }

    pub fn extend(&mut self, other: FieldErrors) {
        for (field, messages) in other.0 {
            self.0.entry(field).or_default().extend(messages);
        }
    }

    pub fn has(&self, field: &str) -> bool {
        self.0.contains_key(field)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `Ok(value)` when no error was recorded.
    pub fn into_result<T>(self, value: T) -> Result<T, ApiError> {
        if self.is_empty() {
            Ok(value)
        } else {
            Err(ApiError::Validation(self))
        }
    }

    fn summary(&self) -> String {
        self.0
            .iter()
            .flat_map(|(field, messages)| messages.iter().map(move |m| format!("{field}: {m}")))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{}", .0.summary())]
    Validation(FieldErrors),
    #[error("{0}")]
    MalformedJson(String),
    #[error("'{0}' is not a valid UUID")]
    InvalidId(String),
    #[error("{0}")]
    InvalidQuery(String),
    #[error("authentication credentials were not provided")]
    NotAuthenticated,
    #[error("no active account found with the given credentials")]
    InvalidCredentials,
    #[error("token is invalid or expired: {0}")]
    TokenNotValid(&'static str),
    #[error("the API key is invalid, revoked or expired")]
    InvalidApiKey,
    #[error("{0}")]
    WrongAuthLayer(&'static str),
    #[error("{0}")]
    TenantMismatch(&'static str),
    #[error("this school is deactivated")]
    TenantInactive,
    #[error("{0}")]
    PermissionDenied(String),
    #[error("only users with a teacher profile can do this")]
    NotATeacher,
    #[error("no school is registered for this address or selection")]
    TenantNotFound,
    #[error("{0}")]
    NotFound(&'static str),
    #[error("invalid page")]
    InvalidPage,
    #[error("method {method} is not allowed here")]
    MethodNotAllowed { method: Method, allow: Vec<Method> },
    #[error("{0}")]
    Conflict(String),
    #[error("the request body is larger than {0} bytes")]
    PayloadTooLarge(usize),
    /// The body did not arrive within `REQUEST_BODY_TIMEOUT_MS`.
    #[error("the request body did not arrive within {0} ms")]
    BodyTimeout(u64),
    #[error("request bodies must be JSON (Content-Type: application/json)")]
    UnsupportedMediaType,
    #[error("too many failed logins; try again in {0} seconds")]
    Throttled(u64),
    /// The school sent more than `SCHOOL_RATE_PER_SECOND`; retry after the seconds given.
    #[error(
        "this school is sending requests faster than its rate allows; try again in {0} second(s)"
    )]
    SchoolRateLimited(u64),
    /// A CORS preflight from an origin not in `CORS_ALLOWED_ORIGINS`, or asking for a
    /// method or header the API does not allow.
    #[error("cross-origin request refused: {0}")]
    CorsRefused(String),
    #[error("the database is unavailable; try again shortly")]
    ServiceUnavailable,
    /// The request waited `DB_POOL_TIMEOUT_MS` for its school's turn (`SCHOOL_MAX_IN_FLIGHT`).
    #[error("this school has too many requests in progress; try again shortly")]
    SchoolBusy,
    /// A statement ran past `DB_STATEMENT_TIMEOUT_MS` and was cancelled.
    #[error("the request took too long in the database and was cancelled; try again shortly")]
    DatabaseTimeout,
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

impl ApiError {
    pub fn not_found() -> Self {
        Self::NotFound("not found")
    }

    pub fn validation(field: &str, message: impl Into<String>) -> Self {
        Self::Validation(FieldErrors::single(field, message))
    }

    pub fn internal(err: impl Into<anyhow::Error>) -> Self {
        Self::Internal(err.into())
    }

    pub fn code(&self) -> &'static str {
        match self {
            Self::Validation(_) => "validation_error",
            Self::MalformedJson(_) => "malformed_json",
            Self::InvalidId(_) => "invalid_id",
            Self::InvalidQuery(_) => "invalid_query",
            Self::NotAuthenticated => "not_authenticated",
            Self::InvalidCredentials => "invalid_credentials",
            Self::TokenNotValid(_) => "token_not_valid",
            Self::InvalidApiKey => "invalid_api_key",
            Self::WrongAuthLayer(_) => "wrong_auth_layer",
            Self::TenantMismatch(_) => "tenant_mismatch",
            Self::TenantInactive => "tenant_inactive",
            Self::PermissionDenied(_) => "permission_denied",
            Self::NotATeacher => "not_a_teacher",
            Self::TenantNotFound => "tenant_not_found",
            Self::NotFound(_) => "not_found",
            Self::InvalidPage => "invalid_page",
            Self::MethodNotAllowed { .. } => "method_not_allowed",
            Self::Conflict(_) => "conflict",
            Self::PayloadTooLarge(_) => "payload_too_large",
            Self::BodyTimeout(_) => "request_timeout",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::Throttled(_) | Self::SchoolRateLimited(_) => "throttled",
            Self::CorsRefused(_) => "cors_refused",
            Self::ServiceUnavailable | Self::SchoolBusy => "service_unavailable",
            Self::DatabaseTimeout => "database_timeout",
            Self::Internal(_) => "internal_error",
        }
    }
}

/// Seconds a client should wait before retrying after a 503.
const UNAVAILABLE_RETRY_AFTER_SECS: u64 = 5;

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::Validation(_)
            | Self::MalformedJson(_)
            | Self::InvalidId(_)
            | Self::InvalidQuery(_) => StatusCode::BAD_REQUEST,
            Self::NotAuthenticated
            | Self::InvalidCredentials
            | Self::TokenNotValid(_)
            | Self::InvalidApiKey => StatusCode::UNAUTHORIZED,
            Self::WrongAuthLayer(_)
            | Self::TenantMismatch(_)
            | Self::TenantInactive
            | Self::PermissionDenied(_)
            | Self::NotATeacher
            | Self::CorsRefused(_) => StatusCode::FORBIDDEN,
            Self::TenantNotFound | Self::NotFound(_) | Self::InvalidPage => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            Self::Conflict(_) => StatusCode::CONFLICT,
            Self::PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::BodyTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::Throttled(_) | Self::SchoolRateLimited(_) => StatusCode::TOO_MANY_REQUESTS,
            Self::ServiceUnavailable | Self::SchoolBusy | Self::DatabaseTimeout => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let status = self.status_code();
        let detail = match self {
            // The cause of a 500 is logged with the request id, never sent.
            Self::Internal(_) => "an unexpected error occurred".to_owned(),
            other => other.to_string(),
        };
        let mut body = json!({
            "type": "about:blank",
            "title": status.canonical_reason().unwrap_or("Error"),
            "status": status.as_u16(),
            "code": self.code(),
            "detail": detail,
        });
        if let Self::Validation(errors) = self {
            body["errors"] = json!(errors.0);
        }
        let mut response = HttpResponse::build(status);
        response.content_type("application/problem+json");
        match self {
            Self::Throttled(secs) | Self::SchoolRateLimited(secs) => {
                response.insert_header((header::RETRY_AFTER, secs.to_string()));
            }
            Self::ServiceUnavailable | Self::SchoolBusy | Self::DatabaseTimeout => {
                response.insert_header((header::RETRY_AFTER, UNAVAILABLE_RETRY_AFTER_SECS));
            }
            Self::MethodNotAllowed { allow, .. } => {
                let allow = allow
                    .iter()
                    .map(Method::as_str)
                    .collect::<Vec<_>>()
                    .join(", ");
                response.insert_header((header::ALLOW, allow));
            }
            Self::NotAuthenticated | Self::TokenNotValid(_) => {
                response.insert_header((header::WWW_AUTHENTICATE, "Bearer"));
            }
            _ => {}
        }
        response.body(body.to_string())
    }
}

impl From<DieselError> for ApiError {
    fn from(err: DieselError) -> Self {
        match err {
            DieselError::NotFound => Self::not_found(),
            DieselError::DatabaseError(kind, info) => match kind {
                DatabaseErrorKind::UniqueViolation => Self::Conflict(conflict_detail(
                    info.constraint_name(),
                    "a record with these values already exists",
                )),
                DatabaseErrorKind::ForeignKeyViolation => Self::Conflict(conflict_detail(
                    info.constraint_name(),
                    "the record is referenced by other records",
                )),
                DatabaseErrorKind::CheckViolation => {
                    Self::validation("non_field", check_detail(info.constraint_name()))
                }
                DatabaseErrorKind::ClosedConnection => Self::ServiceUnavailable,
                _ if statement_timed_out(info.message()) => Self::DatabaseTimeout,
                _ if connection_lost(info.message()) => Self::ServiceUnavailable,
                _ => Self::Internal(anyhow::anyhow!(
                    "database error {kind:?}: {}",
                    info.message()
                )),
            },
            other => Self::Internal(other.into()),
        }
    }
}

/// A sentence for a broken check constraint (the parsers keep most from the database; a
/// race between two requests can still reach one). The constraint's name is not sent.
fn check_detail(constraint: Option<&str>) -> &'static str {
    match constraint {
        Some("academic_sessions_deleted_inactive") => {
            "a deleted session cannot be active: the session was deleted or activated by \
             another request at the same time; read it again and retry"
        }
        _ => "the values break a rule of this record; read it again and retry",
    }
}

fn conflict_detail(constraint: Option<&str>, fallback: &str) -> String {
    match constraint {
        Some(name) => format!("{fallback} ({name})"),
        None => fallback.to_owned(),
    }
}

/// SQLSTATE 57014 as `statement_timeout` words it (diesel does not classify it).
fn statement_timed_out(message: &str) -> bool {
    message.contains("canceling statement due to statement timeout")
}

/// libpq reports a dead server as an unclassified error; recognise it by its text.
fn connection_lost(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    [
        "server closed the connection",
        "no connection to the server",
        "connection refused",
    ]
    .iter()
    .any(|needle| message.contains(needle))
        || message.contains("terminating connection")
}

impl From<r2d2::Error> for ApiError {
    fn from(_: r2d2::Error) -> Self {
        // r2d2 reports only a checkout timeout: the pool is exhausted or the database down.
        Self::ServiceUnavailable
    }
}

impl From<actix_web::error::BlockingError> for ApiError {
    fn from(err: actix_web::error::BlockingError) -> Self {
        Self::internal(anyhow::anyhow!("blocking task failed: {err}"))
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::body::MessageBody;

    fn body_of(err: &ApiError) -> serde_json::Value {
        let bytes = err
            .error_response()
            .into_body()
            .try_into_bytes()
            .expect("bytes");
        serde_json::from_slice(&bytes).expect("json")
    }

    #[test]
    fn validation_problem_lists_fields() {
        let mut errors = FieldErrors::new();
        errors.add("name", "ensure this field has at most 255 characters");
        let body = body_of(&ApiError::Validation(errors));
        assert_eq!(body["status"], 400);
        assert_eq!(body["code"], "validation_error");
        assert_eq!(
            body["errors"]["name"][0],
            "ensure this field has at most 255 characters"
        );
        assert_eq!(
            body["detail"],
            "name: ensure this field has at most 255 characters"
        );
    }

    #[test]
    fn internal_errors_hide_their_cause() {
        let err = ApiError::internal(anyhow::anyhow!("SELECT secret FROM users"));
        let body = body_of(&err);
        assert_eq!(body["status"], 500);
        assert!(!body.to_string().contains("SELECT"));
        assert!(body.get("errors").is_none());
    }

    /// A database error as diesel reports it, for the mapping tests.
    struct Info(&'static str, Option<&'static str>);

    impl diesel::result::DatabaseErrorInformation for Info {
        fn message(&self) -> &str {
            self.0
        }
        fn details(&self) -> Option<&str> {
            None
        }
        fn hint(&self) -> Option<&str> {
            None
        }
        fn table_name(&self) -> Option<&str> {
            None
        }
        fn column_name(&self) -> Option<&str> {
            None
        }
        fn constraint_name(&self) -> Option<&str> {
            self.1
        }
        fn statement_position(&self) -> Option<i32> {
            None
        }
    }

    fn from_db(kind: DatabaseErrorKind, info: Info) -> ApiError {
        ApiError::from(DieselError::DatabaseError(kind, Box::new(info)))
    }

    #[test]
    fn broken_checks_answer_sentences_not_constraint_names() {
        for constraint in [
            Some("academic_sessions_deleted_inactive"),
            Some("x_check"),
            None,
        ] {
            let err = from_db(
                DatabaseErrorKind::CheckViolation,
                Info("new row violates check constraint", constraint),
            );
            let body = body_of(&err);
            assert_eq!(body["code"], "validation_error");
            let detail = body["detail"].as_str().expect("detail");
            assert!(
                !detail.contains("_inactive") && !detail.contains("x_check"),
                "{detail}"
            );
            assert!(detail.ends_with("retry"), "{detail}");
        }
    }

    #[test]
    fn a_cancelled_statement_is_a_503_of_its_own() {
        let err = from_db(
            DatabaseErrorKind::Unknown,
            Info("canceling statement due to statement timeout", None),
        );
        assert!(matches!(err, ApiError::DatabaseTimeout));
        let body = body_of(&err);
        assert_eq!(body["status"], 503);
        assert_eq!(body["code"], "database_timeout");
    }
}
