//! One school as a unit: an archive of its schema's rows together with what of it lives in
//! `public` (its tenant row, domains, users and API keys), written from one consistent
//! snapshot and restored exactly, in one transaction.
//!
//! - `format`: the archive's layout and manifest;
//! - `export`: writing an archive from a snapshot of the school;
//! - `verify`: the first pass of an import, checking every file against the manifest;
//! - `import`: what an archive may be restored as (versions, schema, domains);
//! - `restore`: the second pass, writing the school back;
//! - `signing`: the platform's MAC over the manifest, and what an import accepts;
//! - `platform_rows`: the school's staged users and API keys, checked to be the school's;
//! - `catalog` and `copy`: the school's tables from PostgreSQL's catalog, and `COPY` for
//!   tables named at run time.

mod catalog;
mod clashes;
mod copy;
pub mod export;
pub mod format;
pub mod import;
mod platform_rows;
mod restore;
pub mod signing;
pub mod verify;

pub use export::{ExportSummary, export_school, write_archive};
pub use format::Manifest;
pub use import::{ImportOptions, import_school};
pub use restore::ImportSummary;
pub use signing::{ArchiveKey, Authentication};
pub use verify::{VerifiedArchive, verify_archive};

use crate::error::ApiError;

/// Why an export or an import did not happen. Every refusal of an import is made before
/// anything is written, or rolls back whatever was.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// The archive is not what its manifest says: truncated, altered, or no archive at all.
    #[error("archive {file} is damaged or altered ({reason}); nothing was written")]
    Damaged { file: String, reason: String },
    #[error(
        "archive {file} was written at tenant migration {archive}, newer than this binary's \
         latest ({binary}); import it with a newer school-service"
    )]
    NewerVersion {
        file: String,
        archive: String,
        binary: String,
    },
    #[error("archive {file} names tenant migration {archive}, which this binary does not know")]
    UnknownVersion { file: String, archive: String },
    #[error("cannot import: it clashes with this database ({}); nothing was written", .0.join("; "))]
    Clashes(Vec<String>),
    /// The restored schema is not the one the archive's tables were read from.
    #[error("cannot import: {0}; nothing was written")]
    Mismatch(String),
    #[error("{0}")]
    Refused(String),
    /// The archive's signature does not vouch for it, and the operator did not either.
    #[error(
        "archive {file} {reason}; nothing was written (import it with --trust-unsigned only \
         if you know where it comes from and that nobody changed it on the way)"
    )]
    Unauthenticated { file: String, reason: String },
    /// The archive inflates past the import's limit.
    #[error(
        "archive {file} holds more than {limit} bytes uncompressed (--max-bytes); nothing \
         was written"
    )]
    TooLarge { file: String, limit: u64 },
    /// A row of a platform table that is not the school's own to bring (see
    /// `platform_rows`).
    #[error("cannot import: {0}; nothing was written")]
    ForeignRow(String),
    #[error("{context}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Database(#[from] ApiError),
}

impl From<diesel::result::Error> for ArchiveError {
    fn from(err: diesel::result::Error) -> Self {
        Self::Database(err.into())
    }
}

impl From<ArchiveError> for ApiError {
    fn from(err: ArchiveError) -> Self {
        match err {
            ArchiveError::Database(err) => err,
            ArchiveError::Clashes(_) => ApiError::Conflict(err.to_string()),
            other => ApiError::internal(anyhow::Error::new(other)),
        }
    }
}

/// Attaches what was being done to an I/O error.
pub(crate) fn io_context(
    context: impl Into<String>,
) -> impl FnOnce(std::io::Error) -> ArchiveError {
    let context = context.into();
    move |source| ArchiveError::Io { context, source }
}
