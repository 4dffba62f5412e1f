//! The school's name and contact details (an ordinary collection; a school usually keeps
//! one record).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    schema::general_settings as t,
    table::{Incomplete, given, school_table},
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

#[derive(Insertable, AsChangeset, Debug)]
#[diesel(table_name = t)]
pub struct NewGeneralSettings {
    pub school_name: String,
    pub address: String,
    pub phone: String,
    pub email: String,
    pub logo: String,
}

#[derive(AsChangeset, Default, Debug)]
#[diesel(table_name = t)]
pub struct GeneralSettingsChanges {
    pub school_name: Option<String>,
    pub address: Option<String>,
    pub phone: Option<String>,
    pub email: Option<String>,
    pub logo: Option<String>,
}

impl TryFrom<GeneralSettingsChanges> for NewGeneralSettings {
    type Error = Incomplete;

    fn try_from(c: GeneralSettingsChanges) -> Result<Self, Incomplete> {
        Ok(Self {
            school_name: given(c.school_name, "school_name")?,
            address: given(c.address, "address")?,
            phone: given(c.phone, "phone")?,
            email: given(c.email, "email")?,
            logo: given(c.logo, "logo")?,
        })
    }
}

school_table!(GeneralSettings in t, new: NewGeneralSettings, changes: GeneralSettingsChanges,
    search: [school_name]);
