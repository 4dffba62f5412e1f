//! Request extractors that turn a request into an authenticated, authorised caller.
//!
//! `SchoolRequest` (here) and `SystemRequest` (`system_context`) read headers only (no I/O)
//! when extracted. Their
//! `run` method then does, in one trip to the blocking pool and on one pooled connection:
//! tenant selection, authentication, the tenant match, the permission check, and finally
//! the handler's own database work. Checks happen in the order API.md section 2 fixes.

use std::{future::Ready, sync::Arc};

use actix_web::{FromRequest, HttpMessage, HttpRequest, dev::Payload, http::Method, web};
use chrono::Utc;
use diesel::pg::PgConnection;
use tokio::sync::OwnedSemaphorePermit;
use uuid::Uuid;

use crate::{
    auth::AppState,
    auth::{
        api_key::ApiKeyRecord,
        jwt::{Claims, Layer, TokenType},
        permissions::{Action, Permission, PermissionSet, Resource},
        role_cache::RoleCache,
        school_admission::Admitted,
        user_cache::UserCache,
    },
    db::models::User,
    error::{ApiError, ApiResult},
    school::Actor,
    tenancy::{HostKind, TenantConn, TenantRef},
};

/// Who is calling, as far as the request log is concerned.
#[derive(Clone, Debug, Default)]
pub struct LogIdentity {
    pub tenant: Option<String>,
    pub user: Option<Uuid>,
}

pub(super) enum Credentials {
    None,
    Bearer(String),
    /// An `Authorization` header that is not `Bearer <token>`.
    Malformed,
    ApiKey(String),
}

pub(super) fn credentials(req: &HttpRequest, accept_api_key: bool) -> Credentials {
    if let Some(value) = req.headers().get(actix_web::http::header::AUTHORIZATION) {
        let value = value.to_str().unwrap_or("");
        return match value.split_once(' ') {
            Some((scheme, token))
                if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() =>
            {
                Credentials::Bearer(token.trim().to_owned())
            }
            _ => Credentials::Malformed,
        };
    }
    match req.headers().get("x-api-key") {
        Some(value) if accept_api_key => {
            Credentials::ApiKey(value.to_str().unwrap_or("").trim().to_owned())
        }
        _ => Credentials::None,
    }
}

pub(super) fn state_of(req: &HttpRequest) -> ApiResult<web::Data<AppState>> {
    req.app_data::<web::Data<AppState>>()
        .cloned()
        .ok_or_else(|| ApiError::internal(anyhow::anyhow!("application state missing")))
}

/// What a school endpoint requires of its caller.
#[derive(Clone, Copy, Debug)]
pub enum Need {
    /// Any authenticated caller of this school, even one without roles.
    Authenticated,
    /// The action the HTTP method maps to, on this resource.
    Method(Resource),
    /// Every one of these permissions.
    All(&'static [Permission]),
}

/// The authenticated party of a school request.
#[derive(Debug, Clone)]
pub enum Principal {
    User(Box<User>),
    ApiKey(ApiKeyRecord),
}

#[derive(Debug, Clone)]
pub struct Caller {
    pub tenant: TenantRef,
    pub principal: Principal,
    pub roles: Vec<String>,
    pub permissions: PermissionSet,
}

impl Caller {
    /// The user behind the request; `None` for API keys (their records have no creator).
    pub fn user_id(&self) -> Option<Uuid> {
        match &self.principal {
            Principal::User(user) => Some(user.id),
            Principal::ApiKey(_) => None,
        }
    }

    /// Who the request's writes are by (history's actor; `created_by` keeps its user).
    pub fn actor(&self) -> Actor {
        match &self.principal {
            Principal::User(user) => Actor::user(user.id, user.display_name()),
            Principal::ApiKey(key) => Actor::api_key(key.id, key.name.clone()),
        }
    }

    pub fn user(&self) -> Option<&User> {
        match &self.principal {
            Principal::User(user) => Some(user),
            Principal::ApiKey(_) => None,
        }
    }

