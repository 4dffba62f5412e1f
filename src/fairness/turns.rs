//! A fixed number of turns per school, handed out in arrival order: the pool's per-school
//! share (`DB_POOL_PER_SCHOOL`) and the server's per-school admission
//! (`SCHOOL_MAX_IN_FLIGHT`) are both one of these.

use std::{hash::Hash, sync::Arc, time::Duration};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::fairness::PerKey;

/// `per_school` turns for every school (`K`: what names a school), each school's its own:
/// waiting for one holds back only later requests of the same school. Tokio's semaphore is
/// fair, so a school's waiters are served in the order they came.
pub struct Turns<K> {
    per_school: usize,
    schools: PerKey<K, Arc<Semaphore>>,
}

impl<K: Hash + Eq + Clone> Turns<K> {
    pub fn new(per_school: usize) -> Self {
        Self {
            per_school: per_school.max(1),
            schools: PerKey::default(),
        }
    }

    /// `school`'s semaphore (made on first use).
    pub fn of(&self, school: &K) -> Arc<Semaphore> {
        self.schools.with(
            school,
            || Arc::new(Semaphore::new(self.per_school)),
            // A semaphore only the map holds has no permit out and no waiter.
            |turns| Arc::strong_count(turns) == 1,
            |turns| turns.clone(),
        )
    }

    /// Waits (in arrival order) for one of `school`'s turns, at most `timeout`; `None` when
    /// none came in time.
    pub async fn take(&self, school: &K, timeout: Duration) -> Option<OwnedSemaphorePermit> {
        let turns = self.of(school);
        tokio::time::timeout(timeout, turns.acquire_owned())
            .await
            .ok()?
            .ok()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::Turns;

    #[tokio::test(flavor = "current_thread")]
    async fn a_school_past_its_turns_waits_and_others_do_not() {
        let turns = Turns::new(1);
        let wait = Duration::from_millis(20);
        let held = turns.take(&"busy", wait).await.expect("first turn");
        assert!(turns.take(&"busy", wait).await.is_none());
        assert!(turns.take(&"quiet", wait).await.is_some());
        drop(held);
        assert!(turns.take(&"busy", wait).await.is_some());
    }
}
