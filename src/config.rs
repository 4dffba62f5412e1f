//! Settings read from the environment, with safe development defaults.

use std::{env, net::SocketAddr, str::FromStr, time::Duration};

use anyhow::{Context, bail};

use crate::{
    db::{
        affinity::default_borrow_any_after,
        pool::{
            AffinitySettings, Narrow, PoolMode, PoolSettings, default_in_flight,
            default_per_school, pool_size_for_schools,
        },
        recycle::RecycleSettings,
    },
    secret::Secret,
};

/// The secret used when none is configured and the server runs in development mode.
const DEV_JWT_SECRET: &str = "insecure-development-secret-change-me";
const MIN_SECRET_LEN: usize = 32;

#[derive(Clone, Debug)]
pub struct Config {
    /// `DATABASE_URL`: may carry a password, so it is a `Secret` (never printed).
    pub database_url: Secret,
    /// `DB_POOL_MODE`: `session` (direct PostgreSQL) or `transaction` (behind PgBouncer's
    /// transaction pooling).
    pub db_pool_mode: PoolMode,
    /// `DATABASE_LISTEN_URL`: a direct connection for `LISTEN` (a transaction pooler cannot
    /// carry it). Defaults to `DATABASE_URL` in session mode.
    pub database_listen_url: Option<Secret>,
    pub bind_addr: SocketAddr,
    pub main_domains: Vec<String>,
    /// Signs tokens and keys API-key hashes; never printed (see `Secret`).
    pub jwt_secret: Secret,
    /// True when no `JWT_SECRET` was configured and the development secret is in use.
    pub insecure_dev_secret: bool,
    pub access_token_ttl: Duration,
    pub refresh_token_ttl: Duration,
    pub rotate_refresh_tokens: bool,
    pub bcrypt_cost: u32,
    pub db_pool_size: u32,
    /// Whether `db_pool_size` grows with the schools found at start (`fit_pool_to_schools`).
    pub db_pool_sizing: PoolSizing,
    pub db_pool_timeout: Duration,
    /// `DB_POOL_PER_SCHOOL`: how many pooled connections one school's requests may hold at
    /// once (default: all the pool but one connection).
    pub db_pool_per_school: u32,
    /// `DB_STATEMENT_TIMEOUT_MS`: the longest one statement of a request may run (`0`:
    /// no limit). The CLI runs without one.
    pub db_statement_timeout: Option<Duration>,
    pub max_body_bytes: usize,
    /// `REQUEST_HEADER_TIMEOUT_MS`: how long a client has to send a request's head.
    pub request_header_timeout: Duration,
    /// `REQUEST_BODY_TIMEOUT_MS`: how long a client has to send a request's body.
    pub request_body_timeout: Duration,
    /// `KEEP_ALIVE_SECS`: how long an idle keep-alive connection stays open.
    pub keep_alive: Duration,
    pub login_rate_per_minute: u32,
    /// `SCHOOL_RATE_PER_SECOND`: each school's request rate cap (unset: none).
    pub school_rate_per_second: Option<u32>,
    /// `SCHOOL_RATE_BURST`: how many requests a school may send at once within its rate
    /// (default: one second's worth).
    pub school_rate_burst: Option<u32>,
    /// `SCHOOL_RATE_MAX_DELAY_MS`: how long a request past its school's rate is held for
    /// its token before it is answered 429 instead.
    pub school_rate_max_delay: Duration,
    /// `SCHOOL_MAX_IN_FLIGHT`: how many of one school's requests are worked on at once
    /// while other schools have requests (alone, up to `pool::alone_in_flight`); `None`
    /// (`0`): no cap but the pool's per-school share.
    pub school_max_in_flight: Option<u32>,
    /// `SCHOOL_ALONE_AFTER_MS`: how long after another school's last request a school
    /// counts as alone, and may have up to twice `db_pool_per_school` requests in flight
    /// (`pool::alone_in_flight`); zero: never (the cap holds at all times).
    pub school_alone_after: Duration,
    pub cors_allowed_origins: Vec<String>,
    /// `http` or `https`: the scheme of the links the server writes (pagination). Taken
    /// from configuration, never from a client's `X-Forwarded-Proto`.
    pub public_scheme: String,
    /// `METRICS_ADDR`: when set, `/metrics` is served on this address only; otherwise on
    /// the main domain of the public listener.
    pub metrics_addr: Option<SocketAddr>,
    /// How often expired entries are purged from `revoked_tokens`.
    pub token_purge_interval: Duration,
    /// `ARCHIVE_SIGNING_KEY`: the platform's key for school archives (HMAC-SHA256 over the
    /// manifest). No default: unset, exports are unsigned and imports need
    /// `--trust-unsigned`.
    pub archive_signing_key: Option<Secret>,
    /// `DB_POOL_HOMES`, `DB_POOL_BORROW_AFTER_MS`, `DB_POOL_BORROW_ANY_AFTER_MS`,
    /// `DB_POOL_MAX_SCHOOLS`, `DB_POOL_MAX_BACKEND_MIB`, `DB_POOL_MAX_LIFETIME_SECS`,
    /// `DB_POOL_IDLE_TIMEOUT_SECS`: each school's home connections, how long work waits for
    /// them before borrowing a warm connection and before borrowing any, and
    /// when a connection is replaced (`0`: never for that reason). See `db::affinity` and
    /// `db::recycle`.
    pub db_pool_affinity: AffinitySettings,
    /// Change events and their webhooks.
    pub events: EventSettings,
    /// `IMPORT_MAX_ROWS`: the most data rows an import file may have (413 past it).
    pub import_max_rows: usize,
    /// `IMPORT_MAX_BYTES`: the largest import file (413 past it).
    pub import_max_bytes: usize,
}