    fn require(&self, need: Need, method: &Method) -> ApiResult<()> {
        if let Principal::ApiKey(key) = &self.principal {
            if key.read_only && !matches!(*method, Method::GET | Method::HEAD) {
                return Err(ApiError::PermissionDenied(
                    "this API key is read-only".into(),
                ));
            }
        }
        let missing = match need {
            Need::Authenticated => None,
            Need::Method(resource) => Action::for_method(method)
                .map(|action| Permission::new(action, resource))
                .filter(|p| !self.permissions.contains(*p)),
            Need::All(required) => required
                .iter()
                .copied()
                .find(|p| !self.permissions.contains(*p)),
        };
        match missing {
            None => Ok(()),
            Some(permission) => Err(ApiError::PermissionDenied(format!(
                "you do not have permission to perform this action ({permission} is required)"
            ))),
        }
    }
}

/// A request to a school endpoint, before authentication. Running it admits school users
/// of this school and API keys only: the spec's IsSchoolUser.
pub struct SchoolRequest {
    state: web::Data<AppState>,
    http: HttpRequest,
    host: HostKind,
    x_tenant: Option<String>,
    credentials: Credentials,
}

impl FromRequest for SchoolRequest {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready((|| {
            let host = req
                .extensions()
                .get::<HostKind>()
                .cloned()
                .ok_or(ApiError::TenantNotFound)?;
            let x_tenant = req
                .headers()
                .get("x-tenant")
                .map(|v| v.to_str().unwrap_or("\u{fffd}").trim().to_owned());
            Ok(Self {
                state: state_of(req)?,
                http: req.clone(),
                host,
                x_tenant,
                credentials: credentials(req, true),
            })
        })())
    }
}

impl SchoolRequest {
    pub fn state(&self) -> web::Data<AppState> {
        self.state.clone()
    }

    pub fn http(&self) -> &HttpRequest {
        &self.http
    }

    /// On the main domain with no `X-Tenant`: only a token can choose the school.
    pub fn is_main_without_selection(&self) -> bool {
        matches!(self.host, HostKind::Main) && self.x_tenant.is_none()
    }

    /// The school chosen by host or `X-Tenant` alone, before any credentials are read.
    /// `Ok(None)`: on the main domain with no `X-Tenant`; the token may still choose.
    async fn tenant_by_address(&self) -> ApiResult<Option<TenantRef>> {
        let tenant = match (&self.host, &self.x_tenant) {
            (HostKind::Tenant(tenant), _) => Some(tenant.clone()),
            (HostKind::Main, Some(schema)) => Some(
                self.state
                    .directory
                    .snapshot()
                    .await?
                    .by_schema(schema)
                    .cloned()
                    .ok_or(ApiError::TenantNotFound)?,
            ),
            (HostKind::Main, None) => None,
        };
        if tenant.as_ref().is_some_and(|t| !t.is_active) {
            return Err(ApiError::TenantInactive);
        }
        Ok(tenant)
    }

    /// Takes one of the school's requests from its `SCHOOL_RATE_PER_SECOND` (when set),
    /// holding the request until its token comes when that is near enough.
    async fn pace(&self, school: &TenantRef) -> ApiResult<()> {
        let Some(limit) = &self.state.school_rate else {
            return Ok(());
        };
        match limit.take(&school.schema_name) {
            Ok(delay) if delay.is_zero() => Ok(()),
            Ok(delay) => {
                crate::observability::metrics::school_delayed();
                tokio::time::sleep(delay).await;
                Ok(())
            }
            Err(wait) => {
                crate::observability::metrics::school_throttled();
                Err(ApiError::SchoolRateLimited(
                    wait.as_secs().saturating_add(1),
                ))
            }
        }
    }

    /// The school's turn (`SCHOOL_MAX_IN_FLIGHT`) for a request not admitted before
    /// routing (one with a body, or whose school only its `X-Tenant` or token names).
    async fn admission(&self, school: &TenantRef) -> ApiResult<Option<OwnedSemaphorePermit>> {
        let Some(admission) = &self.state.school_admission else {
            return Ok(None);
        };
        if self.http.extensions().get::<Admitted>().is_some() {
            return Ok(None);
        }
        admission.admit(&school.schema_name).await.map(Some)
    }

