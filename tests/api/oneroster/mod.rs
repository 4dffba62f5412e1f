//! OneRoster 1.2 (issue 37, API.md 8): integration clients, the token endpoint, the
//! rostering and gradebook REST binding.

mod clients;
mod csv;
mod gradebook;
mod rostering;
mod two_way;

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{As, NewRecord, NewStudent, NewTeacherAssignment, TestApp};

pub const SCOPE: &str = "https://purl.imsglobal.org/spec/or/v1p2/scope/";
pub const ROSTER: &str = "/ims/oneroster/rostering/v1p2/";
pub const GRADEBOOK: &str = "/ims/oneroster/gradebook/v1p2/";

/// An integration client of `school`, made by its admin: (record with `client_secret`).
pub async fn new_client(app: &TestApp, school: &str, scopes: Option<&[&str]>) -> Value {
    let admin = app.as_school_user(school, "admin").await;
    let mut body = json!({"name": "LMS"});
    if let Some(scopes) = scopes {
        body["scopes"] = scopes.iter().map(|s| format!("{SCOPE}{s}")).collect();
    }
    let reply = app
        .post("/api/v1/school/oauth-clients/", &admin, body)
        .await;
    reply.assert(201, None);
    reply.body
}

/// Posts a token request as a form on `school`'s address.
pub async fn token_request(
    app: &TestApp,
    school: &str,
    basic: Option<(&str, &str)>,
    form: &[(&str, &str)],
) -> (u16, Value) {
    let mut req = app
        .client
        .post(format!("{}/api/v1/school/oauth/token/", app.address))
        .header("Host", format!("{school}.localhost"))
        .form(form);
    if let Some((id, secret)) = basic {
        req = req.basic_auth(id, Some(secret));
    }
    let reply = TestApp::read(req.send().await.expect("token request")).await;
    (reply.status.as_u16(), reply.body)
}

/// A bearer token of a new client of `school` holding `scopes` (all six when `None`).
pub async fn oneroster_token(app: &TestApp, school: &str, scopes: Option<&[&str]>) -> String {
    let client = new_client(app, school, scopes).await;
    let id = client["client_id"].as_str().expect("client_id");
    let secret = client["client_secret"].as_str().expect("secret");
    let (status, body) = token_request(
        app,
        school,
        Some((id, secret)),
        &[("grant_type", "client_credentials")],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    body["access_token"].as_str().expect("token").to_owned()
}

/// A OneRoster request with a bearer token on `school`'s address.
pub async fn or_request(
    app: &TestApp,
    method: Method,
    school: &str,
    token: &str,
    path: &str,
    body: Option<Value>,
) -> crate::helpers::Reply {
    app.request(method, path, &As::school(school).token(token), body)
        .await
}

pub async fn or_get(app: &TestApp, school: &str, token: &str, path: &str) -> crate::helpers::Reply {
    or_request(app, Method::GET, school, token, path, None).await
}

/// A school year with a term, a class of three students taught one subject by the
/// school's teacher, and one exam: what the OneRoster tests read.
pub struct Roster {
    pub fixture: crate::helpers::ExamFixture,
    pub admin: As,
    pub class: String,
    pub subject: String,
    pub term: String,
    pub students: Vec<String>,
    pub teacher: String,
}

impl Roster {
    /// The OneRoster class: the class taught the subject.
    pub fn class_sid(&self) -> String {
        format!("{}.{}", self.class, self.subject)
    }
}

pub async fn roster(app: &TestApp, school: &str) -> Roster {
    let admin = app.as_school_user(school, "admin").await;
    let fixture = app.exam_fixture(&admin, "or").await;
    let class = fixture.class.as_str().expect("class").to_owned();
    let subject = fixture.subject.as_str().expect("subject").to_owned();
    let mut students = Vec::new();
    for (number, first) in [("A1", "Ada"), ("A2", "Bob"), ("A3", "Cy")] {
        let reply = NewStudent::new(number, first, "Lee")
            .in_class(&class)
            .post(app, &admin)
            .await;
        reply.assert(201, None);
        students.push(reply.body["id"].as_str().expect("id").to_owned());
    }
    let teachers = app.get("/api/v1/school/teachers/", &admin).await;
    let teacher = teachers.body["results"][0]["id"]
        .as_str()
        .expect("teacher")
        .to_owned();
    NewTeacherAssignment {
        teacher: &teacher,
        academic_class: &class,
        subject: &subject,
    }
    .post(app, &admin)
    .await
    .assert(201, None);
    let term = fixture
        .exams
        .trim_end_matches("/exams/")
        .rsplit('/')
        .next()
        .expect("term")
        .to_owned();
    Roster {
        fixture,
        admin,
        class,
        subject,
        term,
        students,
        teacher,
    }
}