/// Change events and webhooks (API.md 9).
#[derive(Clone, Debug)]
pub struct EventSettings {
    /// `EVENT_RETENTION_DAYS`: events older than this are pruned.
    pub retention_days: u32,
    /// `WEBHOOK_TIMEOUT_MS`: the longest one delivery may take, connecting included.
    pub webhook_timeout: Duration,
    /// `WEBHOOK_RETRY_SCHEDULE`: the wait before each retry of a failed delivery.
    pub retry_schedule: Vec<Duration>,
    /// `WEBHOOK_DISABLE_AFTER`: a subscription whose every attempt failed this long is
    /// disabled.
    pub disable_after: Duration,
    /// `WEBHOOK_ALLOW_INSECURE`: allows `http` and private, loopback and link-local
    /// destinations (tests, local development).
    pub allow_insecure: bool,
    /// `WEBHOOK_RELAY`: whether `serve` runs the relay too (`false` when operators run
    /// `school-service relay` apart).
    pub relay_in_serve: bool,
    /// `HISTORY_WRITES`: whether writes record history (API.md 11). Only for measuring
    /// what history costs (`scripts/bench/families.sh`); a school without it cannot say
    /// who changed a mark, so `serve` warns when it is off.
    pub history_writes: bool,
}

impl Default for EventSettings {
    fn default() -> Self {
        Self {
            retention_days: 30,
            webhook_timeout: Duration::from_millis(10_000),
            retry_schedule: parse_durations("5s,5m,30m,2h,5h,10h,10h").unwrap_or_default(),
            disable_after: Duration::from_secs(5 * 24 * 3600),
            allow_insecure: false,
            relay_in_serve: true,
            history_writes: true,
        }
    }
}

