//! Test harness: each test gets its own database, cloned from a template that is migrated
//! and seeded once per run, and its own server on a free port.
//!
//! The template holds two schools, `alpha` (alpha.localhost) and `beta` (beta.localhost),
//! each with an `admin` user (admin role), a `teacher` user (teacher role and profile) and
//! a `norole` user, plus a platform superuser `root@platform.test`, a staff admin
//! `staff@platform.test` and a plain platform user `plain@platform.test`.

/// `NewRecord` for a request posted to a fixed collection, and `path()` for its answer.
macro_rules! posted_to {
    ($new:ident => $record:ident at $collection:expr) => {
        impl NewRecord for $new<'_> {
            type Record = $record;
            fn collection(&self) -> String {
                $collection.into()
            }
        }

        impl $record {
            pub fn path(&self) -> String {
                item($collection, &self.id)
            }
        }
    };
}

mod auth;
mod database;
mod fixtures;
mod http;
pub mod metrics;
mod people;
mod platform;
mod process;
mod records;
mod school;
mod server;
mod webhooks;
mod year;

pub use auth::*;
pub use database::*;
pub use fixtures::*;
pub use http::*;
pub use people::*;
pub use platform::*;
pub use process::*;
pub use records::*;
pub use school::*;
pub use server::*;
pub use webhooks::*;
pub use year::*;

pub const PASSWORD: &str = "password-123";
pub const JWT_SECRET: &str = "integration-test-secret-0123456789abcdef";
pub const SCHOOLS: [&str; 2] = ["alpha", "beta"];
