//! A sample response of every endpoint validates against the served OpenAPI document:
//! its status is documented, its content type matches, its body fits the schema. The
//! bodies the walk sends stay raw JSON (they are samples of the documented shapes); what a
//! walk only needs to exist is made with the typed helpers.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{
    As, GRADE_COMMENTS, NewApiKey, NewGradeComment, NewRecord, NewRole, NewStudent, NewSubject,
    NewTeacherAssignment, Reply, TestApp, spawn_app,
};

struct Contract {
    doc: Value,
}

impl Contract {
    async fn fetch(app: &TestApp) -> Self {
        let reply = app
            .get("/api/v1/schema/", &As::host("anything.example"))
            .await;
        reply.assert(200, None);
        Self { doc: reply.body }
    }

    /// Checks `reply` against the document's `method` `template` operation.
    #[track_caller]
    fn check(&self, method: &Method, template: &str, reply: &Reply) {
        let op = &self.doc["paths"][template][method.as_str().to_lowercase()];
        assert!(op.is_object(), "{method} {template} is not documented");
        let status = reply.status.as_u16().to_string();
        let response = &op["responses"][&status];
        assert!(
            response.is_object(),
            "{method} {template}: status {status} is not documented ({})",
            reply.body
        );
        let content = &response["content"];
        if content.is_null() {
            assert!(
                reply.body.is_null(),
                "{method} {template}: {status} documents no body"
            );
            return;
        }
        let (content_type, media) = content
            .as_object()
            .and_then(|c| c.iter().next())
            .expect("one media type");
        let actual = reply
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        assert!(
            actual.starts_with(content_type.as_str()),
            "{method} {template}: content type {actual}, documented {content_type}"
        );
        let schema = json!({"components": self.doc["components"], "allOf": [media["schema"]]});
        let validator = jsonschema::validator_for(&schema).expect("valid schema");
        let errors: Vec<String> = validator
            .iter_errors(&reply.body)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{method} {template} {status}: {errors:?}\nbody: {}",
            reply.body
        );
    }
}

/// Calls endpoints and checks each answer against the document.
struct Walk<'a> {
    app: &'a TestApp,
    contract: &'a Contract,
}

impl Walk<'_> {
    /// Calls `url` and checks the answer against `template`; answers the reply.
    async fn call(
        &self,
        who: &As,
        method: Method,
        url: &str,
        template: &str,
        body: Option<Value>,
    ) -> Reply {
        let reply = self.app.request(method.clone(), url, who, body).await;
        self.contract.check(&method, template, &reply);
        reply
    }

    /// `call` where the URL is its own template (no path parameters).
    async fn at(&self, who: &As, method: Method, path: &str, body: Option<Value>) -> Reply {
        self.call(who, method, path, path, body).await
    }

    /// `at` for each of `calls`, in order.
    async fn each(&self, path: &str, calls: Vec<(&As, Method, Option<Value>)>) {
        for (who, method, body) in calls {
            self.at(who, method, path, body).await;
        }
    }
}

