//! School resources on the generic CRUD path: round trips, soft deletion, limits.

use serde_json::json;

use crate::helpers::{
    CLASSES, Class, Department, NewClass, NewDepartment, NewRecord, NewSession, NewStudent,
    NewSubject, NewTeacher, NewTeacherAssignment, STUDENTS, SUBJECTS, Student, Subject, TEACHERS,
    Teacher, spawn_app,
};

#[tokio::test]
async fn classes_round_trip_with_soft_delete_and_uniqueness() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let created = NewClass {
        name: "Form 1",
        level: Some(1),
    }
    .create(&app, &admin)
    .await;
    assert!(!created.is_deleted);
    assert_eq!(created.authors.created_by, created.authors.updated_by);
    let item = created.path();
    app.get(&item, &admin).await.assert(200, None);
    let again = NewClass::named("Form 1");
    again.post(&app, &admin).await.assert(409, Some("conflict"));
    let patched: Class = app
        .patch(&item, &admin, json!({"level": 2}))
        .await
        .typed(200);
    assert_eq!((patched.name.as_str(), patched.level), ("Form 1", Some(2)));
    // PUT replaces: the omitted optional field returns to its default.
    let replaced: Class = app
        .request(
            reqwest::Method::PUT,
            &item,
            &admin,
            Some(json!({"name": "Form One"})),
        )
        .await
        .typed(200);
    assert_eq!(replaced.level, None);
    app.request(
        reqwest::Method::PUT,
        &item,
        &admin,
        Some(json!({"level": 3})),
    )
    .await
    .assert(400, Some("validation_error"));

    app.patch(&item, &admin, json!({"is_deleted": true}))
        .await
        .assert(200, None);
    app.get(&item, &admin).await.assert(404, Some("not_found"));
    assert_eq!(app.list::<Class>(CLASSES, &admin).await.count, 0);
    let with_deleted = format!("{CLASSES}?include_deleted=true");
    assert_eq!(app.list::<Class>(&with_deleted, &admin).await.count, 1);
    // A live class may reuse the name of a deleted one.
    NewClass::named("Form One").create(&app, &admin).await;
    let restored = app
        .patch(
            &format!("{item}?include_deleted=true"),
            &admin,
            json!({"is_deleted": false}),
        )
        .await;
    restored.assert(409, Some("conflict"));
    app.delete(&format!("{item}?include_deleted=true"), &admin)
        .await
        .assert(204, None);
    app.get(&format!("{item}?include_deleted=true"), &admin)
        .await
        .assert(404, Some("not_found"));
}

#[tokio::test]
async fn class_fields_are_validated_at_their_edges() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    NewClass {
        name: &"x".repeat(255),
        level: Some(100),
    }
    .create(&app, &admin)
    .await;
    for bad in [
        json!({"name": "y".repeat(256)}),
        json!({"name": ""}),
        json!({"name": null}),
        json!({"name": 5}),
        json!({"name": "z", "level": 101}),
        json!({"name": "z", "level": "1"}),
        json!({"name": "z", "is_deleted": 1}),
        json!({}),
    ] {
        let reply = app.post(CLASSES, &admin, bad.clone()).await;
        reply.assert(400, Some("validation_error"));
        assert!(reply.body["errors"].is_object(), "{bad}");
    }
    app.get(&format!("{CLASSES}not-a-uuid/"), &admin)
        .await
        .assert(400, Some("invalid_id"));
    app.get(&format!("{CLASSES}{}/", uuid::Uuid::new_v4()), &admin)
        .await
        .assert(404, Some("not_found"));
    app.get(&format!("{CLASSES}?page=0"), &admin)
        .await
        .assert(400, Some("invalid_query"));
    app.get(&format!("{CLASSES}?page=2"), &admin)
        .await
        .assert(404, Some("invalid_page"));
    let list = format!("{CLASSES}?page_size=500&search=XXX");
    assert_eq!(app.list::<Class>(&list, &admin).await.count, 1);
}

#[tokio::test]
async fn teachers_may_view_classes_but_not_change_them() {
    let app = spawn_app().await;
    let teacher = app.as_school_user("alpha", "teacher").await;
    app.get(CLASSES, &teacher).await.assert(200, None);
    let class = NewClass::named("X");
    class
        .post(&app, &teacher)
        .await
        .assert(403, Some("permission_denied"));
    let norole = app.as_school_user("alpha", "norole").await;
    app.get(CLASSES, &norole)
        .await
        .assert(403, Some("permission_denied"));
    app.get("/api/v1/school/permissions/", &norole)
        .await
        .assert(200, None);
}

