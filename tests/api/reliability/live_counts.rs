//! `live_counts`: the number of live students and attendance records, kept by triggers in
//! the writing transaction and read by unfiltered lists. Whatever writes (the API one
//! request at a time or concurrently, a class's attendance take, plain SQL in bulk, a
//! truncate, a migrate of a school that already has rows), the kept number is the number
//! of live rows, and lists answer it.

use std::time::Duration;

use diesel::{Connection, QueryableByName, RunQueryDsl, pg::PgConnection, sql_types};
use futures_util::future::join_all;
use school_service::{auth::roles, db::Db, tenancy::school_migrations::migrate_school};
use serde_json::json;

use crate::helpers::{
    As, NewClass, NewRecord, NewSession, NewStudent, TestApp, TestDb, school_at_version, spawn_app,
};

const STUDENTS: &str = "/api/v1/school/students/";
const ATTENDANCE: &str = "/api/v1/school/attendance/";

/// The last tenant migration before `live_counts`.
const BEFORE_LIVE_COUNTS: &str = "20261124000001";

#[derive(QueryableByName)]
struct Number {
    #[diesel(sql_type = sql_types::BigInt)]
    n: i64,
}

fn number(conn: &mut PgConnection, query: &str) -> i64 {
    diesel::sql_query(query)
        .get_result::<Number>(conn)
        .unwrap_or_else(|err| panic!("{query}: {err}"))
        .n
}

fn execute(conn: &mut PgConnection, statement: &str) {
    diesel::sql_query(statement)
        .execute(conn)
        .unwrap_or_else(|err| panic!("{statement}: {err}"));
}

fn on_citus(conn: &mut PgConnection) -> bool {
    number(
        conn,
        "SELECT count(*) AS n FROM pg_extension WHERE extname = 'citus'",
    ) > 0
}

/// The live rows of `schema.table`, counted, and the number kept for it (-1: none kept).
fn live_and_kept(conn: &mut PgConnection, schema: &str, table: &str) -> (i64, i64) {
    let live = number(
        conn,
        &format!("SELECT count(*) AS n FROM {schema}.{table} WHERE NOT is_deleted"),
    );
    let kept = number(
        conn,
        &format!(
            "SELECT coalesce((SELECT live FROM {schema}.live_counts \
             WHERE table_name = '{table}'), -1) AS n"
        ),
    );
    (live, kept)
}

/// The kept number is the live rows' (on Citus none is kept), and the unfiltered list
/// answers it.
async fn assert_counts(app: &TestApp, admin: &As, table: &str, path: &str, expected: i64) {
    let mut conn = PgConnection::establish(&app.db.url).expect("connect");
    let (live, kept) = live_and_kept(&mut conn, "alpha", table);
    assert_eq!(live, expected, "{table}: live rows");
    let wanted = if on_citus(&mut conn) { -1 } else { live };
    assert_eq!(kept, wanted, "{table}: the kept number");
    let reply = app.get(path, admin).await;
    reply.assert(200, None);
    assert_eq!(reply.body["count"], live, "{path}");
}

async fn create_student(app: &TestApp, admin: &As, number: String, class: &str) -> String {
    let body = json!({"admission_number": number, "first_name": "Ada", "last_name": "Lee",
                      "academic_class": class});
    app.post(STUDENTS, admin, body).await.assert(201, None).body["id"]
        .as_str()
        .expect("id")
        .to_owned()
}

