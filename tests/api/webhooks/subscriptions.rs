//! Webhooks (API.md 9): subscriptions and their checks at save; deliveries signed as the
//! Standard Webhooks reference library (PyPI `standardwebhooks`, run by
//! `tests/webhooks/verify.py`) verifies them, retried with the same `webhook-id`, in order
//! per record; a destination that turned forbidden refused at delivery; one school's
//! subscriptions carry none of another's events.

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::helpers::{
    As, NewClass, NewRecord, NewSubject, NewWebhook, TestApp, spawn_app, spawn_app_with,
};

pub(crate) use crate::helpers::WEBHOOKS;

/// The Python receiver (`tests/webhooks/receiver.py`), killed on drop.
pub(crate) struct Receiver {
    child: Child,
    pub(crate) port: u16,
    pub(crate) log: std::path::PathBuf,
}

impl Receiver {
    pub(crate) fn start(fail_first: usize) -> Self {
        let log = std::env::temp_dir().join(format!("webhooks-{}.jsonl", uuid::Uuid::new_v4()));
        let mut child = Command::new("python3")
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/webhooks/receiver.py"
            ))
            .arg(&log)
            .arg(fail_first.to_string())
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

    pub(crate) fn deliveries(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("json line"))
            .collect()
    }

    /// Waits until `enough` holds of the deliveries (at most 30 s).
    pub(crate) async fn wait_for(&self, enough: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let seen = self.deliveries();
            if enough(&seen) || Instant::now() > deadline {
                return seen;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

/// Subscribes `url` to `types` as `who`, asserting 201; answers the subscription.
pub(crate) async fn subscribe(app: &TestApp, who: &As, url: &str, types: &[&str]) -> Value {
    NewWebhook {
        url,
        event_types: types,
        description: Some("test"),
    }
    .create(app, who)
    .await
}

pub(crate) fn acknowledged(deliveries: &[Value]) -> Vec<&Value> {
    deliveries.iter().filter(|d| d["answered"] == 204).collect()
}

pub(crate) fn event_of(delivery: &Value) -> Value {
    serde_json::from_str(delivery["body"].as_str().expect("body")).expect("event")
}

#[tokio::test]
async fn subscriptions_are_checked_when_saved() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    for url in [
        "http://93.184.216.34/hook",
        "https://127.0.0.1/hook",
        "https://localhost/hook",
        "https://10.1.2.3/hook",
        "https://192.168.0.10/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/hook",
        "https://user:pw@93.184.216.34/hook",
        "not a url",
    ] {
        let reply = app
            .post(WEBHOOKS, &admin, json!({"url": url, "event_types": ["*"]}))
            .await;
        reply.assert(400, Some("validation_error"));
        assert!(
            reply.body["errors"]["url"].is_array(),
            "{url}: {}",
            reply.body
        );
    }
    for types in [json!([]), json!(["mark"]), json!(["mark.made"]), json!("*")] {
        app.post(
            WEBHOOKS,
            &admin,
            json!({"url": "https://93.184.216.34/", "event_types": types}),
        )
        .await
        .assert(400, Some("validation_error"));
    }
    let created = subscribe(
        &app,
        &admin,
        "https://93.184.216.34/hook",
        &["mark.updated"],
    )
    .await;
    let secret = created["secret"].as_str().expect("secret");
    assert!(secret.starts_with("whsec_") && secret.len() > 30);
    assert_eq!(created["is_active"], true);
    assert_eq!(created["disabled_reason"], Value::Null);
    let path = format!("{WEBHOOKS}{}/", created["id"].as_str().expect("id"));
    let read = app.get(&path, &admin).await;
    read.assert(200, None);
    assert!(
        read.body.get("secret").is_none(),
        "the secret is shown once"
    );
    let changed = app
        .patch(
            &path,
            &admin,
            json!({"event_types": ["*"], "description": "all"}),
        )
        .await;
    changed.assert(200, None);
    assert_eq!(changed.body["event_types"], json!(["*"]));
    app.patch(&path, &admin, json!({"url": "https://127.0.0.1/"}))
        .await
        .assert(400, Some("validation_error"));
    let list = app.get(WEBHOOKS, &admin).await;
    assert_eq!(list.body["count"], 1);
    let teacher = app.as_school_user("alpha", "teacher").await;
    app.get(WEBHOOKS, &teacher)
        .await
        .assert(403, Some("permission_denied"));
    // Another school sees none of them.
    let beta = app.as_school_user("beta", "admin").await;
    app.get(&path, &beta).await.assert(404, Some("not_found"));
    // Subscriptions emit no events.
    let events = app.get("/api/v1/school/events/?limit=1000", &admin).await;
    assert!(
        events.body["results"]
            .as_array()
            .expect("results")
            .iter()
            .all(|e| !e["type"].as_str().unwrap_or("").starts_with("webhook"))
    );
    app.delete(&path, &admin).await.assert(204, None);
    app.get(&path, &admin).await.assert(404, Some("not_found"));
}

#[tokio::test]
async fn deliveries_are_signed_retried_with_one_id_and_in_order_per_record() {
    let app = spawn_app_with(|config| {
        config.events.allow_insecure = true;
        config.events.retry_schedule = vec![Duration::from_millis(300); 3];
    })
    .await;
    let admin = app.as_school_user("alpha", "admin").await;
    let beta = app.as_school_user("beta", "admin").await;
    // The receiver refuses the first two attempts.
    let receiver = Receiver::start(2);
    let url = format!("http://127.0.0.1:{}/alpha", receiver.port);
    let hook = subscribe(&app, &admin, &url, &["*"]).await;
    let secret = hook["secret"].as_str().expect("secret").to_owned();
    subscribe(
        &app,
        &beta,
        &format!("http://127.0.0.1:{}/beta", receiver.port),
        &["subject.created"],
    )
    .await;
    let subject = NewSubject::new("Maths", "MA").post(&app, &admin).await;
    let subject_id = subject.body["id"].as_str().expect("id").to_owned();
    for name in ["Maths 2", "Maths 3"] {
        app.patch(
            &format!("/api/v1/school/subjects/{subject_id}/"),
            &admin,
            json!({"name": name}),
        )
        .await
        .assert(200, None);
    }
    NewClass::named("Form 1")
        .post(&app, &admin)
        .await
        .assert(201, None);
    let seen = receiver.wait_for(|d| acknowledged(d).len() >= 4).await;
    let acked = acknowledged(&seen);
    assert_eq!(acked.len(), 4, "{seen:#?}");
    // Every delivery, refused ones included, verifies with the reference library.
    let verified = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/webhooks/verify.py"
        ))
        .arg(&secret)
        .arg(&receiver.log)
        .output()
        .expect("python3 runs verify.py (pip install standardwebhooks)");
    let report = String::from_utf8_lossy(&verified.stdout);
    assert!(
        verified.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&verified.stderr)
    );
    assert_eq!(report.lines().count(), seen.len());
    // Only alpha's events reached alpha's URL; beta had none of its own.
    assert!(seen.iter().all(|d| d["path"] == "/alpha"), "{seen:#?}");
    // Retries carry the event's id: each refused id was later acknowledged.
    for refused in seen.iter().filter(|d| d["answered"] == 500) {
        let id = &refused["headers"]["webhook-id"];
        assert!(acked.iter().any(|d| &d["headers"]["webhook-id"] == id));
    }
    // The subject's events arrive in commit order, each sent only after the one before
    // it was acknowledged.
    let subject_events: Vec<(String, Value)> = seen
        .iter()
        .map(|d| (d["answered"].to_string(), event_of(d)))
        .filter(|(_, e)| e["data"]["id"] == subject_id.as_str())
        .collect();
    let names: Vec<&Value> = subject_events
        .iter()
        .filter(|(answered, _)| answered == "204")
        .map(|(_, e)| &e["data"]["name"])
        .collect();
    assert_eq!(names, ["Maths", "Maths 2", "Maths 3"]);
    let mut acknowledged_so_far = 0;
    for (answered, event) in &subject_events {
        let position = ["Maths", "Maths 2", "Maths 3"]
            .iter()
            .position(|n| event["data"]["name"] == *n)
            .expect("known");
        assert!(
            position <= acknowledged_so_far,
            "sent before the earlier one was acknowledged"
        );
        if answered == "204" {
            acknowledged_so_far += 1;
        }
    }
    // The attempts, newest first: recorded soon after their answers (a busy school's
    // together, at most a fifth of a second apart).
    let path = format!("{WEBHOOKS}{}/deliveries/", hook["id"].as_str().expect("id"));
    let mut deliveries = app.get(&path, &admin).await;
    for _ in 0..50 {
        if deliveries.body["count"].as_u64() == Some(seen.len() as u64) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        deliveries = app.get(&path, &admin).await;
    }
    deliveries.assert(200, None);
    assert_eq!(deliveries.body["count"].as_u64(), Some(seen.len() as u64));
    let first = &deliveries.body["results"]
        .as_array()
        .expect("results")
        .last()
        .cloned()
        .expect("one");
    assert_eq!(first["status_code"], 500);
    assert_eq!(first["attempt"], 1);
    assert!(first["error"].is_string());
}

