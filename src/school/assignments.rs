//! Teacher assignments: which teacher teaches which subject to which class (one live
//! assignment per triple).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    schema::teacher_assignments as t,
    table::{Incomplete, given, school_table},
};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct TeacherAssignment {
    pub id: Uuid,
    #[serde(rename = "teacher")]
    pub teacher_id: Uuid,
    #[serde(rename = "academic_class")]
    pub academic_class_id: Uuid,
    #[serde(rename = "subject")]
    pub subject_id: Uuid,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Insertable, AsChangeset, Debug)]
#[diesel(table_name = t)]
pub struct NewAssignment {
    pub teacher_id: Uuid,
    pub academic_class_id: Uuid,
    pub subject_id: Uuid,
    pub is_deleted: bool,
}

#[derive(AsChangeset, Default, Debug)]
#[diesel(table_name = t)]
pub struct AssignmentChanges {
    pub teacher_id: Option<Uuid>,
    pub academic_class_id: Option<Uuid>,
    pub subject_id: Option<Uuid>,
    pub is_deleted: Option<bool>,
}

impl TryFrom<AssignmentChanges> for NewAssignment {
    type Error = Incomplete;

    fn try_from(c: AssignmentChanges) -> Result<Self, Incomplete> {
        Ok(Self {
            teacher_id: given(c.teacher_id, "teacher")?,
            academic_class_id: given(c.academic_class_id, "academic_class")?,
            subject_id: given(c.subject_id, "subject")?,
            is_deleted: given(c.is_deleted, "is_deleted")?,
        })
    }
}

school_table!(TeacherAssignment in t, new: NewAssignment, changes: AssignmentChanges,
    search: [], soft_delete: is_deleted);
