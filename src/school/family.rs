//! What a guardian may read (API.md 11): the records about their children and what those
//! records belong to. Each function is one store's `about_students` rule, a filter over
//! the store's rows made of sub-selects on the children's ids, so a list, a retrieve and a
//! nested path's parents narrow in the same statement that reads them.
//!
//! "What they belong to" is reached through the children's class: the exams of their
//! classes, and the exam sessions, academic sessions and subjects of those exams (live
//! exams only, so a deleted exam reveals nothing).

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
        academic_classes, academic_sessions, attendance, exam_sessions, exams, marks, students,
        subjects,
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

/// The classes of the live children.
fn classes_of(
    children: &[Uuid],
) -> students::BoxedQuery<'static, Pg, Nullable<diesel::sql_types::Uuid>> {
    students::table
        .filter(students::id.eq_any(children.to_vec()))
        .filter(students::is_deleted.eq(false))
        .select(students::academic_class_id)
        .into_boxed()
}

/// The live exams of the children's classes.
fn exams_of(children: &[Uuid]) -> exams::BoxedQuery<'static, Pg> {
    exams::table
        .filter(
            exams::academic_class_id
                .nullable()
                .eq_any(classes_of(children)),
        )
        .filter(exams::is_deleted.eq(false))
        .into_boxed()
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

pub fn classes(children: &Arc<[Uuid]>) -> Option<Narrowing<Classes>> {
    let children = ids(children);
    Some(Box::new(move |rows| {
        rows.filter(
            academic_classes::id
                .nullable()
                .eq_any(classes_of(&children)),
        )
    }))
}

pub fn exams(children: &Arc<[Uuid]>) -> Option<Narrowing<Exams>> {
    let children = ids(children);
    Some(Box::new(move |rows| {
        rows.filter(
            exams::academic_class_id
                .nullable()
                .eq_any(classes_of(&children)),
        )
    }))
}

pub fn exam_sessions(children: &Arc<[Uuid]>) -> Option<Narrowing<ExamSessions>> {
    let children = ids(children);
    Some(Box::new(move |rows| {
        let of_exams = exams_of(&children).select(exams::exam_session_id);
        rows.filter(exam_sessions::id.eq_any(of_exams))
    }))
}

pub fn sessions(children: &Arc<[Uuid]>) -> Option<Narrowing<Sessions>> {
    let children = ids(children);
    Some(Box::new(move |rows| {
        let of_exams = exams_of(&children).select(exams::exam_session_id);
        let sessions = exam_sessions::table
            .filter(exam_sessions::id.eq_any(of_exams))
            .select(exam_sessions::academic_session_id);
        rows.filter(academic_sessions::id.eq_any(sessions))
    }))
}

pub fn subjects(children: &Arc<[Uuid]>) -> Option<Narrowing<Subjects>> {
    let children = ids(children);
    Some(Box::new(move |rows| {
        let of_exams = exams_of(&children).select(exams::subject_id);
        rows.filter(subjects::id.eq_any(of_exams))
    }))
}
