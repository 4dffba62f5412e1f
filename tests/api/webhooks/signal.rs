//! A commit signals the relays (its school's `public.webhook_pending` row, a NOTIFY) only
//! when the school is not already due (tenant migration `webhook_signal_once`): a busy
//! school's commits write nothing to the public schema. A school waiting for a retry, or
//! let go by its relay, is signalled again, and nothing committed meanwhile is lost.

use diesel::{Connection, QueryableByName, RunQueryDsl, pg::PgConnection, sql_types};

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

#[tokio::test]
async fn a_due_school_is_signalled_once_and_again_once_let_go_or_waiting() {
    // No relay while the signals are looked at.
    let app = spawn_app_with(|config| {
        config.events.allow_insecure = true;
        config.events.relay_in_serve = false;
    })
    .await;
    let db = app.db.url.clone();
    let admin = app.as_school_user("alpha", "admin").await;
    let receiver = Receiver::start(0);
    let url = format!("http://127.0.0.1:{}/hook", receiver.port);
    subscribe(&app, &admin, &url, &["subject.created"]).await;

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
