//! `GET /api/v1/system/tenants/{id}/export/`: one school as an archive (see
//! `tenancy::archive`), spooled to a temporary file, then streamed to the client. Superusers only.

use std::{
    io::{BufWriter, Seek, SeekFrom},
    sync::Arc,
};

use actix_web::{HttpResponse, http::header};

use crate::{
    api::{
        PathIds,
        openapi::{Auth, Op},
        routes::Mount,
        spool::{PIECE_BYTES, spool_file, stream_file},
    },
    db::models::TenantRow,
    error::{ApiError, ApiResult},
    request::{SystemNeed, SystemRequest},
    tenancy::{
        Tenant,
        archive::{self, ArchiveKey},
    },
};

pub fn mount(m: &mut Mount) {
    m.endpoint("/api/v1/system/tenants/{id}/export/").get(
        export,
        Op::new(
            "tenants",
            "Export a school as an archive (superuser)",
            Auth::Bearer,
        )
        .description(Some(
            "The school's schema rows, tenant row, domains, users (with password hashes) and \
             API keys (hashes), read in one consistent snapshot: a gzip-compressed tar, \
             signed with the platform's `ARCHIVE_SIGNING_KEY` when it has one: a \
             gzip-compressed tar (`Content-Disposition: attachment`). The archive is written \
             whole to a temporary file before the first byte is sent, so a slow download \
             holds no database connection, and a failure to write it answers a problem. \
             Restore it with `school-service tenant import --file FILE`; the format is \
             described in docs/operations.md. A failure after the first byte aborts the \
             download, so a cut archive is never taken for a whole one (an import refuses it \
             anyway).",
        ))
        .ok_file(200),
    );
}

async fn export(request: SystemRequest, path: PathIds) -> ApiResult<HttpResponse> {
    let state = request.state();
    let row = request
        .run(SystemNeed::SuperAdmin, move |conn, _| {
            let id = path.last()?;
            TenantRow::find(conn, id)?.ok_or_else(ApiError::not_found)
        })
        .await?;
    let tenant = Arc::new(Tenant::try_from(&row).map_err(ApiError::internal)?);
    let key = state
        .config
        .archive_signing_key
        .as_ref()
        .map(|key| ArchiveKey::new(key.expose()));
    // Written whole to a spool file first, at the database's pace: the pooled connection
    // and the school's turn are held for as long as the snapshot takes to read, never for
    // as long as a slow client takes to download.
    let spool = state
        .db
        .run_in_tenant_snapshot(tenant, move |conn| {
            let out = BufWriter::with_capacity(PIECE_BYTES, spool_file("export.tar.gz")?);
            let (_, out) =
                archive::write_archive(conn, out, true, key.as_ref()).map_err(ApiError::from)?;
            let mut file = out
                .into_inner()
                .map_err(|err| ApiError::internal(err.into_error()))?;
            file.seek(SeekFrom::Start(0)).map_err(ApiError::internal)?;
            Ok(file)
        })
        .await?;
    let body = stream_file(spool);
    let filename = format!(
        "{}-{}.tar.gz",
        row.schema_name,
        chrono::Utc::now().format("%Y%m%dT%H%M%SZ")
    );
    Ok(HttpResponse::Ok()
        .content_type("application/octet-stream")
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{filename}\""),
        ))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .streaming(body))
}
