//! A hostile receiver (never answers, answers 10 MB, answers a byte a second) costs one
//! connection until `WEBHOOK_TIMEOUT_MS` and nothing else: its answer is read to a bound,
//! the attempt ends at the timeout, and the school's other subscriptions (and other
//! schools) are delivered meanwhile, later events included.

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use crate::{
    helpers::{As, NewClass, NewRecord, TestApp, spawn_app_with},
    webhooks::subscriptions::{WEBHOOKS, subscribe},
};

const TIMEOUT: Duration = Duration::from_secs(4);

/// `tests/webhooks/hostile.py`, killed on drop.
struct Hostile {
    child: Child,
    port: u16,
    log: std::path::PathBuf,
}

impl Hostile {
    fn start() -> Self {
        let log = std::env::temp_dir().join(format!("hostile-{}.jsonl", uuid::Uuid::new_v4()));
        let mut child = Command::new("python3")
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/webhooks/hostile.py"
            ))
            .arg(&log)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the receiver");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("port");
        let port = line.trim().parse().expect("a port");
        Self { child, port, log }
    }

    /// The connections that ended, by path.
    fn ended(&self, path: &str) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).expect("json line"))
            .filter(|c| c["path"] == path)
            .collect()
    }

    async fn wait(&self, path: &str, count: usize, within: Duration) -> Vec<Value> {
        let deadline = Instant::now() + within;
        loop {
            let ended = self.ended(path);
            if ended.len() >= count || Instant::now() > deadline {
                return ended;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

async fn attempts(app: &TestApp, who: &As, hook: &Value) -> Vec<Value> {
    let id = hook["id"].as_str().expect("id");
    let reply = app.get(&format!("{WEBHOOKS}{id}/deliveries/"), who).await;
    reply.body["results"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The subscription's attempts once `count` are recorded (a busy school's answers are
/// recorded together, up to a second after them), or what is there after five seconds.
async fn attempts_recorded(app: &TestApp, who: &As, hook: &Value, count: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let made = attempts(app, who, hook).await;
        if made.len() >= count || Instant::now() > deadline {
            return made;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// An app whose deliveries time out after `TIMEOUT` and are retried only after ten
/// minutes (so any second attempt seen would be early).
async fn hostile_app() -> TestApp {
    spawn_app_with(|config| {
        config.events.allow_insecure = true;
        config.events.webhook_timeout = TIMEOUT;
        config.events.retry_schedule = vec![Duration::from_secs(600)];
    })
    .await
}

fn time(value: &Value) -> DateTime<Utc> {
    value.as_str().expect("a time").parse().expect("RFC 3339")
}

#[tokio::test]
async fn a_hostile_receiver_costs_one_connection_until_the_timeout_and_nothing_else() {
    let app = hostile_app().await;
    let alpha = app.as_school_user("alpha", "admin").await;
    let beta = app.as_school_user("beta", "admin").await;
    let receiver = Hostile::start();
    let url = |path: &str| format!("http://127.0.0.1:{}/{path}", receiver.port);
    let types: &[&str] = &["subject.created"];
    let never = subscribe(&app, &alpha, &url("never"), types).await;
    let huge = subscribe(&app, &alpha, &url("huge"), types).await;
    let slow = subscribe(&app, &alpha, &url("slow"), types).await;
    subscribe(&app, &alpha, &url("ok"), &["*"]).await;
    subscribe(&app, &beta, &url("ok-beta"), types).await;

    let subject = |name: &str, code: &str| json!({"name": name, "code": code});
    let first = app
        .post("/api/v1/school/subjects/", &alpha, subject("One", "S1"))
        .await;
    first.assert(201, None);
    app.post("/api/v1/school/subjects/", &beta, subject("Beta", "B1"))
        .await
        .assert(201, None);
    // The well-behaved ones are answered, here and in the other school, while the hostile
    // ones hold their connections.
    assert_eq!(receiver.wait("/ok", 1, TIMEOUT).await.len(), 1);
    assert_eq!(receiver.wait("/ok-beta", 1, TIMEOUT).await.len(), 1);
    // A later event of the school is delivered meanwhile too.
    NewClass::named("Form 1")
        .post(&app, &alpha)
        .await
        .assert(201, None);
    assert_eq!(receiver.wait("/ok", 2, TIMEOUT).await.len(), 2);
    assert!(
        attempts(&app, &alpha, &never).await.is_empty(),
        "delivered before the silent receiver's timeout ran out"
    );

    // Each hostile receiver had one connection, ended by the timeout (or, for the 10 MB
    // answer, as soon as the bounded read had its fill).
    let ended = receiver.wait("/never", 1, TIMEOUT * 3).await;
    assert_eq!(ended.len(), 1, "{ended:?}");
    let seconds = ended[0]["seconds"].as_f64().expect("seconds");
    assert!(seconds < TIMEOUT.as_secs_f64() + 2.0, "held {seconds} s");
    let ended = receiver.wait("/huge", 1, TIMEOUT * 3).await;
    assert_eq!(ended.len(), 1, "{ended:?}");
    let sent = ended[0]["sent"].as_u64().expect("sent");
    assert!(
        sent < 2 * 1024 * 1024,
        "read {sent} bytes of the 10 MB answer"
    );
    let ended = receiver.wait("/slow", 1, TIMEOUT * 3).await;
    assert_eq!(ended.len(), 1, "{ended:?}");
    assert!(ended[0]["sent"].as_u64().expect("sent") < 15);

    let committed = time(&first.body["created_at"]);
    let limit = chrono::Duration::from_std(TIMEOUT + Duration::from_secs(2)).expect("limit");
    for (hook, acknowledged) in [(&never, false), (&slow, false), (&huge, true)] {
        let made = attempts_recorded(&app, &alpha, hook, 1).await;
        assert_eq!(made.len(), 1, "one attempt each: {made:?}");
        let attempt = &made[0];
        if acknowledged {
            assert_eq!(attempt["status_code"], 200, "{attempt}");
        } else {
            assert_eq!(attempt["status_code"], Value::Null, "{attempt}");
            assert_eq!(attempt["error"], "no answer within the timeout");
        }
        assert!(time(&attempt["at"]) - committed < limit, "{attempt}");
    }
    // Only the first of the hostile attempts was made: nothing retried early.
    let ended = receiver.ended("/never").len() + receiver.ended("/slow").len();
    assert_eq!(ended, 2);
}

#[tokio::test]
async fn a_subscription_deleted_while_its_delivery_hangs_stalls_no_other() {
    let app = hostile_app().await;
    let alpha = app.as_school_user("alpha", "admin").await;
    let receiver = Hostile::start();
    let url = |path: &str| format!("http://127.0.0.1:{}/{path}", receiver.port);
    let never = subscribe(&app, &alpha, &url("never"), &["subject.created"]).await;
    subscribe(&app, &alpha, &url("ok"), &["subject.created"]).await;
    let subject = |name: &str, code: &str| json!({"name": name, "code": code});
    app.post("/api/v1/school/subjects/", &alpha, subject("One", "S1"))
        .await
        .assert(201, None);
    assert_eq!(receiver.wait("/ok", 1, TIMEOUT).await.len(), 1);
    // Deleted while its delivery waits on the silent receiver.
    let id = never["id"].as_str().expect("id");
    app.delete(&format!("{WEBHOOKS}{id}/"), &alpha)
        .await
        .assert(204, None);
    // Its answer (the timeout) comes and is recorded with nothing to record it for; the
    // other subscription's deliveries go on, well before a lease could run out.
    let ended = receiver.wait("/never", 1, TIMEOUT * 3).await;
    assert_eq!(ended.len(), 1, "{ended:?}");
    let started = Instant::now();
    app.post("/api/v1/school/subjects/", &alpha, subject("Two", "S2"))
        .await
        .assert(201, None);
    assert_eq!(receiver.wait("/ok", 2, TIMEOUT).await.len(), 2);
    assert!(started.elapsed() < TIMEOUT, "{:?}", started.elapsed());
}

/// A receiver that closes each connection after its answer without saying so (`/ok`
/// answers `HTTP/1.1 204` and hangs up): a delivery that finds its kept-alive connection
/// closed under it is sent again at once on a new one, not failed and left for the retry
/// schedule (ten minutes here).
#[tokio::test]
async fn a_receiver_that_hangs_up_after_each_answer_gets_every_event_first_time() {
    let app = hostile_app().await;
    let alpha = app.as_school_user("alpha", "admin").await;
    let receiver = Hostile::start();
    let url = format!("http://127.0.0.1:{}/ok", receiver.port);
    let hook = subscribe(&app, &alpha, &url, &["subject.created"]).await;
    const EVENTS: usize = 40;
    let writes = (0..EVENTS).map(|i| {
        let (app, alpha) = (&app, &alpha);
        async move {
            let subject = json!({"name": format!("Subject {i}"), "code": format!("H{i}")});
            app.post("/api/v1/school/subjects/", alpha, subject)
                .await
                .assert(201, None);
        }
    });
    futures_util::future::join_all(writes).await;
    let ended = receiver.wait("/ok", EVENTS, TIMEOUT * 2).await.len();
    let id = hook["id"].as_str().expect("id");
    let deadline = Instant::now() + Duration::from_secs(5);
    let made = loop {
        let reply = app
            .get(&format!("{WEBHOOKS}{id}/deliveries/?page_size=100"), &alpha)
            .await;
        let made = reply.body["results"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if made.len() >= EVENTS || Instant::now() > deadline {
            break made;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let failed: Vec<&Value> = made.iter().filter(|a| a["status_code"] != 204).collect();
    assert!(failed.is_empty(), "failed attempts: {failed:#?}");
    assert!(ended >= EVENTS, "{ended} answered");
    assert_eq!(made.len(), EVENTS, "one attempt per event");
}
