//! Marks of an exam: one live mark per admission number.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Actor, Store, Target,
    exams::Exams,
    schema::marks as t,
    table::{school_forms, school_table},
};
use crate::{
    error::{ApiError, ApiResult},
    tenancy::TenantConn,
};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct Mark {
    pub id: Uuid,
    #[serde(rename = "exam")]
    pub exam_id: Uuid,
    pub studentadmissionnumber: String,
    pub mark: Option<i32>,
    pub symbol: Option<String>,
    pub comment: Option<String>,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

school_forms!(t: NewMark, MarkChanges {
    studentadmissionnumber: String,
    mark: Option<i32>,
    symbol: Option<String>,
    comment: Option<String>,
    is_deleted: bool,
});

/// Marks, under an exam.
pub struct Marks;

school_table!(Marks: Mark in t, new: NewMark, changes: MarkChanges, search: [studentadmissionnumber],
    soft_delete: is_deleted, parent: exam_id in Exams);

impl Store for Marks {
    type Record = Mark;

    const STUDENT_RECORD: Option<&'static str> = Some("mark");

    /// Marks name their student by admission number: the students (live or not) that
    /// hold those numbers.
    fn students_in(conn: &mut TenantConn, records: &[Mark]) -> ApiResult<Vec<Uuid>> {
        use super::schema::students;
        let numbers: Vec<&str> = records
            .iter()
            .map(|m| m.studentadmissionnumber.as_str())
            .collect();
        Ok(students::table
            .filter(students::admission_number.eq_any(numbers))
            .select(students::id)
            .load(conn.pg())?)
    }

    fn about_students(
        children: &std::sync::Arc<[uuid::Uuid]>,
    ) -> Option<super::store::Narrowing<Self>> {
        super::family::marks(children)
    }

    const NAME: &'static str = "mark";
    const KEEPS_HISTORY: bool = true;

    /// The student a mark names by admission number: the live one, else the newest.
    fn student_of(conn: &mut TenantConn, record: &Mark) -> ApiResult<Option<Uuid>> {
        use super::schema::students as s;
        Ok(s::table
            .filter(s::admission_number.eq(&record.studentadmissionnumber))
            .order((s::is_deleted, s::created_at.desc()))
            .select(s::id)
            .first(conn.pg())
            .optional()?)
    }
}

impl Marks {
    /// Creates or updates the live mark of `number` for `exam` (confirm-students): only
    /// the given fields change on an update, fields not given are created empty.
    /// Concurrent calls for one student meet at the live unique index: the loser of the
    /// insert updates the winner's mark.
    pub fn upsert(
        conn: &mut TenantConn,
        exam: Uuid,
        number: &str,
        mut changes: MarkChanges,
        actor: &Actor,
    ) -> ApiResult<Mark> {
        changes.studentadmissionnumber = None;
        for _ in 0..3 {
            let live: Option<Uuid> = t::table
                .filter(t::exam_id.eq(exam))
                .filter(t::studentadmissionnumber.eq(number))
                .filter(t::is_deleted.eq(false))
                .select(t::id)
                .for_update()
                .first(conn.pg())
                .optional()?;
            if let Some(id) = live {
                return Self::update(conn, Target::live(exam, id), changes, actor);
            }
            let new = NewMark {
                studentadmissionnumber: number.to_owned(),
                mark: changes.mark.flatten(),
                symbol: changes.symbol.clone().flatten(),
                comment: changes.comment.clone().flatten(),
                is_deleted: changes.is_deleted.unwrap_or(false),
            };
            if let Some(mark) = Self::create_unless_present(conn, exam, new, actor)? {
                return Ok(mark);
            }
        }
        Err(ApiError::Conflict(
            "the mark is being changed concurrently; retry".into(),
        ))
    }
}
