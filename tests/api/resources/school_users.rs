//! `/api/v1/school/users/` (API.md 12): the school manages its own accounts.

use serde_json::{Value, json};

use crate::helpers::{
    As, Login, NewRecord, NewRole, NewSchoolUser, NewStudent, PASSWORD, SCHOOL_AUTH, item,
    spawn_app,
};

const USERS: &str = "/api/v1/school/users/";

fn ids(list: &Value) -> Vec<String> {
    list["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|u| u["email"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn office_creates_a_teacher_who_signs_in_with_a_profile() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let office = app.office_of("alpha", &admin).await;
    let created = NewSchoolUser {
        email: Some("Ada@alpha.test"),
        password: Some(PASSWORD),
        first_name: Some(" Ada "),
        last_name: Some("Lovelace"),
        roles: &["teacher"],
        teacher: Some(true),
        ..Default::default()
    }
    .post(&app, &office)
    .await;
    created.assert(201, None);
    let user = &created.body;
    assert_eq!(user["first_name"], "Ada");
    assert_eq!(user["roles"], json!(["teacher"]));
    assert_eq!(user["is_active"], true);
    assert_eq!(user["student"], Value::Null);
    assert_eq!(user["guardian"], Value::Null);
    assert_eq!(user["last_login"], Value::Null);
    let profile = user["teacher"].as_str().expect("a teacher profile id");
    let keys: Vec<&String> = user.as_object().expect("object").keys().collect();
    for key in [
        "id",
        "email",
        "phone",
        "first_name",
        "last_name",
        "is_active",
        "roles",
        "teacher",
        "student",
        "guardian",
        "last_login",
        "created_at",
    ] {
        assert!(keys.iter().any(|k| k.as_str() == key), "{key} in {keys:?}");
    }
    assert!(user.get("password").is_none() && user.get("password_hash").is_none());

    // The new teacher signs in and is a teacher with that profile.
    let login = app.school_login("alpha", "ada@alpha.test").await;
    assert_eq!(login["teacher"]["id"], profile);
    assert_eq!(login["roles"], json!(["teacher"]));
    let id = user["id"].as_str().expect("id");
    let read = app.get(&item(USERS, id), &office).await;
    read.assert(200, None);
    assert!(read.body["last_login"].is_string(), "{}", read.body);

    // Office may add teachers, students and guardians, never an admin; and may not change.
    let refused = NewSchoolUser {
        email: Some("boss@alpha.test"),
        roles: &["admin"],
        ..Default::default()
    }
    .post(&app, &office)
    .await;
    refused.assert(403, Some("permission_denied"));
    assert!(
        refused.body["detail"]
            .as_str()
            .unwrap_or("")
            .contains("add_exam")
            || refused.body["detail"]
                .as_str()
                .unwrap_or("")
                .contains("delete_"),
        "names what is lacking: {}",
        refused.body
    );
    app.patch(&item(USERS, id), &office, json!({"first_name": "A"}))
        .await
        .assert(403, Some("permission_denied"));
    // The same e-mail in another spelling is taken.
    app.post(USERS, &admin, json!({"email": "ADA@alpha.test"}))
        .await
        .assert(409, Some("conflict"));
}

#[tokio::test]
async fn lists_search_and_filter_by_role_and_hide_other_users() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let list = app.get(USERS, &admin).await;
    list.assert(200, None);
    let emails = ids(&list.body);
    assert_eq!(list.body["count"], 3, "{emails:?}");
    assert!(emails.contains(&"teacher@alpha.test".to_owned()));
    assert!(
        !emails
            .iter()
            .any(|e| e.contains("beta") || e.contains("platform"))
    );
    let teachers = app.get(&format!("{USERS}?role=teacher"), &admin).await;
    assert_eq!(ids(&teachers.body), vec!["teacher@alpha.test".to_owned()]);
    assert!(teachers.body["results"][0]["teacher"].is_string());
    let found = app.get(&format!("{USERS}?search=NOROLE"), &admin).await;
    assert_eq!(ids(&found.body), vec!["norole@alpha.test".to_owned()]);

    // Another school's user and a platform user are not this school's: 404.
    let beta_admin = app.as_school_user("beta", "admin").await;
    let beta_me = app.get("/api/v1/school/auth/me/", &beta_admin).await;
    let beta_id = beta_me.body["user"]["id"].as_str().expect("id").to_owned();
    app.get(&item(USERS, &beta_id), &admin)
        .await
        .assert(404, Some("not_found"));
    app.patch(&item(USERS, &beta_id), &admin, json!({"is_active": false}))
        .await
        .assert(404, Some("not_found"));
    let root = app.as_root().await;
    let root_id = app.get("/api/v1/system/auth/me/", &root).await.body["user"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    app.get(&item(USERS, &root_id), &admin)
        .await
        .assert(404, Some("not_found"));
    app.get(&format!("{USERS}not-a-uuid/"), &admin)
        .await
        .assert(400, Some("invalid_id"));
    // Teachers do not see the school's accounts; no DELETE.
    let teacher = app.as_school_user("alpha", "teacher").await;
    app.get(USERS, &teacher)
        .await
        .assert(403, Some("permission_denied"));
    app.delete(&item(USERS, &root_id), &admin)
        .await
        .assert(405, Some("method_not_allowed"));
}

#[tokio::test]
async fn a_student_account_links_to_its_record_and_needs_a_password_to_sign_in() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let student_id = NewStudent::new("S-1", "Sam", "Okafor")
        .create(&app, &admin)
        .await
        .id;
    let created = NewSchoolUser {
        phone: Some("+254 700 000 111"),
        first_name: Some("Sam"),
        roles: &["student"],
        student: Some(&student_id),
        ..Default::default()
    }
    .post(&app, &admin)
    .await;
    created.assert(201, None);
    assert_eq!(created.body["student"], student_id.as_str());
    assert_eq!(created.body["phone"], "+254700000111");
    let user_id = created.body["id"].as_str().expect("id").to_owned();
    let record = app
        .get(&format!("/api/v1/school/students/{student_id}/"), &admin)
        .await;
    assert_eq!(record.body["user"], user_id.as_str());
    // A second account for the same student, an unknown student, an unknown role: 400
    // (the invalid bodies as a client would send them).
    for body in [
        json!({"email": "twin@alpha.test", "student": student_id}),
        json!({"email": "ghost@alpha.test", "student": uuid::Uuid::new_v4()}),
        json!({"email": "odd@alpha.test", "roles": ["wizard"]}),
        json!({"email": "dup@alpha.test", "roles": ["teacher", "teacher"]}),
        json!({"first_name": "No Contact"}),
        json!({"email": "short@alpha.test", "password": "short"}),
        json!({"email": "typed@alpha.test", "teacher": "yes"}),
    ] {
        app.post(USERS, &admin, body.clone())
            .await
            .assert(400, Some("validation_error"));
    }
    // No password yet: signing in is refused until one is set.
    let login = |password: &'static str| {
        let app = &app;
        async move {
            Login {
                identifier: "+254700000111",
                password,
            }
            .post(app, SCHOOL_AUTH, &As::school("alpha"))
            .await
        }
    };
    login("!unset")
        .await
        .assert(401, Some("invalid_credentials"));
    login(PASSWORD)
        .await
        .assert(401, Some("invalid_credentials"));
    app.patch(
        &item(USERS, &user_id),
        &admin,
        json!({"password": PASSWORD}),
    )
    .await
    .assert(200, None);
    login(PASSWORD).await.assert(200, None);
    // Deactivated: the login is refused again.
    let changed = app
        .patch(
            &item(USERS, &user_id),
            &admin,
            json!({"is_active": false, "last_name": "Okafor", "email": "sam@alpha.test"}),
        )
        .await;
    changed.assert(200, None);
    assert_eq!(changed.body["is_active"], false);
    assert_eq!(changed.body["email"], "sam@alpha.test");
    login(PASSWORD)
        .await
        .assert(401, Some("invalid_credentials"));
    // Taking both ways to sign in away is refused.
    app.patch(
        &item(USERS, &user_id),
        &admin,
        json!({"email": null, "phone": null}),
    )
    .await
    .assert(400, Some("validation_error"));
    // No guardian records in this school: a guardian link is refused.
    app.post(
        USERS,
        &admin,
        json!({"email": "mum@alpha.test", "guardian": uuid::Uuid::new_v4()}),
    )
    .await
    .assert(400, Some("validation_error"));
}

