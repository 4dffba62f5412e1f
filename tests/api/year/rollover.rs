//! The school year (API.md 10): enrollments by session, a student's class as the active
//! session's enrollment, the migration that fills enrollments for existing schools, and the
//! rollover (plan equal to apply, last year unchanged, one apply per session).

use std::time::Duration;

use diesel::{Connection, QueryableByName, RunQueryDsl, pg::PgConnection, sql_types};
use school_service::{auth::roles, db::Db, tenancy::school_migrations::migrate_school};
use serde_json::{Value, json};

use crate::helpers::{
    As, AttendanceLine, CLASSES, ENROLLMENTS, Enrollment, NewClass, NewEnrollment, NewExam,
    NewExamSession, NewMark, NewRecord, NewSession, NewStudent, NewSubject, Rollover, SESSIONS,
    STUDENTS, Student, TakeAttendance, TestApp, TestDb, item, school_at_version, spawn_app,
};

async fn new_session(app: &TestApp, who: &As, name: &str) -> String {
    let session = NewSession::new(name, "2025-09-01", "2026-07-31");
    session.create(app, who).await.id
}

async fn new_class(app: &TestApp, who: &As, name: &str, level: Option<i64>) -> String {
    NewClass { name, level }.create(app, who).await.id
}

async fn new_student(app: &TestApp, who: &As, number: &str, class: &str) -> String {
    let student = NewStudent::new(number, "Zoë", number).in_class(class);
    student.create(app, who).await.id
}

async fn enrollments_of(app: &TestApp, who: &As, query: &str) -> Vec<Enrollment> {
    let path = format!("{ENROLLMENTS}?page_size=200&{query}");
    app.list(&path, who).await.results
}

async fn student(app: &TestApp, who: &As, id: &str) -> Student {
    app.get(&item(STUDENTS, id), who).await.typed(200)
}

#[tokio::test]
async fn a_students_class_is_their_enrollment_in_the_active_session() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let session = new_session(&app, &admin, "2025/26").await;
    let (one, two) = (
        new_class(&app, &admin, "One", Some(1)).await,
        new_class(&app, &admin, "Two", Some(2)).await,
    );
    let ann = new_student(&app, &admin, "A-1", &one).await;
    let mine = enrollments_of(&app, &admin, &format!("student={ann}")).await;
    assert_eq!(
        mine.len(),
        1,
        "creating a student with a class enrolls them"
    );
    assert_eq!(
        (
            &mine[0].academic_class,
            &mine[0].academic_session,
            mine[0].status.as_str()
        ),
        (&one, &session, "active")
    );

    // PATCHing the class moves the enrollment; no second one appears.
    app.patch(
        &format!("{STUDENTS}{ann}/"),
        &admin,
        json!({"academic_class": two}),
    )
    .await
    .assert(200, None);
    let mine = enrollments_of(&app, &admin, &format!("student={ann}")).await;
    assert_eq!(mine.len(), 1);
    assert_eq!(mine[0].academic_class, two);

    // An enrollment written for the active session sets the student's class.
    let bob = NewStudent::new("B-1", "Bob", "Lee")
        .create(&app, &admin)
        .await
        .id;
    let bob_in_one = NewEnrollment {
        student: &bob,
        academic_class: &one,
        academic_session: Some(&session),
    };
    let enrollment = bob_in_one.create(&app, &admin).await;
    assert_eq!(enrollment.status, "active");
    let bob_now = student(&app, &admin, &bob).await;
    assert_eq!(bob_now.academic_class.as_ref(), Some(&one));
    app.patch(
        &item(ENROLLMENTS, &enrollment.id),
        &admin,
        json!({"academic_class": two}),
    )
    .await
    .assert(200, None);
    let bob_now = student(&app, &admin, &bob).await;
    assert_eq!(bob_now.academic_class.as_ref(), Some(&two));
    // One live enrollment per (student, session).
    bob_in_one
        .post(&app, &admin)
        .await
        .assert(409, Some("conflict"));
    // References and the status are checked.
    let bad = app
        .post(
            ENROLLMENTS,
            &admin,
            json!({"student": bob, "academic_class": uuid::Uuid::new_v4(), "academic_session": session, "status": "gone"}),
        )
        .await;
    bad.assert(400, Some("validation_error"));
    assert!(
        bad.body["errors"]["academic_class"].is_array() && bad.body["errors"]["status"].is_array()
    );

    // A class emptied by hand withdraws the active enrollment.
    app.patch(
        &format!("{STUDENTS}{ann}/"),
        &admin,
        json!({"academic_class": null}),
    )
    .await
    .assert(200, None);
    let mine = enrollments_of(&app, &admin, &format!("student={ann}")).await;
    assert_eq!(mine[0].status, "withdrawn");

    // Teachers may read enrollments but not write them; office may write.
    let teacher = app.as_school_user("alpha", "teacher").await;
    app.get(ENROLLMENTS, &teacher).await.assert(200, None);
    app.post_empty(ENROLLMENTS, &teacher)
        .await
        .assert(403, Some("permission_denied"));
    app.get(&format!("{ENROLLMENTS}?status=nope"), &admin)
        .await
        .assert(400, Some("invalid_query"));
}

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = sql_types::Text)]
    number: String,
    #[diesel(sql_type = sql_types::Text)]
    class: String,
    #[diesel(sql_type = sql_types::Text)]
    session: String,
}

