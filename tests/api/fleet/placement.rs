//! `tenant move`: on Citus a school moves between the workers while a client keeps
//! reading it (`make test-citus`); elsewhere it is refused in one line.

use std::sync::{
    Arc,
    atomic::{AtomicBool, AtomicU64, Ordering},
};

use crate::helpers::{citus_workers, cli, spawn_app};

#[tokio::test]
async fn moving_a_school_outside_citus_is_refused_in_one_line() {
    if citus_workers().is_some() {
        eprintln!("on Citus the move is made: see a_school_moves_between_workers_while_it_is_read");
        return;
    }
    let app = spawn_app().await;
    let (ok, _, err) = cli(
        &app.db.url,
        "tenant move --schema alpha --node 127.0.0.1:5432",
        &[],
    );
    assert!(!ok);
    assert_eq!(
        err.trim(),
        "error: tenant move needs Citus: this database has no citus extension"
    );
    let root = app.as_root().await;
    let list = app.get("/api/v1/system/tenants/", &root).await;
    assert!(
        list.body["results"][0].get("node").is_none(),
        "no node outside Citus"
    );
}

/// The node `schema` lives on, as `tenant list` names it.
fn node_of(db_url: &str, schema: &str) -> String {
    let (ok, list, err) = cli(db_url, "tenant list", &[]);
    assert!(ok, "{err}");
    let line = list
        .lines()
        .find(|line| line.starts_with(&format!("{schema}\t")))
        .expect("the school is listed");
    line.rsplit('\t').next().expect("node").to_owned()
}

#[tokio::test]
async fn a_school_moves_between_workers_while_it_is_read() {
    let Some(workers) = citus_workers() else {
        eprintln!("not on Citus: `make test-citus` runs this test");
        return;
    };
    let app = Arc::new(spawn_app().await);
    let db = app.db.url.clone();
    let from = node_of(&db, "alpha");
    let to = workers
        .iter()
        .find(|w| **w != from)
        .expect("another worker")
        .clone();

    let admin = app.as_school_user("alpha", "admin").await;
    let (stop, reads) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
    );
    let reader = {
        let (app, stop, reads) = (app.clone(), stop.clone(), reads.clone());
        tokio::spawn(async move {
            let mut failures = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                for path in ["/api/v1/school/classes/", "/api/v1/school/roles/"] {
                    let reply = app.get(path, &admin).await;
                    if reply.status.as_u16() != 200 {
                        failures.push(format!("{path}: {} {}", reply.status, reply.body));
                    }
                    reads.fetch_add(1, Ordering::Relaxed);
                }
            }
            failures
        })
    };
    while reads.load(Ordering::Relaxed) == 0 {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let before = reads.load(Ordering::Relaxed);
    let command = format!("tenant move --schema alpha --node {to} --transfer-mode block_writes");
    let (ok, out, err) = tokio::task::spawn_blocking(move || cli(&db, &command, &[]))
        .await
        .expect("move");
    let during = reads.load(Ordering::Relaxed) - before;
    stop.store(true, Ordering::Relaxed);
    let failures = reader.await.expect("reader");
    assert!(ok, "{err}");
    assert_eq!(
        out.trim(),
        format!("moved school alpha from {from} to {to}")
    );
    assert!(during > 0, "the school was read while it moved");
    assert!(failures.is_empty(), "failed reads: {failures:?}");

    assert_eq!(node_of(&app.db.url, "alpha"), to);
    let root = app.as_root().await;
    let list = app.get("/api/v1/system/tenants/?search=alpha", &root).await;
    assert_eq!(list.body["results"][0]["node"], to.as_str());
    // Still the same school, now served from the other worker.
    app.get(
        "/api/v1/school/classes/",
        &app.as_school_user("alpha", "admin").await,
    )
    .await
    .assert(200, None);
    let (ok, _, err) = cli(
        &app.db.url,
        &format!("tenant move --schema alpha --node {to}"),
        &[],
    );
    assert!(!ok && err.contains(&format!("already on {to}")), "{err}");
}
