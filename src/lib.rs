//! School management service: a multi-tenant (schema-per-school) REST API.
//!
//! Layers, from the bottom; a module imports only from layers below it (`layering` checks):
//!
//! - `error`: the one error type and its problem+json form; `observability`: the log
//!   format and the Prometheus recorder; `secret`: configured secrets;
//! - `fairness`: per-school turns, admission and pace (one school can only slow itself);
//! - `db`: the pool, migrations, the public schema and platform models; `config`;
//! - `tenancy`: which school a request is for, and connections bound to its schema;
//! - `school`: school records, their forms and queries (the only code naming school tables);
//! - `relay`: the webhook relay (signing, safe destinations, delivery), over `school`;
//! - `auth`: tokens, passwords, API keys, login throttling, permissions and roles;
//! - `cache`: the token users and role grants the request stages read instead of querying;
//! - `state`: `AppState`, what every handler can reach, built once at start-up;
//! - `request`: the stages a request goes through before its handler's work, in order, and
//!   the extractors (`SchoolRequest`, `SystemRequest`) that step through them;
//! - `api`: routes and handlers, `api::system` for the platform, `api::school` per school,
//!   each module mounting and describing its own routes;
//! - `startup`: the server built around them; `cli`: the `school-service` command line.

pub mod api;
pub mod auth;
pub mod cache;
pub mod cli;
pub mod config;
pub mod db;
pub mod error;
pub mod fairness;
pub mod observability;
pub mod relay;
pub mod request;
pub mod school;
pub mod secret;
pub mod startup;
pub mod state;
pub mod tenancy;

#[cfg(test)]
mod layering;
