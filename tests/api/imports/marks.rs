//! Imports of enrollments (by student and academic session, the active one by default)
//! and of one exam's marks (API.md 10).

use serde_json::{Value, json};

use crate::{
    helpers::{As, NewRecord, NewSession, TestApp, spawn_app, spawn_app_with},
    imports::spreadsheets::{RowError, XLSX, counts, csv, errors, imports, upload, workbook},
};

async fn session(app: &TestApp, who: &As, name: &str) -> String {
    NewSession::new(name, "2025-09-01", "2026-07-31")
        .create(app, who)
        .await
        .id
}

/// Enrollments as (student id, class id, session id, status), sorted.
async fn enrollments(app: &TestApp, who: &As) -> Vec<(Value, Value, Value, Value)> {
    let reply = app
        .get("/api/v1/school/enrollments/?page_size=200", who)
        .await;
    let mut all: Vec<_> = (reply.body["results"].as_array().expect("results").iter())
        .map(|e| {
            let f = |k: &str| e[k].clone();
            (
                f("student"),
                f("academic_class"),
                f("academic_session"),
                f("status"),
            )
        })
        .collect();
    all.sort_by_key(|e| e.clone().0.to_string() + &e.2.to_string());
    all
}

async fn student_class(app: &TestApp, who: &As, number: &str) -> Value {
    let reply = app
        .get(&format!("/api/v1/school/students/?search={number}"), who)
        .await;
    reply.body["results"][0]["academic_class"].clone()
}

#[tokio::test]
async fn enrollments_import_into_the_active_session_or_the_one_named() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let last_year = session(&app, &admin, "2024/25").await;
    let this_year = session(&app, &admin, "2025/26").await;
    csv(&app, &admin, "classes", false, "name,level\nOne,1\nTwo,2\n")
        .await
        .assert(200, None);
    let students = "admission_number,first_name,last_name\nE-1,Zoë,Ağaoğlu\nE-2,René,Dupré\n";
    csv(&app, &admin, "students", false, students)
        .await
        .assert(200, None);

    // No academic_session column: the active session. A student's class follows.
    let file = "student;academic_class\nE-1;One\nE-2;Two\n";
    let dry = csv(&app, &admin, "enrollments", true, file).await;
    assert_eq!(counts(&dry), (2, 2, 0, 0));
    assert!(enrollments(&app, &admin).await.is_empty());
    let done = csv(&app, &admin, "enrollments", false, file).await;
    assert_eq!(counts(&done), counts(&dry));
    let made = enrollments(&app, &admin).await;
    assert!(
        made.iter()
            .all(|e| e.2 == json!(this_year) && e.3 == "active")
    );
    let one = student_class(&app, &admin, "E-1").await;
    assert_eq!(made.iter().filter(|e| e.1 == one).count(), 1);
    let again = csv(&app, &admin, "enrollments", false, file).await;
    assert_eq!(counts(&again), (2, 0, 0, 2));
    let sheet = workbook(
        &[
            &["Student", "Academic_Class"],
            &["E-1", "One"],
            &["E-2", "Two"],
        ],
        None,
    );
    let same = upload(&app, &admin, &imports("enrollments", false), XLSX, sheet).await;
    assert_eq!(counts(&same), (2, 0, 0, 2));

    // Last year by id (the students' classes stay); a move this year updates.
    let file = format!(
        "student,academic_class,academic_session,status\n\
         E-1,One,{last_year},completed\nE-2,One,{last_year},withdrawn\nE-2,One,{this_year},\n"
    );
    let done = csv(&app, &admin, "enrollments", false, &file).await;
    assert_eq!(counts(&done), (3, 2, 1, 0));
    assert_eq!(student_class(&app, &admin, "E-1").await, one);
    assert_eq!(student_class(&app, &admin, "E-2").await, one);
    assert_eq!(enrollments(&app, &admin).await.len(), 4);

    let bad = format!(
        "student,academic_class,academic_session,status\n\
         E-9,One,{this_year},active\n\
         E-1,Nine,not-an-id,\n\
         E-1,One,{},done\n\
         E-2,One,{this_year},\n\
         E-2,Two,{this_year},\n\
         ,,{this_year},\n",
        uuid::Uuid::new_v4()
    );
    let before = enrollments(&app, &admin).await;
    let refused = csv(&app, &admin, "enrollments", false, &bad).await;
    assert_eq!(
        errors(&refused),
        vec![
            RowError::at(2, "student", "unknown_reference"),
            RowError::at(3, "academic_class", "unknown_reference"),
            RowError::at(3, "academic_session", "invalid"),
            RowError::at(4, "academic_session", "unknown_reference"),
            RowError::at(4, "status", "invalid"),
            RowError::at(6, "student", "duplicate_key"),
            RowError::at(7, "student", "required"),
            RowError::at(7, "academic_class", "required"),
        ]
    );
    assert_eq!(enrollments(&app, &admin).await, before, "all or nothing");
    let wrong = csv(&app, &admin, "enrollments", false, "code,name\nX,Y\n").await;
    assert_eq!(errors(&wrong), vec![RowError::at(1, None, "wrong_columns")]);
    let teacher = app.as_school_user("alpha", "teacher").await;
    csv(
        &app,
        &teacher,
        "enrollments",
        false,
        "student,academic_class\nE-1,One\n",
    )
    .await
    .assert(403, Some("permission_denied"));
}

