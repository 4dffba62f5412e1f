//! Exam sessions of an academic session.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Store,
    schema::exam_sessions as t,
    sessions::Sessions,
    table::{school_forms, school_table},
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

school_forms!(t: NewExamSession, ExamSessionChanges {
    name: String,
    term: String,
    start_date: Option<DateTime<Utc>>,
    end_date: Option<DateTime<Utc>>,
    is_deleted: bool,
});

/// Exam sessions, under an academic session.
pub struct ExamSessions;

school_table!(ExamSessions: ExamSession in t, new: NewExamSession, changes: ExamSessionChanges,
    search: [name, term], soft_delete: is_deleted,
    parent: academic_session_id in Sessions);

impl Store for ExamSessions {
    type Record = ExamSession;

    fn about_students(
        children: &std::sync::Arc<[uuid::Uuid]>,
    ) -> Option<super::store::Narrowing<Self>> {
        super::family::exam_sessions(children)
    }
    const NAME: &'static str = "exam_session";
}
