//! Guardians (API.md 11): the resource, and a guardian user who reads only their children's
//! records. The leak test walks every GET operation of the school API in the served
//! OpenAPI document, so an endpoint added later is asked too: a guardian of child A asks
//! for the records of B (another class) and C (A's classmate) by id, in lists, nested
//! paths, report cards (JSON and PDF), attendance summaries and searches; every answer is
//! a refusal, or holds nothing of theirs.

use reqwest::Method;
use serde_json::{Value, json};

use crate::helpers::{
    As, NewAttendance, NewClass, NewExam, NewExamSession, NewGuardian, NewMark, NewRecord,
    NewSession, NewStudent, NewSubject, NewUser, PASSWORD, TestApp, spawn_app, spawn_app_on,
};

/// A school year in `alpha`: classes A and B, children `a` and `c` (A's classmate) in A,
/// `b` in B, an exam of each class (with its own subject), marks and attendance for all
/// three, a guardian of `a` with a user, and a guardian of `b`.
pub struct Family {
    pub admin: As,
    pub guardian: As,
    pub session: String,
    pub exam_session: String,
    /// By letter: `a`, `b`, `c`.
    pub students: Vec<(char, String)>,
    pub class_a: String,
    pub class_b: String,
    pub exam_a: String,
    pub exam_b: String,
    pub subject_b: String,
    /// The ids and names that belong to `b` or `c` and must never reach the guardian.
    pub secrets: Vec<String>,
    pub guardian_of_b: String,
}

impl Family {
    pub fn student(&self, letter: char) -> &str {
        self.students
            .iter()
            .find(|(l, _)| *l == letter)
            .map(|(_, id)| id.as_str())
            .expect("student")
    }
}

pub async fn family(app: &TestApp) -> Family {
    let admin = app.as_school_user("alpha", "admin").await;
    let session = NewSession::new("2026", "2026-01-01", "2026-12-31")
        .create(app, &admin)
        .await
        .id;
    let term = NewExamSession {
        session: &session,
        name: "Term 1",
        term: "T1",
        ..Default::default()
    }
    .create(app, &admin)
    .await;
    let (exam_session, exams) = (term.id.clone(), term.exams());
    let mut secrets = Vec::new();
    let mut students = Vec::new();
    let (mut classes, mut class_exams, mut subjects) = (Vec::new(), Vec::new(), Vec::new());
    for class in ["A", "B"] {
        let name = format!("Form {class}");
        let class_id = NewClass::named(&name).create(app, &admin).await.id;
        let (name, code) = (format!("Subject {class}"), format!("S-{class}"));
        let subject = NewSubject::new(&name, &code).create(app, &admin).await.id;
        let name = format!("Exam {class}");
        let exam = NewExam {
            exams: &exams,
            name: &name,
            subject: &subject,
            academic_class: &class_id,
            ..Default::default()
        }
        .create(app, &admin)
        .await
        .id;
        classes.push(class_id);
        class_exams.push(exam);
        subjects.push(subject);
    }
    for (letter, class, exam, last) in [
        ('a', 0, 0, "Alpha"),
        ('b', 1, 1, "Bravo"),
        ('c', 0, 0, "Charlie"),
    ] {
        let number = format!("FAM-{}", letter.to_ascii_uppercase());
        let student = NewStudent::new(&number, "Kid", last)
            .in_class(&classes[class])
            .create(app, &admin)
            .await
            .id;
        let marks = format!("{exams}{}/marks/", class_exams[exam]);
        let mark = NewMark {
            marks: &marks,
            studentadmissionnumber: &number,
            mark: Some(61),
            ..Default::default()
        }
        .create(app, &admin)
        .await
        .id;
        let attendance = NewAttendance {
            student: &student,
            date: "2026-03-02",
            status: "present",
            ..Default::default()
        }
        .create(app, &admin)
        .await
        .id;
        if letter != 'a' {
            secrets.extend([student.clone(), number, last.to_owned(), mark, attendance]);
        }
        students.push((letter, student));
    }
    secrets.extend([
        classes[1].clone(),
        class_exams[1].clone(),
        subjects[1].clone(),
    ]);

    let root = app.as_root().await;
    let school = app.tenant_id(&root, "alpha").await;
    let user = NewUser {
        email: Some("parent@alpha.test"),
        password: PASSWORD,
        client: Some(&school),
        roles: Some(&["guardian"]),
        first_name: Some("Pat"),
        ..Default::default()
    }
    .create(app, &root)
    .await
    .id;
    NewGuardian {
        first_name: "Pat",
        last_name: "Alpha",
        relationship: Some("mother"),
        user: Some(&user),
        students: &[&students[0].1],
    }
    .create(app, &admin)
    .await;
    let guardian_of_b = NewGuardian {
        first_name: "Bo",
        last_name: "Bravo",
        students: &[&students[1].1],
        ..Default::default()
    }
    .create(app, &admin)
    .await
    .id;
    secrets.push(guardian_of_b.clone());
    let guardian = app.as_school_user_at("alpha", "parent@alpha.test").await;
    Family {
        admin,
        guardian,
        session,
        exam_session,
        students,
        class_a: classes[0].clone(),
        class_b: classes[1].clone(),
        exam_a: class_exams[0].clone(),
        exam_b: class_exams[1].clone(),
        subject_b: subjects[1].clone(),
        secrets,
        guardian_of_b,
    }
}

