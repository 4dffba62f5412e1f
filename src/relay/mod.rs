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
    net::IpAddr,
    sync::Arc,
    time::{Duration, Instant},
};

use chrono::Utc;
use diesel::{QueryableByName, RunQueryDsl, sql_types};
use futures_util::future::join_all;
use tokio::sync::Notify;
use uuid::Uuid;

use crate::{
    config::EventSettings,
    db::{Db, notify::Subscriber},
    error::ApiResult,
    observability::metrics,
    school::webhook_queue::{self, Outcome, RetryRules},
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

    /// How long a lease lasts: a whole batch of deliveries at their timeout, and spare.
    fn lease(&self) -> Duration {
        self.settings.webhook_timeout * 2 + Duration::from_secs(30)
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
        let started = Instant::now();
        loop {
            let due = self
                .db
                .run_in_tenant(tenant.clone(), |conn| {
                    webhook_queue::queue_new_events(conn)?;
                    webhook_queue::due(conn, BATCH)
                })
                .await?;
            if due.is_empty() {
                break;
            }
            let timeout = self.settings.webhook_timeout;
            let insecure = self.settings.allow_insecure;
            let outcomes = join_all(
                due.iter()
                    .map(|d| deliver::deliver(d, timeout, insecure, &self.own)),
            )
            .await;
            for (d, outcome) in due.iter().zip(&outcomes) {
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
                    for (d, outcome) in due.iter().zip(&outcomes) {
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
            self.renew(schema).await?;
            // A school that keeps the relay busy yields to the others now and then.
            if started.elapsed() > self.lease() / 2 {
                break;
            }
        }
        let (relay, retention) = (self.id, self.settings.retention_days);
        self.db
            .run_in_tenant(tenant, move |conn| {
                webhook_queue::settle(conn, relay, retention)
            })
            .await
    }
}
