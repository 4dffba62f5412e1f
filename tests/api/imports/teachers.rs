//! Imports of teachers (accounts made as the users API makes them, matched by e-mail or
//! staff number) and of teacher assignments (API.md 10).

use serde_json::json;

use crate::{
    helpers::{As, Login, SCHOOL_AUTH, TestApp, spawn_app},
    imports::spreadsheets::{RowError, XLSX, counts, csv, errors, imports, upload, workbook},
};

const USERS: &str = "/api/v1/school/users/";

/// The school's teacher profiles as (name, staff number, e-mail of the user), sorted.
async fn teachers(app: &TestApp, who: &As) -> Vec<(String, Option<String>, Option<String>)> {
    let users = app.get(&format!("{USERS}?page_size=200"), who).await;
    let list = app.get("/api/v1/school/teachers/?page_size=200", who).await;
    let mut all: Vec<_> = (list.body["results"].as_array().expect("results").iter())
        .map(|t| {
            let user = (users.body["results"].as_array().expect("users").iter())
                .find(|u| u["id"] == t["user"])
                .expect("the teacher's user");
            (
                t["name"].as_str().expect("name").to_owned(),
                t["staff_number"].as_str().map(str::to_owned),
                user["email"].as_str().map(str::to_owned),
            )
        })
        .collect();
    all.sort_by(|a, b| a.0.cmp(&b.0));
    all
}

/// A row of [`teachers`].
fn teacher(
    name: &str,
    staff_number: &str,
    email: &str,
) -> (String, Option<String>, Option<String>) {
    (name.into(), Some(staff_number.into()), Some(email.into()))
}

const TEACHERS: &str = "first_name;last_name;email;staff_number\n\
    Ada;Łovelace;ada@alpha.test;S-1\n\
    teacher;Test;TEACHER@alpha.test;S-2\n\
    Bo;Ng;;S-3\n";

#[tokio::test]
async fn a_teachers_file_makes_accounts_once_and_matches_by_email_or_staff_number() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let office = app.office_of("alpha", &admin).await;
    let before = teachers(&app, &admin).await;

    // Bo has neither an e-mail nor an existing staff number: no account can be made.
    let refused = csv(&app, &office, "teachers", true, TEACHERS).await;
    assert_eq!(errors(&refused), vec![RowError::at(4, "email", "required")]);
    let file = TEACHERS.replace("Bo;Ng;;S-3", "Bo;Ng;bo@alpha.test;S-3");
    let dry = csv(&app, &office, "teachers", true, &file).await;
    assert_eq!(counts(&dry), (3, 2, 1, 0));
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
            teacher("Ada Łovelace", "S-1", "ada@alpha.test"),
            teacher("Bo Ng", "S-3", "bo@alpha.test"),
            teacher("teacher Test", "S-2", "teacher@alpha.test"),
        ]
    );
    // The account is made as the users API makes it: the teacher role, no password.
    let ada = app.get(&format!("{USERS}?search=ada@"), &admin).await;
    assert_eq!(ada.body["results"][0]["roles"], json!(["teacher"]));
    assert!(ada.body["results"][0]["teacher"].is_string());
    let login = Login::of("ada@alpha.test")
        .post(&app, SCHOOL_AUTH, &As::school("alpha"))
        .await;
    login.assert(401, None);

    // Again: nothing changes. In XLSX: the same records.
    let again = csv(&app, &office, "teachers", false, &file).await;
    assert_eq!(counts(&again), (3, 0, 0, 3));
    let sheet = workbook(
        &[
            &["First_Name", "Last_Name", "Email", "Staff_Number"],
            &["Ada", "Łovelace", "ada@alpha.test", "S-1"],
            &["Bo", "Ng", "bo@alpha.test", "S-3"],
        ],
        None,
    );
    let same = upload(&app, &office, &imports("teachers", false), XLSX, sheet).await;
    assert_eq!(counts(&same), (2, 0, 0, 2));
    assert_eq!(teachers(&app, &admin).await, after);

    // By staff number alone: a new staff number for Ada by e-mail, a renamed Bo by staff
    // number. The office may not rename an account it could not change (API.md 12).
    let renamed = "first_name,last_name,staff_number\nBo,Ngata,S-3\n";
    let refused = csv(&app, &office, "teachers", false, renamed).await;
    assert_eq!(
        errors(&refused),
        vec![RowError::at(2, "last_name", "permission_denied")]
    );
    let done = csv(&app, &admin, "teachers", false, renamed).await;
    assert_eq!(counts(&done), (1, 0, 1, 0));
    let moved = "first_name,last_name,email,staff_number\nAda,Łovelace,ada@alpha.test,S-10\n";
    let done = csv(&app, &office, "teachers", false, moved).await;
    assert_eq!(counts(&done), (1, 0, 1, 0));
    let now = teachers(&app, &admin).await;
    assert_eq!(
        (&now[0].1, &now[1].0),
        (&Some("S-10".to_owned()), &"Bo Ngata".to_owned())
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
            RowError::at(3, "email", "invalid"),
            RowError::at(4, "email", "taken"),
            RowError::at(5, "email", "duplicate_key"),
            RowError::at(6, "first_name", "required"),
            RowError::at(6, "phone", "invalid"),
            RowError::at(7, "staff_number", "duplicate_key"),
            RowError::at(8, "staff_number", "duplicate_key"),
            RowError::at(10, "phone", "duplicate_key"),
        ]
    );
    assert_eq!(teachers(&app, &admin).await, before, "all or nothing");

    // A file without any key column, or of another kind's columns, is refused in a sentence.
    for file in [
        "first_name,last_name,phone\nAnn,Lee,+15550100\n",
        "admission_number,first_name,last_name\nA-1,Ann,Lee\n",
    ] {
        let wrong = csv(&app, &admin, "teachers", false, file).await;
        assert_eq!(errors(&wrong), vec![RowError::at(1, None, "wrong_columns")]);
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
    assert_eq!(counts(&dry), (3, 3, 0, 0));
    let done = csv(&app, &admin, "teacher-assignments", false, file).await;
    assert_eq!(counts(&done), counts(&dry));
    let listed = app
        .get("/api/v1/school/teacher-assignments/?page_size=200", &admin)
        .await;
    assert_eq!(listed.body["count"], 3);
    let again = csv(&app, &admin, "teacher-assignments", false, file).await;
    assert_eq!(counts(&again), (3, 0, 0, 3));
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
    assert_eq!(counts(&same), (1, 0, 0, 1));

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
            RowError::at(2, "teacher", "unknown_reference"),
            RowError::at(3, "teacher", "ambiguous"),
            RowError::at(4, "academic_class", "unknown_reference"),
            RowError::at(4, "subject", "unknown_reference"),
            RowError::at(6, "teacher", "duplicate_key"),
            RowError::at(7, "teacher", "required"),
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
    assert_eq!(errors(&wrong), vec![RowError::at(1, None, "wrong_columns")]);
    let teacher = app.as_school_user("alpha", "teacher").await;
    csv(&app, &teacher, "teacher-assignments", false, file)
        .await
        .assert(403, Some("permission_denied"));
}
