//! Platform models (public schema) and their queries. School models live in
//! `src/school/`.

pub mod revoked_token;
pub mod tenant;
pub mod user;

pub use tenant::{DomainRow, NewDomain, TenantChanges, TenantRow};
pub use user::{Identifier, NewUser, User, UserChangeset, UserClient, UserView};
