//! `/api/v1/school/sessions/{session_pk}/exam-sessions/{exam_session_pk}/exams/`: exams of
//! an exam session (one live exam per subject and class), and the spec's
//! `auto-create-teacher-exams`.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use serde_json::json;
use uuid::Uuid;

use crate::{
    api::{
        PathIds,
        body::read_object,
        fields::{Fields, any, len, range},
        routes::Endpoint,
        school::{
            classes,
            crud::{SchoolResource, check_ref, live_under, nested_methods, table_queries},
            exam_sessions, subjects, teachers,
        },
    },
    auth::{
        Caller, Need, SchoolRequest,
        permissions::{Action, Permission, Resource},
    },
    db::{
        models::User,
        schema_tenant::{
            academic_classes, exams as t, subjects as subject_table, teacher_assignments,
        },
    },
    error::{ApiError, ApiResult, FieldErrors},
    tenancy::TenantConn,
};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct Exam {
    pub id: Uuid,
    #[serde(rename = "exam_session")]
    pub exam_session_id: Uuid,
    pub name: String,
    #[serde(rename = "subject")]
    pub subject_id: Uuid,
    #[serde(rename = "academic_class")]
    pub academic_class_id: Uuid,
    #[serde(rename = "teacher")]
    pub teacher_id: Option<Uuid>,
    pub max_mark: i32,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(AsChangeset, Default)]
#[diesel(table_name = t)]
pub struct ExamInput {
    name: Option<String>,
    subject_id: Option<Uuid>,
    academic_class_id: Option<Uuid>,
    teacher_id: Option<Option<Uuid>>,
    max_mark: Option<i32>,
    is_deleted: Option<bool>,
}

table_queries!(t, Exam, search: [name], soft_delete: is_deleted, changes: ExamInput);

/// The path's academic session and exam session, both live and nested (404 otherwise).
pub fn exam_session_scope(
    conn: &mut TenantConn,
    parents: &[Uuid],
) -> ApiResult<exam_sessions::ExamSession> {
    let session = exam_sessions::academic_session(conn, parents)?;
    let exam_session = *parents.get(1).ok_or_else(ApiError::not_found)?;
    live_under::<exam_sessions::ExamSessions>(conn, &session, exam_session)
}

pub struct Exams;

impl SchoolResource for Exams {
    const CREATE_RULES: Option<&'static str> = Some(
        "At most one live exam per (exam session, subject, academic class): creating a second answers 409 `conflict` (soft-deleted exams do not count). `auto-create-teacher-exams` relies on the same rule.",
    );
    const PERMISSION: Resource = Resource::Exam;
    const PATH: &'static str =
        "/api/v1/school/sessions/{session_pk}/exam-sessions/{exam_session_pk}/exams/";
    type Scope = Uuid;
    type Record = Exam;
    type Input = ExamInput;

    nested_methods!(t, exam_session_id);

    fn scope(conn: &mut TenantConn, parents: &[Uuid]) -> ApiResult<Uuid> {
        Ok(exam_session_scope(conn, parents)?.id)
    }

    fn parse(f: &mut Fields<'_>) -> ExamInput {
        ExamInput {
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
        input: &ExamInput,
        _: Option<&Exam>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        check_ref(
            conn,
            errors,
            "subject",
            input.subject_id,
            "subject",
            subjects::live_exists,
        )?;
        check_ref(
            conn,
            errors,
            "academic_class",
            input.academic_class_id,
            "class",
            classes::live_exists,
        )?;
        check_ref(
            conn,
            errors,
            "teacher",
            input.teacher_id.flatten(),
            "teacher profile",
            teachers::live_exists,
        )?;
        Ok(())
    }

    fn create(
        conn: &mut TenantConn,
        exam_session: &Uuid,
        input: ExamInput,
        caller: &Caller,
    ) -> ApiResult<Exam> {
        Ok(diesel::insert_into(t::table)
            .values((
                t::id.eq(Uuid::new_v4()),
                t::exam_session_id.eq(*exam_session),
                t::name.eq(input.name.unwrap_or_default()),
                t::subject_id.eq(input.subject_id.unwrap_or_default()),
                t::academic_class_id.eq(input.academic_class_id.unwrap_or_default()),
                t::teacher_id.eq(input.teacher_id.flatten()),
                t::max_mark.eq(input.max_mark.unwrap_or(100)),
                t::is_deleted.eq(input.is_deleted.unwrap_or(false)),
                t::created_by.eq(caller.user_id()),
                t::updated_by.eq(caller.user_id()),
            ))
            .returning(Exam::as_returning())
            .get_result(conn.pg())?)
    }
}

pub fn configure(cfg: &mut actix_web::web::ServiceConfig) {
    // Before the generic `{id}` routes of exams.
    Endpoint::new(&format!("{}auto-create-teacher-exams/", Exams::PATH))
        .post(auto_create)
        .register(cfg);
}

