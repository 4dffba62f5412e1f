//! Exams, marks and the spec's special operations on them. Validation refusals keep their
//! bodies as raw JSON: the body is what they test.

use futures_util::future::join_all;
use serde_json::json;

use crate::helpers::{
    As, ConfirmMark, NewClass, NewExam, NewExamSession, NewMark, NewRecord, NewSession, NewStudent,
    NewSubject, NewTeacherAssignment, TEACHERS, Teacher, TestApp, spawn_app,
};

/// What [`exam_setup`] made.
struct Setup {
    /// The exam session's exams.
    exams: String,
    class: String,
    /// Maths, then Physics.
    subjects: Vec<String>,
    /// The alpha teacher's profile.
    teacher: String,
    exam_session: String,
}

/// An academic session and exam session, one class with two subjects assigned to the
/// alpha teacher; answers the exams path.
async fn exam_setup(app: &TestApp, admin: &As) -> (String, Setup) {
    let session = app.session_2026(admin).await;
    let exam_session = NewExamSession {
        session: &session.id,
        name: "Finals",
        term: "Term 3",
        ..Default::default()
    }
    .create(app, admin)
    .await;
    let class = NewClass::named("Form 4").create(app, admin).await.id;
    let teacher = app.list::<Teacher>(TEACHERS, admin).await.results[0]
        .id
        .clone();
    let mut subjects = Vec::new();
    for (name, code) in [("Maths", "MAT"), ("Physics", "PHY")] {
        let subject = NewSubject::new(name, code).create(app, admin).await.id;
        NewTeacherAssignment {
            teacher: &teacher,
            academic_class: &class,
            subject: &subject,
        }
        .create(app, admin)
        .await;
        subjects.push(subject);
    }
    let setup = Setup {
        exams: exam_session.exams(),
        class,
        subjects,
        teacher,
        exam_session: exam_session.id.clone(),
    };
    (exam_session.exams(), setup)
}

impl Setup {
    /// An exam "Mock" of Maths for the class.
    fn mock(&self) -> NewExam<'_> {
        NewExam {
            exams: &self.exams,
            name: "Mock",
            subject: &self.subjects[0],
            academic_class: &self.class,
            ..Default::default()
        }
    }
}

#[tokio::test]
async fn auto_create_teacher_exams_creates_once_and_reports() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let teacher = app.as_school_user("alpha", "teacher").await;
    let (exams, ids) = exam_setup(&app, &admin).await;
    let auto = format!("{exams}auto-create-teacher-exams/");
    let first = app.post_empty(&auto, &teacher).await;
    first.assert(200, None);
    let body = &first.body;
    assert_eq!(body["success"], true);
    assert_eq!(
        body["summary"],
        json!({"total_assignments": 2, "newly_created": 2, "already_existed": 0, "created_by_you": 0, "created_by_others": 0})
    );
    let created = body["details"]["created_exams"]
        .as_array()
        .expect("created");
    assert_eq!(created[0]["subject"], "Maths");
    assert_eq!(created[0]["subject_code"], "MAT");
    assert_eq!(created[0]["academic_class"], "Form 4");
    assert_eq!(created[0]["created"], true);
    assert_eq!(body["teacher"]["id"], ids.teacher.as_str());
    assert_eq!(body["teacher"]["name"], "teacher Test");
    assert_eq!(
        body["exam_session"],
        json!({"id": ids.exam_session, "name": "Finals", "term": "Term 3"})
    );
    assert!(
        body["message"]
            .as_str()
            .expect("message")
            .starts_with("Created 2 exams")
    );

    let second = app.post(&auto, &teacher, json!({"anything": [1, 2]})).await;
    second.assert(200, None);
    assert_eq!(
        second.body["summary"],
        json!({"total_assignments": 2, "newly_created": 0, "already_existed": 2, "created_by_you": 2, "created_by_others": 0})
    );
    let existing = &second.body["details"]["existing_exams"][0];
    assert_eq!(existing["created_by"], "teacher Test");
    assert_eq!(existing["created_by_you"], true);
    let list = app.get(&exams, &admin).await;
    assert_eq!(list.body["count"], 2);
    assert_eq!(list.body["results"][0]["name"], "Maths - Form 4");
    assert_eq!(list.body["results"][0]["max_mark"], 100);

    app.post_empty(&auto, &admin)
        .await
        .assert(403, Some("not_a_teacher"));
    let student_role = app.as_school_user("alpha", "norole").await;
    app.post_empty(&auto, &student_role)
        .await
        .assert(403, Some("permission_denied"));
}