#[tokio::test]
async fn the_kept_count_follows_every_write_and_lists_answer_it() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    assert_counts(&app, &admin, "students", STUDENTS, 0).await;
    NewSession::new("2026", "2026-01-01", "2026-12-31")
        .post(&app, &admin)
        .await
        .assert(201, None);
    let class = NewClass::named("Form 1")
        .post(&app, &admin)
        .await
        .assert(201, None)
        .body["id"]
        .as_str()
        .expect("id")
        .to_owned();

    // One at a time, then twelve at once (each waits for the counter row in turn).
    let mut ids = Vec::new();
    for n in 0..3 {
        ids.push(create_student(&app, &admin, format!("S-{n}"), &class).await);
    }
    let burst = join_all((3..15).map(|n| create_student(&app, &admin, format!("S-{n}"), &class)));
    ids.extend(burst.await);
    assert_counts(&app, &admin, "students", STUDENTS, 15).await;

    // Soft delete, restore, a PUT that keeps it live, a real delete, a refused duplicate.
    let at = |id: &String| format!("{STUDENTS}{id}/");
    for id in &ids[..3] {
        app.patch(&at(id), &admin, json!({"is_deleted": true}))
            .await
            .assert(200, None);
    }
    let restore = format!("{}?include_deleted=true", at(&ids[0]));
    app.patch(&restore, &admin, json!({"is_deleted": false}))
        .await
        .assert(200, None);
    app.request(
        reqwest::Method::PUT,
        &at(&ids[4]),
        &admin,
        Some(
            json!({"admission_number": "S-4", "first_name": "Ada", "last_name": "Put",
                    "academic_class": class}),
        ),
    )
    .await
    .assert(200, None);
    app.delete(&at(&ids[14]), &admin).await.assert(204, None);
    NewStudent::new("S-5", "Twin", "Lee")
        .post(&app, &admin)
        .await
        .assert(409, None);
    assert_counts(&app, &admin, "students", STUDENTS, 12).await;
    // Lists that narrow still count what they match.
    let deleted_too = app
        .get(&format!("{STUDENTS}?include_deleted=true"), &admin)
        .await;
    assert_eq!(deleted_too.body["count"], 14);
    let searched = app.get(&format!("{STUDENTS}?search=S-1"), &admin).await;
    assert_eq!(
        searched.body["count"], 4,
        "S-10..S-13: S-1 is soft-deleted, S-14 gone"
    );

    // A class's take: inserted records, then the same day again (updated, none added).
    let live: Vec<&String> = ids[3..14].iter().chain([&ids[0]]).collect();
    let take = |status: &'static str| {
        let records: Vec<_> = live
            .iter()
            .map(|id| json!({"student": id, "status": status}))
            .collect();
        json!({"date": "2026-03-02", "records": records})
    };
    let take_path = format!("/api/v1/school/classes/{class}/attendance/");
    app.post(&take_path, &admin, take("present"))
        .await
        .assert(200, None);
    app.post(&take_path, &admin, take("late"))
        .await
        .assert(200, None);
    assert_counts(&app, &admin, "attendance", ATTENDANCE, 12).await;
    let filtered = app
        .get(&format!("{ATTENDANCE}?date=2026-03-03"), &admin)
        .await;
    assert_eq!(filtered.body["count"], 0, "a filter counts its own rows");

    // Plain SQL in bulk: many rows per statement, some born soft-deleted.
    let mut conn = PgConnection::establish(&app.db.url).expect("connect");
    execute(
        &mut conn,
        "INSERT INTO alpha.students (admission_number, first_name, last_name, is_deleted) \
         SELECT 'B-' || g, 'Bulk', 'Row', g % 4 = 0 FROM generate_series(1, 200) g",
    );
    assert_counts(&app, &admin, "students", STUDENTS, 12 + 150).await;
    execute(
        &mut conn,
        "UPDATE alpha.students SET is_deleted = NOT is_deleted WHERE admission_number LIKE 'B-%'",
    );
    assert_counts(&app, &admin, "students", STUDENTS, 12 + 50).await;
    execute(
        &mut conn,
        "DELETE FROM alpha.students WHERE admission_number LIKE 'B-%' AND NOT is_deleted",
    );
    assert_counts(&app, &admin, "students", STUDENTS, 12).await;
    execute(&mut conn, "TRUNCATE alpha.attendance");
    assert_counts(&app, &admin, "attendance", ATTENDANCE, 0).await;
}

#[tokio::test]
async fn a_school_that_has_rows_counts_them_when_migrated() {
    tokio::task::spawn_blocking(|| {
        let test_db = TestDb::new();
        let db = Db::new(&test_db.url, 2, Duration::from_secs(10));
        let school = school_at_version(&db, "older_school", BEFORE_LIVE_COUNTS);
        let mut conn = PgConnection::establish(&test_db.url).expect("connect");
        execute(
            &mut conn,
            "INSERT INTO older_school.students (admission_number, first_name, last_name, is_deleted) \
             SELECT 'O-' || g, 'Old', 'Row', g % 10 = 0 FROM generate_series(1, 300) g",
        );
        db.with_tenant(&school, |conn| Ok(migrate_school(conn, roles::SEED)))
            .expect("bind")
            .expect("migrate");
        let citus = on_citus(&mut conn);
        let expected = |n: i64| if citus { (n, -1) } else { (n, n) };
        assert_eq!(
            live_and_kept(&mut conn, "older_school", "students"),
            expected(270)
        );
        assert_eq!(
            live_and_kept(&mut conn, "older_school", "attendance"),
            expected(0)
        );
        execute(
            &mut conn,
            "UPDATE older_school.students SET is_deleted = true WHERE admission_number = 'O-1'",
        );
        assert_eq!(
            live_and_kept(&mut conn, "older_school", "students"),
            expected(269)
        );
    })
    .await
    .expect("blocking");
}
