//! Subjects (code unique among live subjects).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Actor, Store,
    change_log::{self, Change},
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
    const NAME: &'static str = "subject";
}

impl Subjects {
    /// Marks the live subjects among `ids` deleted, each with its `subject.deleted` event;
    /// answers how many changed.
    pub fn soft_delete_many(
        conn: &mut TenantConn,
        ids: &[Uuid],
        actor: &Actor,
    ) -> ApiResult<usize> {
        // Past the store's write path: its own transaction when the caller has none.
        conn.writing(|conn| {
            let deleted: Vec<Subject> = diesel::update(
                t::table
                    .filter(t::id.eq_any(ids))
                    .filter(t::is_deleted.eq(false)),
            )
            .set((
                t::is_deleted.eq(true),
                t::updated_by.eq(actor.user_id()),
                t::updated_at.eq(Utc::now()),
            ))
            .returning(Subject::as_returning())
            .get_results(conn.pg())?;
            for after in &deleted {
                // The row was live before this statement and differs only in the flag and the
                // bookkeeping (subjects keep no history, so only the action depends on it).
                let before = Subject {
                    is_deleted: false,
                    ..after.clone()
                };
                change_log::record::<Self>(
                    conn,
                    actor,
                    Change::Updated {
                        before: &before,
                        after,
                    },
                )?;
            }
            Ok(deleted.len())
        })
    }
}
