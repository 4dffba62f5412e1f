//! `/api/v1/school/teacher-grade-comments/`: the comment a teacher gives for a grade band,
//! and the spec's idempotent `{id}/soft-delete/`.

use actix_web::{HttpResponse, web};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use serde_json::json;
use uuid::Uuid;

use crate::{
    api::{
        PathIds,
        fields::{Fields, any, len},
        routes::Endpoint,
        school::{
            crud::{SchoolResource, check_ref, table_queries, top_level_methods},
            teachers,
        },
    },
    auth::{
        Caller, Need, SchoolRequest,
        permissions::{Action, Permission, Resource},
    },
    db::schema_tenant::teacher_grade_comments as t,
    error::{ApiError, ApiResult, FieldErrors},
    tenancy::TenantConn,
};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct GradeComment {
    pub id: Uuid,
    #[serde(rename = "teacher")]
    pub teacher_id: Option<Uuid>,
    pub grade: String,
    pub min_mark: i32,
    pub max_mark: i32,
    pub comment: String,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(AsChangeset, Default)]
#[diesel(table_name = t)]
pub struct GradeCommentInput {
    teacher_id: Option<Option<Uuid>>,
    grade: Option<String>,
    min_mark: Option<i32>,
    max_mark: Option<i32>,
    comment: Option<String>,
    is_deleted: Option<bool>,
}

table_queries!(t, GradeComment, search: [grade, comment], soft_delete: is_deleted, changes: GradeCommentInput);

pub struct GradeComments;

impl SchoolResource for GradeComments {
    const PERMISSION: Resource = Resource::TeacherGradeComment;
    const PATH: &'static str = "/api/v1/school/teacher-grade-comments/";
    type Scope = ();
    type Record = GradeComment;
    type Input = GradeCommentInput;

    top_level_methods!();

    fn parse(f: &mut Fields<'_>) -> GradeCommentInput {
        GradeCommentInput {
            teacher_id: f.nullable("teacher", None, &any),
            grade: f.required("grade", &len(1, 10)),
            min_mark: f.required("min_mark", &any),
            max_mark: f.required("max_mark", &any),
            comment: f.required("comment", &len(1, 10_000)),
            is_deleted: f.optional("is_deleted", false, &any),
        }
    }

    fn validate(
        conn: &mut TenantConn,
        _: &(),
        input: &GradeCommentInput,
        current: Option<&GradeComment>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        check_ref(
            conn,
            errors,
            "teacher",
            input.teacher_id.flatten(),
            "teacher profile",
            teachers::live_exists,
        )?;
        let min = input.min_mark.or(current.map(|c| c.min_mark));
        let max = input.max_mark.or(current.map(|c| c.max_mark));
        if let (Some(min), Some(max)) = (min, max) {
            if max < min {
                errors.add("max_mark", "must not be less than min_mark");
            }
        }
        Ok(())
    }

    fn create(
        conn: &mut TenantConn,
        _: &(),
        input: GradeCommentInput,
        caller: &Caller,
    ) -> ApiResult<GradeComment> {
        Ok(diesel::insert_into(t::table)
            .values((
                t::id.eq(Uuid::new_v4()),
                t::teacher_id.eq(input.teacher_id.flatten()),
                t::grade.eq(input.grade.unwrap_or_default()),
                t::min_mark.eq(input.min_mark.unwrap_or_default()),
                t::max_mark.eq(input.max_mark.unwrap_or_default()),
                t::comment.eq(input.comment.unwrap_or_default()),
                t::is_deleted.eq(input.is_deleted.unwrap_or(false)),
                t::created_by.eq(caller.user_id()),
                t::updated_by.eq(caller.user_id()),
            ))
            .returning(GradeComment::as_returning())
            .get_result(conn.pg())?)
    }
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    Endpoint::new("/api/v1/school/teacher-grade-comments/{id}/soft-delete/")
        .delete(soft_delete)
        .register(cfg);
}

const DELETE_COMMENT: &[Permission] = &[Permission::new(
    Action::Delete,
    Resource::TeacherGradeComment,
)];

/// Marks the comment deleted; 404 only when it does not exist at all, so repeating the
/// call answers `{"deleted": true}` again.
async fn soft_delete(request: SchoolRequest, path: PathIds) -> ApiResult<HttpResponse> {
    request
        .run(Need::All(DELETE_COMMENT), move |conn, caller| {
            let id = path.last()?;
            let comment = find_row(conn, id, true)?.ok_or_else(ApiError::not_found)?;
            if !comment.is_deleted {
                diesel::update(t::table.find(id))
                    .set((
                        t::is_deleted.eq(true),
                        t::updated_by.eq(caller.user_id()),
                        t::updated_at.eq(Utc::now()),
                    ))
                    .execute(conn.pg())?;
            }
            Ok(())
        })
        .await?;
    Ok(HttpResponse::Ok().json(json!({"deleted": true})))
}