#[tokio::test]
async fn migrate_fills_the_active_sessions_enrollments_of_an_existing_school() {
    tokio::task::spawn_blocking(|| {
        let test_db = TestDb::new();
        let db = Db::new(&test_db.url, 2, Duration::from_secs(10));
        let school = school_at_version(&db, "older_year", "20261124000002");
        let mut conn = PgConnection::establish(&test_db.url).expect("connect");
        for statement in [
            "INSERT INTO older_year.academic_sessions (name, start_date, end_date, is_active) VALUES \
             ('Old', '2024-09-01', '2025-07-31', false), ('Now', '2025-09-01', '2026-07-31', true)",
            "INSERT INTO older_year.academic_classes (name, level) VALUES ('One', 1), ('Two', 2)",
            "INSERT INTO older_year.students (admission_number, first_name, last_name, academic_class_id, is_deleted) \
             SELECT 'S-' || g, 'F', 'L', (SELECT id FROM older_year.academic_classes WHERE name = CASE WHEN g % 2 = 0 THEN 'One' ELSE 'Two' END), g = 5 \
             FROM generate_series(1, 6) g",
            "INSERT INTO older_year.students (admission_number, first_name, last_name) VALUES ('NO-CLASS', 'F', 'L')",
        ] {
            diesel::sql_query(statement).execute(&mut conn).expect(statement);
        }
        db.with_tenant(&school, |conn| Ok(migrate_school(conn, roles::SEED)))
            .expect("bind")
            .expect("migrate");
        let rows: Vec<Row> = diesel::sql_query(
            "SELECT s.admission_number AS number, c.name AS class, a.name AS session \
             FROM older_year.enrollments e JOIN older_year.students s ON s.id = e.student_id \
             JOIN older_year.academic_classes c ON c.id = e.academic_class_id \
             JOIN older_year.academic_sessions a ON a.id = e.academic_session_id \
             WHERE e.status = 'active' AND NOT e.is_deleted ORDER BY s.admission_number",
        )
        .load(&mut conn)
        .expect("enrollments");
        let got: Vec<(String, String, String)> = rows
            .into_iter()
            .map(|r| (r.number, r.class, r.session))
            .collect();
        let want: Vec<(String, String, String)> = [("S-1", "Two"), ("S-2", "One"), ("S-3", "Two"), ("S-4", "One"), ("S-6", "One")]
            .iter()
            .map(|(n, c)| (n.to_string(), c.to_string(), "Now".to_string()))
            .collect();
        assert_eq!(got, want, "live students with a class, in the active session only");
    })
    .await
    .expect("test");
}

/// A year of school: classes One (level 1), Two (2), Three (3) and a level-less empty one,
/// seven students (one given a class before the session began), an exam per class with
/// marks, and a day of attendance. Answers (session, exam session's cards path, classes,
/// students by number).
struct Year {
    session: String,
    cards: String,
    classes: Vec<String>,
    students: Vec<(String, String)>,
}

async fn a_year(app: &TestApp, admin: &As) -> Year {
    let one = new_class(app, admin, "One", Some(1)).await;
    let two = new_class(app, admin, "Two", Some(2)).await;
    let three = new_class(app, admin, "Three", Some(3)).await;
    new_class(app, admin, "Club", None).await;
    let early = new_student(app, admin, "E-1", &two).await;
    let session = new_session(app, admin, "2025/26").await;
    let mut students = vec![("E-1".to_owned(), early)];
    for (number, class) in [
        ("O-1", &one),
        ("O-2", &one),
        ("O-3", &one),
        ("T-1", &two),
        ("H-1", &three),
        ("H-2", &three),
    ] {
        students.push((
            number.to_owned(),
            new_student(app, admin, number, class).await,
        ));
    }
    let exam_session = NewExamSession {
        session: &session,
        name: "Term 1",
        term: "T1",
        start_date: Some("2025-09-01"),
        end_date: Some("2025-12-31"),
    }
    .create(app, admin)
    .await;
    let subject = NewSubject::new("Maths", "MAT").create(app, admin).await;
    let exams = exam_session.exams();
    for (class, prefix) in [(&one, "O"), (&two, "T"), (&three, "H")] {
        let exam = NewExam {
            exams: &exams,
            name: "Maths",
            subject: &subject.id,
            academic_class: class,
            ..Default::default()
        }
        .create(app, admin)
        .await;
        let marks = format!("{exams}{}/marks/", exam.id);
        for (n, (number, _)) in students.iter().enumerate() {
            if number.starts_with(prefix) || (prefix == "T" && number == "E-1") {
                let mark = NewMark {
                    marks: &marks,
                    studentadmissionnumber: number,
                    mark: Some(40 + 7 * n as i64),
                    ..Default::default()
                };
                mark.create(app, admin).await;
            }
        }
    }
    let records = (students[1..4].iter())
        .zip(["present", "late", "absent"])
        .map(|((_, id), status)| AttendanceLine::new(id, status))
        .collect();
    TakeAttendance {
        class: &one,
        date: "2025-10-01",
        records,
    }
    .post(app, admin)
    .await
    .assert(200, None);
    Year {
        session,
        cards: exam_session.report_cards(),
        classes: vec![one, two, three],
        students,
    }
}

