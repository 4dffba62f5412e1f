//! One worker's visit of one leased school. It reads the events past its subscriptions'
//! cursors (one statement a look), sends them up to `BATCH` at once (a record's later
//! event after its earlier one is answered: `plan`), and records each batch of answers
//! with the cursors moved on in one statement. The queue (retries, "send again", events
//! held behind them) is looked at when the visit starts, after a retried delivery was
//! acknowledged, and every `QUEUE_LOOK`. A receiver that never answers holds its one
//! place until `WEBHOOK_TIMEOUT_MS`; the school's other deliveries go on around it.
//!
//! When to look for new events: inside `serve`, this process's writers read them for the
//! relay right after each commit of the school's events (`db::commit_watch`), and the
//! relay looks itself when a commit went unread and every `POLL_WATCHED` besides; apart
//! from the writes, often while looks find work and less and less often while they find
//! none. The worker lets go of the school after `LINGER` without work, or at half its
//! lease.

use std::{
    collections::{HashSet, VecDeque},
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

use super::{
    Relay, deliver,
    plan::{Answer, Plan, Source},
};
use crate::{
    error::ApiResult,
    observability::metrics,
    school::{
        webhook_pending,
        webhook_queue::{self, Due, Held, NewEvent, Outcome, RetryRules, Subscription},
    },
    tenancy::TenantRef,
};

/// Deliveries on their way at once for one school (each to a different record).
const BATCH: usize = 16;
/// Events read at most by one look, and fresh events at most decided and not recorded.
const READ: i64 = 256;
const MAX_OUTSTANDING: usize = 1024;
/// A relay apart from the writes (`school-service relay`) sees no commit: it looks for new
/// events this often while looks find work, backing off to `POLL_MAX` while they find none.
const POLL_MIN: Duration = Duration::from_millis(5);
const POLL_MAX: Duration = Duration::from_millis(40);
/// A relay inside `serve` is woken by this process's commits of the school's events and
/// looks at once; it looks this often besides, for the commits of other processes
/// (another server, the CLI).
const POLL_WATCHED: Duration = Duration::from_millis(100);
/// How often the queue (retries come due, "send again") and the subscriptions are read
/// again during a visit.
const QUEUE_LOOK: Duration = Duration::from_secs(1);
const SUBSCRIPTIONS_FRESH: Duration = Duration::from_secs(1);
/// How long a school with nothing to send is kept before letting go: a school that writes
/// every few milliseconds is not let go and signalled again each time.
const LINGER: Duration = Duration::from_millis(250);
/// When answers are recorded: once the deliveries on their way are answered (or
/// `RECORD_GAP` after the first unrecorded answer), but not sooner than `RECORD_EVERY`
/// after the school's last recording, unless `RECORD_BATCH` wait. So a quiet school's
/// attempt is in `/deliveries/` a few milliseconds after its answer, and a busy school's
/// answers share one statement a second, or one per `RECORD_BATCH` above that (a
/// recording costs PostgreSQL about 0.35 ms whatever it holds: one every 200 ms was a
/// third of what a delivery cost it, issue 40).
/// Recording is off the path to the receiver (an acknowledged event's successor goes at
/// once); a crash sends the unrecorded again, with their `webhook-id`.
const RECORD_GAP: Duration = Duration::from_millis(5);
const RECORD_EVERY: Duration = Duration::from_secs(1);
const RECORD_BATCH: usize = 64;
/// How often a worker renews its lease of the school, at least.
const RENEW_EVERY: Duration = Duration::from_secs(5);

/// A delivery decided: what to send, where it came from, and its record (fresh ones).
type Ready = (Due, Source, Option<Uuid>);
/// A delivery on its way.
type Sending<'a> = Pin<Box<dyn Future<Output = Answer> + Send + 'a>>;

pub(super) struct SchoolRun<'a> {
    relay: &'a Relay,
    tenant: TenantRef,
}

/// When the next look for new events is due.
struct Looks {
    next: Instant,
    /// A look is wanted now (`now`) and none was made since: a batch handed by a writer
    /// does not put it off.
    wanted: bool,
    /// The last look stopped at its limit (or none was made yet): writers are not asked
    /// to read for the relay while it catches up, which would cost their requests a
    /// backlog's worth of reading each.
    behind: bool,
    gap: Duration,
    /// The gap after a look that found work, and the longest.
    least: Duration,
    most: Duration,
}

impl Looks {
    fn new(watched: bool) -> Self {
        let (least, most) = if watched {
            (POLL_WATCHED, POLL_WATCHED)
        } else {
            (POLL_MIN, POLL_MAX)
        };
        Self {
            next: Instant::now(),
            wanted: true,
            behind: true,
            gap: least,
            least,
            most,
        }
    }

    fn looked(&mut self, found_work: bool) {
        self.gap = if found_work {
            self.least
        } else {
            (self.gap * 2).min(self.most)
        };
        self.next = Instant::now() + self.gap;
        self.wanted = false;
    }

    /// Writers handed what they read: as good as a look, unless one is wanted anyway.
    fn handed(&mut self) {
        if !self.wanted {
            self.gap = self.least;
            self.next = Instant::now() + self.gap;
        }
    }

