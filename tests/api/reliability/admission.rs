//! A school's requests beyond `SCHOOL_MAX_IN_FLIGHT` wait for their school's turn before
//! any work is done on them, and never in front of another school; a body still arriving
//! holds no turn; requests past `SCHOOL_RATE_PER_SECOND` are held for their token.
//!
//! As in `fairness`, "in flight" is made deterministic with a lock on the school's
//! `students` table: every list of its students waits in PostgreSQL until it is released.

use std::time::Duration;

use futures_util::future::join_all;
use tokio::task::JoinHandle;

use crate::{
    helpers::{As, TestApp, spawn_app_with},
    reliability::fairness::TableLock,
};

/// `GET path` as `who`, in a task of its own; answers the status.
fn spawn_get(app: &TestApp, path: &str, who: &As) -> JoinHandle<u16> {
    let request = app
        .client
        .get(format!("{}{path}", app.address))
        .header("Host", &who.host)
        .bearer_auth(who.token.as_deref().unwrap_or_default());
    tokio::spawn(async move { request.send().await.expect("request").status().as_u16() })
}

async fn statuses(tasks: Vec<JoinHandle<u16>>) -> Vec<u16> {
    join_all(tasks)
        .await
        .into_iter()
        .map(|status| status.expect("task"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_school_past_its_requests_in_flight_waits_and_another_school_does_not() {
    // The pool would let alpha have every connection: only the admission holds it back.
    let app = spawn_app_with(|config| {
        config.db_pool_size = 4;
        config.db_pool_per_school = 4;
        config.school_max_in_flight = Some(2);
        // Never alone: the cap holds although beta is quiet.
        config.school_alone_after = Duration::ZERO;
        config.db_pool_timeout = Duration::from_secs(20);
        config.db_statement_timeout = Some(Duration::from_secs(30));
    })
    .await;
    let alpha = app.as_school_user("alpha", "admin").await;
    let beta = app.as_school_user("beta", "admin").await;
    for who in [&alpha, &beta] {
        app.get("/api/v1/school/report-settings/", who)
            .await
            .assert(200, None);
    }

    let lock = tokio::task::block_in_place(|| TableLock::take(&app, "alpha"));
    let held: Vec<_> = (0..2)
        .map(|_| spawn_get(&app, "/api/v1/school/students/", &alpha))
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    // Alpha's third request needs no lock and the pool has two idle connections, but
    // alpha has two requests in flight: it waits for one of them.
    let third = spawn_get(&app, "/api/v1/school/report-settings/", &alpha);
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.get("/api/v1/school/report-settings/", &beta)
        .await
        .assert(200, None);
    assert!(
        held.iter().all(|task| !task.is_finished()) && !third.is_finished(),
        "beta was answered while alpha's requests waited"
    );

    tokio::task::block_in_place(|| lock.release());
    assert_eq!(statuses(held).await, vec![200, 200]);
    assert_eq!(third.await.expect("task"), 200, "alpha's turn came");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_waiting_past_the_pool_timeout_for_its_schools_turn_answers_503() {
    let app = spawn_app_with(|config| {
        config.db_pool_size = 4;
        config.db_pool_per_school = 4;
        config.school_max_in_flight = Some(1);
        config.school_alone_after = Duration::ZERO;
        config.db_pool_timeout = Duration::from_millis(500);
        config.db_statement_timeout = Some(Duration::from_secs(30));
    })
    .await;
    let alpha = app.as_school_user("alpha", "admin").await;
    let beta = app.as_school_user("beta", "admin").await;
    app.get("/api/v1/school/report-settings/", &alpha)
        .await
        .assert(200, None);

    let lock = tokio::task::block_in_place(|| TableLock::take(&app, "alpha"));
    let held = spawn_get(&app, "/api/v1/school/students/", &alpha);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let busy = app.get("/api/v1/school/report-settings/", &alpha).await;
    busy.assert(503, Some("service_unavailable"));
    assert!(busy.headers.contains_key("retry-after"));
    app.get("/api/v1/school/report-settings/", &beta)
        .await
        .assert(200, None);

    tokio::task::block_in_place(|| lock.release());
    assert_eq!(held.await.expect("task"), 200);
    app.get("/api/v1/school/report-settings/", &alpha)
        .await
        .assert(200, None);
}

/// A school alone may have twice its pool share in flight: its share at the database, and
/// as many more admitted, waiting for its own turns at the pool, so a connection it frees
/// finds the school's next request ready.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_school_alone_has_its_next_requests_admitted_and_waiting_for_its_share() {
    let app = spawn_app_with(|config| {
        config.db_pool_size = 4;
        config.db_pool_per_school = 2;
        config.school_max_in_flight = Some(1);
        config.school_alone_after = Duration::from_millis(100);
        config.db_pool_timeout = Duration::from_millis(1_500);
        config.db_statement_timeout = Some(Duration::from_secs(30));
    })
    .await;
    let alpha = app.as_school_user("alpha", "admin").await;
    app.get("/api/v1/school/report-settings/", &alpha)
        .await
        .assert(200, None);
    tokio::time::sleep(Duration::from_millis(200)).await;

    let lock = tokio::task::block_in_place(|| TableLock::take(&app, "alpha"));
    // Its share: two requests hold connections, waiting for the lock.
    let held: Vec<_> = (0..2)
        .map(|_| spawn_get(&app, "/api/v1/school/students/", &alpha))
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Two more are admitted at once and wait at the pool (with the share as the cap they
    // would wait to be admitted). A fifth, later, waits to be admitted until those two
    // give up at the pool, and then waits there too.
    let mut waiting: Vec<_> = (0..2)
        .map(|_| spawn_get(&app, "/api/v1/school/students/", &alpha))
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    waiting.push(spawn_get(&app, "/api/v1/school/students/", &alpha));
    assert_eq!(statuses(waiting).await, vec![503, 503, 503]);
    assert_eq!(
        (
            app.counter("db_pool_timeouts_total").await,
            app.counter("school_admission_timeouts_total").await
        ),
        (3.0, 0.0),
        "all three were admitted and waited for the school's share of the pool"
    );

    tokio::task::block_in_place(|| lock.release());
    assert_eq!(statuses(held).await, vec![200, 200]);
}

/// Anyone may send a school's address a body slowly, without credentials: such a request
/// takes the school's turn only once its body is in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_still_arriving_holds_no_turn_of_its_school() {
    use tokio::io::AsyncWriteExt;
    let app = spawn_app_with(|config| {
        config.school_max_in_flight = Some(1);
        config.school_alone_after = Duration::ZERO;
        config.db_pool_timeout = Duration::from_secs(20);
        config.request_body_timeout = Duration::from_secs(10);
    })
    .await;
    let alpha = app.as_school_user("alpha", "admin").await;
    let port = app.address.rsplit(':').next().expect("port").to_owned();
    let mut slow = tokio::net::TcpStream::connect(format!("127.0.0.1:{port}"))
        .await
        .expect("connect");
    slow.write_all(
        b"POST /api/v1/school/departments/ HTTP/1.1\r\nHost: alpha.localhost\r\n\
          Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{\"na",
    )
    .await
    .expect("head");
    tokio::time::sleep(Duration::from_millis(300)).await;

    // Had the upload taken alpha's only turn, this would wait for its 408.
    app.get("/api/v1/school/report-settings/", &alpha)
        .await
        .assert(200, None);
    let mut answer = [0u8; 64];
    assert!(
        matches!(slow.try_read(&mut answer), Err(err) if err.kind() == std::io::ErrorKind::WouldBlock),
        "the upload is still waiting for its body"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_past_its_schools_rate_is_held_for_its_token_and_the_next_is_refused() {
    // One request a second, a burst of two, held for at most a second: of two requests
    // sent together once the burst is spent, one waits for the next token (at most a
    // second away) and the other, two tokens away, is refused.
    let app = spawn_app_with(|config| {
        config.school_rate_per_second = Some(1);
        config.school_rate_burst = Some(2);
        config.school_rate_max_delay = Duration::from_secs(1);
    })
    .await;
    // The login takes one token, this read the other.
    let alpha = app.as_school_user("alpha", "admin").await;
    app.get("/api/v1/school/sessions/", &alpha)
        .await
        .assert(200, None);
    let pair = (0..2)
        .map(|_| spawn_get(&app, "/api/v1/school/sessions/", &alpha))
        .collect();
    let mut answered = statuses(pair).await;
    answered.sort_unstable();
    assert_eq!(answered, vec![200, 429], "one held and served, one refused");
}
