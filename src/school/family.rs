//! What a guardian may read (API.md 11): the records about their children and what those
//! records belong to. Each function is one store's `about_students` rule, a filter over
//! the store's rows made of sub-selects on the children's ids, so a list, a retrieve and a
//! nested path's parents narrow in the same statement that reads them.
//!
//! "What they belong to" is reached through the children's enrollments (API.md 10, 11):
//! the exams of a class in an academic session in which a child was enrolled in that class
//! (any status, so last year's exams stay theirs after a promotion, and never become the
//! new classmates'), plus, for the active session, the exams of the child's class today
//! (a class given before the session began has no enrollment yet); then the exam
//! sessions, academic sessions and subjects of those exams (live exams only, so a deleted
//! exam reveals nothing), and the classes and sessions of the enrollments themselves.

use std::sync::Arc;

use diesel::{pg::Pg, prelude::*, sql_types::Nullable};
use uuid::Uuid;

use super::{
    attendance::Attendances,
    classes::Classes,
    exam_sessions::ExamSessions,
    exams::Exams,
    marks::Marks,
    schema::{
        academic_classes, academic_sessions, attendance, enrollments, exam_sessions, exams, marks,
        students, subjects,
    },
    sessions::Sessions,
    store::Narrowing,
    students::Students,
    subjects::Subjects,
};

/// The children's ids, owned by the query that filters on them.
fn ids(children: &Arc<[Uuid]>) -> Vec<Uuid> {
    children.to_vec()
}

/// The classes of the live children today.
fn classes_of(
    children: &[Uuid],
) -> students::BoxedQuery<'static, Pg, Nullable<diesel::sql_types::Uuid>> {
    students::table
        .filter(students::id.eq_any(children.to_vec()))
        .filter(students::is_deleted.eq(false))
        .select(students::academic_class_id)
        .into_boxed()
}

/// The live enrollments of the children (any status).
fn enrollments_of(children: &[Uuid]) -> enrollments::BoxedQuery<'static, Pg> {
    enrollments::table
        .filter(enrollments::student_id.eq_any(children.to_vec()))
        .filter(enrollments::is_deleted.eq(false))
        .into_boxed()
}

/// `$outer.eq_any(..)` over `$column` of the exams the children sat (see the module's
/// documentation): those of a class and session they were enrolled in, or of their class
/// today in the active session; live exams only when `$live`. Two sub-selects joined with
/// OR, each one statement with the outer query.
macro_rules! in_sat_exams {
    ($outer:expr, $column:expr, $children:expr, $live:expr) => {{
        let children: &[Uuid] = $children;
        let live: bool = $live;
        let mut enrolled = exams::table
            .inner_join(exam_sessions::table)
            .inner_join(
                enrollments::table.on(enrollments::academic_class_id
                    .eq(exams::academic_class_id)
                    .and(enrollments::academic_session_id.eq(exam_sessions::academic_session_id))),
            )
            .filter(enrollments::student_id.eq_any(children.to_vec()))
            .filter(enrollments::is_deleted.eq(false))
            .select($column)
            .into_boxed();
        let mut today = exams::table
            .inner_join(exam_sessions::table.inner_join(academic_sessions::table))
            .filter(academic_sessions::is_active.eq(true))
            .filter(academic_sessions::is_deleted.eq(false))
            .filter(
                exams::academic_class_id
                    .nullable()
                    .eq_any(classes_of(children)),
            )
            .select($column)
            .into_boxed();
        if live {
            enrolled = enrolled.filter(exams::is_deleted.eq(false));
            today = today.filter(exams::is_deleted.eq(false));
        }
        $outer.eq_any(enrolled).or($outer.eq_any(today))
    }};
}

pub fn students(children: &Arc<[Uuid]>) -> Option<Narrowing<Students>> {
    let children = ids(children);
    Some(Box::new(move |rows| {
        rows.filter(students::id.eq_any(children.clone()))
    }))
}

pub fn attendance(children: &Arc<[Uuid]>) -> Option<Narrowing<Attendances>> {
    let children = ids(children);
    Some(Box::new(move |rows| {
        rows.filter(attendance::student_id.eq_any(children.clone()))
    }))
}

/// Marks name their student by admission number: the live children's numbers.
pub fn marks(children: &Arc<[Uuid]>) -> Option<Narrowing<Marks>> {
    let children = ids(children);
    Some(Box::new(move |rows| {
        let numbers = students::table
            .filter(students::id.eq_any(children.clone()))
            .filter(students::is_deleted.eq(false))
            .select(students::admission_number);
        rows.filter(marks::studentadmissionnumber.eq_any(numbers))
    }))
}

/// The classes the children are in today or were enrolled in.
pub fn classes(children: &Arc<[Uuid]>) -> Option<Narrowing<Classes>> {
    let children = ids(children);
    Some(Box::new(move |rows| {
        let enrolled = enrollments_of(&children).select(enrollments::academic_class_id);
        rows.filter(
            academic_classes::id
                .nullable()
                .eq_any(classes_of(&children))
                .or(academic_classes::id.eq_any(enrolled)),
        )
    }))
}

pub fn exams(children: &Arc<[Uuid]>) -> Option<Narrowing<Exams>> {
    let children = ids(children);
    Some(Box::new(move |rows| {
        rows.filter(in_sat_exams!(exams::id, exams::id, &children, false))
    }))
}

pub fn exam_sessions(children: &Arc<[Uuid]>) -> Option<Narrowing<ExamSessions>> {
    let children = ids(children);
    Some(Box::new(move |rows| {
        rows.filter(in_sat_exams!(
            exam_sessions::id,
            exams::exam_session_id,
            &children,
            true
        ))
    }))
}

/// The sessions of the exams the children sat, and those they were enrolled in.
pub fn sessions(children: &Arc<[Uuid]>) -> Option<Narrowing<Sessions>> {
    let children = ids(children);
    Some(Box::new(move |rows| {
        let enrolled = enrollments_of(&children).select(enrollments::academic_session_id);
        rows.filter(
            in_sat_exams!(
                academic_sessions::id,
                exam_sessions::academic_session_id,
                &children,
                true
            )
            .or(academic_sessions::id.eq_any(enrolled)),
        )
    }))
}

pub fn subjects(children: &Arc<[Uuid]>) -> Option<Narrowing<Subjects>> {
    let children = ids(children);
    Some(Box::new(move |rows| {
        rows.filter(in_sat_exams!(
            subjects::id,
            exams::subject_id,
            &children,
            true
        ))
    }))
}