#[tokio::test]
async fn roles_follow_nobody_grants_what_they_do_not_hold_and_keep_an_administrator() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let me = app.get("/api/v1/school/auth/me/", &admin).await;
    let admin_id = me.body["user"]["id"].as_str().expect("id").to_owned();
    // The school's only administrator cannot lose the role, nor be deactivated.
    app.patch(
        &item(USERS, &admin_id),
        &admin,
        json!({"roles": ["office"]}),
    )
    .await
    .assert(409, Some("conflict"));
    app.patch(&item(USERS, &admin_id), &admin, json!({"is_active": false}))
        .await
        .assert(409, Some("conflict"));

    // A custom role that may manage users but holds little else.
    NewRole::new("clerk", &["view_user", "add_user", "change_user"])
        .create(&app, &admin)
        .await;
    NewSchoolUser {
        email: Some("clerk@alpha.test"),
        password: Some(PASSWORD),
        roles: &["clerk"],
        ..Default::default()
    }
    .create(&app, &admin)
    .await;
    let clerk = app.as_school_user_at("alpha", "clerk@alpha.test").await;
    // The clerk cannot change the admin (whose roles they do not hold) nor give office.
    let denied = app
        .patch(
            &item(USERS, &admin_id),
            &clerk,
            json!({"password": "taken-over-1"}),
        )
        .await;
    denied.assert(403, Some("permission_denied"));
    assert!(
        denied.body["detail"]
            .as_str()
            .unwrap_or("")
            .contains("you lack"),
        "{}",
        denied.body
    );
    let teacher_id =
        app.get(&format!("{USERS}?role=teacher"), &admin).await.body["results"][0]["id"]
            .as_str()
            .expect("teacher")
            .to_owned();
    app.patch(
        &item(USERS, &teacher_id),
        &clerk,
        json!({"roles": ["office"]}),
    )
    .await
    .assert(403, Some("permission_denied"));
    // The admin can: the teacher becomes office and teacher, in one change.
    let changed = app
        .patch(
            &item(USERS, &teacher_id),
            &admin,
            json!({"roles": ["teacher", "office"]}),
        )
        .await;
    changed.assert(200, None);
    assert_eq!(changed.body["roles"], json!(["office", "teacher"]));
    let teacher = app.as_school_user("alpha", "teacher").await;
    let perms = app.get("/api/v1/school/auth/me/", &teacher).await;
    assert!(
        perms.body["permissions"]
            .as_array()
            .expect("permissions")
            .contains(&json!("add_student")),
        "the new role applies at once"
    );
}
