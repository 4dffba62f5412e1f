//! School resources on the generic CRUD path: round trips, soft deletion, limits.

use serde_json::json;

use crate::helpers::spawn_app;

const CLASSES: &str = "/api/v1/school/classes/";

#[tokio::test]
async fn classes_round_trip_with_soft_delete_and_uniqueness() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let created = app
        .post(CLASSES, &admin, json!({"name": "Form 1", "level": 1}))
        .await;
    created.assert(201, None);
    let id = created.body["id"].as_str().expect("id").to_owned();
    assert_eq!(created.body["is_deleted"], false);
    assert_eq!(created.body["created_by"], created.body["updated_by"]);
    let item = format!("{CLASSES}{id}/");
    app.get(&item, &admin).await.assert(200, None);
    app.post(CLASSES, &admin, json!({"name": "Form 1"}))
        .await
        .assert(409, Some("conflict"));
    let patched = app.patch(&item, &admin, json!({"level": 2})).await;
    patched.assert(200, None);
    assert_eq!(
        (patched.body["name"].clone(), patched.body["level"].clone()),
        (json!("Form 1"), json!(2))
    );
    // PUT replaces: the omitted optional field returns to its default.
    let replaced = app
        .request(
            reqwest::Method::PUT,
            &item,
            &admin,
            Some(json!({"name": "Form One"})),
        )
        .await;
    replaced.assert(200, None);
    assert_eq!(replaced.body["level"], json!(null));
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
    assert_eq!(app.get(CLASSES, &admin).await.body["count"], 0);
    assert_eq!(
        app.get(&format!("{CLASSES}?include_deleted=true"), &admin)
            .await
            .body["count"],
        1
    );
    // A live class may reuse the name of a deleted one.
    app.post(CLASSES, &admin, json!({"name": "Form One"}))
        .await
        .assert(201, None);
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
    app.post(
        CLASSES,
        &admin,
        json!({"name": "x".repeat(255), "level": 100}),
    )
    .await
    .assert(201, None);
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
    let list = app
        .get(&format!("{CLASSES}?page_size=500&search=XXX"), &admin)
        .await;
    list.assert(200, None);
    assert_eq!(list.body["count"], 1);
}

#[tokio::test]
async fn teachers_may_view_classes_but_not_change_them() {
    let app = spawn_app().await;
    let teacher = app.as_school_user("alpha", "teacher").await;
    app.get(CLASSES, &teacher).await.assert(200, None);
    app.post(CLASSES, &teacher, json!({"name": "X"}))
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

const SUBJECTS: &str = "/api/v1/school/subjects/";
const DEPARTMENTS: &str = "/api/v1/school/departments/";

#[tokio::test]
async fn subjects_bulk_soft_delete_counts_what_it_marked() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let mut ids = Vec::new();
    for code in ["MATH", "ENG", "BIO"] {
        let reply = app
            .post(
                SUBJECTS,
                &admin,
                json!({"name": format!("{code} subject"), "code": code}),
            )
            .await;
        reply.assert(201, None);
        ids.push(reply.body["id"].as_str().expect("id").to_owned());
    }
    app.post(SUBJECTS, &admin, json!({"name": "Again", "code": "MATH"}))
        .await
        .assert(409, Some("conflict"));
    assert_eq!(
        app.get(&format!("{SUBJECTS}?search=eng"), &admin)
            .await
            .body["count"],
        1
    );
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
    assert_eq!(app.get(SUBJECTS, &admin).await.body["count"], 0);
    assert_eq!(
        app.get(&format!("{SUBJECTS}?include_deleted=true"), &admin)
            .await
            .body["count"],
        3
    );
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
    let hod = app.get("/api/v1/school/auth/me/", &teacher).await.body["teacher"]["id"].clone();
    let subject = app
        .post(SUBJECTS, &admin, json!({"name": "Maths", "code": "M"}))
        .await
        .body["id"]
        .clone();
    let created = app
        .post(
            DEPARTMENTS,
            &admin,
            json!({"name": "Sciences", "hod": hod, "subject": subject}),
        )
        .await;
    created.assert(201, None);
    assert_eq!(created.body["teachers"], json!([]));
    let id = created.body["id"].as_str().expect("id").to_owned();
    let patched = app
        .patch(
            &format!("{DEPARTMENTS}{id}/"),
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
    assert_eq!(patched.body["teachers"], json!([hod]));
    assert_eq!(patched.body["hod"], hod);
    let missing = uuid::Uuid::new_v4();
    let reply = app
        .patch(
            &format!("{DEPARTMENTS}{id}/"),
            &admin,
            json!({"hod": missing, "teachers": [missing]}),
        )
        .await;
    reply.assert(400, Some("validation_error"));
    assert!(reply.body["errors"]["hod"].is_array() && reply.body["errors"]["teachers"].is_array());
    // A subject of another school is simply not found.
    let beta_admin = app.as_school_user("beta", "admin").await;
    let beta_subject = app
        .post(SUBJECTS, &beta_admin, json!({"name": "B", "code": "B"}))
        .await
        .body["id"]
        .clone();
    app.patch(
        &format!("{DEPARTMENTS}{id}/"),
        &admin,
        json!({"subject": beta_subject}),
    )
    .await
    .assert(400, Some("validation_error"));
    app.get(&format!("{DEPARTMENTS}{id}/"), &beta_admin)
        .await
        .assert(404, Some("not_found"));
    // The subject is referenced: a real delete is a conflict.
    app.delete(
        &format!("{SUBJECTS}{}/", subject.as_str().expect("s")),
        &admin,
    )
    .await
    .assert(409, Some("conflict"));
}

#[tokio::test]
async fn teacher_profiles_belong_to_users_of_the_school() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let admin_me = app.get("/api/v1/school/auth/me/", &admin).await;
    let admin_user = admin_me.body["user"]["id"].clone();
    let created = app
        .post(
            "/api/v1/school/teachers/",
            &admin,
            json!({"user": admin_user, "staff_number": "ST-9"}),
        )
        .await;
    created.assert(201, None);
    assert_eq!(created.body["name"], "admin Test");
    assert_eq!(created.body["user"], admin_user);
    app.post(
        "/api/v1/school/teachers/",
        &admin,
        json!({"user": admin_user}),
    )
    .await
    .assert(409, Some("conflict"));
    let beta_login = app.school_login("beta", "admin@beta.test").await;
    let reply = app
        .post(
            "/api/v1/school/teachers/",
            &admin,
            json!({"user": beta_login["user"]["id"]}),
        )
        .await;
    reply.assert(400, Some("validation_error"));
    assert!(reply.body["errors"]["user"].is_array());
    let all = app.get("/api/v1/school/teachers/", &admin).await;
    assert_eq!(all.body["count"], 2);
    assert_eq!(
        app.get("/api/v1/school/teachers/?search=ADMIN", &admin)
            .await
            .body["count"],
        1
    );
    assert_eq!(
        app.get("/api/v1/school/teachers/?search=st-9", &admin)
            .await
            .body["count"],
        1
    );
    assert_eq!(
        app.get("/api/v1/school/teachers/?search=nobody", &admin)
            .await
            .body["count"],
        0
    );
}

