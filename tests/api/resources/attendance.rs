//! Attendance: the CRUD resource and its filters, taking a class's attendance (upsert,
//! membership, dates, duplicates, concurrency), teachers reaching only their classes, and
//! a student's summary.

use serde_json::{Value, json};

use crate::helpers::{
    As, AttendanceLine, NewAttendance, NewRecord, TakeAttendance, TestApp, spawn_app,
};

const ATTENDANCE: &str = "/api/v1/school/attendance/";

/// An active session over 2026, a class with `size` students and another class with one;
/// answers (class id, its student ids, the other class id, the other class's student id).
async fn school_day(
    app: &TestApp,
    admin: &As,
    size: usize,
) -> (String, Vec<String>, String, String) {
    app.session_2026(admin).await;
    let numbers: Vec<String> = (0..size).map(|n| format!("F1-{n}")).collect();
    let (form1, students) = app.class_of(admin, "Form 1", &numbers).await;
    let (form2, mut others) = app.class_of(admin, "Form 2", &["F2-0".into()]).await;
    (form1, students, form2, others.remove(0))
}

#[tokio::test]
async fn records_are_one_per_student_and_date_and_lists_filter() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let (class, students, other_class, other) = school_day(&app, &admin, 2).await;
    let created = NewAttendance {
        student: &students[0],
        academic_class: Some(&class),
        date: "2026-03-02",
        status: "late",
        note: Some("bus"),
    }
    .post(&app, &admin)
    .await;
    created.assert(201, None);
    assert_eq!(created.body["status"], "late");
    assert_eq!(created.body["date"], "2026-03-02");
    assert_eq!(created.body["student"], students[0].as_str());
    NewAttendance {
        student: &students[0],
        date: "2026-03-02",
        status: "present",
        ..Default::default()
    }
    .post(&app, &admin)
    .await
    .assert(409, Some("conflict"));
    // Invalid on every field at once: the body as a client might send it.
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
    NewAttendance {
        student: &other,
        academic_class: Some(&other_class),
        date: "2026-03-03",
        status: "absent",
        ..Default::default()
    }
    .post(&app, &admin)
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

/// Posts `take`, which `field` makes invalid: refused, naming the field.
async fn refused(app: &TestApp, admin: &As, take: TakeAttendance<'_>, field: &str) {
    let reply = take.post(app, admin).await;
    reply.assert(400, Some("validation_error"));
    assert!(
        reply.body["errors"].get(field).is_some(),
        "{field}: {}",
        reply.body
    );
}

#[tokio::test]
async fn taking_a_class_upserts_every_record_in_one_go() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let (class, students, _, other) = school_day(&app, &admin, 3).await;
    let first = TakeAttendance::all(&class, "2026-05-04", &students, "present")
        .post(&app, &admin)
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
    let mut again = TakeAttendance::all(&class, "2026-05-04", &students, "present");
    again.records[1] = AttendanceLine {
        student: &students[1],
        status: "absent",
        note: Some("ill"),
    };
    let second = again.post(&app, &admin).await;
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
    let mut outsider = TakeAttendance::all(&class, "2026-05-05", &students, "late");
    outsider.records[2].student = &other;
    refused(&app, &admin, outsider, "records[2].student").await;
    let twice = [
        students[0].clone(),
        students[1].clone(),
        students[0].clone(),
    ];
    refused(
        &app,
        &admin,
        TakeAttendance::all(&class, "2026-05-05", &twice, "late"),
        "records[2].student",
    )
    .await;
    refused(
        &app,
        &admin,
        TakeAttendance::all(&class, "2027-01-04", &students, "late"),
        "date",
    )
    .await;
    refused(
        &app,
        &admin,
        TakeAttendance::all(&class, "2026-05-05", &students[..1], "gone"),
        "records[0].status",
    )
    .await;
    refused(
        &app,
        &admin,
        TakeAttendance::all(&class, "2026-05-05", &[], "late"),
        "records",
    )
    .await;
    assert_eq!(
        app.get(&format!("{ATTENDANCE}?date=2026-05-05"), &admin)
            .await
            .body["count"],
        0
    );
    let missing = uuid::Uuid::new_v4().to_string();
    TakeAttendance::all(&missing, "2026-05-05", &students, "late")
        .post(&app, &admin)
        .await
        .assert(404, Some("not_found"));
}

#[tokio::test]
async fn concurrent_takes_of_one_class_and_date_never_duplicate_a_student() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let (class, students, _, _) = school_day(&app, &admin, 10).await;
    let takes = ["present", "absent", "late", "excused", "present", "late"]
        .map(|status| TakeAttendance::all(&class, "2026-06-01", &students, status));
    let posts = takes.iter().map(|take| take.post(&app, &admin));
    for reply in futures_util::future::join_all(posts).await {
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
    let take = TakeAttendance::all(&class, "2026-02-02", &students, "present");
    take.post(&app, &teacher)
        .await
        .assert(403, Some("permission_denied"));
    app.assign_teacher(&admin, &class, "Maths", "MAT").await;
    take.post(&app, &teacher).await.assert(200, None);
    TakeAttendance::all(
        &other_class,
        "2026-02-02",
        std::slice::from_ref(&other),
        "present",
    )
    .post(&app, &teacher)
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
        TakeAttendance::all(&class, date, &students, status)
            .post(&app, &admin)
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
    let record = NewAttendance {
        student: &students[0],
        date: "2026-03-02",
        status: "absent",
        ..Default::default()
    };
    // Without an assignment to the class: refused, as is a user without a teacher profile
    // (before the body is looked at: a malformed one).
    record
        .post(&app, &teacher)
        .await
        .assert(403, Some("permission_denied"));
    app.post(ATTENDANCE, &norole, json!({"status": 1}))
        .await
        .assert(403, Some("permission_denied"));
    app.assign_teacher(&admin, &class, "Maths", "MAT").await;
    let created = record.post(&app, &teacher).await;
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
    NewAttendance {
        student: &other,
        date: "2026-03-02",
        status: "absent",
        ..Default::default()
    }
    .post(&app, &teacher)
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
    NewAttendance {
        student: &students[1],
        date: "2026-03-02",
        status: "gone",
        ..Default::default()
    }
    .post(&app, &teacher)
    .await
    .assert(400, Some("validation_error"));
}