#[tokio::test]
async fn concurrent_auto_creates_never_duplicate_an_exam() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let teacher = app.as_school_user("alpha", "teacher").await;
    let (exams, _) = exam_setup(&app, &admin).await;
    let auto = format!("{exams}auto-create-teacher-exams/");
    let replies = join_all((0..8).map(|_| app.post_empty(&auto, &teacher))).await;
    let created: i64 = replies
        .iter()
        .map(|r| {
            r.assert(200, None).body["summary"]["newly_created"]
                .as_i64()
                .expect("n")
        })
        .sum();
    assert_eq!(created, 2);
    assert_eq!(app.get(&exams, &admin).await.body["count"], 2);
}

#[tokio::test]
async fn exams_check_their_parents_and_fields() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let (exams, ids) = exam_setup(&app, &admin).await;
    let exam = NewExam {
        max_mark: Some(1000),
        ..ids.mock()
    };
    let created = exam.post(&app, &admin).await;
    created.assert(201, None);
    assert_eq!(created.body["exam_session"], ids.exam_session.as_str());
    exam.post(&app, &admin).await.assert(409, Some("conflict"));
    app.post(&exams, &admin, json!({"name": "X", "subject": ids.subjects[1], "academic_class": ids.class, "max_mark": 1001})).await.assert(400, Some("validation_error"));
    let other_session = NewSession::new("B", "2026-01-01", "2026-02-01")
        .create(&app, &admin)
        .await
        .id;
    let wrong_parent = format!(
        "/api/v1/school/sessions/{other_session}/exam-sessions/{}/exams/",
        ids.exam_session
    );
    app.get(&wrong_parent, &admin)
        .await
        .assert(404, Some("not_found"));
}

/// An exam with two students; answers the marks path.
async fn marks_setup(app: &TestApp, admin: &As) -> String {
    let (exams, ids) = exam_setup(app, admin).await;
    let exam = NewExam {
        exams: &exams,
        name: "Paper 1",
        subject: &ids.subjects[0],
        academic_class: &ids.class,
        ..Default::default()
    }
    .create(app, admin)
    .await
    .id;
    for number in ["ADM-1", "ADM-2"] {
        let student = NewStudent::new(number, "S", number);
        student.create(app, admin).await;
    }
    format!("{exams}{exam}/marks/")
}

#[tokio::test]
async fn confirm_students_upserts_one_live_mark() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let teacher = app.as_school_user("alpha", "teacher").await;
    let marks = marks_setup(&app, &admin).await;
    let confirm = format!("{marks}confirm-students/");
    // ADM-1's mark.
    let confirmed = |mark: i64| NewMark {
        marks: &marks,
        studentadmissionnumber: "ADM-1",
        mark: Some(mark),
        ..Default::default()
    };
    let first = ConfirmMark(NewMark {
        symbol: Some("B"),
        ..confirmed(70)
    })
    .post(&app, &teacher)
    .await;
    first.assert(200, None);
    for key in [
        "id",
        "exam",
        "studentadmissionnumber",
        "mark",
        "symbol",
        "comment",
        "is_deleted",
        "created_at",
        "updated_at",
    ] {
        assert!(first.body.get(key).is_some(), "{key}");
    }
    let second = ConfirmMark(confirmed(75)).post(&app, &teacher).await;
    second.assert(200, None);
    assert_eq!(second.body["id"], first.body["id"]);
    assert_eq!(
        (second.body["mark"].clone(), second.body["symbol"].clone()),
        (json!(75), json!("B"))
    );
    app.post(
        &confirm,
        &teacher,
        json!({"studentadmissionnumber": "NOPE", "mark": 1}),
    )
    .await
    .assert(400, Some("validation_error"));
    app.post(&confirm, &teacher, json!({"mark": 1}))
        .await
        .assert(400, Some("validation_error"));
    app.post(
        &confirm,
        &teacher,
        json!({"studentadmissionnumber": "ADM-1", "mark": 2147483648i64}),
    )
    .await
    .assert(400, Some("validation_error"));
    ConfirmMark(confirmed(2147483647))
        .post(&app, &teacher)
        .await
        .assert(200, None);
    app.post(
        &confirm,
        &teacher,
        json!({"studentadmissionnumber": "ADM-1", "symbol": "s".repeat(256)}),
    )
    .await
    .assert(400, Some("validation_error"));
    // is_deleted soft-deletes that mark; the next confirm starts a new one.
    let deleted = ConfirmMark(NewMark {
        marks: &marks,
        studentadmissionnumber: "ADM-1",
        is_deleted: Some(true),
        ..Default::default()
    })
    .post(&app, &teacher)
    .await;
    assert_eq!(deleted.body["is_deleted"], true);
    assert_eq!(app.get(&marks, &teacher).await.body["count"], 0);
    let fresh = ConfirmMark(confirmed(10)).post(&app, &teacher).await;
    assert_ne!(fresh.body["id"], first.body["id"]);
    let office = app.as_school_user("alpha", "norole").await;
    ConfirmMark(NewMark {
        marks: &marks,
        studentadmissionnumber: "ADM-1",
        ..Default::default()
    })
    .post(&app, &office)
    .await
    .assert(403, Some("permission_denied"));
}

