//! `SchoolRequest`: the extractor of school endpoints. Extracting it reads headers only
//! (no I/O); `run` then steps through the stages `request` lists, in their order, and
//! runs the handler's work in the same unit of work as the last one.

use std::future::Ready;

use actix_web::{
    FromRequest, HttpRequest,
    dev::Payload,
    http::{Method, Uri},
    web,
};

use crate::{
    error::{ApiError, ApiResult},
    request::{
        admit,
        authenticate::{self, Authenticated, Credentials, credentials},
        disclose::{disclosures_of, outside_party},
        failed, host,
        identity::LogIdentity,
        pace,
        require::{Caller, Need, caller_of},
        tenant,
    },
    state::AppState,
    tenancy::{HostKind, TenantConn, TenantRef},
};

/// A request to a school endpoint, before authentication. Running it admits school users
/// of this school and API keys only: the spec's IsSchoolUser.
pub struct SchoolRequest {
    state: web::Data<AppState>,
    http: HttpRequest,
    x_tenant: Option<String>,
    credentials: Credentials,
}

impl FromRequest for SchoolRequest {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(AppState::of(req).map(|state| {
            Self {
                state,
                http: req.clone(),
                x_tenant: req
                    .headers()
                    .get("x-tenant")
                    .map(|v| v.to_str().unwrap_or("\u{fffd}").trim().to_owned()),
                credentials: credentials(req.headers(), true),
            }
        }))
    }
}

impl SchoolRequest {
    /// Runs the request's stages: host, tenant and authenticate, pace, admit, then in one
    /// unit of work on a pooled connection bound to the school, require and `work`.
    pub async fn run<T, F>(self, need: Need, work: F) -> ApiResult<T>
    where
        F: FnOnce(&mut TenantConn, &Caller) -> ApiResult<T> + Send + 'static,
        T: Send + 'static,
    {
        let Self {
            state,
            http,
            x_tenant,
            credentials,
        } = self;
        let host = host_of(&state, &http).await?;
        let (tenant, authenticated) =
            authenticate::school_caller(&state, &host, x_tenant.as_deref(), credentials)
                .await
                .map_err(|refused| failed_authentication(&state, &http, refused))?;
        let user = authenticated.user_id();
        LogIdentity {
            tenant: Some(tenant.clone()),
            user,
        }
        .note(&http);
        pace::pace(state.school_rate.as_ref(), &tenant.schema_name).await?;
        // Held until the work is done (the answer is written by the caller).
        let _admitted = admit::admit(state.school_admission.as_ref(), &tenant.schema_name).await?;
        let unit = Unit {
            state: state.clone(),
            need,
            method: http.method().clone(),
            target: http.uri().clone(),
            tenant: tenant.clone(),
            authenticated,
        };
        (state.db)
            .run_in_tenant(tenant, move |conn| unit.run(conn, work))
            .await
    }

    pub fn state(&self) -> web::Data<AppState> {
        self.state.clone()
    }

    pub fn http(&self) -> &HttpRequest {
        &self.http
    }

    /// On the main domain with no `X-Tenant`: only a token can choose the school.
    pub fn is_main_without_selection(&self) -> bool {
        let (headers, uri) = (self.http.headers(), self.http.uri());
        self.x_tenant.is_none() && host::is_main(headers, uri, &self.state.config.main_domains)
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
        let host = host_of(&self.state, &self.http).await?;
        let x_tenant = self.x_tenant.as_deref();
        let tenant = tenant::by_address(&host, x_tenant, &self.state.directory)
            .await?
            .ok_or(ApiError::TenantNotFound)?;
        if tenant::x_tenant_conflicts(&host, x_tenant) {
            return Err(ApiError::TenantMismatch(
                "the X-Tenant header names another school",
            ));
        }
        Ok(tenant)
    }

    /// `refused`, or 429 once this client address has failed authentication too often
    /// (`request::failed`).
    pub fn failed_authentication(&self, refused: ApiError) -> ApiError {
        failed_authentication(&self.state, &self.http, refused)
    }
}

/// Stage 1, host (`request::host`).
async fn host_of(state: &AppState, http: &HttpRequest) -> ApiResult<HostKind> {
    let main_domains = &state.config.main_domains;
    host::kind(http.headers(), http.uri(), main_domains, &state.directory).await
}

fn failed_authentication(state: &AppState, http: &HttpRequest, refused: ApiError) -> ApiError {
    let client = http.peer_addr().map(|addr| addr.ip());
    failed::failed_authentication(state.failed_auth.as_ref(), client, refused)
}

/// Stage 6 and the handler's work, in one unit of work on the connection's lane.
struct Unit {
    state: web::Data<AppState>,
    need: Need,
    method: Method,
    /// Written out only for a disclosure (a copy of the request's URI is a reference).
    target: Uri,
    tenant: TenantRef,
    authenticated: Authenticated,
}

impl Unit {
    fn run<T>(
        self,
        conn: &mut TenantConn,
        work: impl FnOnce(&mut TenantConn, &Caller) -> ApiResult<T>,
    ) -> ApiResult<T> {
        let caller = caller_of(
            conn,
            &self.state.role_cache,
            self.tenant,
            self.authenticated,
        )?;
        caller.require(self.need, &self.method)?;
        // Reads by a party outside the school are disclosures (API.md 11): the school
        // layer's reads note the students they answer, queued here once answered.
        let reading = matches!(self.method, Method::GET | Method::HEAD);
        let outsider = reading.then(|| outside_party(&caller)).flatten();
        if outsider.is_some() {
            conn.reader().record_disclosures();
        }
        let answer = work(conn, &caller)?;
        if let Some(party) = outsider {
            let disclosed = conn.reader().take_disclosed();
            let entries = disclosures_of(&party, &self.target.to_string(), disclosed);
            self.state
                .disclosures
                .record(caller.tenant.clone(), entries);
        }
        Ok(answer)
    }
}
