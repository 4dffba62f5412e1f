//! Authentication and authorisation: JWTs, passwords, API keys, login throttling, the
//! permission catalogue and roles, and the extractors that produce a typed caller.

pub mod accounts;
pub mod api_key;
pub mod cache;
pub mod context;
pub mod disclosures;
pub mod jwt;
pub mod login;
pub mod password;
pub mod permissions;
pub mod role_cache;
pub mod roles;
pub mod state;
pub mod system_context;
pub mod throttle;
pub mod user_cache;

pub use context::{Caller, Need, Principal, SchoolRequest};
pub use state::AppState;
pub use system_context::{SystemNeed, SystemRequest};
