//! Fairness: one school (or one client) can only slow itself.
//!
//! One vocabulary for all of it:
//! - a **turn** is a permit to work, handed out in arrival order: a school has a few turns
//!   at the server (`SCHOOL_MAX_IN_FLIGHT`, [`Admission`]) and a share of the pool's
//!   connections (`DB_POOL_PER_SCHOOL`, the pool's [`Turns`]);
//! - the **pace** is a rate: each school's requests a second (`SCHOOL_RATE_PER_SECOND`,
//!   [`Pace`]), and, at the same rate, each client address's requests that fail
//!   authentication (so failed requests spend their sender's budget, never a school's);
//! - every per-school (or per-address) state lives in one map type, [`PerKey`], which
//!   drops idle entries one way when it grows past a bound.
//!
//! A request is paced and admitted on its school only once it has authenticated and its
//! school is known to be the caller's (`request`, issue 35).

mod admission;
mod pace;
mod per_key;
mod turns;

pub use admission::Admission;
pub use pace::Pace;
pub use per_key::PerKey;
pub use turns::Turns;