/// What last year shows: each class's cards and students, each student's card and
/// attendance summary.
async fn last_year(app: &TestApp, admin: &As, year: &Year) -> Vec<Value> {
    let mut answers = Vec::new();
    for class in &year.classes {
        let cards = app
            .get(&format!("{}?academic_class={class}", year.cards), admin)
            .await;
        cards.assert(200, None);
        answers.push(cards.body.clone());
        let path = format!(
            "{CLASSES}{class}/students/?academic_session={}",
            year.session
        );
        let students = app.get(&path, admin).await;
        students.assert(200, None);
        // Who was in the class; each record itself shows the student's class today.
        let ids: Vec<Value> = (students.body["results"].as_array().expect("results").iter())
            .map(|s| s["id"].clone())
            .collect();
        answers.push(json!({"count": students.body["count"], "ids": ids}));
    }
    for (_, student) in &year.students {
        let card = app.get(&format!("{}{student}/", year.cards), admin).await;
        card.assert(200, None);
        answers.push(card.body.clone());
        let summary = format!("{STUDENTS}{student}/attendance-summary/");
        answers.push(app.get(&summary, admin).await.body.clone());
    }
    answers
}

fn rollover_path(session: &str) -> String {
    format!("{SESSIONS}{session}/rollover/")
}

#[tokio::test]
async fn a_rollover_applies_its_dry_run_and_leaves_last_year_as_it_was() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let year = a_year(&app, &admin).await;
    let before = last_year(&app, &admin, &year).await;
    let student = |number: &str| {
        year.students
            .iter()
            .find(|(n, _)| n == number)
            .map(|(_, id)| id.clone())
            .expect("student")
    };
    let rollover = |dry_run: bool| Rollover {
        session: &year.session,
        name: "2026/27",
        start_date: "2026-09-01",
        end_date: "2027-07-31",
        retain: Some(vec![student("O-3")]),
        leave: Some(vec![student("T-1")]),
        dry_run: Some(dry_run),
        ..Default::default()
    };

    let dry = rollover(true).create(&app, &admin).await;
    assert!(dry.dry_run);
    assert!(dry.session.is_none());
    let plan = dry.plan.clone();
    // The early student (class set before the session began) counts as enrolled.
    assert_eq!(
        [
            &plan["promoted"],
            &plan["retained"],
            &plan["graduated"],
            &plan["left"]
        ],
        [&json!(3), &json!(1), &json!(2), &json!(1)]
    );
    let (one, two, three) = (&year.classes[0], &year.classes[1], &year.classes[2]);
    assert_eq!(
        plan["by_class"],
        json!([{"from_class": one, "to_class": two, "students": 2},
               {"from_class": two, "to_class": three, "students": 1},
               {"from_class": three, "to_class": null, "students": 0}])
    );
    assert_eq!(
        last_year(&app, &admin, &year).await,
        before,
        "a dry run writes nothing"
    );
    assert_eq!(
        app.get(&format!("{SESSIONS}{}/", year.session), &admin)
            .await
            .body["is_active"],
        true
    );

    let applied = rollover(false).create(&app, &admin).await;
    assert_eq!(applied.plan, plan, "the apply is the dry run's plan");
    let new_session = applied.session.expect("the new session");
    assert_eq!(new_session.is_active, true);
    let new_session = new_session.id;

    // Last year reads as before; this year holds the promoted and retained.
    assert_eq!(last_year(&app, &admin, &year).await, before);
    let class_of = |number: &'static str| {
        let (app, admin, id) = (&app, &admin, student(number));
        async move { self::student(app, admin, &id).await.academic_class }
    };
    assert_eq!(class_of("O-1").await.as_ref(), Some(two));
    assert_eq!(class_of("O-3").await.as_ref(), Some(one), "retained");
    assert_eq!(class_of("E-1").await.as_ref(), Some(three));
    assert_eq!(class_of("T-1").await, None, "left");
    assert_eq!(class_of("H-1").await, None, "graduated");
    let old = enrollments_of(&app, &admin, &format!("academic_session={}", year.session)).await;
    let statuses: Vec<&str> = old.iter().map(|e| e.status.as_str()).collect();
    assert_eq!(old.len(), 7);
    assert_eq!(statuses.iter().filter(|s| **s == "withdrawn").count(), 1);
    assert!(
        statuses
            .iter()
            .all(|s| *s == "withdrawn" || *s == "completed")
    );
    let new = enrollments_of(&app, &admin, &format!("academic_session={new_session}")).await;
    assert_eq!(new.len(), 4, "promoted + retained");
    let this_year = app.get(&format!("{CLASSES}{two}/students/"), &admin).await;
    assert_eq!(this_year.body["count"], 2, "O-1 and O-2 moved up into Two");

    // A second apply (or dry run) is refused, naming the session the first made.
    let again = rollover(false).post(&app, &admin).await;
    again.assert(409, Some("conflict"));
    assert!(
        again.body["detail"]
            .as_str()
            .expect("detail")
            .contains(&new_session)
    );
    rollover(true)
        .post(&app, &admin)
        .await
        .assert(409, Some("conflict"));
    let sessions = app.get(SESSIONS, &admin).await;
    assert_eq!(sessions.body["count"], 2);
}