/// The value a path parameter takes when asking for `target`'s records: `target` is `b`
/// (another class) or `c` (a classmate) for the one asked about, `a` for the guardian's own
/// child (lists under A's class and exam must still hold nothing of B's or C's).
fn parameter(f: &Family, template: &str, name: &str, target: char) -> String {
    let own = target == 'a';
    let collection = template
        .split(&format!("{{{name}}}"))
        .next()
        .and_then(|before| before.trim_end_matches('/').rsplit('/').next())
        .unwrap_or_default();
    let pick = |a: &str, other: &str| if own { a.to_owned() } else { other.to_owned() };
    match (name, collection) {
        ("session_pk", _) | ("id", "sessions") => f.session.clone(),
        ("exam_session_pk", _) | ("id", "exam-sessions") => f.exam_session.clone(),
        ("exam_pk", _) | ("id", "exams") => pick(&f.exam_a, &f.exam_b),
        ("class_pk", _) | ("id", "classes") => pick(&f.class_a, &f.class_b),
        ("student_id", _) | ("id", "students") => f.student(target).to_owned(),
        ("id", "subjects") => f.subject_b.clone(),
        ("id", "guardians") => f.guardian_of_b.clone(),
        // Records no guardian reaches (the role has no permission on them): any id.
        ("id", _) => uuid::Uuid::new_v4().to_string(),
        (other, _) => panic!(
            "{template}: no value for the path parameter `{other}`; teach this test what a \
             guardian may not see there"
        ),
    }
}

/// Every GET operation of the school API in the served document, as path templates.
async fn school_get_paths(app: &TestApp) -> Vec<String> {
    let doc = app
        .get("/api/v1/schema/", &As::host("anything.example"))
        .await;
    let paths = doc.body["paths"].as_object().expect("paths").clone();
    let mut found: Vec<String> = paths
        .into_iter()
        .filter(|(path, item)| path.starts_with("/api/v1/school/") && item.get("get").is_some())
        .map(|(path, _)| path)
        .collect();
    found.sort();
    found
}

/// How many pages a PDF has (`/Type /Page` objects, not `/Pages`).
fn pdf_pages(bytes: &[u8]) -> usize {
    let needle = b"/Type /Page";
    bytes
        .windows(needle.len() + 1)
        .filter(|w| w.starts_with(needle) && w[needle.len()] != b's')
        .count()
}

async fn get_pdf(app: &TestApp, path: &str, who: &As) -> (u16, Vec<u8>) {
    let res = app
        .client
        .get(format!("{}{path}", app.address))
        .header("Host", &who.host)
        .header("Accept", "application/pdf")
        .bearer_auth(who.token.as_deref().expect("token"))
        .send()
        .await
        .expect("request");
    let status = res.status().as_u16();
    (status, res.bytes().await.expect("body").to_vec())
}

