//! One worker's visit of one leased school: what is due is sent, up to `BATCH` at once,
//! each answer recorded soon after it comes (with others that came meanwhile, in one
//! statement), and the school's queue looked at again for what became due. Commits do
//! not signal a school that is due (tenant migration `webhook_signal_once`), so the
//! worker looks itself: at once after recording answers (they let the next events of
//! their records go), every `POLL_MIN` while it finds work, less and less often while it
//! finds none, and it lets go after `LINGER` without work. A receiver that never answers
//! holds its one place until `WEBHOOK_TIMEOUT_MS`; the school's other deliveries go on
//! around it.

use std::{
    collections::HashSet,
    future::Future,
    pin::{Pin, pin},
    time::{Duration, Instant},
};

use chrono::Utc;
use futures_util::{
    FutureExt, StreamExt,
    future::{Either, select},
    stream::FuturesUnordered,
};
use uuid::Uuid;

use super::{Relay, deliver};
use crate::{
    error::ApiResult,
    observability::metrics,
    school::webhook_queue::{self, Acknowledged, Due, Outcome, RetryRules},
    tenancy::TenantRef,
};

/// Deliveries sent at once for one school (each to a different record).
const BATCH: usize = 16;
/// How often the queue is looked at while looks find work, and at least.
const POLL_MIN: Duration = Duration::from_millis(5);
const POLL_MAX: Duration = Duration::from_millis(40);
/// How long a school with nothing to send is kept (and looked at) before letting go: a
/// school that writes every few milliseconds is not let go and signalled again each time.
const LINGER: Duration = Duration::from_millis(250);
/// Answers recorded together: this many, or those that came within this time.
const RECORD_BATCH: usize = 32;
const RECORD_GAP: Duration = Duration::from_millis(5);
/// How often a worker waiting on receivers renews its lease, at least.
const RENEW_EVERY: Duration = Duration::from_secs(5);

/// A delivery on its way: the delivery and how it went.
type Sending<'a> = Pin<Box<dyn Future<Output = (Due, Outcome)> + Send + 'a>>;

pub(super) struct SchoolRun<'a> {
    relay: &'a Relay,
    tenant: TenantRef,
}

impl<'a> SchoolRun<'a> {
    pub(super) fn new(relay: &'a Relay, tenant: TenantRef) -> Self {
        Self { relay, tenant }
    }

    /// Sends what is due until the school has had nothing to send for `LINGER`, or it is
    /// time to yield to the other schools (half the lease).
    pub(super) async fn deliver_due(&self) -> ApiResult<()> {
        let started = Instant::now();
        let settings = &self.relay.settings;
        let (timeout, insecure) = (settings.webhook_timeout, settings.allow_insecure);
        let own = self.relay.own.as_slice();
        let mut in_flight: FuturesUnordered<Sending<'_>> = FuturesUnordered::new();
        let mut sending: HashSet<(Uuid, i64)> = HashSet::new();
        // Answers not recorded yet (their events stay at the head of their records), and
        // when the first of them came.
        let mut answered: Vec<(Due, Outcome)> = Vec::new();
        let mut first_answer: Option<Instant> = None;
        let mut gap = POLL_MIN;
        let mut next_look = Instant::now();
        let mut last_work = Instant::now();
        let mut last_renew = Instant::now();
        loop {
            let yielding = started.elapsed() > self.relay.lease() / 2;
            let room = BATCH.saturating_sub(in_flight.len());
            if room > 0 && !yielding && Instant::now() >= next_look {
                let limit = i64::try_from(BATCH + sending.len()).unwrap_or(i64::MAX);
                let due = self.fetch(limit).await?;
                let fresh: Vec<Due> = due
                    .into_iter()
                    .filter(|d| !sending.contains(&(d.webhook_id, d.seq)))
                    .take(room)
                    .collect();
                if fresh.is_empty() {
                    gap = (gap * 2).min(POLL_MAX);
                } else {
                    gap = POLL_MIN;
                    last_work = Instant::now();
                }
                next_look = Instant::now() + gap;
                for d in fresh {
                    sending.insert((d.webhook_id, d.seq));
                    in_flight.push(Box::pin(async move {
                        let outcome = deliver::deliver(&d, timeout, insecure, own).await;
                        (d, outcome)
                    }));
                }
            }
            if !answered.is_empty()
                && (in_flight.is_empty()
                    || answered.len() >= RECORD_BATCH
                    || first_answer.is_some_and(|at| at.elapsed() >= RECORD_GAP))
            {
                let done = std::mem::take(&mut answered);
                for (d, _) in &done {
                    sending.remove(&(d.webhook_id, d.seq));
                }
                self.record(done).await?;
                first_answer = None;
                last_renew = Instant::now();
                // What the answers let go is looked for at once.
                gap = POLL_MIN;
                next_look = Instant::now();
                continue;
            }
            if in_flight.is_empty() && (yielding || last_work.elapsed() >= LINGER) {
                return Ok(());
            }
            if last_renew.elapsed() >= RENEW_EVERY {
                self.renew().await?;
                last_renew = Instant::now();
            }
            // Wait for the next answer, the next look (with room), or the time to record.
            let mut until = (room > 0 && !yielding).then_some(next_look);
            if let Some(at) = first_answer {
                let record_at = at + RECORD_GAP;
                until = Some(until.map_or(record_at, |u| u.min(record_at)));
            }
            let timer = async {
                match until {
                    Some(at) => tokio::time::sleep_until(at.into()).await,
                    None => std::future::pending::<()>().await,
                }
            };
            let next = async {
                if in_flight.is_empty() {
                    std::future::pending().await
                } else {
                    in_flight.next().await
                }
            };
            if let Either::Left((Some(answer), _)) = select(pin!(next), pin!(timer)).await {
                first_answer.get_or_insert_with(Instant::now);
                answered.push(answer);
                last_work = Instant::now();
            }
            while let Some(Some(answer)) = in_flight.next().now_or_never() {
                answered.push(answer);
            }
        }
    }

