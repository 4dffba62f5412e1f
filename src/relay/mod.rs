//! The webhook relay (API.md 9): delivers each school's committed events to its
//! subscriptions. It runs inside `serve` (unless `WEBHOOK_RELAY=false`) and as
//! `school-service relay`.
//!
//! **How it finds work without polling every school.** A commit of an event of a school
//! with an active subscription, when the school is not already due, makes the school's row
//! in `public.webhook_pending` due and sends `NOTIFY webhook_pending` (the numbering at
//! commit, `src/tenancy/numbering.rs`). Relays read only that table: an idle
//! school has no row and costs nothing. The row is durable, so nothing is lost while no
//! relay runs (a NOTIFY alone would be), and the NOTIFY only wakes a relay early; without
//! it one worker looks at the table every `IDLE_WAIT` (one indexed query, whatever the
//! number of schools). While the row is due, commits signal nothing public: the relay on
//! the school finds their events itself (`school`) until it has had nothing to send for
//! `LINGER`, then lets go of it (`webhook_queue::settle`), after which the next commit
//! signals again. Inside `serve`, the process's own commits of the school's events wake
//! its relay at once (`db::commit_watch`, a map in memory), and it looks at the queue
//! besides only every `POLL_WATCHED` (commits of other processes, retries); a relay apart
//! (`school-service relay`) sees no commit and looks often while it finds work, less and
//! less often while it finds none. So a busy school costs its commits nothing beyond the
//! event row, and its relay one statement a look (the events past the cursors) and one a
//! batch of answers (attempts recorded, cursors moved on: `webhook_queue`).
//!
//! **One relay per school at a time.** A relay leases a due school (`leased_until`, taken
//! with `FOR UPDATE SKIP LOCKED`, renewed while it works); another relay takes it over only
//! once the lease ran out. A worker whose visit fails lets go of the school at once
//! (`let_go`), so a passing database error delays its deliveries by a second, not a lease.
//! Leases are rows, not session locks, so this works behind PgBouncer in transaction mode.
//! An attempt is recorded after its answer, and a subscription's cursor moved past an
//! event only with it: a relay killed in between leaves the cursor before the event, and
//! the next relay sends it again with the same `webhook-id` (at least once).

pub mod deliver;
pub mod destination;
mod plan;
mod school;
pub mod signature;

use std::{net::IpAddr, sync::Arc, time::Duration};

use futures_util::future::join_all;
use tokio::sync::Notify;
use uuid::Uuid;

use crate::{
    config::EventSettings,
    db::{Db, notify::Subscriber},
    error::ApiResult,
    school::{webhook_pending, webhook_queue},
    tenancy::{TenantRef, directory::TenantDirectory},
};

/// The channel commits signal on.
pub const CHANNEL: &str = "webhook_pending";
/// Schools one relay works on at once (tasks, not threads: a school waiting on its
/// receiver holds no thread, and a worker's database work takes the pool's turns).
const WORKERS: usize = 64;
/// How often an idle worker looks for due schools without being woken (a lease run out,
/// a retry come due).
const IDLE_WAIT: Duration = Duration::from_secs(5);
/// One visit of a school in this many prunes its attempts older than the retention.
const PRUNE_ONE_IN: u32 = 50;
/// How long a worker whose visit of a school failed (the database out of reach, a
/// statement cancelled) waits before it claims again.
const AFTER_A_FAILED_VISIT: Duration = Duration::from_secs(1);

pub struct Relay {
    id: Uuid,
    db: Db,
    directory: Arc<TenantDirectory>,
    settings: EventSettings,
    own: Vec<IpAddr>,
    wake: Notify,
    /// Whether the relay runs in the process that writes (`serve`): then this process's
    /// commits wake it (`db::commit_watch`) and it need not keep looking for them.
    beside_writes: bool,
}

