//! Writing an archive: every table of the school and its rows of `public`, read in one
//! `REPEATABLE READ, READ ONLY` transaction, streamed into a tar (gzip) stream. At most
//! one data file's rows ([`CHUNK_BYTES`]) are held in memory, whatever the school's size.

use std::io::{BufRead, Write};

use chrono::Utc;
use flate2::{Compression, write::GzEncoder};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::{
    ArchiveError, catalog,
    catalog::TableShape,
    copy::{copy_out, quote_ident, table_target},
    format::{
        ArchivedDomain, ArchivedTable, CHUNK_BYTES, DataFile, FORMAT, FORMAT_VERSION,
        MANIFEST_DIGEST_FILE, MANIFEST_FILE, MANIFEST_MAC_FILE, Manifest, TableScope,
        data_file_path, hex_digest,
    },
    io_context,
    signing::ArchiveKey,
};
use crate::{
    db::{
        Db,
        models::{DomainRow, TenantRow},
    },
    error::ApiError,
    tenancy::{TenantConn, TenantRef},
};

/// What an export wrote.
#[derive(Debug, Clone, Serialize)]
pub struct ExportSummary {
    pub tenant_migration_version: String,
    /// School tables, and their rows in all.
    pub tables: usize,
    pub rows: u64,
    pub users: u64,
    pub api_keys: u64,
    /// Whether the manifest carries the platform's MAC (a key was given).
    pub signed: bool,
}

/// Exports `tenant` to `out` from one snapshot (`compress`: gzip), signed under `key` when
/// one is given. Answers what it wrote, and `out` once everything is written to it.
pub fn export_school<W: Write>(
    db: &Db,
    tenant: &TenantRef,
    out: W,
    compress: bool,
    key: Option<&ArchiveKey>,
) -> Result<(ExportSummary, W), ArchiveError> {
    db.with_tenant_snapshot(tenant, |conn| write_archive(conn, out, compress, key))
}

/// Writes the archive of the school `conn` is bound to. `conn` must come from
/// `Db::with_tenant_snapshot` (or its async form): anything else is refused, since the
/// archive would not be one moment of the school. `key`: the platform's archive key, whose
/// MAC of the manifest is written after it.
pub fn write_archive<W: Write>(
    conn: &mut TenantConn,
    out: W,
    compress: bool,
    key: Option<&ArchiveKey>,
) -> Result<(ExportSummary, W), ArchiveError> {
    use diesel::RunQueryDsl;
    let in_snapshot: bool = diesel::select(diesel::dsl::sql::<diesel::sql_types::Bool>(
        "current_setting('transaction_isolation') = 'repeatable read' \
         AND current_setting('transaction_read_only') = 'on'",
    ))
    .get_result(conn.pg())?;
    if !in_snapshot {
        return Err(ArchiveError::Refused(
            "an export must run in a REPEATABLE READ, READ ONLY transaction".into(),
        ));
    }
    // It reads for as long as its reader takes to take the bytes (a download, a pipe).
    diesel::sql_query("SET LOCAL statement_timeout = 0").execute(conn.pg())?;

    let tenant_id = conn.tenant().id;
    let row = TenantRow::find(conn.pg(), tenant_id)?.ok_or_else(ApiError::not_found)?;
    let domains = DomainRow::for_tenant(conn.pg(), tenant_id)?;
    let version = catalog::migration_version(conn.pg())?.ok_or_else(|| {
        ArchiveError::Refused(format!(
            "schema {} has no migration history",
            row.schema_name
        ))
    })?;
    let sequences = catalog::sequences(conn.pg())?;
    if !sequences.is_empty() {
        return Err(ArchiveError::Refused(format!(
            "schema {} has sequences ({}), whose positions an archive does not carry",
            row.schema_name,
            sequences.join(", ")
        )));
    }
    let created_at = Utc::now();
    let mut writer = ArchiveWriter::new(out, compress, created_at.timestamp());

    let mut tables = Vec::new();
    for shape in catalog::platform_tables(conn.pg())? {
        let owner = if shape.name == "users" {
            "client_id"
        } else {
            "tenant_id"
        };
        let columns: Vec<String> = shape
            .column_names()
            .iter()
            .map(|c| quote_ident(c))
            .collect();
        let source = format!(
            "(SELECT {} FROM public.{} WHERE {owner} = '{tenant_id}' ORDER BY id)",
            columns.join(", "),
            quote_ident(&shape.name),
        );
        tables.push(writer.table(conn, TableScope::Public, shape, &source)?);
    }
    let school_tables = catalog::school_tables(conn.pg())?;
    for shape in school_tables {
        let source = table_target(None, &shape.name, &shape.column_names());
        tables.push(writer.table(conn, TableScope::School, shape, &source)?);
    }

    let manifest = Manifest {
        format: FORMAT.to_owned(),
        format_version: FORMAT_VERSION,
        created_at,
        binary_version: env!("CARGO_PKG_VERSION").to_owned(),
        tenant_migration_version: version,
        tenant: (&row).into(),
        domains: domains.iter().map(ArchivedDomain::from).collect(),
        tables,
    };
    let json = serde_json::to_vec_pretty(&manifest).map_err(|err| ArchiveError::Io {
        context: "writing the manifest".into(),
        source: err.into(),
    })?;
    let digest = writer.add(MANIFEST_FILE, &json, 0)?;
    let line = format!("{}  {MANIFEST_FILE}\n", digest.sha256);
    writer.add(MANIFEST_DIGEST_FILE, line.as_bytes(), 0)?;
    if let Some(key) = key {
        writer.add(MANIFEST_MAC_FILE, key.sign(&json).as_bytes(), 0)?;
    }
    let out = writer.finish()?;

    let rows_of = |scope: TableScope, name: &str| manifest.table(scope, name).map_or(0, |t| t.rows);
    let summary = ExportSummary {
        tenant_migration_version: manifest.tenant_migration_version.clone(),
        tables: manifest.school_tables().count(),
        rows: manifest.school_tables().map(|t| t.rows).sum(),
        users: rows_of(TableScope::Public, "users"),
        api_keys: rows_of(TableScope::Public, "api_keys"),
        signed: key.is_some(),
    };
    Ok((summary, out))
}