    /// New events may be there now (a commit nobody read for, or a read that stopped at
    /// its limit).
    fn now(&mut self) {
        self.next = Instant::now();
        self.wanted = true;
    }
}

/// What the visit has on its hands.
#[derive(Default)]
struct Work {
    plan: Plan,
    ready: VecDeque<Ready>,
    /// Queued deliveries on their way (a later look at the queue still lists them).
    queued_sending: HashSet<(Uuid, i64)>,
    /// When the oldest answer not recorded yet came, and the last recording.
    first_unrecorded: Option<Instant>,
    last_recorded: Option<Instant>,
    /// A retried delivery was acknowledged since the last recording.
    retried_acknowledged: bool,
}

impl Work {
    fn idle(&self, in_flight: usize) -> bool {
        in_flight == 0 && self.ready.is_empty() && self.plan.unrecorded() == 0
    }

    /// Takes an answer: counted in the figures, kept for the next recording, and the next
    /// event of its record ready to go.
    fn answered(&mut self, answer: Answer) {
        count_answer(&answer);
        let (d, source, outcome, _) = &answer;
        if *source == Source::Queued {
            self.queued_sending.remove(&(d.webhook_id, d.seq));
            self.retried_acknowledged |= matches!(outcome, Outcome::Acknowledged(_));
        }
        self.first_unrecorded.get_or_insert_with(Instant::now);
        if let Some((next, record)) = self.plan.answered(answer) {
            self.ready.push_back((next, Source::Fresh, Some(record)));
        }
    }

    /// When what is unrecorded is to be recorded (`None`: nothing is).
    fn record_at(&self, in_flight: usize, leaving: bool) -> Option<Instant> {
        let unrecorded = self.plan.unrecorded();
        if unrecorded == 0 {
            return None;
        }
        let now = Instant::now();
        // A retried delivery acknowledged: its record's next entry in the queue goes only
        // once this one is out of it, so a receiver back from an outage is not held to one
        // of a record's queued events a second.
        if unrecorded >= RECORD_BATCH || (leaving && in_flight == 0) || self.retried_acknowledged {
            return Some(now);
        }
        let first = self.first_unrecorded.unwrap_or(now);
        let answered = if in_flight == 0 {
            first
        } else {
            first + RECORD_GAP
        };
        let spaced = self.last_recorded.map_or(now, |at| at + RECORD_EVERY);
        Some(answered.max(spaced))
    }
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
        // Watched before the first look, so no commit falls between the two.
        let watching = self.relay.beside_writes.then(|| {
            self.relay
                .db
                .commit_watch()
                .watch(self.tenant.schema_name.clone())
        });
        let mut looks = Looks::new(watching.is_some());
        let mut work = Work::default();
        let mut in_flight: FuturesUnordered<Sending<'_>> = FuturesUnordered::new();
        let mut queue_look_at = Instant::now();
        let mut subscriptions_read: Option<Instant> = None;
        let mut last_work = Instant::now();
        let mut last_renew = Instant::now();
        loop {
            let yielding = started.elapsed() > self.relay.lease() / 2;
            if !yielding && subscriptions_read.is_none_or(|at| at.elapsed() >= SUBSCRIPTIONS_FRESH)
            {
                work.plan.subscriptions(self.subscriptions().await?);
                subscriptions_read = Some(Instant::now());
            }
            if let Some(watching) = &watching {
                // What writers read for this relay after their commits: no look for those.
                let (handed, unread) = watching.take_handed();
                if !handed.is_empty() {
                    // A read that stopped at its limit: a backlog, which the relay reads.
                    looks.behind |= handed.iter().any(|batch| batch.full);
                    let (send, look) = work.plan.take_handed(handed);
                    if !send.is_empty() {
                        last_work = Instant::now();
                    }
                    for (d, record) in send {
                        work.ready.push_back((d, Source::Fresh, Some(record)));
                    }
                    looks.handed();
                    if look {
                        looks.now();
                    }
                }
                if unread {
                    looks.now();
                }
            }
            let now = Instant::now();
            if !yielding && now >= queue_look_at && work.ready.len() < BATCH {
                let (held, due) = self.queued_due(BATCH + work.queued_sending.len()).await?;
                work.plan.held(held);
                for d in due {
                    if work.queued_sending.insert((d.webhook_id, d.seq)) {
                        work.ready.push_back((d, Source::Queued, None));
                        last_work = Instant::now();
                    }
                }
                queue_look_at = Instant::now() + QUEUE_LOOK;
            }
            if !yielding
                && now >= looks.next
                && work.ready.len() < BATCH
                && work.plan.outstanding() < MAX_OUTSTANDING
            {
                if let Some(after) = work.plan.read_after() {
                    let events = self.new_events(after).await?;
                    looks.looked(!events.is_empty());
                    if !events.is_empty() {
                        last_work = Instant::now();
                    }
                    looks.behind = i64::try_from(events.len()).unwrap_or(i64::MAX) >= READ;
                    if looks.behind {
                        looks.now();
                    }
                    for (d, record) in work.plan.take(&events) {
                        work.ready.push_back((d, Source::Fresh, Some(record)));
                    }
                } else {
                    looks.looked(false);
                }
            }
            while in_flight.len() < BATCH {
                let Some((d, source, record)) = work.ready.pop_front() else {
                    break;
                };
                in_flight.push(Box::pin(async move {
                    let outcome = deliver::deliver(&d, timeout, insecure, own).await;
                    (d, source, outcome, record)
                }));
            }
            let leaving = yielding || last_work.elapsed() >= LINGER;
            let record_at = work.record_at(in_flight.len(), leaving);
            if record_at.is_some_and(|at| at <= Instant::now()) {
                work.first_unrecorded = None;
                work.last_recorded = Some(Instant::now());
                if let Some(recording) = work.plan.recording() {
                    for webhook in self.record(recording).await? {
                        work.plan.disabled(webhook);
                        metrics::webhook_disabled();
                    }
                }
                if std::mem::take(&mut work.retried_acknowledged) {
                    // The record's next entry in the queue may go now.
                    queue_look_at = Instant::now();
                }
                continue;
            }
            if work.idle(in_flight.len()) && (leaving || !work.plan.has_subscriptions()) {
                // The cursors moved by what was only read (events no subscription wants).
                if let Some(recording) = work.plan.recording() {
                    self.record(recording).await?;
                }
                return Ok(());
            }
            if let Some(watching) = &watching {
                // Writers read for this relay while it could take more.
                let can_take = !yielding
                    && !looks.behind
                    && work.ready.len() < BATCH
                    && work.plan.outstanding() < MAX_OUTSTANDING;
                watching.read_from(work.plan.read_after().filter(|_| can_take));
            }
            if last_renew.elapsed() >= RENEW_EVERY {
                self.renew().await?;
                last_renew = Instant::now();
            }
            // Wait for the next answer, a commit, the next look, or the time to record.
            let mut until = None::<Instant>;
            let mut at = |moment: Instant| until = Some(until.map_or(moment, |u| u.min(moment)));
            if !yielding && work.ready.len() < BATCH {
                at(looks.next);
                at(queue_look_at);
            }
            if let Some(record_at) = record_at {
                at(record_at);
            }
            if in_flight.is_empty() {
                at(last_work + LINGER);
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
            let commit = async {
                match &watching {
                    Some(watching) => watching.committed().await,
                    None => std::future::pending::<()>().await,
                }
            };
            match select(pin!(next), select(pin!(timer), pin!(commit))).await {
                Either::Left((Some(answer), _)) => {
                    work.answered(answer);
                    last_work = Instant::now();
                }
                Either::Right((Either::Right(_), _)) => {
                    // Read for this relay by the writer, or not (then it looks): both
                    // are seen at the top of the loop.
                    last_work = Instant::now();
                }
                _ => {}
            }
            while let Some(Some(answer)) = in_flight.next().now_or_never() {
                work.answered(answer);
            }
        }
    }

