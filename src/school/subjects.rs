//! Subjects (code unique among live subjects).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Actor, Store,
    schema::subjects as t,
    table::{school_forms, school_table},
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

school_forms!(t: NewSubject, SubjectChanges {
    name: String,
    code: String,
    department_id: Option<Uuid>,
    is_deleted: bool,
});

/// Subjects.
pub struct Subjects;

school_table!(Subjects: Subject in t, new: NewSubject, changes: SubjectChanges, search: [name, code],
    soft_delete: is_deleted);

impl Store for Subjects {
    type Record = Subject;

    fn about_students(
        children: &std::sync::Arc<[uuid::Uuid]>,
    ) -> Option<super::store::Narrowing<Self>> {
        super::family::subjects(children)
    }
}

impl Subjects {
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
