//! A connection never serves a request with another school's search_path.

use std::{sync::Arc, time::Duration};

use futures_util::future::join_all;
use school_service::{
    db::Db,
    tenancy::{TenantDirectory, TenantRef},
};

use crate::helpers::{As, TestDb, spawn_app_with};

#[tokio::test]
async fn interleaved_requests_of_two_schools_through_one_connection_stay_apart() {
    let app = spawn_app_with(|c| c.db_pool_size = 1).await;
    let alpha = app.as_school_user("alpha", "teacher").await;
    let beta = app.as_school_user("beta", "teacher").await;
    let alpha_teacher =
        app.get("/api/v1/school/auth/me/", &alpha).await.body["teacher"]["id"].clone();
    let beta_teacher =
        app.get("/api/v1/school/auth/me/", &beta).await.body["teacher"]["id"].clone();
    assert_ne!(alpha_teacher, beta_teacher);
    let requests = (0..120).map(|i| {
        let (who, expected): (&As, &serde_json::Value) = if i % 2 == 0 {
            (&alpha, &alpha_teacher)
        } else {
            (&beta, &beta_teacher)
        };
        let app = &app;
        async move {
            let reply = app.get("/api/v1/school/auth/me/", who).await;
            reply.assert(200, None);
            assert_eq!(
                &reply.body["teacher"]["id"], expected,
                "a request saw the other school's row"
            );
        }
    });
    join_all(requests).await;
}

#[tokio::test]
async fn bound_connections_report_their_own_schema() {
    let db = tokio::task::spawn_blocking(TestDb::new).await.expect("db");
    let url = db.url.clone();
    tokio::task::spawn_blocking(move || {
        let pool = Db::new(&url, 1, Duration::from_secs(5));
        let directory = Arc::new(TenantDirectory::new(pool.clone()));
        let schools: Vec<TenantRef> = ["alpha", "beta"]
            .iter()
            .map(|s| directory.find_schema(s).expect("school"))
            .collect();
        for round in 0..10 {
            let tenant = &schools[round % 2];
            let schema: String = pool
                .with_tenant(tenant, |conn| {
                    use diesel::{RunQueryDsl, dsl::sql, sql_types::Text};
                    Ok(diesel::select(sql::<Text>("current_schemas(false)::text"))
                        .get_result(conn.pg())?)
                })
                .expect("query");
            assert_eq!(schema, format!("{{{}}}", tenant.schema_name));
        }
        // A failed transaction does not leave the connection bound elsewhere.
        let result: Result<(), _> = pool.with_tenant(&schools[0], |conn| {
            conn.transaction(|conn| {
                diesel::RunQueryDsl::execute(
                    diesel::sql_query("SET search_path TO public"),
                    conn.pg(),
                )?;
                Err(school_service::error::ApiError::Conflict(
                    "roll back".into(),
                ))
            })
        });
        assert!(result.is_err());
        let schema: String = pool
            .with_tenant(&schools[0], |conn| {
                use diesel::{RunQueryDsl, dsl::sql, sql_types::Text};
                Ok(diesel::select(sql::<Text>("current_schemas(false)::text"))
                    .get_result(conn.pg())?)
            })
            .expect("query");
        assert_eq!(schema, "{alpha}");
    })
    .await
    .expect("blocking");
}

#[tokio::test]
async fn binding_while_loading_the_user_sets_the_path_with_or_without_a_user() {
    let db = tokio::task::spawn_blocking(TestDb::new).await.expect("db");
    let pool = Db::new(&db.url, 1, Duration::from_secs(5));
    let directory = Arc::new(TenantDirectory::new(pool.clone()));
    let dir = directory.clone();
    let (alpha, beta) = tokio::task::spawn_blocking(move || {
        (
            dir.find_schema("alpha").expect("a"),
            dir.find_schema("beta").expect("b"),
        )
    })
    .await
    .expect("schools");
    let admin_id: uuid::Uuid = {
        let url = db.url.clone();
        tokio::task::spawn_blocking(move || {
            use diesel::{Connection, RunQueryDsl, dsl::sql, sql_types::Uuid as SqlUuid};
            let mut conn = diesel::pg::PgConnection::establish(&url).expect("connect");
            diesel::select(sql::<SqlUuid>(
                "(SELECT id FROM public.users WHERE email = 'admin@beta.test')",
            ))
            .get_result(&mut conn)
            .expect("id")
        })
        .await
        .expect("id")
    };
    let current = |conn: &mut school_service::tenancy::TenantConn| -> school_service::error::ApiResult<String> {
        use diesel::{RunQueryDsl, dsl::sql, sql_types::Text};
        Ok(diesel::select(sql::<Text>("current_schemas(false)::text")).get_result(conn.pg())?)
    };
    for (tenant, user, expect_user) in [
        (alpha.clone(), uuid::Uuid::new_v4(), false),
        (beta.clone(), admin_id, true),
        (alpha.clone(), admin_id, true),
        (beta.clone(), uuid::Uuid::new_v4(), false),
        (beta.clone(), admin_id, true),
    ] {
        let expected = format!("{{{}}}", tenant.schema_name);
        let (schema, found) = pool
            .run_in_tenant_as(tenant, user, move |conn, user| {
                Ok((current(conn)?, user.is_some()))
            })
            .await
            .expect("run");
        assert_eq!(schema, expected);
        assert_eq!(found, expect_user);
    }
}