#[tokio::test]
async fn without_an_active_session_each_row_says_so() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    csv(&app, &admin, "classes", false, "name\nOne\n")
        .await
        .assert(200, None);
    csv(
        &app,
        &admin,
        "students",
        false,
        "admission_number,first_name,last_name\nE-1,A,B\n",
    )
    .await
    .assert(200, None);
    let refused = csv(
        &app,
        &admin,
        "enrollments",
        false,
        "student,academic_class\nE-1,One\n",
    )
    .await;
    assert_eq!(
        errors(&refused),
        vec![RowError::at(2, None, "no_active_session")]
    );
}

/// The exam's live marks as (admission number, mark, comment), sorted.
async fn marks(app: &TestApp, who: &As, path: &str) -> Vec<(String, Option<i64>, Option<String>)> {
    let reply = app.get(&format!("{path}?page_size=200"), who).await;
    let mut all: Vec<_> = (reply.body["results"].as_array().expect("results").iter())
        .map(|m| {
            (
                m["studentadmissionnumber"]
                    .as_str()
                    .expect("studentadmissionnumber")
                    .to_owned(),
                m["mark"].as_i64(),
                m["comment"].as_str().map(str::to_owned),
            )
        })
        .collect();
    all.sort_by_key(|m| m.0.clone());
    all
}

