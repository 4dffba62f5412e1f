//! Schema-per-tenant: which school a request is for, and connections bound to its schema.
//!
//! - `directory`: the in-memory map of domains and schema names to schools;
//! - `conn`: `TenantConn`, a pooled connection bound to one school's schema;
//! - `numbering`: a transaction's events numbered at its commit (`TenantConn`'s);
//! - `host`: the middleware that classifies each request's `Host`;
//! - `provision`: creating and dropping schools;
//! - `school_migrations`: a school's schema version (baseline for new schools, replay for
//!   existing ones, every school's applied versions);
//! - `fleet`: migrating many schools, `--jobs` at a time;
//! - `archive`: one school as a unit: export to an archive, import from one;
//! - `placement`: the node a school lives on under Citus, and moving it;
//! - `read_scope`: whose records a unit of work may read (a guardian: their children's).

pub mod archive;
pub mod conn;
pub mod directory;
pub mod fleet;
pub mod host;
mod numbering;
pub mod placement;
pub mod provision;
pub mod read_scope;
pub mod school_migrations;

use std::sync::Arc;

use serde::Serialize;
use uuid::Uuid;

pub use crate::db::schema_name::{InvalidSchemaName, SchemaName};
pub use conn::TenantConn;
pub use directory::TenantDirectory;
pub use host::HostKind;
pub(crate) use numbering::events_after;
pub use read_scope::ReadScope;

/// A school as the request path sees it (cached; see `directory`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tenant {
    pub id: Uuid,
    pub schema_name: SchemaName,
    pub name: String,
    pub is_active: bool,
}

pub type TenantRef = Arc<Tenant>;

impl TryFrom<&crate::db::models::TenantRow> for Tenant {
    type Error = InvalidSchemaName;

    /// The registry row as routing sees it; fails only on a schema name the table's CHECK
    /// should already have refused.
    fn try_from(row: &crate::db::models::TenantRow) -> Result<Self, Self::Error> {
        Ok(Self {
            id: row.id,
            schema_name: SchemaName::parse(&row.schema_name)?,
            name: row.name.clone(),
            is_active: row.is_active,
        })
    }
}
