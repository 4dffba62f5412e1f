//! Who may do what: tokens and logins, roles and permissions, API keys, the user cache,
//! permissions that grow with the catalogue.

mod access;
mod caches;
mod permission_sync;
mod tokens;
