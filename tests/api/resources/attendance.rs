//! Attendance: the CRUD resource and its filters, taking a class's attendance (upsert,
//! membership, dates, duplicates, concurrency), teachers reaching only their classes, and
//! a student's summary.

use serde_json::{Value, json};

use crate::helpers::{As, NewClass, NewRecord, NewSession, NewStudent, TestApp, spawn_app};

const ATTENDANCE: &str = "/api/v1/school/attendance/";

/// An active session over 2026, a class with `size` students and another class with one;
/// answers (class id, its student ids, the other class id, the other class's student id).
async fn school_day(
    app: &TestApp,
    admin: &As,
    size: usize,
) -> (String, Vec<String>, String, String) {
    NewSession {
        name: "2026",
        start_date: "2026-01-01",
        end_date: "2026-12-31",
    }
    .create(app, admin)
    .await;
    let class = |name: &'static str| async move {
        let class = NewClass {
            name,
            ..Default::default()
        };
        class.create(app, admin).await.id
    };
    let (form1, form2) = (class("Form 1").await, class("Form 2").await);
    let student = |n: String, class: String| async move {
        let student = NewStudent {
            admission_number: &n,
            first_name: "Ada",
            last_name: &n,
            academic_class: Some(&class),
            ..Default::default()
        };
        student.create(app, admin).await.id
    };
    let mut students = Vec::new();
    for n in 0..size {
        students.push(student(format!("F1-{n}"), form1.clone()).await);
    }
    let other = student("F2-0".into(), form2.clone()).await;
    (form1, students, form2, other)
}

fn take_path(class: &str) -> String {
    format!("/api/v1/school/classes/{class}/attendance/")
}

fn lines(students: &[String], status: &str) -> Value {
    Value::Array(
        students
            .iter()
            .map(|s| json!({"student": s, "status": status}))
            .collect(),
    )
}

#[tokio::test]
async fn records_are_one_per_student_and_date_and_lists_filter() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let (class, students, other_class, other) = school_day(&app, &admin, 2).await;
    let created = app
        .post(
            ATTENDANCE,
            &admin,
            json!({"student": students[0], "academic_class": class, "date": "2026-03-02",
                   "status": "late", "note": "bus"}),
        )
        .await;
    created.assert(201, None);
    assert_eq!(created.body["status"], "late");
    assert_eq!(created.body["date"], "2026-03-02");
    assert_eq!(created.body["student"], students[0].as_str());
    app.post(
        ATTENDANCE,
        &admin,
        json!({"student": students[0], "date": "2026-03-02", "status": "present"}),
    )
    .await
    .assert(409, Some("conflict"));
    let bad = app
        .post(
            ATTENDANCE,
            &admin,
            json!({"student": students[1], "date": "2026-3-2", "status": "asleep",
                   "note": "x".repeat(501)}),
        )
        .await;
    bad.assert(400, Some("validation_error"));
    for field in ["date", "status", "note"] {
        assert!(
            bad.body["errors"].get(field).is_some(),
            "{field}: {}",
            bad.body
        );
    }
    app.post(
        ATTENDANCE,
        &admin,
        json!({"student": other, "academic_class": other_class, "date": "2026-03-03", "status": "absent"}),
    )
    .await
    .assert(201, None);
    let count = |query: String| {
        let app = &app;
        let admin = &admin;
        async move {
            let reply = app.get(&format!("{ATTENDANCE}?{query}"), admin).await;
            reply.assert(200, None);
            reply.body["count"].as_i64().expect("count")
        }
    };
    assert_eq!(count(format!("academic_class={class}")).await, 1);
    assert_eq!(count(format!("student={other}")).await, 1);
    assert_eq!(count("date=2026-03-02".into()).await, 1);
    assert_eq!(
        count("date_from=2026-03-02&date_to=2026-03-03".into()).await,
        2
    );
    assert_eq!(count("date_from=2026-03-03".into()).await, 1);
    app.get(&format!("{ATTENDANCE}?date_from=yesterday"), &admin)
        .await
        .assert(400, Some("invalid_query"));
    app.get(&format!("{ATTENDANCE}?student=42"), &admin)
        .await
        .assert(400, Some("invalid_query"));
}

