//! `/api/v1/school/report-settings/`: one record per school at a path without an id,
//! created with the defaults on first use.

use actix_web::{HttpResponse, web};

use crate::{
    api::{
        body::read_object,
        fields::{Fields, Mode, any, describe, len},
        openapi::{ApiDoc, Auth, Op, schema::request_schema},
        routes::Mount,
    },
    auth::{Need, SchoolRequest, permissions::Resource},
    error::ApiResult,
    school::report_settings::{ReportSettings, ReportSettingsChanges},
};

/// The report settings fields (every one optional, with its default on PUT).
fn parse(f: &mut Fields<'_>) -> ReportSettingsChanges {
    ReportSettingsChanges {
        show_position: f.optional("show_position", true, &any),
        show_class_average: f.optional("show_class_average", true, &any),
        show_teacher_comments: f.optional("show_teacher_comments", true, &any),
        principal_signature: f.optional("principal_signature", String::new(), &len(0, 2048)),
        footer_text: f.optional("footer_text", String::new(), &len(0, 2048)),
    }
}

const TAG: &str = "report-settings";

pub fn mount(m: &mut Mount) {
    let report = m.doc().schema::<ReportSettings>();
    let body = request_schema(&describe(parse), false);
    let op = |summary: &str| Op::new(TAG, summary, Auth::BearerOrKey);
    m.endpoint("/api/v1/school/report-settings/")
        .get(
            report_get,
            op("The school's report settings (created with defaults on first read)")
                .ok(200, Some(report.clone())),
        )
        .put(
            |r, p| report_write(r, p, Mode::Replace),
            op("Replace the report settings")
                .body(body.clone())
                .ok(200, Some(report.clone())),
        )
        .patch(
            |r, p| report_write(r, p, Mode::Patch),
            |_: &mut ApiDoc| {
                op("Update the report settings")
                    .body(body)
                    .ok(200, Some(report))
            },
        );
}

const REPORT: Need = Need::Method(Resource::ReportSettings);

async fn report_get(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let row = request
        .run(REPORT, |conn, _| ReportSettings::load(conn))
        .await?;
    Ok(HttpResponse::Ok().json(row))
}

async fn report_write(
    request: SchoolRequest,
    payload: web::Payload,
    mode: Mode,
) -> ApiResult<HttpResponse> {
    let body = read_object(request.http(), payload).await;
    let row = request
        .run(REPORT, move |conn, caller| {
            let body = body?;
            let mut f = Fields::new(&body, mode);
            let changes = parse(&mut f);
            let changes = f.finish(changes)?;
            conn.transaction(|conn| ReportSettings::change(conn, &changes, &caller.actor()))
        })
        .await?;
    Ok(HttpResponse::Ok().json(row))
}
