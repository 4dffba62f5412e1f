//! `.../exams/{exam_pk}/marks/`: marks of an exam (one live mark per admission number), and
//! the spec's `confirm-students` upsert.

use actix_web::{HttpResponse, web};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use crate::{
    api::{
        PathIds,
        body::read_object,
        fields::{Fields, Mode, any, len},
        routes::Endpoint,
        school::{
            crud::{SchoolResource, live_under, nested_methods, table_queries},
            exams, students,
        },
    },
    auth::{
        Caller, Need, SchoolRequest,
        permissions::{Action, Permission, Resource},
    },
    db::schema_tenant::marks as t,
    error::{ApiResult, FieldErrors},
    tenancy::TenantConn,
};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct Mark {
    pub id: Uuid,
    #[serde(rename = "exam")]
    pub exam_id: Uuid,
    pub studentadmissionnumber: String,
    pub mark: Option<i32>,
    pub symbol: Option<String>,
    pub comment: Option<String>,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(AsChangeset, Default)]
#[diesel(table_name = t)]
pub struct MarkInput {
    studentadmissionnumber: Option<String>,
    mark: Option<Option<i32>>,
    symbol: Option<Option<String>>,
    comment: Option<Option<String>>,
    is_deleted: Option<bool>,
}

table_queries!(t, Mark, search: [studentadmissionnumber], soft_delete: is_deleted, changes: MarkInput);

/// The mark fields, as create, update and confirm-students read them.
pub fn parse_fields(f: &mut Fields<'_>) -> MarkInput {
    MarkInput {
        studentadmissionnumber: f.required("studentadmissionnumber", &len(1, 255)),
        mark: f.nullable("mark", None, &any),
        symbol: f.nullable("symbol", None, &len(0, 255)),
        comment: f.nullable("comment", None, &len(0, 10_000)),
        is_deleted: f.optional("is_deleted", false, &any),
    }
}

fn check_student(
    conn: &mut TenantConn,
    input: &MarkInput,
    errors: &mut FieldErrors,
) -> ApiResult<()> {
    if let Some(number) = &input.studentadmissionnumber {
        if !students::admission_number_is_live(conn, number)? {
            errors.add(
                "studentadmissionnumber",
                "no live student has this admission number",
            );
        }
    }
    Ok(())
}

fn insert(
    conn: &mut TenantConn,
    exam: Uuid,
    input: &MarkInput,
    caller: &Caller,
) -> QueryResult<Option<Mark>> {
    diesel::insert_into(t::table)
        .values((
            t::id.eq(Uuid::new_v4()),
            t::exam_id.eq(exam),
            t::studentadmissionnumber.eq(input.studentadmissionnumber.clone().unwrap_or_default()),
            t::mark.eq(input.mark.flatten()),
            t::symbol.eq(input.symbol.clone().flatten()),
            t::comment.eq(input.comment.clone().flatten()),
            t::is_deleted.eq(input.is_deleted.unwrap_or(false)),
            t::created_by.eq(caller.user_id()),
            t::updated_by.eq(caller.user_id()),
        ))
        .on_conflict_do_nothing()
        .returning(Mark::as_returning())
        .get_result(conn.pg())
        .optional()
}

pub struct Marks;

impl SchoolResource for Marks {
    const CREATE_RULES: Option<&'static str> = Some(
        "One live mark per (exam, studentadmissionnumber) (409 `conflict`); `confirm-students` creates or updates it instead.",
    );
    const PERMISSION: Resource = Resource::Mark;
    const PATH: &'static str = "/api/v1/school/sessions/{session_pk}/exam-sessions/{exam_session_pk}/exams/{exam_pk}/marks/";
    type Scope = Uuid;
    type Record = Mark;
    type Input = MarkInput;

    nested_methods!(t, exam_id);

    fn scope(conn: &mut TenantConn, parents: &[Uuid]) -> ApiResult<Uuid> {
        let exam_session = exams::exam_session_scope(conn, parents)?;
        let exam = *parents
            .get(2)
            .ok_or_else(crate::error::ApiError::not_found)?;
        Ok(live_under::<exams::Exams>(conn, &exam_session.id, exam)?.id)
    }

    fn parse(f: &mut Fields<'_>) -> MarkInput {
        parse_fields(f)
    }

    fn validate(
        conn: &mut TenantConn,
        _: &Uuid,
        input: &MarkInput,
        _: Option<&Mark>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        check_student(conn, input, errors)
    }

    fn create(
        conn: &mut TenantConn,
        exam: &Uuid,
        input: MarkInput,
        caller: &Caller,
    ) -> ApiResult<Mark> {
        insert(conn, *exam, &input, caller)?.ok_or_else(|| {
            crate::error::ApiError::Conflict("this student already has a mark for this exam".into())
        })
    }
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    // Before the generic `{id}` routes of marks.
    Endpoint::new(&format!("{}confirm-students/", Marks::PATH))
        .post(confirm_students)
        .register(cfg);
}

const CONFIRM: &[Permission] = &[
    Permission::new(Action::Add, Resource::Mark),
    Permission::new(Action::Change, Resource::Mark),
];

/// Creates or updates the live mark of `studentadmissionnumber` for the exam. Only the
/// given fields change on an update. Concurrent calls for one student meet at the live
/// unique index: the loser of the insert updates the winner's mark.
async fn confirm_students(
    request: SchoolRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let http = request.http().clone();
    let body = read_object(&http, payload, request.state().config.max_body_bytes).await;
    let path = PathIds::of(&http);
    let mark = request
        .run(Need::All(CONFIRM), move |conn, caller| {
            let parents = path.parse()?;
            let exam = Marks::scope(conn, &parents)?;
            let body = body?;
            let mut fields = Fields::new(&body, Mode::Patch);
            let mut input = parse_fields(&mut fields);
            if input.studentadmissionnumber.is_none() && !fields.has_error("studentadmissionnumber")
            {
                fields.error("studentadmissionnumber", "this field is required");
            }
            let mut errors = FieldErrors::new();
            check_student(conn, &input, &mut errors)?;
            fields.merge(errors);
            fields.finish(())?;
            let number = input.studentadmissionnumber.clone().unwrap_or_default();
            conn.transaction(|conn| {
                for _ in 0..3 {
                    let live: Option<Uuid> = t::table
                        .filter(t::exam_id.eq(exam))
                        .filter(t::studentadmissionnumber.eq(&number))
                        .filter(t::is_deleted.eq(false))
                        .select(t::id)
                        .for_update()
                        .first(conn.pg())
                        .optional()?;
                    if let Some(id) = live {
                        input.studentadmissionnumber = None;
                        return update_row(conn, id, &input, caller);
                    }
                    if let Some(mark) = insert(conn, exam, &input, caller)? {
                        return Ok(mark);
                    }
                }
                Err(crate::error::ApiError::Conflict(
                    "the mark is being changed concurrently; retry".into(),
                ))
            })
        })
        .await?;
    Ok(HttpResponse::Ok().json(mark))
}
