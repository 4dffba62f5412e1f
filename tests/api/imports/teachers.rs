//! Imports of teachers (accounts made as the users API makes them, matched by e-mail or
//! staff number) and of teacher assignments (API.md 10).

use serde_json::{Value, json};

use crate::{
    helpers::{As, PASSWORD, Reply, TestApp, spawn_app},
    imports::spreadsheets::{XLSX, counts, csv, imports, upload, workbook},
};

const USERS: &str = "/api/v1/school/users/";

/// Each error as (row, column, code).
pub fn errors(reply: &Reply) -> Vec<(Value, Value, Value)> {
    reply.assert(400, Some("validation_error"));
    (reply.body["errors"].as_array().expect("errors").iter())
        .map(|e| {
            assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()), "{e}");
            (e["row"].clone(), e["column"].clone(), e["code"].clone())
        })
        .collect()
}

/// The school's teacher profiles as (name, staff number, e-mail of the user), sorted.
async fn teachers(app: &TestApp, who: &As) -> Vec<(String, Value, Value)> {
    let users = app.get(&format!("{USERS}?page_size=200"), who).await;
    let list = app.get("/api/v1/school/teachers/?page_size=200", who).await;
    let mut all: Vec<_> = (list.body["results"].as_array().expect("results").iter())
        .map(|t| {
            let user = (users.body["results"].as_array().expect("users").iter())
                .find(|u| u["id"] == t["user"])
                .expect("the teacher's user");
            (
                t["name"].as_str().expect("name").to_owned(),
                t["staff_number"].clone(),
                user["email"].clone(),
            )
        })
        .collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

async fn office_of_alpha(app: &TestApp, admin: &As) -> As {
    let body = json!({"email": "office@alpha.test", "password": PASSWORD, "first_name": "Olive",
                      "last_name": "Office", "roles": ["office"]});
    app.post(USERS, admin, body).await.assert(201, None);
    app.as_school_user_at("alpha", "office@alpha.test").await
}

const TEACHERS: &str = "first_name;last_name;email;staff_number\n\
    Ada;Łovelace;ada@alpha.test;S-1\n\
    teacher;Test;TEACHER@alpha.test;S-2\n\
    Bo;Ng;;S-3\n";

#[tokio::test]
async fn a_teachers_file_makes_accounts_once_and_matches_by_email_or_staff_number() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let office = office_of_alpha(&app, &admin).await;
    let before = teachers(&app, &admin).await;

    // Bo has neither an e-mail nor an existing staff number: no account can be made.
    let refused = csv(&app, &office, "teachers", true, TEACHERS).await;
    assert_eq!(
        errors(&refused),
        vec![(json!(4), json!("email"), json!("required"))]
    );
    let file = TEACHERS.replace("Bo;Ng;;S-3", "Bo;Ng;bo@alpha.test;S-3");
    let dry = csv(&app, &office, "teachers", true, &file).await;
    assert_eq!(counts(&dry), (json!(3), json!(2), json!(1), json!(0)));
    assert_eq!(
        teachers(&app, &admin).await,
        before,
        "a dry run writes nothing"
    );

    let done = csv(&app, &office, "teachers", false, &file).await;
    done.assert(200, None);
    assert_eq!(counts(&done), counts(&dry));
    assert_eq!(done.body["kind"], "teachers");
    let after = teachers(&app, &admin).await;
    assert_eq!(
        after,
        vec![
            ("Ada Łovelace".into(), json!("S-1"), json!("ada@alpha.test")),
            ("Bo Ng".into(), json!("S-3"), json!("bo@alpha.test")),
            (
                "teacher Test".into(),
                json!("S-2"),
                json!("teacher@alpha.test")
            ),
        ]
    );
    // The account is made as the users API makes it: the teacher role, no password.
    let ada = app.get(&format!("{USERS}?search=ada@"), &admin).await;
    assert_eq!(ada.body["results"][0]["roles"], json!(["teacher"]));
    assert!(ada.body["results"][0]["teacher"].is_string());
    let login = app
        .post(
            "/api/v1/school/auth/login/",
            &As::school("alpha"),
            json!({"identifier": "ada@alpha.test", "password": PASSWORD}),
        )
        .await;
    login.assert(401, None);

    // Again: nothing changes. In XLSX: the same records.
    let again = csv(&app, &office, "teachers", false, &file).await;
    assert_eq!(counts(&again), (json!(3), json!(0), json!(0), json!(3)));
    let sheet = workbook(
        &[
            &["First_Name", "Last_Name", "Email", "Staff_Number"],
            &["Ada", "Łovelace", "ada@alpha.test", "S-1"],
            &["Bo", "Ng", "bo@alpha.test", "S-3"],
        ],
        None,
    );
    let same = upload(&app, &office, &imports("teachers", false), XLSX, sheet).await;
    assert_eq!(counts(&same), (json!(2), json!(0), json!(0), json!(2)));
    assert_eq!(teachers(&app, &admin).await, after);

    // By staff number alone: a new staff number for Ada by e-mail, a renamed Bo by staff
    // number. The office may not rename an account it could not change (API.md 12).
    let renamed = "first_name,last_name,staff_number\nBo,Ngata,S-3\n";
    let refused = csv(&app, &office, "teachers", false, renamed).await;
    assert_eq!(
        errors(&refused),
        vec![(json!(2), json!("last_name"), json!("permission_denied"))]
    );
    let done = csv(&app, &admin, "teachers", false, renamed).await;
    assert_eq!(counts(&done), (json!(1), json!(0), json!(1), json!(0)));
    let moved = "first_name,last_name,email,staff_number\nAda,Łovelace,ada@alpha.test,S-10\n";
    let done = csv(&app, &office, "teachers", false, moved).await;
    assert_eq!(counts(&done), (json!(1), json!(0), json!(1), json!(0)));
    let now = teachers(&app, &admin).await;
    assert_eq!(
        (&now[0].1, &now[1].0),
        (&json!("S-10"), &"Bo Ngata".to_owned())
    );
    assert_eq!(now.len(), 3, "nothing deleted, nothing duplicated");
}

