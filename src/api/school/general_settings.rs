//! `/api/v1/school/general-settings/`: the school's name and contact details (an ordinary
//! collection; a school usually keeps one record).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use crate::{
    api::{
        fields::{Email, Fields, len},
        school::crud::{SchoolResource, table_queries, top_level_methods},
    },
    auth::{Caller, permissions::Resource},
    db::schema_tenant::general_settings,
    error::ApiResult,
    tenancy::TenantConn,
};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = general_settings, check_for_backend(diesel::pg::Pg))]
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

#[derive(AsChangeset, Default)]
#[diesel(table_name = general_settings)]
pub struct GeneralInput {
    school_name: Option<String>,
    address: Option<String>,
    phone: Option<String>,
    email: Option<String>,
    logo: Option<String>,
}

table_queries!(general_settings, GeneralSettings, search: [school_name], changes: GeneralInput);

pub struct General;

impl SchoolResource for General {
    const PERMISSION: Resource = Resource::GeneralSettings;
    const PATH: &'static str = "/api/v1/school/general-settings/";
    type Scope = ();
    type Record = GeneralSettings;
    type Input = GeneralInput;

    top_level_methods!();

    fn parse(f: &mut Fields<'_>) -> GeneralInput {
        GeneralInput {
            school_name: f.required("school_name", &len(1, 255)),
            address: f.required("address", &len(0, 1000)),
            phone: f.required("phone", &len(0, 50)),
            email: f.required("email", &Email),
            logo: f.optional("logo", String::new(), &len(0, 2048)),
        }
    }

    fn create(
        conn: &mut TenantConn,
        _: &(),
        input: GeneralInput,
        caller: &Caller,
    ) -> ApiResult<GeneralSettings> {
        use general_settings as t;
        Ok(diesel::insert_into(t::table)
            .values((
                t::id.eq(Uuid::new_v4()),
                t::school_name.eq(input.school_name.unwrap_or_default()),
                t::address.eq(input.address.unwrap_or_default()),
                t::phone.eq(input.phone.unwrap_or_default()),
                t::email.eq(input.email.unwrap_or_default()),
                t::logo.eq(input.logo.unwrap_or_default()),
                t::created_by.eq(caller.user_id()),
                t::updated_by.eq(caller.user_id()),
            ))
            .returning(GeneralSettings::as_returning())
            .get_result(conn.pg())?)
    }
}
