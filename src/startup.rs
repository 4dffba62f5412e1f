//! Building the application: shared state, middleware and routes, bound to a listener.

use std::{net::TcpListener, sync::Arc, time::Instant};

use actix_cors::Cors;
use actix_web::{
    App, Error, HttpMessage, HttpServer,
    body::MessageBody,
    dev::{Server, ServiceRequest, ServiceResponse},
    http::header::{self, HeaderName, HeaderValue},
    middleware::{Next, NormalizePath, TrailingSlash, from_fn},
    web,
};

use crate::{
    api,
    auth::{
        context::LogIdentity, jwt::JwtKeys, password, role_cache::RoleCache,
        throttle::LoginThrottle,
    },
    config::Config,
    db::Db,
    error::ApiError,
    tenancy::{HostKind, TenantDirectory, host::classify_host},
};

/// What every handler can reach.
pub struct AppState {
    pub config: Config,
    pub db: Db,
    pub directory: Arc<TenantDirectory>,
    pub role_cache: Arc<RoleCache>,
    pub jwt: JwtKeys,
    pub throttle: LoginThrottle,
    /// Checked when a login names no user, so that refusal takes as long as a bad password.
    pub dummy_hash: String,
    /// Requests being handled; graceful shutdown waits for it to reach zero.
    pub in_flight: std::sync::atomic::AtomicUsize,
    /// Bounds concurrent bcrypt work to the number of cores: logins queue in order instead
    /// of all slowing down together, and hashing cannot take every blocking thread.
    pub hashing: tokio::sync::Semaphore,
}

impl AppState {
    pub fn new(config: Config) -> Self {
        let db = Db::with_mode(
            &config.database_url,
            config.db_pool_size,
            config.db_pool_timeout,
            config.db_pool_mode,
        );
        let directory = Arc::new(TenantDirectory::new(db.clone()));
        Self {
            jwt: JwtKeys::new(
                &config.jwt_secret,
                config.access_token_ttl,
                config.refresh_token_ttl,
            ),
            throttle: LoginThrottle::new(config.login_rate_per_minute),
            dummy_hash: password::dummy_hash(config.bcrypt_cost),
            in_flight: std::sync::atomic::AtomicUsize::new(0),
            hashing: tokio::sync::Semaphore::new(
                std::thread::available_parallelism().map_or(2, |n| n.get()),
            ),
            db,
            directory,
            role_cache: Arc::new(RoleCache::default()),
            config,
        }
    }
}

impl AppState {
    /// Hashes a password on the blocking pool, at most one job per core at a time.
    pub async fn hash_password(&self, password: String) -> Result<String, ApiError> {
        let cost = self.config.bcrypt_cost;
        let _permit = self.hashing.acquire().await.map_err(ApiError::internal)?;
        web::block(move || password::hash(&password, cost))
            .await?
            .map_err(ApiError::internal)
    }

    /// Checks a password on the blocking pool, at most one job per core at a time.
    pub async fn verify_password(
        &self,
        password: String,
        stored_hash: String,
    ) -> Result<bool, ApiError> {
        let _permit = self.hashing.acquire().await.map_err(ApiError::internal)?;
        Ok(web::block(move || password::verify(&password, &stored_hash)).await?)
    }
}

pub struct Application {
    port: u16,
    server: Server,
    state: web::Data<AppState>,
}

impl Application {
    /// Binds `config.bind_addr` (port 0 picks a free port) and builds the server.
    pub fn build(config: Config) -> anyhow::Result<Self> {
        let Some(listen_url) = config.database_listen_url.clone() else {
            anyhow::bail!(
                "DB_POOL_MODE=transaction needs DATABASE_LISTEN_URL: a direct PostgreSQL \
                 connection for LISTEN, which a transaction pooler cannot carry"
            );
        };
        let listener = TcpListener::bind(config.bind_addr)?;
        let port = listener.local_addr()?.port();
        let state = web::Data::new(AppState::new(config));
        state
            .directory
            .spawn_listener(listen_url, state.role_cache.clone());
        let server = serve(listener, state.clone())?;
        Ok(Self {
            port,
            server,
            state,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Runs until SIGTERM or SIGINT, then shuts down gracefully: stop accepting, let the
    /// requests in flight finish (counted by the access-log middleware, up to 30 s), then
    /// stop the server. Our own count, rather than actix-server's per-worker connection
    /// count, decides when the requests are done.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        // Lives as long as the server: aborted when this function returns.
        let purger = AbortOnDrop(tokio::spawn(purge_revoked_tokens(self.state.clone())));
        let handle = self.server.handle();
        let mut server = std::pin::pin!(self.server);
        let signal = std::pin::pin!(shutdown_signal());
        let signal = match futures_util::future::select(server.as_mut(), signal).await {
            futures_util::future::Either::Left((result, _)) => return result,
            futures_util::future::Either::Right((signal, _)) => signal,
        };
        log::info!("{signal} received: refusing new connections, finishing requests in flight");
        drop(purger);
        let state = self.state.clone();
        // Stop commands are carried out by the server future: keep driving it meanwhile.
        actix_rt::spawn(async move {
            handle.pause().await;
            let deadline = std::time::Instant::now() + SHUTDOWN_GRACE;
            while state.in_flight.load(std::sync::atomic::Ordering::SeqCst) > 0
                && std::time::Instant::now() < deadline
            {
                actix_rt::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            // The last responses are handed to their sockets right after their handlers end.
            actix_rt::time::sleep(std::time::Duration::from_millis(200)).await;
            handle.stop(false).await;
        });
        server.await
    }
}

/// Purges revoked refresh tokens that have expired anyway, now and then every
/// `TOKEN_PURGE_INTERVAL`, so `revoked_tokens` stays as small as the live tokens.
async fn purge_revoked_tokens(state: web::Data<AppState>) {
    let mut interval = tokio::time::interval(state.config.token_purge_interval);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        match state
            .db
            .run(|conn| Ok(crate::db::models::revoked_token::purge_expired(conn)?))
            .await
        {
            Ok(0) => {}
            Ok(purged) => log::info!("purged {purged} expired revoked tokens"),
            Err(err) => log::warn!("purging expired revoked tokens failed: {err}"),
        }
    }
}

/// Aborts a spawned task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// How long shutdown waits for requests in flight.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(30);

/// Resolves with the name of the first termination signal received.
async fn shutdown_signal() -> &'static str {
    use actix_rt::signal::unix::{SignalKind, signal};
    match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(mut term), Ok(mut int)) => {
            let term = std::pin::pin!(term.recv());
            let int = std::pin::pin!(int.recv());
            match futures_util::future::select(term, int).await {
                futures_util::future::Either::Left(_) => "SIGTERM",
                futures_util::future::Either::Right(_) => "SIGINT",
            }
        }
        _ => {
            log::warn!(
                "cannot listen for termination signals; stop the process to stop the server"
            );
            std::future::pending().await
        }
    }
}

