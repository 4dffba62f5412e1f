//! `SCHOOL_MAX_IN_FLIGHT`: how many of one school's requests the server works on at once.
//! The rest of that school's requests wait, in arrival order and without using the CPU,
//! before any work is done on them (authentication, the handler, the database, the
//! answer), so a school sending many requests at once competes with the other schools for
//! the cores with a few of them, not with all (the pool's per-school share bounds only the
//! database part of a request). A request waits at most `DB_POOL_TIMEOUT_MS`, then answers
//! 503 `service_unavailable` with `Retry-After`.
//!
//! Requests without a body on a school's address are admitted before routing (`api::host`);
//! the others once their body has arrived and their credentials have been read
//! (`SchoolRequest::run`), so a client that sends a body slowly, or no valid credentials,
//! never holds a school's turn.

use std::time::{Duration, Instant};

use tokio::sync::OwnedSemaphorePermit;

use crate::{
    db::{per_school::PerSchoolTurns, schema_name::SchemaName},
    error::{ApiError, ApiResult},
    observability::metrics,
};

pub struct SchoolAdmission {
    turns: PerSchoolTurns,
    timeout: Duration,
}

/// In a request's extensions: the request holds its school's turn already.
#[derive(Clone, Copy, Debug)]
pub struct Admitted;

impl SchoolAdmission {
    /// `per_school` requests of a school at once; a request waits at most `timeout`.
    pub fn new(per_school: u32, timeout: Duration) -> Self {
        Self {
            turns: PerSchoolTurns::new(per_school as usize),
            timeout,
        }
    }

    /// Waits for one of `school`'s turns; the request is worked on while the permit lives.
    pub async fn admit(&self, school: &SchemaName) -> ApiResult<OwnedSemaphorePermit> {
        let started = Instant::now();
        let permit = self.turns.take(school, self.timeout).await;
        metrics::school_admission(started.elapsed(), permit.is_none());
        permit.ok_or(ApiError::SchoolBusy)
    }
}
