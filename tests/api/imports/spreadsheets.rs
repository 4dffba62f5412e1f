//! Spreadsheet imports (API.md 10): CSV and XLSX files of classes, subjects and students,
//! matched by natural key, all-or-nothing, every bad row reported.

use rust_xlsxwriter::{Formula, Workbook};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::helpers::{As, Reply, TestApp, spawn_app, spawn_app_with};

pub const XLSX: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

pub fn imports(kind: &str, dry_run: bool) -> String {
    format!("/api/v1/school/imports/{kind}/?dry_run={dry_run}")
}

pub async fn upload(
    app: &TestApp,
    who: &As,
    path: &str,
    content_type: &str,
    body: Vec<u8>,
) -> Reply {
    let mut req = app
        .client
        .post(format!("{}{}", app.address, path))
        .header("Host", &who.host)
        .header("Content-Type", content_type)
        .body(body);
    if let Some(token) = &who.token {
        req = req.bearer_auth(token);
    }
    TestApp::read(req.send().await.expect("request")).await
}

pub async fn csv(app: &TestApp, who: &As, kind: &str, dry_run: bool, text: &str) -> Reply {
    upload(
        app,
        who,
        &imports(kind, dry_run),
        "text/csv",
        text.as_bytes().to_vec(),
    )
    .await
}

/// An import's answer as (rows, created, updated, unchanged).
pub fn counts(reply: &Reply) -> (i64, i64, i64, i64) {
    #[derive(Deserialize)]
    struct Counts {
        rows: i64,
        created: i64,
        updated: i64,
        unchanged: i64,
    }
    let c: Counts = serde_json::from_value(reply.body.clone())
        .unwrap_or_else(|err| panic!("unexpected import answer ({err}): {}", reply.body));
    (c.rows, c.created, c.updated, c.unchanged)
}

/// One refused row of an import: its number, the column (none for the whole file) and
/// the code.
#[derive(Deserialize, Debug, PartialEq)]
pub struct RowError {
    pub row: i64,
    pub column: Option<String>,
    pub code: String,
}

impl RowError {
    pub fn at<'a>(row: i64, column: impl Into<Option<&'a str>>, code: &str) -> Self {
        Self {
            row,
            column: column.into().map(str::to_owned),
            code: code.into(),
        }
    }
}

/// A refused import's errors, each with a message.
pub fn errors(reply: &Reply) -> Vec<RowError> {
    reply.assert(400, Some("validation_error"));
    (reply.body["errors"].as_array().expect("errors").iter())
        .map(|e| {
            assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()), "{e}");
            serde_json::from_value(e.clone())
                .unwrap_or_else(|err| panic!("unexpected error ({err}): {e}"))
        })
        .collect()
}

