//! `/api/v1/school/report-settings/`: one record per school at a path without an id,
//! made with the defaults on first use. Read and written like every resource (parse,
//! validate, the store's operations in `crud::write`'s unit of work); only the path and
//! the making on first use are its own.

use actix_web::{HttpResponse, web};

use crate::{
    api::{
        body::read_object,
        fields::{Fields, Mode, any, describe, len},
        openapi::{ApiDoc, Auth, Op, schema::request_schema},
        routes::Mount,
        school::crud::{self, SchoolResource},
    },
    auth::permissions::Resource,
    error::{ApiError, ApiResult},
    request::{Need, SchoolRequest},
    school::{
        Store,
        report_settings::{ReportSettings, ReportSettingsChanges, ReportSettingsStore},
    },
};

impl SchoolResource for ReportSettingsStore {
    const PERMISSION: Resource = Resource::ReportSettings;
    const PATH: &'static str = "/api/v1/school/report-settings/";

    /// Every field optional, with its default on PUT.
    fn parse(f: &mut Fields<'_>) -> ReportSettingsChanges {
        ReportSettingsChanges {
            show_position: f.optional("show_position", true, &any),
            show_class_average: f.optional("show_class_average", true, &any),
            show_teacher_comments: f.optional("show_teacher_comments", true, &any),
            principal_signature: f.optional("principal_signature", String::new(), &len(0, 2048)),
            footer_text: f.optional("footer_text", String::new(), &len(0, 2048)),
        }
    }
}

const TAG: &str = "report-settings";

pub fn mount(m: &mut Mount) {
    let report = m.doc().schema::<ReportSettings>();
    let body = request_schema(&describe(ReportSettingsStore::parse), false);
    let op = |summary: &str| Op::new(TAG, summary, Auth::BearerOrKey);
    m.endpoint(ReportSettingsStore::PATH)
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

async fn report_get(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let record = request
        .run(Need::Method(ReportSettingsStore::PERMISSION), |conn, _| {
            ReportSettingsStore::load(conn)
        })
        .await?;
    Ok(HttpResponse::Ok().json(record))
}

/// PUT and PATCH: the body in `mode` over the school's record (made first if need be).
async fn report_write(
    request: SchoolRequest,
    payload: web::Payload,
    mode: Mode,
) -> ApiResult<HttpResponse> {
    type R = ReportSettingsStore;
    let body = read_object(request.http(), payload).await;
    let record = crud::write::<R, _, _>(request, move |conn, caller| {
        let body = body?;
        R::ensure(conn)?;
        let target = R::RECORD;
        let current = R::find(conn, target)?.ok_or_else(ApiError::not_found)?;
        let changes = crud::parse_changes::<R>(conn, &(), &body, mode, Some(&current))?;
        let actor = caller.actor();
        match mode {
            Mode::Patch => R::update(conn, target, changes, &actor),
            _ => R::replace(conn, target, crud::complete::<R>(changes)?, &actor),
        }
    })
    .await?;
    Ok(HttpResponse::Ok().json(record))
}
