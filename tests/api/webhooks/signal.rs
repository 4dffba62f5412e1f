//! A commit signals the relays (its school's `public.webhook_pending` row, a NOTIFY) only
//! when the school is not already due (tenant migration `webhook_signal_once`): a busy
//! school's commits write nothing to the public schema. A school waiting for a retry, or
//! let go by its relay, is signalled again, and nothing committed meanwhile is lost.

use diesel::{Connection, QueryableByName, RunQueryDsl, pg::PgConnection, sql_types};
use serde_json::Value;

use crate::{
    helpers::{As, NewRecord, NewSubject, TestApp, spawn_app_on_with, spawn_app_with},
    webhooks::subscriptions::{Receiver, acknowledged, event_of, subscribe},
};

#[derive(QueryableByName, Debug, PartialEq)]
struct Row {
    /// The row's version: an upsert, even one changing nothing, makes a new one.
    #[diesel(sql_type = sql_types::Text)]
    version: String,
    #[diesel(sql_type = sql_types::Bool)]
    due: bool,
}

fn pending_row(db: &str) -> Option<Row> {
    let mut conn = PgConnection::establish(db).expect("connect");
    diesel::sql_query(
        "SELECT xmin::text AS version, due_at <= now() AS due \
           FROM public.webhook_pending WHERE schema_name = 'alpha'",
    )
    .load::<Row>(&mut conn)
    .expect("pending")
    .pop()
}

fn sql(db: &str, statement: &str) {
    let mut conn = PgConnection::establish(db).expect("connect");
    diesel::sql_query(statement)
        .execute(&mut conn)
        .expect(statement);
}

async fn write(app: &TestApp, admin: &As, code: &str) {
    NewSubject::new(&format!("Subject {code}"), code)
        .post(app, admin)
        .await
        .assert(201, None);
}

/// A server (with its relay or without), alpha's admin, a receiver, and alpha subscribed
/// to `subject.created` there.
struct Subscribed {
    app: TestApp,
    db: String,
    admin: As,
    receiver: Receiver,
    hook: Value,
}

async fn subscribed(relay: bool) -> Subscribed {
    let app = spawn_app_with(move |config| {
        config.events.allow_insecure = true;
        config.events.relay_in_serve = relay;
    })
    .await;
    let db = app.db.url.clone();
    let admin = app.as_school_user("alpha", "admin").await;
    let receiver = Receiver::start(0);
    let url = format!("http://127.0.0.1:{}/hook", receiver.port);
    let hook = subscribe(&app, &admin, &url, &["subject.created"]).await;
    Subscribed {
        app,
        db,
        admin,
        receiver,
        hook,
    }
}