impl EventSettings {
    pub fn from_env() -> anyhow::Result<Self> {
        let defaults = Self::default();
        let schedule = match env_str("WEBHOOK_RETRY_SCHEDULE") {
            Some(raw) => parse_durations(&raw)
                .with_context(|| format!("WEBHOOK_RETRY_SCHEDULE={raw:?} is not valid"))?,
            None => defaults.retry_schedule,
        };
        let disable_after = match env_str("WEBHOOK_DISABLE_AFTER") {
            Some(raw) => parse_duration(&raw)
                .with_context(|| format!("WEBHOOK_DISABLE_AFTER={raw:?} is not valid"))?,
            None => defaults.disable_after,
        };
        let settings = Self {
            retention_days: parse_env("EVENT_RETENTION_DAYS", defaults.retention_days)?,
            webhook_timeout: Duration::from_millis(parse_env("WEBHOOK_TIMEOUT_MS", 10_000)?),
            retry_schedule: schedule,
            disable_after,
            allow_insecure: parse_env("WEBHOOK_ALLOW_INSECURE", false)?,
            relay_in_serve: parse_env("WEBHOOK_RELAY", true)?,
            history_writes: parse_env("HISTORY_WRITES", true)?,
        };
        if settings.retention_days == 0 || settings.webhook_timeout.is_zero() {
            bail!("EVENT_RETENTION_DAYS and WEBHOOK_TIMEOUT_MS must be positive");
        }
        Ok(settings)
    }
}

/// `5s`, `5m`, `2h`, `5d` (or plain seconds) as a duration.
pub fn parse_duration(raw: &str) -> anyhow::Result<Duration> {
    let raw = raw.trim();
    let split = raw.find(|c: char| !c.is_ascii_digit()).unwrap_or(raw.len());
    let (number, unit) = raw.split_at(split);
    let number: u64 = number
        .parse()
        .with_context(|| format!("{raw:?} has no number"))?;
    let seconds = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        other => bail!("unknown unit {other:?} in {raw:?}"),
    };
    Ok(Duration::from_secs(number.saturating_mul(seconds)))
}

/// A comma-separated list of durations (`5s,5m,30m`).
pub fn parse_durations(raw: &str) -> anyhow::Result<Vec<Duration>> {
    raw.split(',')
        .filter(|part| !part.trim().is_empty())
        .map(parse_duration)
        .collect()
}

