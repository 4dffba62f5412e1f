//! Login throttling: failed logins are counted per identifier and per client address over
//! a sliding 60-second window; past the limit, logins answer 429 until the window passes.
//!
//! The counts live in this process's memory: with several server processes each counts
//! its own share (documented in the README).

use std::{
    collections::{HashMap, VecDeque},
    sync::Mutex,
    time::{Duration, Instant},
};

const WINDOW: Duration = Duration::from_secs(60);
/// Above this many tracked keys, a call sweeps out the stale ones.
const SWEEP_THRESHOLD: usize = 10_000;

pub struct LoginThrottle {
    limit: usize,
    failures: Mutex<HashMap<String, VecDeque<Instant>>>,
}

/// One login attempt, counted as a failure from the moment it is reserved, so that
/// simultaneous attempts cannot all pass the check before any of them is counted. Dropping
/// it takes the count back (a successful login, or one that failed for another reason than
/// the credentials); [`Attempt::failed`] keeps it.
#[must_use = "an attempt is released when dropped"]
pub struct Attempt<'a> {
    throttle: &'a LoginThrottle,
    keys: [String; 2],
    at: Instant,
    keep: bool,
}

impl Attempt<'_> {
    /// The credentials were wrong: the attempt stays counted.
    pub fn failed(mut self) {
        self.keep = true;
    }
}

impl Drop for Attempt<'_> {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        let mut failures = self.throttle.lock();
        for key in &self.keys {
            if let Some(times) = failures.get_mut(key) {
                if let Some(position) = times.iter().position(|t| *t == self.at) {
                    times.remove(position);
                }
            }
        }
    }
}

impl LoginThrottle {
    pub fn new(limit_per_minute: u32) -> Self {
        Self {
            limit: limit_per_minute as usize,
            failures: Mutex::new(HashMap::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, VecDeque<Instant>>> {
        self.failures.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `identifier` must already be in its canonical form (see `Identifier::throttle_key`),
    /// so that spellings of one phone number share a count.
    fn keys(identifier: &str, client: &str) -> [String; 2] {
        [format!("id:{identifier}"), format!("ip:{client}")]
    }

    /// Reserves an attempt for this identifier and address; `Err(seconds to wait)` when
    /// either is over the limit. The check and the count happen under one lock.
    pub fn reserve(&self, identifier: &str, client: &str) -> Result<Attempt<'_>, u64> {
        let now = Instant::now();
        let keys = Self::keys(identifier, client);
        let mut failures = self.lock();
        if failures.len() > SWEEP_THRESHOLD {
            failures.retain(|_, times| {
                prune(times, now);
                !times.is_empty()
            });
        }
        let mut wait = Duration::ZERO;
        for key in &keys {
            if let Some(times) = failures.get_mut(key) {
                prune(times, now);
                if times.len() >= self.limit {
                    if let Some(oldest) = times.front() {
                        wait = wait.max(WINDOW.saturating_sub(now - *oldest));
                    }
                }
            }
        }
        if !wait.is_zero() {
            return Err(wait.as_secs().max(1));
        }
        for key in &keys {
            failures.entry(key.clone()).or_default().push_back(now);
        }
        drop(failures);
        Ok(Attempt {
            throttle: self,
            keys,
            at: now,
            keep: false,
        })
    }
}

fn prune(times: &mut VecDeque<Instant>, now: Instant) {
    while times
        .front()
        .is_some_and(|t| now.duration_since(*t) >= WINDOW)
    {
        times.pop_front();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_after_limit_per_identifier_and_per_address() {
        let throttle = LoginThrottle::new(3);
        for _ in 0..3 {
            throttle
                .reserve("a@x.io", "1.1.1.1")
                .expect("under the limit")
                .failed();
        }
        let wait = throttle
            .reserve("a@x.io", "2.2.2.2")
            .err()
            .expect("identifier blocked");
        assert!((1..=60).contains(&wait));
        assert!(
            throttle.reserve("b@x.io", "1.1.1.1").is_err(),
            "address blocked"
        );
        assert!(throttle.reserve("b@x.io", "2.2.2.2").is_ok());
    }

    #[test]
    fn attempts_in_flight_count_and_released_ones_do_not() {
        let throttle = LoginThrottle::new(2);
        let first = throttle.reserve("a@x.io", "1.1.1.1").expect("first");
        let second = throttle.reserve("a@x.io", "1.1.1.1").expect("second");
        assert!(
            throttle.reserve("a@x.io", "1.1.1.1").is_err(),
            "two attempts in flight fill a limit of two"
        );
        drop(first);
        second.failed();
        let third = throttle
            .reserve("a@x.io", "1.1.1.1")
            .expect("a released attempt frees its place");
        third.failed();
        assert!(throttle.reserve("a@x.io", "1.1.1.1").is_err());
    }
}
