//! Typed requests for the school resources: `NewClass { .. }.create(&app, &who)` posts the
//! record, asserts the 201 and answers the created record typed; `.post(&app, &who)`
//! answers the whole `Reply`, for tests of refusals. A field left `None` is left out of the
//! body, as a test writing the JSON by hand would.

// The answers carry the fields a test may assert on; each test reads a few.
#![allow(dead_code)]

use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::Value;

use super::{As, Reply, TestApp};

pub const CLASSES: &str = "/api/v1/school/classes/";
pub const SUBJECTS: &str = "/api/v1/school/subjects/";
pub const STUDENTS: &str = "/api/v1/school/students/";
pub const SESSIONS: &str = "/api/v1/school/sessions/";
pub const ENROLLMENTS: &str = "/api/v1/school/enrollments/";
pub const DEPARTMENTS: &str = "/api/v1/school/departments/";
pub const TEACHERS: &str = "/api/v1/school/teachers/";
pub const TEACHER_ASSIGNMENTS: &str = "/api/v1/school/teacher-assignments/";
pub const ME: &str = "/api/v1/school/auth/me/";

/// A record the school API creates with a POST to its collection.
pub trait NewRecord: Serialize + Sync {
    /// The created record, as the API answers it.
    type Record: DeserializeOwned;
    /// Where the record sits in the 201 answer (the academic session's envelope puts it
    /// under `/data`).
    const IN_ANSWER: &'static str = "";
    /// The status of a success (200 for the operations that create through another record).
    const SUCCESS: u16 = 201;

    /// The collection the record is posted to.
    fn collection(&self) -> String;

    /// Posts the record; the answer whatever it is.
    fn post(&self, app: &TestApp, who: &As) -> impl Future<Output = Reply> {
        let body = serde_json::to_value(self).expect("a JSON body");
        async move { app.post(&self.collection(), who, body).await }
    }

    /// Posts the record, asserts it was created (`SUCCESS`), and answers it.
    fn create(&self, app: &TestApp, who: &As) -> impl Future<Output = Self::Record> {
        async move {
            let reply = self.post(app, who).await;
            reply.assert(Self::SUCCESS, None);
            let record = reply.body.pointer(Self::IN_ANSWER).cloned();
            serde_json::from_value(record.unwrap_or_default())
                .unwrap_or_else(|err| panic!("unexpected record ({err}): {}", reply.body))
        }
    }
}

/// `/{id}/` under `collection`.
pub fn item(collection: &str, id: &str) -> String {
    format!("{collection}{id}/")
}

/// Who made and last changed a record (a user id, or null for an API key).
#[derive(Deserialize, Debug, Clone, PartialEq)]
pub struct Authors {
    pub created_by: Value,
    pub updated_by: Value,
}

#[derive(Serialize, Default)]
pub struct NewClass<'a> {
    pub name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<i64>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct Class {
    pub id: String,
    pub name: String,
    pub level: Option<i64>,
    pub is_deleted: bool,
    #[serde(flatten)]
    pub authors: Authors,
}

impl NewRecord for NewClass<'_> {
    type Record = Class;
    fn collection(&self) -> String {
        CLASSES.into()
    }
}

impl Class {
    pub fn path(&self) -> String {
        item(CLASSES, &self.id)
    }
}

#[derive(Serialize, Default)]
pub struct NewSubject<'a> {
    pub name: &'a str,
    pub code: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub department: Option<&'a str>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct Subject {
    pub id: String,
    pub name: String,
    pub code: String,
    pub is_deleted: bool,
}

impl NewRecord for NewSubject<'_> {
    type Record = Subject;
    fn collection(&self) -> String {
        SUBJECTS.into()
    }
}

impl Subject {
    pub fn path(&self) -> String {
        item(SUBJECTS, &self.id)
    }
}