impl Config {
    /// Reads every setting from the environment. `JWT_SECRET` may be missing only when
    /// `APP_ENV=development` (or `allow_dev_secret` is set, as the CLI does for commands
    /// that issue no tokens).
    pub fn from_env(allow_dev_secret: bool) -> anyhow::Result<Self> {
        let dev_mode = allow_dev_secret || env_str("APP_ENV").as_deref() == Some("development");
        let (jwt_secret, insecure_dev_secret) = match env_str("JWT_SECRET") {
            Some(secret) if secret.len() >= MIN_SECRET_LEN => (Secret::from(secret), false),
            Some(_) => bail!("JWT_SECRET must be at least {MIN_SECRET_LEN} characters"),
            None if dev_mode => (Secret::from(DEV_JWT_SECRET), true),
            None => bail!(
                "JWT_SECRET is not set; set it, or set APP_ENV=development to use an insecure \
                 development secret"
            ),
        };
        let database_url = Secret::from(
            env_str("DATABASE_URL")
                .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/school_service".into()),
        );
        let db_pool_mode = match env_str("DB_POOL_MODE") {
            Some(raw) => raw
                .parse()
                .map_err(|err| anyhow::anyhow!("DB_POOL_MODE: {err}"))?,
            None => PoolMode::Session,
        };
        let database_listen_url = env_str("DATABASE_LISTEN_URL")
            .map(Secret::from)
            .or_else(|| (db_pool_mode == PoolMode::Session).then(|| database_url.clone()));
        let db_pool_size = parse_env("DB_POOL_SIZE", default_pool_size())?;
        let db_pool_per_school = parse_env("DB_POOL_PER_SCHOOL", default_per_school(db_pool_size))?;
        // Behind a transaction pooler the pooler's own pool decides which backends serve
        // which schools, so more connections here would not spread the schools.
        let db_pool_sizing =
            if env_str("DB_POOL_SIZE").is_none() && db_pool_mode == PoolMode::Session {
                PoolSizing::FollowsSchools
            } else {
                PoolSizing::Fixed
            };
        Self {
            database_url,
            db_pool_mode,
            database_listen_url,
            bind_addr: parse_env("BIND_ADDR", "127.0.0.1:8000".parse()?)?,
            main_domains: env_list("MAIN_DOMAINS")
                .unwrap_or_else(|| vec!["localhost".into(), "127.0.0.1".into()]),
            jwt_secret,
            insecure_dev_secret,
            access_token_ttl: Duration::from_secs(parse_env("ACCESS_TOKEN_TTL", 300)?),
            refresh_token_ttl: Duration::from_secs(parse_env("REFRESH_TOKEN_TTL", 86_400)?),
            rotate_refresh_tokens: parse_env("ROTATE_REFRESH_TOKENS", true)?,
            bcrypt_cost: parse_env("BCRYPT_COST", 12)?,
            db_pool_size,
            db_pool_sizing,
            db_pool_timeout: Duration::from_millis(parse_env("DB_POOL_TIMEOUT_MS", 5_000)?),
            db_pool_per_school,
            db_statement_timeout: match parse_env::<u64>("DB_STATEMENT_TIMEOUT_MS", 5_000)? {
                0 => None,
                millis => Some(Duration::from_millis(millis)),
            },
            max_body_bytes: parse_env("MAX_BODY_BYTES", 1024 * 1024)?,
            request_header_timeout: Duration::from_millis(parse_env(
                "REQUEST_HEADER_TIMEOUT_MS",
                5_000,
            )?),
            request_body_timeout: Duration::from_millis(parse_env(
                "REQUEST_BODY_TIMEOUT_MS",
                10_000,
            )?),
            keep_alive: Duration::from_secs(parse_env("KEEP_ALIVE_SECS", 5)?),
            login_rate_per_minute: parse_env("LOGIN_RATE_PER_MINUTE", 10)?,
            school_rate_per_second: optional_env("SCHOOL_RATE_PER_SECOND")?,
            school_rate_burst: optional_env("SCHOOL_RATE_BURST")?,
            school_rate_max_delay: Duration::from_millis(parse_env(
                "SCHOOL_RATE_MAX_DELAY_MS",
                1_000,
            )?),
            // By default a sixth of the pool (a school alone may go up to its share).
            school_max_in_flight: match parse_env(
                "SCHOOL_MAX_IN_FLIGHT",
                default_in_flight(db_pool_size).min(db_pool_per_school),
            )? {
                0 => None,
                cap => Some(cap),
            },
            school_alone_after: Duration::from_millis(parse_env("SCHOOL_ALONE_AFTER_MS", 100)?),
            cors_allowed_origins: env_list("CORS_ALLOWED_ORIGINS").unwrap_or_default(),
            public_scheme: env_str("PUBLIC_SCHEME")
                .unwrap_or_else(|| "http".into())
                .to_ascii_lowercase(),
            metrics_addr: match env_str("METRICS_ADDR") {
                Some(raw) => Some(
                    raw.parse()
                        .with_context(|| format!("METRICS_ADDR={raw:?} is not an address"))?,
                ),
                None => None,
            },
            token_purge_interval: Duration::from_secs(parse_env("TOKEN_PURGE_INTERVAL", 3_600)?),
            archive_signing_key: env_str("ARCHIVE_SIGNING_KEY").map(Secret::from),
            db_pool_affinity: pool_affinity()?,
            events: EventSettings::from_env()?,
            import_max_rows: parse_env("IMPORT_MAX_ROWS", 20_000)?,
            import_max_bytes: parse_env("IMPORT_MAX_BYTES", 20 * 1024 * 1024)?,
        }
        .checked()
    }

