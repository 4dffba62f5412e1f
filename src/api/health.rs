//! Liveness and readiness probes, answered on every host.

use actix_web::{HttpResponse, web};
use diesel::prelude::*;
use serde_json::json;

use crate::{
    api::{
        openapi::{Auth, Op, schema::object},
        routes::Mount,
    },
    auth::AppState,
    error::ApiResult,
};

pub fn mount(m: &mut Mount) {
    use crate::api::openapi::schema::string;
    m.endpoint("/healthz/").get(
        healthz,
        Op::new("health", "Liveness (no database)", Auth::None)
            .ok(200, Some(object(vec![("status", string())]))),
    );
    let mut ready = Op::new("health", "Readiness: the database answers", Auth::None).ok(
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

/// The database answers a query (503 otherwise).
async fn readyz(state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    state
        .db
        .run(|conn| Ok(diesel::sql_query("SELECT 1").execute(conn)?))
        .await?;
    Ok(HttpResponse::Ok().json(json!({"status": "ok", "database": "ok"})))
}
