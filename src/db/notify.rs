//! One background connection that `LISTEN`s for the changes other processes announce
//! (`NOTIFY`), and hands each notification to the subscriber of its channel: the tenant
//! directory, the role cache, the user cache. It needs a direct connection
//! (`DATABASE_LISTEN_URL`): a transaction pooler cannot carry `LISTEN`.

use std::{
    sync::{Arc, Weak},
    thread,
    time::Duration,
};

use diesel::{pg::PgConnection, prelude::*};

use crate::secret::Secret;

/// Something that keeps state other processes can change.
pub trait Subscriber: Send + Sync {
    /// The channel it listens on.
    fn channel(&self) -> &'static str;
    /// A notification arrived on the channel.
    fn notified(&self, payload: &str);
    /// Notifications may have been missed (the connection was lost): drop everything.
    fn missed(&self);
}

const POLL: Duration = Duration::from_millis(250);
const RECONNECT: Duration = Duration::from_secs(2);

/// Starts the listener thread; it ends once every subscriber is gone.
pub fn spawn_listener(database_url: Secret, subscribers: Vec<Weak<dyn Subscriber>>) {
    let spawned = thread::Builder::new()
        .name("change-listener".into())
        .spawn(move || {
            while subscribers.iter().any(|s| s.strong_count() > 0) {
                if let Err(err) = listen(&subscribers, database_url.expose()) {
                    log::warn!("change listener: {err}; reconnecting");
                }
                for subscriber in subscribers.iter().filter_map(Weak::upgrade) {
                    subscriber.missed();
                }
                thread::sleep(RECONNECT);
            }
        });
    if let Err(err) = spawned {
        log::error!("could not start the change listener: {err}");
    }
}

/// Polls a LISTEN connection; returns when the subscribers are gone or on an error.
/// Polling reads the socket only (`PQconsumeInput`): it sends nothing to the server.
fn listen(subscribers: &[Weak<dyn Subscriber>], database_url: &str) -> anyhow::Result<()> {
    let mut conn = PgConnection::establish(database_url)?;
    for subscriber in subscribers.iter().filter_map(Weak::upgrade) {
        diesel::sql_query(format!("LISTEN {}", subscriber.channel())).execute(&mut conn)?;
    }
    // What was notified before the LISTEN (at start, or while reconnecting) was missed.
    for subscriber in subscribers.iter().filter_map(Weak::upgrade) {
        subscriber.missed();
    }
    loop {
        let alive: Vec<Arc<dyn Subscriber>> =
            subscribers.iter().filter_map(Weak::upgrade).collect();
        if alive.is_empty() {
            return Ok(());
        }
        for notification in conn.notifications_iter() {
            let notification = notification?;
            for subscriber in alive.iter().filter(|s| s.channel() == notification.channel) {
                subscriber.notified(&notification.payload);
            }
        }
        drop(alive);
        thread::sleep(POLL);
    }
}