    /// Grows a pool that follows the schools to one connection per hundred of them
    /// (`pool::pool_size_for_schools`) and a spill connection (`AffinitySettings::spill`),
    /// spreading the schools over the CPU's size of homes (and the spill) until their
    /// backends would outgrow the memory budget (`pool::Narrow`; with no budget, over all
    /// of them from the start).
    /// The per-school share and the in-flight cap stay the CPU pool's: at most the CPU's
    /// pool runs at once (`DB_POOL_RUNNING`), however many connections there are.
    pub fn fit_pool_to_schools(&mut self, schools: u64) {
        if self.db_pool_sizing != PoolSizing::FollowsSchools {
            return;
        }
        let cpu = self.db_pool_size;
        self.db_pool_size = pool_size_for_schools(cpu, schools);
        if self.db_pool_size <= cpu {
            return;
        }
        // Besides the homes, a connection that is nobody's home (`DB_POOL_SPILL`, default
        // one here): where work that waited long for its busy home goes, instead of into a
        // home of other schools.
        let affinity = &mut self.db_pool_affinity;
        let spill = if affinity.homes == 0 {
            affinity.spill = None; // no homes, nothing to keep schools out of
            0
        } else {
            *affinity.spill.get_or_insert(1)
        };
        self.db_pool_size = self
            .db_pool_size
            .saturating_add(u32::try_from(spill).unwrap_or(u32::MAX));
        // Without a memory budget nothing would widen it: the schools spread over all
        // connections from the start, which bounds each backend by its share of them.
        if affinity.recycling.max_backend_bytes.is_some() {
            affinity.narrow = Some(Narrow {
                spread: usize::try_from(cpu)
                    .unwrap_or(usize::MAX)
                    .saturating_add(spill),
                schools,
            });
        }
    }

    /// The pool these settings describe.
    pub fn pool_settings(&self) -> PoolSettings {
        PoolSettings {
            size: self.db_pool_size,
            checkout_timeout: self.db_pool_timeout,
            mode: self.db_pool_mode,
            per_school: self.db_pool_per_school,
            statement_timeout: self.db_statement_timeout,
            affinity: self.db_pool_affinity,
        }
    }

    fn checked(self) -> anyhow::Result<Self> {
        if !(4..=31).contains(&self.bcrypt_cost) {
            bail!("BCRYPT_COST must be between 4 and 31");
        }
        if self.db_pool_size == 0 {
            bail!("DB_POOL_SIZE must be at least 1");
        }
        if self.db_pool_per_school == 0 || self.db_pool_per_school > self.db_pool_size {
            bail!("DB_POOL_PER_SCHOOL must be between 1 and DB_POOL_SIZE");
        }
        let affinity = &self.db_pool_affinity;
        let size = usize::try_from(self.db_pool_size).unwrap_or(usize::MAX);
        if affinity.homes > 0 && affinity.spill.is_some_and(|spill| spill >= size) {
            bail!("DB_POOL_SPILL must leave at least one of DB_POOL_SIZE's connections a home");
        }
        if affinity.borrow_any_after < affinity.borrow_after {
            bail!("DB_POOL_BORROW_ANY_AFTER_MS must be at least DB_POOL_BORROW_AFTER_MS");
        }
        if !matches!(self.public_scheme.as_str(), "http" | "https") {
            bail!("PUBLIC_SCHEME must be http or https");
        }
        if self.school_rate_per_second == Some(0) || self.school_rate_burst == Some(0) {
            bail!("SCHOOL_RATE_PER_SECOND and SCHOOL_RATE_BURST must be at least 1");
        }
        if self.request_header_timeout.is_zero() || self.request_body_timeout.is_zero() {
            bail!("REQUEST_HEADER_TIMEOUT_MS and REQUEST_BODY_TIMEOUT_MS must be positive");
        }
        if self.token_purge_interval.is_zero() {
            bail!("TOKEN_PURGE_INTERVAL must be positive");
        }
        if self.access_token_ttl.is_zero() || self.refresh_token_ttl.is_zero() {
            bail!("token lifetimes must be positive");
        }
        if self
            .archive_signing_key
            .as_ref()
            .is_some_and(|key| key.len() < MIN_SECRET_LEN)
        {
            bail!("ARCHIVE_SIGNING_KEY must be at least {MIN_SECRET_LEN} characters");
        }
        Ok(self)
    }
}