#[tokio::test]
async fn students_and_assignments_check_their_references() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let class = app
        .post(CLASSES, &admin, json!({"name": "Form 2"}))
        .await
        .body["id"]
        .clone();
    let subject = app
        .post(SUBJECTS, &admin, json!({"name": "Art", "code": "ART"}))
        .await
        .body["id"]
        .clone();
    let teacher =
        app.get("/api/v1/school/teachers/", &admin).await.body["results"][0]["id"].clone();
    let student = app
        .post("/api/v1/school/students/", &admin, json!({"admission_number": "A-1", "first_name": "Ann", "last_name": "Bee", "academic_class": class}))
        .await;
    student.assert(201, None);
    assert_eq!(student.body["academic_class"], class);
    app.post(
        "/api/v1/school/students/",
        &admin,
        json!({"admission_number": "A-1", "first_name": "X", "last_name": "Y"}),
    )
    .await
    .assert(409, Some("conflict"));
    let reply = app.post("/api/v1/school/students/", &admin, json!({"admission_number": "A-2", "first_name": "X", "last_name": "Y", "academic_class": uuid::Uuid::new_v4()})).await;
    reply.assert(400, Some("validation_error"));
    assert_eq!(
        app.get("/api/v1/school/students/?search=bee", &admin)
            .await
            .body["count"],
        1
    );

    let assignments = "/api/v1/school/teacher-assignments/";
    let body = json!({"teacher": teacher, "academic_class": class, "subject": subject});
    app.post(assignments, &admin, body.clone())
        .await
        .assert(201, None);
    app.post(assignments, &admin, body)
        .await
        .assert(409, Some("conflict"));
    let reply = app
        .post(
            assignments,
            &admin,
            json!({"teacher": uuid::Uuid::new_v4(), "academic_class": class}),
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
    let teacher =
        app.get("/api/v1/school/teachers/", &admin).await.body["results"][0]["id"].clone();
    let subject = app
        .post(SUBJECTS, &admin, json!({"name": "Edge", "code": "EDGE"}))
        .await
        .body["id"]
        .clone();
    let department = |name: String| json!({"name": name, "hod": teacher, "subject": subject});
    app.post(DEPARTMENTS, &admin, department("d".repeat(255)))
        .await
        .assert(201, None);
    app.post(DEPARTMENTS, &admin, department("d".repeat(256)))
        .await
        .assert(400, Some("validation_error"));
    app.post(DEPARTMENTS, &admin, department(String::new()))
        .await
        .assert(400, Some("validation_error"));
    let session =
        |name: String| json!({"name": name, "start_date": "2026-01-01", "end_date": "2026-06-01"});
    app.post("/api/v1/school/sessions/", &admin, session("s".repeat(255)))
        .await
        .assert(201, None);
    app.post("/api/v1/school/sessions/", &admin, session("s".repeat(256)))
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