    /// On a school's address, an `X-Tenant` naming another school (API.md 1: refused).
    fn x_tenant_conflicts(&self) -> bool {
        match (&self.host, &self.x_tenant) {
            (HostKind::Tenant(host_tenant), Some(schema)) => {
                schema != host_tenant.schema_name.as_str()
            }
            _ => false,
        }
    }

    /// The school for an unauthenticated endpoint (login, refresh): host or `X-Tenant`.
    /// With no credentials to check first, a conflicting `X-Tenant` is refused at once.
    pub async fn tenant_for_login(&self) -> ApiResult<TenantRef> {
        let tenant = self
            .tenant_by_address()
            .await?
            .ok_or(ApiError::TenantNotFound)?;
        if self.x_tenant_conflicts() {
            return Err(ApiError::TenantMismatch(
                "the X-Tenant header names another school",
            ));
        }
        self.pace(&tenant).await?;
        Ok(tenant)
    }

    /// Authenticates and authorises the caller, then runs `work` on a connection bound to
    /// the request's school: all in one blocking task on one pooled connection.
    pub async fn run<T, F>(self, need: Need, work: F) -> ApiResult<T>
    where
        F: FnOnce(&mut TenantConn, &Caller) -> ApiResult<T> + Send + 'static,
        T: Send + 'static,
    {
        let by_address = self.tenant_by_address().await?;
        // What the request authenticates with, or why it cannot (decided once, reported
        // after tenant selection as API.md orders it).
        let auth = match &self.credentials {
            Credentials::None => Err(ApiError::NotAuthenticated),
            Credentials::Malformed => Err(ApiError::TokenNotValid(
                "the Authorization header must be 'Bearer <token>'",
            )),
            Credentials::Bearer(token) => self
                .state
                .jwt
                .decode(token, TokenType::Access, Layer::School)
                .map(Authenticate::Token),
            Credentials::ApiKey(key) => Ok(Authenticate::Key(key.clone())),
        };
        let (tenant, auth) = match (by_address, auth) {
            (Some(tenant), auth) => (tenant, auth),
            // Main domain, no X-Tenant: only a valid token's `tenant` claim can choose.
            (None, Ok(Authenticate::Token(claims))) => {
                let schema = claims.tenant.as_deref().unwrap_or_default();
                let snapshot = self.state.directory.snapshot().await?;
                let tenant = snapshot
                    .by_schema(schema)
                    .cloned()
                    .ok_or(ApiError::TenantNotFound)?;
                if !tenant.is_active {
                    return Err(ApiError::TenantInactive);
                }
                (tenant, Ok(Authenticate::Token(claims)))
            }
            (None, Ok(Authenticate::Key(_)) | Err(ApiError::NotAuthenticated)) => {
                return Err(ApiError::TenantNotFound);
            }
            (None, Err(err)) => return Err(err),
        };
        let credentials = auth?;
        self.pace(&tenant).await?;
        // Held until the work is done (the answer is written by the caller).
        let _admitted = self.admission(&tenant).await?;
        let x_tenant_mismatch = self.x_tenant_conflicts();
        let method = self.http.method().clone();
        let secret = self.state.config.jwt_secret.clone();
        let tenant_ref = tenant.clone();
        let role_cache = self.state.role_cache.clone();
        let identity = Arc::new(std::sync::Mutex::new(LogIdentity {
            tenant: Some(tenant.schema_name.to_string()),
            user: None,
        }));
        let identity_in_task = identity.clone();
        let token_user = match &credentials {
            Authenticate::Token(claims) => Some(claims.sub),
            Authenticate::Key(_) => None,
        };
        let task = move |conn: &mut TenantConn, loaded: Option<User>| {
            let caller = authenticate(conn, &role_cache, tenant, credentials, loaded, &secret)?;
            if let Ok(mut identity) = identity_in_task.lock() {
                identity.user = caller.user_id();
            }
            if x_tenant_mismatch {
                return Err(ApiError::TenantMismatch(
                    "the X-Tenant header names another school",
                ));
            }
            caller.require(need, &method)?;
            work(conn, &caller)
        };
        let db = &self.state.db;
        let users = self.state.user_cache.clone();
        let result = match token_user.map(|id| (id, users.get(id))) {
            // A cached user: the handler's queries are the request's only round trips.
            Some((_, Some(user))) => {
                db.run_in_tenant(tenant_ref, move |conn| task(conn, Some(User::clone(&user))))
                    .await
            }
            // Otherwise the token's user is loaded by the query that binds the connection.
            Some((user_id, None)) => {
                let generation = users.generation();
                db.run_in_tenant_as(tenant_ref, user_id, move |conn, loaded| {
                    if let Some(user) = &loaded {
                        users.insert(generation, user);
                    }
                    task(conn, loaded)
                })
                .await
            }
            None => {
                db.run_in_tenant(tenant_ref, move |conn| task(conn, None))
                    .await
            }
        };
        if let Ok(identity) = identity.lock() {
            self.http.extensions_mut().insert(identity.clone());
        }
        result
    }
}

