//! School settings: general and academic settings (ordinary collections; a school usually
//! keeps one record of each) and report settings (one record per school, at a path
//! without an id).

use actix_web::{HttpResponse, web};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use crate::{
    api::{
        body::read_object,
        fields::{Fields, Mode, any, email, len, range},
        pagination::ListQuery,
        routes::Endpoint,
        school::crud::SchoolResource,
    },
    auth::{Caller, Need, SchoolRequest, permissions::Resource},
    db::schema_tenant::{academic_settings, general_settings, report_settings},
    error::ApiResult,
    tenancy::TenantConn,
};

#[derive(Queryable, Selectable, Serialize, Debug, Clone)]
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

mod general_queries {
    use super::{GeneralSettings, general_settings};
    crate::api::school::crud::table_queries!(general_settings, GeneralSettings, search: [school_name]);
}

pub struct General;

impl SchoolResource for General {
    const PERMISSION: Resource = Resource::GeneralSettings;
    const PATH: &'static str = "/api/v1/school/general-settings/";
    type Scope = ();
    type Record = GeneralSettings;
    type Input = GeneralInput;

    fn scope(_: &mut TenantConn, _: &[Uuid]) -> ApiResult<()> {
        Ok(())
    }

    fn parse(f: &mut Fields<'_>) -> GeneralInput {
        GeneralInput {
            school_name: f.required("school_name", &len(1, 255)),
            address: f.required("address", &len(0, 1000)),
            phone: f.required("phone", &len(0, 50)),
            email: f.required("email", &|e: &String| {
                len(1, 254)(e).and_then(|()| email(e))
            }),
            logo: f.optional("logo", String::new(), &len(0, 2048)),
        }
    }

    fn list(
        conn: &mut TenantConn,
        _: &(),
        query: &ListQuery,
    ) -> ApiResult<(i64, Vec<GeneralSettings>)> {
        general_queries::list_rows(conn, query, |q| q)
    }

    fn find(
        conn: &mut TenantConn,
        _: &(),
        id: Uuid,
        include_deleted: bool,
    ) -> ApiResult<Option<GeneralSettings>> {
        general_queries::find_row(conn, id, include_deleted)
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

    fn update(
        conn: &mut TenantConn,
        _: &(),
        id: Uuid,
        input: GeneralInput,
        caller: &Caller,
    ) -> ApiResult<GeneralSettings> {
        use general_settings as t;
        Ok(diesel::update(t::table.find(id))
            .set((
                &input,
                t::updated_by.eq(caller.user_id()),
                t::updated_at.eq(Utc::now()),
            ))
            .returning(GeneralSettings::as_returning())
            .get_result(conn.pg())?)
    }

    fn delete(conn: &mut TenantConn, _: &(), id: Uuid) -> ApiResult<()> {
        general_queries::delete_row(conn, id)
    }
}

#[derive(Queryable, Selectable, Serialize, Debug, Clone)]
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

mod academic_queries {
    use super::{AcademicSettings, academic_settings};
    crate::api::school::crud::table_queries!(academic_settings, AcademicSettings, search: []);
}

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

    fn scope(_: &mut TenantConn, _: &[Uuid]) -> ApiResult<()> {
        Ok(())
    }

    fn parse(f: &mut Fields<'_>) -> AcademicInput {
        AcademicInput {
            pass_mark: f.optional("pass_mark", 50, &range(0, 1000)),
            max_mark: f.optional("max_mark", 100, &range(1, 1000)),
            terms_per_session: f.optional("terms_per_session", 3, &range(1, 6)),
            grading_scale: f.optional("grading_scale", Value::Array(Vec::new()), &grading_scale),
        }
    }

    fn list(
        conn: &mut TenantConn,
        _: &(),
        query: &ListQuery,
    ) -> ApiResult<(i64, Vec<AcademicSettings>)> {
        academic_queries::list_rows(conn, query, |q| q)
    }

