//! What a class's report cards are computed from, read in a fixed number of queries
//! whatever the class's size: students, exams with their subjects, marks, settings,
//! comments and attendance.

use std::collections::{HashMap, HashSet};

use chrono::NaiveDate;
use diesel::prelude::*;
use uuid::Uuid;

use super::{
    CardClass, CardExamSession, CardHeader, CardSession,
    compute::{ClassSheet, CommentRange, ExamColumn, Rules, StudentRow, SubjectColumn},
};
use crate::{
    error::ApiResult,
    school::{
        academic_settings::{AcademicSettings, GradingScale},
        attendance_ops::summaries,
        classes::AcademicClass,
        enrollments::Enrollments,
        exam_sessions::ExamSession,
        general_settings::GeneralSettings,
        marks::ABSENT,
        report_remarks::ReportRemarks,
        report_settings::{ReportSettings, ReportSettingsStore},
        schema::{
            academic_sessions, academic_settings, exams, general_settings, marks, students,
            subjects, teacher_grade_comments as comments,
        },
        sessions::Sessions,
    },
    tenancy::TenantConn,
};

/// Whether `session` is a past (not the active) academic session, whose classes are read
/// from its enrollments rather than from the students' current class.
fn is_past(conn: &mut TenantConn, session: Uuid) -> ApiResult<bool> {
    Ok(Sessions::active_id(conn)? != Some(session))
}

/// The class `student` (whose class today is `current`) was in during `exam_session`'s
/// academic session: today's for the active session, the enrollment's for a past one.
pub fn class_during(
    conn: &mut TenantConn,
    student: Uuid,
    current: Option<Uuid>,
    exam_session: &ExamSession,
) -> ApiResult<Option<Uuid>> {
    let session = exam_session.academic_session_id;
    if !is_past(conn, session)? {
        return Ok(current);
    }
    Ok(Enrollments::of_student_in(conn, student, session)?.map(|e| e.academic_class_id))
}

/// The live students of `class` during `session` (today's class for the active session,
/// the session's enrollments for a past one), by last name, first name and admission number.
fn students_of(conn: &mut TenantConn, class: Uuid, session: Uuid) -> ApiResult<Vec<StudentRow>> {
    let mut rows = students::table
        .filter(students::is_deleted.eq(false))
        .into_boxed();
    rows = match is_past(conn, session)? {
        false => rows.filter(students::academic_class_id.eq(class)),
        true => rows
            .filter(students::id.eq_any(Enrollments::students_of_class_in(conn, class, session)?)),
    };
    let rows: Vec<(Uuid, String, String, String)> = rows
        .order((
            students::last_name,
            students::first_name,
            students::admission_number,
        ))
        .select((
            students::id,
            students::admission_number,
            students::first_name,
            students::last_name,
        ))
        .load(conn.pg())?;
    Ok(rows
        .into_iter()
        .map(|(id, admission_number, first_name, last_name)| StudentRow {
            id,
            admission_number,
            first_name,
            last_name,
        })
        .collect())
}

/// The subjects of the class's live exams in the exam session, by subject name, each with
/// its exams by name.
fn subjects_of(conn: &mut TenantConn, session: Uuid, class: Uuid) -> ApiResult<Vec<SubjectColumn>> {
    type Row = (Uuid, String, String, Uuid, String, i32, Option<Uuid>);
    let rows: Vec<Row> = exams::table
        .inner_join(subjects::table)
        .filter(exams::exam_session_id.eq(session))
        .filter(exams::academic_class_id.eq(class))
        .filter(exams::is_deleted.eq(false))
        .order((subjects::name, subjects::id, exams::name, exams::id))
        .select((
            subjects::id,
            subjects::name,
            subjects::code,
            exams::id,
            exams::name,
            exams::max_mark,
            exams::teacher_id,
        ))
        .load(conn.pg())?;
    let mut columns: Vec<SubjectColumn> = Vec::new();
    for (subject, name, code, exam, exam_name, max_mark, teacher) in rows {
        let exam = ExamColumn {
            id: exam,
            name: exam_name,
            max_mark,
            teacher,
        };
        match columns.last_mut() {
            Some(last) if last.id == subject => last.exams.push(exam),
            _ => columns.push(SubjectColumn {
                id: subject,
                name,
                code,
                exams: vec![exam],
            }),
        }
    }
    Ok(columns)
}

