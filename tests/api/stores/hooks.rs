//! A student's class written moves their enrollment in the active session and an
//! enrollment written there sets the student's class (`Enrollments::follow_student`); a
//! mark's update writes its history entry in the update's own transaction.

use std::time::Duration;

use chrono::{DateTime, Utc};
use school_service::{
    db::Db,
    error::{ApiError, ApiResult},
    school::{
        Actor, Store, Target,
        classes::{Classes, NewClass},
        enrollments::{ACTIVE, Enrollments, NewEnrollment, WITHDRAWN},
        exam_sessions::{ExamSessions, NewExamSession},
        exams::{Exams, NewExam},
        history::{self, About},
        marks::{MarkChanges, Marks, NewMark},
        sessions::{NewSession, Sessions},
        students::{NewStudent, StudentChanges, Students},
        subjects::{NewSubject, Subjects},
    },
    tenancy::{TenantConn, TenantDirectory, TenantRef},
};
use serde_json::json;
use uuid::Uuid;

use crate::helpers::TestDb;

/// School `alpha` of a database of its own.
struct Alpha {
    pool: Db,
    tenant: TenantRef,
    _db: TestDb,
}

impl Alpha {
    fn new() -> Self {
        let db = TestDb::new();
        let pool = Db::new(&db.url, 2, Duration::from_secs(10));
        let tenant = TenantDirectory::new(pool.clone())
            .find_schema("alpha")
            .expect("alpha");
        Self {
            pool,
            tenant,
            _db: db,
        }
    }

    /// `work` in one transaction on a connection bound to `alpha`, as the API runs a
    /// write (the stores' writes expect one): rolled back on error.
    fn run<T>(&self, work: impl FnOnce(&mut TenantConn) -> ApiResult<T>) -> ApiResult<T> {
        self.pool
            .with_tenant(&self.tenant, |conn| conn.transaction(work))
    }
}

/// Runs a blocking test off the async test's thread, as the server runs its stores.
async fn blocking(test: impl FnOnce() + Send + 'static) {
    tokio::task::spawn_blocking(test).await.expect("test");
}

fn day(date: &str) -> DateTime<Utc> {
    format!("{date}T00:00:00Z").parse().expect("a date")
}

/// A session (active once created) and classes `One` and `Two`.
fn a_year(conn: &mut TenantConn, actor: &Actor) -> ApiResult<(Uuid, Uuid, Uuid)> {
    let session = NewSession {
        name: "2025/26".into(),
        start_date: day("2025-09-01"),
        end_date: day("2026-07-31"),
        is_active: None,
        is_deleted: false,
    };
    let session = Sessions::create(conn, (), session, actor)?.id;
    let mut class = |name: &str, level| {
        let new = NewClass {
            name: name.into(),
            level: Some(level),
            is_deleted: false,
        };
        Classes::create(conn, (), new, actor).map(|class| class.id)
    };
    Ok((session, class("One", 1)?, class("Two", 2)?))
}

fn new_student(number: &str, class: Option<Uuid>) -> NewStudent {
    NewStudent {
        admission_number: number.into(),
        first_name: "Ann".into(),
        last_name: number.into(),
        academic_class_id: class,
        user_id: None,
        is_deleted: false,
    }
}

#[tokio::test]
async fn a_students_class_written_moves_their_enrollment_in_the_active_session() {
    blocking(|| {
        let alpha = Alpha::new();
        alpha
            .run(|conn| {
                let actor = Actor::system();
                let (session, one, two) = a_year(conn, &actor)?;
                let ann = Students::create(conn, (), new_student("A-1", Some(one)), &actor)?.id;
                let enrolled = Enrollments::of_student_in(conn, ann, session)?
                    .expect("a student created with a class is enrolled");
                assert_eq!(
                    (enrolled.academic_class_id, enrolled.status.as_str()),
                    (one, ACTIVE)
                );

                let to_two = StudentChanges {
                    academic_class_id: Some(Some(two)),
                    ..Default::default()
                };
                Students::update(conn, Target::live((), ann), to_two, &actor)?;
                let moved = Enrollments::of_student_in(conn, ann, session)?.expect("enrolled");
                assert_eq!(moved.id, enrolled.id, "the same enrollment, moved");
                assert_eq!(moved.academic_class_id, two);

                let no_class = StudentChanges {
                    academic_class_id: Some(None),
                    ..Default::default()
                };
                Students::update(conn, Target::live((), ann), no_class, &actor)?;
                let withdrawn = Enrollments::of_student_in(conn, ann, session)?.expect("kept");
                assert_eq!(withdrawn.status, WITHDRAWN);
                Ok(())
            })
            .expect("the writes");
    })
    .await;
}

