//! The HTTP API: routing, request parsing helpers, and the system and school endpoints.

pub mod body;
pub mod console;
pub mod fields;
pub mod health;
pub mod openapi;
pub mod pagination;
pub mod routes;
pub mod school;
pub mod system;

use actix_web::web::ServiceConfig;
use uuid::Uuid;

use crate::error::ApiError;

pub fn configure(cfg: &mut ServiceConfig) {
    health::configure(cfg);
    console::configure(cfg);
    openapi::serve::configure(cfg);
    system::configure(cfg);
    school::configure(cfg);
}

/// Parses a path identifier; anything but a UUID is a 400 `invalid_id`.
pub fn path_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::InvalidId(raw.chars().take(64).collect()))
}
