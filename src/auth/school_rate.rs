//! `SCHOOL_RATE_PER_SECOND`: an optional cap on each school's request rate, a token bucket
//! per school (refilled at the rate, holding at most `SCHOOL_RATE_BURST` requests). Past
//! it the school's requests answer 429 `throttled` with `Retry-After` until tokens are back;
//! other schools are not affected. Like the login throttle it counts in process memory.

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

use crate::db::schema_name::SchemaName;

/// Above this many schools tracked, a call drops the buckets that are full again.
const SWEEP_THRESHOLD: usize = 10_000;

pub struct SchoolRateLimit {
    per_second: f64,
    burst: f64,
    buckets: Mutex<HashMap<SchemaName, Bucket>>,
}

struct Bucket {
    tokens: f64,
    at: Instant,
}

impl SchoolRateLimit {
    /// `per_second` requests a second per school, bursts of up to `burst`.
    pub fn new(per_second: u32, burst: u32) -> Self {
        Self {
            per_second: f64::from(per_second.max(1)),
            burst: f64::from(burst.max(1)),
            buckets: Mutex::default(),
        }
    }

    /// Takes one request's token for `school`; `Err(wait)` when there is none, with how
    /// long until there is.
    pub fn take(&self, school: &SchemaName) -> Result<(), Duration> {
        self.take_at(school, Instant::now())
    }

    fn take_at(&self, school: &SchemaName, now: Instant) -> Result<(), Duration> {
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.len() >= SWEEP_THRESHOLD {
            let (rate, burst) = (self.per_second, self.burst);
            buckets.retain(|_, b| b.tokens + rate * now.duration_since(b.at).as_secs_f64() < burst);
        }
        let bucket = buckets.entry(school.clone()).or_insert(Bucket {
            tokens: self.burst,
            at: now,
        });
        let refilled = self.per_second * now.duration_since(bucket.at).as_secs_f64();
        bucket.tokens = (bucket.tokens + refilled).min(self.burst);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64(
                (1.0 - bucket.tokens) / self.per_second,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::SchoolRateLimit;
    use crate::db::schema_name::SchemaName;

    #[test]
    fn a_school_past_its_rate_waits_and_others_do_not() {
        let limit = SchoolRateLimit::new(10, 3);
        let (busy, quiet) = (
            SchemaName::parse("busy").expect("name"),
            SchemaName::parse("quiet").expect("name"),
        );
        let start = Instant::now();
        for _ in 0..3 {
            assert!(limit.take_at(&busy, start).is_ok(), "the burst passes");
        }
        let wait = limit.take_at(&busy, start).expect_err("past the burst");
        assert!(
            wait <= Duration::from_millis(100) && wait > Duration::ZERO,
            "{wait:?}"
        );
        assert!(
            limit.take_at(&quiet, start).is_ok(),
            "another school is not held back"
        );
        assert!(
            limit
                .take_at(&busy, start + Duration::from_millis(100))
                .is_ok(),
            "one token back after a tenth of a second"
        );
    }
}
