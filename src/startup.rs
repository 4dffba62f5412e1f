//! Building the application: middleware and routes over the shared state, bound to a
//! listener; graceful shutdown.

use std::{net::TcpListener, sync::Arc};

use actix_cors::Cors;
use actix_web::{
    App, HttpServer,
    dev::Server,
    http::header::{self, HeaderName},
    middleware::{Condition, from_fn},
    web,
};

use crate::{
    api,
    api::access::access_log,
    api::host::classify_host,
    config::{Config, PoolSizing},
    db::{
        models::TenantRow,
        notify::{self, Subscriber},
        pool::connect,
    },
    relay::Relay,
    state::AppState,
};

/// `school-service relay`: the webhook relay alone (no HTTP), until SIGTERM or SIGINT.
pub async fn run_relay(config: Config) -> anyhow::Result<()> {
    let Some(listen_url) = config.database_listen_url.clone() else {
        anyhow::bail!("the relay needs DATABASE_LISTEN_URL in DB_POOL_MODE=transaction");
    };
    let state = AppState::new(config);
    let relay = Relay::new(
        state.db.clone(),
        state.directory.clone(),
        state.config.events.clone(),
        None,
        false,
    );
    let subscribers: Vec<std::sync::Weak<dyn Subscriber>> = vec![
        Arc::downgrade(&state.directory) as _,
        Arc::downgrade(&relay) as _,
    ];
    notify::spawn_listener(listen_url, subscribers);
    let work = std::pin::pin!(relay.clone().run());
    let signal = std::pin::pin!(shutdown_signal());
    if let futures_util::future::Either::Right((signal, _)) =
        futures_util::future::select(work, signal).await
    {
        log::info!("{signal} received: the relay stops (unsent events stay queued)");
    }
    Ok(())
}

pub struct Application {
    port: u16,
    server: Server,
    state: web::Data<AppState>,
    /// The webhook relay, unless `WEBHOOK_RELAY=false`.
    relay: Option<Arc<Relay>>,
}

