//! The platform API on the main domain: authentication for platform administrators, and
//! the tenant, domain, user and API key registries.

pub mod api_keys;
pub mod auth;
pub mod tenants;
pub mod users;

use actix_web::web::ServiceConfig;

pub fn configure(cfg: &mut ServiceConfig) {
    auth::configure(cfg);
    tenants::configure(cfg);
    users::configure(cfg);
    api_keys::configure(cfg);
}
