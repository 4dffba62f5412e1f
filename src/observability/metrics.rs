//! Prometheus metrics: one process-wide recorder (the `metrics` crate's facade with
//! `metrics-exporter-prometheus` behind it), the names in one place, and the scrape.
//!
//! Labels stay bounded: routes are the matched templates (`/api/v1/school/classes/:id/`),
//! never raw paths; methods outside the known set are `other`; no school name or user id
//! is ever a label. Schools are counted in aggregate only.

use std::{collections::HashMap, sync::OnceLock, time::Duration};

use metrics::{
    Counter, Gauge, Histogram, Unit, counter, describe_counter, describe_gauge, describe_histogram,
    gauge, histogram,
};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

pub const HTTP_REQUESTS: &str = "http_requests_total";
pub const HTTP_DURATION: &str = "http_request_duration_seconds";
pub const HTTP_IN_FLIGHT: &str = "http_requests_in_flight";
pub const POOL_CONNECTIONS: &str = "db_pool_connections";
pub const POOL_IDLE: &str = "db_pool_idle_connections";
pub const POOL_MAX: &str = "db_pool_max_connections";
pub const POOL_SPREAD: &str = "db_pool_spread_connections";
pub const POOL_WIDENED: &str = "db_pool_widened_total";
pub const POOL_WAIT: &str = "db_pool_wait_seconds";
pub const POOL_TIMEOUTS: &str = "db_pool_timeouts_total";
pub const STATEMENT_TIMEOUTS: &str = "db_statement_timeouts_total";
pub const CACHE_LOOKUPS: &str = "cache_lookups_total";
pub const CACHE_INVALIDATIONS: &str = "cache_invalidations_total";
pub const LOGIN_THROTTLED: &str = "login_throttled_total";
pub const SCHOOL_THROTTLED: &str = "school_requests_throttled_total";
pub const SCHOOL_DELAYED: &str = "school_requests_delayed_total";
pub const SCHOOL_ADMISSION_WAIT: &str = "school_admission_wait_seconds";
pub const SCHOOL_ADMISSION_TIMEOUTS: &str = "school_admission_timeouts_total";
pub const HASH_QUEUE_WAIT: &str = "password_hash_queue_wait_seconds";
pub const SCHOOLS_PROVISIONED: &str = "schools_provisioned_total";
pub const SCHOOLS: &str = "schools";
pub const POOL_PLACEMENTS: &str = "db_pool_placements_total";
pub const POOL_RECYCLED: &str = "db_pool_connections_recycled_total";
pub const POOL_CONNECTION_SCHOOLS: &str = "db_pool_connection_schools";
pub const POOL_CONNECTION_MEMORY: &str = "db_pool_connection_memory_bytes";
pub const WEBHOOK_DELIVERIES: &str = "webhook_deliveries_total";
pub const WEBHOOK_LAG: &str = "webhook_delivery_lag_seconds";
pub const WEBHOOKS_DISABLED: &str = "webhooks_disabled_total";

/// Latency buckets (seconds): 1 ms to 10 s.
const BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// The process's recorder, installed on first use. Tests start many servers in one
/// process: they share it, as the servers of one process would.
pub fn handle() -> &'static PrometheusHandle {
    HANDLE.get_or_init(|| {
        let builder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), BUCKETS)
            .unwrap_or_else(|_| PrometheusBuilder::new());
        let handle = match builder.install_recorder() {
            Ok(handle) => handle,
            // Another recorder is installed (embedding): render our own, unregistered.
            Err(_) => PrometheusBuilder::new().build_recorder().handle(),
        };
        describe();
        // Histogram samples are kept until folded into their buckets: fold them now and
        // then even when nobody scrapes, so memory stays bounded.
        let upkeep = handle.clone();
        let _ = std::thread::Builder::new()
            .name("metrics-upkeep".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(Duration::from_secs(5));
                    upkeep.run_upkeep();
                }
            });
        handle
    })
}

