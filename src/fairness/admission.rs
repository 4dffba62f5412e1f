//! `SCHOOL_MAX_IN_FLIGHT`: how many of one school's requests the server works on at once
//! while other schools have requests too. The rest of that school's requests wait, in
//! arrival order and without using the CPU, once they have authenticated and before the
//! rest of their work (permissions, the handler, the database, the answer), so a school sending many
//! requests at once competes with the other schools for the cores with a few of them, not
//! with all (the pool's per-school share bounds only the database part of a request). A
//! request waits at most `DB_POOL_TIMEOUT_MS`, then answers 503 `service_unavailable`
//! with `Retry-After`.
//!
//! A school alone on the server (no other school's request arrived for
//! `SCHOOL_ALONE_AFTER_MS`) may have more in flight, up to twice its share of the pool
//! (`pool::alone_in_flight`: its share at the database, and the next request ready for
//! each of those connections): those spare turns cost no one anything while nobody else
//! is there, and the next request of another school takes them away again.
//!
//! A request is admitted once its body has arrived, it has authenticated and its school is
//! known to be the caller's (`request`), so a client that sends a body slowly, or no valid
//! credentials, or another school's, never holds a school's turn.

use std::{
    hash::Hash,
    pin::pin,
    sync::Mutex,
    time::{Duration, Instant},
};

use futures_util::future::{Either, select};
use tokio::sync::OwnedSemaphorePermit;

use crate::{
    error::{ApiError, ApiResult},
    fairness::Turns,
    observability::metrics,
};

/// A school's turns at the server (`K`: what names a school).
pub struct Admission<K> {
    /// Each school's turns while others are there.
    turns: Turns<K>,
    /// Each school's further turns while it is alone; `None` when the share allows none.
    spare: Option<Turns<K>>,
    recent: Mutex<RecentSchools<K>>,
    alone_after: Duration,
    timeout: Duration,
}

impl<K: Hash + Eq + Clone> Admission<K> {
    /// `per_school` requests of a school at once, up to `alone` when no other school's
    /// request arrived for `alone_after` (zero: never); a request waits at most `timeout`.
    pub fn with_window(
        per_school: u32,
        alone: u32,
        timeout: Duration,
        alone_after: Duration,
    ) -> Self {
        let spare = alone.saturating_sub(per_school) as usize;
        Self {
            turns: Turns::new(per_school as usize),
            spare: (spare > 0 && !alone_after.is_zero()).then(|| Turns::new(spare)),
            recent: Mutex::new(RecentSchools {
                last: None,
                before: None,
            }),
            alone_after,
            timeout,
        }
    }

    /// Waits for one of `school`'s turns; the request is worked on while the permit lives.
    pub async fn admit(&self, school: &K) -> ApiResult<OwnedSemaphorePermit> {
        let started = Instant::now();
        let others_there = self
            .recent
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .arrived(school, started, self.alone_after);
        if let Some(spare) = self.spare.as_ref().filter(|_| !others_there) {
            // Alone: the first of the school's own turns or its spare ones to come, waiting
            // in arrival order in both queues (a later request cannot take a spare turn
            // while an earlier one waits).
            let (own, spare) = (self.turns.of(school), spare.of(school));
            let (own, spare) = (pin!(own.acquire_owned()), pin!(spare.acquire_owned()));
            let either = select(own, spare);
            let permit = match tokio::time::timeout(self.timeout, either).await {
                Ok(Either::Left((permit, _)) | Either::Right((permit, _))) => permit.ok(),
                Err(_) => None,
            };
            metrics::school_admission(started.elapsed(), permit.is_none());
            return permit.ok_or(ApiError::SchoolBusy);
        }
        let permit = self.turns.take(school, self.timeout).await;
        metrics::school_admission(started.elapsed(), permit.is_none());
        permit.ok_or(ApiError::SchoolBusy)
    }
}

/// The last two different schools whose requests arrived, and when.
struct RecentSchools<K> {
    last: Option<(K, Instant)>,
    before: Option<(K, Instant)>,
}

impl<K: Eq + Clone> RecentSchools<K> {
    /// Records that a request of `school` arrived `now`; answers whether a request of
    /// another school arrived less than `window` before.
    fn arrived(&mut self, school: &K, now: Instant, window: Duration) -> bool {
        let same = self.last.as_ref().is_some_and(|(last, _)| last == school);
        let other = if same { &self.before } else { &self.last };
        let others_there = other
            .as_ref()
            .is_some_and(|(_, at)| now.saturating_duration_since(*at) < window);
        match &mut self.last {
            // The same school again: only its time (no copy of its name per request).
            Some((_, at)) if same => *at = now,
            last => {
                self.before = last.take();
                *last = Some((school.clone(), now));
            }
        }
        others_there
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::Admission;

    fn school(name: &'static str) -> &'static str {
        name
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_school_alone_has_its_spare_turns_until_another_school_comes() {
        let window = Duration::from_millis(200);
        let admission = Admission::with_window(2, 3, Duration::from_millis(20), window);
        let busy = school("busy");
        let mut held = Vec::new();
        for _ in 0..3 {
            held.push(admission.admit(&busy).await.expect("alone: three turns"));
        }
        assert!(admission.admit(&busy).await.is_err(), "no fourth turn");

        // Another school arrives: it is admitted, and the busy school is held to two.
        let quiet = admission
            .admit(&school("quiet"))
            .await
            .expect("the other school");
        held.pop();
        assert!(
            admission.admit(&busy).await.is_err(),
            "two in flight while another school is there"
        );
        held.pop();
        let third = admission.admit(&busy).await.expect("below two again");
        drop((quiet, third));

        // Once the other school has been away for the window, the spare turn comes back.
        tokio::time::sleep(window + Duration::from_millis(50)).await;
        let own = admission.admit(&busy).await.expect("its own second turn");
        let spare = admission
            .admit(&busy)
            .await
            .expect("alone again: the spare turn");
        assert!(admission.admit(&busy).await.is_err(), "still no fourth");
        drop((held, own, spare));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn alone_waiting_requests_take_any_turn_in_arrival_order() {
        let admission = std::sync::Arc::new(Admission::with_window(
            1,
            2,
            Duration::from_secs(5),
            Duration::from_secs(1),
        ));
        let busy = school("busy");
        let own = admission.admit(&busy).await.expect("its own turn");
        let spare = admission.admit(&busy).await.expect("the spare turn");
        let waiter = |admission: std::sync::Arc<Admission<&'static str>>| {
            // The permit stays in the task's output until it is read.
            tokio::spawn(async move { admission.admit(&busy).await })
        };
        let first = waiter(admission.clone());
        tokio::time::sleep(Duration::from_millis(20)).await;
        let second = waiter(admission.clone());
        tokio::time::sleep(Duration::from_millis(20)).await;

        // The spare turn frees: the first waiter has it, not the second.
        drop(spare);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(first.is_finished() && !second.is_finished());
        drop(own);
        let first = first.await.expect("first").expect("admitted");
        assert!(second.await.expect("second").is_ok());
        drop(first);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn without_spare_turns_the_cap_holds_alone_too() {
        let admission =
            Admission::with_window(1, 1, Duration::from_millis(20), Duration::from_secs(1));
        let held = admission.admit(&school("only")).await.expect("first");
        assert!(admission.admit(&school("only")).await.is_err());
        drop(held);
        let _after = admission
            .admit(&school("only"))
            .await
            .expect("after the first");
    }
}
