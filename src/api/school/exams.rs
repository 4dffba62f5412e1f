//! `/api/v1/school/sessions/{session_pk}/exam-sessions/{exam_session_pk}/exams/`: exams of
//! an exam session, and the spec's `auto-create-teacher-exams`.

use actix_web::{HttpResponse, web};
use serde::Serialize;
use uuid::Uuid;

use crate::{
    api::{
        PathIds,
        body::read_object,
        fields::{Fields, any, len, range},
        openapi::{ApiDoc, Auth, Op, schema::object},
        routes::Mount,
        school::crud::{self, SchoolResource, check_ref},
    },
    auth::permissions::{Action, Permission, Resource},
    db::models::User,
    error::{ApiError, ApiResult, FieldErrors},
    request::{Need, SchoolRequest},
    school::{
        Actor, Store, Target,
        classes::Classes,
        exam_sessions::{ExamSession, ExamSessions},
        exams::{Exam, ExamChanges, Exams, NewExam, TaughtClass},
        subjects::Subjects,
        teachers::{TeacherProfile, Teachers},
    },
    tenancy::TenantConn,
};

impl SchoolResource for Exams {
    const PERMISSION: Resource = Resource::Exam;
    const PATH: &'static str =
        "/api/v1/school/sessions/{session_pk}/exam-sessions/{exam_session_pk}/exams/";
    const CREATE_RULES: Option<&'static str> = Some(
        "At most one live exam per (exam session, subject, academic class): creating a second answers 409 `conflict` (soft-deleted exams do not count). `auto-create-teacher-exams` relies on the same rule.",
    );

    fn parse(f: &mut Fields<'_>) -> ExamChanges {
        ExamChanges {
            name: f.required("name", &len(1, 255)),
            subject_id: f.required("subject", &any),
            academic_class_id: f.required("academic_class", &any),
            teacher_id: f.nullable("teacher", None, &any),
            max_mark: f.optional("max_mark", 100, &range(1, 1000)),
            is_deleted: f.optional("is_deleted", false, &any),
        }
    }

    fn validate(
        conn: &mut TenantConn,
        _: &Uuid,
        changes: &ExamChanges,
        _: Option<&Exam>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        check_ref::<Subjects>(conn, errors, "subject", changes.subject_id, "subject")?;
        let class = changes.academic_class_id;
        check_ref::<Classes>(conn, errors, "academic_class", class, "class")?;
        let teacher = changes.teacher_id.flatten();
        check_ref::<Teachers>(conn, errors, "teacher", teacher, "teacher profile")
    }
}

pub fn mount(m: &mut Mount) {
    m.endpoint(&format!("{}auto-create-teacher-exams/", Exams::PATH))
        .post(auto_create, describe_auto_create);
    crud::mount::<Exams>(m);
}

const ADD_EXAM: &[Permission] = &[Permission::new(Action::Add, Resource::Exam)];

/// Creates an exam for each of the caller's live assignments that has none in this exam
/// session. The unique index on live (exam session, subject, class) settles races: an
/// insert that conflicts finds the exam another request created.
async fn auto_create(request: SchoolRequest, payload: web::Payload) -> ApiResult<HttpResponse> {
    let path = PathIds::of(request.http());
    let body = read_object(request.http(), payload).await;
    let answer = request
        .run(Need::All(ADD_EXAM), move |conn, caller| {
            let user = caller.user().cloned().ok_or(ApiError::NotATeacher)?;
            let profile =
                TeacherProfile::live_of_user(conn, user.id)?.ok_or(ApiError::NotATeacher)?;
            let parents = path.parse()?;
            let exam_session_id = Exams::scope(conn, &parents)?;
            let session = *parents.first().ok_or_else(ApiError::not_found)?;
            let target = Target::live(session, exam_session_id);
            let exam_session = ExamSessions::find(conn, target)?.ok_or_else(ApiError::not_found)?;
            body?;
            conn.transaction(|conn| create_missing(conn, &exam_session, &profile, &user))
        })
        .await?;
    Ok(HttpResponse::Ok().json(answer))
}

