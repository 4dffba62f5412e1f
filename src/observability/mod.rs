//! What operators see of a running server: the log format (text or JSON lines) and the
//! Prometheus metrics recorder. Depends on nothing else in the crate; the HTTP side (the
//! access log middleware, `/metrics`) is in `api::access` and `api::metrics`.

pub mod logging;
pub mod metrics;