#[tokio::test]
async fn an_enrollment_written_in_the_active_session_sets_the_students_class() {
    blocking(|| {
        let alpha = Alpha::new();
        alpha
            .run(|conn| {
                let actor = Actor::system();
                let (session, one, two) = a_year(conn, &actor)?;
                let bob = Students::create(conn, (), new_student("B-1", None), &actor)?.id;
                let class_of = |conn: &mut TenantConn| -> ApiResult<Option<Uuid>> {
                    let bob = Students::find(conn, Target::live((), bob))?.expect("bob");
                    Ok(bob.academic_class_id)
                };
                assert_eq!(class_of(conn)?, None);
                let new = NewEnrollment {
                    student_id: bob,
                    academic_class_id: one,
                    academic_session_id: session,
                    status: ACTIVE.into(),
                    is_deleted: false,
                };
                let enrollment = Enrollments::create(conn, (), new, &actor)?;
                assert_eq!(class_of(conn)?, Some(one));
                let to_two = school_service::school::enrollments::EnrollmentChanges {
                    academic_class_id: Some(two),
                    ..Default::default()
                };
                Enrollments::update(conn, Target::live((), enrollment.id), to_two, &actor)?;
                assert_eq!(class_of(conn)?, Some(two));
                Ok(())
            })
            .expect("the writes");
    })
    .await;
}

#[tokio::test]
async fn a_mark_update_writes_its_history_in_its_own_transaction() {
    blocking(|| {
        let alpha = Alpha::new();
        let actor = Actor::system();
        let (exam, mark) = alpha
            .run(|conn| {
                let (session, one, _) = a_year(conn, &actor)?;
                Students::create(conn, (), new_student("M-1", Some(one)), &actor)?;
                let term = NewExamSession {
                    name: "Term 1".into(),
                    term: "T1".into(),
                    start_date: None,
                    end_date: None,
                    is_deleted: false,
                };
                let term = ExamSessions::create(conn, session, term, &actor)?.id;
                let subject = NewSubject {
                    name: "Maths".into(),
                    code: "MAT".into(),
                    department_id: None,
                    is_deleted: false,
                };
                let subject = Subjects::create(conn, (), subject, &actor)?.id;
                let exam = NewExam {
                    name: "Paper 1".into(),
                    subject_id: subject,
                    academic_class_id: one,
                    teacher_id: None,
                    max_mark: 100,
                    is_deleted: false,
                };
                let exam = Exams::create(conn, term, exam, &actor)?.id;
                let mark = NewMark {
                    studentadmissionnumber: "M-1".into(),
                    mark: Some(38),
                    symbol: None,
                    comment: None,
                    is_deleted: false,
                    score: None,
                    score_status: None,
                    score_date: None,
                    text_score: None,
                };
                Ok((exam, Marks::create(conn, exam, mark, &actor)?.id))
            })
            .expect("the year");
        let to = |mark: i32| MarkChanges {
            mark: Some(Some(mark)),
            ..Default::default()
        };

        alpha
            .run(|conn| Marks::update(conn, Target::live(exam, mark), to(52), &actor))
            .expect("the update");
        let (count, entries) = alpha
            .run(|conn| history::page(conn, About::Record(mark), 0, 10))
            .expect("the history");
        assert_eq!(count, 2, "created, then updated");
        assert_eq!(
            (entries[0].action.as_str(), &entries[0].changes["mark"]),
            ("updated", &json!([38, 52]))
        );
        assert_eq!(entries[1].action, "created");

        // An update whose unit of work fails leaves neither the mark nor its history.
        let failed = alpha.run(|conn| {
            Marks::update(conn, Target::live(exam, mark), to(60), &actor)?;
            Err::<(), _>(ApiError::not_found())
        });
        assert!(failed.is_err());
        let (count, _) = alpha
            .run(|conn| history::page(conn, About::Record(mark), 0, 10))
            .expect("the history");
        assert_eq!(count, 2, "the rolled-back update wrote no entry");
        let kept = alpha
            .run(|conn| Marks::find(conn, Target::live(exam, mark)))
            .expect("the mark")
            .expect("live");
        assert_eq!(kept.mark, Some(52));
    })
    .await;
}
