//! `SCHOOL_RATE_PER_SECOND`: an optional cap on each school's request rate (its pace), a
//! token bucket per school (refilled at the rate, holding at most `SCHOOL_RATE_BURST` requests). A
//! request past it is held until its token comes, when that is at most
//! `SCHOOL_RATE_MAX_DELAY_MS` away (it takes that token in advance), and answers 429
//! `throttled` with `Retry-After` otherwise. Holding paces a client that retries at once
//! (a 429 costs little, but a client that ignores `Retry-After` sends the next one at once,
//! and the 429s take more CPU than the requests they refuse); other schools are not
//! affected. Like the login throttle it counts in process memory.

//! The same bucket, keyed by client address, is the budget of requests that fail
//! authentication (`request::authenticate`).

use std::{
    hash::Hash,
    time::{Duration, Instant},
};

use crate::fairness::PerKey;

/// A pace per key (`K`: a school's schema name, or a client's address).
pub struct Pace<K> {
    per_second: f64,
    burst: f64,
    max_delay: Duration,
    buckets: PerKey<K, Bucket>,
}

struct Bucket {
    /// Below zero while requests hold tokens taken in advance.
    tokens: f64,
    at: Instant,
}

impl<K: Hash + Eq + Clone> Pace<K> {
    /// `per_second` requests a second per school, bursts of up to `burst`; a request waits
    /// at most `max_delay` for its token.
    pub fn new(per_second: u32, burst: u32, max_delay: Duration) -> Self {
        Self {
            per_second: f64::from(per_second.max(1)),
            burst: f64::from(burst.max(1)),
            max_delay,
            buckets: PerKey::default(),
        }
    }

    /// Takes one request's token for `school`: `Ok(delay)`, how long the request must wait
    /// for it (zero when one was there); `Err(wait)` when it would wait past the longest
    /// delay, with how long until a token is there.
    pub fn take(&self, school: &K) -> Result<Duration, Duration> {
        self.take_at(school, Instant::now())
    }

    fn take_at(&self, school: &K, now: Instant) -> Result<Duration, Duration> {
        let (rate, burst) = (self.per_second, self.burst);
        let fresh = || Bucket {
            tokens: burst,
            at: now,
        };
        // A bucket full again is the one a first request would make.
        let full = |b: &Bucket| b.tokens + rate * now.duration_since(b.at).as_secs_f64() >= burst;
        self.buckets
            .with(school, fresh, full, |bucket| self.take_from(bucket, now))
    }

    fn take_from(&self, bucket: &mut Bucket, now: Instant) -> Result<Duration, Duration> {
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

    use super::Pace;

    #[test]
    fn a_school_past_its_rate_waits_and_others_do_not() {
        let limit = Pace::new(10, 3, Duration::ZERO);
        let (busy, quiet) = ("busy", "quiet");
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
        let limit = Pace::new(10, 1, Duration::from_millis(250));
        let busy = "busy";
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
