//! One delivery: the event signed and POSTed to the subscription's URL, the address
//! resolved and checked first (`destination`), no redirect followed, the whole exchange
//! bounded by `WEBHOOK_TIMEOUT_MS` and the answer read to at most `MAX_ANSWER_BYTES`. A
//! slow or hostile receiver costs one connection until the timeout, nothing more.

use std::{
    collections::HashMap,
    net::{IpAddr, SocketAddr},
    sync::{Mutex, OnceLock},
    time::Duration,
};

use chrono::Utc;
use reqwest::{Url, redirect::Policy};

use super::{destination, signature};
use crate::school::{
    events::Event,
    webhook_queue::{Due, Outcome},
};

/// The longest reason an attempt's record keeps.
const MAX_ERROR_CHARS: usize = 500;

/// How much of a receiver's answer is read (then the connection is dropped).
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// The body of a delivery: the event, as the feed answers it.
pub fn body_of(due: &Due) -> Result<Vec<u8>, String> {
    let event = Event {
        id: due.event_id,
        kind: due.event_type.clone(),
        at: due.occurred_at,
        data: due.data.clone(),
    };
    serde_json::to_vec(&event).map_err(|e| e.to_string())
}

/// Sends `due` once; never fails, the outcome says how it went.
pub async fn deliver(
    due: &Due,
    timeout: Duration,
    allow_insecure: bool,
    own: &[IpAddr],
) -> Outcome {
    match attempt(due, timeout, allow_insecure, own).await {
        Ok(status) if (200..300).contains(&status) => Outcome::Acknowledged(i32::from(status)),
        Ok(status) => Outcome::Failed(Some(i32::from(status)), format!("answered {status}")),
        Err(why) => Outcome::Failed(None, why.chars().take(MAX_ERROR_CHARS).collect()),
    }
}

async fn attempt(
    due: &Due,
    timeout: Duration,
    allow_insecure: bool,
    own: &[IpAddr],
) -> Result<u16, String> {
    let url: Url = destination::parse(&due.url, allow_insecure)?;
    let address = destination::resolve(&url, allow_insecure, own).await?;
    let host = url.host_str().unwrap_or_default().to_owned();
    let clients = clients_for(&host, address, timeout)?;
    let body = body_of(due)?;
    let id = due.event_id.to_string();
    let timestamp = Utc::now().timestamp();
    let signed = signature::sign(&due.secret, &id, timestamp, &body)?;
    let request = |client: &reqwest::Client| {
        client
            .post(url.clone())
            .header("content-type", "application/json")
            .header("webhook-id", &id)
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", &signed)
            .body(body.clone())
            .send()
    };
    let exchange = async {
        let mut answer = match request(&clients.kept).await {
            Ok(answer) => answer,
            // A kept-alive connection the receiver closed as it was reused (a server that
            // closes after each answer without saying so, or whose idle timeout is short):
            // sent again at once on a new connection (the kept client may hold more such
            // connections). Receivers tell repeats by `webhook-id`.
            Err(err) if closed_under_us(&err) => request(&clients.new).await.map_err(describe)?,
            Err(err) => return Err(describe(err)),
        };
        let status = answer.status().as_u16();
        let mut read = 0usize;
        while read < MAX_ANSWER_BYTES {
            match answer.chunk().await {
                Ok(Some(chunk)) => read += chunk.len(),
                Ok(None) | Err(_) => break,
            }
        }
        Ok(status)
    };
    // The client's own timeout bounds the exchange too; this one also bounds the answer's
    // reading, whatever the receiver trickles.
    tokio::time::timeout(timeout, exchange)
        .await
        .unwrap_or_else(|_| Err("no answer within the timeout".into()))
}

/// The clients of one destination: `kept` keeps its connections alive for the next
/// deliveries; `new` opens a connection for each request (a delivery sent again after
/// its kept connection was closed under it).
#[derive(Clone)]
struct Clients {
    kept: reqwest::Client,
    new: reqwest::Client,
}

/// Clients by host and the address it was resolved to and checked as, this time: a name
/// that resolves elsewhere later gets other clients, pinned to the new address once it
/// passed the checks.
type ClientsByDestination = HashMap<(String, SocketAddr, Duration), Clients>;
static CLIENTS: OnceLock<Mutex<ClientsByDestination>> = OnceLock::new();
/// Destinations whose clients are kept at most (then all are dropped and made again as
/// needed).
const MAX_CLIENTS: usize = 256;

fn clients_for(host: &str, address: SocketAddr, timeout: Duration) -> Result<Clients, String> {
    let key = (host.to_owned(), address, timeout);
    let mut clients = CLIENTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(found) = clients.get(&key) {
        return Ok(found.clone());
    }
    let builder = || {
        reqwest::Client::builder()
            .redirect(Policy::none())
            .timeout(timeout)
            .connect_timeout(timeout)
            .resolve(host, address)
    };
    let made = Clients {
        kept: builder().build().map_err(|e| format!("client: {e}"))?,
        new: (builder().pool_max_idle_per_host(0).build()).map_err(|e| format!("client: {e}"))?,
    };
    if clients.len() >= MAX_CLIENTS {
        clients.clear();
    }
    clients.insert(key, made.clone());
    Ok(made)
}

/// The request failed on a connection that was up, before any answer, and not by the
/// timeout: the receiver (or something between) closed it under the request.
fn closed_under_us(err: &reqwest::Error) -> bool {
    err.is_request() && !err.is_timeout() && !err.is_connect()
}

fn describe(err: reqwest::Error) -> String {
    if err.is_timeout() {
        "no answer within the timeout".into()
    } else if err.is_connect() {
        "could not connect".into()
    } else {
        format!("request failed: {err}")
    }
}