    /// Queues the events committed since the last look and answers what is due.
    async fn fetch(&self, limit: i64) -> ApiResult<Vec<Due>> {
        self.relay
            .db
            .run_in_tenant(self.tenant.clone(), move |conn| {
                webhook_queue::relaxed(conn, |conn| {
                    webhook_queue::queue_new_events(conn)?;
                    webhook_queue::due(conn, limit)
                })
            })
            .await
    }

    async fn renew(&self) -> ApiResult<()> {
        let (relay, lease) = (self.relay.id, self.relay.lease());
        self.relay
            .db
            .run_in_tenant(self.tenant.clone(), move |conn| {
                webhook_queue::relaxed(conn, |conn| webhook_queue::renew_lease(conn, relay, lease))
            })
            .await
    }

    /// Records answered deliveries and renews the lease (one transaction), and counts
    /// them in the figures: the acknowledged ones in one statement, each failure on its
    /// own (its retry, or giving up, or disabling the subscription).
    async fn record(&self, done: Vec<(Due, Outcome)>) -> ApiResult<()> {
        let mut acknowledged = Vec::new();
        let mut failed = Vec::new();
        for (d, outcome) in done {
            match outcome {
                Outcome::Acknowledged(status) => {
                    let lag = Utc::now() - d.occurred_at;
                    metrics::webhook_delivered(true, lag.to_std().unwrap_or_default());
                    acknowledged.push(Acknowledged {
                        webhook_id: d.webhook_id,
                        seq: d.seq,
                        event_id: d.event_id,
                        attempt: d.attempts + 1,
                        status,
                    });
                }
                Outcome::Failed(..) => {
                    metrics::webhook_delivered(false, Duration::ZERO);
                    failed.push((d, outcome));
                }
            }
        }
        let settings = self.relay.settings.clone();
        let (relay, lease) = (self.relay.id, self.relay.lease());
        let disabled = self
            .relay
            .db
            .run_in_tenant(self.tenant.clone(), move |conn| {
                webhook_queue::relaxed(conn, |conn| {
                    webhook_queue::record_acknowledged(conn, &acknowledged)?;
                    let rules = RetryRules {
                        schedule: &settings.retry_schedule,
                        disable_after: settings.disable_after,
                    };
                    let mut disabled = 0;
                    for (d, outcome) in &failed {
                        if webhook_queue::record_attempt(conn, d, outcome, &rules)? {
                            disabled += 1;
                        }
                    }
                    webhook_queue::renew_lease(conn, relay, lease)?;
                    Ok(disabled)
                })
            })
            .await?;
        for _ in 0..disabled {
            metrics::webhook_disabled();
        }
        Ok(())
    }
}