/// What `marks_of` reads: marks by (exam, admission number), and the pairs marked absent.
type MarksRead = (
    HashMap<(Uuid, String), Option<i32>>,
    HashSet<(Uuid, String)>,
);

/// The live marks of `exam_ids`, by (exam, admission number), and those recorded as
/// absent (no value, `text_score` "absent").
fn marks_of(conn: &mut TenantConn, exam_ids: &[Uuid]) -> ApiResult<MarksRead> {
    let rows: Vec<(Uuid, String, Option<i32>, Option<String>)> = marks::table
        .filter(marks::exam_id.eq_any(exam_ids))
        .filter(marks::is_deleted.eq(false))
        .select((
            marks::exam_id,
            marks::studentadmissionnumber,
            marks::mark,
            marks::text_score,
        ))
        .load(conn.pg())?;
    let mut absent = HashSet::new();
    let mut marks = HashMap::with_capacity(rows.len());
    for (exam, number, mark, text) in rows {
        if mark.is_none() && text.is_some_and(|t| t.eq_ignore_ascii_case(ABSENT)) {
            absent.insert((exam, number.clone()));
        }
        marks.insert((exam, number), mark);
    }
    Ok((marks, absent))
}

/// The rules from academic settings (the oldest record; the contract's defaults without
/// one), report settings and the live teacher grade comments: the school's, the same for
/// every class (read once a request).
pub fn rules(conn: &mut TenantConn) -> ApiResult<Rules> {
    let academic: Option<AcademicSettings> = academic_settings::table
        .order((academic_settings::created_at, academic_settings::id))
        .select(AcademicSettings::as_select())
        .first(conn.pg())
        .optional()?;
    let report = ReportSettingsStore::load(conn)?;
    let comments: Vec<(Option<Uuid>, i32, i32, String)> = comments::table
        .filter(comments::is_deleted.eq(false))
        .order((comments::created_at, comments::id))
        .select((
            comments::teacher_id,
            comments::min_mark,
            comments::max_mark,
            comments::comment,
        ))
        .load(conn.pg())?;
    let (pass_mark, scale_max, grading) = academic
        .map_or((50, 100, GradingScale::default()), |a| {
            (a.pass_mark, a.max_mark, a.grading_scale)
        });
    Ok(Rules {
        pass_mark,
        scale_max,
        grading,
        comments: comments
            .into_iter()
            .map(|(teacher, min, max, comment)| CommentRange {
                teacher,
                min,
                max,
                comment,
            })
            .collect(),
        show_position: report.show_position,
        show_class_average: report.show_class_average,
        show_teacher_comments: report.show_teacher_comments,
    })
}

/// The first and last day of `exam_session` (either may be open).
fn dates_of(exam_session: &ExamSession) -> (Option<NaiveDate>, Option<NaiveDate>) {
    (
        exam_session.start_date.map(|d| d.date_naive()),
        exam_session.end_date.map(|d| d.date_naive()),
    )
}

fn header_of(
    conn: &mut TenantConn,
    exam_session: &ExamSession,
    academic_class: Option<CardClass>,
) -> ApiResult<CardHeader> {
    let name: String = academic_sessions::table
        .find(exam_session.academic_session_id)
        .select(academic_sessions::name)
        .first(conn.pg())?;
    Ok(CardHeader {
        academic_session: CardSession {
            id: exam_session.academic_session_id,
            name,
        },
        exam_session: CardExamSession {
            id: exam_session.id,
            name: exam_session.name.clone(),
            term: exam_session.term.clone(),
        },
        academic_class,
    })
}

