//! The school's day through the API (issue 39): a class's register read back by its
//! teachers (`GET /classes/{id}/attendance/`), and a student who finds their own record in
//! `/auth/me/` and reads their own attendance summary, and nobody else's.

use serde_json::{Value, json};

use crate::helpers::{
    As, AttendanceLine, NewRecord, NewSchoolUser, PASSWORD, TakeAttendance, TestApp, spawn_app,
};

/// An active session over 2026 and two classes of two students each; answers the classes
/// and their students: ((form 1, [students]), (form 2, [students])).
async fn two_classes(app: &TestApp, admin: &As) -> ((String, Vec<String>), (String, Vec<String>)) {
    app.session_2026(admin).await;
    let numbers = |form: &str| (0..2).map(|n| format!("{form}-{n}")).collect::<Vec<_>>();
    let first = app.class_of(admin, "Form 1", &numbers("Form1")).await;
    let second = app.class_of(admin, "Form 2", &numbers("Form2")).await;
    (first, second)
}

fn register(class: &str) -> String {
    format!("/api/v1/school/classes/{class}/attendance/")
}

async fn take(app: &TestApp, who: &As, class: &str, date: &str, records: Vec<AttendanceLine<'_>>) {
    TakeAttendance {
        class,
        date,
        records,
    }
    .post(app, who)
    .await
    .assert(200, None);
}

fn statuses(page: &Value) -> Vec<(String, String, String)> {
    let mut found: Vec<(String, String, String)> = page["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            (
                r["date"].as_str().expect("date").to_owned(),
                r["student"].as_str().expect("student").to_owned(),
                r["status"].as_str().expect("status").to_owned(),
            )
        })
        .collect();
    found.sort();
    found
}

#[tokio::test]
async fn a_class_register_is_read_back_by_its_teacher_and_the_office_only() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let teacher = app.as_school_user("alpha", "teacher").await;
    let norole = app.as_school_user("alpha", "norole").await;
    let ((class, students), (other_class, others)) = two_classes(&app, &admin).await;
    app.assign_teacher(&admin, &class, "Maths", "MAT").await;
    let (a, b) = (&students[0], &students[1]);
    take(
        &app,
        &teacher,
        &class,
        "2026-03-02",
        vec![
            AttendanceLine::new(a, "present"),
            AttendanceLine {
                note: Some("ill"),
                ..AttendanceLine::new(b, "absent")
            },
        ],
    )
    .await;
    take(
        &app,
        &teacher,
        &class,
        "2026-03-03",
        vec![
            AttendanceLine::new(a, "late"),
            AttendanceLine::new(b, "present"),
        ],
    )
    .await;
    take(
        &app,
        &admin,
        &other_class,
        "2026-03-02",
        vec![AttendanceLine::new(&others[0], "absent")],
    )
    .await;

    // The day: the class's records only.
    let day = app
        .get(&format!("{}?date=2026-03-02", register(&class)), &teacher)
        .await;
    day.assert(200, None);
    assert_eq!(day.body["count"], 2);
    let mut expected = vec![
        ("2026-03-02".to_owned(), a.clone(), "present".to_owned()),
        ("2026-03-02".to_owned(), b.clone(), "absent".to_owned()),
    ];
    expected.sort();
    assert_eq!(statuses(&day.body), expected);
    let noted = day.body["results"]
        .as_array()
        .expect("results")
        .iter()
        .find(|r| r["student"] == b.as_str())
        .expect("b's record");
    assert_eq!(noted["note"], "ill");
    // The week, paged like every list.
    let week = format!(
        "{}?date_from=2026-02-27&date_to=2026-03-05",
        register(&class)
    );
    let all = app.get(&week, &teacher).await;
    assert_eq!(all.body["count"], 4);
    let first = app.get(&format!("{week}&page_size=3"), &teacher).await;
    assert_eq!(first.body["results"].as_array().map(Vec::len), Some(3));
    assert!(first.body["next"].is_string(), "{}", first.body);
    let one = app.get(&format!("{week}&student={a}"), &teacher).await;
    assert_eq!(one.body["count"], 2);
    // The office (the permission holders) reads any class.
    let office = app
        .get(
            &format!("{}?date=2026-03-02", register(&other_class)),
            &admin,
        )
        .await;
    assert_eq!(office.body["count"], 1);

    // Another class, no role, a bad date, an unknown class.
    app.get(&register(&other_class), &teacher)
        .await
        .assert(403, Some("permission_denied"));
    app.get(&register(&class), &norole)
        .await
        .assert(403, Some("permission_denied"));
    app.get(&format!("{}?date=2026-3-2", register(&class)), &teacher)
        .await
        .assert(400, Some("invalid_query"));
    app.get(&register(&uuid::Uuid::new_v4().to_string()), &admin)
        .await
        .assert(404, Some("not_found"));
    app.get(&format!("{}?page_size=1&page=9", register(&class)), &admin)
        .await
        .assert(404, Some("invalid_page"));

    // A correction through the single record shows in the register.
    let id = noted["id"].as_str().expect("id");
    app.patch(
        &format!("/api/v1/school/attendance/{id}/"),
        &teacher,
        json!({"status": "excused"}),
    )
    .await
    .assert(200, None);
    let again = app
        .get(
            &format!("{}?date=2026-03-02&student={b}", register(&class)),
            &teacher,
        )
        .await;
    assert_eq!(again.body["results"][0]["status"], "excused");
}

