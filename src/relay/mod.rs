//! The webhook relay (API.md 9): delivers each school's committed events to its
//! subscriptions. It runs inside `serve` (unless `WEBHOOK_RELAY=false`) and as
//! `school-service relay`.
//!
//! **How it finds work without polling every school.** The commit of an event of a school
//! with an active subscription makes the school's row in `public.webhook_pending` due (the
//! numbering trigger of tenant migration `webhooks`) and sends `NOTIFY webhook_pending`.
//! Relays read only that table: an idle school has no row and costs nothing. The row is
//! durable, so nothing is lost while no relay runs (a NOTIFY alone would be), and the
//! NOTIFY only wakes relays early; without it they look at the table every `IDLE_WAIT`
//! (one indexed query, whatever the number of schools).
//!
//! **One relay per school at a time.** A relay leases a due school (`leased_until`, taken
//! with `FOR UPDATE SKIP LOCKED`, renewed while it works); another relay takes it over only
//! once the lease ran out. Leases are rows, not session locks, so this works behind
//! PgBouncer in transaction mode. An attempt is recorded after its answer: a relay killed
//! in between leaves the event queued, and the next relay sends it again with the same
//! `webhook-id` (at least once).

pub mod deliver;
pub mod destination;
pub mod signature;

use std::{
    collections::HashSet,
    future::Future,
    net::IpAddr,
    pin::{Pin, pin},
    sync::Arc,
    time::{Duration, Instant},
};

use chrono::Utc;
use diesel::{QueryableByName, RunQueryDsl, sql_types};
use futures_util::{
    FutureExt, StreamExt,
    future::{Either, join_all, select},
    stream::FuturesUnordered,
};
use tokio::sync::Notify;
use uuid::Uuid;

use crate::{
    config::EventSettings,
    db::{Db, notify::Subscriber},
    error::ApiResult,
    observability::metrics,
    school::webhook_queue::{self, Due, Outcome, RetryRules},
    tenancy::{TenantRef, directory::TenantDirectory},
};

/// The channel commits signal on.
pub const CHANNEL: &str = "webhook_pending";
/// Schools one relay works on at once.
const WORKERS: usize = 4;
/// Deliveries sent at once for one school (each to a different record).
const BATCH: i64 = 16;
/// The longest a relay sleeps without looking for due schools.
const IDLE_WAIT: Duration = Duration::from_secs(5);
/// While deliveries are in flight: how often a school's queue is looked at again for
/// what became due, at most (commits wake the relay earlier), and at least.
const REFILL_TICK: Duration = Duration::from_secs(1);
const MIN_FETCH_GAP: Duration = Duration::from_millis(10);
/// Answers recorded in one transaction: this many, or those that came within this time.
const RECORD_BATCH: usize = 8;
const RECORD_GAP: Duration = Duration::from_millis(10);
/// One visit of a school in this many prunes its attempts older than the retention.
const PRUNE_ONE_IN: u32 = 50;
/// How often a relay waiting on receivers renews its lease, at least.
const RENEW_EVERY: Duration = Duration::from_secs(5);

/// A delivery on its way: the delivery and how it went.
type Sending<'a> = Pin<Box<dyn Future<Output = (Due, Outcome)> + Send + 'a>>;

pub struct Relay {
    id: Uuid,
    db: Db,
    directory: Arc<TenantDirectory>,
    settings: EventSettings,
    own: Vec<IpAddr>,
    wake: Notify,
}

#[derive(QueryableByName)]
struct Claimed {
    #[diesel(sql_type = sql_types::Text)]
    schema_name: String,
}

impl Subscriber for Relay {
    fn channel(&self) -> &'static str {
        CHANNEL
    }

    fn notified(&self, _: &str) {
        self.wake.notify_waiters();
    }

    fn missed(&self) {
        self.wake.notify_waiters();
    }
}

impl Relay {
    pub fn new(
        db: Db,
        directory: Arc<TenantDirectory>,
        settings: EventSettings,
        bind: Option<IpAddr>,
    ) -> Arc<Self> {
        Arc::new(Self {
            id: Uuid::new_v4(),
            db,
            directory,
            settings,
            own: destination::own_addresses(bind),
            wake: Notify::new(),
        })
    }

    /// How long a lease lasts: deliveries at their timeout, and spare. A working relay
    /// renews it at least every `RENEW_EVERY` while a place is free, and after every answer
    /// recorded, so it never runs out under a relay waiting on receivers.
    fn lease(&self) -> Duration {
        self.settings.webhook_timeout + Duration::from_secs(15)
    }