/// The students of the school as (admission number, first, last, class id).
async fn students(app: &TestApp, who: &As) -> Vec<(String, String, String, Value)> {
    let reply = app.get("/api/v1/school/students/?page_size=200", who).await;
    let mut all: Vec<_> = (reply.body["results"].as_array().expect("results").iter())
        .map(|s| {
            let text = |k: &str| s[k].as_str().expect(k).to_owned();
            (
                text("admission_number"),
                text("first_name"),
                text("last_name"),
                s["academic_class"].clone(),
            )
        })
        .collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

#[tokio::test]
async fn a_students_file_imports_once_and_again_changes_nothing() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let classes = "\u{feff}Name;Level\r\nFörm 1;1\r\nForm 2;2\r\n;\r\n\r\n";
    let done = csv(&app, &admin, "classes", false, classes).await;
    done.assert(200, None);
    assert_eq!(counts(&done), (2, 2, 0, 0));
    assert_eq!(done.body["kind"], "classes");

    let file = "admission_number,first_name,last_name,academic_class\n\
                A-1,Zoë,Ağaoğlu,Förm 1\nA-2,René,Dupré,Form 2\nA-3,Łukasz,Nowak,\n";
    let dry = csv(&app, &admin, "students", true, file).await;
    dry.assert(200, None);
    assert_eq!(dry.body["dry_run"], true);
    assert_eq!(counts(&dry), (3, 3, 0, 0));
    assert!(
        students(&app, &admin).await.is_empty(),
        "a dry run writes nothing"
    );

    let done = csv(&app, &admin, "students", false, file).await;
    done.assert(200, None);
    assert_eq!(
        counts(&done),
        counts(&dry),
        "the dry run counted what the import did"
    );
    let before = students(&app, &admin).await;
    assert_eq!(before.len(), 3);
    assert_eq!(before[0].1, "Zoë");
    assert!(before[2].3.is_null());

    let again = csv(&app, &admin, "students", false, file).await;
    assert_eq!(counts(&again), (3, 0, 0, 3));
    assert_eq!(students(&app, &admin).await, before);

    // A changed row updates its record; a row missing from the file deletes nothing.
    let changed = "admission_number,first_name,last_name\nA-2,Renée,Dupré\n";
    let done = csv(&app, &admin, "students", false, changed).await;
    assert_eq!(counts(&done), (1, 0, 1, 0));
    let after = students(&app, &admin).await;
    assert_eq!(after.len(), 3);
    assert_eq!(
        (after[1].1.as_str(), &after[1].3),
        ("Renée", &before[1].3),
        "class kept: no column"
    );
}

#[tokio::test]
async fn every_bad_row_is_reported_and_nothing_is_written() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    csv(&app, &admin, "classes", false, "name,level\nOne,1\n")
        .await
        .assert(200, None);
    let long = "x".repeat(51);
    let file = format!(
        "admission_number,first_name,last_name,academic_class\n\
         B-1,Ann,Lee,One\n\
         B-2,,Lee,One\n\
         {long},Bob,Lee,One\n\
         B-4,Cid,Lee,Nowhere\n\
         B-1,Dee,Lee,One\n"
    );
    let refused = csv(&app, &admin, "students", false, &file).await;
    refused.assert(400, Some("validation_error"));
    assert_eq!(
        errors(&refused),
        vec![
            RowError::at(3, "first_name", "required"),
            RowError::at(4, "admission_number", "too_long"),
            RowError::at(5, "academic_class", "unknown_reference"),
            RowError::at(6, "admission_number", "duplicate_key"),
        ]
    );
    assert!(refused.body["errors"][0]["message"].is_string());
    assert!(students(&app, &admin).await.is_empty(), "all or nothing");

    // Bad levels, a file of another kind's columns, a file that is not UTF-8.
    let refused = csv(
        &app,
        &admin,
        "classes",
        false,
        "name,level\nTwo,two\nThree,101\n",
    )
    .await;
    refused.assert(400, Some("validation_error"));
    assert_eq!(refused.body["errors"].as_array().expect("errors").len(), 2);
    let wrong = csv(&app, &admin, "students", false, "name,level\nOne,1\n").await;
    wrong.assert(400, Some("validation_error"));
    let detail = wrong.body["detail"].as_str().expect("detail");
    assert!(
        detail.contains("admission_number") && detail.contains("name, level"),
        "{detail}"
    );
    assert_eq!(wrong.body["errors"][0]["row"], 1);
    assert_eq!(wrong.body["errors"][0]["column"], Value::Null);
    let latin1 = upload(
        &app,
        &admin,
        &imports("classes", false),
        "text/csv",
        b"name\nF\xf6rm\n".to_vec(),
    )
    .await;
    latin1.assert(400, Some("validation_error"));
    assert_eq!(latin1.body["errors"][0]["row"], 2);

    // Other content types; a kind that is not one; a caller without the permissions.
    let json = upload(
        &app,
        &admin,
        &imports("classes", false),
        "application/json",
        b"{}".to_vec(),
    )
    .await;
    json.assert(415, Some("unsupported_media_type"));
    app.post_empty("/api/v1/school/imports/rooms/", &admin)
        .await
        .assert(404, Some("not_found"));
    let teacher = app.as_school_user("alpha", "teacher").await;
    csv(&app, &teacher, "classes", false, "name\nX\n")
        .await
        .assert(403, Some("permission_denied"));
    app.get("/api/v1/school/classes/", &admin).await;
}