impl Application {
    /// Binds `config.bind_addr` (port 0 picks a free port) and builds the server.
    pub fn build(mut config: Config) -> anyhow::Result<Self> {
        let Some(listen_url) = config.database_listen_url.clone() else {
            anyhow::bail!(
                "DB_POOL_MODE=transaction needs DATABASE_LISTEN_URL: a direct PostgreSQL \
                 connection for LISTEN, which a transaction pooler cannot carry"
            );
        };
        let listener = TcpListener::bind(config.bind_addr)?;
        let port = listener.local_addr()?.port();
        // With METRICS_ADDR, `/metrics` is served there only (and the address actually
        // bound is what the host guard compares with).
        let metrics_listener = match config.metrics_addr {
            Some(addr) => {
                let metrics = TcpListener::bind(addr)?;
                config.metrics_addr = Some(metrics.local_addr()?);
                Some(metrics)
            }
            None => None,
        };
        size_pool_for_schools(&mut config);
        let bind = config.bind_addr.ip();
        let state = web::Data::new(AppState::new(config));
        if state.config.db_pool_sizing != PoolSizing::Fixed {
            // The connections the schools are spread over at first, opened now: the first
            // requests do not wait for them (nor for each other's).
            state.db.open_connections();
        }
        let mut subscribers: Vec<std::sync::Weak<dyn Subscriber>> = vec![
            Arc::downgrade(&state.directory) as _,
            Arc::downgrade(&state.role_cache) as _,
            Arc::downgrade(&state.user_cache) as _,
            Arc::downgrade(&state.key_cache) as _,
        ];
        let relay = state.config.events.relay_in_serve.then(|| {
            Relay::new(
                state.db.clone(),
                state.directory.clone(),
                state.config.events.clone(),
                Some(bind),
                true,
            )
        });
        if let Some(relay) = &relay {
            subscribers.push(Arc::downgrade(relay) as _);
        }
        notify::spawn_listener(listen_url, subscribers);
        let server = serve(listener, metrics_listener, state.clone())?;
        Ok(Self {
            port,
            server,
            state,
            relay,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The pool's size, as sized at start (`DB_POOL_SIZE`, or the number of schools).
    pub fn pool_size(&self) -> u32 {
        self.state.config.db_pool_size
    }

    /// The port of the `METRICS_ADDR` listener, when there is one.
    pub fn metrics_port(&self) -> Option<u16> {
        self.state.config.metrics_addr.map(|addr| addr.port())
    }

    /// Runs until SIGTERM or SIGINT, then shuts down gracefully: stop accepting, let the
    /// requests in flight finish (counted by the access-log middleware, up to 30 s), then
    /// stop the server. Our own count, rather than actix-server's per-worker connection
    /// count, decides when the requests are done.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        // Lives as long as the server: aborted when this function returns.
        let purger = AbortOnDrop(tokio::spawn(purge_revoked_tokens(self.state.clone())));
        let relay = self
            .relay
            .clone()
            .map(|relay| AbortOnDrop(tokio::spawn(relay.run())));
        let handle = self.server.handle();
        let mut server = std::pin::pin!(self.server);
        let signal = std::pin::pin!(shutdown_signal());
        let signal = match futures_util::future::select(server.as_mut(), signal).await {
            futures_util::future::Either::Left((result, _)) => {
                close_disclosure_log(&self.state).await;
                return result;
            }
            futures_util::future::Either::Right((signal, _)) => signal,
        };
        log::info!("{signal} received: refusing new connections, finishing requests in flight");
        drop(purger);
        drop(relay);
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
        let stopped = server.await;
        close_disclosure_log(&self.state).await;
        stopped
    }
}

/// Grows a pool that follows the schools (no `DB_POOL_SIZE`) to the number of schools
/// there are now; one plain connection counts them. A database out of reach leaves the
/// CPU's size (the server starts and answers 503 meanwhile).
fn size_pool_for_schools(config: &mut Config) {
    if config.db_pool_sizing == PoolSizing::Fixed {
        return;
    }
    let counted = connect(config.database_url.expose(), config.db_pool_mode)
        .map_err(anyhow::Error::from)
        .and_then(|mut conn| Ok(TenantRow::count(&mut conn)?));
    match counted {
        Ok(schools) => {
            config.fit_pool_to_schools(u64::try_from(schools).unwrap_or(0));
            let narrow = config.db_pool_affinity.narrow;
            let spread = narrow.map_or(String::new(), |narrow| {
                let homes = narrow.home_connections(config.db_pool_affinity.spill.unwrap_or(0));
                format!(", the schools spread over {homes} until their backends outgrow the budget")
            });
            log::info!(
                "pool: {} connections for {schools} schools{spread} (DB_POOL_SIZE sets it)",
                config.db_pool_size
            );
        }
        Err(err) => log::warn!("could not count the schools to size the pool: {err}"),
    }
}

/// The requests are done: what they disclosed is written before the process ends.
async fn close_disclosure_log(state: &web::Data<AppState>) {
    let state = state.clone();
    if let Err(err) = tokio::task::spawn_blocking(move || state.disclosures.close()).await {
        log::error!("closing the disclosure log failed: {err}");
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

fn serve(
    listener: TcpListener,
    metrics_listener: Option<TcpListener>,
    state: web::Data<AppState>,
) -> anyhow::Result<Server> {
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let (head_timeout, keep_alive) = (state.config.request_header_timeout, state.config.keep_alive);
    let server = HttpServer::new(move || {
        App::new()
            .app_data(state.clone())
            .wrap(from_fn(classify_host))
            .wrap(from_fn(api::normalize::normalize_path))
            // No CORS middleware at all while no origin is allowed: no CORS headers then.
            .wrap(Condition::new(
                !state.config.cors_allowed_origins.is_empty(),
                cors(&state.config.cors_allowed_origins),
            ))
            .wrap(from_fn(access_log))
            .configure(crate::api::metrics::configure)
            // The API's routes are the app's default service (`api::router`).
            .configure(api::configure)
    })
    .workers(workers)
    // Slow or idle clients hold a connection (a few KiB), never a worker or a database
    // connection, and for no longer than these (the body's limit: `api::body`).
    .client_request_timeout(head_timeout)
    .keep_alive(keep_alive)
    // Signals are handled by `run_until_stopped`.
    .disable_signals()
    .shutdown_timeout(30)
    .listen(listener)?;
    let server = match metrics_listener {
        Some(metrics) => server.listen(metrics)?,
        None => server,
    };
    Ok(server.run())
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