    /// Works until the task is dropped.
    pub async fn run(self: Arc<Self>) {
        let workers = (0..WORKERS).map(|_| {
            let relay = self.clone();
            async move { relay.work().await }
        });
        join_all(workers).await;
    }

    async fn work(&self) {
        loop {
            let woken = self.wake.notified();
            match self.claim().await {
                Ok(Some(schema)) => {
                    if let Err(err) = self.serve_school(&schema).await {
                        log::warn!("webhook relay: school {schema}: {err}");
                    }
                    continue;
                }
                Ok(None) => {}
                Err(err) => log::warn!("webhook relay: {err}"),
            }
            let _ = tokio::time::timeout(IDLE_WAIT, woken).await;
        }
    }

    /// Leases the most overdue school nobody works on, if any.
    async fn claim(&self) -> ApiResult<Option<String>> {
        let (relay, lease) = (self.id, self.lease().as_secs_f64());
        self.db
            .run(move |conn| {
                let claimed: Vec<Claimed> = diesel::sql_query(
                    "UPDATE public.webhook_pending p \
                        SET leased_until = now() + make_interval(secs => $2), leased_by = $1 \
                      WHERE p.schema_name = ( \
                            SELECT schema_name FROM public.webhook_pending \
                             WHERE due_at <= now() \
                               AND (leased_until IS NULL OR leased_until < now()) \
                             ORDER BY due_at LIMIT 1 FOR UPDATE SKIP LOCKED) \
                     RETURNING p.schema_name",
                )
                .bind::<sql_types::Uuid, _>(relay)
                .bind::<sql_types::Double, _>(lease)
                .load(conn)?;
                Ok(claimed.into_iter().next().map(|c| c.schema_name))
            })
            .await
    }

    async fn renew(&self, schema: &str) -> ApiResult<()> {
        let (relay, lease, schema) = (self.id, self.lease().as_secs_f64(), schema.to_owned());
        self.db
            .run(move |conn| {
                diesel::sql_query(
                    "UPDATE public.webhook_pending \
                        SET leased_until = now() + make_interval(secs => $3) \
                      WHERE schema_name = $1 AND leased_by = $2",
                )
                .bind::<sql_types::Text, _>(schema)
                .bind::<sql_types::Uuid, _>(relay)
                .bind::<sql_types::Double, _>(lease)
                .execute(conn)?;
                Ok(())
            })
            .await
    }

    /// Delivers what is due for one leased school, then lets go of it.
    async fn serve_school(&self, schema: &str) -> ApiResult<()> {
        let directory = self.directory.clone();
        let name = schema.to_owned();
        let tenant: Option<TenantRef> =
            tokio::task::spawn_blocking(move || directory.find_schema(&name).ok())
                .await
                .unwrap_or(None);
        let Some(tenant) = tenant else {
            // The school is gone: so is its work.
            let schema = schema.to_owned();
            return self
                .db
                .run(move |conn| {
                    diesel::sql_query("DELETE FROM public.webhook_pending WHERE schema_name = $1")
                        .bind::<sql_types::Text, _>(schema)
                        .execute(conn)?;
                    Ok(())
                })
                .await;
        };
        self.deliver_due(schema, &tenant).await?;
        let (relay, retention) = (self.id, self.settings.retention_days);
        // One visit in `PRUNE_ONE_IN` also prunes the school's old attempts.
        let prune = rand::random::<u32>() % PRUNE_ONE_IN == 0;
        self.db
            .run_in_tenant(tenant, move |conn| {
                webhook_queue::settle(conn, relay, retention, prune)
            })
            .await
    }