#[tokio::test]
async fn a_guardian_never_reads_another_childs_records_on_any_endpoint() {
    let app = spawn_app().await;
    let f = family(&app).await;
    let templates = school_get_paths(&app).await;
    assert!(
        templates.len() > 20,
        "the document lists the school API: {templates:?}"
    );
    let b = f.student('b').to_owned();
    let mut asked = 0;
    for template in &templates {
        for target in ['b', 'c', 'a'] {
            let mut path = template.clone();
            let names: Vec<String> = template
                .split('{')
                .skip(1)
                .filter_map(|part| part.split_once('}').map(|(name, _)| name.to_owned()))
                .collect();
            for name in &names {
                path = path.replace(
                    &format!("{{{name}}}"),
                    &parameter(&f, template, name, target),
                );
            }
            let queries = [
                String::new(),
                format!("?student={b}"),
                format!("?academic_class={}", f.class_b),
                format!("?academic_class={}", f.class_a),
                "?search=FAM".to_owned(),
                "?search=Bravo".to_owned(),
                "?include_deleted=true".to_owned(),
            ];
            for query in &queries {
                let url = format!("{path}{query}");
                let reply = app.get(&url, &f.guardian).await;
                asked += 1;
                let status = reply.status.as_u16();
                assert!(status != 500, "{url}: {}", reply.body);
                if (200..300).contains(&status) {
                    let text = reply.body.to_string();
                    for secret in &f.secrets {
                        assert!(
                            !text.contains(secret.as_str()),
                            "{url} answered {secret}: {text}"
                        );
                    }
                }
                if template.contains("report-cards") {
                    let (pdf_status, pdf) = get_pdf(&app, &url, &f.guardian).await;
                    assert_eq!(
                        pdf_status, status,
                        "{url}: the PDF is answered like the JSON"
                    );
                    if (200..300).contains(&pdf_status) {
                        let cards = match &reply.body {
                            Value::Array(cards) => cards.len(),
                            _ => 1,
                        };
                        assert_eq!(pdf_pages(&pdf), cards, "{url}: one page per card shown");
                    }
                }
            }
        }
    }
    assert!(asked > 200, "asked {asked} questions");
}

#[tokio::test]
async fn a_guardian_reads_their_own_childs_records_and_writes_nothing() {
    let app = spawn_app().await;
    let f = family(&app).await;
    let a = f.student('a');
    let g = &f.guardian;
    let students = app.get("/api/v1/school/students/", g).await;
    students.assert(200, None);
    assert_eq!(students.body["count"], 1);
    assert_eq!(students.body["results"][0]["id"], a);
    app.get(&format!("/api/v1/school/students/{a}/"), g)
        .await
        .assert(200, None);
    let marks = format!(
        "/api/v1/school/sessions/{}/exam-sessions/{}/exams/{}/marks/",
        f.session, f.exam_session, f.exam_a
    );
    let marks = app.get(&marks, g).await;
    assert_eq!(marks.assert(200, None).body["count"], 1, "{}", marks.body);
    assert_eq!(marks.body["results"][0]["studentadmissionnumber"], "FAM-A");
    let card = format!(
        "/api/v1/school/sessions/{}/exam-sessions/{}/report-cards/{a}/",
        f.session, f.exam_session
    );
    let card = app.get(&card, g).await;
    card.assert(200, None);
    assert_eq!(card.body["student"]["id"], a);
    // Computed within the whole class: A's classmate counts in the class average.
    assert!(
        card.body["subjects"]
            .as_array()
            .is_some_and(|s| !s.is_empty()),
        "{}",
        card.body
    );
    let summary = format!("/api/v1/school/students/{a}/attendance-summary/");
    assert_eq!(
        app.get(&summary, g).await.assert(200, None).body["present"],
        1
    );
    let attendance = app.get("/api/v1/school/attendance/", g).await;
    assert_eq!(attendance.assert(200, None).body["count"], 1);
    let sessions = app.get("/api/v1/school/sessions/", g).await;
    assert_eq!(sessions.assert(200, None).body["count"], 1);

    // Outside the guardian's set: 403; writes: 403.
    for path in [
        "/api/v1/school/classes/",
        "/api/v1/school/teachers/",
        "/api/v1/school/guardians/",
    ] {
        app.get(path, g)
            .await
            .assert(403, Some("permission_denied"));
    }
    app.patch(
        &format!("/api/v1/school/students/{a}/"),
        g,
        json!({"first_name": "Changed"}),
    )
    .await
    .assert(403, Some("permission_denied"));
    let doc = app
        .get("/api/v1/schema/", &As::host("anything.example"))
        .await;
    for (template, item) in doc.body["paths"].as_object().expect("paths") {
        // Sign-in and the OAuth token endpoint authenticate their own callers (a user's
        // password, an integration client's secret), not the guardian's token.
        if !template.starts_with("/api/v1/school/")
            || template.starts_with("/api/v1/school/auth/")
            || template.starts_with("/api/v1/school/oauth/token/")
        {
            continue;
        }
        for method in ["post", "put", "patch", "delete"] {
            if item.get(method).is_none() {
                continue;
            }
            let mut path = template.clone();
            while let Some(start) = path.find('{') {
                let end = path[start..].find('}').expect("}") + start;
                path.replace_range(start..=end, a);
            }
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).expect("method");
            let reply = app.request(method.clone(), &path, g, Some(json!({}))).await;
            assert_eq!(
                reply.status.as_u16(),
                403,
                "{method} {path}: {}",
                reply.body
            );
        }
    }
}