fn describe() {
    describe_counter!(
        HTTP_REQUESTS,
        "HTTP requests answered, by route template, method and status class"
    );
    describe_histogram!(
        HTTP_DURATION,
        Unit::Seconds,
        "Time to answer a request, by route template, method and status class"
    );
    describe_gauge!(HTTP_IN_FLIGHT, "Requests being handled now");
    describe_gauge!(POOL_CONNECTIONS, "Database connections open in the pool");
    describe_gauge!(POOL_IDLE, "Open database connections not in use");
    describe_gauge!(POOL_MAX, "The pool's size (DB_POOL_SIZE)");
    describe_gauge!(
        POOL_SPREAD,
        "Connections the schools are spread over: the CPU's share until a backend outgrows DB_POOL_MAX_BACKEND_MIB, then the pool's size"
    );
    describe_counter!(
        POOL_WIDENED,
        "Times the pool spread the schools over all its connections (at most once per server)"
    );
    describe_histogram!(
        POOL_WAIT,
        Unit::Seconds,
        "Time to check a connection out of the pool"
    );
    describe_counter!(
        POOL_TIMEOUTS,
        "Checkouts that gave up after DB_POOL_TIMEOUT_MS or found the database down (answered 503)"
    );
    describe_counter!(
        POOL_PLACEMENTS,
        "Connections handed to units of work, by whether it was one of the school's home connections (home, borrowed)"
    );
    describe_counter!(
        POOL_RECYCLED,
        "Pooled connections replaced by a fresh one, by reason (lifetime, schools: DB_POOL_MAX_SCHOOLS distinct schools served, memory: DB_POOL_MAX_BACKEND_MIB reached)"
    );
    describe_gauge!(
        POOL_CONNECTION_SCHOOLS,
        "Distinct schools the connection in each pool slot has served since it opened"
    );
    describe_gauge!(
        POOL_CONNECTION_MEMORY,
        Unit::Bytes,
        "The PostgreSQL backend's own memory (pg_backend_memory_contexts) of each pool slot's connection, at its last check"
    );
    describe_counter!(
        CACHE_LOOKUPS,
        "In-process cache lookups, by cache (tenant_directory, roles) and result (hit, miss)"
    );
    describe_counter!(
        CACHE_INVALIDATIONS,
        "In-process cache invalidations, by cache"
    );
    describe_counter!(
        LOGIN_THROTTLED,
        "Logins refused with 429 by the login throttle"
    );
    describe_histogram!(
        HASH_QUEUE_WAIT,
        Unit::Seconds,
        "Time a bcrypt job waited for a core"
    );
    describe_counter!(
        STATEMENT_TIMEOUTS,
        "Units of work cancelled by DB_STATEMENT_TIMEOUT_MS (answered 503 database_timeout)"
    );
    describe_counter!(
        SCHOOL_THROTTLED,
        "School requests answered 429 by SCHOOL_RATE_PER_SECOND (all schools together)"
    );
    describe_counter!(
        SCHOOL_DELAYED,
        "School requests held for their token by SCHOOL_RATE_PER_SECOND, then served (all schools together)"
    );
    describe_histogram!(
        SCHOOL_ADMISSION_WAIT,
        Unit::Seconds,
        "Time a school request waited for its school's turn (SCHOOL_MAX_IN_FLIGHT)"
    );
    describe_counter!(
        SCHOOL_ADMISSION_TIMEOUTS,
        "School requests that waited DB_POOL_TIMEOUT_MS for their school's turn (answered 503)"
    );
    describe_counter!(SCHOOLS_PROVISIONED, "Schools created by this process");
    describe_counter!(
        WEBHOOK_DELIVERIES,
        "Webhook delivery attempts by outcome (acknowledged, failed)"
    );
    describe_histogram!(
        WEBHOOK_LAG,
        Unit::Seconds,
        "From an event's commit to its acknowledgement by a receiver"
    );
    describe_counter!(
        WEBHOOKS_DISABLED,
        "Subscriptions disabled after failing for WEBHOOK_DISABLE_AFTER"
    );
    describe_gauge!(
        SCHOOLS,
        "Schools in the registry, by state (active, inactive)"
    );
}

/// The status class label: `2xx`, `4xx`, ...
pub fn status_class(status: u16) -> &'static str {
    match status {
        100..=199 => "1xx",
        200..=299 => "2xx",
        300..=399 => "3xx",
        400..=499 => "4xx",
        _ => "5xx",
    }
}

/// The method label: the methods the API knows, anything else `other`.
pub fn method_label(method: &str) -> &'static str {
    match method {
        "GET" => "GET",
        "HEAD" => "HEAD",
        "POST" => "POST",
        "PUT" => "PUT",
        "PATCH" => "PATCH",
        "DELETE" => "DELETE",
        "OPTIONS" => "OPTIONS",
        _ => "other",
    }
}