#[tokio::test]
async fn system_endpoints_answer_as_documented() {
    let app = spawn_app().await;
    let c = Contract::fetch(&app).await;
    let w = Walk {
        app: &app,
        contract: &c,
    };
    let main = As::main();
    for path in ["/healthz/", "/readyz/"] {
        w.at(&main, Method::GET, path, None).await;
    }
    let login = w
        .call(
            &main,
            Method::POST,
            "/api/v1/system/auth/login/",
            "/api/v1/system/auth/login/",
            Some(json!({"identifier": "root@platform.test", "password": "password-123"})),
        )
        .await;
    w.at(
        &main,
        Method::POST,
        "/api/v1/system/auth/login/",
        Some(json!({"identifier": "root@platform.test", "password": "wrong-password"})),
    )
    .await;
    let root = As::main().token(login.body["access"].as_str().expect("access"));
    w.at(
        &main,
        Method::POST,
        "/api/v1/system/auth/refresh/",
        Some(json!({"refresh": login.body["refresh"]})),
    )
    .await;
    w.at(&root, Method::GET, "/api/v1/system/auth/me/", None)
        .await;

    let t = "/api/v1/system/tenants/";
    w.at(&root, Method::GET, t, None).await;
    let tenant = w.at(&root, Method::POST, t, Some(json!({"schema_name": "contract", "name": "Contract", "domains": ["contract.localhost"]}))).await;
    let id = tenant.body["id"].as_str().expect("id").to_owned();
    let item = "/api/v1/system/tenants/{id}/";
    w.call(&root, Method::GET, &format!("{t}{id}/"), item, None)
        .await;
    w.call(
        &root,
        Method::PATCH,
        &format!("{t}{id}/"),
        item,
        Some(json!({"name": "Renamed"})),
    )
    .await;
    w.call(
        &root,
        Method::GET,
        &format!("{t}{id}/domains/"),
        "/api/v1/system/tenants/{id}/domains/",
        None,
    )
    .await;
    w.call(
        &root,
        Method::POST,
        &format!("{t}{id}/domains/"),
        "/api/v1/system/tenants/{id}/domains/",
        Some(json!({"domain": "c2.localhost"})),
    )
    .await;
    w.call(&root, Method::GET, &format!("{t}not-a-uuid/"), item, None)
        .await;
    let export = "/api/v1/system/tenants/{id}/export/";
    w.call(
        &root,
        Method::GET,
        &format!("{t}{id}/export/"),
        export,
        None,
    )
    .await
    .assert(200, None);
    w.call(
        &As::main(),
        Method::GET,
        &format!("{t}{id}/export/"),
        export,
        None,
    )
    .await;

    let u = "/api/v1/system/users/";
    w.at(&root, Method::GET, u, None).await;
    let user = w.at(&root, Method::POST, u, Some(json!({"email": "c@contract.test", "password": "password-123", "client": id, "roles": ["admin"]}))).await;
    let uid = user.body["id"].as_str().expect("id").to_owned();
    w.call(
        &root,
        Method::GET,
        &format!("{u}{uid}/"),
        "/api/v1/system/users/{id}/",
        None,
    )
    .await;
    w.call(
        &root,
        Method::PATCH,
        &format!("{u}{uid}/"),
        "/api/v1/system/users/{id}/",
        Some(json!({"first_name": "C"})),
    )
    .await;
    w.at(&root, Method::POST, u, Some(json!({"password": "x"})))
        .await;

    let k = "/api/v1/system/api-keys/";
    let key = w
        .call(
            &root,
            Method::POST,
            k,
            k,
            Some(json!({"name": "contract", "tenant": id, "read_only": true})),
        )
        .await;
    let kid = key.body["id"].as_str().expect("id").to_owned();
    w.at(&root, Method::GET, k, None).await;
    w.call(
        &root,
        Method::GET,
        &format!("{k}{kid}/"),
        "/api/v1/system/api-keys/{id}/",
        None,
    )
    .await;
    w.call(
        &root,
        Method::DELETE,
        &format!("{k}{kid}/"),
        "/api/v1/system/api-keys/{id}/",
        None,
    )
    .await;
    w.at(
        &root,
        Method::POST,
        "/api/v1/system/auth/logout/",
        Some(json!({"refresh": login.body["refresh"]})),
    )
    .await;
    w.call(&root, Method::DELETE, &format!("{t}{id}/"), item, None)
        .await;
}

