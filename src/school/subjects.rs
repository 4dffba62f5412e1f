//! Subjects (code unique among live subjects).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Actor,
    schema::subjects as t,
    table::{Incomplete, given, school_table},
};
use crate::{error::ApiResult, tenancy::TenantConn};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct Subject {
    pub id: Uuid,
    pub name: String,
    pub code: String,
    #[serde(rename = "department")]
    pub department_id: Option<Uuid>,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Insertable, AsChangeset, Debug)]
#[diesel(table_name = t, treat_none_as_null = true)]
pub struct NewSubject {
    pub name: String,
    pub code: String,
    pub department_id: Option<Uuid>,
    pub is_deleted: bool,
}

#[derive(AsChangeset, Default, Debug)]
#[diesel(table_name = t)]
pub struct SubjectChanges {
    pub name: Option<String>,
    pub code: Option<String>,
    pub department_id: Option<Option<Uuid>>,
    pub is_deleted: Option<bool>,
}

impl TryFrom<SubjectChanges> for NewSubject {
    type Error = Incomplete;

    fn try_from(c: SubjectChanges) -> Result<Self, Incomplete> {
        Ok(Self {
            name: given(c.name, "name")?,
            code: given(c.code, "code")?,
            department_id: given(c.department_id, "department")?,
            is_deleted: given(c.is_deleted, "is_deleted")?,
        })
    }
}

school_table!(Subject in t, new: NewSubject, changes: SubjectChanges, search: [name, code],
    soft_delete: is_deleted);

impl Subject {
    /// Marks the live subjects among `ids` deleted; answers how many changed.
    pub fn soft_delete_many(conn: &mut TenantConn, ids: &[Uuid], actor: Actor) -> ApiResult<usize> {
        Ok(diesel::update(
            t::table
                .filter(t::id.eq_any(ids))
                .filter(t::is_deleted.eq(false)),
        )
        .set((
            t::is_deleted.eq(true),
            t::updated_by.eq(actor),
            t::updated_at.eq(Utc::now()),
        ))
        .execute(conn.pg())?)
    }
}
