//! `SystemRequest`: the extractor of platform (system) endpoints, and what they require
//! of their caller. The edge's host check has already refused system paths on school
//! addresses; what is left is authenticate (a system access token, its user through
//! `cache::users`) and require, on one pooled connection with the handler's work.

use std::future::Ready;

use actix_web::{FromRequest, HttpRequest, dev::Payload, web};
use diesel::pg::PgConnection;

use crate::{
    auth::jwt::{Claims, JwtKeys, Layer, TokenType},
    db::models::User,
    error::{ApiError, ApiResult},
    request::{
        authenticate::{Credentials, cached_token_user, credentials},
        identity::LogIdentity,
    },
    state::AppState,
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

/// A request to a system endpoint, before authentication.
pub struct SystemRequest {
    state: web::Data<AppState>,
    http: HttpRequest,
    credentials: Credentials,
}

impl FromRequest for SystemRequest {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(AppState::of(req).map(|state| Self {
            state,
            http: req.clone(),
            // An API key on a system endpoint counts as no credentials.
            credentials: credentials(req.headers(), false),
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

    /// Authenticates the caller's system token, then on one pooled connection loads its
    /// user, checks `need` and runs `work`.
    pub async fn run<T, F>(self, need: SystemNeed, work: F) -> ApiResult<T>
    where
        F: FnOnce(&mut PgConnection, &User) -> ApiResult<T> + Send + 'static,
        T: Send + 'static,
    {
        let claims = system_claims(&self.state.jwt, self.credentials)?;
        let identity = LogIdentity {
            tenant: None,
            user: Some(claims.sub),
        };
        identity.note(&self.http);
        let users = self.state.user_cache.clone();
        (self.state.db)
            .run(move |conn| {
                let user = cached_token_user(conn, &users, &claims)?;
                require(need, &user)?;
                work(conn, &user)
            })
            .await
    }
}

/// The claims of the system access token presented, or why there is none.
fn system_claims(jwt: &JwtKeys, credentials: Credentials) -> ApiResult<Claims> {
    match credentials {
        Credentials::None | Credentials::ApiKey(_) => Err(ApiError::NotAuthenticated),
        Credentials::Malformed => Err(ApiError::TokenNotValid(
            "the Authorization header must be 'Bearer <token>'",
        )),
        Credentials::Bearer(token) => jwt.decode(&token, TokenType::Access, Layer::System),
    }
}

/// Whether the token's user, a platform user, may do what `need` names.
fn require(need: SystemNeed, user: &User) -> ApiResult<()> {
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
    if allowed {
        Ok(())
    } else {
        Err(ApiError::PermissionDenied(
            "you do not have permission to perform this action".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use chrono::Utc;
    use uuid::Uuid;

    use super::{SystemNeed, require, system_claims};
    use crate::{
        auth::jwt::{JwtKeys, Layer, TokenType},
        db::models::User,
        error::ApiError,
        request::authenticate::Credentials,
    };

    fn user(is_staff: bool, is_superuser: bool, client_id: Option<Uuid>) -> User {
        let now = Utc::now();
        User {
            id: Uuid::new_v4(),
            email: None,
            phone: None,
            password_hash: String::new(),
            first_name: String::new(),
            last_name: String::new(),
            is_active: true,
            is_superuser,
            is_staff,
            client_id,
            token_version: 0,
            created_at: now,
            updated_at: now,
            last_login: None,
        }
    }

    #[test]
    fn each_need_admits_its_platform_users_and_no_school_user() {
        let (plain, staff, root) = (
            user(false, false, None),
            user(true, false, None),
            user(false, true, None),
        );
        assert!(require(SystemNeed::PlatformUser, &plain).is_ok());
        assert!(require(SystemNeed::PlatformAdmin, &plain).is_err());
        assert!(require(SystemNeed::PlatformAdmin, &staff).is_ok());
        assert!(require(SystemNeed::SuperAdmin, &staff).is_err());
        assert!(require(SystemNeed::SuperAdmin, &root).is_ok());
        assert!(matches!(
            require(
                SystemNeed::PlatformUser,
                &user(true, true, Some(Uuid::new_v4()))
            ),
            Err(ApiError::TokenNotValid(_))
        ));
    }

    #[test]
    fn only_a_system_access_token_authenticates() {
        let keys = JwtKeys::new("secret", Duration::from_secs(60), Duration::from_secs(60));
        let token = |layer| keys.issue(Uuid::new_v4(), 0, layer, None, TokenType::Access);
        let system = Credentials::Bearer(token(Layer::System).expect("token"));
        assert!(system_claims(&keys, system).is_ok());
        let school = Credentials::Bearer(token(Layer::School).expect("token"));
        assert!(system_claims(&keys, school).is_err());
        assert!(matches!(
            system_claims(&keys, Credentials::ApiKey("k".into())),
            Err(ApiError::NotAuthenticated)
        ));
    }
}
