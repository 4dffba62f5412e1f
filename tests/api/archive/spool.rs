//! The export endpoint holds no database connection while a slow client downloads: the
//! archive is written whole before the answer starts.

use diesel::{Connection, QueryableByName, RunQueryDsl, pg::PgConnection, sql_types::BigInt};

use crate::helpers::spawn_app;

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// Connections to the test database (but this one) inside a transaction.
fn in_transaction(conn: &mut PgConnection) -> i64 {
    diesel::sql_query(
        "SELECT count(*) AS n FROM pg_stat_activity \
         WHERE datname = current_database() AND pid <> pg_backend_pid() \
           AND xact_start IS NOT NULL",
    )
    .get_result::<Count>(conn)
    .expect("activity")
    .n
}

#[tokio::test]
async fn a_download_nobody_reads_holds_no_database_connection() {
    let app = spawn_app().await;
    let root = app.as_root().await;
    let tenants = app.get("/api/v1/system/tenants/?search=alpha", &root).await;
    let id = tenants.body["results"][0]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let mut conn = PgConnection::establish(&app.db.url).expect("connect");
    // Some 40 MB of rows (in a table without a search index) that compress to about half:
    // more than the socket buffers and the response's queue hold, so an export writing at
    // the client's pace would wait.
    diesel::sql_query(
        "INSERT INTO alpha.general_settings (school_name, address, phone, email, logo) \
         SELECT 'S', 'A', 'P', 'e@x.test', (SELECT string_agg(md5(random()::text || g || i), '') \
                                            FROM generate_series(1, 312) i) \
         FROM generate_series(1, 4000) g",
    )
    .execute(&mut conn)
    .expect("rows");
    // A client of its own: the test's may hold a keep-alive connection the server closed.
    let res = reqwest::Client::new()
        .get(format!(
            "{}/api/v1/system/tenants/{id}/export/",
            app.address
        ))
        .header("Host", "localhost")
        .bearer_auth(root.token.as_deref().expect("token"))
        .send()
        .await
        .expect("the answer starts");
    assert_eq!(res.status().as_u16(), 200);
    // Nobody reads the body for a while.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    assert_eq!(
        in_transaction(&mut conn),
        0,
        "no connection is kept in the export's snapshot while the client does not read"
    );
    let bytes = res.bytes().await.expect("body");
    assert!(
        bytes.starts_with(&[0x1f, 0x8b]) && bytes.len() > 10_000_000,
        "{}",
        bytes.len()
    );
}
