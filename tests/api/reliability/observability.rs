//! Prometheus metrics, JSON log lines and trace context (docs/operations.md).

use std::net::SocketAddr;

use prometheus_parse::Scrape;
use serde_json::{Value, json};

use crate::helpers::{
    As, PASSWORD, ServerProcess, TestApp,
    metrics::{find, value},
    spawn_app, spawn_app_with,
};

/// Scrapes `/metrics` on `base` with `host`, parsing it as Prometheus text.
async fn scrape(app: &TestApp, base: &str, host: &str) -> Scrape {
    let res = app
        .client
        .get(format!("{base}/metrics"))
        .header("Host", host)
        .send()
        .await
        .expect("scrape");
    assert_eq!(res.status(), 200);
    let content_type = res
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    assert!(content_type.starts_with("text/plain"), "{content_type}");
    let text = res.text().await.expect("text");
    // Every sample line is `name{labels} value`: nothing the parser below could skip.
    for line in text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let (series, number) = line.rsplit_once(' ').expect("a value");
        assert!(
            number.parse::<f64>().is_ok() || ["+Inf", "-Inf", "NaN"].contains(&number),
            "{line}"
        );
        let name_end = series.find('{').unwrap_or(series.len());
        let name = &series[..name_end];
        assert!(
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':'),
            "{line}"
        );
        let labels = &series[name_end..];
        assert!(
            labels.is_empty()
                || (labels.ends_with('}') && !labels[1..labels.len() - 1].contains('}')),
            "{line}"
        );
    }
    Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).expect("Prometheus text format")
}

#[tokio::test]
async fn metrics_parse_and_move_with_requests() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let route = [
        ("route", "/api/v1/school/classes/"),
        ("method", "GET"),
        ("status", "2xx"),
    ];
    let before = scrape(&app, &app.address, "localhost").await;
    for _ in 0..3 {
        app.get("/api/v1/school/classes/", &admin)
            .await
            .assert(200, None);
    }
    let after = scrape(&app, &app.address, "localhost").await;
    let moved =
        find(&after, "http_requests_total", &route) - find(&before, "http_requests_total", &route);
    assert!(moved >= 3.0, "the counter moved by {moved}");
    assert!(
        find(&after, "http_request_duration_seconds_count", &route) >= 3.0,
        "the latency histogram counts the requests"
    );
    assert!(
        after
            .samples
            .iter()
            .any(|s| s.metric == "http_request_duration_seconds"),
        "histogram buckets"
    );
    for (metric, labels) in [
        ("db_pool_max_connections", vec![]),
        ("db_pool_connections", vec![]),
        ("db_pool_wait_seconds_count", vec![]),
        ("cache_lookups_total", vec![("cache", "roles")]),
        ("cache_lookups_total", vec![("cache", "tenant_directory")]),
        ("schools", vec![("state", "active")]),
    ] {
        assert!(
            after
                .samples
                .iter()
                .any(|s| s.metric == metric
                    && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v))),
            "{metric} {labels:?} is exposed"
        );
    }
    assert!(find(&after, "schools", &[("state", "active")]) >= 2.0);
    // The series kept by handle (recorded on every request) move too.
    for metric in [
        "db_pool_wait_seconds_count",
        "school_admission_wait_seconds_count",
        "db_pool_placements_total",
    ] {
        let moved = find(&after, metric, &[]) - find(&before, metric, &[]);
        assert!(moved >= 3.0, "{metric} moved by {moved}");
    }
    assert!(
        find(&after, "http_requests_in_flight", &[]) >= 1.0,
        "the scrape itself is in flight"
    );
    // Throttled logins are counted.
    let throttled = spawn_app_with(|c| c.login_rate_per_minute = 1).await;
    for _ in 0..3 {
        throttled
            .post(
                "/api/v1/school/auth/login/",
                &As::school("alpha"),
                json!({"identifier": "admin@alpha.test", "password": "wrong-password"}),
            )
            .await;
    }
    let later = scrape(&throttled, &throttled.address, "localhost").await;
    assert!(find(&later, "login_throttled_total", &[]) >= 2.0);
}

