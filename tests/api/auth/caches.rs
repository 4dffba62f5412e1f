//! The user cache: a token's user is not read per request, yet a deactivation or password
//! change made by any process stops the user's tokens (within the listener's poll).

use std::time::Duration;

use serde_json::json;

use crate::helpers::{As, NewApiKey, NewRecord, TestApp, spawn_app, spawn_app_on};

#[tokio::test]
async fn a_deactivation_by_another_server_process_stops_cached_tokens() {
    let app = spawn_app().await;
    let teacher = app.as_school_user("alpha", "teacher").await;
    // Cached now.
    app.get("/api/v1/school/auth/me/", &teacher)
        .await
        .assert(200, None);
    let other = spawn_app_on(app.db.clone()).await;
    let root = other.as_root().await;
    let id = app.get("/api/v1/school/auth/me/", &teacher).await.body["user"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    other
        .patch(
            &format!("/api/v1/system/users/{id}/"),
            &root,
            json!({"is_active": false}),
        )
        .await
        .assert(200, None);
    assert!(
        app.until_status("/api/v1/school/auth/me/", &teacher, 401)
            .await,
        "the other process's deactivation reached this one"
    );
    // Reactivated, the old token stays refused (its version is older).
    other
        .patch(
            &format!("/api/v1/system/users/{id}/"),
            &root,
            json!({"is_active": true}),
        )
        .await
        .assert(200, None);
    tokio::time::sleep(Duration::from_millis(600)).await;
    app.get("/api/v1/school/auth/me/", &teacher)
        .await
        .assert(401, Some("token_not_valid"));
    app.as_school_user("alpha", "teacher").await;
}

#[tokio::test]
async fn a_change_made_in_sql_reaches_the_cache_and_system_tokens_use_it_too() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let root = app.as_root().await;
    app.get("/api/v1/system/auth/me/", &root)
        .await
        .assert(200, None);
    app.get("/api/v1/school/auth/me/", &admin)
        .await
        .assert(200, None);
    let url = app.db.url.clone();
    tokio::task::spawn_blocking(move || {
        use diesel::{Connection, RunQueryDsl};
        let mut conn = diesel::pg::PgConnection::establish(&url).expect("connect");
        diesel::sql_query(
            "UPDATE users SET token_version = token_version + 1 \
             WHERE email IN ('admin@alpha.test', 'root@platform.test')",
        )
        .execute(&mut conn)
        .expect("update");
    })
    .await
    .expect("sql");
    assert!(
        app.until_status("/api/v1/school/auth/me/", &admin, 401)
            .await,
        "school token refused"
    );
    let mut refused = false;
    for _ in 0..80 {
        if app.get("/api/v1/system/auth/me/", &root).await.status == 401 {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(refused, "system token refused");
}

/// Runs `statement` on the test database as its owner.
async fn sql(app: &TestApp, statement: &'static str) {
    let url = app.db.url.clone();
    tokio::task::spawn_blocking(move || {
        use diesel::{Connection, RunQueryDsl};
        let mut conn = diesel::pg::PgConnection::establish(&url).expect("connect");
        diesel::sql_query(statement)
            .execute(&mut conn)
            .expect(statement);
    })
    .await
    .expect("sql");
}

/// The key cache: a known API key costs no platform query (its requests go on while
/// `public.api_keys` cannot be read), yet a revocation by another process, or made in
/// plain SQL, stops it within the listener's poll.
#[tokio::test]
async fn an_api_key_is_read_once_and_a_revocation_anywhere_stops_it() {
    let app = spawn_app().await;
    let root = app.as_root().await;
    let created = NewApiKey::named("cached").create(&app, &root).await;
    let with_key = As::school("alpha").key(&created.key);
    app.get("/api/v1/school/classes/", &with_key)
        .await
        .assert(200, None);
    sql(&app, "ALTER TABLE api_keys RENAME TO api_keys_away").await;
    let unread = app.get("/api/v1/school/classes/", &with_key).await;
    sql(&app, "ALTER TABLE api_keys_away RENAME TO api_keys").await;
    unread.assert(200, None);

    let other = spawn_app_on(app.db.clone()).await;
    let other_root = other.as_root().await;
    other
        .delete(
            &format!("/api/v1/system/api-keys/{}/", created.id),
            &other_root,
        )
        .await
        .assert(204, None);
    assert!(
        app.until_status("/api/v1/school/classes/", &with_key, 401)
            .await,
        "the other process's revocation reached this one"
    );

    let second = NewApiKey::named("revoked in SQL").create(&app, &root).await;
    let with_second = As::school("alpha").key(&second.key);
    app.get("/api/v1/school/classes/", &with_second)
        .await
        .assert(200, None);
    sql(
        &app,
        "UPDATE api_keys SET revoked_at = now() WHERE name = 'revoked in SQL'",
    )
    .await;
    assert!(
        app.until_status("/api/v1/school/classes/", &with_second, 401)
            .await,
        "a revocation made in SQL reached the cache"
    );
}
