//! The HTTP API: routing, request parsing helpers, and the system and school endpoints.

pub mod body;
pub mod console;
pub mod fields;
pub mod health;
pub mod normalize;
pub mod openapi;
pub mod pagination;
pub mod path;
pub mod routes;
pub mod school;
pub mod system;

use actix_web::web::ServiceConfig;

pub use path::PathIds;

pub fn configure(cfg: &mut ServiceConfig) {
    health::configure(cfg);
    console::configure(cfg);
    openapi::serve::configure(cfg);
    system::configure(cfg);
    school::configure(cfg);
}