#[tokio::test]
async fn subjects_bulk_soft_delete_counts_what_it_marked() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let mut ids = Vec::new();
    for code in ["MATH", "ENG", "BIO"] {
        let name = format!("{code} subject");
        let subject = NewSubject::new(&name, code);
        ids.push(subject.create(&app, &admin).await.id);
    }
    let again = NewSubject::new("Again", "MATH");
    again.post(&app, &admin).await.assert(409, Some("conflict"));
    let search = format!("{SUBJECTS}?search=eng");
    assert_eq!(app.list::<Subject>(&search, &admin).await.count, 1);
    let body = json!({"ids": [ids[0], ids[1], uuid::Uuid::new_v4()]});
    let reply = app
        .request(
            reqwest::Method::DELETE,
            &format!("{SUBJECTS}bulk-soft-delete/"),
            &admin,
            Some(body.clone()),
        )
        .await;
    reply.assert(200, None);
    assert_eq!(reply.body, json!({"deleted": true, "count": 2}));
    let again = app
        .request(
            reqwest::Method::DELETE,
            &format!("{SUBJECTS}bulk-soft-delete/"),
            &admin,
            Some(body),
        )
        .await;
    assert_eq!(again.body, json!({"deleted": true, "count": 0}));
    let by_query = app
        .delete(
            &format!("{SUBJECTS}bulk-soft-delete/?ids={}", ids[2]),
            &admin,
        )
        .await;
    assert_eq!(by_query.body, json!({"deleted": true, "count": 1}));
    assert_eq!(app.list::<Subject>(SUBJECTS, &admin).await.count, 0);
    let with_deleted = format!("{SUBJECTS}?include_deleted=true");
    assert_eq!(app.list::<Subject>(&with_deleted, &admin).await.count, 3);
    app.request(
        reqwest::Method::DELETE,
        &format!("{SUBJECTS}bulk-soft-delete/"),
        &admin,
        Some(json!({"ids": []})),
    )
    .await
    .assert(400, Some("validation_error"));
    app.request(
        reqwest::Method::DELETE,
        &format!("{SUBJECTS}bulk-soft-delete/"),
        &admin,
        Some(json!({"ids": ["x"]})),
    )
    .await
    .assert(400, Some("validation_error"));
    let teacher = app.as_school_user("alpha", "teacher").await;
    app.delete(
        &format!("{SUBJECTS}bulk-soft-delete/?ids={}", ids[2]),
        &teacher,
    )
    .await
    .assert(403, Some("permission_denied"));
}

#[tokio::test]
async fn departments_patch_and_references() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let teacher = app.as_school_user("alpha", "teacher").await;
    let hod = app
        .me(&teacher)
        .await
        .teacher
        .expect("a teacher profile")
        .id;
    let subject = NewSubject::new("Maths", "M").create(&app, &admin).await;
    let created = NewDepartment {
        name: "Sciences",
        hod: &hod,
        subject: &subject.id,
        ..Default::default()
    }
    .create(&app, &admin)
    .await;
    assert_eq!(created.teachers, Vec::<String>::new());
    let department = created.path();
    let patched = app
        .patch(
            &department,
            &admin,
            json!({"name": "Science", "teachers": [hod]}),
        )
        .await;
    patched.assert(200, None);
    for key in [
        "id",
        "name",
        "hod",
        "subject",
        "teachers",
        "is_deleted",
        "created_at",
        "updated_at",
    ] {
        assert!(patched.body.get(key).is_some(), "{key}");
    }
    let patched: Department = patched.typed(200);
    assert_eq!(patched.teachers, std::slice::from_ref(&hod));
    assert_eq!(patched.hod, hod);
    let missing = uuid::Uuid::new_v4();
    let reply = app
        .patch(
            &department,
            &admin,
            json!({"hod": missing, "teachers": [missing]}),
        )
        .await;
    reply.assert(400, Some("validation_error"));
    assert!(reply.body["errors"]["hod"].is_array() && reply.body["errors"]["teachers"].is_array());
    // A subject of another school is simply not found.
    let beta_admin = app.as_school_user("beta", "admin").await;
    let beta_subject = NewSubject::new("B", "B").create(&app, &beta_admin).await;
    app.patch(&department, &admin, json!({"subject": beta_subject.id}))
        .await
        .assert(400, Some("validation_error"));
    app.get(&department, &beta_admin)
        .await
        .assert(404, Some("not_found"));
    // The subject is referenced: a real delete is a conflict.
    app.delete(&subject.path(), &admin)
        .await
        .assert(409, Some("conflict"));
}