/// A route template as a label: `{id}` becomes `:id`, which every exposition parser
/// reads (braces inside label values trip some of them).
pub fn route_label(template: &str) -> String {
    template.replace('{', ":").replace('}', "")
}

/// Counts one answered request.
pub fn record_request(route: &str, method: &str, status: u16, elapsed: Duration) {
    let (method, status) = (method_label(method), status_class(status));
    if !keeping() {
        RequestSeries::new(route, method, status, elapsed);
        return;
    }
    REQUEST_SERIES.with_borrow_mut(|cache| {
        if let Some(per_route) = cache.get_mut(route) {
            match per_route
                .iter()
                .find(|s| s.method == method && s.status == status)
            {
                Some(series) => series.record(elapsed),
                None => per_route.push(RequestSeries::new(route, method, status, elapsed)),
            }
            return;
        }
        let series = RequestSeries::new(route, method, status, elapsed);
        cache.insert(route.into(), vec![series]);
    });
}

thread_local! {
    /// The request series this thread has recorded since the recorder was installed, by
    /// route: the labels are built (and allocated) once per series and thread, not once
    /// per request.
    static REQUEST_SERIES: std::cell::RefCell<HashMap<Box<str>, Vec<RequestSeries>>> =
        std::cell::RefCell::default();
}

/// The request counter and duration histogram of one route, method and status class.
struct RequestSeries {
    method: &'static str,
    status: &'static str,
    count: metrics::Counter,
    duration: metrics::Histogram,
}

impl RequestSeries {
    /// The series, with its first request recorded.
    fn new(route: &str, method: &'static str, status: &'static str, elapsed: Duration) -> Self {
        let labels = [
            ("route", route_label(route)),
            ("method", method.to_owned()),
            ("status", status.to_owned()),
        ];
        let series = Self {
            method,
            status,
            count: counter!(HTTP_REQUESTS, &labels),
            duration: histogram!(HTTP_DURATION, &labels),
        };
        series.record(elapsed);
        series
    }

    fn record(&self, elapsed: Duration) {
        self.count.increment(1);
        self.duration.record(elapsed.as_secs_f64());
    }
}

/// Records on the series `look_up` finds, looked up in the recorder once and kept: the
/// series below are recorded on every request, and a look-up hashes the key, locks a
/// shard of the registry and allocates. Until the recorder is installed (`handle`; a
/// command that serves nothing never installs it) the series is looked up each time, as
/// the macros do, so no handle of the no-op recorder is kept.
fn on_kept<T>(kept: &'static OnceLock<T>, look_up: impl FnOnce() -> T, record: impl FnOnce(&T)) {
    match keeping() {
        true => record(kept.get_or_init(look_up)),
        false => record(&look_up()),
    }
}

/// Whether a series' handle may be kept (here, or in a thread's cache): only once the
/// recorder is installed, never a handle of the no-op recorder (`on_kept`).
fn keeping() -> bool {
    HANDLE.get().is_some()
}

pub fn in_flight(delta: f64) {
    static IN_FLIGHT: OnceLock<Gauge> = OnceLock::new();
    on_kept(
        &IN_FLIGHT,
        || gauge!(HTTP_IN_FLIGHT),
        |g| g.increment(delta),
    );
}

pub fn pool_checkout(waited: Duration, timed_out: bool) {
    static WAIT: OnceLock<Histogram> = OnceLock::new();
    on_kept(
        &WAIT,
        || histogram!(POOL_WAIT),
        |h| h.record(waited.as_secs_f64()),
    );
    if timed_out {
        counter!(POOL_TIMEOUTS).increment(1);
    }
}

/// A unit of work got a connection: one of its school's homes, or a borrowed one.
pub fn pool_placement(home: bool) {
    static PLACEMENTS: [OnceLock<Counter>; 2] = [OnceLock::new(), OnceLock::new()];
    let connection = if home { "home" } else { "borrowed" };
    let look_up = || counter!(POOL_PLACEMENTS, "connection" => connection);
    on_kept(&PLACEMENTS[usize::from(home)], look_up, |c| c.increment(1));
}

/// The connection in pool slot `slot` has served `schools` distinct schools so far.
pub fn pool_connection_schools(slot: usize, schools: usize) {
    gauge!(POOL_CONNECTION_SCHOOLS, "slot" => slot.to_string()).set(schools as f64);
}

