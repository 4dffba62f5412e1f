//! The filters a list may be narrowed by, as typed values. They are read from the query
//! string at the HTTP edge (`api::list_filter`, which knows each resource's filters), so
//! the data layer never sees a raw parameter and never refuses one.

use chrono::NaiveDate;
use uuid::Uuid;

/// Each field narrows the list when set; `Default` narrows nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListFilter {
    pub student: Option<Uuid>,
    pub academic_class: Option<Uuid>,
    pub academic_session: Option<Uuid>,
    /// On this date (attendance).
    pub date: Option<NaiveDate>,
    /// On or after this date.
    pub date_from: Option<NaiveDate>,
    /// On or before this date.
    pub date_to: Option<NaiveDate>,
    /// An enrollment status, one of `enrollments::STATUSES`.
    pub status: Option<&'static str>,
    /// The record a history is of.
    pub record: Option<Uuid>,
    /// The name of a role the school users listed hold (trimmed).
    pub role: Option<String>,
}

impl ListFilter {
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}