#[tokio::test]
async fn an_exams_marks_import_as_the_marks_api_checks_them() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let fixture = app.exam_fixture(&admin, "MX").await;
    let kind = format!("exams/{}/marks", fixture.exam);
    csv(
        &app,
        &admin,
        "students",
        false,
        "admission_number,first_name,last_name\nM-1,A,B\nM-2,C,D\nM-3,E,F\n",
    )
    .await
    .assert(200, None);

    // A teacher imports (add_mark, change_mark); the subject column names the exam's.
    let teacher = app.as_school_user("alpha", "teacher").await;
    let file = "StudentAdmissionNumber;Mark;Comment;Subject\nM-1;71;Très bien;MX\nM-2;;absent;MX\n";
    let dry = csv(&app, &teacher, &kind, true, file).await;
    assert_eq!(counts(&dry), (2, 2, 0, 0));
    assert_eq!(dry.body["kind"], "marks");
    assert!(marks(&app, &admin, &fixture.marks()).await.is_empty());
    let done = csv(&app, &teacher, &kind, false, file).await;
    assert_eq!(counts(&done), counts(&dry));
    let written = marks(&app, &admin, &fixture.marks()).await;
    assert_eq!(
        written,
        vec![
            ("M-1".into(), Some(71), Some("Très bien".into())),
            ("M-2".into(), None, Some("absent".into())),
        ]
    );
    let again = csv(&app, &teacher, &kind, false, file).await;
    assert_eq!(counts(&again), (2, 0, 0, 2));
    let sheet = workbook(
        &[
            &["studentadmissionnumber", "mark", "comment"],
            &["M-1", "71", "Très bien"],
        ],
        None,
    );
    let same = upload(&app, &teacher, &imports(&kind, false), XLSX, sheet).await;
    assert_eq!(counts(&same), (1, 0, 0, 1));

    // A changed mark updates; a student left out keeps theirs; a new one is created.
    let file = "studentadmissionnumber,mark\nM-2,55\nM-3,90\n";
    let done = csv(&app, &teacher, &kind, false, file).await;
    assert_eq!(counts(&done), (2, 1, 1, 0));
    let written = marks(&app, &admin, &fixture.marks()).await;
    assert_eq!(written.len(), 3);
    assert_eq!(
        (&written[0].1, &written[1].1, &written[1].2),
        (&Some(71), &Some(55), &Some("absent".to_owned()))
    );

    let long = "x".repeat(256);
    let bad = format!(
        "studentadmissionnumber,mark,symbol,subject\n\
         M-9,10,,\n\
         M-1,ten,,\n\
         M-2,10,{long},\n\
         M-3,10,,ENG\n\
         M-1,12,,MX\n\
         ,1,,\n"
    );
    let refused = csv(&app, &teacher, &kind, false, &bad).await;
    assert_eq!(
        errors(&refused),
        vec![
            RowError::at(2, "studentadmissionnumber", "unknown_reference"),
            RowError::at(3, "mark", "invalid"),
            RowError::at(4, "symbol", "too_long"),
            RowError::at(5, "subject", "wrong_exam"),
            RowError::at(7, "studentadmissionnumber", "required"),
        ]
    );
    assert_eq!(
        marks(&app, &admin, &fixture.marks()).await,
        written,
        "all or nothing"
    );
    let wrong = csv(
        &app,
        &teacher,
        &kind,
        false,
        "admission_number,first_name,last_name\nM-1,A,B\n",
    )
    .await;
    assert_eq!(errors(&wrong), vec![RowError::at(1, None, "wrong_columns")]);
    assert!(
        wrong.body["detail"]
            .as_str()
            .expect("detail")
            .contains("studentadmissionnumber")
    );

    // An exam that is not one; a caller without the marks permissions.
    let missing = format!("exams/{}/marks", uuid::Uuid::new_v4());
    csv(&app, &teacher, &missing, false, file)
        .await
        .assert(404, Some("not_found"));
    csv(&app, &teacher, "exams/nope/marks", false, file)
        .await
        .assert(400, None);
    let norole = app.as_school_user("alpha", "norole").await;
    csv(&app, &norole, &kind, false, file)
        .await
        .assert(403, Some("permission_denied"));
}

#[tokio::test]
async fn marks_files_past_the_limits_are_413() {
    let app = spawn_app_with(|config| {
        config.import_max_rows = 2;
        config.import_max_bytes = 120;
    })
    .await;
    let admin = app.as_school_user("alpha", "admin").await;
    let fixture = app.exam_fixture(&admin, "LX").await;
    let kind = format!("exams/{}/marks", fixture.exam);
    let three = "studentadmissionnumber,mark\nA,1\nB,2\nC,3\n";
    csv(&app, &admin, &kind, false, three)
        .await
        .assert(413, Some("payload_too_large"));
    let big = format!("studentadmissionnumber,mark\nA,1\n{}\n", "x".repeat(200));
    csv(&app, &admin, &kind, false, &big)
        .await
        .assert(413, Some("payload_too_large"));
    for kind in ["teachers", "teacher-assignments", "enrollments"] {
        csv(&app, &admin, kind, false, three)
            .await
            .assert(413, Some("payload_too_large"));
    }
}