/// The backend of the connection in pool slot `slot` holds `bytes` of its own memory.
pub fn pool_connection_memory(slot: usize, bytes: u64) {
    gauge!(POOL_CONNECTION_MEMORY, "slot" => slot.to_string()).set(bytes as f64);
}

/// The pool spread the schools over all its connections (`Slots::widen`).
pub fn pool_widened() {
    counter!(POOL_WIDENED).increment(1);
}

/// A pooled connection was replaced by its successor (`reason`: lifetime, schools, memory).
pub fn pool_connection_recycled(reason: &'static str) {
    counter!(POOL_RECYCLED, "reason" => reason).increment(1);
}

pub fn statement_timed_out() {
    counter!(STATEMENT_TIMEOUTS).increment(1);
}

/// A lookup in one of the in-process caches.
pub fn cache_lookup(cache: &'static str, hit: bool) {
    thread_local! {
        /// Each cache's (hit, miss) counters on this thread, once the recorder is
        /// installed: the labels are built once, not per lookup.
        static LOOKUPS: std::cell::RefCell<Vec<(&'static str, [metrics::Counter; 2])>> =
            std::cell::RefCell::default();
    }
    let look_up = |result| counter!(CACHE_LOOKUPS, "cache" => cache, "result" => result);
    if !keeping() {
        look_up(if hit { "hit" } else { "miss" }).increment(1);
        return;
    }
    LOOKUPS.with_borrow_mut(|lookups| {
        let at = match lookups.iter().position(|(name, _)| *name == cache) {
            Some(at) => at,
            None => {
                lookups.push((cache, [look_up("hit"), look_up("miss")]));
                lookups.len() - 1
            }
        };
        lookups[at].1[usize::from(!hit)].increment(1);
    });
}

pub fn cache_invalidated(cache: &'static str) {
    counter!(CACHE_INVALIDATIONS, "cache" => cache).increment(1);
}

pub fn school_throttled() {
    counter!(SCHOOL_THROTTLED).increment(1);
}

pub fn school_delayed() {
    counter!(SCHOOL_DELAYED).increment(1);
}

pub fn school_admission(waited: Duration, timed_out: bool) {
    static WAIT: OnceLock<Histogram> = OnceLock::new();
    let look_up = || histogram!(SCHOOL_ADMISSION_WAIT);
    on_kept(&WAIT, look_up, |h| h.record(waited.as_secs_f64()));
    if timed_out {
        counter!(SCHOOL_ADMISSION_TIMEOUTS).increment(1);
    }
}

pub fn login_throttled() {
    counter!(LOGIN_THROTTLED).increment(1);
}

pub fn hash_queue_wait(waited: Duration) {
    histogram!(HASH_QUEUE_WAIT).record(waited.as_secs_f64());
}

/// One webhook attempt; `lag`: from the event's commit to its acknowledgement.
pub fn webhook_delivered(acknowledged: bool, lag: Duration) {
    let outcome = if acknowledged {
        "acknowledged"
    } else {
        "failed"
    };
    counter!(WEBHOOK_DELIVERIES, "outcome" => outcome).increment(1);
    if acknowledged {
        histogram!(WEBHOOK_LAG).record(lag.as_secs_f64());
    }
}

pub fn webhook_disabled() {
    counter!(WEBHOOKS_DISABLED).increment(1);
}

pub fn school_provisioned() {
    counter!(SCHOOLS_PROVISIONED).increment(1);
}

/// Values read at scrape time rather than counted as they happen.
pub struct Sampled {
    pub pool_connections: u32,
    pub pool_idle: u32,
    pub pool_max: u32,
    /// Connections the schools are spread over (`Db::state`).
    pub pool_spread: u32,
    /// (active, inactive) schools, when the registry is loaded.
    pub schools: Option<(usize, usize)>,
}

/// The Prometheus text exposition, with the sampled gauges set first.
pub fn render(sampled: &Sampled) -> String {
    gauge!(POOL_CONNECTIONS).set(sampled.pool_connections);
    gauge!(POOL_IDLE).set(sampled.pool_idle);
    gauge!(POOL_MAX).set(sampled.pool_max);
    gauge!(POOL_SPREAD).set(sampled.pool_spread);
    if let Some((active, inactive)) = sampled.schools {
        gauge!(SCHOOLS, "state" => "active").set(active as f64);
        gauge!(SCHOOLS, "state" => "inactive").set(inactive as f64);
    }
    handle().render()
}

#[cfg(test)]
mod tests;
