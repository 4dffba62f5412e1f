//! Liveness and readiness probes, answered on every host.

use std::time::Duration;

use actix_web::{HttpResponse, web};
use diesel::prelude::*;
use serde_json::json;

use crate::{
    api::{
        openapi::{Auth, Op, schema::object},
        routes::Mount,
    },
    error::{ApiError, ApiResult},
    state::AppState,
};

/// How long readiness waits for the database before it answers 503. Behind PgBouncer a
/// query waits for a server connection while PostgreSQL is down (up to PgBouncer's
/// `query_wait_timeout`): the probe must say "not ready" then, not hang until it is back.
const READY_WITHIN: Duration = Duration::from_secs(2);

pub fn mount(m: &mut Mount) {
    use crate::api::openapi::schema::string;
    m.endpoint("/healthz/").get(
        healthz,
        Op::new("health", "Liveness (no database)", Auth::None)
            .ok(200, Some(object(vec![("status", string())]))),
    );
    let mut ready = Op::new(
        "health",
        "Readiness: the database answers within 2 s",
        Auth::None,
    )
    .ok(
        200,
        Some(object(vec![("status", string()), ("database", string())])),
    );
    ready.errors = vec![503];
    m.endpoint("/readyz/").get(readyz, ready);
}

/// The process is up; the database is not consulted.
async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

/// The database answers a query within `READY_WITHIN` (503 otherwise). A probe given up
/// on keeps its turn at the pool until the query ends, as any unit of work does.
async fn readyz(state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    let probe = state
        .db
        .run(|conn| Ok(diesel::sql_query("SELECT 1").execute(conn)?));
    tokio::time::timeout(READY_WITHIN, probe)
        .await
        .map_err(|_| ApiError::ServiceUnavailable)??;
    Ok(HttpResponse::Ok().json(json!({"status": "ok", "database": "ok"})))
}