    fn find(
        conn: &mut TenantConn,
        _: &(),
        id: Uuid,
        include_deleted: bool,
    ) -> ApiResult<Option<AcademicSettings>> {
        academic_queries::find_row(conn, id, include_deleted)
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

    fn update(
        conn: &mut TenantConn,
        _: &(),
        id: Uuid,
        input: AcademicInput,
        caller: &Caller,
    ) -> ApiResult<AcademicSettings> {
        use academic_settings as t;
        Ok(diesel::update(t::table.find(id))
            .set((
                &input,
                t::updated_by.eq(caller.user_id()),
                t::updated_at.eq(Utc::now()),
            ))
            .returning(AcademicSettings::as_returning())
            .get_result(conn.pg())?)
    }

    fn delete(conn: &mut TenantConn, _: &(), id: Uuid) -> ApiResult<()> {
        academic_queries::delete_row(conn, id)
    }
}

#[derive(Queryable, Selectable, Serialize, Debug, Clone)]
#[diesel(table_name = report_settings, check_for_backend(diesel::pg::Pg))]
pub struct ReportSettings {
    pub show_position: bool,
    pub show_class_average: bool,
    pub show_teacher_comments: bool,
    pub principal_signature: String,
    pub footer_text: String,
    pub updated_at: DateTime<Utc>,
}

#[derive(AsChangeset, Default)]
#[diesel(table_name = report_settings)]
pub struct ReportInput {
    show_position: Option<bool>,
    show_class_average: Option<bool>,
    show_teacher_comments: Option<bool>,
    principal_signature: Option<String>,
    footer_text: Option<String>,
}

/// The school's report settings, created with the defaults on first use.
fn report_row(conn: &mut TenantConn) -> ApiResult<ReportSettings> {
    diesel::insert_into(report_settings::table)
        .values(report_settings::id.eq(true))
        .on_conflict_do_nothing()
        .execute(conn.pg())?;
    Ok(report_settings::table
        .select(ReportSettings::as_select())
        .first(conn.pg())?)
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    crate::api::school::crud::register::<General>(cfg);
    crate::api::school::crud::register::<Academic>(cfg);
    Endpoint::new("/api/v1/school/report-settings/")
        .get(report_get)
        .put(|r, p| report_write(r, p, Mode::Replace))
        .patch(|r, p| report_write(r, p, Mode::Patch))
        .register(cfg);
}

const REPORT: Need = Need::Method(Resource::ReportSettings);

async fn report_get(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let row = request.run(REPORT, |conn, _| report_row(conn)).await?;
    Ok(HttpResponse::Ok().json(row))
}

async fn report_write(
    request: SchoolRequest,
    payload: web::Payload,
    mode: Mode,
) -> ApiResult<HttpResponse> {
    let body = read_object(
        request.http(),
        payload,
        request.state().config.max_body_bytes,
    )
    .await;
    let row = request
        .run(REPORT, move |conn, caller| {
            let body = body?;
            let mut f = Fields::new(&body, mode);
            let input = ReportInput {
                show_position: f.optional("show_position", true, &any),
                show_class_average: f.optional("show_class_average", true, &any),
                show_teacher_comments: f.optional("show_teacher_comments", true, &any),
                principal_signature: f.optional(
                    "principal_signature",
                    String::new(),
                    &len(0, 2048),
                ),
                footer_text: f.optional("footer_text", String::new(), &len(0, 2048)),
            };
            let input = f.finish(input)?;
            conn.transaction(|conn| {
                report_row(conn)?;
                Ok(diesel::update(report_settings::table)
                    .set((
                        &input,
                        report_settings::updated_by.eq(caller.user_id()),
                        report_settings::updated_at.eq(Utc::now()),
                    ))
                    .returning(ReportSettings::as_returning())
                    .get_result(conn.pg())?)
            })
        })
        .await?;
    Ok(HttpResponse::Ok().json(row))
}