/// The answer of `auto-create-teacher-exams`.
#[derive(Serialize, utoipa::ToSchema)]
#[schema(as = AutoCreateTeacherExams)]
pub struct AutoCreated {
    pub success: bool,
    /// "Created N exams; M already existed."
    pub message: String,
    pub summary: AutoCreateSummary,
    pub details: AutoCreateDetails,
    pub teacher: TeacherRef,
    pub exam_session: ExamSessionRef,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct AutoCreateSummary {
    pub total_assignments: usize,
    pub newly_created: usize,
    pub already_existed: usize,
    pub created_by_you: usize,
    pub created_by_others: usize,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct AutoCreateDetails {
    pub created_exams: Vec<CreatedExam>,
    pub existing_exams: Vec<ExistingExam>,
}

/// The class and subject an exam is for.
#[derive(Serialize, utoipa::ToSchema)]
pub struct AssignedExam {
    pub id: Uuid,
    pub subject: String,
    pub subject_code: String,
    pub academic_class: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct CreatedExam {
    #[serde(flatten)]
    pub exam: AssignedExam,
    /// Always true.
    pub created: bool,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ExistingExam {
    #[serde(flatten)]
    pub exam: AssignedExam,
    /// The creator's display name (empty when unknown).
    pub created_by: String,
    pub created_by_you: bool,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct TeacherRef {
    pub id: Uuid,
    pub name: String,
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct ExamSessionRef {
    pub id: Uuid,
    pub name: String,
    pub term: String,
}

/// The exams of `teacher`'s assignments in `exam_session`: created, or found.
fn create_missing(
    conn: &mut TenantConn,
    exam_session: &ExamSession,
    teacher: &TeacherProfile,
    user: &User,
) -> ApiResult<AutoCreated> {
    let actor = Actor::user(user.id, user.display_name());
    let mut created = Vec::new();
    let mut existing = Vec::new();
    for a in TaughtClass::of_teacher_during(conn, teacher.id, exam_session.academic_session_id)? {
        let new = NewExam {
            name: format!("{} - {}", a.subject, a.class),
            subject_id: a.subject_id,
            academic_class_id: a.class_id,
            teacher_id: Some(teacher.id),
            max_mark: 100,
            is_deleted: false,
        };
        let assigned = |id: Uuid| AssignedExam {
            id,
            subject: a.subject.clone(),
            subject_code: a.subject_code.clone(),
            academic_class: a.class.clone(),
        };
        // The unique index on live (exam session, subject, class) settles races.
        match Exams::create_unless_present(conn, exam_session.id, new, &actor)? {
            Some(exam) => created.push(CreatedExam {
                exam: assigned(exam.id),
                created: true,
            }),
            None => {
                let (id, creator) =
                    Exams::live_for(conn, exam_session.id, a.subject_id, a.class_id)?;
                existing.push((creator, assigned(id)));
            }
        }
    }
    // The creators' names, in one query for all the exams that already existed.
    let creators: Vec<Uuid> = existing
        .iter()
        .filter_map(|(creator, _)| *creator)
        .collect();
    let names = User::display_names(conn.pg(), &creators)?;
    let existing: Vec<ExistingExam> = existing
        .into_iter()
        .map(|(creator, exam)| ExistingExam {
            exam,
            created_by: creator
                .and_then(|c| names.get(&c).cloned())
                .unwrap_or_default(),
            created_by_you: creator == Some(user.id),
        })
        .collect();
    let by_you = existing.iter().filter(|e| e.created_by_you).count();
    let message = format!(
        "Created {} exam{}; {} already existed.",
        created.len(),
        if created.len() == 1 { "" } else { "s" },
        existing.len()
    );
    Ok(AutoCreated {
        success: true,
        message,
        summary: AutoCreateSummary {
            total_assignments: created.len() + existing.len(),
            newly_created: created.len(),
            already_existed: existing.len(),
            created_by_you: by_you,
            created_by_others: existing.len() - by_you,
        },
        details: AutoCreateDetails {
            created_exams: created,
            existing_exams: existing,
        },
        teacher: TeacherRef {
            id: teacher.id,
            name: user.display_name(),
        },
        exam_session: ExamSessionRef {
            id: exam_session.id,
            name: exam_session.name.clone(),
            term: exam_session.term.clone(),
        },
    })
}

fn describe_auto_create(doc: &mut ApiDoc) -> Op {
    let answer = doc.schema::<AutoCreated>();
    Op::new(
        "exams",
        "Create the caller's exams for their class-subject assignments",
        Auth::BearerOrKey,
    )
    .body(object(vec![]))
    .ok(200, Some(answer))
}
