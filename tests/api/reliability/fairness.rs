//! One school cannot slow the others (its own share of the pool), no request holds a
//! connection past the statement limit, and search through the trigram indexes answers
//! exactly what a scan would.
//!
//! "Held inside the database" is made deterministic with a lock: another connection takes
//! `ACCESS EXCLUSIVE` on a school's `students` table, so every list of that school's
//! students waits in PostgreSQL until the lock is released (or the statement limit ends it).

use std::time::Duration;

use diesel::{Connection, RunQueryDsl, pg::PgConnection};
use futures_util::future::join_all;
use serde_json::json;

use crate::helpers::{NewRecord, NewStudent, TestApp, spawn_app_with};

/// A transaction holding `ACCESS EXCLUSIVE` on `school.students` until it is dropped.
pub(crate) struct TableLock(PgConnection);

impl TableLock {
    pub(crate) fn take(app: &TestApp, school: &str) -> Self {
        let mut conn = PgConnection::establish(&app.db.url).expect("connect");
        diesel::sql_query("BEGIN")
            .execute(&mut conn)
            .expect("begin");
        diesel::sql_query(format!(
            "LOCK TABLE {school}.students IN ACCESS EXCLUSIVE MODE"
        ))
        .execute(&mut conn)
        .expect("lock");
        Self(conn)
    }