const ADD_EXAM: &[Permission] = &[Permission::new(Action::Add, Resource::Exam)];

/// One assignment of the teacher: ids and display fields of its subject and class.
struct Assignment {
    subject_id: Uuid,
    subject: String,
    subject_code: String,
    class_id: Uuid,
    class: String,
}

/// Creates an exam for each of the caller's live assignments that has none in this exam
/// session. The unique index on live (exam session, subject, class) settles races: an
/// insert that conflicts finds the exam another request created.
async fn auto_create(
    request: SchoolRequest,
    payload: actix_web::web::Payload,
) -> ApiResult<actix_web::HttpResponse> {
    let http = request.http().clone();
    let body = read_object(&http, payload, request.state().config.max_body_bytes).await;
    let path = PathIds::of(&http);
    let answer = request
        .run(Need::All(ADD_EXAM), move |conn, caller| {
            let user = caller.user().cloned().ok_or(ApiError::NotATeacher)?;
            let profile = teachers::find_live_by_user(conn, user.id)?.ok_or(ApiError::NotATeacher)?;
            let parents = path.parse()?;
            let exam_session = exam_session_scope(conn, &parents)?;
            body?;
            conn.transaction(|conn| {
                let assignments: Vec<Assignment> = teacher_assignments::table
                    .inner_join(subject_table::table)
                    .inner_join(academic_classes::table)
                    .filter(teacher_assignments::teacher_id.eq(profile.id))
                    .filter(teacher_assignments::is_deleted.eq(false))
                    .filter(subject_table::is_deleted.eq(false))
                    .filter(academic_classes::is_deleted.eq(false))
                    .order((teacher_assignments::created_at, teacher_assignments::id))
                    .select((subject_table::id, subject_table::name, subject_table::code, academic_classes::id, academic_classes::name))
                    .load::<(Uuid, String, String, Uuid, String)>(conn.pg())?
                    .into_iter()
                    .map(|(subject_id, subject, subject_code, class_id, class)| Assignment { subject_id, subject, subject_code, class_id, class })
                    .collect();
                let mut created = Vec::new();
                let mut existing = Vec::new();
                for a in &assignments {
                    let inserted: Option<Uuid> = diesel::insert_into(t::table)
                        .values((
                            t::id.eq(Uuid::new_v4()),
                            t::exam_session_id.eq(exam_session.id),
                            t::name.eq(format!("{} - {}", a.subject, a.class)),
                            t::subject_id.eq(a.subject_id),
                            t::academic_class_id.eq(a.class_id),
                            t::teacher_id.eq(Some(profile.id)),
                            t::max_mark.eq(100),
                            t::created_by.eq(Some(user.id)),
                            t::updated_by.eq(Some(user.id)),
                        ))
                        .on_conflict_do_nothing()
                        .returning(t::id)
                        .get_result(conn.pg())
                        .optional()?;
                    match inserted {
                        Some(id) => created.push(json!({
                            "id": id, "subject": a.subject, "subject_code": a.subject_code,
                            "academic_class": a.class, "created": true,
                        })),
                        None => {
                            let (id, creator): (Uuid, Option<Uuid>) = t::table
                                .filter(t::exam_session_id.eq(exam_session.id))
                                .filter(t::subject_id.eq(a.subject_id))
                                .filter(t::academic_class_id.eq(a.class_id))
                                .filter(t::is_deleted.eq(false))
                                .select((t::id, t::created_by))
                                .first(conn.pg())?;
                            let creator_name = match creator {
                                Some(creator) => User::find(conn.pg(), creator)?.map(|u| u.display_name()).unwrap_or_default(),
                                None => String::new(),
                            };
                            existing.push((creator == Some(user.id), json!({
                                "id": id, "subject": a.subject, "subject_code": a.subject_code,
                                "academic_class": a.class, "created_by": creator_name,
                                "created_by_you": creator == Some(user.id),
                            })));
                        }
                    }
                }
                let by_you = existing.iter().filter(|(mine, _)| *mine).count();
                let message = format!(
                    "Created {} exam{}; {} already existed.",
                    created.len(),
                    if created.len() == 1 { "" } else { "s" },
                    existing.len()
                );
                Ok(json!({
                    "success": true,
                    "message": message,
                    "summary": {
                        "total_assignments": created.len() + existing.len(),
                        "newly_created": created.len(),
                        "already_existed": existing.len(),
                        "created_by_you": by_you,
                        "created_by_others": existing.len() - by_you,
                    },
                    "details": {
                        "created_exams": created,
                        "existing_exams": existing.into_iter().map(|(_, e)| e).collect::<Vec<_>>(),
                    },
                    "teacher": {"id": profile.id, "name": user.display_name()},
                    "exam_session": {"id": exam_session.id, "name": exam_session.name, "term": exam_session.term},
                }))
            })
        })
        .await?;
    Ok(actix_web::HttpResponse::Ok().json(answer))
}
