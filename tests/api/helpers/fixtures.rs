//! Records several tests start from.

use serde_json::Value;

use super::{As, NewClass, NewExam, NewExamSession, NewRecord, NewSession, NewSubject, TestApp};

/// An academic session with one exam session, a subject, a class and one exam of them.
pub struct ExamFixture {
    /// `/api/v1/school/sessions/{s}/exam-sessions/`
    pub exam_sessions: String,
    /// `/api/v1/school/sessions/{s}/exam-sessions/{e}/exams/`
    pub exams: String,
    pub exam: String,
    pub subject: Value,
    pub class: Value,
}

impl ExamFixture {
    pub fn marks(&self) -> String {
        format!("{}{}/marks/", self.exams, self.exam)
    }
}

impl TestApp {
    /// Creates an [`ExamFixture`] as `who` (an admin); `tag` keeps names unique.
    pub async fn exam_fixture(&self, who: &As, tag: &str) -> ExamFixture {
        let session = NewSession {
            name: tag,
            start_date: "2026-01-01",
            end_date: "2026-12-31",
        }
        .create(self, who)
        .await;
        let exam_session = NewExamSession {
            session: &session.id,
            name: tag,
            term: "T1",
            ..Default::default()
        }
        .create(self, who)
        .await;
        let subject = NewSubject {
            name: tag,
            code: tag,
            ..Default::default()
        }
        .create(self, who)
        .await;
        let class = NewClass {
            name: tag,
            ..Default::default()
        }
        .create(self, who)
        .await;
        let exams = exam_session.exams();
        let exam = NewExam {
            exams: &exams,
            name: tag,
            subject: &subject.id,
            academic_class: &class.id,
            ..Default::default()
        }
        .create(self, who)
        .await;
        ExamFixture {
            exam_sessions: session.exam_sessions(),
            exams,
            exam: exam.id,
            subject: Value::String(subject.id),
            class: Value::String(class.id),
        }
    }
}
