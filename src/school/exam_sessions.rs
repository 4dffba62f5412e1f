//! Exam sessions of an academic session.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    schema::exam_sessions as t,
    sessions::AcademicSession,
    table::{Incomplete, given, school_table},
};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct ExamSession {
    pub id: Uuid,
    #[serde(rename = "academic_session")]
    pub academic_session_id: Uuid,
    pub name: String,
    pub term: String,
    pub start_date: Option<DateTime<Utc>>,
    pub end_date: Option<DateTime<Utc>>,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Insertable, AsChangeset, Debug)]
#[diesel(table_name = t, treat_none_as_null = true)]
pub struct NewExamSession {
    pub name: String,
    pub term: String,
    pub start_date: Option<DateTime<Utc>>,
    pub end_date: Option<DateTime<Utc>>,
    pub is_deleted: bool,
}

#[derive(AsChangeset, Default, Debug)]
#[diesel(table_name = t)]
pub struct ExamSessionChanges {
    pub name: Option<String>,
    pub term: Option<String>,
    pub start_date: Option<Option<DateTime<Utc>>>,
    pub end_date: Option<Option<DateTime<Utc>>>,
    pub is_deleted: Option<bool>,
}

impl TryFrom<ExamSessionChanges> for NewExamSession {
    type Error = Incomplete;

    fn try_from(c: ExamSessionChanges) -> Result<Self, Incomplete> {
        Ok(Self {
            name: given(c.name, "name")?,
            term: given(c.term, "term")?,
            start_date: given(c.start_date, "start_date")?,
            end_date: given(c.end_date, "end_date")?,
            is_deleted: given(c.is_deleted, "is_deleted")?,
        })
    }
}

school_table!(ExamSession in t, new: NewExamSession, changes: ExamSessionChanges,
    search: [name, term], soft_delete: is_deleted,
    parent: academic_session_id in AcademicSession);