pub fn workbook(rows: &[&[&str]], formula_row: Option<(u32, &str, &str)>) -> Vec<u8> {
    let mut book = Workbook::new();
    let sheet = book.add_worksheet();
    for (r, row) in rows.iter().enumerate() {
        for (c, cell) in row.iter().enumerate() {
            match cell.parse::<f64>() {
                Ok(n) => sheet.write_number(r as u32, c as u16, n).map(|_| ()),
                Err(_) => sheet.write_string(r as u32, c as u16, *cell).map(|_| ()),
            }
            .expect("cell");
        }
    }
    if let Some((row, formula, result)) = formula_row {
        sheet
            .write_formula(row, 1, Formula::new(formula).set_result(result))
            .expect("formula");
    }
    book.save_to_buffer().expect("xlsx")
}

#[tokio::test]
async fn xlsx_and_csv_of_the_same_data_give_the_same_records() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    // Level 2 of the second class is a formula (=1+1) whose last value Excel kept.
    let file = workbook(
        &[&["Name", "Level"], &["Förm 1", "1"], &["Form 2"], &[], &[]],
        Some((2, "=1+1", "2")),
    );
    let done = upload(&app, &admin, &imports("classes", false), XLSX, file).await;
    done.assert(200, None);
    assert_eq!(counts(&done), (2, 2, 0, 0));
    let classes = app.get("/api/v1/school/classes/", &admin).await;
    let levels: Vec<(Value, Value)> = (classes.body["results"].as_array().expect("results").iter())
        .map(|c| (c["name"].clone(), c["level"].clone()))
        .collect();
    assert_eq!(
        levels,
        vec![(json!("Förm 1"), json!(1)), (json!("Form 2"), json!(2))]
    );
    // The same rows as CSV change nothing: the same records.
    let again = csv(
        &app,
        &admin,
        "classes",
        false,
        "name;level\nFörm 1;1\nForm 2;2\n",
    )
    .await;
    assert_eq!(counts(&again), (2, 0, 0, 2));

    // A bad cell of a sheet is reported at the row a spreadsheet shows.
    let bad = workbook(&[&["code", "name"], &["MAT", "Maths"], &["", "Art"]], None);
    let refused = upload(&app, &admin, &imports("subjects", false), XLSX, bad).await;
    refused.assert(400, Some("validation_error"));
    assert_eq!(refused.body["errors"][0]["row"], 3);
    assert_eq!(refused.body["errors"][0]["column"], "code");
    let garbage = upload(
        &app,
        &admin,
        &imports("subjects", false),
        XLSX,
        b"not a zip".to_vec(),
    )
    .await;
    garbage.assert(400, Some("validation_error"));
}

#[tokio::test]
async fn files_past_the_limits_are_413() {
    let app = spawn_app_with(|config| {
        config.import_max_rows = 3;
        config.import_max_bytes = 200;
    })
    .await;
    let admin = app.as_school_user("alpha", "admin").await;
    let four = "name\nA\nB\nC\nD\n";
    csv(&app, &admin, "classes", false, four)
        .await
        .assert(413, Some("payload_too_large"));
    csv(&app, &admin, "classes", false, "name\nA\nB\nC\n\n\n")
        .await
        .assert(200, None);
    let big = format!("name\n{}\n", "x".repeat(300));
    csv(&app, &admin, "classes", false, &big)
        .await
        .assert(413, Some("payload_too_large"));
    // Past MAX_BODY_BYTES but within IMPORT_MAX_BYTES is fine.
    let app = spawn_app_with(|config| config.max_body_bytes = 100).await;
    let admin = app.as_school_user("alpha", "admin").await;
    let names: String = (0..20).map(|n| format!("Class number {n}\n")).collect();
    csv(&app, &admin, "classes", false, &format!("name\n{names}"))
        .await
        .assert(200, None);
}
