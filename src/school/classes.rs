//! Academic classes (name unique among live classes).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    schema::academic_classes as t,
    table::{Incomplete, given, school_table},
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

#[derive(Insertable, AsChangeset, Debug)]
#[diesel(table_name = t, treat_none_as_null = true)]
pub struct NewClass {
    pub name: String,
    pub level: Option<i32>,
    pub is_deleted: bool,
}

#[derive(AsChangeset, Default, Debug)]
#[diesel(table_name = t)]
pub struct ClassChanges {
    pub name: Option<String>,
    pub level: Option<Option<i32>>,
    pub is_deleted: Option<bool>,
}

impl TryFrom<ClassChanges> for NewClass {
    type Error = Incomplete;

    fn try_from(c: ClassChanges) -> Result<Self, Incomplete> {
        Ok(Self {
            name: given(c.name, "name")?,
            level: given(c.level, "level")?,
            is_deleted: given(c.is_deleted, "is_deleted")?,
        })
    }
}

school_table!(AcademicClass in t, new: NewClass, changes: ClassChanges, search: [name],
    soft_delete: is_deleted);
