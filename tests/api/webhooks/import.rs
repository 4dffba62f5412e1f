//! A school's undelivered events move with it: `public.webhook_pending` is no school table
//! (an archive does not carry it), so an import signals the school's pending work again,
//! and a relay delivers, under the school's new name, what was committed before the export.

use std::time::Duration;

use diesel::{Connection, QueryableByName, RunQueryDsl, pg::PgConnection, sql_types};

use crate::{
    archive::{cli_ok, export},
    helpers::{As, NewRecord, NewSubject, spawn_app_on_with, spawn_app_with},
    webhooks::subscriptions::{Receiver, acknowledged, event_of, subscribe},
};

#[derive(QueryableByName)]
struct Pending {
    #[diesel(sql_type = sql_types::Text)]
    schema_name: String,
}

fn pending(db: &str) -> Vec<String> {
    let mut conn = PgConnection::establish(db).expect("connect");
    diesel::sql_query("SELECT schema_name FROM public.webhook_pending ORDER BY 1")
        .load::<Pending>(&mut conn)
        .expect("pending")
        .into_iter()
        .map(|p| p.schema_name)
        .collect()
}

#[tokio::test]
async fn events_pending_at_export_are_delivered_after_an_import_under_a_new_name() {
    // No relay runs while the school is written, exported and moved.
    let app = spawn_app_with(|config| {
        config.events.allow_insecure = true;
        config.events.relay_in_serve = false;
    })
    .await;
    let admin = app.as_school_user("alpha", "admin").await;
    let receiver = Receiver::start(0);
    let url = format!("http://127.0.0.1:{}/hook", receiver.port);
    subscribe(&app, &admin, &url, &["subject.created"]).await;
    let subject = NewSubject::new("Music", "MU").post(&app, &admin).await;
    subject.assert(201, None);
    let db = app.db.url.clone();
    assert_eq!(pending(&db), ["alpha"], "the commit signalled the school");

    let archive = export(&db, "alpha", "");
    cli_ok(&db, "tenant delete --schema alpha --drop-schema");
    cli_ok(
        &db,
        &format!(
            "tenant import --file {} --schema gamma --domain gamma.localhost",
            archive.display()
        ),
    );
    assert!(
        pending(&db).contains(&"gamma".to_owned()),
        "the import signalled the school under its new name: {:?}",
        pending(&db)
    );

    // A server with a relay delivers the event committed before the export.
    let relaying = spawn_app_on_with(app.db.clone(), |config| {
        config.events.allow_insecure = true;
    })
    .await;
    let seen = receiver.wait_for(|d| !acknowledged(d).is_empty()).await;
    assert_eq!(acknowledged(&seen).len(), 1, "{seen:#?}");
    let event = event_of(&seen[0]);
    assert_eq!(event["type"], "subject.created");
    assert_eq!(event["data"]["id"], subject.body["id"]);
    // The same event as the feed of the restored school answers.
    let login = relaying.school_login("gamma", "admin@alpha.test").await;
    let gamma = As::school("gamma").token(login["access"].as_str().expect("access"));
    let feed = relaying
        .get("/api/v1/school/events/?type=subject.created", &gamma)
        .await;
    assert_eq!(feed.body["results"][0]["id"], event["id"]);
    // Once delivered, nothing is left to do for the school.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while pending(&db).contains(&"gamma".to_owned()) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!pending(&db).contains(&"gamma".to_owned()));
    std::fs::remove_file(archive).ok();
}