#[tokio::test]
async fn school_endpoints_answer_as_documented() {
    let app = spawn_app().await;
    let c = Contract::fetch(&app).await;
    let w = Walk {
        app: &app,
        contract: &c,
    };
    let school = As::school("alpha");
    let login = w
        .call(
            &school,
            Method::POST,
            "/api/v1/school/auth/login/",
            "/api/v1/school/auth/login/",
            Some(json!({"identifier": "teacher@alpha.test", "password": "password-123"})),
        )
        .await;
    let teacher = As::school("alpha").token(login.body["access"].as_str().expect("access"));
    let admin = app.as_school_user("alpha", "admin").await;
    w.at(
        &school,
        Method::POST,
        "/api/v1/school/auth/refresh/",
        Some(json!({"refresh": login.body["refresh"]})),
    )
    .await;
    w.at(&teacher, Method::GET, "/api/v1/school/auth/me/", None)
        .await;
    w.at(&admin, Method::GET, "/api/v1/school/permissions/", None)
        .await;
    let root = app.as_root().await;
    let key = NewApiKey::named("k").create(&app, &root).await.key;
    w.at(
        &As::school("alpha").key(&key),
        Method::GET,
        "/api/v1/school/auth/me/",
        None,
    )
    .await;

    // Every generic resource: create, list, retrieve, patch, put, delete.
    let f = app.exam_fixture(&admin, "K").await;
    let teacher_id = app
        .me(&teacher)
        .await
        .teacher
        .expect("a teacher profile")
        .id;
    NewStudent::new("K-1", "A", "B").create(&app, &admin).await;
    let other_subject = NewSubject::new("K2", "K2").create(&app, &admin).await.id;
    let role = NewRole::new("viewer", &["view_exam"])
        .create(&app, &admin)
        .await
        .id;
    let norole = app.school_login("alpha", "norole@alpha.test").await["user"]["id"].clone();
    let session_tpl = "/api/v1/school/sessions/{session_pk}/exam-sessions/";
    let exams_tpl = "/api/v1/school/sessions/{session_pk}/exam-sessions/{exam_session_pk}/exams/";
    let marks_tpl = "/api/v1/school/sessions/{session_pk}/exam-sessions/{exam_session_pk}/exams/{exam_pk}/marks/";
    let cases: Vec<(String, String, Value)> = vec![
        (
            "/api/v1/school/sessions/".into(),
            "/api/v1/school/sessions/".into(),
            json!({"name": "S", "start_date": "2026-01-01", "end_date": "2026-02-01"}),
        ),
        (
            f.exam_sessions.clone(),
            session_tpl.into(),
            json!({"name": "E", "term": "T"}),
        ),
        (
            f.exams.clone(),
            exams_tpl.into(),
            json!({"name": "X", "subject": other_subject, "academic_class": f.class}),
        ),
        (
            f.marks(),
            marks_tpl.into(),
            json!({"studentadmissionnumber": "K-1", "mark": 5}),
        ),
        (
            "/api/v1/school/departments/".into(),
            "/api/v1/school/departments/".into(),
            json!({"name": "D", "hod": teacher_id, "subject": f.subject, "teachers": [teacher_id]}),
        ),
        (
            "/api/v1/school/subjects/".into(),
            "/api/v1/school/subjects/".into(),
            json!({"name": "N", "code": "N1"}),
        ),
        (
            "/api/v1/school/classes/".into(),
            "/api/v1/school/classes/".into(),
            json!({"name": "C2", "level": 2}),
        ),
        (
            "/api/v1/school/students/".into(),
            "/api/v1/school/students/".into(),
            json!({"admission_number": "K-2", "first_name": "F", "last_name": "L"}),
        ),
        (
            "/api/v1/school/teachers/".into(),
            "/api/v1/school/teachers/".into(),
            json!({"user": norole, "staff_number": "S1"}),
        ),
        (
            "/api/v1/school/teacher-assignments/".into(),
            "/api/v1/school/teacher-assignments/".into(),
            json!({"teacher": teacher_id, "academic_class": f.class, "subject": f.subject}),
        ),
        (
            "/api/v1/school/teacher-grade-comments/".into(),
            "/api/v1/school/teacher-grade-comments/".into(),
            json!({"grade": "A", "min_mark": 1, "max_mark": 2, "comment": "c"}),
        ),
        (
            "/api/v1/school/session-setup/".into(),
            "/api/v1/school/session-setup/".into(),
            json!({"session_type": "exam_session"}),
        ),
        (
            "/api/v1/school/general-settings/".into(),
            "/api/v1/school/general-settings/".into(),
            json!({"school_name": "G", "address": "A", "phone": "P", "email": "g@g.test"}),
        ),
        (
            "/api/v1/school/academic-settings/".into(),
            "/api/v1/school/academic-settings/".into(),
            json!({"grading_scale": [{"symbol": "A", "min": 0, "max": 100}]}),
        ),
        (
            "/api/v1/school/roles/".into(),
            "/api/v1/school/roles/".into(),
            json!({"name": "R", "permissions": ["view_mark"]}),
        ),
        (
            "/api/v1/school/role-assignments/".into(),
            "/api/v1/school/role-assignments/".into(),
            json!({"user": norole, "role": role}),
        ),
    ];
    for (url, tpl, body) in cases {
        let created = w
            .call(&admin, Method::POST, &url, &tpl, Some(body.clone()))
            .await;
        let record = if created.body.get("data").is_some() {
            &created.body["data"]
        } else {
            &created.body
        };
        let id = record["id"]
            .as_str()
            .unwrap_or_else(|| panic!("{url}: {}", created.body))
            .to_owned();
        let item = format!("{url}{id}/");
        let item_tpl = format!("{tpl}{{id}}/");
        w.call(&admin, Method::GET, &url, &tpl, None).await;
        w.call(&admin, Method::GET, &item, &item_tpl, None).await;
        w.call(&admin, Method::PATCH, &item, &item_tpl, Some(json!({})))
            .await;
        w.call(&admin, Method::PUT, &item, &item_tpl, Some(body))
            .await;
        w.call(&admin, Method::POST, &url, &tpl, Some(json!({"bad": true})))
            .await;
        w.call(&admin, Method::DELETE, &item, &item_tpl, None).await;
        w.call(&admin, Method::GET, &item, &item_tpl, None).await;
    }

    // The special operations.
    let exam_session_path = f.exams.trim_end_matches("exams/");
    let subject = NewSubject::new("Z", "Z").create(&app, &admin).await.id;
    NewTeacherAssignment {
        teacher: &teacher_id,
        academic_class: f.class.as_str().expect("a class"),
        subject: &subject,
    }
    .create(&app, &admin)
    .await;
    let auto = format!("{exam_session_path}exams/auto-create-teacher-exams/");
    for who in [&teacher, &admin] {
        w.call(
            who,
            Method::POST,
            &auto,
            &format!("{exams_tpl}auto-create-teacher-exams/"),
            Some(json!({})),
        )
        .await;
    }
    w.call(
        &teacher,
        Method::POST,
        &format!("{}confirm-students/", f.marks()),
        &format!("{marks_tpl}confirm-students/"),
        Some(json!({"studentadmissionnumber": "K-1", "mark": 9})),
    )
    .await;
    let bulk = "/api/v1/school/subjects/bulk-soft-delete/";
    w.at(
        &admin,
        Method::DELETE,
        bulk,
        Some(json!({"ids": [subject]})),
    )
    .await;
    let comment = NewGradeComment::new("B", 1..=2, "c")
        .create(&app, &teacher)
        .await
        .id;
    w.call(
        &teacher,
        Method::DELETE,
        &format!("{GRADE_COMMENTS}{comment}/soft-delete/"),
        "/api/v1/school/teacher-grade-comments/{id}/soft-delete/",
        None,
    )
    .await;
    w.each(
        "/api/v1/school/report-settings/",
        vec![
            (&teacher, Method::GET, None),
            (&admin, Method::PATCH, Some(json!({"footer_text": "F"}))),
            (&admin, Method::PUT, Some(json!({"show_position": false}))),
            (&teacher, Method::PATCH, Some(json!({"footer_text": "F"}))),
        ],
    )
    .await;
    w.at(
        &admin,
        Method::POST,
        "/api/v1/school/auth/logout/",
        Some(json!({"refresh": login.body["refresh"]})),
    )
    .await;
}

#[tokio::test]
async fn the_contract_check_rejects_what_the_document_does_not_allow() {
    let app = spawn_app().await;
    let c = Contract::fetch(&app).await;
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert("content-type", "application/json".parse().expect("header"));
    let fake = |status: u16, body: Value| Reply {
        status: reqwest::StatusCode::from_u16(status).expect("status"),
        headers: headers.clone(),
        body,
    };
    let template = "/api/v1/school/classes/{id}/";
    let wrong_body = fake(200, json!({"id": 5, "name": null}));
    assert!(
        std::panic::catch_unwind(|| c.check(&Method::GET, template, &wrong_body)).is_err(),
        "a wrong body passed"
    );
    let undocumented = fake(418, json!({}));
    assert!(
        std::panic::catch_unwind(|| c.check(&Method::GET, template, &undocumented)).is_err(),
        "an undocumented status passed"
    );
}
