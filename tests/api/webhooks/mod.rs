//! Webhooks (API.md 9): subscriptions and signed deliveries, the app's actions, hostile
//! receivers, undelivered events moving with an imported school.

mod actions;
mod hostile;
mod import;
mod signal;
pub(crate) mod subscriptions;
