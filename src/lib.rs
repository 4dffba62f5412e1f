//! School management service: a multi-tenant (schema-per-school) REST API.
//!
//! - `tenancy`: which school a request is for, and connections bound to its schema;
//! - `auth`: tokens, passwords, API keys, permissions and the caller extractors;
//! - `api`: routes and handlers, `api::system` for the platform, `api::school` per school;
//! - `db`: the pool, migrations, the public schema and platform models;
//! - `school`: school records, their forms and queries (the only code naming school tables);
//! - `error`: the one error type and its problem+json form;
//! - `observability`: access log (text or JSON), trace context and Prometheus metrics;
//! - `state`: what every handler can reach; `startup`: the server built around it;
//! - `cli`: the `school-service` command line.

pub mod api;
pub mod auth;
pub mod cli;
pub mod config;
pub mod db;
pub mod error;
pub mod observability;
pub mod school;
pub mod startup;
pub mod state;
pub mod tenancy;
