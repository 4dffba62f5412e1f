//! The comment a teacher gives for a grade band.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Actor, Table,
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

school_table!(GradeComment in t, new: NewGradeComment, changes: GradeCommentChanges,
    search: [grade, comment], soft_delete: is_deleted);

impl GradeComment {
    /// Marks the comment deleted (idempotent); 404 only when it does not exist at all.
    pub fn soft_delete(conn: &mut TenantConn, id: Uuid, actor: Actor) -> ApiResult<()> {
        let comment = Self::get(conn, (), id, true)?.ok_or_else(ApiError::not_found)?;
        if !comment.is_deleted {
            let changes = GradeCommentChanges {
                is_deleted: Some(true),
                ..Default::default()
            };
            Self::change(conn, id, &changes, actor)?;
        }
        Ok(())
    }
}