    pub(crate) fn release(mut self) {
        diesel::sql_query("COMMIT")
            .execute(&mut self.0)
            .expect("commit");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_school_holding_its_share_does_not_hold_back_another_school() {
    // Four connections, two per school; requests wait for a turn up to 20 s.
    let app = spawn_app_with(|config| {
        config.db_pool_size = 4;
        config.db_pool_per_school = 2;
        config.db_pool_timeout = Duration::from_secs(20);
        config.db_statement_timeout = Some(Duration::from_secs(30));
    })
    .await;
    let alpha = app.as_school_user("alpha", "admin").await;
    let beta = app.as_school_user("beta", "admin").await;
    // Warm both schools' users and roles into the caches (no lock is involved there).
    app.get("/api/v1/school/report-settings/", &alpha)
        .await
        .assert(200, None);
    app.get("/api/v1/school/report-settings/", &beta)
        .await
        .assert(200, None);

    let lock = tokio::task::block_in_place(|| TableLock::take(&app, "alpha"));
    let busy: Vec<_> = (0..6)
        .map(|_| {
            let (app_client, address, who) =
                (app.client.clone(), app.address.clone(), alpha.clone());
            tokio::spawn(async move {
                app_client
                    .get(format!("{address}/api/v1/school/students/"))
                    .header("Host", &who.host)
                    .bearer_auth(who.token.as_deref().unwrap_or_default())
                    .send()
                    .await
                    .expect("request")
                    .status()
                    .as_u16()
            })
        })
        .collect();
    // Let alpha's six requests reach the server: two hold connections inside the lock,
    // four wait for alpha's own turns.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(busy.iter().all(|task| !task.is_finished()));

    // Without a per-school share, alpha's requests would hold all four connections and
    // this would wait for a turn past the lock (then 503 or a late answer).
    let answered = app.get("/api/v1/school/report-settings/", &beta).await;
    answered.assert(200, None);
    app.get("/api/v1/school/students/", &beta)
        .await
        .assert(200, None);
    assert!(
        busy.iter().all(|task| !task.is_finished()),
        "beta was answered while alpha's requests were still held"
    );

    tokio::task::block_in_place(|| lock.release());
    let statuses: Vec<u16> = join_all(busy)
        .await
        .into_iter()
        .map(|s| s.expect("task"))
        .collect();
    assert_eq!(
        statuses,
        vec![200; 6],
        "alpha's requests finish once released"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_past_the_statement_limit_answers_503_and_frees_its_connection() {
    let app = spawn_app_with(|config| {
        config.db_pool_size = 1;
        config.db_pool_per_school = 1;
        config.db_statement_timeout = Some(Duration::from_millis(300));
    })
    .await;
    let alpha = app.as_school_user("alpha", "admin").await;
    app.get("/api/v1/school/students/", &alpha)
        .await
        .assert(200, None);

    let lock = tokio::task::block_in_place(|| TableLock::take(&app, "alpha"));
    let slow = app.get("/api/v1/school/students/", &alpha).await;
    slow.assert(503, Some("database_timeout"));
    assert!(slow.headers.get("retry-after").is_some());
    assert!(
        slow.body["detail"]
            .as_str()
            .is_some_and(|d| !d.contains("statement_timeout") && !d.contains("SELECT")),
        "the detail is a sentence, not the database's words: {}",
        slow.body
    );
    // The one connection was freed: the same school's next request (another table) works
    // while the lock is still held.
    app.get("/api/v1/school/report-settings/", &alpha)
        .await
        .assert(200, None);
    tokio::task::block_in_place(|| lock.release());
    app.get("/api/v1/school/students/", &alpha)
        .await
        .assert(200, None);

    let counted = app.counter("db_statement_timeouts_total").await;
    assert!(counted >= 1.0, "the timeout is counted in /metrics");
}

/// Names with non-ASCII letters and LIKE's own wildcards, searched through the API.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_answers_case_insensitive_substrings_with_wildcards_taken_literally() {
    let app = spawn_app_with(|_| {}).await;
    let admin = app.as_school_user("alpha", "admin").await;
    let students = [
        ("A-1", "Łukasz", "Żółkiewski"),
        ("A-2", "ÉMILE", "Dupont"),
        ("A-3", "Straße", "Öztürk"),
        ("A-4", "Ayşe", "Yılmaz"),
        ("50%_off", "Percent", "Under_score"),
        ("A-6", "Plain", "Person"),
    ];
    for (admission, first, last) in students {
        NewStudent::new(admission, first, last)
            .post(&app, &admin)
            .await
            .assert(201, None);
    }
    // What a case-insensitive substring match over the three fields answers.
    let expected = |needle: &str| -> Vec<String> {
        let needle = needle.to_lowercase();
        let mut found: Vec<String> = students
            .iter()
            .filter(|(a, f, l)| {
                [a, f, l]
                    .iter()
                    .any(|field| field.to_lowercase().contains(&needle))
            })
            .map(|(a, _, _)| (*a).to_owned())
            .collect();
        found.sort();
        found
    };
    for needle in [
        "łuk", "ŁUK", "émi", "ÉMILE", "straße", "ÖZT", "ayşe", "yıl", "%", "_", "50%_", "r_s",
        "son", "zzqx", "a-",
    ] {
        let path = format!(
            "/api/v1/school/students/?page_size=200&search={}",
            urlencode(needle)
        );
        let reply = app.get(&path, &admin).await;
        reply.assert(200, None);
        let mut got: Vec<String> = reply.body["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|s| s["admission_number"].as_str().expect("number").to_owned())
            .collect();
        got.sort();
        assert_eq!(got, expected(needle), "search for {needle:?}");
        assert_eq!(reply.body["count"], json!(got.len()));
    }

    // The same search read through the index and through a scan agrees, and the index is
    // one the planner can use for it.
    tokio::task::block_in_place(|| {
        let mut conn = PgConnection::establish(&app.db.url).expect("connect");
        let matching = |conn: &mut PgConnection, settings: &[&str]| -> Vec<String> {
            #[derive(diesel::QueryableByName)]
            struct Row {
                #[diesel(sql_type = diesel::sql_types::Text)]
                admission_number: String,
            }
            conn.transaction(|conn| {
                for setting in settings {
                    diesel::sql_query(*setting).execute(conn)?;
                }
                diesel::sql_query(
                    "SELECT admission_number FROM alpha.students \
                     WHERE admission_number ILIKE '%łuk%' OR first_name ILIKE '%łuk%' \
                        OR last_name ILIKE '%łuk%' ORDER BY 1",
                )
                .load::<Row>(conn)
            })
            .expect("query")
            .into_iter()
            .map(|r| r.admission_number)
            .collect()
        };
        let by_index = matching(&mut conn, &["SET LOCAL enable_seqscan = off"]);
        let by_scan = matching(
            &mut conn,
            &[
                "SET LOCAL enable_bitmapscan = off",
                "SET LOCAL enable_indexscan = off",
            ],
        );
        assert_eq!(by_index, by_scan);
        assert_eq!(by_index, vec!["A-1".to_owned()]);

        #[derive(diesel::QueryableByName)]
        struct Plan {
            #[diesel(sql_type = diesel::sql_types::Text, column_name = "QUERY PLAN")]
            line: String,
        }
        let plan: Vec<Plan> = conn
            .transaction(|conn| {
                diesel::sql_query("SET LOCAL enable_seqscan = off").execute(conn)?;
                diesel::sql_query(
                    "EXPLAIN SELECT id FROM alpha.students WHERE first_name ILIKE '%zzqx%'",
                )
                .load(conn)
            })
            .expect("explain");
        assert!(
            plan.iter().any(|p| p.line.contains("students_search")),
            "the trigram index serves the search"
        );
    });
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_school_past_its_request_rate_is_throttled_and_no_other_school_is() {
    let app = spawn_app_with(|config| {
        config.school_rate_per_second = Some(1);
        config.school_rate_burst = Some(3);
        // Refused at once, not held for the next token.
        config.school_rate_max_delay = Duration::ZERO;
    })
    .await;
    // Logins count too: one each.
    let alpha = app.as_school_user("alpha", "admin").await;
    let beta = app.as_school_user("beta", "admin").await;
    app.get("/api/v1/school/sessions/", &alpha)
        .await
        .assert(200, None);
    app.get("/api/v1/school/sessions/", &alpha)
        .await
        .assert(200, None);
    let throttled = app.get("/api/v1/school/sessions/", &alpha).await;
    throttled.assert(429, Some("throttled"));
    let retry: u64 = throttled.headers["retry-after"]
        .to_str()
        .expect("ascii")
        .parse()
        .expect("seconds");
    assert!((1..=2).contains(&retry), "Retry-After {retry}");
    app.get("/api/v1/school/sessions/", &beta)
        .await
        .assert(200, None);
}

/// A client sending its body a byte at a time holds its connection for at most
/// `REQUEST_BODY_TIMEOUT_MS`, then hears a 408 problem; other requests go on meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_trickles_in_is_cut_off_with_a_408() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let app = spawn_app_with(|config| {
        config.request_body_timeout = Duration::from_millis(400);
    })
    .await;
    let port = app.address.rsplit(':').next().expect("port").to_owned();
    let mut slow = tokio::net::TcpStream::connect(format!("127.0.0.1:{port}"))
        .await
        .expect("connect");
    slow.write_all(
        b"POST /api/v1/system/auth/login/ HTTP/1.1\r\nHost: localhost\r\n\
          Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{\"ident",
    )
    .await
    .expect("head");
    // Meanwhile the server answers others.
    app.get("/healthz", &crate::helpers::As::main())
        .await
        .assert(200, None);
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), slow.read_to_end(&mut answer))
        .await
        .expect("the server answers and closes within the limit")
        .expect("read");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("application/problem+json"), "{answer}");
    assert!(answer.contains("\"code\":\"request_timeout\""), "{answer}");
}

