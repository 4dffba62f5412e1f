//! Events numbered by the application at commit (issue 40; `src/tenancy/numbering.rs`):
//! the feed's order is commit order, whatever order the transactions wrote in; a rolled
//! back transaction (or savepoint) leaves no event; a committed transaction leaves none
//! of its events unnumbered; a write outside a transaction is refused before it writes.
//! In both pool modes: session (the outermost `transaction` numbers) and transaction (the
//! unit of work's `finish` numbers).

use std::{
    sync::{Arc, mpsc},
    thread,
    time::Duration,
};

use diesel::{prelude::*, sql_types};
use school_service::{
    db::{Db, pool::PoolMode},
    error::{ApiError, ApiResult},
    school::{
        Actor, Store,
        change_log::{self, Action},
        classes::{Classes, NewClass},
    },
    tenancy::{SchemaName, Tenant, TenantConn, TenantRef},
};

use super::feed::{feed, types};
use crate::helpers::spawn_app;

fn alpha() -> TenantRef {
    Arc::new(Tenant {
        id: uuid::Uuid::new_v4(),
        schema_name: SchemaName::parse("alpha").expect("name"),
        name: "alpha".into(),
        is_active: true,
    })
}

fn class(name: &str) -> NewClass {
    NewClass {
        name: name.into(),
        level: None,
        is_deleted: false,
    }
}

fn create(conn: &mut TenantConn, name: &str) -> ApiResult<()> {
    Classes::create(conn, (), class(name), &Actor::system()).map(|_| ())
}

#[derive(QueryableByName)]
struct Numbered {
    #[diesel(sql_type = sql_types::Nullable<sql_types::BigInt>)]
    seq: Option<i64>,
    #[diesel(sql_type = sql_types::Nullable<sql_types::Text>)]
    name: Option<String>,
    #[diesel(sql_type = sql_types::Nullable<sql_types::Integer>)]
    tx_position: Option<i32>,
}

/// Every event of the school a new transaction sees: (number, class name), in number
/// order; asserts none is unnumbered or still carries its place.
fn numbered(db: &Db) -> Vec<(i64, String)> {
    db.with_tenant(&alpha(), |conn| {
        let rows: Vec<Numbered> = diesel::sql_query(
            "SELECT seq, data->>'name' AS name, tx_position FROM events ORDER BY seq NULLS FIRST",
        )
        .load(conn.pg())?;
        Ok(rows)
    })
    .expect("events")
    .into_iter()
    .map(|row| {
        assert!(
            row.tx_position.is_none(),
            "a committed event keeps its place"
        );
        let seq = row.seq.expect("a committed event without a number");
        (seq, row.name.unwrap_or_default())
    })
    .collect()
}

/// Names of the numbered events after `from`, asserting their numbers follow each other.
fn names_after(events: &[(i64, String)], from: usize) -> Vec<&str> {
    let tail = &events[from..];
    for pair in tail.windows(2) {
        assert_eq!(pair[1].0, pair[0].0 + 1, "numbers without a gap: {tail:?}");
    }
    tail.iter().map(|(_, name)| name.as_str()).collect()
}

/// Transaction A writes first and commits last; B writes second and commits first. B's
/// event gets the lower number, and while A is still open B's is numbered and A's unseen.
fn commit_order(url: &str, mode: PoolMode, tag: &str) {
    let db = Db::with_mode(url, 3, Duration::from_secs(10), mode);
    let before = numbered(&db).len();
    let (a_wrote, b_waits) = mpsc::channel::<()>();
    let (b_committed, a_waits) = mpsc::channel::<()>();
    let (first, second) = (
        format!("{tag} written first"),
        format!("{tag} written second"),
    );
    let (db, first) = (&db, first.as_str());
    thread::scope(|scope| {
        let a = scope.spawn(move || {
            db.with_tenant(&alpha(), |conn| {
                conn.transaction(|conn| {
                    create(conn, first)?;
                    a_wrote.send(()).expect("signal");
                    a_waits.recv().expect("B committed");
                    Ok::<(), ApiError>(())
                })
            })
        });
        b_waits.recv().expect("A wrote");
        db.with_tenant(&alpha(), |conn| {
            conn.transaction(|conn| create(conn, &second))
        })
        .expect("B commits");
        // A is open: its event is invisible, B's numbered.
        let seen = numbered(db);
        assert_eq!(names_after(&seen, before), [second.as_str()]);
        b_committed.send(()).expect("signal");
        a.join().expect("A").expect("A commits");
    });
    let events = numbered(db);
    assert_eq!(names_after(&events, before), [second.as_str(), first]);
}