fn serve(listener: TcpListener, state: web::Data<AppState>) -> anyhow::Result<Server> {
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let server = HttpServer::new(move || {
        App::new()
            .app_data(state.clone())
            .wrap(from_fn(classify_host))
            .wrap(NormalizePath::new(TrailingSlash::Always))
            .wrap(cors(&state.config.cors_allowed_origins))
            .wrap(from_fn(access_log))
            .configure(api::configure)
            .default_service(web::to(api::routes::not_found))
    })
    .workers(workers)
    // Signals are handled by `run_until_stopped`.
    .disable_signals()
    .shutdown_timeout(30)
    .listen(listener)?
    .run();
    Ok(server)
}

fn cors(origins: &[String]) -> Cors {
    let mut cors = Cors::default()
        .allowed_methods(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
        .allowed_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            HeaderName::from_static("x-api-key"),
            HeaderName::from_static("x-tenant"),
            HeaderName::from_static("x-request-id"),
        ])
        .expose_headers([HeaderName::from_static("x-request-id")])
        .max_age(600);
    for origin in origins {
        cors = cors.allowed_origin(origin);
    }
    cors
}

/// Counts a request as in flight for as long as it lives (also when it fails or is cancelled).
struct InFlight(web::Data<AppState>);

impl InFlight {
    fn enter(state: web::Data<AppState>) -> Self {
        state
            .in_flight
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Self(state)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0
            .in_flight
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The request id of a request: the client's `X-Request-Id` when it is sane, else new.
#[derive(Clone, Debug)]
pub struct RequestId(pub String);

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Assigns the request id, and writes one log line per request when the answer is out:
/// request id, tenant, user, method, path, status and latency. Internal errors are logged
/// with their cause here, where the request id is known.
async fn access_log(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let started = Instant::now();
    let request_id = req
        .headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty() && v.len() <= 128 && v.bytes().all(|b| b.is_ascii_graphic()))
        .map_or_else(|| uuid::Uuid::new_v4().to_string(), str::to_owned);
    req.extensions_mut().insert(RequestId(request_id.clone()));
    let _in_flight = req
        .app_data::<web::Data<AppState>>()
        .map(|state| InFlight::enter(state.clone()));
    let method = req.method().clone();
    let path = req.path().to_owned();
    let mut res = next.call(req).await?;
    if let Ok(value) = HeaderValue::from_str(&request_id) {
        res.headers_mut().insert(REQUEST_ID, value);
    }
    let (tenant, user) = {
        let extensions = res.request().extensions();
        let identity = extensions.get::<LogIdentity>().cloned().unwrap_or_default();
        let tenant = identity
            .tenant
            .or_else(|| match extensions.get::<HostKind>() {
                Some(HostKind::Tenant(t)) => Some(t.schema_name.to_string()),
                _ => None,
            });
        (tenant, identity.user)
    };
    if let Some(ApiError::Internal(cause)) = res
        .response()
        .error()
        .and_then(|e| e.as_error::<ApiError>())
    {
        log::error!("request_id={request_id} internal error: {cause:#}");
    }
    log::info!(
        "request_id={request_id} tenant={} user={} method={method} path={path} status={} latency_ms={:.2}",
        tenant.as_deref().unwrap_or("-"),
        user.map_or_else(|| "-".to_owned(), |u| u.to_string()),
        res.status().as_u16(),
        started.elapsed().as_secs_f64() * 1000.0,
    );
    Ok(res)
}
