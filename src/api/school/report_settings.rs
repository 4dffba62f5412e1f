//! `/api/v1/school/report-settings/`: one record per school at a path without an id,
//! created with the defaults on first use.

use actix_web::{HttpResponse, web};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;

use crate::{
    api::{
        body::read_object,
        fields::{Fields, Mode, any, len},
        routes::Endpoint,
    },
    auth::{Need, SchoolRequest, permissions::Resource},
    db::schema_tenant::report_settings,
    error::ApiResult,
    tenancy::TenantConn,
};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
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

/// The school's report settings, created with the defaults on first use. The common
/// case is one SELECT; the insert happens once per school.
fn report_row(conn: &mut TenantConn) -> ApiResult<ReportSettings> {
    let select = || report_settings::table.select(ReportSettings::as_select());
    if let Some(row) = select().first(conn.pg()).optional()? {
        return Ok(row);
    }
    diesel::insert_into(report_settings::table)
        .values(report_settings::id.eq(true))
        .on_conflict_do_nothing()
        .execute(conn.pg())?;
    Ok(select().first(conn.pg())?)
}

/// The report settings fields (every one optional, with its default on PUT).
pub fn parse_input(f: &mut Fields<'_>) -> ReportInput {
    ReportInput {
        show_position: f.optional("show_position", true, &any),
        show_class_average: f.optional("show_class_average", true, &any),
        show_teacher_comments: f.optional("show_teacher_comments", true, &any),
        principal_signature: f.optional("principal_signature", String::new(), &len(0, 2048)),
        footer_text: f.optional("footer_text", String::new(), &len(0, 2048)),
    }
}

pub fn configure(cfg: &mut web::ServiceConfig) {
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
            let input = parse_input(&mut f);
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
