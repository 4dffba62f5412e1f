//! Exams of an exam session: at most one live exam per (exam session, subject, class), the
//! rule `auto-create-teacher-exams` relies on.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Store,
    enrollments::Enrollments,
    exam_sessions::ExamSessions,
    schema::{academic_classes, exams as t, subjects, teacher_assignments},
    sessions::Sessions,
    table::{school_forms, school_table},
};
use crate::{error::ApiResult, tenancy::TenantConn};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct Exam {
    pub id: Uuid,
    #[serde(rename = "exam_session")]
    pub exam_session_id: Uuid,
    pub name: String,
    #[serde(rename = "subject")]
    pub subject_id: Uuid,
    #[serde(rename = "academic_class")]
    pub academic_class_id: Uuid,
    #[serde(rename = "teacher")]
    pub teacher_id: Option<Uuid>,
    pub max_mark: i32,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

school_forms!(t: NewExam, ExamChanges {
    name: String,
    subject_id: Uuid,
    academic_class_id: Uuid,
    teacher_id: Option<Uuid>,
    max_mark: i32,
    is_deleted: bool,
});

/// Exams, under an exam session.
pub struct Exams;

school_table!(Exams: Exam in t, new: NewExam, changes: ExamChanges, search: [name],
    soft_delete: is_deleted, parent: exam_session_id in ExamSessions);

impl Store for Exams {
    type Record = Exam;

    fn about_students(
        children: &std::sync::Arc<[uuid::Uuid]>,
    ) -> Option<super::store::Narrowing<Self>> {
        super::family::exams(children)
    }
    const NAME: &'static str = "exam";
}

/// One live assignment of a teacher, with the display fields of its subject and class.
pub struct TaughtClass {
    pub subject_id: Uuid,
    pub subject: String,
    pub subject_code: String,
    pub class_id: Uuid,
    pub class: String,
}

impl TaughtClass {
    /// The live assignments of `teacher` (see `of_teacher`) whose class had students in
    /// `academic_session`: every one for the active session; for a past one, the classes
    /// its enrollments name (a class made since then was not taught that year).
    pub fn of_teacher_during(
        conn: &mut TenantConn,
        teacher: Uuid,
        academic_session: Uuid,
    ) -> ApiResult<Vec<Self>> {
        let taught = Self::of_teacher(conn, teacher)?;
        if Sessions::active_id(conn)? == Some(academic_session) {
            return Ok(taught);
        }
        let mut during = Vec::with_capacity(taught.len());
        for class in taught {
            if Enrollments::class_has_any_in(conn, class.class_id, academic_session)? {
                during.push(class);
            }
        }
        Ok(during)
    }

    /// The live assignments of teacher profile `teacher` to live subjects and classes, in
    /// the order they were made.
    pub fn of_teacher(conn: &mut TenantConn, teacher: Uuid) -> ApiResult<Vec<Self>> {
        Ok(teacher_assignments::table
            .inner_join(subjects::table)
            .inner_join(academic_classes::table)
            .filter(teacher_assignments::teacher_id.eq(teacher))
            .filter(teacher_assignments::is_deleted.eq(false))
            .filter(subjects::is_deleted.eq(false))
            .filter(academic_classes::is_deleted.eq(false))
            .order((teacher_assignments::created_at, teacher_assignments::id))
            .select((
                subjects::id,
                subjects::name,
                subjects::code,
                academic_classes::id,
                academic_classes::name,
            ))
            .load::<(Uuid, String, String, Uuid, String)>(conn.pg())?
            .into_iter()
            .map(
                |(subject_id, subject, subject_code, class_id, class)| Self {
                    subject_id,
                    subject,
                    subject_code,
                    class_id,
                    class,
                },
            )
            .collect())
    }
}

impl Exams {
    /// The id and creator of the live exam for (exam session, subject, class).
    pub fn live_for(
        conn: &mut TenantConn,
        exam_session: Uuid,
        subject: Uuid,
        class: Uuid,
    ) -> ApiResult<(Uuid, Option<Uuid>)> {
        Ok(t::table
            .filter(t::exam_session_id.eq(exam_session))
            .filter(t::subject_id.eq(subject))
            .filter(t::academic_class_id.eq(class))
            .filter(t::is_deleted.eq(false))
            .select((t::id, t::created_by))
            .first(conn.pg())?)
    }
}
