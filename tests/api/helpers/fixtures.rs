//! Records several tests start from.

use serde_json::Value;

use super::{
    As, NewClass, NewExam, NewExamSession, NewRecord, NewSession, NewStudent, NewSubject,
    NewTeacherAssignment, Session, TEACHERS, Teacher, TestApp,
};

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
        let session = NewSession::new(tag, "2026-01-01", "2026-12-31")
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
        let subject = NewSubject::new(tag, tag).create(self, who).await;
        let class = NewClass::named(tag).create(self, who).await;
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

impl TestApp {
    /// Makes the seeded teacher (the school's one teacher profile) teach `class` a new
    /// subject (`name`, `code`), as `admin`; answers the subject's id.
    pub async fn assign_teacher(&self, admin: &As, class: &str, name: &str, code: &str) -> String {
        let profile = &self.list::<Teacher>(TEACHERS, admin).await.results[0];
        let subject = NewSubject::new(name, code).create(self, admin).await;
        NewTeacherAssignment {
            teacher: &profile.id,
            academic_class: class,
            subject: &subject.id,
        }
        .create(self, admin)
        .await;
        subject.id
    }
}

impl TestApp {
    /// An academic session over 2026, made the active one, as `admin`.
    pub async fn session_2026(&self, admin: &As) -> Session {
        NewSession::new("2026", "2026-01-01", "2026-12-31")
            .create(self, admin)
            .await
    }

    /// A class `name` with a student for each admission number of `numbers` (first name
    /// Ada, last name the number), as `admin`; answers the class id and the student ids.
    pub async fn class_of(
        &self,
        admin: &As,
        name: &str,
        numbers: &[String],
    ) -> (String, Vec<String>) {
        let class = NewClass::named(name).create(self, admin).await.id;
        let mut students = Vec::new();
        for number in numbers {
            let student = NewStudent::new(number, "Ada", number).in_class(&class);
            students.push(student.create(self, admin).await.id);
        }
        (class, students)
    }
}
