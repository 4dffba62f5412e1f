//! The school's name and contact details (an ordinary collection; a school usually keeps
//! one record).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Store,
    schema::general_settings as t,
    table::{school_forms, school_table},
};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct GeneralSettings {
    pub id: Uuid,
    pub school_name: String,
    pub address: String,
    pub phone: String,
    pub email: String,
    pub logo: String,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

school_forms!(t: NewGeneralSettings, GeneralSettingsChanges {
    school_name: String,
    address: String,
    phone: String,
    email: String,
    logo: String,
});

/// The school's general settings records.
pub struct GeneralSettingsStore;

school_table!(GeneralSettingsStore: GeneralSettings in t, new: NewGeneralSettings, changes: GeneralSettingsChanges,
    search: [school_name]);

impl Store for GeneralSettingsStore {
    type Record = GeneralSettings;
    const NAME: &'static str = "general_settings";
}
