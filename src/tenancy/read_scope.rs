//! `ReadScope`: whose records a unit of work may read. It travels with the connection
//! bound to the school (`TenantConn::read_scope`), set once when the caller is
//! authenticated, so every scoped read of the school layer (`school::Store`'s list, find
//! and parent lookups, the report-card and attendance loaders) narrows by it without a
//! handler having to remember to.

use std::sync::Arc;

use uuid::Uuid;

/// Whose records may be read.
#[derive(Debug, Clone, Default)]
pub enum ReadScope {
    /// Everything the caller's permissions reach (staff, API keys, the CLI).
    #[default]
    School,
    /// Only what is about these students (a guardian's children; possibly none).
    Students(Arc<[Uuid]>),
}

impl ReadScope {
    /// The students the reads are narrowed to; `None` when they are not narrowed.
    pub fn students(&self) -> Option<&Arc<[Uuid]>> {
        match self {
            Self::School => None,
            Self::Students(ids) => Some(ids),
        }
    }

    /// Whether a record about `student` may be read.
    pub fn shows_student(&self, student: Uuid) -> bool {
        self.students().is_none_or(|ids| ids.contains(&student))
    }
}
