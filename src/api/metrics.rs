//! `GET /metrics`: the Prometheus text exposition. Served on the main domain, or only on
//! `METRICS_ADDR` when that is set (see `tenancy::host`).

use actix_web::{HttpResponse, web};

use crate::{observability::metrics, state::AppState};

pub const PATH: &str = "/metrics/";

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route(PATH, web::get().to(scrape));
}

async fn scrape(state: web::Data<AppState>) -> HttpResponse {
    let pool = state.db.state();
    let schools = state.directory.cached_counts();
    let body = metrics::render(&metrics::Sampled {
        pool_connections: pool.connections,
        pool_idle: pool.idle_connections,
        pool_max: state.config.db_pool_size,
        pool_spread: pool.spread,
        schools,
    });
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(body)
}