#[tokio::test]
async fn concurrent_confirms_leave_one_live_mark_and_distinct_ones_are_all_kept() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let marks = marks_setup(&app, &admin).await;
    let confirm = |number, mark| {
        ConfirmMark(NewMark {
            marks: &marks,
            studentadmissionnumber: number,
            mark: Some(mark),
            ..Default::default()
        })
    };
    let same: Vec<_> = (0..10).map(|i| confirm("ADM-1", i)).collect();
    let same = join_all(same.iter().map(|c| c.post(&app, &admin))).await;
    for reply in &same {
        reply.assert(200, None);
    }
    let list = app.get(&marks, &admin).await;
    assert_eq!(list.body["count"], 1);
    let distinct = ["ADM-1", "ADM-2"].map(|n| confirm(n, 50));
    let distinct = join_all(distinct.iter().map(|c| c.post(&app, &admin))).await;
    assert!(distinct.iter().all(|r| r.status == 200));
    assert_eq!(app.get(&marks, &admin).await.body["count"], 2);
}

#[tokio::test]
async fn plain_mark_writes_follow_the_same_rules() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let marks = marks_setup(&app, &admin).await;
    let created = NewMark {
        marks: &marks,
        studentadmissionnumber: "ADM-2",
        mark: Some(-5),
        ..Default::default()
    }
    .post(&app, &admin)
    .await;
    created.assert(201, None);
    NewMark {
        marks: &marks,
        studentadmissionnumber: "ADM-2",
        ..Default::default()
    }
    .post(&app, &admin)
    .await
    .assert(409, Some("conflict"));
    app.post(&marks, &admin, json!({"studentadmissionnumber": "ADM-404"}))
        .await
        .assert(400, Some("validation_error"));
    app.post(&marks, &admin, json!({"studentadmissionnumber": ""}))
        .await
        .assert(400, Some("validation_error"));
    let id = created.body["id"].as_str().expect("id");
    let other_exam_marks = marks.replace(
        &marks.split('/').nth(9).expect("exam").to_owned(),
        &uuid::Uuid::new_v4().to_string(),
    );
    app.get(&format!("{other_exam_marks}{id}/"), &admin)
        .await
        .assert(404, Some("not_found"));
    assert_eq!(
        app.get(&format!("{marks}?search=adm-2"), &admin).await.body["count"],
        1
    );
}

/// A nested record is written only under its own parent: PUT, PATCH and DELETE of an exam
/// through another exam session's path answer 404 and leave the exam as it was.
#[tokio::test]
async fn an_exam_cannot_be_written_under_another_exam_session() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let (exams, ids) = exam_setup(&app, &admin).await;
    let exam = ids.mock().post(&app, &admin).await;
    exam.assert(201, None);
    let id = exam.body["id"].as_str().expect("id");
    let exam_sessions = exams
        .rsplit_once(ids.exam_session.as_str())
        .expect("exam sessions path")
        .0
        .to_owned();
    let session = exam_sessions
        .trim_start_matches("/api/v1/school/sessions/")
        .trim_end_matches("/exam-sessions/");
    let other = NewExamSession {
        session,
        name: "Mocks",
        term: "Term 1",
        ..Default::default()
    }
    .create(&app, &admin)
    .await
    .id;
    let wrong = format!("{exam_sessions}{other}/exams/{id}/");
    let renamed = json!({"name": "Moved", "subject": ids.subjects[0], "academic_class": ids.class});
    app.request(reqwest::Method::PUT, &wrong, &admin, Some(renamed))
        .await
        .assert(404, Some("not_found"));
    app.patch(&wrong, &admin, json!({"name": "Moved"}))
        .await
        .assert(404, Some("not_found"));
    app.delete(&wrong, &admin)
        .await
        .assert(404, Some("not_found"));
    let unchanged = app.get(&format!("{exams}{id}/"), &admin).await;
    unchanged.assert(200, None);
    assert_eq!(unchanged.body, exam.body);
    assert_eq!(
        app.get(&format!("{exam_sessions}{other}/exams/"), &admin)
            .await
            .body["count"],
        0
    );
}