#[tokio::test]
async fn a_student_finds_their_record_and_reads_their_own_attendance_only() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let ((class, students), (other_class, others)) = two_classes(&app, &admin).await;
    take(
        &app,
        &admin,
        &class,
        "2026-03-02",
        vec![
            AttendanceLine::new(&students[0], "absent"),
            AttendanceLine::new(&students[1], "present"),
        ],
    )
    .await;
    take(
        &app,
        &admin,
        &other_class,
        "2026-03-02",
        vec![AttendanceLine::new(&others[0], "present")],
    )
    .await;
    NewSchoolUser {
        email: Some("pupil@alpha.test"),
        password: Some(PASSWORD),
        first_name: Some("Ada"),
        last_name: Some("Pupil"),
        roles: &["student"],
        student: Some(&students[0]),
        ..Default::default()
    }
    .create(&app, &admin)
    .await;
    let pupil = app.as_school_user_at("alpha", "pupil@alpha.test").await;

    let me = app.get("/api/v1/school/auth/me/", &pupil).await;
    me.assert(200, None);
    assert_eq!(me.body["student"]["id"], students[0].as_str());
    assert_eq!(me.body["student"]["academic_class"], class.as_str());
    assert_eq!(me.body["teacher"], Value::Null);
    let staff = app.get("/api/v1/school/auth/me/", &admin).await;
    assert_eq!(staff.body["student"], Value::Null);

    let summary = |student: &str| format!("/api/v1/school/students/{student}/attendance-summary/");
    let own = app.get(&summary(&students[0]), &pupil).await;
    own.assert(200, None);
    assert_eq!(
        (own.body["days"].clone(), own.body["absent"].clone()),
        (json!(1), json!(1))
    );
    // A classmate, another class's student, the class's register, the collection.
    for other in [&students[1], &others[0]] {
        app.get(&summary(other), &pupil)
            .await
            .assert(403, Some("permission_denied"));
    }
    app.get(&register(&class), &pupil)
        .await
        .assert(403, Some("permission_denied"));
    app.get("/api/v1/school/attendance/", &pupil)
        .await
        .assert(403, Some("permission_denied"));
    app.get("/api/v1/school/students/", &pupil)
        .await
        .assert(403, Some("permission_denied"));

    // Unlinked, the account reads its old record no more.
    app.patch(
        &format!("/api/v1/school/students/{}/", students[0]),
        &admin,
        json!({"user": null}),
    )
    .await
    .assert(200, None);
    let me = app.get("/api/v1/school/auth/me/", &pupil).await;
    assert_eq!(me.body["student"], Value::Null);
    app.get(&summary(&students[0]), &pupil)
        .await
        .assert(403, Some("permission_denied"));
}

#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

#[tokio::test]
async fn the_demo_student_account_is_a_student_of_the_school_under_its_own_name() {
    use diesel::{Connection, PgConnection, RunQueryDsl};
    tokio::task::spawn_blocking(|| {
        let db = crate::helpers::TestDb::new();
        let (ok, out, err) = crate::helpers::cli(&db.url, "demo", &[]);
        assert!(ok, "{out}{err}");
        let mut conn = PgConnection::establish(&db.url).expect("connect");
        for school in ["greenwood", "riverside"] {
            let linked = diesel::sql_query(format!(
                "SELECT count(*) AS n FROM {school}.students s \
                 JOIN public.users u ON u.id = s.user_id \
                 WHERE u.email = 'student@{school}.test' AND NOT s.is_deleted \
                   AND s.academic_class_id IS NOT NULL \
                   AND s.first_name = u.first_name AND s.last_name = u.last_name"
            ))
            .get_result::<Count>(&mut conn)
            .expect("count");
            assert_eq!(
                linked.n, 1,
                "{school}'s demo student account has one record"
            );
        }
    })
    .await
    .expect("test");
}
