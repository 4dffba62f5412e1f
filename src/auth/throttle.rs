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

impl LoginThrottle {
    pub fn new(limit_per_minute: u32) -> Self {
        Self {
            limit: limit_per_minute as usize,
            failures: Mutex::new(HashMap::new()),
        }
    }

    fn keys(identifier: &str, client: &str) -> [String; 2] {
        [
            format!("id:{}", identifier.trim().to_lowercase()),
            format!("ip:{client}"),
        ]
    }

    /// `Err(seconds to wait)` when either key is over the limit.
    pub fn check(&self, identifier: &str, client: &str) -> Result<(), u64> {
        let now = Instant::now();
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        let mut wait = Duration::ZERO;
        for key in Self::keys(identifier, client) {
            if let Some(times) = failures.get_mut(&key) {
                prune(times, now);
                if times.len() >= self.limit {
                    if let Some(oldest) = times.front() {
                        wait = wait.max(WINDOW.saturating_sub(now - *oldest));
                    }
                }
            }
        }
        if wait.is_zero() {
            Ok(())
        } else {
            Err(wait.as_secs().max(1))
        }
    }

    pub fn record_failure(&self, identifier: &str, client: &str) {
        let now = Instant::now();
        let mut failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        if failures.len() > SWEEP_THRESHOLD {
            failures.retain(|_, times| {
                prune(times, now);
                !times.is_empty()
            });
        }
        for key in Self::keys(identifier, client) {
            let times = failures.entry(key).or_default();
            prune(times, now);
            times.push_back(now);
        }
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
            assert!(throttle.check("a@x.io", "1.1.1.1").is_ok());
            throttle.record_failure("a@x.io", "1.1.1.1");
        }
        let wait = throttle
            .check("A@X.io", "2.2.2.2")
            .expect_err("identifier blocked");
        assert!((1..=60).contains(&wait));
        assert!(
            throttle.check("b@x.io", "1.1.1.1").is_err(),
            "address blocked"
        );
        assert!(throttle.check("b@x.io", "2.2.2.2").is_ok());
    }
}