/// Issue 35.3: requests that fail authentication (a made-up API key, no credentials, a
/// failed login) or carry another school's valid token are answered before the school's
/// rate is touched: they spend their client address's budget (429 once it is gone), and
/// the school's own admin still gets through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_authentication_spends_the_address_budget_never_the_schools() {
    let app = spawn_app_with(|config| {
        config.school_rate_per_second = Some(1);
        config.school_rate_burst = Some(3);
        config.school_rate_max_delay = Duration::ZERO;
    })
    .await;
    // One of alpha's three: its admin's login.
    let alpha = app.as_school_user("alpha", "admin").await;
    let beta_token = app.school_token("beta", "admin").await;
    let at_alpha = crate::helpers::As::school("alpha");
    let mut refused = Vec::new();
    for _ in 0..3 {
        let made_up = at_alpha.clone().key("made-up-key-made-up-key-made-up-key");
        refused.push(app.get("/api/v1/school/sessions/", &made_up).await);
        let other_school = at_alpha.clone().token(&beta_token);
        refused.push(app.get("/api/v1/school/sessions/", &other_school).await);
    }
    refused.push(app.get("/api/v1/school/sessions/", &at_alpha).await);
    let wrong_password = json!({"identifier": "admin@alpha.test", "password": "wrong-password"});
    refused.push(
        app.post("/api/v1/school/auth/login/", &at_alpha, wrong_password)
            .await,
    );
    for reply in &refused {
        assert!(
            [401, 403, 429].contains(&reply.status.as_u16()),
            "{} {}",
            reply.status,
            reply.body
        );
    }
    assert!(
        refused.iter().any(|reply| reply.status == 429),
        "the address's own budget runs out"
    );
    // Two of alpha's three are left: its admin is not throttled by the others' failures.
    for _ in 0..2 {
        app.get("/api/v1/school/sessions/", &alpha)
            .await
            .assert(200, None);
    }
}
