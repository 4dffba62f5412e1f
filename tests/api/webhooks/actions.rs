//! What the app's Webhooks page asks of a subscription: a test event sent now (signed as
//! every delivery, verified by the Standard Webhooks reference library, recorded in
//! `/deliveries/`, no event of the feed), and "send again" of an event it was sent (queued
//! for the relay with the same `webhook-id`; refused for a test event or a disabled
//! subscription).

use std::{process::Command, time::Duration};

use serde_json::{Value, json};

use crate::{
    helpers::{NewClass, NewRecord, NewSubject, spawn_app_with},
    webhooks::subscriptions::{Receiver, WEBHOOKS, acknowledged, event_of, subscribe},
};

#[tokio::test]
async fn a_test_event_is_sent_now_and_recorded_but_is_no_event_of_the_school() {
    let app = spawn_app_with(|config| config.events.allow_insecure = true).await;
    let admin = app.as_school_user("alpha", "admin").await;
    let receiver = Receiver::start(0);
    let url = format!("http://127.0.0.1:{}/hook", receiver.port);
    let hook = subscribe(&app, &admin, &url, &["mark.created"]).await;
    let id = hook["id"].as_str().expect("id");
    let secret = hook["secret"].as_str().expect("secret");
    let sent = app
        .post_empty(&format!("{WEBHOOKS}{id}/test/"), &admin)
        .await;
    sent.assert(200, None);
    assert_eq!(sent.body["status_code"], 204, "{}", sent.body);
    assert_eq!(sent.body["attempt"], 1);
    assert_eq!(sent.body["error"], Value::Null);
    // Sent before the answer: the receiver has it already.
    let seen = receiver.deliveries();
    assert_eq!(seen.len(), 1, "{seen:#?}");
    assert_eq!(seen[0]["headers"]["webhook-id"], sent.body["event"]);
    let event = event_of(&seen[0]);
    assert_eq!(event["type"], "webhook.test");
    assert_eq!(event["id"], sent.body["event"]);
    assert_eq!(event["data"]["webhook"], id);
    let verified = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/webhooks/verify.py"
        ))
        .arg(secret)
        .arg(&receiver.log)
        .output()
        .expect("python3 runs verify.py");
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );
    let deliveries = app
        .get(&format!("{WEBHOOKS}{id}/deliveries/"), &admin)
        .await;
    assert_eq!(deliveries.body["count"], 1);
    assert_eq!(deliveries.body["results"][0]["event"], sent.body["event"]);
    let feed = app.get("/api/v1/school/events/?limit=1000", &admin).await;
    assert!(
        feed.body["results"]
            .as_array()
            .expect("results")
            .iter()
            .all(|e| e["id"] != sent.body["event"]),
        "a test event is not in the feed"
    );
    // "Send again" is for the feed's events; a test event is sent anew instead.
    let again = app
        .post_empty(
            &format!(
                "{WEBHOOKS}{id}/deliveries/{}/retry/",
                sent.body["event"].as_str().expect("event")
            ),
            &admin,
        )
        .await;
    again.assert(404, Some("not_found"));
    // A disabled subscription may still be tested; a receiver that refuses is recorded.
    app.patch(
        &format!("{WEBHOOKS}{id}/"),
        &admin,
        json!({"is_active": false, "url": format!("http://127.0.0.1:{}/gone", free_port())}),
    )
    .await
    .assert(200, None);
    let refused = app
        .post_empty(&format!("{WEBHOOKS}{id}/test/"), &admin)
        .await;
    refused.assert(200, None);
    assert_eq!(refused.body["status_code"], Value::Null);
    assert_eq!(refused.body["error"], "could not connect");
    // Who may, and what is not there.
    let teacher = app.as_school_user("alpha", "teacher").await;
    app.post_empty(&format!("{WEBHOOKS}{id}/test/"), &teacher)
        .await
        .assert(403, Some("permission_denied"));
    let beta = app.as_school_user("beta", "admin").await;
    app.post_empty(&format!("{WEBHOOKS}{id}/test/"), &beta)
        .await
        .assert(404, Some("not_found"));
    app.post_empty(&format!("{WEBHOOKS}nope/test/"), &admin)
        .await
        .assert(400, Some("invalid_id"));
}

#[tokio::test]
async fn send_again_queues_the_event_once_more_with_its_id() {
    let app = spawn_app_with(|config| {
        config.events.allow_insecure = true;
        config.events.retry_schedule = vec![Duration::from_millis(200); 2];
    })
    .await;
    let admin = app.as_school_user("alpha", "admin").await;
    let receiver = Receiver::start(0);
    let url = format!("http://127.0.0.1:{}/hook", receiver.port);
    let hook = subscribe(&app, &admin, &url, &["subject.created"]).await;
    let id = hook["id"].as_str().expect("id");
    NewSubject::new("Art", "AR")
        .post(&app, &admin)
        .await
        .assert(201, None);
    let seen = receiver.wait_for(|d| !acknowledged(d).is_empty()).await;
    assert_eq!(seen.len(), 1, "{seen:#?}");
    let event = seen[0]["headers"]["webhook-id"]
        .as_str()
        .expect("id")
        .to_owned();
    // The attempt is recorded just after its answer came back.
    for _ in 0..50 {
        let reply = app
            .get(&format!("{WEBHOOKS}{id}/deliveries/"), &admin)
            .await;
        if reply.body["count"] == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let retry = format!("{WEBHOOKS}{id}/deliveries/{event}/retry/");
    let queued = app.post_empty(&retry, &admin).await;
    queued.assert(202, None);
    assert_eq!(queued.body["event"], event.as_str());
    assert_eq!(queued.body["attempt"], 2);
    let seen = receiver.wait_for(|d| d.len() >= 2).await;
    assert_eq!(seen.len(), 2, "{seen:#?}");
    assert_eq!(seen[1]["headers"]["webhook-id"], event.as_str());
    assert_eq!(event_of(&seen[1])["data"]["name"], "Art");
    let deliveries = loop {
        let reply = app
            .get(&format!("{WEBHOOKS}{id}/deliveries/"), &admin)
            .await;
        if reply.body["count"] == 2 {
            break reply.body;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(deliveries["results"][0]["attempt"], 2);
    assert_eq!(deliveries["results"][0]["status_code"], 204);
    // An event of the school this subscription was never sent, and a disabled subscription.
    let other = NewClass::named("Form 2").post(&app, &admin).await;
    other.assert(201, None);
    let feed = app
        .get("/api/v1/school/events/?type=academic_class.created", &admin)
        .await;
    let class_event = feed.body["results"][0]["id"].as_str().expect("event");
    app.post_empty(
        &format!("{WEBHOOKS}{id}/deliveries/{class_event}/retry/"),
        &admin,
    )
    .await
    .assert(404, Some("not_found"));
    app.patch(
        &format!("{WEBHOOKS}{id}/"),
        &admin,
        json!({"is_active": false}),
    )
    .await
    .assert(200, None);
    app.post_empty(&retry, &admin)
        .await
        .assert(409, Some("conflict"));
    let teacher = app.as_school_user("alpha", "teacher").await;
    app.post_empty(&retry, &teacher)
        .await
        .assert(403, Some("permission_denied"));
}

/// A port nothing listens on (bound, then let go).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a port")
}
