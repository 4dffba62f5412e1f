//! `SystemRequest`: the extractor of platform (system) endpoints, and what they require
//! of their caller. The host middleware has already refused system paths on school
//! addresses.

use std::future::Ready;

use actix_web::{FromRequest, HttpMessage, HttpRequest, dev::Payload, web};
use diesel::pg::PgConnection;

use crate::{
    auth::AppState,
    auth::{
        context::{Credentials, LogIdentity, cached_token_user, credentials, state_of},
        jwt::{Layer, TokenType},
    },
    db::models::User,
    error::{ApiError, ApiResult},
};

/// What a system endpoint requires of its caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SystemNeed {
    /// Any platform user (`client` null), admin or not: `me`, `logout`.
    PlatformUser,
    /// `is_staff` or `is_superuser` (the spec's IsPlatformAdmin).
    PlatformAdmin,
    /// `is_superuser` (the spec's IsSuperAdmin).
    SuperAdmin,
}

/// A request to a system endpoint, before authentication. The host middleware has already
/// refused system paths on school addresses.
pub struct SystemRequest {
    state: web::Data<AppState>,
    http: HttpRequest,
    credentials: Credentials,
}

impl FromRequest for SystemRequest {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(state_of(req).map(|state| Self {
            state,
            http: req.clone(),
            // An API key on a system endpoint counts as no credentials.
            credentials: credentials(req, false),
        }))
    }
}

impl SystemRequest {
    pub fn state(&self) -> web::Data<AppState> {
        self.state.clone()
    }

    pub fn http(&self) -> &HttpRequest {
        &self.http
    }

    pub async fn run<T, F>(self, need: SystemNeed, work: F) -> ApiResult<T>
    where
        F: FnOnce(&mut PgConnection, &User) -> ApiResult<T> + Send + 'static,
        T: Send + 'static,
    {
        let claims = match &self.credentials {
            Credentials::None | Credentials::ApiKey(_) => return Err(ApiError::NotAuthenticated),
            Credentials::Malformed => {
                return Err(ApiError::TokenNotValid(
                    "the Authorization header must be 'Bearer <token>'",
                ));
            }
            Credentials::Bearer(token) => {
                self.state
                    .jwt
                    .decode(token, TokenType::Access, Layer::System)?
            }
        };
        let user_id = claims.sub;
        let users = self.state.user_cache.clone();
        let result = self
            .state
            .db
            .run(move |conn| {
                let user = cached_token_user(conn, &users, &claims)?;
                if user.client_id.is_some() {
                    return Err(ApiError::TokenNotValid(
                        "school users cannot use system endpoints",
                    ));
                }
                let allowed = match need {
                    SystemNeed::PlatformUser => true,
                    SystemNeed::PlatformAdmin => user.is_platform_admin(),
                    SystemNeed::SuperAdmin => user.is_superuser,
                };
                if !allowed {
                    return Err(ApiError::PermissionDenied(
                        "you do not have permission to perform this action".into(),
                    ));
                }
                work(conn, &user)
            })
            .await;
        self.http.extensions_mut().insert(LogIdentity {
            tenant: None,
            user: Some(user_id),
        });
        result
    }
}
