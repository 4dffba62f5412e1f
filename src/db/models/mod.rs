//! Platform models (public schema). School models live with their resources under
//! `api::school`, since each is used by that resource only.

pub mod revoked_token;
pub mod tenant;
pub mod user;

pub use tenant::{DomainRow, TenantRow};
pub use user::{Identifier, NewUser, User, UserChangeset, UserClient, UserView};