enum Authenticate {
    Token(Claims),
    Key(String),
}

/// Runs on the blocking pool: loads the principal and its permissions in this school.
/// `loaded`: the token's user, already read while binding the connection.
fn authenticate(
    conn: &mut TenantConn,
    role_cache: &RoleCache,
    tenant: TenantRef,
    credentials: Authenticate,
    loaded: Option<User>,
    secret: &str,
) -> ApiResult<Caller> {
    match credentials {
        Authenticate::Token(claims) => {
            let user = usable_token_user(loaded, &claims)?;
            if user.client_id != Some(tenant.id)
                || claims.tenant.as_deref() != Some(tenant.schema_name.as_str())
            {
                return Err(ApiError::TenantMismatch(
                    "this token was issued for another school",
                ));
            }
            let (role_names, permissions) = role_cache.get_or_load(conn, user.id)?;
            Ok(Caller {
                tenant,
                principal: Principal::User(Box::new(user)),
                roles: role_names,
                permissions,
            })
        }
        Authenticate::Key(key) => {
            let now = Utc::now();
            let record = ApiKeyRecord::find_by_key(conn.pg(), secret, &key)?
                .filter(|record| record.is_usable(now))
                .ok_or(ApiError::InvalidApiKey)?;
            if record.tenant_id.is_some_and(|id| id != tenant.id) {
                return Err(ApiError::TenantMismatch(
                    "this API key is scoped to another school",
                ));
            }
            record.touch(conn.pg(), now)?;
            let permissions = if record.read_only {
                PermissionSet::all().view_only()
            } else {
                PermissionSet::all()
            };
            Ok(Caller {
                tenant,
                principal: Principal::ApiKey(record),
                roles: Vec::new(),
                permissions,
            })
        }
    }
}

/// The user a valid access or refresh token names, if still allowed to use it.
pub fn load_token_user(conn: &mut PgConnection, claims: &Claims) -> ApiResult<User> {
    usable_token_user(User::find(conn, claims.sub)?, claims)
}

/// `load_token_user` through the user cache.
pub fn cached_token_user(
    conn: &mut PgConnection,
    users: &UserCache,
    claims: &Claims,
) -> ApiResult<User> {
    if let Some(user) = users.get(claims.sub) {
        return usable_token_user(Some(User::clone(&user)), claims);
    }
    let generation = users.generation();
    let user = User::find(conn, claims.sub)?;
    if let Some(user) = &user {
        users.insert(generation, user);
    }
    usable_token_user(user, claims)
}

/// `user` (the token's subject) if it is active and the token is of its current version.
fn usable_token_user(user: Option<User>, claims: &Claims) -> ApiResult<User> {
    user.filter(|user| user.is_active && user.token_version == claims.ver)
        .ok_or(ApiError::TokenNotValid(
            "the user is inactive or the token was revoked",
        ))
}
