//! The progress of setting up an academic or exam session.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Store,
    schema::session_setups as t,
    table::{school_forms, school_table},
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

school_forms!(t: NewSessionSetup, SessionSetupChanges {
    session_type: String,
    academic_session_id: Option<Uuid>,
    exam_session_id: Option<Uuid>,
    status: String,
    current_step: i32,
});

/// Session set-up progress records.
pub struct SessionSetups;

school_table!(SessionSetups: SessionSetup in t, new: NewSessionSetup, changes: SessionSetupChanges, search: []);

impl Store for SessionSetups {
    type Record = SessionSetup;
    const NAME: &'static str = "session_setup";
}