/// How `Config::db_pool_size` was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolSizing {
    /// `DB_POOL_SIZE` gave it (or transaction mode, or a test).
    Fixed,
    /// Unset in session mode: twice the cores plus two, grown at start with the number of
    /// schools (`Config::fit_pool_to_schools`).
    FollowsSchools,
}

fn env_str(key: &str) -> Option<String> {
    env::var(key)
        .ok()
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

fn env_list(key: &str) -> Option<Vec<String>> {
    env_str(key).map(|v| {
        v.split(',')
            .map(|item| item.trim().to_ascii_lowercase())
            .filter(|item| !item.is_empty())
            .collect()
    })
}

fn optional_env<T: FromStr>(key: &str) -> anyhow::Result<Option<T>>
where
    T::Err: std::error::Error + Send + Sync + 'static,
{
    env_str(key)
        .map(|raw| {
            raw.parse()
                .with_context(|| format!("{key}={raw:?} is not valid"))
        })
        .transpose()
}

fn parse_env<T: FromStr>(key: &str, default: T) -> anyhow::Result<T>
where
    T::Err: std::error::Error + Send + Sync + 'static,
{
    match env_str(key) {
        Some(raw) => raw
            .parse()
            .with_context(|| format!("{key}={raw:?} is not valid")),
        None => Ok(default),
    }
}

/// School affinity and recycling from the environment; a `0` turns that limit off.
fn pool_affinity() -> anyhow::Result<AffinitySettings> {
    let defaults = AffinitySettings::default();
    let limit = |key: &str, default: Option<u64>| -> anyhow::Result<Option<u64>> {
        Ok(Some(parse_env(key, default.unwrap_or(0))?).filter(|&n| n > 0))
    };
    let secs = |key: &str, default: Option<Duration>| {
        Ok::<_, anyhow::Error>(limit(key, default.map(|d| d.as_secs()))?.map(Duration::from_secs))
    };
    let recycling = defaults.recycling;
    let millis = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let borrow_after = Duration::from_millis(parse_env(
        "DB_POOL_BORROW_AFTER_MS",
        millis(defaults.borrow_after),
    )?);
    Ok(AffinitySettings {
        homes: parse_env("DB_POOL_HOMES", defaults.homes)?,
        // The CPU's pool, whatever the pool's size (`0`: the pool's size).
        running: Some(parse_env(
            "DB_POOL_RUNNING",
            usize::try_from(default_pool_size()).unwrap_or(usize::MAX),
        )?)
        .filter(|&n| n > 0),
        narrow: None,
        spill: optional_env("DB_POOL_SPILL")?,
        borrow_after,
        borrow_any_after: Duration::from_millis(parse_env(
            "DB_POOL_BORROW_ANY_AFTER_MS",
            millis(default_borrow_any_after(borrow_after)),
        )?),
        recycling: RecycleSettings {
            max_lifetime: secs("DB_POOL_MAX_LIFETIME_SECS", recycling.max_lifetime)?,
            max_schools: limit(
                "DB_POOL_MAX_SCHOOLS",
                recycling.max_schools.map(|n| n as u64),
            )?
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
            max_backend_bytes: limit(
                "DB_POOL_MAX_BACKEND_MIB",
                recycling.max_backend_bytes.map(|bytes| bytes >> 20),
            )?
            .map(|mib| mib.saturating_mul(1 << 20)),
            idle_timeout: secs("DB_POOL_IDLE_TIMEOUT_SECS", recycling.idle_timeout)?,
        },
    })
}

/// Twice the cores plus two (the usual sizing for a database on local disks): more
/// connections than the database and this server can keep busy only queue for the CPU,
/// and lengthen the slowest requests (measured in `docs/performance.md`).
fn default_pool_size() -> u32 {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    u32::try_from(cores * 2 + 2).unwrap_or(u32::MAX)
}
