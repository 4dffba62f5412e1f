//! `/api/v1/school/academic-settings/`: pass mark, maximum mark, terms and grading scale (an
//! ordinary collection; a school usually keeps one record).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use crate::{
    api::{
        fields::{Fields, range},
        school::crud::{SchoolResource, table_queries, top_level_methods},
    },
    auth::{Caller, permissions::Resource},
    db::schema_tenant::academic_settings,
    error::ApiResult,
    tenancy::TenantConn,
};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = academic_settings, check_for_backend(diesel::pg::Pg))]
pub struct AcademicSettings {
    pub id: Uuid,
    pub pass_mark: i32,
    pub max_mark: i32,
    pub terms_per_session: i32,
    pub grading_scale: Value,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(AsChangeset, Default)]
#[diesel(table_name = academic_settings)]
pub struct AcademicInput {
    pass_mark: Option<i32>,
    max_mark: Option<i32>,
    terms_per_session: Option<i32>,
    grading_scale: Option<Value>,
}

table_queries!(academic_settings, AcademicSettings, search: [], changes: AcademicInput);

/// A grading scale is a list of `{symbol, min, max}` bands with `min <= max`.
fn grading_scale(value: &Value) -> Result<(), String> {
    let Value::Array(bands) = value else {
        return Err("expected a list of {symbol, min, max}".into());
    };
    if bands.len() > 100 {
        return Err("at most 100 bands".into());
    }
    for (index, band) in bands.iter().enumerate() {
        let Value::Object(band) = band else {
            return Err(format!("band {index}: expected an object"));
        };
        if band
            .keys()
            .any(|k| !matches!(k.as_str(), "symbol" | "min" | "max"))
        {
            return Err(format!(
                "band {index}: only symbol, min and max are allowed"
            ));
        }
        let symbol = band
            .get("symbol")
            .and_then(Value::as_str)
            .filter(|s| (1..=10).contains(&s.chars().count()) && !s.contains('\0'));
        let min = band
            .get("min")
            .and_then(Value::as_i64)
            .filter(|v| (0..=1000).contains(v));
        let max = band
            .get("max")
            .and_then(Value::as_i64)
            .filter(|v| (0..=1000).contains(v));
        match (symbol, min, max) {
            (Some(_), Some(min), Some(max)) if min <= max => {}
            _ => {
                return Err(format!(
                    "band {index}: needs symbol (1-10 characters) and 0 <= min <= max <= 1000"
                ));
            }
        }
    }
    Ok(())
}

pub struct Academic;

impl SchoolResource for Academic {
    const PERMISSION: Resource = Resource::AcademicSettings;
    const PATH: &'static str = "/api/v1/school/academic-settings/";
    type Scope = ();
    type Record = AcademicSettings;
    type Input = AcademicInput;

    top_level_methods!();

    fn parse(f: &mut Fields<'_>) -> AcademicInput {
        AcademicInput {
            pass_mark: f.optional("pass_mark", 50, &range(0, 1000)),
            max_mark: f.optional("max_mark", 100, &range(1, 1000)),
            terms_per_session: f.optional("terms_per_session", 3, &range(1, 6)),
            grading_scale: f.optional("grading_scale", Value::Array(Vec::new()), &grading_scale),
        }
    }

    fn create(
        conn: &mut TenantConn,
        _: &(),
        input: AcademicInput,
        caller: &Caller,
    ) -> ApiResult<AcademicSettings> {
        use academic_settings as t;
        Ok(diesel::insert_into(t::table)
            .values((
                t::id.eq(Uuid::new_v4()),
                t::pass_mark.eq(input.pass_mark.unwrap_or(50)),
                t::max_mark.eq(input.max_mark.unwrap_or(100)),
                t::terms_per_session.eq(input.terms_per_session.unwrap_or(3)),
                t::grading_scale.eq(input
                    .grading_scale
                    .unwrap_or_else(|| Value::Array(Vec::new()))),
                t::created_by.eq(caller.user_id()),
                t::updated_by.eq(caller.user_id()),
            ))
            .returning(AcademicSettings::as_returning())
            .get_result(conn.pg())?)
    }
}