#[tokio::test]
async fn taking_a_class_upserts_every_record_in_one_go() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let (class, students, _, other) = school_day(&app, &admin, 3).await;
    let first = app
        .post(
            &take_path(&class),
            &admin,
            json!({"date": "2026-05-04", "records": lines(&students, "present")}),
        )
        .await;
    first.assert(200, None);
    let first_ids: Vec<Value> = first
        .body
        .as_array()
        .expect("list")
        .iter()
        .map(|r| r["id"].clone())
        .collect();
    assert_eq!(first_ids.len(), 3);
    let mut again = lines(&students, "present");
    again[1] = json!({"student": students[1], "status": "absent", "note": "ill"});
    let second = app
        .post(
            &take_path(&class),
            &admin,
            json!({"date": "2026-05-04", "records": again}),
        )
        .await;
    second.assert(200, None);
    let records = second.body.as_array().expect("list");
    assert_eq!(
        records.iter().map(|r| r["id"].clone()).collect::<Vec<_>>(),
        first_ids
    );
    assert_eq!(records[1]["status"], "absent");
    assert_eq!(records[1]["note"], "ill");
    assert_eq!(records[1]["academic_class"], class.as_str());
    let day = app
        .get(&format!("{ATTENDANCE}?date=2026-05-04"), &admin)
        .await;
    assert_eq!(day.body["count"], 3);

    // Each rule names the record it concerns, and nothing is written.
    let refused = |body: Value, field: &'static str| {
        let app = &app;
        let admin = &admin;
        let class = class.clone();
        async move {
            let reply = app.post(&take_path(&class), admin, body).await;
            reply.assert(400, Some("validation_error"));
            assert!(
                reply.body["errors"].get(field).is_some(),
                "{field}: {}",
                reply.body
            );
        }
    };
    let mut outsider = lines(&students, "late");
    outsider[2] = json!({"student": other, "status": "late"});
    refused(
        json!({"date": "2026-05-05", "records": outsider}),
        "records[2].student",
    )
    .await;
    let twice = lines(
        &[
            students[0].clone(),
            students[1].clone(),
            students[0].clone(),
        ],
        "late",
    );
    refused(
        json!({"date": "2026-05-05", "records": twice}),
        "records[2].student",
    )
    .await;
    refused(
        json!({"date": "2027-01-04", "records": lines(&students, "late")}),
        "date",
    )
    .await;
    refused(
        json!({"date": "2026-05-05", "records": [{"student": students[0], "status": "gone"}]}),
        "records[0].status",
    )
    .await;
    refused(json!({"date": "2026-05-05", "records": []}), "records").await;
    assert_eq!(
        app.get(&format!("{ATTENDANCE}?date=2026-05-05"), &admin)
            .await
            .body["count"],
        0
    );
    let missing = format!(
        "/api/v1/school/classes/{}/attendance/",
        uuid::Uuid::new_v4()
    );
    app.post(
        &missing,
        &admin,
        json!({"date": "2026-05-05", "records": lines(&students, "late")}),
    )
    .await
    .assert(404, Some("not_found"));
}

#[tokio::test]
async fn concurrent_takes_of_one_class_and_date_never_duplicate_a_student() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let (class, students, _, _) = school_day(&app, &admin, 10).await;
    let path = take_path(&class);
    let takes = ["present", "absent", "late", "excused", "present", "late"].map(|status| {
        app.post(
            &path,
            &admin,
            json!({"date": "2026-06-01", "records": lines(&students, status)}),
        )
    });
    for reply in futures_util::future::join_all(takes).await {
        reply.assert(200, None);
    }
    let day = app
        .get(
            &format!("{ATTENDANCE}?date=2026-06-01&page_size=200"),
            &admin,
        )
        .await;
    assert_eq!(day.body["count"], 10, "{}", day.body);
}

#[tokio::test]
async fn teachers_take_attendance_only_for_the_classes_they_teach() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let teacher = app.as_school_user("alpha", "teacher").await;
    let (class, students, other_class, other) = school_day(&app, &admin, 2).await;
    let body = json!({"date": "2026-02-02", "records": lines(&students, "present")});
    app.post(&take_path(&class), &teacher, body.clone())
        .await
        .assert(403, Some("permission_denied"));
    let profile =
        app.get("/api/v1/school/teachers/", &admin).await.body["results"][0]["id"].clone();
    let subject = app
        .post(
            "/api/v1/school/subjects/",
            &admin,
            json!({"name": "Maths", "code": "MAT"}),
        )
        .await
        .body["id"]
        .clone();
    app.post(
        "/api/v1/school/teacher-assignments/",
        &admin,
        json!({"teacher": profile, "academic_class": class, "subject": subject}),
    )
    .await
    .assert(201, None);
    app.post(&take_path(&class), &teacher, body)
        .await
        .assert(200, None);
    app.post(
        &take_path(&other_class),
        &teacher,
        json!({"date": "2026-02-02", "records": lines(std::slice::from_ref(&other), "present")}),
    )
    .await
    .assert(403, Some("permission_denied"));
    let summary = |student: &str| format!("/api/v1/school/students/{student}/attendance-summary/");
    app.get(&summary(&students[0]), &teacher)
        .await
        .assert(200, None);
    app.get(&summary(&other), &teacher)
        .await
        .assert(403, Some("permission_denied"));
    // The school-wide resource stays with the permission holders.
    app.get(ATTENDANCE, &teacher)
        .await
        .assert(403, Some("permission_denied"));
    let norole = app.as_school_user("alpha", "norole").await;
    app.get(&summary(&students[0]), &norole)
        .await
        .assert(403, Some("permission_denied"));
}

