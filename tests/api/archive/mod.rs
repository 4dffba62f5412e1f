//! One school as a unit: `tenant export`, `tenant import` and the export endpoint.
//!
//! `fill_school` gives `alpha` a record of every kind; `walk` reads every GET answer of the
//! school API (every collection with deleted records, every record, every singleton, as the
//! OpenAPI document lists them), so a restored school can be compared with the original
//! answer for answer.

mod consistency;
mod refusals;
mod round_trip;
mod spool;
mod trust;

use std::{collections::BTreeMap, path::PathBuf};

use diesel::{Connection, QueryableByName, RunQueryDsl, pg::PgConnection, sql_types::BigInt};
use serde_json::{Value, json};

use crate::helpers::{
    ARCHIVE_SIGNING_KEY, As, NewApiKey, NewClass, NewDepartment, NewGradeComment, NewMark,
    NewRecord, NewRole, NewRoleAssignment, NewStudent, NewTeacherAssignment, NewUser, PASSWORD,
    TestApp, cli, item, text,
};

/// The users of `alpha` after `fill_school`, as they log in.
pub const ALPHA_LOGINS: [&str; 5] = [
    "admin@alpha.test",
    "teacher@alpha.test",
    "norole@alpha.test",
    "mail.only@alpha.test",
    "+15550107777",
];

/// A fresh path in the test's scratch folder.
pub fn scratch(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("{}-{name}", uuid::Uuid::new_v4().simple()))
}

/// The environment of the platform the tests export and import on: its archive key.
pub const SIGNED: [(&str, &str); 1] = [("ARCHIVE_SIGNING_KEY", ARCHIVE_SIGNING_KEY)];

/// `school-service <command>` on `db_url` (with the platform's archive key), which must
/// succeed; answers its output.
#[track_caller]
pub fn cli_ok(db_url: &str, command: &str) -> String {
    let (ok, out, err) = cli(db_url, command, &SIGNED);
    assert!(ok, "`{command}` failed: {err}");
    out
}

/// `school-service <command>` on `db_url` (with the platform's archive key), which must
/// fail; answers its error line.
#[track_caller]
pub fn cli_refused(db_url: &str, command: &str) -> String {
    let (ok, out, err) = cli(db_url, command, &SIGNED);
    assert!(!ok, "`{command}` succeeded: {out}");
    let line = err.trim().to_owned();
    assert_eq!(line.lines().count(), 1, "one line: {line}");
    line
}

