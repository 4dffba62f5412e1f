//! Authentication and authorisation material: JWTs, passwords, API keys, login
//! throttling, the permission catalogue and roles. The request stages that use them (who
//! is calling, what they may do) are in `request`.

pub mod accounts;
pub mod api_key;
pub mod jwt;
pub mod password;
pub mod permissions;
pub mod roles;
pub mod throttle;
