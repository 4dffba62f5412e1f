//! The platform API on the main domain: authentication for platform administrators, and
//! the tenant, domain, user and API key registries.

pub mod api_keys;
pub mod auth;
pub mod tenant_export;
pub mod tenants;
pub mod users;

use crate::api::routes::Mount;

pub fn mount(m: &mut Mount) {
    auth::mount(m);
    tenants::mount(m);
    tenant_export::mount(m);
    users::mount(m);
    api_keys::mount(m);
}
