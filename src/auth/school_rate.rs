//! `SCHOOL_RATE_PER_SECOND`: an optional cap on each school's request rate, a token bucket
//! per school (refilled at the rate, holding at most `SCHOOL_RATE_BURST` requests). A
//! request past it is held until its token comes, when that is at most
//! `SCHOOL_RATE_MAX_DELAY_MS` away (it takes that token in advance), and answers 429
//! `throttled` with `Retry-After` otherwise. Holding paces a client that retries at once
//! (a 429 costs little, but a client that ignores `Retry-After` sends the next one at once,
//! and the 429s take more CPU than the requests they refuse); other schools are not
//! affected. Like the login throttle it counts in process memory.

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
    max_delay: Duration,
    buckets: Mutex<HashMap<SchemaName, Bucket>>,
}

struct Bucket {
    /// Below zero while requests hold tokens taken in advance.
    tokens: f64,
    at: Instant,
}

impl SchoolRateLimit {
    /// `per_second` requests a second per school, bursts of up to `burst`; a request waits
    /// at most `max_delay` for its token.
    pub fn new(per_second: u32, burst: u32, max_delay: Duration) -> Self {
        Self {
            per_second: f64::from(per_second.max(1)),
            burst: f64::from(burst.max(1)),
            max_delay,
            buckets: Mutex::default(),
        }
    }

    /// Takes one request's token for `school`: `Ok(delay)`, how long the request must wait
    /// for it (zero when one was there); `Err(wait)` when it would wait past the longest
    /// delay, with how long until a token is there.
    pub fn take(&self, school: &SchemaName) -> Result<Duration, Duration> {
        self.take_at(school, Instant::now())
    }

    fn take_at(&self, school: &SchemaName, now: Instant) -> Result<Duration, Duration> {
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
            return Ok(Duration::ZERO);
        }
        let wait = Duration::from_secs_f64((1.0 - bucket.tokens) / self.per_second);
        if wait <= self.max_delay {
            bucket.tokens -= 1.0;
            Ok(wait)
        } else {
            Err(wait)
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
        let limit = SchoolRateLimit::new(10, 3, Duration::ZERO);
        let (busy, quiet) = (
            SchemaName::parse("busy").expect("name"),
            SchemaName::parse("quiet").expect("name"),
        );
        let start = Instant::now();
        for _ in 0..3 {
            assert_eq!(
                limit.take_at(&busy, start),
                Ok(Duration::ZERO),
                "the burst passes"
            );
        }
        let wait = limit.take_at(&busy, start).expect_err("past the burst");
        assert!(
            wait <= Duration::from_millis(100) && wait > Duration::ZERO,
            "{wait:?}"
        );
        assert_eq!(
            limit.take_at(&quiet, start),
            Ok(Duration::ZERO),
            "another school is not held back"
        );
        assert_eq!(
            limit.take_at(&busy, start + Duration::from_millis(100)),
            Ok(Duration::ZERO),
            "one token back after a tenth of a second"
        );
    }

    /// Whole milliseconds (float arithmetic stays within a nanosecond or so).
    fn millis(taken: Result<Duration, Duration>) -> Result<u128, u128> {
        let round = |d: Duration| (d.as_micros() + 500) / 1000;
        taken.map(round).map_err(round)
    }

    #[test]
    fn a_request_past_the_rate_is_held_for_its_token_up_to_the_longest_delay() {
        let limit = SchoolRateLimit::new(10, 1, Duration::from_millis(250));
        let busy = SchemaName::parse("busy").expect("name");
        let start = Instant::now();
        assert_eq!(millis(limit.take_at(&busy, start)), Ok(0));
        // Each held request takes the next token in advance: 100, 200 ms; the third
        // would wait 300 ms, past the longest delay, and takes nothing.
        assert_eq!(millis(limit.take_at(&busy, start)), Ok(100));
        assert_eq!(millis(limit.take_at(&busy, start)), Ok(200));
        assert_eq!(millis(limit.take_at(&busy, start)), Err(300));
        // 250 ms on, the tokens taken in advance are paid back but for half of one.
        assert_eq!(
            millis(limit.take_at(&busy, start + Duration::from_millis(250))),
            Ok(50)
        );
    }
}
