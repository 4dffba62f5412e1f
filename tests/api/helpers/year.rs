//! Typed requests and answers of the school year: academic sessions, exam sessions, exams,
//! marks, enrollments and the rollover.

// The answers carry the fields a test may assert on; each test reads a few.
#![allow(dead_code)]

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ENROLLMENTS, NewRecord, SESSIONS, item};

/// An academic session; created, it becomes the active one.
#[derive(Serialize, Default)]
pub struct NewSession<'a> {
    pub name: &'a str,
    pub start_date: &'a str,
    pub end_date: &'a str,
}

/// An academic session as its create answers it (`is_active` is the string `"true"`
/// there, API.md 6).
#[derive(Deserialize, Debug, Clone)]
pub struct Session {
    pub id: String,
    pub name: String,
    pub start_date: String,
    pub end_date: String,
    pub is_active: Value,
}

impl NewRecord for NewSession<'_> {
    type Record = Session;
    const IN_ANSWER: &'static str = "/data";
    fn collection(&self) -> String {
        SESSIONS.into()
    }
}

impl<'a> NewSession<'a> {
    pub fn new(name: &'a str, start_date: &'a str, end_date: &'a str) -> Self {
        Self {
            name,
            start_date,
            end_date,
        }
    }
}

impl Session {
    pub fn path(&self) -> String {
        item(SESSIONS, &self.id)
    }
    /// The session's exam sessions.
    pub fn exam_sessions(&self) -> String {
        format!("{SESSIONS}{}/exam-sessions/", self.id)
    }
}

#[derive(Serialize, Default)]
pub struct NewExamSession<'a> {
    /// The academic session it belongs to (the path, not the body).
    #[serde(skip)]
    pub session: &'a str,
    pub name: &'a str,
    pub term: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_date: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_date: Option<&'a str>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct ExamSession {
    pub id: String,
    pub academic_session: String,
    pub name: String,
    pub term: String,
}

impl NewRecord for NewExamSession<'_> {
    type Record = ExamSession;
    fn collection(&self) -> String {
        format!("{SESSIONS}{}/exam-sessions/", self.session)
    }
}

impl ExamSession {
    pub fn path(&self) -> String {
        format!(
            "{SESSIONS}{}/exam-sessions/{}/",
            self.academic_session, self.id
        )
    }
    /// The exam session's exams.
    pub fn exams(&self) -> String {
        format!("{}exams/", self.path())
    }
    /// The exam session's report cards.
    pub fn report_cards(&self) -> String {
        format!("{}report-cards/", self.path())
    }
}

#[derive(Serialize, Default)]
pub struct NewExam<'a> {
    /// The exam session's `exams/` collection (the path, not the body).
    #[serde(skip)]
    pub exams: &'a str,
    pub name: &'a str,
    pub subject: &'a str,
    pub academic_class: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_mark: Option<i64>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct Exam {
    pub id: String,
    pub name: String,
    pub subject: String,
    pub academic_class: String,
    pub max_mark: Value,
}

impl NewRecord for NewExam<'_> {
    type Record = Exam;
    fn collection(&self) -> String {
        self.exams.into()
    }
}

/// A mark, by the student's admission number.
#[derive(Serialize, Default)]
pub struct NewMark<'a> {
    /// The exam's `marks/` collection (the path, not the body).
    #[serde(skip)]
    pub marks: &'a str,
    pub studentadmissionnumber: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mark: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comment: Option<&'a str>,
    /// Soft-deletes the mark.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_deleted: Option<bool>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct Mark {
    pub id: String,
    pub studentadmissionnumber: String,
    pub mark: Value,
}

impl NewRecord for NewMark<'_> {
    type Record = Mark;
    fn collection(&self) -> String {
        self.marks.into()
    }
}

/// `confirm-students/`: the upsert of a student's one live mark (200); `marks` is the
/// exam's `marks/` collection as for a plain write.
#[derive(Serialize)]
#[serde(transparent)]
pub struct ConfirmMark<'a>(pub NewMark<'a>);

impl NewRecord for ConfirmMark<'_> {
    type Record = Mark;
    const SUCCESS: u16 = 200;
    fn collection(&self) -> String {
        format!("{}confirm-students/", self.0.marks)
    }
}

#[derive(Serialize, Default)]
pub struct NewEnrollment<'a> {
    pub student: &'a str,
    pub academic_class: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub academic_session: Option<&'a str>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct Enrollment {
    pub id: String,
    pub student: String,
    pub academic_class: String,
    pub academic_session: String,
    /// `active`, `completed` or `withdrawn`.
    pub status: String,
}

posted_to!(NewEnrollment => Enrollment at ENROLLMENTS);

/// A rollover of `session` into a new one (API.md 10): plan (`dry_run`) or apply.
#[derive(Serialize, Default)]
pub struct Rollover<'a> {
    /// The session rolled over (the path, not the body).
    #[serde(skip)]
    pub session: &'a str,
    pub name: &'a str,
    pub start_date: &'a str,
    pub end_date: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retain: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leave: Option<Vec<String>>,
    /// `[{"from_class", "to_class"}]`, where levels do not say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub promotions: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
}

/// A rollover's answer: its plan and, once applied, the new session.
#[derive(Deserialize, Debug, Clone)]
pub struct RolledOver {
    pub dry_run: bool,
    pub session: Option<RolledSession>,
    pub plan: Value,
}

#[derive(Deserialize, Debug, Clone)]
pub struct RolledSession {
    pub id: String,
    pub is_active: Value,
}

impl NewRecord for Rollover<'_> {
    type Record = RolledOver;
    const SUCCESS: u16 = 200;
    fn collection(&self) -> String {
        format!("{SESSIONS}{}/rollover/", self.session)
    }
}
