//! The database going away, stalling and coming back; shutdown; no lost writes.

use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::json;

use crate::{
    helpers::{As, NewRecord, NewStudent, TestApp, spawn_app_with},
    reliability::proxy::DbProxy,
};

/// An app whose database connections go through a proxy the test controls.
async fn app_behind_proxy(pool_size: u32, pool_timeout: Duration) -> (TestApp, DbProxy) {
    let server = std::env::var("TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into());
    let host_port = server.rsplit('@').next().expect("host").to_owned();
    let upstream = tokio::net::lookup_host(host_port)
        .await
        .expect("resolve")
        .next()
        .expect("address");
    let proxy = DbProxy::start_to(upstream).await;
    let port = proxy.port;
    let app = spawn_app_with(move |config| {
        let db_name = config
            .database_url
            .expose()
            .rsplit('/')
            .next()
            .expect("db")
            .to_owned();
        config.database_url = format!("postgres://postgres@127.0.0.1:{port}/{db_name}").into();
        config.db_pool_size = pool_size;
        config.db_pool_timeout = pool_timeout;
        // These tests count the pool's connections themselves: the relay's claim (every
        // few seconds) would take the only one while the proxy holds it paused.
        config.events.relay_in_serve = false;
    })
    .await;
    (app, proxy)
}

#[tokio::test]
async fn database_down_answers_503_quickly_and_recovers_without_restart() {
    let (app, proxy) = app_behind_proxy(2, Duration::from_millis(800)).await;
    let admin = app.as_school_user("alpha", "admin").await;
    app.get("/api/v1/school/classes/", &admin)
        .await
        .assert(200, None);
    proxy.stop();
    for _ in 0..3 {
        let started = Instant::now();
        let reply = app.get("/api/v1/school/classes/", &admin).await;
        reply.assert(503, Some("service_unavailable"));
        assert!(reply.headers.get("retry-after").is_some());
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "answered within the pool timeout"
        );
    }
    app.get("/readyz", &As::main())
        .await
        .assert(503, Some("service_unavailable"));
    app.get("/healthz", &As::main()).await.assert(200, None);
    proxy.restart().await;
    let mut recovered = false;
    for _ in 0..20 {
        if app.get("/api/v1/school/classes/", &admin).await.status == 200 {
            recovered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        recovered,
        "the server serves again once the database is back"
    );
}

/// A database that takes queries but does not answer them (behind PgBouncer while
/// PostgreSQL is down, queries wait in its queue): readiness says 503 after its 2 s bound,
/// however long the pool timeout, and 200 again once the database answers.
#[tokio::test]
async fn readiness_answers_503_within_its_bound_while_the_database_stalls() {
    let (app, proxy) = app_behind_proxy(2, Duration::from_secs(10)).await;
    app.get("/readyz", &As::main()).await.assert(200, None);
    proxy.pause(true);
    let started = Instant::now();
    app.get("/readyz", &As::main())
        .await
        .assert(503, Some("service_unavailable"));
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(1900) && elapsed < Duration::from_secs(4),
        "{elapsed:?}"
    );
    proxy.pause(false);
    let mut ready = false;
    for _ in 0..20 {
        if app.get("/readyz", &As::main()).await.status == 200 {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ready, "ready again once the database answers");
}

#[tokio::test]
async fn an_exhausted_pool_answers_503_after_the_timeout() {
    let (app, proxy) = app_behind_proxy(1, Duration::from_millis(500)).await;
    let admin = app.as_school_user("alpha", "admin").await;
    app.get("/api/v1/school/classes/", &admin)
        .await
        .assert(200, None);
    proxy.pause(true);
    // The stalled request holds the only connection...
    let slow = {
        let (app, admin) = (&app, &admin);
        async move { app.get("/api/v1/school/classes/", admin).await }
    };
    let waiting = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let started = Instant::now();
        let reply = app.get("/api/v1/school/subjects/", &admin).await;
        (reply, started.elapsed())
    };
    let release = async {
        tokio::time::sleep(Duration::from_millis(1200)).await;
        proxy.pause(false);
    };
    let (slow, (waited, elapsed), ()) = tokio::join!(slow, waiting, release);
    // ...so the next caller waits the pool timeout, then gets a 503, not a hang.
    waited.assert(503, Some("service_unavailable"));
    assert!(
        elapsed >= Duration::from_millis(450) && elapsed < Duration::from_secs(2),
        "{elapsed:?}"
    );
    slow.assert(200, None);
    app.get("/api/v1/school/subjects/", &admin)
        .await
        .assert(200, None);
}

