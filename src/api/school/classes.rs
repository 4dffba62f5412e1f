//! `/api/v1/school/classes/`: academic classes (name unique among live classes).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use crate::{
    api::{
        fields::{Fields, any, len, range},
        school::crud::{SchoolResource, table_queries, top_level_methods},
    },
    auth::{Caller, permissions::Resource},
    db::schema_tenant::academic_classes as t,
    error::ApiResult,
    tenancy::TenantConn,
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

#[derive(AsChangeset, Default)]
#[diesel(table_name = t)]
pub struct ClassInput {
    name: Option<String>,
    level: Option<Option<i32>>,
    is_deleted: Option<bool>,
}

table_queries!(t, AcademicClass, search: [name], soft_delete: is_deleted, changes: ClassInput);

pub struct Classes;

impl SchoolResource for Classes {
    const CREATE_RULES: Option<&'static str> =
        Some("`name` is unique among live classes (409 `conflict`).");
    const PERMISSION: Resource = Resource::AcademicClass;
    const PATH: &'static str = "/api/v1/school/classes/";
    type Scope = ();
    type Record = AcademicClass;
    type Input = ClassInput;

    top_level_methods!();

    fn parse(f: &mut Fields<'_>) -> ClassInput {
        ClassInput {
            name: f.required("name", &len(1, 255)),
            level: f.nullable("level", None, &range(0, 100)),
            is_deleted: f.optional("is_deleted", false, &any),
        }
    }

    fn create(
        conn: &mut TenantConn,
        _: &(),
        input: ClassInput,
        caller: &Caller,
    ) -> ApiResult<AcademicClass> {
        Ok(diesel::insert_into(t::table)
            .values((
                t::id.eq(Uuid::new_v4()),
                t::name.eq(input.name.unwrap_or_default()),
                t::level.eq(input.level.flatten()),
                t::is_deleted.eq(input.is_deleted.unwrap_or(false)),
                t::created_by.eq(caller.user_id()),
                t::updated_by.eq(caller.user_id()),
            ))
            .returning(AcademicClass::as_returning())
            .get_result(conn.pg())?)
    }
}
