//! Typed requests of a school's webhook subscriptions (API.md 13).

use serde::Serialize;

use super::NewRecord;

pub const WEBHOOKS: &str = "/api/v1/school/webhooks/";

/// A subscription of `url` to the events named (`*` for all).
#[derive(Serialize, Default)]
pub struct NewWebhook<'a> {
    pub url: &'a str,
    pub event_types: &'a [&'a str],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<&'a str>,
}

/// The answer is read untyped: the tests read the secret, shown once, and a few fields.
impl NewRecord for NewWebhook<'_> {
    type Record = serde_json::Value;
    fn collection(&self) -> String {
        WEBHOOKS.into()
    }
}