/// Where the tar stream goes: through gzip or not. One per export, so the size of the
/// gzip variant does not matter.
#[allow(clippy::large_enum_variant)]
enum Sink<W: Write> {
    Gzip(GzEncoder<W>),
    Plain(W),
}

impl<W: Write> Write for Sink<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Self::Gzip(w) => w.write(buf),
            Self::Plain(w) => w.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Self::Gzip(w) => w.flush(),
            Self::Plain(w) => w.flush(),
        }
    }
}

struct ArchiveWriter<W: Write> {
    tar: tar::Builder<Sink<W>>,
    mtime: u64,
}

impl<W: Write> ArchiveWriter<W> {
    fn new(out: W, compress: bool, mtime: i64) -> Self {
        let sink = if compress {
            Sink::Gzip(GzEncoder::new(out, Compression::default()))
        } else {
            Sink::Plain(out)
        };
        Self {
            tar: tar::Builder::new(sink),
            mtime: u64::try_from(mtime).unwrap_or(0),
        }
    }

    /// Appends one file; answers its record.
    fn add(&mut self, path: &str, data: &[u8], rows: u64) -> Result<DataFile, ArchiveError> {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(self.mtime);
        header.set_entry_type(tar::EntryType::Regular);
        self.tar
            .append_data(&mut header, path, data)
            .map_err(io_context(format!("writing {path}")))?;
        Ok(DataFile {
            path: path.to_owned(),
            rows,
            bytes: data.len() as u64,
            sha256: hex_digest(&Sha256::digest(data)),
        })
    }

    /// Copies the rows of `source` (a `COPY` target) into data files of about
    /// `CHUNK_BYTES`, split at row ends.
    fn table(
        &mut self,
        conn: &mut TenantConn,
        scope: TableScope,
        shape: TableShape,
        source: &str,
    ) -> Result<ArchivedTable, ArchiveError> {
        let name = shape.name.clone();
        let (files, rows) = copy_out(conn.pg(), source, |rows| self.chunks(scope, &name, rows))?;
        Ok(ArchivedTable {
            scope,
            name: shape.name,
            columns: shape.columns,
            rows,
            files,
        })
    }

    /// Splits `rows` into data files of about `CHUNK_BYTES`, at row ends; answers them and
    /// the rows in all.
    fn chunks(
        &mut self,
        scope: TableScope,
        table: &str,
        rows: &mut dyn BufRead,
    ) -> Result<(Vec<DataFile>, u64), ArchiveError> {
        let mut files = Vec::new();
        let mut chunk = Vec::with_capacity(CHUNK_BYTES + 64 * 1024);
        let (mut chunk_rows, mut total_rows) = (0u64, 0u64);
        loop {
            let read = rows
                .read_until(b'\n', &mut chunk)
                .map_err(io_context(format!("reading table {table}")))?;
            if read > 0 {
                chunk_rows += 1;
                total_rows += 1;
            }
            let last = read == 0;
            if (last && !chunk.is_empty()) || chunk.len() >= CHUNK_BYTES {
                let path = data_file_path(scope, table, files.len() + 1);
                files.push(self.add(&path, &chunk, chunk_rows)?);
                chunk.clear();
                chunk_rows = 0;
            }
            if last {
                return Ok((files, total_rows));
            }
        }
    }

    /// Ends the tar stream (and the gzip one); answers the output.
    fn finish(self) -> Result<W, ArchiveError> {
        let sink = self
            .tar
            .into_inner()
            .map_err(io_context("ending the archive"))?;
        let mut out = match sink {
            Sink::Gzip(gzip) => gzip.finish().map_err(io_context("ending the archive"))?,
            Sink::Plain(out) => out,
        };
        out.flush().map_err(io_context("writing the archive"))?;
        Ok(out)
    }
}
