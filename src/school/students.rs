//! Students (admission number unique among live students).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Actor, ListQuery, Store, Target,
    classes::Classes,
    enrollments::Enrollments,
    schema::{enrollments, students as t},
    sessions::Sessions,
    store::{LiveCount, Narrowing},
    table::{school_forms, school_table},
};
use crate::{error::ApiResult, tenancy::TenantConn};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct Student {
    pub id: Uuid,
    pub admission_number: String,
    pub first_name: String,
    pub last_name: String,
    #[serde(rename = "academic_class")]
    pub academic_class_id: Option<Uuid>,
    #[serde(rename = "user")]
    pub user_id: Option<Uuid>,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

school_forms!(t: NewStudent, StudentChanges {
    admission_number: String,
    first_name: String,
    last_name: String,
    academic_class_id: Option<Uuid>,
    user_id: Option<Uuid>,
    is_deleted: bool,
});

/// Students.
pub struct Students;

school_table!(Students: Student in t, new: NewStudent, changes: StudentChanges,
    search: [admission_number, first_name, last_name], soft_delete: is_deleted);

/// `?academic_class=` narrows a list to one class's students: today's (the active
/// session's, which is each student's `academic_class`), or those of the session
/// `?academic_session=` names, read from its enrollments. A student's class written while a
/// session is active moves their enrollment in it (`Enrollments::follow_students`).
impl Store for Students {
    type Record = Student;
    const NAME: &'static str = "student";
    const KEEPS_HISTORY: bool = true;

    fn students_of(_: &mut TenantConn, records: &[&Student]) -> ApiResult<Vec<Option<Uuid>>> {
        Ok(records.iter().map(|r| Some(r.id)).collect())
    }

    fn about_students(
        children: &std::sync::Arc<[uuid::Uuid]>,
    ) -> Option<super::store::Narrowing<Self>> {
        super::family::students(children)
    }

    const LIVE_COUNT: Option<LiveCount<()>> = Some(LiveCount::kept_as("students"));

    const STUDENT_RECORD: Option<&'static str> = Some("student");

    fn students_in(_: &mut TenantConn, records: &[Student]) -> ApiResult<Vec<Uuid>> {
        Ok(records.iter().map(|s| s.id).collect())
    }

    fn narrowing(conn: &mut TenantConn, query: &ListQuery) -> ApiResult<Option<Narrowing<Self>>> {
        let class = query.filter.academic_class;
        let mut session = query.filter.academic_session;
        // The active session's classes are the students' own (the same rows its
        // enrollments hold, and also students given a class before the session began).
        if session.is_some() && class.is_some() && session == Sessions::active_id(conn)? {
            session = None;
        }
        Ok(match (class, session) {
            (None, None) => None,
            (Some(class), None) => Some(Box::new(move |rows| {
                rows.filter(t::academic_class_id.eq(class))
            })),
            (class, Some(session)) => Some(Box::new(move |rows| {
                let mut enrolled = enrollments::table
                    .filter(enrollments::academic_session_id.eq(session))
                    .filter(enrollments::is_deleted.eq(false))
                    .select(enrollments::student_id)
                    .into_boxed();
                if let Some(class) = class {
                    enrolled = enrolled.filter(enrollments::academic_class_id.eq(class));
                }
                rows.filter(t::id.eq_any(enrolled))
            })),
        })
    }

    fn after_create(
        conn: &mut TenantConn,
        rows: &[Student],
        _: &[NewStudent],
        actor: &Actor,
    ) -> ApiResult<()> {
        enrollments_follow_classes(conn, rows, actor)
    }

    fn after_replace(
        conn: &mut TenantConn,
        row: &Student,
        _: &NewStudent,
        actor: &Actor,
    ) -> ApiResult<()> {
        enrollments_follow_classes(conn, std::slice::from_ref(row), actor)
    }

    fn after_update(
        conn: &mut TenantConn,
        rows: &[Student],
        changes: &StudentChanges,
        actor: &Actor,
    ) -> ApiResult<()> {
        match changes.academic_class_id {
            Some(_) => enrollments_follow_classes(conn, rows, actor),
            None => Ok(()),
        }
    }
}

/// A live student's class written while a session is active moves their enrollment in it,
/// written by `actor`, who wrote the student's class.
fn enrollments_follow_classes(
    conn: &mut TenantConn,
    rows: &[Student],
    actor: &Actor,
) -> ApiResult<()> {
    let live: Vec<(Uuid, Option<Uuid>)> = (rows.iter())
        .filter(|row| !row.is_deleted)
        .map(|row| (row.id, row.academic_class_id))
        .collect();
    Enrollments::follow_students(conn, &live, actor)
}

const CLASS_FILTER: &str = "academic_class";
const SESSION_FILTER: &str = "academic_session";

impl Students {
    /// The list filters beyond `?search=`, with what they do (for the API document).
    pub const FILTERS: &'static [(&'static str, &'static str)] = &[
        (CLASS_FILTER, "students of this class (id)"),
        (
            SESSION_FILTER,
            "students enrolled in this academic session (id); with `academic_class`, that session's students of the class",
        ),
    ];

    /// One page of `class`'s students, listed like every student list; `None` when the
    /// class does not exist, or is soft-deleted and `include_deleted` is not set.
    pub fn page_in_class(
        conn: &mut TenantConn,
        class: Uuid,
        query: &ListQuery,
    ) -> ApiResult<Option<(i64, Vec<Student>)>> {
        let target = Target {
            parent: (),
            id: class,
            include_deleted: query.include_deleted,
        };
        if Classes::find(conn, target)?.is_none() {
            return Ok(None);
        }
        let mut query = query.clone();
        query.filter.academic_class = Some(class);
        Self::list(conn, (), &query).map(Some)
    }

    /// The live student record linked to `user` (their own account; the oldest if more
    /// than one names it), read whatever the caller's read scope.
    pub fn live_of_user(conn: &mut TenantConn, user: Uuid) -> ApiResult<Option<Student>> {
        Ok(t::table
            .filter(t::user_id.eq(user))
            .filter(t::is_deleted.eq(false))
            .order((t::created_at, t::id))
            .select(Student::as_select())
            .first(conn.pg())
            .optional()?)
    }

    /// Whether a live student has this admission number (marks must name one).
    pub fn admission_number_is_live(conn: &mut TenantConn, number: &str) -> ApiResult<bool> {
        Ok(diesel::select(diesel::dsl::exists(
            t::table
                .filter(t::admission_number.eq(number))
                .filter(t::is_deleted.eq(false)),
        ))
        .get_result(conn.pg())?)
    }
}