    async fn subscriptions(&self) -> ApiResult<Vec<Subscription>> {
        self.relay
            .db
            .run_in_tenant(self.tenant.clone(), webhook_queue::subscriptions)
            .await
    }

    async fn new_events(&self, after: i64) -> ApiResult<Vec<NewEvent>> {
        self.relay
            .db
            .run_in_tenant(self.tenant.clone(), move |conn| {
                Ok(crate::tenancy::events_after(conn, after, READ)?)
            })
            .await
    }

    async fn queued_due(&self, limit: usize) -> ApiResult<(Vec<Held>, Vec<Due>)> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.relay
            .db
            .run_in_tenant(self.tenant.clone(), move |conn| {
                webhook_queue::queued_due(conn, limit)
            })
            .await
    }

    async fn renew(&self) -> ApiResult<()> {
        let (relay, lease) = (self.relay.id, self.relay.lease());
        self.relay
            .db
            .run_in_tenant(self.tenant.clone(), move |conn| {
                webhook_queue::relaxed(conn, |conn| {
                    webhook_pending::renew_lease(conn, relay, lease)
                })
            })
            .await
    }

    /// Records a batch (`webhook_queue::record`); answers the subscriptions disabled.
    async fn record(&self, recording: webhook_queue::Recording) -> ApiResult<Vec<Uuid>> {
        let settings = self.relay.settings.clone();
        self.relay
            .db
            .run_in_tenant(self.tenant.clone(), move |conn| {
                let rules = RetryRules {
                    schedule: &settings.retry_schedule,
                    disable_after: settings.disable_after,
                };
                webhook_queue::record(conn, &recording, &rules)
            })
            .await
    }
}

/// An answer in the figures: deliveries by outcome, and the lag from commit to
/// acknowledgement.
fn count_answer((d, _, outcome, _): &Answer) {
    match outcome {
        Outcome::Acknowledged(_) => {
            let lag = (Utc::now() - d.occurred_at).to_std().unwrap_or_default();
            metrics::webhook_delivered(true, lag);
        }
        Outcome::Failed(..) => metrics::webhook_delivered(false, Duration::ZERO),
    }
}