#[tokio::test]
async fn the_summary_counts_days_per_status_and_the_rate() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let (class, students, _, _) = school_day(&app, &admin, 1).await;
    for (date, status) in [
        ("2026-09-01", "present"),
        ("2026-09-02", "late"),
        ("2026-09-03", "absent"),
        ("2026-09-04", "present"),
        ("2026-10-01", "excused"),
    ] {
        app.post(
            &take_path(&class),
            &admin,
            json!({"date": date, "records": lines(&students, status)}),
        )
        .await
        .assert(200, None);
    }
    let path = format!(
        "/api/v1/school/students/{}/attendance-summary/",
        students[0]
    );
    let all = app.get(&path, &admin).await;
    all.assert(200, None);
    assert_eq!(
        (
            all.body["days"].clone(),
            all.body["present"].clone(),
            all.body["late"].clone(),
            all.body["absent"].clone(),
            all.body["excused"].clone()
        ),
        (json!(5), json!(2), json!(1), json!(1), json!(1))
    );
    assert_eq!(all.body["attendance_rate"], 0.6);
    let september = app
        .get(
            &format!("{path}?date_from=2026-09-01&date_to=2026-09-30"),
            &admin,
        )
        .await;
    assert_eq!(september.body["days"], 4);
    assert_eq!(september.body["attendance_rate"], 0.75);
    assert_eq!(september.body["date_from"], "2026-09-01");
    let none = app
        .get(&format!("{path}?date_from=2027-01-01"), &admin)
        .await;
    assert_eq!(
        (
            none.body["days"].clone(),
            none.body["attendance_rate"].clone()
        ),
        (json!(0), Value::Null)
    );
    app.get(&format!("{path}?date_to=soon"), &admin)
        .await
        .assert(400, Some("invalid_query"));
    let missing = format!(
        "/api/v1/school/students/{}/attendance-summary/",
        uuid::Uuid::new_v4()
    );
    app.get(&missing, &admin)
        .await
        .assert(404, Some("not_found"));
}

#[tokio::test]
async fn teachers_record_and_correct_single_records_of_their_own_classes() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let teacher = app.as_school_user("alpha", "teacher").await;
    let norole = app.as_school_user("alpha", "norole").await;
    let (class, students, other_class, other) = school_day(&app, &admin, 2).await;
    let record = json!({"student": students[0], "date": "2026-03-02", "status": "absent"});
    // Without an assignment to the class: refused, as is a user without a teacher profile
    // (before the body is looked at).
    app.post(ATTENDANCE, &teacher, record.clone())
        .await
        .assert(403, Some("permission_denied"));
    app.post(ATTENDANCE, &norole, json!({"status": 1}))
        .await
        .assert(403, Some("permission_denied"));
    let profile =
        app.get("/api/v1/school/teachers/", &admin).await.body["results"][0]["id"].clone();
    let subject = app
        .post(
            "/api/v1/school/subjects/",
            &admin,
            json!({"name": "Maths", "code": "MAT"}),
        )
        .await
        .body["id"]
        .clone();
    app.post(
        "/api/v1/school/teacher-assignments/",
        &admin,
        json!({"teacher": profile, "academic_class": class, "subject": subject}),
    )
    .await
    .assert(201, None);
    let created = app.post(ATTENDANCE, &teacher, record).await;
    created.assert(201, None);
    let id = created.body["id"].as_str().expect("id").to_owned();
    let corrected = app
        .patch(
            &format!("{ATTENDANCE}{id}/"),
            &teacher,
            json!({"status": "late", "note": "bus"}),
        )
        .await;
    corrected.assert(200, None);
    assert_eq!(corrected.body["status"], "late");
    // Another class's student, moving a record to another class, deleting: refused.
    app.post(
        ATTENDANCE,
        &teacher,
        json!({"student": other, "date": "2026-03-02", "status": "absent"}),
    )
    .await
    .assert(403, Some("permission_denied"));
    app.patch(
        &format!("{ATTENDANCE}{id}/"),
        &teacher,
        json!({"academic_class": other_class}),
    )
    .await
    .assert(403, Some("permission_denied"));
    app.patch(
        &format!("{ATTENDANCE}{id}/"),
        &teacher,
        json!({"student": other}),
    )
    .await
    .assert(403, Some("permission_denied"));
    app.delete(&format!("{ATTENDANCE}{id}/"), &teacher)
        .await
        .assert(403, Some("permission_denied"));
    // A bad body from a teacher is a 400 like anyone's.
    app.post(
        ATTENDANCE,
        &teacher,
        json!({"student": students[1], "date": "2026-03-02", "status": "gone"}),
    )
    .await
    .assert(400, Some("validation_error"));
}
