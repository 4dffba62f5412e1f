//! The pipeline a school request goes through, as named stages, in this order:
//!
//! 1. **host** (`api::host::classify_host`, at the HTTP edge): the `Host` header names the
//!    main domain or a school's address; each path is kept to the hosts it belongs to;
//! 2. **tenant** ([`tenant`]): the school chosen by the address (host or `X-Tenant`), or,
//!    on the main domain without `X-Tenant`, by the token's own claim;
//! 3. **authenticate** (`auth::context`): who the caller is (token or API key) and whether
//!    that caller belongs to this school. A request that fails here spends its client
//!    address's budget ([`failed`]), never the school's;
//! 4. **pace** ([`pace`]): the school's requests a second (`SCHOOL_RATE_PER_SECOND`);
//! 5. **admit** ([`admit`]): one of the school's turns at the server (`SCHOOL_MAX_IN_FLIGHT`),
//!    held until the answer is ready;
//! 6. **require** (`auth::context`, in the unit of work): the caller's roles and the
//!    permission the endpoint needs; then the handler's own database work, on the same
//!    connection, in one unit of work on the connection's lane (`db::lanes`).
//!
//! Pace and admit come after authentication (issue 35): only a school's own authenticated
//! callers can use up its rate or its turns. `SchoolRequest::run` steps through them.
//! Each stage is a function returning its result (nothing is handed on through request
//! extensions), with its own tests.

pub mod admit;
pub mod failed;
pub mod pace;
pub mod tenant;