/// Everything the cards of `class` for `exam_session` are computed from, with the
/// school's `rules`.
pub fn class_sheet(
    conn: &mut TenantConn,
    exam_session: &ExamSession,
    class: &AcademicClass,
    rules: Rules,
) -> ApiResult<(ClassSheet, CardHeader)> {
    let students = students_of(conn, class.id, exam_session.academic_session_id)?;
    let subjects = subjects_of(conn, exam_session.id, class.id)?;
    let exam_ids: Vec<Uuid> = subjects
        .iter()
        .flat_map(|s| s.exams.iter().map(|e| e.id))
        .collect();
    let (marks, absent) = marks_of(conn, &exam_ids)?;
    let (from, to) = dates_of(exam_session);
    let ids: Vec<Uuid> = students.iter().map(|s| s.id).collect();
    let sheet = ClassSheet {
        attendance: summaries(conn, &ids, from, to)?,
        remarks: ReportRemarks::of_students(conn, exam_session.id, &ids)?,
        students,
        subjects,
        marks,
        absent,
        rules,
    };
    let class = CardClass {
        id: class.id,
        name: class.name.clone(),
    };
    Ok((sheet, header_of(conn, exam_session, Some(class))?))
}

/// Every live class, by name (the cards of a whole exam session of academic session
/// `session`); for a reader narrowed to some students (a guardian), the classes they were
/// in during `session` only: their enrollments', and today's class for the active session.
pub fn live_classes(conn: &mut TenantConn, session: Uuid) -> ApiResult<Vec<AcademicClass>> {
    use crate::school::schema::{academic_classes as c, enrollments as e};
    let mut rows = c::table.filter(c::is_deleted.eq(false)).into_boxed();
    if let Some(children) = conn.read_scope().students().map(|ids| ids.to_vec()) {
        let mut classes: Vec<Option<Uuid>> = e::table
            .filter(e::student_id.eq_any(&children))
            .filter(e::academic_session_id.eq(session))
            .filter(e::is_deleted.eq(false))
            .select(e::academic_class_id.nullable())
            .load(conn.pg())?;
        if !is_past(conn, session)? {
            classes.extend(
                students::table
                    .filter(students::id.eq_any(&children))
                    .filter(students::is_deleted.eq(false))
                    .select(students::academic_class_id)
                    .load::<Option<Uuid>>(conn.pg())?,
            );
        }
        let classes: Vec<Uuid> = classes.into_iter().flatten().collect();
        rows = rows.filter(c::id.eq_any(classes));
    }
    Ok(rows
        .order((c::name, c::id))
        .select(AcademicClass::as_select())
        .load(conn.pg())?)
}

/// The cards of `sheet` the connection's reader may read: every one, or for a reader
/// narrowed to some students (a guardian) theirs only. Computed over the whole class, so
/// positions and averages are the class's; `only`: the card of this student alone. The
/// cards answered are noted as disclosed (see `Reader`).
pub fn readable_cards(
    conn: &mut TenantConn,
    sheet: &ClassSheet,
    header: &CardHeader,
    only: Option<Uuid>,
) -> Vec<super::ReportCard> {
    let scope = conn.read_scope();
    let mut all = super::compute::cards(sheet, header);
    all.retain(|card| {
        scope.shows_student(card.student.id) && only.is_none_or(|id| id == card.student.id)
    });
    conn.reader()
        .disclosed(all.iter().map(|card| card.student.id), "report_card");
    all
}

/// The sheet of a student who has no class: no exams, so a card without subjects.
pub fn classless_sheet(
    conn: &mut TenantConn,
    exam_session: &ExamSession,
    student: StudentRow,
    rules: Rules,
) -> ApiResult<(ClassSheet, CardHeader)> {
    let (from, to) = dates_of(exam_session);
    let sheet = ClassSheet {
        attendance: summaries(conn, &[student.id], from, to)?,
        remarks: ReportRemarks::of_students(conn, exam_session.id, &[student.id])?,
        students: vec![student],
        subjects: Vec::new(),
        marks: HashMap::new(),
        absent: HashSet::new(),
        rules,
    };
    Ok((sheet, header_of(conn, exam_session, None)?))
}

/// What a printed card shows beyond the card: the school (oldest general settings record,
/// if any) and the report settings' signature and footer.
pub fn print_settings(
    conn: &mut TenantConn,
) -> ApiResult<(Option<GeneralSettings>, ReportSettings)> {
    let school = general_settings::table
        .order((general_settings::created_at, general_settings::id))
        .select(GeneralSettings::as_select())
        .first(conn.pg())
        .optional()?;
    Ok((school, ReportSettingsStore::load(conn)?))
}