#[derive(Serialize, Default)]
pub struct NewStudent<'a> {
    pub admission_number: &'a str,
    pub first_name: &'a str,
    pub last_name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub academic_class: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<&'a str>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct Student {
    pub id: String,
    pub admission_number: String,
    pub first_name: String,
    pub last_name: String,
    pub academic_class: Option<String>,
    pub user: Option<String>,
    pub is_deleted: bool,
}

impl NewRecord for NewStudent<'_> {
    type Record = Student;
    fn collection(&self) -> String {
        STUDENTS.into()
    }
}

impl Student {
    pub fn path(&self) -> String {
        item(STUDENTS, &self.id)
    }
}

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

impl NewRecord for NewEnrollment<'_> {
    type Record = Enrollment;
    fn collection(&self) -> String {
        ENROLLMENTS.into()
    }
}

/// One page of a list (API.md 2, "Lists").
#[derive(Deserialize, Debug, Clone)]
pub struct Page<T> {
    pub count: i64,
    pub results: Vec<T>,
}

impl TestApp {
    /// A list read as `who`, asserting 200, its records typed.
    pub async fn list<T: DeserializeOwned>(&self, path: &str, who: &As) -> Page<T> {
        let reply = self.get(path, who).await;
        reply.assert(200, None);
        serde_json::from_value(reply.body.clone())
            .unwrap_or_else(|err| panic!("unexpected list ({err}): {}", reply.body))
    }
}

#[derive(Serialize, Default)]
pub struct NewDepartment<'a> {
    pub name: &'a str,
    /// A teacher profile.
    pub hod: &'a str,
    pub subject: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub teachers: Option<&'a [&'a str]>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct Department {
    pub id: String,
    pub name: String,
    pub hod: String,
    pub subject: String,
    pub teachers: Vec<String>,
}

impl NewRecord for NewDepartment<'_> {
    type Record = Department;
    fn collection(&self) -> String {
        DEPARTMENTS.into()
    }
}

impl Department {
    pub fn path(&self) -> String {
        item(DEPARTMENTS, &self.id)
    }
}

/// A teacher profile of a user of the school.
#[derive(Serialize, Default)]
pub struct NewTeacher<'a> {
    pub user: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub staff_number: Option<&'a str>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct Teacher {
    pub id: String,
    pub user: String,
    /// The user's name.
    pub name: String,
    pub staff_number: Option<String>,
}

impl NewRecord for NewTeacher<'_> {
    type Record = Teacher;
    fn collection(&self) -> String {
        TEACHERS.into()
    }
}

#[derive(Serialize, Default)]
pub struct NewTeacherAssignment<'a> {
    pub teacher: &'a str,
    pub academic_class: &'a str,
    pub subject: &'a str,
}

#[derive(Deserialize, Debug, Clone)]
pub struct TeacherAssignment {
    pub id: String,
    pub teacher: String,
    pub academic_class: String,
    pub subject: String,
}

impl NewRecord for NewTeacherAssignment<'_> {
    type Record = TeacherAssignment;
    fn collection(&self) -> String {
        TEACHER_ASSIGNMENTS.into()
    }
}

/// `/auth/me/`: who a school token belongs to.
#[derive(Deserialize, Debug, Clone)]
pub struct Me {
    pub user: MeUser,
    /// The caller's teacher profile, if they have one.
    pub teacher: Option<MeTeacher>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct MeUser {
    pub id: String,
}

#[derive(Deserialize, Debug, Clone)]
pub struct MeTeacher {
    pub id: String,
}

impl TestApp {
    /// `/auth/me/` as `who`, asserting 200.
    pub async fn me(&self, who: &As) -> Me {
        self.get(ME, who).await.typed(200)
    }
}

impl Reply {
    /// The answer's body typed, after asserting its status.
    #[track_caller]
    pub fn typed<T: DeserializeOwned>(&self, status: u16) -> T {
        self.assert(status, None);
        serde_json::from_value(self.body.clone())
            .unwrap_or_else(|err| panic!("unexpected answer ({err}): {}", self.body))
    }
}

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
