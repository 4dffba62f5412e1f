//! A fixed number of turns per school, handed out in arrival order: the pool's per-school
//! share (`DB_POOL_PER_SCHOOL`) and the server's per-school admission
//! (`SCHOOL_MAX_IN_FLIGHT`) are both one of these.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::db::schema_name::SchemaName;

/// Above this many schools in the map, the idle ones are dropped on the next insert.
const PRUNE_AT: usize = 1024;

/// `per_school` turns for every school, each school's its own: waiting for one holds back
/// only later requests of the same school. Tokio's semaphore is fair, so a school's
/// waiters are served in the order they came.
pub struct PerSchoolTurns {
    per_school: usize,
    schools: Mutex<HashMap<SchemaName, Arc<Semaphore>>>,
}

impl PerSchoolTurns {
    pub fn new(per_school: usize) -> Self {
        Self {
            per_school: per_school.max(1),
            schools: Mutex::default(),
        }
    }

    /// `school`'s semaphore (made on first use).
    pub fn of(&self, school: &SchemaName) -> Arc<Semaphore> {
        let mut schools = self.schools.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(turns) = schools.get(school) {
            return turns.clone();
        }
        if schools.len() >= PRUNE_AT {
            // A semaphore only the map holds has no permit out and no waiter.
            schools.retain(|_, turns| Arc::strong_count(turns) > 1);
        }
        let turns = Arc::new(Semaphore::new(self.per_school));
        schools.insert(school.clone(), turns.clone());
        turns
    }

    /// Waits (in arrival order) for one of `school`'s turns, at most `timeout`; `None` when
    /// none came in time.
    pub async fn take(
        &self,
        school: &SchemaName,
        timeout: Duration,
    ) -> Option<OwnedSemaphorePermit> {
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

    use super::PerSchoolTurns;
    use crate::db::schema_name::SchemaName;

    fn school(name: &str) -> SchemaName {
        SchemaName::parse(name).expect("schema name")
    }

    #[actix_web::test]
    async fn a_school_past_its_turns_waits_and_others_do_not() {
        let turns = PerSchoolTurns::new(1);
        let wait = Duration::from_millis(20);
        let held = turns.take(&school("busy"), wait).await.expect("first turn");
        assert!(turns.take(&school("busy"), wait).await.is_none());
        assert!(turns.take(&school("quiet"), wait).await.is_some());
        drop(held);
        assert!(turns.take(&school("busy"), wait).await.is_some());
    }
}