/// Exports `schema` to a new file; answers its path.
pub fn export(db_url: &str, schema: &str, extra: &str) -> PathBuf {
    let path = scratch(&format!("{schema}.tar.gz"));
    cli_ok(
        db_url,
        &format!(
            "tenant export --schema {schema} --out {} {extra}",
            path.display()
        ),
    );
    path
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// Rows of the platform tables and the number of schemas: what an import writes to.
pub fn platform_counts(db_url: &str) -> Vec<i64> {
    let mut conn = PgConnection::establish(db_url).expect("connect");
    [
        "SELECT count(*) AS n FROM public.tenants",
        "SELECT count(*) AS n FROM public.domains",
        "SELECT count(*) AS n FROM public.users",
        "SELECT count(*) AS n FROM public.api_keys",
        "SELECT count(*) AS n FROM pg_namespace",
    ]
    .iter()
    .map(|sql| {
        diesel::sql_query(*sql)
            .get_result::<Count>(&mut conn)
            .expect("count")
            .n
    })
    .collect()
}

/// Records of every kind in `alpha`: sessions, exams and marks (one soft-deleted),
/// students, classes and subjects (some soft-deleted), a department with teachers,
/// teacher assignments, grade comments, a session setup, all three settings, a custom
/// role and its assignment, users with an e-mail only and a phone only, and an API key.
/// Answers the key.
pub async fn fill_school(app: &TestApp) -> String {
    let admin = app.as_school_user("alpha", "admin").await;
    let teacher = app.as_school_user("alpha", "teacher").await;
    let root = app.as_root().await;
    let ok = |reply: crate::helpers::Reply| {
        assert!(reply.status.is_success(), "{}", reply.body);
        reply.body
    };
    let f = app.exam_fixture(&admin, "rt").await;
    let (class, marks) = (text(&f.class), f.marks());
    for (number, mark) in [("ADM-1", 70), ("ADM-2", 55), ("ADM-3", 41)] {
        NewStudent::new(number, "S", number)
            .in_class(class)
            .create(app, &admin)
            .await;
        NewMark {
            marks: &marks,
            studentadmissionnumber: number,
            mark: Some(mark),
            symbol: Some("B"),
            comment: Some("tab\there\nnew line \\ done"),
            ..Default::default()
        }
        .create(app, &admin)
        .await;
    }
    let written = ok(app.get(&marks, &admin).await);
    let deleted = json!({"is_deleted": true});
    let mark = item(&marks, text(&written["results"][0]["id"]));
    ok(app.patch(&mark, &admin, deleted.clone()).await);
    let gone = NewStudent::new("OLD-1", "Old", "Timer")
        .create(app, &admin)
        .await;
    ok(app.patch(&gone.path(), &admin, deleted.clone()).await);
    let closed = NewClass {
        name: "Closed",
        level: Some(9),
    }
    .create(app, &admin)
    .await;
    ok(app.patch(&closed.path(), &admin, deleted).await);
    let hod = app
        .me(&teacher)
        .await
        .teacher
        .expect("a teacher profile")
        .id;
    NewDepartment {
        name: "Sciences",
        hod: &hod,
        subject: text(&f.subject),
        teachers: Some(&[&hod]),
    }
    .create(app, &admin)
    .await;
    NewTeacherAssignment {
        teacher: &hod,
        academic_class: class,
        subject: text(&f.subject),
    }
    .create(app, &admin)
    .await;
    NewGradeComment::new("A", 80..=100, "Excellent")
        .create(app, &teacher)
        .await;
    // The settings have no typed requests: each is written once, here and in its own tests.
    ok(app
        .post(
            "/api/v1/school/session-setup/",
            &admin,
            json!({"session_type": "academic_session", "status": "pending", "current_step": 2}),
        )
        .await);
    ok(app.post("/api/v1/school/general-settings/", &admin, json!({"school_name": "Alpha High", "address": "1 Road", "phone": "+1 555", "email": "office@alpha.test"})).await);
    ok(app
        .post(
            "/api/v1/school/academic-settings/",
            &admin,
            json!({"grading_scale": [{"symbol": "A", "min": 80, "max": 100},
                                     {"symbol": "F", "min": 0, "max": 79}]}),
        )
        .await);
    ok(app
        .patch(
            "/api/v1/school/report-settings/",
            &admin,
            json!({"footer_text": "Ünïcode — footer", "show_position": false}),
        )
        .await);
    let role = NewRole::new("subject-viewer", &["view_subject"])
        .create(app, &admin)
        .await;
    let norole = app.me(&app.as_school_user("alpha", "norole").await).await;
    NewRoleAssignment {
        user: &norole.user.id,
        role: &role.id,
    }
    .create(app, &admin)
    .await;
    let alpha = app.tenant_id(&root, "alpha").await;
    let user = |role: &'static [&'static str]| NewUser {
        password: PASSWORD,
        client: Some(&alpha),
        roles: Some(role),
        first_name: Some("Só"),
        ..Default::default()
    };
    NewUser {
        email: Some("Mail.Only@alpha.test"),
        ..user(&["teacher"])
    }
    .create(app, &root)
    .await;
    NewUser {
        phone: Some("+1 555 010 7777"),
        ..user(&["office"])
    }
    .create(app, &root)
    .await;
    NewApiKey::named("reporting")
        .of_school(&alpha)
        .read_only()
        .create(app, &root)
        .await
        .key
}

