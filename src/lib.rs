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
//! - `request`: the stages a school request goes through, in order (`request` explains);
//! - `relay`: the webhook relay (signing, safe destinations, delivery), over `school`;
//! - `auth`: tokens, passwords, API keys, permissions, roles, the caller extractors and the
//!   `AppState` they hand out;
//! - `api`: routes and handlers, `api::system` for the platform, `api::school` per school,
//!   each module mounting and describing its own routes;
//! - `startup`: the server built around them; `cli`: the `school-service` command line.

pub mod api;
pub mod auth;
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
pub mod tenancy;

#[cfg(test)]
mod layering;