#[tokio::test]
async fn a_due_school_is_signalled_once_and_again_once_let_go_or_waiting() {
    // No relay while the signals are looked at.
    let Subscribed {
        app,
        db,
        admin,
        receiver,
        ..
    } = subscribed(false).await;

    write(&app, &admin, "S1").await;
    let first = pending_row(&db).expect("the first commit signalled the school");
    assert!(first.due);
    write(&app, &admin, "S2").await;
    assert_eq!(
        pending_row(&db),
        Some(first),
        "a commit of a school already due leaves its row alone"
    );

    // Waiting for a retry: a commit makes it due now.
    sql(
        &db,
        "UPDATE public.webhook_pending SET due_at = now() + interval '1 hour'",
    );
    write(&app, &admin, "S3").await;
    assert!(pending_row(&db).expect("still there").due, "due again");

    // Let go (no row): the next commit signals again.
    sql(&db, "DELETE FROM public.webhook_pending");
    write(&app, &admin, "S4").await;
    assert!(pending_row(&db).expect("signalled again").due);

    // A relay delivers every event, the ones committed while the school was due included.
    let _relaying = spawn_app_on_with(app.db.clone(), |config| {
        config.events.allow_insecure = true;
    })
    .await;
    let seen = receiver.wait_for(|d| acknowledged(d).len() >= 4).await;
    let mut codes: Vec<String> = acknowledged(&seen)
        .into_iter()
        .map(|d| {
            event_of(d)["data"]["code"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .collect();
    codes.sort();
    codes.dedup();
    assert_eq!(codes, ["S1", "S2", "S3", "S4"], "{seen:#?}");
    // Once the relay is done and let go, the row is gone.
    for _ in 0..100 {
        if pending_row(&db).is_none() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!(
        "the relay never let go of the school: {:?}",
        pending_row(&db)
    );
}

/// A commit made while a relay's visit is ending (after its last look, before it lets go)
/// signals nothing, since the row is still due: letting go says the school is due again,
/// so the relay wakes a worker for it (`Relay::serve_school`) instead of leaving its
/// events to the idle look, seconds later. With nothing left to send, the row goes.
#[tokio::test]
async fn letting_go_says_whether_events_came_after_the_last_look() {
    use school_service::{db::Db, school::webhook_queue, tenancy::directory::TenantDirectory};
    use std::time::Duration;

    let Subscribed { app, db, admin, .. } = subscribed(false).await;
    write(&app, &admin, "S1").await;
    // A relay's visit: it leased the school and has looked at everything committed.
    let relay = uuid::Uuid::new_v4();
    lease_after_a_look(&db, relay);
    // A commit after its last look: the school is due, so nobody is signalled.
    let before = pending_row(&db).expect("leased");
    write(&app, &admin, "S2").await;
    assert_eq!(pending_row(&db), Some(before), "no signal while due");

    let pool = Db::new(&db, 1, Duration::from_secs(5));
    let settle = |relay| {
        let pool = pool.clone();
        async move {
            let tenant = {
                let pool = pool.clone();
                tokio::task::spawn_blocking(move || {
                    TenantDirectory::new(pool)
                        .find_schema("alpha")
                        .expect("alpha")
                })
                .await
                .expect("directory")
            };
            pool.run_in_tenant(tenant, move |conn| {
                webhook_queue::settle(conn, relay, 30, false)
            })
            .await
            .expect("settle")
        }
    };
    assert!(
        settle(relay).await,
        "due again: S2 came after the last look"
    );
    let row = pending_row(&db).expect("kept, unleased");
    assert!(row.due);

    // Nothing left to send: letting go removes the row and says so.
    lease_after_a_look(&db, relay);
    assert!(!settle(relay).await, "nothing came after the last look");
    assert_eq!(pending_row(&db), None);
}

/// The state of a relay's visit that leased the school and has looked at every event.
fn lease_after_a_look(db: &str, relay: uuid::Uuid) {
    sql(
        db,
        &format!(
            "UPDATE public.webhook_pending SET leased_by = '{relay}', \
                    leased_until = now() + interval '1 minute'"
        ),
    );
    sql(
        db,
        "UPDATE alpha.webhooks SET queued_through = (SELECT max(seq) FROM alpha.events)",
    );
}

/// A visit that fails (here: its answers cannot be recorded) lets go of the school at
/// once, due again: a worker takes it back a second later and sends what was not recorded
/// again with its `webhook-id`, where a lease left to run out would hold the school's
/// deliveries back for the delivery timeout and 15 s.
#[tokio::test]
async fn a_failed_visit_lets_go_of_the_school_at_once() {
    let Subscribed {
        app,
        db,
        admin,
        receiver,
        hook,
    } = subscribed(true).await;
    sql(
        &db,
        "ALTER TABLE alpha.webhook_deliveries RENAME TO webhook_deliveries_away",
    );
    let written = std::time::Instant::now();
    write(&app, &admin, "S1").await;
    // Sent, not recorded, let go, taken back and sent again, well within the lease (25 s).
    let seen = receiver.wait_for(|d| acknowledged(d).len() >= 2).await;
    let sent = acknowledged(&seen);
    assert!(
        sent.len() >= 2,
        "sent again after the failed visit: {seen:#?}"
    );
    assert!(
        written.elapsed() < std::time::Duration::from_secs(10),
        "{:?}",
        written.elapsed()
    );
    let ids: std::collections::HashSet<&Value> =
        sent.iter().map(|d| &d["headers"]["webhook-id"]).collect();
    assert_eq!(ids.len(), 1, "one event, one webhook-id: {ids:?}");

    sql(
        &db,
        "ALTER TABLE alpha.webhook_deliveries_away RENAME TO webhook_deliveries",
    );
    let id = hook["id"].as_str().expect("id");
    for _ in 0..100 {
        let reply = app
            .get(&format!("/api/v1/school/webhooks/{id}/deliveries/"), &admin)
            .await;
        if reply.body["count"].as_u64().unwrap_or(0) >= 1 {
            assert_eq!(reply.body["results"][0]["status_code"], 204);
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("the attempt was never recorded once the table was back");
}
