//! Academic classes (name unique among live classes).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Store,
    schema::academic_classes as t,
    table::{school_forms, school_table},
};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct AcademicClass {
    pub id: Uuid,
    pub name: String,
    pub level: Option<i32>,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

school_forms!(t: NewClass, ClassChanges {
    name: String,
    level: Option<i32>,
    is_deleted: bool,
});

/// Academic classes.
pub struct Classes;

school_table!(Classes: AcademicClass in t, new: NewClass, changes: ClassChanges, search: [name],
    soft_delete: is_deleted);

impl Store for Classes {
    type Record = AcademicClass;

    fn about_students(
        children: &std::sync::Arc<[uuid::Uuid]>,
    ) -> Option<super::store::Narrowing<Self>> {
        super::family::classes(children)
    }
    const NAME: &'static str = "academic_class";
}