#[tokio::test]
async fn an_ambiguous_next_class_is_refused_naming_the_class() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let session = new_session(&app, &admin, "2025/26").await;
    let one = new_class(&app, &admin, "Year 1", Some(1)).await;
    let two_a = new_class(&app, &admin, "Year 2A", Some(2)).await;
    new_class(&app, &admin, "Year 2B", Some(2)).await;
    let free = new_class(&app, &admin, "Choir", None).await;
    new_student(&app, &admin, "S-1", &one).await;
    new_student(&app, &admin, "S-2", &free).await;
    let next = Rollover {
        session: &session,
        name: "Next",
        start_date: "2026-09-01",
        end_date: "2027-07-31",
        ..Default::default()
    };
    let refused = next.post(&app, &admin).await;
    refused.assert(400, Some("validation_error"));
    let messages = refused.body["errors"]["promotions"].to_string();
    assert!(
        messages.contains("Year 1") && messages.contains("Choir"),
        "{messages}"
    );
    assert_eq!(
        app.get(SESSIONS, &admin).await.body["count"],
        1,
        "nothing written"
    );

    let named = Rollover {
        promotions: Some(json!([{"from_class": one, "to_class": two_a},
                                {"from_class": free, "to_class": null}])),
        ..next
    };
    let applied = named.create(&app, &admin).await;
    assert_eq!(applied.plan["promoted"], 1);
    assert_eq!(applied.plan["graduated"], 1);
    // Bad bodies: 400 with the field named; an unknown session 404.
    let bad = app
        .post(&rollover_path(&session), &admin, json!({"name": "", "start_date": "2027-01-01", "end_date": "2026-01-01", "retain": "x"}))
        .await;
    bad.assert(400, Some("validation_error"));
    for field in ["name", "end_date", "retain"] {
        assert!(
            bad.body["errors"][field].is_array(),
            "{field}: {}",
            bad.body
        );
    }
    let missing = rollover_path(&uuid::Uuid::new_v4().to_string());
    app.post_empty(&missing, &admin)
        .await
        .assert(404, Some("not_found"));
    let teacher = app.as_school_user("alpha", "teacher").await;
    app.post_empty(&rollover_path(&session), &teacher)
        .await
        .assert(403, Some("permission_denied"));
}

#[tokio::test]
async fn of_two_concurrent_applies_one_wins() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let session = new_session(&app, &admin, "2025/26").await;
    let one = new_class(&app, &admin, "One", Some(1)).await;
    new_class(&app, &admin, "Two", Some(2)).await;
    for n in 0..20 {
        new_student(&app, &admin, &format!("S-{n}"), &one).await;
    }
    let rollover = |name| Rollover {
        session: &session,
        name,
        start_date: "2026-09-01",
        end_date: "2027-07-31",
        ..Default::default()
    };
    let (a, b) = (rollover("A"), rollover("B"));
    let (a, b) = tokio::join!(a.post(&app, &admin), b.post(&app, &admin));
    let mut statuses = [a.status, b.status];
    statuses.sort();
    assert_eq!(statuses, [200, 409]);
    assert_eq!(app.get(SESSIONS, &admin).await.body["count"], 2);
    let new = enrollments_of(&app, &admin, "status=active").await;
    assert_eq!(new.len(), 20, "one new enrollment per student, not two");
}