#[tokio::test]
async fn a_destination_that_turned_forbidden_is_refused_at_delivery() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let receiver = Receiver::start(0);
    let hook = subscribe(&app, &admin, "https://93.184.216.34/hook", &["*"]).await;
    // The name now resolves to this machine (as a DNS change would make it).
    let url = app.db.url.clone();
    let id = hook["id"].as_str().expect("id").to_owned();
    let port = receiver.port;
    tokio::task::spawn_blocking(move || {
        use diesel::{Connection, RunQueryDsl};
        let mut conn = diesel::pg::PgConnection::establish(&url).expect("connect");
        diesel::sql_query(format!(
            "UPDATE alpha.webhooks SET url = 'https://127.0.0.1:{port}/x' WHERE id = '{id}'"
        ))
        .execute(&mut conn)
        .expect("update");
    })
    .await
    .expect("changed");
    NewClass::named("Form 9")
        .post(&app, &admin)
        .await
        .assert(201, None);
    let path = format!("{WEBHOOKS}{}/deliveries/", hook["id"].as_str().expect("id"));
    let deadline = Instant::now() + Duration::from_secs(20);
    let attempts = loop {
        let reply = app.get(&path, &admin).await;
        if reply.body["count"].as_u64().unwrap_or(0) > 0 || Instant::now() > deadline {
            break reply.body;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let attempt = &attempts["results"][0];
    assert_eq!(attempt["status_code"], Value::Null, "{attempts}");
    assert!(
        attempt["error"].as_str().unwrap_or("").contains("loopback"),
        "{attempts}"
    );
    assert!(
        receiver.deliveries().is_empty(),
        "nothing reached the receiver"
    );
}
