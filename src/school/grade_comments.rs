//! The comment a teacher gives for a grade band.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Actor, Store, Target,
    schema::teacher_grade_comments as t,
    table::{school_forms, school_table},
};
use crate::{
    error::{ApiError, ApiResult},
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

school_forms!(t: NewGradeComment, GradeCommentChanges {
    teacher_id: Option<Uuid>,
    grade: String,
    min_mark: i32,
    max_mark: i32,
    comment: String,
    is_deleted: bool,
});

/// Teachers' comments for grade bands.
pub struct GradeComments;

school_table!(GradeComments: GradeComment in t, new: NewGradeComment, changes: GradeCommentChanges,
    search: [grade, comment], soft_delete: is_deleted);

impl Store for GradeComments {
    type Record = GradeComment;
    const NAME: &'static str = "teacher_grade_comment";
}

impl GradeComments {
    /// Marks the comment deleted (idempotent); 404 only when it does not exist at all.
    pub fn soft_delete(conn: &mut TenantConn, id: Uuid, actor: &Actor) -> ApiResult<()> {
        let target = Target {
            parent: (),
            id,
            include_deleted: true,
        };
        let comment = Self::find(conn, target)?.ok_or_else(ApiError::not_found)?;
        if !comment.is_deleted {
            let changes = GradeCommentChanges {
                is_deleted: Some(true),
                ..Default::default()
            };
            Self::update(conn, target, changes, actor)?;
        }
        Ok(())
    }
}
