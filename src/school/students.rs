//! Students (admission number unique among live students).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    ListQuery, Store, Target,
    classes::Classes,
    id_param,
    schema::students as t,
    store::{LiveCount, Narrowing},
    table::{school_forms, school_table},
};
use crate::{error::ApiResult, tenancy::TenantConn};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct Student {
    pub id: Uuid,
    pub admission_number: String,
    pub first_name: String,
    pub last_name: String,
    #[serde(rename = "academic_class")]
    pub academic_class_id: Option<Uuid>,
    #[serde(rename = "user")]
    pub user_id: Option<Uuid>,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

school_forms!(t: NewStudent, StudentChanges {
    admission_number: String,
    first_name: String,
    last_name: String,
    academic_class_id: Option<Uuid>,
    user_id: Option<Uuid>,
    is_deleted: bool,
});

/// Students.
pub struct Students;

school_table!(Students: Student in t, new: NewStudent, changes: StudentChanges,
    search: [admission_number, first_name, last_name], soft_delete: is_deleted);

/// `?academic_class=` narrows a list to one class's students.
impl Store for Students {
    type Record = Student;
    const NAME: &'static str = "student";
    const KEEPS_HISTORY: bool = true;

    fn student_of(_: &mut TenantConn, record: &Student) -> ApiResult<Option<Uuid>> {
        Ok(Some(record.id))
    }

    fn about_students(
        children: &std::sync::Arc<[uuid::Uuid]>,
    ) -> Option<super::store::Narrowing<Self>> {
        super::family::students(children)
    }

    const LIVE_COUNT: Option<LiveCount<()>> = Some(LiveCount::kept_as("students"));

    const STUDENT_RECORD: Option<&'static str> = Some("student");

    fn students_in(_: &mut TenantConn, records: &[Student]) -> ApiResult<Vec<Uuid>> {
        Ok(records.iter().map(|s| s.id).collect())
    }

    fn narrowing(_: &mut TenantConn, query: &ListQuery) -> ApiResult<Option<Narrowing<Self>>> {
        let class = id_param(&query.params, CLASS_FILTER)?;
        Ok(class.map(|class| -> Narrowing<Self> {
            Box::new(move |rows| rows.filter(t::academic_class_id.eq(class)))
        }))
    }
}

const CLASS_FILTER: &str = "academic_class";

impl Students {
    /// The list filters beyond `?search=`, with what they do (for the API document).
    pub const FILTERS: &'static [(&'static str, &'static str)] =
        &[(CLASS_FILTER, "students of this class (id)")];

    /// One page of `class`'s students, listed like every student list; `None` when the
    /// class does not exist, or is soft-deleted and `include_deleted` is not set.
    pub fn page_in_class(
        conn: &mut TenantConn,
        class: Uuid,
        query: &ListQuery,
    ) -> ApiResult<Option<(i64, Vec<Student>)>> {
        let target = Target {
            parent: (),
            id: class,
            include_deleted: query.include_deleted,
        };
        if Classes::find(conn, target)?.is_none() {
            return Ok(None);
        }
        let mut query = query.clone();
        query.params.insert(CLASS_FILTER.into(), class.to_string());
        Self::list(conn, (), &query).map(Some)
    }

    /// Whether a live student has this admission number (marks must name one).
    pub fn admission_number_is_live(conn: &mut TenantConn, number: &str) -> ApiResult<bool> {
        Ok(diesel::select(diesel::dsl::exists(
            t::table
                .filter(t::admission_number.eq(number))
                .filter(t::is_deleted.eq(false)),
        ))
        .get_result(conn.pg())?)
    }
}
