//! The shared state every handler can reach: configuration, the pool, the caches, token
//! keys, the login throttle, the fairness limits and the bcrypt queue. Built once by
//! `startup` (`AppState::new`) and handed out by the request extractors (`request`);
//! nothing below `request` sees it.

use std::{net::IpAddr, sync::Arc, time::Instant};

use actix_web::{HttpRequest, web};

use crate::{
    auth::{jwt::JwtKeys, password, throttle::LoginThrottle},
    cache::{api_keys::ApiKeyCache, roles::RoleCache, users::UserCache},
    config::Config,
    db::{Db, pool::alone_in_flight, schema_name::SchemaName},
    error::{ApiError, ApiResult},
    fairness::{Admission, Pace},
    school::disclosure_log::DisclosureLog,
    tenancy::TenantDirectory,
};

/// What every handler can reach.
pub struct AppState {
    pub config: Config,
    pub db: Db,
    pub directory: Arc<TenantDirectory>,
    pub role_cache: Arc<RoleCache>,
    pub user_cache: Arc<UserCache>,
    pub key_cache: Arc<ApiKeyCache>,
    pub jwt: JwtKeys,
    pub throttle: LoginThrottle,
    /// `SCHOOL_RATE_PER_SECOND`, when set.
    pub school_rate: Option<Pace<SchemaName>>,
    /// The same rate per client address, for requests that fail authentication.
    pub failed_auth: Option<Pace<IpAddr>>,
    /// `SCHOOL_MAX_IN_FLIGHT`, unless `0`.
    pub school_admission: Option<Admission<SchemaName>>,
    /// Checked when a login names no user, so that refusal takes as long as a bad password.
    pub dummy_hash: String,
    /// Requests being handled; graceful shutdown waits for it to reach zero.
    pub in_flight: std::sync::atomic::AtomicUsize,
    /// Bounds concurrent bcrypt work to the number of cores: logins queue in order instead
    /// of all slowing down together, and hashing cannot take every blocking thread.
    pub hashing: tokio::sync::Semaphore,
    /// Reads of students' records by outside parties, queued for their writer thread.
    pub disclosures: DisclosureLog,
}

impl AppState {
    pub fn new(config: Config) -> Self {
        // Metrics recorded from now on are kept (the recorder is process-wide).
        crate::observability::metrics::handle();
        crate::school::change_log::set_retention_days(config.events.retention_days);
        crate::school::change_log::set_history_writes(config.events.history_writes);
        if !config.events.history_writes {
            log::warn!("HISTORY_WRITES=false: writes record no history (for measuring only)");
        }
        let db = Db::open(config.database_url.expose(), &config.pool_settings());
        let directory = Arc::new(TenantDirectory::new(db.clone()));
        Self {
            jwt: JwtKeys::new(
                config.jwt_secret.expose(),
                config.access_token_ttl,
                config.refresh_token_ttl,
            ),
            throttle: LoginThrottle::new(config.login_rate_per_minute),
            school_rate: config.school_rate_per_second.map(|rate| {
                Pace::new(
                    rate,
                    config.school_rate_burst.unwrap_or(rate),
                    config.school_rate_max_delay,
                )
            }),
            // Refused at once: a client failing authentication is not worth holding.
            failed_auth: config.school_rate_per_second.map(|rate| {
                Pace::new(
                    rate,
                    config.school_rate_burst.unwrap_or(rate),
                    std::time::Duration::ZERO,
                )
            }),
            school_admission: config.school_max_in_flight.map(|cap| {
                Admission::with_window(
                    cap,
                    alone_in_flight(config.db_pool_per_school),
                    config.db_pool_timeout,
                    config.school_alone_after,
                )
            }),
            dummy_hash: password::dummy_hash(config.bcrypt_cost),
            in_flight: std::sync::atomic::AtomicUsize::new(0),
            hashing: tokio::sync::Semaphore::new(
                std::thread::available_parallelism().map_or(2, |n| n.get()),
            ),
            disclosures: DisclosureLog::start(db.clone()),
            db,
            directory,
            role_cache: Arc::new(RoleCache::default()),
            user_cache: Arc::new(UserCache::default()),
            key_cache: Arc::new(ApiKeyCache::default()),
            config,
        }
    }
}

impl AppState {
    /// The state the app was built with (`startup` always sets it).
    pub fn of(req: &HttpRequest) -> ApiResult<web::Data<AppState>> {
        req.app_data::<web::Data<AppState>>()
            .cloned()
            .ok_or_else(|| ApiError::internal(anyhow::anyhow!("application state missing")))
    }

    /// A turn at bcrypt (one job per core); the wait is measured.
    async fn hashing_permit(&self) -> Result<tokio::sync::SemaphorePermit<'_>, ApiError> {
        let started = Instant::now();
        let permit = self.hashing.acquire().await.map_err(ApiError::internal)?;
        crate::observability::metrics::hash_queue_wait(started.elapsed());
        Ok(permit)
    }

    /// Hashes a password on the blocking pool, at most one job per core at a time.
    pub async fn hash_password(&self, password: String) -> Result<String, ApiError> {
        let cost = self.config.bcrypt_cost;
        let _permit = self.hashing_permit().await?;
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
        let _permit = self.hashing_permit().await?;
        Ok(web::block(move || password::verify(&password, &stored_hash)).await?)
    }
}
