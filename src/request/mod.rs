//! The pipeline a request goes through before its handler's work, as named stages. A
//! school request (`SchoolRequest::run`, [`school`]) steps through them in this order:
//!
//! 1. **host** ([`host`]): the `Host` header names the main domain or a school's address
//!    (the edge, `api::host`, also keeps each path to the hosts it belongs to);
//! 2. **tenant** ([`tenant`]): the school chosen by the address (host or `X-Tenant`), or,
//!    on the main domain without `X-Tenant`, by the token's own claim;
//! 3. **authenticate** ([`authenticate`]): who the caller is (token or API key) and whether
//!    that caller belongs to this school. A request that fails here spends its client
//!    address's budget ([`failed`]), never the school's;
//! 4. **pace** ([`pace`]): the school's requests a second (`SCHOOL_RATE_PER_SECOND`);
//! 5. **admit** ([`admit`]): one of the school's turns at the server (`SCHOOL_MAX_IN_FLIGHT`),
//!    held until the answer is ready;
//! 6. **require** ([`require`], in the unit of work): the caller's roles and the permission
//!    the endpoint needs; then the handler's own database work, on the same connection, in
//!    one unit of work on the connection's lane (`db::lanes`), and for a read by a party
//!    outside the school its disclosures ([`disclose`]).
//!
//! Pace and admit come after authentication (issue 35): only a school's own authenticated
//! callers can use up its rate or its turns. Each stage is a function returning its result,
//! with its own tests; the one value still left in the request's extensions is the access
//! log's [`identity`], which says why. A system request ([`system`]) is authenticate and
//! require only; the login endpoints' stages are [`login`].

pub mod admit;
pub mod authenticate;
pub mod disclose;
pub mod failed;
pub mod host;
pub mod identity;
pub mod login;
pub mod pace;
pub mod require;
pub mod school;
pub mod system;
pub mod tenant;

pub use require::{Caller, Need, Principal};
pub use school::SchoolRequest;
pub use system::{SystemNeed, SystemRequest};