#[tokio::test]
async fn concurrent_distinct_confirms_lose_no_write() {
    let (app, _proxy) = app_behind_proxy(4, Duration::from_secs(10)).await;
    let admin = app.as_school_user("alpha", "admin").await;
    let fixture = app.exam_fixture(&admin, "N").await;
    const N: usize = 60;
    let numbers: Vec<String> = (0..N).map(|i| format!("N-{i}")).collect();
    let students: Vec<_> = (numbers.iter())
        .map(|number| NewStudent::new(number, "F", "L"))
        .collect();
    join_all(students.iter().map(|student| student.post(&app, &admin))).await;
    let confirm = format!("{}confirm-students/", fixture.marks());
    let replies = join_all((0..N).map(|i| {
        app.post(
            &confirm,
            &admin,
            json!({"studentadmissionnumber": format!("N-{i}"), "mark": i}),
        )
    }))
    .await;
    assert!(replies.iter().all(|r| r.status == 200));
    let marks = app
        .get(&format!("{}?page_size=200", fixture.marks()), &admin)
        .await;
    assert_eq!(marks.body["count"], N);
}

#[tokio::test]
async fn sigterm_finishes_in_flight_requests_refuses_new_ones_and_exits_zero() {
    use std::io::{BufRead, BufReader};
    let (app, proxy) = app_behind_proxy(2, Duration::from_secs(10)).await;
    let db_name = app.db.url.rsplit('/').next().expect("db").to_owned();
    let url = format!("postgres://postgres@127.0.0.1:{}/{db_name}", proxy.port);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_school-service"))
        .arg("serve")
        .env("DATABASE_URL", &url)
        .env("JWT_SECRET", crate::helpers::JWT_SECRET)
        .env("BIND_ADDR", "127.0.0.1:0")
        .env("RUST_LOG", "info")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn server");
    let stderr = child.stderr.take().expect("stderr");
    let port = tokio::task::spawn_blocking(move || {
        let mut reader = BufReader::new(stderr);
        loop {
            let mut line = String::new();
            assert!(
                reader.read_line(&mut line).expect("read") > 0,
                "server exited early"
            );
            if let Some(rest) = line.split("(port ").nth(1) {
                // Keep draining the log so the server never blocks on a full pipe.
                std::thread::spawn(move || for _ in reader.lines() {});
                return rest
                    .trim_end()
                    .trim_end_matches(')')
                    .parse::<u16>()
                    .expect("port");
            }
        }
    })
    .await
    .expect("port");
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::new();
    client
        .get(format!("{base}/readyz"))
        .send()
        .await
        .expect("warm up")
        .error_for_status()
        .expect("ready");

    let token = app
        .as_school_user("alpha", "admin")
        .await
        .token
        .expect("token");

    proxy.pause(true);
    // Over the warm-up's keep-alive connection, which a worker already owns (actix drops
    // connections still queued for a worker at shutdown); SIGTERM goes out only once the
    // request is inside the handler, waiting on the database. A school request, which
    // waits as long as the database takes (`/readyz` gives up after 2 s).
    let in_flight = tokio::spawn({
        let (client, base) = (client.clone(), base.clone());
        async move {
            client
                .get(format!("{base}/api/v1/school/classes/"))
                .header("Host", "alpha.localhost")
                .bearer_auth(token)
                .send()
                .await
                .map(|r| r.status().as_u16())
        }
    });
    proxy.wait_for_held_traffic().await;
    let pid = child.id().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(killed.success());
    tokio::time::sleep(Duration::from_millis(500)).await;
    let fresh = reqwest::Client::new()
        .get(format!("{base}/healthz"))
        .timeout(Duration::from_secs(2))
        .send()
        .await;
    assert!(fresh.is_err(), "new connections are refused after SIGTERM");
    proxy.pause(false);
    assert_eq!(
        in_flight.await.expect("join").expect("in-flight request"),
        200,
        "the in-flight request finished"
    );
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .expect("join")
        .expect("wait");
    assert_eq!(status.code(), Some(0));
}