#[tokio::test]
async fn labels_stay_bounded_after_requests_to_many_record_ids() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let ids: Vec<String> = (0..50).map(|_| uuid::Uuid::new_v4().to_string()).collect();
    for id in &ids {
        app.get(&format!("/api/v1/school/classes/{id}/"), &admin)
            .await
            .assert(404, Some("not_found"));
    }
    let user = app.get("/api/v1/school/auth/me/", &admin).await.body["user"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let metrics = scrape(&app, &app.address, "localhost").await;
    let routes: Vec<String> = metrics
        .samples
        .iter()
        .filter(|s| s.metric == "http_requests_total")
        .map(|s| format!("{:?} {}", s.labels, value(s)))
        .collect();
    assert!(
        find(
            &metrics,
            "http_requests_total",
            &[("route", "/api/v1/school/classes/:id/"), ("status", "4xx")]
        ) >= 50.0,
        "{routes:#?}"
    );
    for sample in &metrics.samples {
        for (key, value) in sample.labels.iter() {
            assert!(
                value
                    .split('/')
                    .all(|segment| uuid::Uuid::parse_str(segment).is_err()),
                "an id in a label: {key}={value}"
            );
            assert!(
                !ids.contains(value) && value != &user,
                "a record or user id as a label: {key}={value}"
            );
            assert!(
                !["alpha", "beta"].contains(&value.as_str()),
                "a school as a label: {key}={value}"
            );
        }
    }
    let series = metrics
        .samples
        .iter()
        .filter(|s| s.metric == "http_requests_total")
        .count();
    // The recorder is process-wide: every test's requests count. Bounded means at most one
    // series per documented operation and status class (and a few unrouted paths), however
    // many records were asked for.
    let doc = app
        .get("/api/v1/schema/", &As::host("anything.example"))
        .await;
    let operations: usize = doc.body["paths"]
        .as_object()
        .expect("paths")
        .values()
        .map(|item| item.as_object().map_or(0, |methods| methods.len()))
        .sum();
    assert!(
        series < operations * 5 + 50,
        "{series} request series for {operations} operations"
    );
}

#[tokio::test]
async fn metrics_live_on_the_main_domain_or_on_their_own_address() {
    let app = spawn_app().await;
    for (host, status, code) in [
        ("alpha.localhost", 404, "not_found"),
        ("unknown.example", 404, "tenant_not_found"),
    ] {
        app.get("/metrics", &As::host(host))
            .await
            .assert(status, Some(code));
    }
    let free: SocketAddr = "127.0.0.1:0".parse().expect("addr");
    let separate = spawn_app_with(|c| c.metrics_addr = Some(free)).await;
    separate
        .get("/metrics", &As::main())
        .await
        .assert(404, Some("not_found"));
    let metrics_address = separate.metrics_address.clone().expect("metrics listener");
    let metrics = scrape(&separate, &metrics_address, "anything").await;
    assert!(!metrics.samples.is_empty());
    let res = separate
        .client
        .get(format!("{metrics_address}/healthz"))
        .send()
        .await
        .expect("send");
    assert_eq!(
        res.status(),
        404,
        "the metrics listener serves /metrics alone"
    );
}

#[tokio::test]
async fn json_log_lines_carry_request_ids_and_trace_context_and_no_secrets() {
    let app = spawn_app().await;
    let url = app.db.url.clone();
    let trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let (log, token) = tokio::task::spawn_blocking(move || {
        let server = ServerProcess::start(&url, &[("LOG_FORMAT", "json"), ("RUST_LOG", "debug")]);
        let client = reqwest::blocking::Client::new();
        let base = format!("http://127.0.0.1:{}", server.port);
        let login: Value = client
            .post(format!("{base}/api/v1/school/auth/login/"))
            .header("Host", "alpha.localhost")
            .header("X-Request-Id", "req-login-1")
            .json(&json!({"identifier": "admin@alpha.test", "password": PASSWORD}))
            .send()
            .expect("login")
            .json()
            .expect("json");
        let token = login["access"].as_str().expect("token").to_owned();
        let res = client
            .get(format!("{base}/api/v1/school/classes/"))
            .header("Host", "alpha.localhost")
            .header("X-Request-Id", "req-classes-1")
            .header("traceparent", trace)
            .bearer_auth(&token)
            .send()
            .expect("classes");
        assert_eq!(res.status(), 200);
        (server.stop(), token)
    })
    .await
    .expect("server");
    let lines: Vec<Value> = log
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}")))
        .collect();
    for line in &lines {
        for key in ["timestamp", "level", "target", "message"] {
            assert!(line.get(key).is_some(), "{key} in {line}");
        }
    }
    let classes = lines
        .iter()
        .find(|l| l["request_id"] == "req-classes-1")
        .expect("the request's line");
    assert_eq!(classes["status"], 200);
    assert_eq!(classes["school"], "alpha");
    assert_eq!(classes["route"], "/api/v1/school/classes/");
    assert_eq!(classes["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(classes["parent_id"], "00f067aa0ba902b7");
    assert!(classes["user"].as_str().is_some_and(|u| u.len() == 36));
    assert!(classes["latency_ms"].is_number());
    assert!(lines.iter().any(|l| l["request_id"] == "req-login-1"));
    assert!(!log.contains(PASSWORD), "a password in the log");
    assert!(!log.contains(&token), "a token in the log");
}