#[tokio::test]
async fn teacher_profiles_belong_to_users_of_the_school() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let admin_user = app.me(&admin).await.user.id;
    let created = NewTeacher {
        user: &admin_user,
        staff_number: Some("ST-9"),
    }
    .create(&app, &admin)
    .await;
    assert_eq!(created.name, "admin Test");
    assert_eq!(created.user, admin_user);
    let again = NewTeacher {
        user: &admin_user,
        ..Default::default()
    };
    again.post(&app, &admin).await.assert(409, Some("conflict"));
    let beta_login = app.school_login("beta", "admin@beta.test").await;
    let beta_user = beta_login["user"]["id"].as_str().expect("a user id");
    let reply = NewTeacher {
        user: beta_user,
        ..Default::default()
    }
    .post(&app, &admin)
    .await;
    reply.assert(400, Some("validation_error"));
    assert!(reply.body["errors"]["user"].is_array());
    assert_eq!(app.list::<Teacher>(TEACHERS, &admin).await.count, 2);
    for (search, count) in [("ADMIN", 1), ("st-9", 1), ("nobody", 0)] {
        let path = format!("{TEACHERS}?search={search}");
        assert_eq!(app.list::<Teacher>(&path, &admin).await.count, count);
    }
}

#[tokio::test]
async fn students_and_assignments_check_their_references() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let class = NewClass::named("Form 2").create(&app, &admin).await;
    let subject = NewSubject::new("Art", "ART").create(&app, &admin).await;
    let teacher = app.list::<Teacher>(TEACHERS, &admin).await.results[0]
        .id
        .clone();
    let student = NewStudent::new("A-1", "Ann", "Bee")
        .in_class(&class.id)
        .create(&app, &admin)
        .await;
    assert_eq!(student.academic_class, Some(class.id.clone()));
    let same_number = NewStudent::new("A-1", "X", "Y");
    same_number
        .post(&app, &admin)
        .await
        .assert(409, Some("conflict"));
    let missing_class = uuid::Uuid::new_v4().to_string();
    let reply = NewStudent::new("A-2", "X", "Y")
        .in_class(&missing_class)
        .post(&app, &admin)
        .await;
    reply.assert(400, Some("validation_error"));
    let search = format!("{STUDENTS}?search=bee");
    assert_eq!(app.list::<Student>(&search, &admin).await.count, 1);

    let assignment = NewTeacherAssignment {
        teacher: &teacher,
        academic_class: &class.id,
        subject: &subject.id,
    };
    assignment.create(&app, &admin).await;
    assignment
        .post(&app, &admin)
        .await
        .assert(409, Some("conflict"));
    // Missing the subject (a JSON body, since the typed one cannot leave it out).
    let reply = app
        .post(
            crate::helpers::TEACHER_ASSIGNMENTS,
            &admin,
            json!({"teacher": uuid::Uuid::new_v4(), "academic_class": class.id}),
        )
        .await;
    reply.assert(400, Some("validation_error"));
    assert!(
        reply.body["errors"]["teacher"].is_array() && reply.body["errors"]["subject"].is_array()
    );
}

#[tokio::test]
async fn part_eight_limits_hold_at_their_edges() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let teacher = app.list::<Teacher>(TEACHERS, &admin).await.results[0]
        .id
        .clone();
    let subject = NewSubject::new("Edge", "EDGE").create(&app, &admin).await;
    let department = |name: &'static str| NewDepartment {
        name,
        hod: &teacher,
        subject: &subject.id,
        ..Default::default()
    };
    let longest = "d".repeat(255);
    let too_long = "d".repeat(256);
    NewDepartment {
        name: &longest,
        ..department("")
    }
    .create(&app, &admin)
    .await;
    NewDepartment {
        name: &too_long,
        ..department("")
    }
    .post(&app, &admin)
    .await
    .assert(400, Some("validation_error"));
    department("")
        .post(&app, &admin)
        .await
        .assert(400, Some("validation_error"));
    let (longest, too_long) = ("s".repeat(255), "s".repeat(256));
    NewSession::new(&longest, "2026-01-01", "2026-06-01")
        .create(&app, &admin)
        .await;
    NewSession::new(&too_long, "2026-01-01", "2026-06-01")
        .post(&app, &admin)
        .await
        .assert(400, Some("validation_error"));
    let settings = |email: String| json!({"school_name": "n".repeat(255), "address": "a", "phone": "p", "email": email});
    let local = "e".repeat(64);
    let domain = format!(
        "{}.{}.{}.test",
        "a".repeat(63),
        "b".repeat(63),
        "c".repeat(56)
    );
    let email_254 = format!("{local}@{domain}");
    assert_eq!(email_254.len(), 254);
    app.post(
        "/api/v1/school/general-settings/",
        &admin,
        settings(email_254.clone()),
    )
    .await
    .assert(201, None);
    app.post(
        "/api/v1/school/general-settings/",
        &admin,
        settings(format!("e{email_254}")),
    )
    .await
    .assert(400, Some("validation_error"));
}
