//! Liveness and readiness probes, answered on every host.

use actix_web::{HttpResponse, web};
use diesel::prelude::*;
use serde_json::json;

use crate::{api::routes::Endpoint, error::ApiResult, state::AppState};

pub fn configure(cfg: &mut web::ServiceConfig) {
    Endpoint::new("/healthz/").get(healthz).register(cfg);
    Endpoint::new("/readyz/").get(readyz).register(cfg);
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
