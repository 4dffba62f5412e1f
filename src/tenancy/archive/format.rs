//! The archive format: a tar stream (gzip-compressed unless asked otherwise) whose entries
//! come in a fixed order, the manifest last:
//!
//! ```text
//! public/users/000001.tsv ...     the school's rows of public.users
//! public/api_keys/000001.tsv ...  the API keys scoped to it (hashes, as stored)
//! school/<table>/000001.tsv ...   each table of the school's schema
//! manifest.json                   what the archive holds (see `Manifest`)
//! manifest.json.sha256            its SHA-256, as `sha256sum` writes it
//! manifest.json.hmac-sha256       its MAC under the platform's key (see `signing`), when
//!                                 the exporting platform has one
//! ```
//!
//! A table's rows are split into files of about [`CHUNK_BYTES`], at row ends; an empty
//! table has no file.
//!
//! Data files are PostgreSQL `COPY` text format: one row per line (a newline inside a value
//! is written `\n`, so a chunk ends at a row's end and a file's rows are its lines), tab
//! between columns, `\N` for NULL, and every type in its own text form, which any later
//! PostgreSQL reads back unchanged. CSV would do as well, but its quoted values may span
//! lines, and binary `COPY` depends on each type's internal layout.
//!
//! The manifest comes last because it records each data file's row count and SHA-256, known
//! only once the file is written: an import reads the archive twice, first to verify every
//! file against the manifest, then, only if all of it holds, to restore.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::db::models::{DomainRow, TenantRow};

/// What `format` says in every archive of this kind.
pub const FORMAT: &str = "school-service-archive";
/// The layout version written; an import reads this version only.
pub const FORMAT_VERSION: u32 = 1;
pub const MANIFEST_FILE: &str = "manifest.json";
pub const MANIFEST_DIGEST_FILE: &str = "manifest.json.sha256";
pub const MANIFEST_MAC_FILE: &str = "manifest.json.hmac-sha256";
/// Rows are gathered into data files of about this size (uncompressed): an export holds
/// one such chunk in memory at a time.
pub const CHUNK_BYTES: usize = 4 * 1024 * 1024;
/// The largest manifest an import reads.
pub const MAX_MANIFEST_BYTES: u64 = 16 * 1024 * 1024;
/// The most bytes an import reads out of an archive (after gunzip, tar headers included)
/// unless told otherwise (`tenant import --max-bytes`): a small file that inflates without
/// end is refused once past it, before it fills a disk.
pub const DEFAULT_MAX_IMPORT_BYTES: u64 = 16 * 1024 * 1024 * 1024;
/// The most entries an import reads (a table's data files are about `CHUNK_BYTES` each,
/// so this is some 4 TB of rows).
pub const MAX_ENTRIES: usize = 1_000_000;

/// The path of data file `index` (from 1) of a table.
pub fn data_file_path(scope: TableScope, table: &str, index: usize) -> String {
    let folder = match scope {
        TableScope::Public => "public",
        TableScope::School => "school",
    };
    format!("{folder}/{table}/{index:06}.tsv")
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`FORMAT_VERSION`] when written.
    pub format_version: u32,
    /// When the export's snapshot was taken.
    pub created_at: DateTime<Utc>,
    /// The version of the `school-service` binary that wrote it.
    pub binary_version: String,
    /// The latest tenant migration applied to the school (`20261123000001`).
    pub tenant_migration_version: String,
    pub tenant: ArchivedTenant,
    pub domains: Vec<ArchivedDomain>,
    /// `public.users` and `public.api_keys` (their rows of this school), then the school's
    /// tables.
    pub tables: Vec<ArchivedTable>,
}

/// The school's row of `public.tenants`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct ArchivedTenant {
    pub id: Uuid,
    pub schema_name: String,
    pub name: String,
    pub is_active: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// One row of `public.domains`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct ArchivedDomain {
    pub id: Uuid,
    pub domain: String,
    pub is_primary: bool,
    pub created_at: DateTime<Utc>,
}

/// Where an archived table lives.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TableScope {
    /// A platform table (`public.users`, `public.api_keys`): the school's rows only.
    Public,
    /// A table of the school's schema: every row.
    School,
}

/// One table: its columns (in the order of the data files) and its data files.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct ArchivedTable {
    pub scope: TableScope,
    pub name: String,
    pub columns: Vec<ArchivedColumn>,
    /// Rows in all its files.
    pub rows: u64,
    pub files: Vec<DataFile>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct ArchivedColumn {
    pub name: String,
    /// As PostgreSQL names it (`uuid`, `character varying(255)`, `text[]`).
    #[serde(rename = "type")]
    pub sql_type: String,
}

/// One data file of the archive.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct DataFile {
    pub path: String,
    pub rows: u64,
    pub bytes: u64,
    /// SHA-256 of the file's bytes, hex.
    pub sha256: String,
}

impl From<&TenantRow> for ArchivedTenant {
    fn from(row: &TenantRow) -> Self {
        Self {
            id: row.id,
            schema_name: row.schema_name.clone(),
            name: row.name.clone(),
            is_active: row.is_active,
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

impl From<&DomainRow> for ArchivedDomain {
    fn from(row: &DomainRow) -> Self {
        Self {
            id: row.id,
            domain: row.domain.clone(),
            is_primary: row.is_primary,
            created_at: row.created_at,
        }
    }
}

impl Manifest {
    /// Every data file, in the order the archive holds them.
    pub fn files(&self) -> impl Iterator<Item = (&ArchivedTable, &DataFile)> {
        self.tables
            .iter()
            .flat_map(|table| table.files.iter().map(move |file| (table, file)))
    }

    pub fn table(&self, scope: TableScope, name: &str) -> Option<&ArchivedTable> {
        self.tables
            .iter()
            .find(|t| t.scope == scope && t.name == name)
    }

    pub fn school_tables(&self) -> impl Iterator<Item = &ArchivedTable> {
        self.tables.iter().filter(|t| t.scope == TableScope::School)
    }
}

/// SHA-256 of `bytes`, hex.
pub fn hex_digest(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}
