//! `GET /api/v1/system/tenants/{id}/export/`: one school as an archive (see
//! `tenancy::archive`), streamed to the client as it is written. Superusers only.

use std::{io::Write, sync::Arc};

use actix_web::{HttpResponse, http::header, web::Bytes};
use futures_util::stream;
use tokio::sync::mpsc;

use crate::{
    api::{
        PathIds,
        openapi::{Auth, Op},
        routes::Mount,
    },
    auth::{SystemNeed, SystemRequest},
    db::models::TenantRow,
    error::{ApiError, ApiResult},
    tenancy::{Tenant, archive},
};

/// The archive travels to the response in pieces of this size, at most this many queued.
const PIECE_BYTES: usize = 64 * 1024;
const QUEUED_PIECES: usize = 4;

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
             streamed as it is written (`Content-Disposition: attachment`). Restore it with \
             `school-service tenant import --file FILE`; the format is described in \
             docs/operations.md. A failure after the first byte aborts the download, so a \
             cut archive is never taken for a whole one (an import refuses it anyway).",
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
    let schema = tenant.schema_name.to_string();
    let (sender, mut pieces) = mpsc::channel::<ApiResult<Bytes>>(QUEUED_PIECES);
    let failures = sender.clone();
    let db = state.db.clone();
    actix_web::rt::spawn(async move {
        let written = db
            .run_in_tenant_snapshot(tenant, move |conn| {
                let out = PieceWriter::new(sender);
                archive::write_archive(conn, out, true)
                    .map(drop)
                    .map_err(ApiError::from)
            })
            .await;
        if let Err(err) = written {
            log::warn!("export of school {schema} failed: {err:#}");
            // Before the first piece the handler answers it as a problem; after, it ends
            // the stream with an error, which aborts the download.
            let _ = failures.send(Err(err)).await;
        }
    });
    let first = match pieces.recv().await {
        Some(piece) => piece?,
        None => {
            return Err(ApiError::internal(anyhow::anyhow!(
                "the export wrote nothing"
            )));
        }
    };
    let rest = stream::unfold(pieces, |mut pieces| async move {
        pieces.recv().await.map(|piece| (piece, pieces))
    });
    let body = futures_util::StreamExt::chain(stream::once(async { Ok(first) }), rest);
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

/// `Write` into the response: pieces of `PIECE_BYTES` sent over a bounded channel, so the
/// export waits for the client instead of piling the archive up in memory. It runs on a
/// blocking thread (`blocking_send`).
struct PieceWriter {
    sender: mpsc::Sender<ApiResult<Bytes>>,
    piece: Vec<u8>,
}

impl PieceWriter {
    fn new(sender: mpsc::Sender<ApiResult<Bytes>>) -> Self {
        Self {
            sender,
            piece: Vec::with_capacity(PIECE_BYTES),
        }
    }

    fn send(&mut self) -> std::io::Result<()> {
        if self.piece.is_empty() {
            return Ok(());
        }
        let piece = std::mem::replace(&mut self.piece, Vec::with_capacity(PIECE_BYTES));
        self.sender
            .blocking_send(Ok(Bytes::from(piece)))
            .map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the download was closed")
            })
    }
}

impl Write for PieceWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.piece.extend_from_slice(buf);
        if self.piece.len() >= PIECE_BYTES {
            self.send()?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.send()
    }
}