#[tokio::test]
async fn concurrent_transactions_are_numbered_in_commit_order() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let before = feed(&app, &admin).await.len();
    let url = app.db.url.clone();
    tokio::task::spawn_blocking(move || {
        commit_order(&url, PoolMode::Session, "session");
        commit_order(&url, PoolMode::Transaction, "transaction");
    })
    .await
    .expect("both modes");
    // The feed answers them in that order too.
    let events = feed(&app, &admin).await;
    let names: Vec<&str> = events[before..]
        .iter()
        .map(|e| e["data"]["name"].as_str().expect("name"))
        .collect();
    assert_eq!(
        names,
        [
            "session written second",
            "session written first",
            "transaction written second",
            "transaction written first"
        ]
    );
}

/// One transaction's events are numbered in the order written, one after the other; a
/// rolled back savepoint's and a rolled back transaction's leave nothing.
fn rollbacks(url: &str, mode: PoolMode, tag: &str) {
    let db = Db::with_mode(url, 1, Duration::from_secs(10), mode);
    let before = numbered(&db).len();
    let name = |n: &str| format!("{tag} {n}");
    let rolled_back: ApiResult<()> = db.with_tenant(&alpha(), |conn| {
        conn.transaction(|conn| {
            create(conn, &name("never"))?;
            Err(ApiError::Conflict("refused after the write".into()))
        })
    });
    assert!(rolled_back.is_err());
    db.with_tenant(&alpha(), |conn| {
        conn.transaction(|conn| {
            let news = ["one", "two", "three"].map(|n| class(&name(n))).into();
            Classes::create_many(conn, (), news, &Actor::system())?;
            let inner: ApiResult<()> = conn.transaction(|conn| {
                create(conn, &name("undone"))?;
                Err(ApiError::Conflict("savepoint rolled back".into()))
            });
            assert!(inner.is_err());
            create(conn, &name("four"))
        })
    })
    .expect("committed");
    let events = numbered(&db);
    let expected = ["one", "two", "three", "four"].map(name);
    assert_eq!(names_after(&events, before), expected);
}

#[tokio::test]
async fn a_transaction_numbers_all_its_events_and_a_rollback_none() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let before = feed(&app, &admin).await.len();
    let url = app.db.url.clone();
    tokio::task::spawn_blocking(move || {
        rollbacks(&url, PoolMode::Session, "session");
        rollbacks(&url, PoolMode::Transaction, "transaction");
    })
    .await
    .expect("both modes");
    let events = feed(&app, &admin).await;
    assert_eq!(types(&events[before..]), vec!["academic_class.created"; 8]);
}

#[tokio::test]
async fn a_write_outside_a_transaction_commits_in_one_of_its_own() {
    let app = spawn_app().await;
    let url = app.db.url.clone();
    tokio::task::spawn_blocking(move || {
        // Session mode, no transaction opened by the caller: the store opens one.
        let db = Db::new(&url, 1, Duration::from_secs(10));
        let before = numbered(&db).len();
        db.with_tenant(&alpha(), |conn| create(conn, "loose"))
            .expect("written");
        assert_eq!(names_after(&numbered(&db), before), ["loose"]);
        // Events written past the store with no transaction are refused.
        let bare = db.with_tenant(&alpha(), |conn| {
            change_log::emit(
                conn,
                "class",
                Action::Updated,
                uuid::Uuid::new_v4(),
                &serde_json::json!({"name": "bare"}),
            )
        });
        assert!(bare.is_err(), "an event with no transaction to number it");
        assert_eq!(numbered(&db).len(), before + 1);
    })
    .await
    .expect("own transaction");
}