#[tokio::test]
async fn bad_teacher_rows_are_all_reported_and_nothing_is_written() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let before = teachers(&app, &admin).await;
    let file = "first_name,last_name,email,phone,staff_number\n\
                Ann,Lee,ann@alpha.test,,A-1\n\
                Ann,Lee,not-an-email,,\n\
                Bea,Ray,teacher@beta.test,,\n\
                Cy,Dee,ann@alpha.test,,\n\
                ,Eve,eve@alpha.test,12,\n\
                Fay,Gee,fay@alpha.test,,A-1\n\
                teacher,Test,teacher@alpha.test,,A-1\n\
                Gil,Hay,gil@alpha.test,+1 555 0100,\n\
                Hal,Ide,hal@alpha.test,+15550100,\n";
    let refused = csv(&app, &admin, "teachers", false, file).await;
    assert_eq!(
        errors(&refused),
        vec![
            (json!(3), json!("email"), json!("invalid")),
            (json!(4), json!("email"), json!("taken")),
            (json!(5), json!("email"), json!("duplicate_key")),
            (json!(6), json!("first_name"), json!("required")),
            (json!(6), json!("phone"), json!("invalid")),
            (json!(7), json!("staff_number"), json!("duplicate_key")),
            (json!(8), json!("staff_number"), json!("duplicate_key")),
            (json!(10), json!("phone"), json!("duplicate_key")),
        ]
    );
    assert_eq!(teachers(&app, &admin).await, before, "all or nothing");

    // A file without any key column, or of another kind's columns, is refused in a sentence.
    for file in [
        "first_name,last_name,phone\nAnn,Lee,+15550100\n",
        "admission_number,first_name,last_name\nA-1,Ann,Lee\n",
    ] {
        let wrong = csv(&app, &admin, "teachers", false, file).await;
        assert_eq!(
            errors(&wrong),
            vec![(json!(1), json!(null), json!("wrong_columns"))]
        );
        let detail = wrong.body["detail"].as_str().expect("detail");
        assert!(detail.contains("email or staff_number"), "{detail}");
    }
    // Making accounts needs add_user besides the teacher profile permissions.
    let teacher = app.as_school_user("alpha", "teacher").await;
    csv(&app, &teacher, "teachers", false, TEACHERS)
        .await
        .assert(403, Some("permission_denied"));
}

