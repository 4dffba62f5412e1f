//! `/api/v1/school/teacher-grade-comments/`: the comment a teacher gives for a grade band,
//! and the spec's idempotent `{id}/soft-delete/`.

use actix_web::HttpResponse;
use serde_json::json;

use crate::{
    api::{
        PathIds,
        fields::{Fields, any, len},
        openapi::{
            Auth, Op,
            schema::{boolean, object},
        },
        routes::Mount,
        school::crud::{self, SchoolResource, check_ref},
    },
    auth::{
        Need, SchoolRequest,
        permissions::{Action, Permission, Resource},
    },
    error::{ApiResult, FieldErrors},
    school::{
        grade_comments::{GradeComment, GradeCommentChanges, GradeComments},
        teachers::Teachers,
    },
    tenancy::TenantConn,
};

impl SchoolResource for GradeComments {
    const PERMISSION: Resource = Resource::TeacherGradeComment;
    const PATH: &'static str = "/api/v1/school/teacher-grade-comments/";

    fn parse(f: &mut Fields<'_>) -> GradeCommentChanges {
        GradeCommentChanges {
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
        changes: &GradeCommentChanges,
        current: Option<&GradeComment>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        let teacher = changes.teacher_id.flatten();
        check_ref::<Teachers>(conn, errors, "teacher", teacher, "teacher profile")?;
        let min = changes.min_mark.or(current.map(|c| c.min_mark));
        let max = changes.max_mark.or(current.map(|c| c.max_mark));
        if let (Some(min), Some(max)) = (min, max) {
            if max < min {
                errors.add("max_mark", "must not be less than min_mark");
            }
        }
        Ok(())
    }
}

pub fn mount(m: &mut Mount) {
    crud::mount::<GradeComments>(m);
    m.endpoint("/api/v1/school/teacher-grade-comments/{id}/soft-delete/")
        .delete(
            soft_delete,
            Op::new(
                "teacher-grade-comments",
                "Soft-delete a grade comment (idempotent)",
                Auth::BearerOrKey,
            )
            .ok(200, Some(object(vec![("deleted", boolean())]))),
        );
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
            GradeComments::soft_delete(conn, path.last()?, &caller.actor())
        })
        .await?;
    Ok(HttpResponse::Ok().json(json!({"deleted": true})))
}
