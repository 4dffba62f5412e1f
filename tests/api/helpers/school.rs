//! Typed requests for the school resources: `NewClass { .. }.create(&app, &who)` posts the
//! record, asserts the 201 and answers the created record typed; `.post(&app, &who)`
//! answers the whole `Reply`, for tests of refusals. A field left `None` is left out of the
//! body, as a test writing the JSON by hand would.

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
pub const ATTENDANCE: &str = "/api/v1/school/attendance/";
pub const GUARDIANS: &str = "/api/v1/school/guardians/";

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

/// A string of an answer read untyped (an id, mostly), panicking if it is not one.
#[track_caller]
pub fn text(value: &Value) -> &str {
    value
        .as_str()
        .unwrap_or_else(|| panic!("not a string: {value}"))
}
