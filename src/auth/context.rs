//! Request extractors that turn a request into an authenticated, authorised caller.
//!
//! `SchoolRequest` (here) and `SystemRequest` (`system_context`) read headers only (no I/O)
//! when extracted. `SchoolRequest::run` then steps through the stages `request` lists:
//! tenant selection, authentication and the tenant match, the school's pace and turn, and
//! in one trip to a pooled connection's lane (`db::lanes`) the permission check and the
//! handler's own database work. Checks happen in the order API.md section 2 fixes.

use std::{future::Ready, sync::Arc};

use actix_web::{FromRequest, HttpMessage, HttpRequest, dev::Payload, http::Method, web};
use chrono::Utc;
use diesel::pg::PgConnection;
use uuid::Uuid;

use crate::{
    auth::AppState,
    auth::{
        api_key::ApiKeyRecord,
        disclosures::{disclosures_of, outside_party},
        jwt::{Claims, Layer, TokenType},
        permissions::{Action, GUARDIAN_ROLE, Permission, PermissionSet, Resource},
        role_cache::RoleCache,
        user_cache::UserCache,
    },
    db::models::User,
    error::{ApiError, ApiResult},
    request::{admit, failed, pace, tenant},
    school::{Actor, guardians::Guardians},
    tenancy::{HostKind, ReadScope, TenantConn, TenantRef},
};

/// Who is calling, as far as the request log is concerned.
#[derive(Clone, Debug, Default)]
pub struct LogIdentity {
    pub tenant: Option<TenantRef>,
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
    /// Shared with the user cache: a cached user is not copied per request.
    User(Arc<User>),
    ApiKey(ApiKeyRecord),
}

#[derive(Debug, Clone)]
pub struct Caller {
    pub tenant: TenantRef,
    pub principal: Principal,
    pub roles: Arc<[String]>,
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
/// of this school and API keys only: the spec's IsSchoolUser. `run` steps through the
/// stages `request` lists, in its order.
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
            // Stage 1 (host) ran in `api::host`, a middleware: the one value it hands on.
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

/// Who a request authenticated as, before its roles are loaded.
enum Authenticated {
    User(Arc<User>),
    Key(ApiKeyRecord),
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

    /// Stage 2, by address: the school chosen by host or `X-Tenant` alone.
    async fn tenant_by_address(&self) -> ApiResult<Option<TenantRef>> {
        tenant::by_address(&self.host, self.x_tenant.as_deref(), &self.state.directory).await
    }

    fn x_tenant_conflicts(&self) -> bool {
        tenant::x_tenant_conflicts(&self.host, self.x_tenant.as_deref())
    }

    /// Stage 4 for the unauthenticated endpoints (login, refresh), once their own
    /// credentials are checked: the school's pace.
    pub async fn pace(&self, school: &TenantRef) -> ApiResult<()> {
        pace::pace(self.state.school_rate.as_ref(), &school.schema_name).await
    }

    /// The school for an unauthenticated endpoint (login, refresh): host or `X-Tenant`.
    /// With no credentials to check first, a conflicting `X-Tenant` is refused at once.
    /// Not paced here: the endpoint paces once the credentials it carries are good.
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
        Ok(tenant)
    }

    /// Stage 3, authenticate, with the tenant stage's token branch: the school and who is
    /// calling it. A failure spends the client address's budget (`request::failed`).
    async fn authenticate(&self) -> ApiResult<(TenantRef, Authenticated)> {
        let authenticated = self.authenticate_as_school().await;
        authenticated.map_err(|refused| self.failed_authentication(refused))
    }

    /// `refused`, or 429 once this client address has failed authentication too often
    /// (`request::failed`); other errors pass as they are.
    pub fn failed_authentication(&self, refused: ApiError) -> ApiError {
        match refused {
            ApiError::NotAuthenticated
            | ApiError::TokenNotValid(_)
            | ApiError::InvalidApiKey
            | ApiError::TenantMismatch(_) => failed::failed_authentication(
                self.state.failed_auth.as_ref(),
                self.http.peer_addr().map(|addr| addr.ip()),
                refused,
            ),
            other => other,
        }
    }

    async fn authenticate_as_school(&self) -> ApiResult<(TenantRef, Authenticated)> {
        let by_address = self.tenant_by_address().await?;
        // What the request authenticates with, or why it cannot (reported after tenant
        // selection, as API.md orders it).
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
        let (tenant, credentials) = match (by_address, auth) {
            (Some(tenant), auth) => (tenant, auth?),
            // Main domain, no X-Tenant: only a valid token's `tenant` claim can choose.
            (None, Ok(Authenticate::Token(claims))) => {
                let schema = claims.tenant.as_deref().unwrap_or_default();
                let tenant = tenant::by_claim(schema, &self.state.directory).await?;
                (tenant, Authenticate::Token(claims))
            }
            (None, Ok(Authenticate::Key(_)) | Err(ApiError::NotAuthenticated)) => {
                return Err(ApiError::TenantNotFound);
            }
            (None, Err(err)) => return Err(err),
        };
        let caller = match credentials {
            Authenticate::Token(claims) => {
                Authenticated::User(self.token_user(claims, &tenant).await?)
            }
            Authenticate::Key(key) => Authenticated::Key(self.api_key(key, &tenant).await?),
        };
        if self.x_tenant_conflicts() {
            return Err(ApiError::TenantMismatch(
                "the X-Tenant header names another school",
            ));
        }
        Ok((tenant, caller))
    }

