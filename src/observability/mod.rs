//! What operators see of a running server: the access log (text or JSON lines, with
//! request ids and W3C trace context) and Prometheus metrics.

pub mod access;
pub mod logging;
pub mod metrics;
pub mod scrape;