#[tokio::test]
async fn guardians_are_a_school_resource_with_linked_students() {
    let app = spawn_app().await;
    let f = family(&app).await;
    let path = "/api/v1/school/guardians/";
    let list = app.get(path, &f.admin).await;
    assert_eq!(list.assert(200, None).body["count"], 2);
    let one = app
        .get(&format!("{path}{}/", f.guardian_of_b), &f.admin)
        .await;
    one.assert(200, None);
    assert_eq!(one.body["students"], json!([f.student('b')]));
    assert_eq!(one.body["relationship"], "");
    assert!(one.body["user"].is_null() && one.body["email"].is_null());
    let changed = app
        .patch(
            &format!("{path}{}/", f.guardian_of_b),
            &f.admin,
            json!({"students": [f.student('c'), f.student('b')], "relationship": "uncle"}),
        )
        .await;
    changed.assert(200, None);
    assert_eq!(
        changed.body["students"],
        json!([f.student('c'), f.student('b')])
    );
    let bad = app
        .post(
            path,
            &f.admin,
            json!({"first_name": "", "last_name": "X", "students": [uuid::Uuid::new_v4()],
                   "relationship": "x".repeat(51), "email": "nope", "user": uuid::Uuid::new_v4()}),
        )
        .await;
    bad.assert(400, Some("validation_error"));
    for field in ["first_name", "students", "relationship", "email", "user"] {
        assert!(
            bad.body["errors"][field].is_array(),
            "{field}: {}",
            bad.body
        );
    }
    let search = app.get(&format!("{path}?search=bRaV"), &f.admin).await;
    assert_eq!(search.body["count"], 1);
    // A student others reference (attendance, a guardian) is not really deleted.
    app.delete(
        &format!("/api/v1/school/students/{}/", f.student('b')),
        &f.admin,
    )
    .await
    .assert(409, Some("conflict"));
    app.delete(&format!("{path}{}/", f.guardian_of_b), &f.admin)
        .await
        .assert(204, None);
}

/// A guardian's children are cached with their roles (no query per request), yet a child
/// unlinked by any server process leaves the guardian's reads within the listener's poll,
/// in that process and in others, and a child linked again comes back.
#[tokio::test]
async fn a_child_unlinked_anywhere_leaves_the_guardians_reads() {
    let app = spawn_app().await;
    let f = family(&app).await;
    let a = f.student('a');
    let g = &f.guardian;
    let child = format!("/api/v1/school/students/{a}/");
    let other = spawn_app_on(app.db.clone()).await;
    // Both processes have the guardian's grants cached.
    app.get(&child, g).await.assert(200, None);
    other.get(&child, g).await.assert(200, None);
    let guardians = app
        .get("/api/v1/school/guardians/?page_size=100", &f.admin)
        .await;
    let id = guardians.body["results"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| {
            r["students"]
                .as_array()
                .is_some_and(|s| s.contains(&json!(a)))
        })
        .and_then(|r| r["id"].as_str())
        .expect("the guardian of a")
        .to_owned();
    let link = |students: Value| {
        let (other, admin, path) = (&other, &f.admin, format!("/api/v1/school/guardians/{id}/"));
        async move {
            other
                .patch(&path, admin, json!({ "students": students }))
                .await
                .assert(200, None);
        }
    };
    // Unlinked through the other process: refused here and there.
    link(json!([])).await;
    for server in [&app, &other] {
        assert!(
            server.until_status(&child, g, 404).await,
            "the unlinked child is no longer read"
        );
    }
    let students = app.get("/api/v1/school/students/", g).await;
    assert_eq!(students.assert(200, None).body["count"], 0);
    // Linked again: read again.
    link(json!([a])).await;
    for server in [&app, &other] {
        assert!(
            server.until_status(&child, g, 200).await,
            "the linked child is read again"
        );
    }
}