    /// The token's user (from the cache, else one platform query), if it may still use the
    /// token and belongs to `tenant`.
    async fn token_user(&self, claims: Claims, tenant: &TenantRef) -> ApiResult<Arc<User>> {
        let users = self.state.user_cache.clone();
        let user = match users.get(claims.sub) {
            Some(user) if usable(&user, &claims) => user,
            Some(_) => return Err(revoked()),
            None => {
                let claims = claims.clone();
                let user = self
                    .state
                    .db
                    .run(move |conn| cached_token_user(conn, &users, &claims))
                    .await?;
                Arc::new(user)
            }
        };
        if user.client_id != Some(tenant.id)
            || claims.tenant.as_deref() != Some(tenant.schema_name.as_str())
        {
            return Err(ApiError::TenantMismatch(
                "this token was issued for another school",
            ));
        }
        Ok(user)
    }

    /// The API key's record (one platform query), if usable and not scoped to another
    /// school.
    async fn api_key(&self, key: String, tenant: &TenantRef) -> ApiResult<ApiKeyRecord> {
        let secret = self.state.config.jwt_secret.clone();
        let now = Utc::now();
        let record = self
            .state
            .db
            .run(move |conn| Ok(ApiKeyRecord::find_by_key(conn, secret.expose(), &key)?))
            .await?
            .filter(|record| record.is_usable(now))
            .ok_or(ApiError::InvalidApiKey)?;
        if record.tenant_id.is_some_and(|id| id != tenant.id) {
            return Err(ApiError::TenantMismatch(
                "this API key is scoped to another school",
            ));
        }
        Ok(record)
    }

    /// Runs the request's stages (`request`): tenant, authenticate, pace, admit, then in
    /// one unit of work on a pooled connection bound to the school, require and `work`.
    pub async fn run<T, F>(self, need: Need, work: F) -> ApiResult<T>
    where
        F: FnOnce(&mut TenantConn, &Caller) -> ApiResult<T> + Send + 'static,
        T: Send + 'static,
    {
        let (tenant, authenticated) = self.authenticate().await?;
        self.http.extensions_mut().insert(LogIdentity {
            tenant: Some(tenant.clone()),
            user: match &authenticated {
                Authenticated::User(user) => Some(user.id),
                Authenticated::Key(_) => None,
            },
        });
        self.pace(&tenant).await?;
        // Held until the work is done (the answer is written by the caller).
        let _admitted =
            admit::admit(self.state.school_admission.as_ref(), &tenant.schema_name).await?;
        let method = self.http.method().clone();
        let role_cache = self.state.role_cache.clone();
        let task_tenant = tenant.clone();
        let reading = matches!(method, Method::GET | Method::HEAD);
        // Written out only for a disclosure (a copy of the request's URI is a reference).
        let target = self.http.uri().clone();
        let state = self.state.clone();
        self.state
            .db
            .run_in_tenant(tenant, move |conn| {
                let caller = caller_of(conn, &role_cache, task_tenant, authenticated)?;
                caller.require(need, &method)?;
                // Reads by a party outside the school are disclosures (API.md 11): the school
                // layer's reads note the students they answer, queued here once answered.
                let outsider = reading.then(|| outside_party(&caller)).flatten();
                if outsider.is_some() {
                    conn.reader().record_disclosures();
                }
                let answer = work(conn, &caller)?;
                if let Some(party) = outsider {
                    let disclosed = conn.reader().take_disclosed();
                    let entries = disclosures_of(&party, &target.to_string(), disclosed);
                    state.disclosures.record(caller.tenant.clone(), entries);
                }
                Ok(answer)
            })
            .await
    }
}

enum Authenticate {
    Token(Claims),
    Key(String),
}

/// Stage 6's first half, on the connection's lane: the authenticated caller's permissions in
/// this school (an API key's `last_used_at` is recorded here, once it is let in).
fn caller_of(
    conn: &mut TenantConn,
    role_cache: &RoleCache,
    tenant: TenantRef,
    authenticated: Authenticated,
) -> ApiResult<Caller> {
    match authenticated {
        Authenticated::User(user) => {
            let grants = role_cache.get_or_load(conn, user.id)?;
            let (role_names, permissions) = (grants.roles, grants.permissions);
            if role_names.iter().any(|role| role == GUARDIAN_ROLE) {
                // A guardian reads their children's records only, whatever else they hold.
                let children = Guardians::children_of(conn, user.id)?;
                conn.narrow_reads(ReadScope::Students(children.into()));
            }
            Ok(Caller {
                tenant,
                principal: Principal::User(user),
                roles: role_names,
                permissions,
            })
        }
        Authenticated::Key(record) => {
            record.touch(conn.pg(), Utc::now())?;
            let permissions = if record.read_only {
                PermissionSet::all().view_only()
            } else {
                PermissionSet::all()
            };
            Ok(Caller {
                tenant,
                principal: Principal::ApiKey(record),
                roles: Arc::new([]),
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
    user.filter(|user| usable(user, claims)).ok_or_else(revoked)
}

/// Whether `user` may still use a token with these claims.
fn usable(user: &User, claims: &Claims) -> bool {
    user.is_active && user.token_version == claims.ver
}

fn revoked() -> ApiError {
    ApiError::TokenNotValid("the user is inactive or the token was revoked")
}
