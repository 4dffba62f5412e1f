//! The students of one class, as `GET /classes/{class_pk}/students/` lists them (the marks
//! sheet's rows). Plain queries of its own, beside the `Table` ones.

use diesel::prelude::*;
use uuid::Uuid;

use super::{
    ListQuery,
    schema::{academic_classes, students as t},
    students::Student,
};
use crate::{db::like_pattern, error::ApiResult, tenancy::TenantConn};

impl Student {
    /// One page (order `created_at, id`) of the class's students and their count; `None`
    /// when the class does not exist, or is soft-deleted and `include_deleted` is not set.
    pub fn page_in_class(
        conn: &mut TenantConn,
        class: Uuid,
        query: &ListQuery,
    ) -> ApiResult<Option<(i64, Vec<Student>)>> {
        let mut classes = academic_classes::table
            .filter(academic_classes::id.eq(class))
            .select(academic_classes::id)
            .into_boxed();
        if !query.include_deleted {
            classes = classes.filter(academic_classes::is_deleted.eq(false));
        }
        let class_exists: bool =
            diesel::select(diesel::dsl::exists(classes)).get_result(conn.pg())?;
        if !class_exists {
            return Ok(None);
        }
        let matching = || {
            let mut q = t::table.filter(t::academic_class_id.eq(class)).into_boxed();
            if !query.include_deleted {
                q = q.filter(t::is_deleted.eq(false));
            }
            if let Some(search) = &query.search {
                let pattern = like_pattern(search);
                q = q.filter(
                    t::admission_number
                        .ilike(pattern.clone())
                        .or(t::first_name.ilike(pattern.clone()))
                        .or(t::last_name.ilike(pattern)),
                );
            }
            q
        };
        let count: i64 = matching().count().get_result(conn.pg())?;
        let rows = matching()
            .select(Student::as_select())
            .order((t::created_at, t::id))
            .limit(query.page_size)
            .offset(query.offset())
            .load(conn.pg())?;
        Ok(Some((count, rows)))
    }
}