    /// Sends what is due for the school, up to `BATCH` at once, until nothing is due or it
    /// is time to yield to the other schools. Each answer is recorded as soon as it comes
    /// (which lets the next event of its record go), and the free places are filled with
    /// what became due meanwhile: a receiver that never answers holds its one place until
    /// `WEBHOOK_TIMEOUT_MS`, and the school's other deliveries go on around it.
    async fn deliver_due(&self, schema: &str, tenant: &TenantRef) -> ApiResult<()> {
        let started = Instant::now();
        let timeout = self.settings.webhook_timeout;
        let insecure = self.settings.allow_insecure;
        let own = self.own.as_slice();
        let mut in_flight: FuturesUnordered<Sending<'_>> = FuturesUnordered::new();
        let mut sending: HashSet<(Uuid, i64)> = HashSet::new();
        let mut last_fetch: Option<Instant> = None;
        // Answers not recorded yet (their events stay at the head of their records).
        let mut answered: Vec<(Due, Outcome)> = Vec::new();
        let mut last_record = Instant::now();
        let mut last_renew = Instant::now();
        let places = usize::try_from(BATCH).unwrap_or(16);
        loop {
            let yielding = started.elapsed() > self.lease() / 2;
            let room = places.saturating_sub(in_flight.len());
            if room > 0 && !yielding {
                if let Some(wait) =
                    last_fetch.and_then(|at| MIN_FETCH_GAP.checked_sub(at.elapsed()))
                {
                    tokio::time::sleep(wait).await;
                }
                last_fetch = Some(Instant::now());
                let limit = BATCH + i64::try_from(sending.len()).unwrap_or(0);
                let due = self
                    .db
                    .run_in_tenant(tenant.clone(), move |conn| {
                        webhook_queue::queue_new_events(conn)?;
                        webhook_queue::due(conn, limit)
                    })
                    .await?;
                let fresh: Vec<Due> = due
                    .into_iter()
                    .filter(|d| !sending.contains(&(d.webhook_id, d.seq)))
                    .take(room)
                    .collect();
                for d in fresh {
                    sending.insert((d.webhook_id, d.seq));
                    in_flight.push(Box::pin(async move {
                        let outcome = deliver::deliver(&d, timeout, insecure, own).await;
                        (d, outcome)
                    }));
                }
            }
            if in_flight.is_empty() && answered.is_empty() {
                return Ok(());
            }
            // Answers are recorded together (one transaction): when nothing else is in
            // flight, when enough came, or once the first waited `RECORD_GAP`.
            if !answered.is_empty()
                && (in_flight.is_empty()
                    || answered.len() >= RECORD_BATCH
                    || last_record.elapsed() >= RECORD_GAP)
            {
                let recorded: Vec<(Uuid, i64)> = answered
                    .iter()
                    .map(|(d, _)| (d.webhook_id, d.seq))
                    .collect();
                self.record(tenant, std::mem::take(&mut answered)).await?;
                for key in &recorded {
                    sending.remove(key);
                }
                self.renew(schema).await?;
                last_record = Instant::now();
                last_renew = last_record;
                // What the answers let go (the next events of their records) is fetched
                // at once.
                last_fetch = None;
                continue;
            }
            if last_renew.elapsed() >= RENEW_EVERY {
                self.renew(schema).await?;
                last_renew = Instant::now();
            }
            // The next answer; with room for more, also a commit's wake-up (or a tick):
            // what it made due is fetched then; with answers waiting, their time to be
            // recorded.
            let refill = in_flight.len() < places && !yielding;
            let waiting = !answered.is_empty();
            let wait = if waiting {
                RECORD_GAP.saturating_sub(last_record.elapsed())
            } else {
                REFILL_TICK
            };
            let woken = async {
                if refill {
                    let _ = tokio::time::timeout(wait, self.wake.notified()).await;
                } else if waiting {
                    tokio::time::sleep(wait).await;
                } else {
                    std::future::pending::<()>().await;
                }
            };
            if let Either::Left((Some(answer), _)) = select(in_flight.next(), pin!(woken)).await {
                if answered.is_empty() && last_record.elapsed() >= RECORD_GAP {
                    // The first answer after a quiet spell starts its own wait.
                    last_record = Instant::now() - RECORD_GAP / 2;
                }
                answered.push(answer);
            }
            while let Some(Some(answer)) = in_flight.next().now_or_never() {
                answered.push(answer);
            }
        }
    }

    /// Records answered deliveries (one transaction) and their figures.
    async fn record(&self, tenant: &TenantRef, done: Vec<(Due, Outcome)>) -> ApiResult<()> {
        for (d, outcome) in &done {
            match outcome {
                Outcome::Acknowledged(_) => {
                    let lag = Utc::now() - d.occurred_at;
                    metrics::webhook_delivered(true, lag.to_std().unwrap_or_default());
                }
                Outcome::Failed(..) => metrics::webhook_delivered(false, Duration::ZERO),
            }
        }
        let settings = self.settings.clone();
        let disabled = self
            .db
            .run_in_tenant(tenant.clone(), move |conn| {
                let rules = RetryRules {
                    schedule: &settings.retry_schedule,
                    disable_after: settings.disable_after,
                };
                let mut disabled = 0;
                for (d, outcome) in &done {
                    if webhook_queue::record_attempt(conn, d, outcome, &rules)? {
                        disabled += 1;
                    }
                }
                Ok(disabled)
            })
            .await?;
        for _ in 0..disabled {
            metrics::webhook_disabled();
        }
        Ok(())
    }
}
