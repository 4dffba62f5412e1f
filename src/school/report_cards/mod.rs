//! Report cards of an exam session: what a card holds (`ReportCard`), how it is computed
//! (`compute`, pure) and what it is computed from (`load`, the queries).

pub mod compute;
pub mod load;
#[cfg(test)]
mod tests;

use serde::Serialize;
use uuid::Uuid;

use super::attendance_ops::AttendanceSummary;

/// The exam session and class every card of a class shares.
#[derive(Debug, Clone)]
pub struct CardHeader {
    pub academic_session: CardSession,
    pub exam_session: CardExamSession,
    pub academic_class: Option<CardClass>,
}

/// The academic session (school year) of the exam session.
#[derive(Serialize, Debug, Clone, PartialEq, utoipa::ToSchema)]
pub struct CardSession {
    pub id: Uuid,
    pub name: String,
}

#[derive(Serialize, Debug, Clone, PartialEq, utoipa::ToSchema)]
pub struct CardExamSession {
    pub id: Uuid,
    pub name: String,
    pub term: String,
}

#[derive(Serialize, Debug, Clone, PartialEq, utoipa::ToSchema)]
pub struct CardClass {
    pub id: Uuid,
    pub name: String,
}

#[derive(Serialize, Debug, Clone, PartialEq, utoipa::ToSchema)]
pub struct CardStudent {
    pub id: Uuid,
    pub admission_number: String,
    pub first_name: String,
    pub last_name: String,
}

impl From<&compute::StudentRow> for CardStudent {
    fn from(row: &compute::StudentRow) -> Self {
        Self {
            id: row.id,
            admission_number: row.admission_number.clone(),
            first_name: row.first_name.clone(),
            last_name: row.last_name.clone(),
        }
    }
}

/// One exam's mark on a card.
#[derive(Serialize, Debug, Clone, PartialEq, utoipa::ToSchema)]
pub struct CardExam {
    pub exam: Uuid,
    pub name: String,
    pub max_mark: i32,
    /// `null`: missing (no mark recorded, or recorded without a value).
    pub mark: Option<i32>,
    /// The student was absent: the mark is recorded without a value and with
    /// `text_score` "absent" (the marks sheet's "absent").
    pub absent: bool,
}

/// One subject's line on a card.
#[derive(Serialize, Debug, Clone, PartialEq, utoipa::ToSchema)]
pub struct CardSubject {
    pub subject: Uuid,
    pub name: String,
    pub code: String,
    /// Every exam of the subject for the class in the exam session.
    pub exams: Vec<CardExam>,
    /// The sum of the exams' marks; `null` when any is missing.
    pub mark: Option<i64>,
    /// Without a mark because the student was absent from an exam of the subject.
    pub absent: bool,
    /// The sum of the exams' `max_mark`s.
    pub max_mark: i64,
    /// Of `max_mark`, two decimals.
    pub percentage: Option<f64>,
    /// From the grading scale of academic settings.
    #[schema(max_length = 10)]
    pub grade: Option<String>,
    /// At least `pass_mark` on the school's scale.
    pub passed: Option<bool>,
    /// The teacher grade comment whose range holds the mark (`show_teacher_comments`).
    #[schema(max_length = 10000)]
    pub teacher_comment: Option<String>,
    /// The mean percentage of the class's students with a mark (`show_class_average`).
    pub class_average: Option<f64>,
    #[serde(skip)]
    pub percentage_exact: Option<f64>,
}

/// A student's report card for an exam session.
#[derive(Serialize, Debug, Clone, PartialEq, utoipa::ToSchema)]
pub struct ReportCard {
    pub student: CardStudent,
    /// The student's class (`null` for a student without one).
    pub academic_class: Option<CardClass>,
    /// The school year the exam session belongs to.
    pub academic_session: CardSession,
    pub exam_session: CardExamSession,
    pub subjects: Vec<CardSubject>,
    /// Of the subjects with a mark; `null` when none has one.
    pub total_mark: Option<i64>,
    pub total_max_mark: i64,
    pub percentage: Option<f64>,
    #[schema(max_length = 10)]
    pub grade: Option<String>,
    pub passed: Option<bool>,
    /// Whether every subject has a mark.
    pub complete: bool,
    /// Competition ranking by overall percentage in the class (1, 2, 2, 4), when
    /// `show_position`; `null` otherwise or without any mark.
    pub position: Option<u32>,
    /// Live students of the class.
    pub class_size: usize,
    /// Days recorded between the exam session's dates.
    pub attendance: AttendanceSummary,
    /// The class teacher's remark for the exam session (`report-remarks/`); `null` without one.
    #[schema(max_length = 2000)]
    pub class_teacher_remark: Option<String>,
    #[serde(skip)]
    pub ratio: Option<f64>,
}
