//! `GET /api/v1/schema/`: the OpenAPI document as JSON, on every address.

use std::sync::OnceLock;

use actix_web::{HttpResponse, web};

use crate::api::routes::Endpoint;

pub fn configure(cfg: &mut web::ServiceConfig) {
    Endpoint::new("/api/v1/schema/").get(schema).register(cfg);
    super::docs_page::configure(cfg);
}

/// The document as JSON, built once.
pub fn document_json() -> &'static str {
    static JSON: OnceLock<String> = OnceLock::new();
    JSON.get_or_init(|| {
        super::document()
            .to_pretty_json()
            .unwrap_or_else(|_| "{}".into())
    })
}

async fn schema() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(document_json())
}
