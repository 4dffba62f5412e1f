use std::{sync::mpsc, time::Duration};

use super::{Db, PoolSettings};
use crate::{
    db::schema_name::SchemaName,
    error::{ApiError, ApiResult},
};

/// No database is needed: the pool connects lazily, and these units of work never
/// check a connection out.
fn db(size: u32) -> Db {
    Db::new(
        "postgres://nobody@127.0.0.1:1/none",
        size,
        Duration::from_millis(50),
    )
}

/// A unit of work (for `school`, or platform work) holding its turn until the returned
/// sender is dropped; returns once it runs.
async fn hold(
    db: &Db,
    school: Option<&SchemaName>,
) -> (mpsc::Sender<()>, tokio::task::JoinHandle<ApiResult<()>>) {
    let (release, released) = mpsc::channel::<()>();
    let (started, has_started) = tokio::sync::oneshot::channel();
    let (db, school) = (db.clone(), school.cloned());
    let task = tokio::spawn(async move {
        db.in_turn(school.as_ref(), move |_, _| {
            let _ = started.send(());
            let _ = released.recv();
            Ok(())
        })
        .await
    });
    has_started.await.expect("the turn came");
    (release, task)
}

async fn quick(db: &Db, school: Option<&SchemaName>) -> ApiResult<()> {
    db.in_turn(school, |_, _| Ok(())).await
}