#[tokio::test]
async fn teacher_assignments_are_matched_by_teacher_class_and_subject() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    csv(&app, &admin, "classes", false, "name\nForm 1\nForm 2\n")
        .await
        .assert(200, None);
    csv(
        &app,
        &admin,
        "subjects",
        false,
        "code,name\nMAT,Maths\nENG,English\n",
    )
    .await
    .assert(200, None);
    let staff = "first_name,last_name,email,staff_number\nteacher,Test,teacher@alpha.test,T-1\n\
                 Dup,One,dup1@alpha.test,D-1\nDup,Two,dup2@alpha.test,D-1\n";
    // D-1 twice in one file is refused; given to two teachers by hand, it is ambiguous as a
    // reference.
    assert_eq!(
        csv(&app, &admin, "teachers", false, staff).await.status,
        400
    );
    let staff = staff.replace("dup2@alpha.test,D-1", "dup2@alpha.test,D-2");
    csv(&app, &admin, "teachers", false, &staff)
        .await
        .assert(200, None);
    let two = app.get(&format!("{USERS}?search=dup2@"), &admin).await;
    let profile = two.body["results"][0]["teacher"]
        .as_str()
        .expect("profile")
        .to_owned();
    app.patch(
        &format!("/api/v1/school/teachers/{profile}/"),
        &admin,
        json!({"staff_number": "D-1"}),
    )
    .await
    .assert(200, None);

    let file = "teacher;academic_class;subject\n\
                teacher@alpha.test;Form 1;MAT\n\
                T-1;Form 2;MAT\n\
                T-1;Form 1;ENG\n";
    let dry = csv(&app, &admin, "teacher-assignments", true, file).await;
    assert_eq!(counts(&dry), (json!(3), json!(3), json!(0), json!(0)));
    let done = csv(&app, &admin, "teacher-assignments", false, file).await;
    assert_eq!(counts(&done), counts(&dry));
    let listed = app
        .get("/api/v1/school/teacher-assignments/?page_size=200", &admin)
        .await;
    assert_eq!(listed.body["count"], 3);
    let again = csv(&app, &admin, "teacher-assignments", false, file).await;
    assert_eq!(counts(&again), (json!(3), json!(0), json!(0), json!(3)));
    let sheet = workbook(
        &[
            &["teacher", "academic_class", "subject"],
            &["T-1", "Form 2", "MAT"],
        ],
        None,
    );
    let same = upload(
        &app,
        &admin,
        &imports("teacher-assignments", false),
        XLSX,
        sheet,
    )
    .await;
    assert_eq!(counts(&same), (json!(1), json!(0), json!(0), json!(1)));

    let bad = "teacher,academic_class,subject\n\
               nobody@alpha.test,Form 1,MAT\n\
               D-1,Form 1,MAT\n\
               T-1,Form 9,ART\n\
               T-1,Form 2,ENG\n\
               teacher@alpha.test,Form 2,ENG\n\
               ,Form 1,MAT\n";
    let refused = csv(&app, &admin, "teacher-assignments", false, bad).await;
    assert_eq!(
        errors(&refused),
        vec![
            (json!(2), json!("teacher"), json!("unknown_reference")),
            (json!(3), json!("teacher"), json!("ambiguous")),
            (
                json!(4),
                json!("academic_class"),
                json!("unknown_reference")
            ),
            (json!(4), json!("subject"), json!("unknown_reference")),
            (json!(6), json!("teacher"), json!("duplicate_key")),
            (json!(7), json!("teacher"), json!("required")),
        ]
    );
    let listed = app
        .get("/api/v1/school/teacher-assignments/?page_size=200", &admin)
        .await;
    assert_eq!(listed.body["count"], 3, "all or nothing");
    let wrong = csv(
        &app,
        &admin,
        "teacher-assignments",
        false,
        "name,level\nX,1\n",
    )
    .await;
    assert_eq!(
        errors(&wrong),
        vec![(json!(1), json!(null), json!("wrong_columns"))]
    );
    let teacher = app.as_school_user("alpha", "teacher").await;
    csv(&app, &teacher, "teacher-assignments", false, file)
        .await
        .assert(403, Some("permission_denied"));
}
