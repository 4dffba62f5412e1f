//! `/api/v1/school/teacher-grade-comments/`: the comment a teacher gives for a grade band,
//! and the spec's idempotent `{id}/soft-delete/`.

use actix_web::HttpResponse;
use serde_json::json;
use uuid::Uuid;

use crate::{
    api::{
        PathIds,
        fields::{Fields, any, len},
        openapi::{
            Auth, Op,
            schema::{boolean, object},
        },
        routes::Mount,
        school::crud::{self, Proposed, SchoolResource, check_ref},
    },
    auth::permissions::{Action, Permission, Resource},
    error::{ApiError, ApiResult, FieldErrors},
    request::{Caller, Need, SchoolRequest},
    school::{
        Store, Target,
        grade_comments::{GradeComment, GradeCommentChanges, GradeComments},
        teachers::{TeacherProfile, Teachers},
    },
    tenancy::TenantConn,
};

impl SchoolResource for GradeComments {
    const PERMISSION: Resource = Resource::TeacherGradeComment;
    const PATH: &'static str = "/api/v1/school/teacher-grade-comments/";
    const WRITE_RULES: Option<&'static str> = Some(OWN_COMMENTS);

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

    /// A caller who may not manage other teachers' comments writes only their own: their
    /// profile is put in for an omitted or null `teacher`, and another's is refused.
    fn on_behalf(
        conn: &mut TenantConn,
        caller: &Caller,
        changes: &mut GradeCommentChanges,
        current: Option<&GradeComment>,
    ) -> ApiResult<()> {
        let Some(own) = writes_only_own(conn, caller, current)? else {
            return Ok(());
        };
        match changes.teacher_id {
            Some(Some(teacher)) if teacher != own => Err(ApiError::PermissionDenied(format!(
                "you may write only your own grade comments (teacher {own}); another \
                 teacher's or a school-wide comment needs {MANAGE_OTHERS}"
            ))),
            Some(None) => {
                changes.teacher_id = Some(Some(own));
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn authorize(
        conn: &mut TenantConn,
        caller: &Caller,
        write: Proposed<'_, Self>,
    ) -> ApiResult<()> {
        if let Proposed::Delete(current) = write {
            writes_only_own(conn, caller, Some(current))?;
        }
        Ok(())
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
            .description(Some(OWN_COMMENTS))
            .ok(200, Some(object(vec![("deleted", boolean())]))),
        );
}

/// Holders of this permission (admins, principals, office) manage every teacher's
/// comments and the school-wide ones; anyone else writes only their own.
const MANAGE_OTHERS: Permission = Permission::new(Action::Change, Resource::TeacherProfile);

const OWN_COMMENTS: &str = "A caller without `change_teacherprofile` (the permission to \
    manage teachers, held by admins, principals and office staff) writes only their own \
    comments: they need a live teacher profile (403 `permission_denied` otherwise); an \
    omitted or null `teacher` is set to their profile (a school-wide comment, printed on \
    every card, is for managers only); naming another teacher's profile, or changing or \
    deleting a comment that is not theirs (another teacher's or a school-wide one), \
    answers 403 `permission_denied` and writes nothing. The soft-delete operation follows \
    the same rule.";

/// `None` when `caller` may manage every comment; otherwise the caller's own teacher
/// profile, once `current` (the comment changed, if any) is found to be theirs. 403 when
/// the caller has no profile or the comment is not theirs.
fn writes_only_own(
    conn: &mut TenantConn,
    caller: &Caller,
    current: Option<&GradeComment>,
) -> ApiResult<Option<Uuid>> {
    if caller.permissions.contains(MANAGE_OTHERS) {
        return Ok(None);
    }
    let profile = match caller.user_id() {
        Some(user) => TeacherProfile::live_of_user(conn, user)?,
        None => None,
    };
    let own = profile.map(|p| p.id).ok_or_else(|| {
        ApiError::PermissionDenied(format!(
            "only a teacher writes grade comments without {MANAGE_OTHERS}, and only their own"
        ))
    })?;
    if let Some(current) = current {
        if current.teacher_id != Some(own) {
            return Err(ApiError::PermissionDenied(format!(
                "this grade comment is not yours; changing another teacher's or a \
                 school-wide comment needs {MANAGE_OTHERS}"
            )));
        }
    }
    Ok(Some(own))
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
            let target = Target {
                parent: (),
                id,
                include_deleted: true,
            };
            let comment = GradeComments::find(conn, target)?.ok_or_else(ApiError::not_found)?;
            writes_only_own(conn, caller, Some(&comment))?;
            GradeComments::soft_delete(conn, id, &caller.actor())
        })
        .await?;
    Ok(HttpResponse::Ok().json(json!({"deleted": true})))
}
