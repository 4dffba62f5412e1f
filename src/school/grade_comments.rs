//! The comment a teacher gives for a grade band.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Actor, Table,
    schema::teacher_grade_comments as t,
    table::{Incomplete, given, school_table},
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

#[derive(Insertable, AsChangeset, Debug)]
#[diesel(table_name = t, treat_none_as_null = true)]
pub struct NewGradeComment {
    pub teacher_id: Option<Uuid>,
    pub grade: String,
    pub min_mark: i32,
    pub max_mark: i32,
    pub comment: String,
    pub is_deleted: bool,
}

#[derive(AsChangeset, Default, Debug)]
#[diesel(table_name = t)]
pub struct GradeCommentChanges {
    pub teacher_id: Option<Option<Uuid>>,
    pub grade: Option<String>,
    pub min_mark: Option<i32>,
    pub max_mark: Option<i32>,
    pub comment: Option<String>,
    pub is_deleted: Option<bool>,
}

impl TryFrom<GradeCommentChanges> for NewGradeComment {
    type Error = Incomplete;

    fn try_from(c: GradeCommentChanges) -> Result<Self, Incomplete> {
        Ok(Self {
            teacher_id: given(c.teacher_id, "teacher")?,
            grade: given(c.grade, "grade")?,
            min_mark: given(c.min_mark, "min_mark")?,
            max_mark: given(c.max_mark, "max_mark")?,
            comment: given(c.comment, "comment")?,
            is_deleted: given(c.is_deleted, "is_deleted")?,
        })
    }
}

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
