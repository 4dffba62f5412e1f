//! The class teacher's remark on a student's report card for an exam session: one live
//! remark per (exam session, student), under the exam session. The report card shows it
//! (`report_cards::load` reads a class's remarks in one query).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Store,
    exam_sessions::ExamSessions,
    schema::report_remarks as t,
    store::Narrowing,
    table::{school_forms, school_table},
};
use crate::{error::ApiResult, tenancy::TenantConn};

/// The longest remark, in characters.
pub const MAX_REMARK_CHARS: usize = 2000;

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct ReportRemark {
    pub id: Uuid,
    #[serde(rename = "exam_session")]
    pub exam_session_id: Uuid,
    #[serde(rename = "student")]
    pub student_id: Uuid,
    #[schema(max_length = 2000)]
    pub remark: String,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

school_forms!(t: NewReportRemark, ReportRemarkChanges {
    student_id: Uuid,
    remark: String,
    is_deleted: bool,
});

/// Report remarks, under an exam session.
pub struct ReportRemarks;

school_table!(ReportRemarks: ReportRemark in t, new: NewReportRemark, changes: ReportRemarkChanges,
    search: [remark], soft_delete: is_deleted, parent: exam_session_id in ExamSessions);

impl Store for ReportRemarks {
    type Record = ReportRemark;
    const NAME: &'static str = "report_remark";
    const KEEPS_HISTORY: bool = true;
    const STUDENT_RECORD: Option<&'static str> = Some("report_remark");

    fn students_in(_: &mut TenantConn, records: &[ReportRemark]) -> ApiResult<Vec<Uuid>> {
        Ok(records.iter().map(|r| r.student_id).collect())
    }

    fn students_of(_: &mut TenantConn, records: &[&ReportRemark]) -> ApiResult<Vec<Option<Uuid>>> {
        Ok(records.iter().map(|r| Some(r.student_id)).collect())
    }

    /// A guardian reads their children's remarks only.
    fn about_students(children: &std::sync::Arc<[Uuid]>) -> Option<Narrowing<Self>> {
        let children = children.to_vec();
        Some(Box::new(move |rows| {
            rows.filter(t::student_id.eq_any(children.clone()))
        }))
    }
}

impl ReportRemarks {
    /// The live remarks of `students` for `exam_session`, by student.
    pub fn of_students(
        conn: &mut TenantConn,
        exam_session: Uuid,
        students: &[Uuid],
    ) -> ApiResult<HashMap<Uuid, String>> {
        let rows: Vec<(Uuid, String)> = t::table
            .filter(t::exam_session_id.eq(exam_session))
            .filter(t::student_id.eq_any(students))
            .filter(t::is_deleted.eq(false))
            .select((t::student_id, t::remark))
            .load(conn.pg())?;
        Ok(rows.into_iter().collect())
    }
}