/// Every GET answer of the school API as `who` sees it, by path (see the module docs),
/// and the platform's record of the school (without its Citus node) and its users as
/// `root` sees them.
pub async fn walk(app: &TestApp, who: &As, root: &As, tenant_id: &str) -> BTreeMap<String, Value> {
    let doc = app.get("/api/v1/schema/", &As::main()).await.body;
    let mut answers = BTreeMap::new();
    let mut templates: Vec<(String, Vec<String>)> = Vec::new();
    for (path, ops) in doc["paths"].as_object().expect("paths") {
        let Some(get) = ops.get("get") else { continue };
        // History answers only for a record or a student (`?record=`, `?student=`).
        if !path.starts_with("/api/v1/school/") || path == "/api/v1/school/history/" {
            continue;
        }
        let query: Vec<String> = get["parameters"]
            .as_array()
            .map(|ps| {
                ps.iter()
                    .filter(|p| p["in"] == "query")
                    .filter_map(|p| p["name"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        templates.push((path.clone(), query));
    }
    let mut ids: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // Collections before the paths that continue them.
    templates.sort_by_key(|(path, _)| path.matches('{').count());
    for (template, query) in templates {
        for path in expand(&template, &ids) {
            let mut params = Vec::new();
            if query.iter().any(|q| q == "page_size") {
                params.push("page_size=200");
            }
            if query.iter().any(|q| q == "include_deleted") {
                params.push("include_deleted=true");
            }
            let url = if params.is_empty() {
                path.clone()
            } else {
                format!("{path}?{}", params.join("&"))
            };
            let reply = app.get(&url, who).await;
            assert_eq!(reply.status.as_u16(), 200, "GET {url}: {}", reply.body);
            if let Some(results) = reply.body["results"].as_array() {
                let found = results
                    .iter()
                    .filter_map(|r| r["id"].as_str().map(str::to_owned))
                    .collect();
                ids.insert(path.clone(), found);
            }
            let mut body = reply.body;
            // Signing in again after the import moves `last_login`: the walk's own doing.
            if path.starts_with("/api/v1/school/users/") {
                forget_last_login(&mut body);
            }
            answers.insert(url, body);
        }
    }
    for url in [
        format!("/api/v1/system/tenants/{tenant_id}/"),
        format!("/api/v1/system/users/?client={tenant_id}&page_size=200"),
    ] {
        let mut reply = app.get(&url, root).await;
        assert_eq!(reply.status.as_u16(), 200, "GET {url}: {}", reply.body);
        // Where the school lives (on Citus) is no part of it.
        if let Some(record) = reply.body.as_object_mut() {
            record.remove("node");
        }
        answers.insert(url, reply.body);
    }
    answers
}

fn forget_last_login(body: &mut Value) {
    if let Some(record) = body.as_object_mut() {
        record.remove("last_login");
    }
    if let Some(results) = body["results"].as_array_mut() {
        results.iter_mut().for_each(forget_last_login);
    }
}

/// The concrete paths of `template`: each `{placeholder}` replaced by every id the
/// collection before it listed.
fn expand(template: &str, ids: &BTreeMap<String, Vec<String>>) -> Vec<String> {
    let Some(open) = template.find('{') else {
        return vec![template.to_owned()];
    };
    let close = open + template[open..].find('}').expect("closing brace");
    let (collection, rest) = (&template[..open], &template[close + 1..]);
    let mut paths = Vec::new();
    for prefix in expand(collection, ids) {
        for id in ids.get(&prefix).into_iter().flatten() {
            paths.extend(expand(&format!("{prefix}{id}{rest}"), ids));
        }
    }
    paths
}

/// Asserts two walks are the same, naming the first path that differs.
#[track_caller]
pub fn assert_same_answers(before: &BTreeMap<String, Value>, after: &BTreeMap<String, Value>) {
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "the same paths"
    );
    for (path, answer) in before {
        assert_eq!(answer, &after[path], "GET {path}");
    }
}