impl Subscriber for Relay {
    fn channel(&self) -> &'static str {
        CHANNEL
    }

    fn notified(&self, _: &str) {
        // One idle worker claims; one that claimed a school hands on to the next.
        self.wake.notify_one();
    }

    fn missed(&self) {
        // As for a notification: one worker looks, and hands on while it finds schools due
        // (waking all sixty-four would queue their claims before everyone's requests).
        self.wake.notify_one();
    }
}

impl Relay {
    pub fn new(
        db: Db,
        directory: Arc<TenantDirectory>,
        settings: EventSettings,
        bind: Option<IpAddr>,
        beside_writes: bool,
    ) -> Arc<Self> {
        Arc::new(Self {
            id: Uuid::new_v4(),
            db,
            directory,
            settings,
            own: destination::own_addresses(bind),
            wake: Notify::new(),
            beside_writes,
        })
    }

    /// How long a lease lasts: deliveries at their timeout, and spare. A working relay
    /// renews it with every batch of answers it records and at least every `RENEW_EVERY`
    /// (`school`), so it never runs out under a relay waiting on receivers.
    fn lease(&self) -> Duration {
        self.settings.webhook_timeout + Duration::from_secs(15)
    }

    /// Works until the task is dropped.
    pub async fn run(self: Arc<Self>) {
        let workers = (0..WORKERS).map(|_| {
            let relay = self.clone();
            async move { relay.work().await }
        });
        let ticker = async {
            loop {
                tokio::time::sleep(IDLE_WAIT).await;
                self.wake.notify_one();
            }
        };
        futures_util::future::join(join_all(workers), ticker).await;
    }

    /// Claims a due school when woken (by a commit's NOTIFY, the ticker, or a worker that
    /// just claimed one: the schools due are taken one worker after another), serves it,
    /// and looks again.
    async fn work(&self) {
        loop {
            let woken = self.wake.notified();
            match self.claim().await {
                Ok(Some(schema)) => {
                    // More schools may be due: the next idle worker looks.
                    self.wake.notify_one();
                    if let Err(err) = self.serve_school(&schema).await {
                        log::warn!("webhook relay: school {schema}: {err}");
                        self.let_go(&schema).await;
                        tokio::time::sleep(AFTER_A_FAILED_VISIT).await;
                    }
                    continue;
                }
                Ok(None) => {}
                Err(err) => log::warn!("webhook relay: {err}"),
            }
            woken.await;
        }
    }

    /// Leases the most overdue school nobody works on, if any.
    async fn claim(&self) -> ApiResult<Option<String>> {
        let (relay, lease) = (self.id, self.lease());
        self.db
            .run(move |conn| webhook_pending::claim(conn, relay, lease))
            .await
    }

    /// Lets go of a school whose visit failed, due at once: left to run out, its lease
    /// would hold the school's deliveries back for the lease's length (the delivery
    /// timeout and 15 s). What was sent and not recorded is sent again, with its
    /// `webhook-id`.
    async fn let_go(&self, schema: &str) {
        let (relay, schema) = (self.id, schema.to_owned());
        let released = self
            .db
            .run(move |conn| webhook_pending::let_go(conn, &schema, relay))
            .await;
        if let Err(err) = released {
            log::warn!("webhook relay: could not let go of a school after a failed visit: {err}");
        }
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
                .run(move |conn| webhook_pending::forget(conn, &schema))
                .await;
        };
        school::SchoolRun::new(self, tenant.clone())
            .deliver_due()
            .await?;
        let (relay, retention) = (self.id, self.settings.retention_days);
        // One visit in `PRUNE_ONE_IN` also prunes the school's old attempts.
        let prune = rand::random::<u32>() % PRUNE_ONE_IN == 0;
        let due_again = self
            .db
            .run_in_tenant(tenant, move |conn| {
                webhook_queue::settle(conn, relay, retention, prune)
            })
            .await?;
        if due_again {
            // Events committed after the visit's last look: their commits saw the row
            // due and signalled nobody.
            self.wake.notify_one();
        }
        Ok(())
    }
}