#[tokio::test(flavor = "current_thread")]
async fn turns_are_as_many_as_connections_and_waiting_ends_in_503() {
    let db = db(2);
    let (first, _) = hold(&db, None).await;
    let _second = hold(&db, None).await;
    assert!(matches!(
        quick(&db, None).await,
        Err(ApiError::ServiceUnavailable)
    ));
    drop(first);
    assert!(
        quick(&db, None).await.is_ok(),
        "a returned turn is handed out again"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn turns_are_handed_out_in_arrival_order() {
    let db = db(1);
    let (held, _) = hold(&db, None).await;
    let order = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut waiters = Vec::new();
    for n in 0..5 {
        let (db, order) = (db.clone(), order.clone());
        waiters.push(tokio::spawn(async move {
            db.in_turn(None, move |_, _| {
                order.lock().expect("order").push(n);
                Ok(())
            })
            .await
            .expect("turn");
        }));
        // Each waiter queues before the next one is spawned.
        tokio::task::yield_now().await;
    }
    drop(held);
    for waiter in waiters {
        waiter.await.expect("waiter");
    }
    assert_eq!(*order.lock().expect("order"), vec![0, 1, 2, 3, 4]);
}

#[tokio::test(flavor = "current_thread")]
async fn a_unit_of_work_queued_past_the_borrowing_time_gets_the_slot_that_comes_back() {
    let db = db(1);
    let (held, _) = hold(&db, None).await;
    let waiter = {
        let db = db.clone();
        tokio::spawn(async move { db.in_turn(None, |_, _| Ok(7)).await })
    };
    // Past BORROW_AFTER, with nothing idle to borrow, before the checkout timeout.
    let past = crate::db::affinity::BORROW_AFTER + Duration::from_millis(10);
    tokio::time::sleep(past).await;
    drop(held);
    assert_eq!(waiter.await.expect("waiter").expect("answer"), 7);
}

#[tokio::test(flavor = "current_thread")]
async fn a_unit_of_work_runs_on_a_lane_not_on_the_executor() {
    let db = db(1);
    let executor = std::thread::current().id();
    let lane = db
        .in_turn(None, |_, _| Ok(std::thread::current().id()))
        .await
        .expect("turn");
    assert_ne!(lane, executor);
}

fn school(name: &str) -> SchemaName {
    SchemaName::parse(name).expect("schema name")
}

#[tokio::test(flavor = "current_thread")]
async fn a_school_beyond_its_share_waits_for_itself_not_for_others() {
    let settings = PoolSettings {
        per_school: 2,
        ..PoolSettings::new(4, std::time::Duration::from_millis(50))
    };
    let db = Db::open("postgres://nobody@127.0.0.1:1/none", &settings);
    let (busy, quiet) = (school("busy"), school("quiet"));
    let _first = hold(&db, Some(&busy)).await;
    let (second, _) = hold(&db, Some(&busy)).await;
    assert!(
        matches!(
            quick(&db, Some(&busy)).await,
            Err(ApiError::ServiceUnavailable)
        ),
        "a third unit of work of the busy school waits for its own share"
    );
    let _other = hold(&db, Some(&quiet)).await;
    let _public = hold(&db, None).await;
    drop(second);
    assert!(
        quick(&db, Some(&busy)).await.is_ok(),
        "the school's own turn came back"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn by_default_one_school_holds_all_connections_but_one_and_another_school_gets_that_one() {
    let size = 6;
    let settings = PoolSettings {
        per_school: super::default_per_school(size),
        ..PoolSettings::new(size, std::time::Duration::from_millis(50))
    };
    let db = Db::open("postgres://nobody@127.0.0.1:1/none", &settings);
    let (busy, other) = (school("busy"), school("other"));
    let mut held = Vec::new();
    for _ in 1..size {
        held.push(hold(&db, Some(&busy)).await);
    }
    assert!(
        matches!(
            quick(&db, Some(&busy)).await,
            Err(ApiError::ServiceUnavailable)
        ),
        "the busy school's sixth unit of work waits for one of its own five"
    );
    assert!(
        quick(&db, Some(&other)).await.is_ok(),
        "another school's unit of work finds the connection left"
    );
    assert_eq!(
        [1, 2, 3].map(super::default_per_school),
        [1, 1, 2],
        "a pool of one or two connections still lets a school hold one"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_school_alone_has_a_request_waiting_for_each_connection_it_holds() {
    use crate::fairness::Admission;
    let size = 6;
    let share = super::default_per_school(size);
    let settings = PoolSettings {
        per_school: share,
        ..PoolSettings::new(size, Duration::from_secs(5))
    };
    let db = Db::open("postgres://nobody@127.0.0.1:1/none", &settings);
    let admission = Admission::with_window(
        super::default_in_flight(size),
        super::alone_in_flight(share),
        Duration::from_millis(20),
        Duration::from_secs(1),
    );
    let busy = school("busy");
    let mut admitted = Vec::new();
    for _ in 0..2 * share {
        admitted.push(
            admission
                .admit(&busy)
                .await
                .expect("alone: twice its share"),
        );
    }
    assert!(
        matches!(admission.admit(&busy).await, Err(ApiError::SchoolBusy)),
        "no more than twice its share in flight"
    );

    // Its share holds connections; an admitted request past it waits for the first of
    // them to come back, and runs then.
    let mut held = Vec::new();
    for _ in 0..share {
        held.push(hold(&db, Some(&busy)).await);
    }
    let next = {
        let db = db.clone();
        let busy = busy.clone();
        tokio::spawn(async move { quick(&db, Some(&busy)).await })
    };
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(!next.is_finished(), "waits for one of the school's own");
    drop(held.pop());
    assert!(next.await.expect("task").is_ok(), "runs on the one freed");
    drop(admitted);
}

/// Two schools whose first home, of `size` connections, is the same connection.
fn sharing_a_home(size: usize) -> (SchemaName, SchemaName) {
    use crate::db::affinity::{ranking, school_key};
    let first_home = |school: &SchemaName| ranking(school_key(school), size)[0];
    let holder = school("school_0");
    let waiter = (1..100)
        .map(|n| school(&format!("school_{n}")))
        .find(|other| first_home(other) == first_home(&holder))
        .expect("a school with the same home");
    (holder, waiter)
}

#[tokio::test(flavor = "current_thread")]
async fn a_unit_of_work_borrows_any_connection_only_after_borrow_any_after() {
    let settings = PoolSettings {
        affinity: super::AffinitySettings {
            borrow_after: Duration::from_millis(1),
            borrow_any_after: Duration::from_millis(300),
            ..super::AffinitySettings::default()
        },
        ..PoolSettings::new(2, Duration::from_secs(5))
    };
    let db = Db::open("postgres://nobody@127.0.0.1:1/none", &settings);
    let (holder, waiter) = sharing_a_home(2);
    let (_held, _) = hold(&db, Some(&holder)).await;
    let queued_at = std::time::Instant::now();
    let task = {
        let db = db.clone();
        tokio::spawn(async move {
            db.in_turn(Some(&waiter), move |_, _| Ok(queued_at.elapsed()))
                .await
        })
    };
    // Ten times `borrow_after` has long passed: the other connection is idle, but it has
    // never served the waiter's school, so the waiter still waits for its busy home.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!task.is_finished(), "borrowed a cold connection too soon");
    let waited = task.await.expect("waiter").expect("answer");
    assert!(
        waited >= Duration::from_millis(300),
        "borrowed after {waited:?}"
    );
}
