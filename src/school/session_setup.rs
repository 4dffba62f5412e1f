//! The progress of setting up an academic or exam session.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    schema::session_setups as t,
    table::{Incomplete, given, school_table},
};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct SessionSetup {
    pub id: Uuid,
    pub session_type: String,
    #[serde(rename = "academic_session")]
    pub academic_session_id: Option<Uuid>,
    #[serde(rename = "exam_session")]
    pub exam_session_id: Option<Uuid>,
    pub status: String,
    pub current_step: i32,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Insertable, AsChangeset, Debug)]
#[diesel(table_name = t, treat_none_as_null = true)]
pub struct NewSessionSetup {
    pub session_type: String,
    pub academic_session_id: Option<Uuid>,
    pub exam_session_id: Option<Uuid>,
    pub status: String,
    pub current_step: i32,
}

#[derive(AsChangeset, Default, Debug)]
#[diesel(table_name = t)]
pub struct SessionSetupChanges {
    pub session_type: Option<String>,
    pub academic_session_id: Option<Option<Uuid>>,
    pub exam_session_id: Option<Option<Uuid>>,
    pub status: Option<String>,
    pub current_step: Option<i32>,
}

impl TryFrom<SessionSetupChanges> for NewSessionSetup {
    type Error = Incomplete;

    fn try_from(c: SessionSetupChanges) -> Result<Self, Incomplete> {
        Ok(Self {
            session_type: given(c.session_type, "session_type")?,
            academic_session_id: given(c.academic_session_id, "academic_session")?,
            exam_session_id: given(c.exam_session_id, "exam_session")?,
            status: given(c.status, "status")?,
            current_step: given(c.current_step, "current_step")?,
        })
    }
}

school_table!(SessionSetup in t, new: NewSessionSetup, changes: SessionSetupChanges, search: []);
