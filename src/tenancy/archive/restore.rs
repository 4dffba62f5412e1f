//! The second pass of an import: writes a verified archive back as it was, inside the
//! import's transaction. The school's users and API keys are staged and every clash listed
//! before anything lands, and every staged row is checked to be the school's own
//! (`platform_rows`); the schema is built by the tenant migrations up to the archive's
//! version, its rows loaded with `COPY` (foreign keys and plain indexes set aside meanwhile
//! and made again after, which checks every reference), and then migrated to this binary's
//! latest. A failure anywhere rolls all of it back.

use std::{cell::RefCell, io::Read};

use chrono::Utc;
use diesel::{RunQueryDsl, prelude::*};
use diesel_migrations::MigrationHarness;
use serde::Serialize;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::{
    ArchiveError, catalog, clashes,
    copy::{copy_in, table_target},
    format::{ArchivedTable, DataFile, TableScope, hex_digest},
    platform_rows,
    verify::{VerifiedArchive, entry_path, open_tar},
};
use crate::{
    db::{
        migrations::{TENANT_MIGRATIONS, migration_error},
        schema_public::{domains, tenants},
    },
    tenancy::{TenantConn, school_migrations::build_school_schema_to},
};

pub(super) struct Restore<'a> {
    pub archive: &'a VerifiedArchive,
    pub domains: &'a [(String, bool)],
    pub latest: &'a str,
}

type Entries<'t> = tar::Entries<'t, Box<dyn Read>>;

impl Restore<'_> {
    pub fn run(&self, conn: &mut TenantConn) -> Result<ImportSummary, ArchiveError> {
        let manifest = &self.archive.manifest;
        let (mut tar, _) = open_tar(&self.archive.path, self.archive.max_bytes)
            .map_err(|err| self.damaged(err.to_string()))?;
        let mut entries = tar.entries().map_err(|err| self.damaged(err.to_string()))?;
        let public_shapes = catalog::platform_tables(conn.pg())?;
        let public: Vec<&ArchivedTable> = manifest
            .tables
            .iter()
            .filter(|t| t.scope == TableScope::Public)
            .collect();
        for table in &public {
            let Some(shape) = public_shapes.iter().find(|s| s.name == table.name) else {
                return Err(ArchiveError::Mismatch(format!(
                    "no table public.{} here",
                    table.name
                )));
            };
            if let Some(column) = table.columns.iter().find(|c| !shape.columns.contains(c)) {
                return Err(ArchiveError::Mismatch(format!(
                    "public.{} has no column {} {} here",
                    table.name, column.name, column.sql_type
                )));
            }
            clashes::create_staging(conn.pg(), &table.name)?;
            let target = clashes::staging_table(&table.name);
            self.load(conn, &mut entries, table, &target)?;
        }
        let tenant = conn.tenant().clone();
        let staged: Vec<&str> = public.iter().map(|t| t.name.as_str()).collect();
        platform_rows::check_staged(conn.pg(), tenant.id, &staged)?;
        let domain_names: Vec<String> = self.domains.iter().map(|(d, _)| d.clone()).collect();
        let found = clashes::find(
            conn.pg(),
            tenant.id,
            tenant.schema_name.as_str(),
            &domain_names,
        )?;
        if !found.is_empty() {
            return Err(ArchiveError::Clashes(found));
        }

        self.register(conn)?;
        diesel::sql_query(format!("CREATE SCHEMA {}", tenant.schema_name.quoted()))
            .execute(conn.pg())?;
        self.migrate_to(conn, &manifest.tenant_migration_version)?;
        self.check_shapes(conn)?;
        let foreign_keys = catalog::foreign_keys(conn.pg())?;
        let indexes = catalog::plain_indexes(conn.pg())?;
        for set_aside in foreign_keys.iter().chain(&indexes) {
            diesel::sql_query(&set_aside.drop_sql).execute(conn.pg())?;
        }
        for table in manifest.school_tables() {
            // Rows the migrations seed in a new school (OneRoster's default categories)
            // are the archive's to give: the school's own rows replace them.
            diesel::sql_query(format!("DELETE FROM {}", quote_ident(&table.name)))
                .execute(conn.pg())?;
            let target = table_target(None, &table.name, &column_names(table));
            self.load(conn, &mut entries, table, &target)?;
        }
        for set_aside in indexes.iter().chain(&foreign_keys) {
            diesel::sql_query(&set_aside.create_sql).execute(conn.pg())?;
        }
        for table in &public {
            clashes::insert_staged(conn.pg(), &table.name, &column_names(table))?;
        }
        conn.pg()
            .run_pending_migrations(TENANT_MIGRATIONS)
            .map_err(migration_error)?;
        // Events the school committed and had not delivered yet (queued, or after a
        // subscription's `queued_through`) are the relays' work again under this name: a
        // commit of an event signals it so (tenant migration `webhooks`); an import does
        // the same, since `public.webhook_pending` is no school table and did not come along.
        diesel::sql_query(
            "INSERT INTO public.webhook_pending (schema_name, due_at) \
             SELECT $1, now() WHERE EXISTS (SELECT 1 FROM webhooks WHERE is_active) \
             ON CONFLICT (schema_name) DO UPDATE \
                SET due_at = now(), leased_until = NULL, leased_by = NULL",
        )
        .bind::<diesel::sql_types::Text, _>(tenant.schema_name.as_str())
        .execute(conn.pg())?;
        diesel::sql_query("SELECT pg_notify('webhook_pending', $1)")
            .bind::<diesel::sql_types::Text, _>(tenant.schema_name.as_str())
            .execute(conn.pg())?;
        // Servers drop whatever roles they cached for a school of this name.
        diesel::sql_query("SELECT pg_notify('school_roles', $1)")
            .bind::<diesel::sql_types::Text, _>(tenant.schema_name.as_str())
            .execute(conn.pg())?;

        let rows_of = |name: &str| {
            manifest
                .table(TableScope::Public, name)
                .map_or(0, |t| t.rows)
        };
        Ok(ImportSummary {
            tenant_id: tenant.id,
            name: tenant.name.clone(),
            schema_name: tenant.schema_name.to_string(),
            domains: domain_names,
            archive_version: manifest.tenant_migration_version.clone(),
            migrated_to: self.latest.to_owned(),
            tables: manifest.school_tables().count(),
            rows: manifest.school_tables().map(|t| t.rows).sum(),
            users: rows_of("users"),
            api_keys: rows_of("api_keys"),
        })
    }

    fn damaged(&self, reason: String) -> ArchiveError {
        ArchiveError::Damaged {
            file: self.archive.path.display().to_string(),
            reason,
        }
    }

    /// The school's row and domains, as archived (or with the domains given).
    fn register(&self, conn: &mut TenantConn) -> Result<(), ArchiveError> {
        let archived = &self.archive.manifest.tenant;
        let tenant = conn.tenant().clone();
        diesel::insert_into(tenants::table)
            .values((
                tenants::id.eq(tenant.id),
                tenants::schema_name.eq(tenant.schema_name.as_str()),
                tenants::name.eq(&archived.name),
                tenants::is_active.eq(archived.is_active),
                tenants::created_at.eq(archived.created_at),
                tenants::updated_at.eq(archived.updated_at),
            ))
            .execute(conn.pg())?;
        let renamed = self.domains.iter().map(|(d, _)| d.as_str()).ne(self
            .archive
            .manifest
            .domains
            .iter()
            .map(|d| d.domain.as_str()));
        for (index, (domain, is_primary)) in self.domains.iter().enumerate() {
            let (id, created_at) = match self.archive.manifest.domains.get(index) {
                Some(archived) if !renamed => (archived.id, archived.created_at),
                _ => (Uuid::new_v4(), Utc::now()),
            };
            diesel::insert_into(domains::table)
                .values((
                    domains::id.eq(id),
                    domains::domain.eq(domain),
                    domains::tenant_id.eq(tenant.id),
                    domains::is_primary.eq(is_primary),
                    domains::created_at.eq(created_at),
                ))
                .execute(conn.pg())?;
        }
        Ok(())
    }

    /// Builds the (empty) schema at the archive's `version`, and no further.
    fn migrate_to(&self, conn: &mut TenantConn, version: &str) -> Result<(), ArchiveError> {
        Ok(build_school_schema_to(conn, version)?)
    }

    /// The schema at the archive's version has the archive's tables, column for column.
    fn check_shapes(&self, conn: &mut TenantConn) -> Result<(), ArchiveError> {
        let version = &self.archive.manifest.tenant_migration_version;
        let built = catalog::school_tables(conn.pg())?;
        let archived: Vec<&ArchivedTable> = self.archive.manifest.school_tables().collect();
        for table in &archived {
            match built.iter().find(|b| b.name == table.name) {
                None => {
                    return Err(ArchiveError::Mismatch(format!(
                        "the archive's table {} is not in a school schema at version {version}",
                        table.name
                    )));
                }
                Some(shape) if shape.columns != table.columns => {
                    return Err(ArchiveError::Mismatch(format!(
                        "table {} differs from the archive's at version {version}",
                        table.name
                    )));
                }
                Some(_) => {}
            }
        }
        if let Some(extra) = built
            .iter()
            .find(|b| !archived.iter().any(|t| t.name == b.name))
        {
            return Err(ArchiveError::Mismatch(format!(
                "table {} of a school schema at version {version} is not in the archive",
                extra.name
            )));
        }
        Ok(())
    }

    /// `COPY`s the data files of `table` (the next entries of the archive) into `target`,
    /// checking each file's digest and rows again on the way.
    fn load(
        &self,
        conn: &mut TenantConn,
        entries: &mut Entries<'_>,
        table: &ArchivedTable,
        target: &str,
    ) -> Result<(), ArchiveError> {
        for file in &table.files {
            let entry = entries
                .next()
                .ok_or_else(|| self.damaged(format!("{} is missing", file.path)))?
                .map_err(|err| self.damaged(err.to_string()))?;
            if entry_path(&entry).as_deref() != Some(file.path.as_str()) {
                return Err(self.damaged(format!("{} is not where it was", file.path)));
            }
            let reader = RefCell::new(HashingReader {
                inner: entry,
                hasher: Sha256::new(),
                bytes: 0,
            });
            let rows = copy_in(conn.pg(), target, |sink| {
                std::io::copy(&mut *reader.borrow_mut(), sink)
                    .map(|_| ())
                    .map_err(|err| diesel::result::Error::SerializationError(Box::new(err)))
            })?;
            let read = reader.into_inner();
            let read = DataFile {
                path: file.path.clone(),
                rows: rows as u64,
                bytes: read.bytes,
                sha256: hex_digest(&read.hasher.finalize()),
            };
            if read != *file {
                return Err(self.damaged(format!("{} changed since it was verified", file.path)));
            }
        }
        Ok(())
    }
}

fn column_names(table: &ArchivedTable) -> Vec<String> {
    table.columns.iter().map(|c| c.name.clone()).collect()
}

/// Reads through, keeping the SHA-256 and size of what was read.
struct HashingReader<R> {
    inner: R,
    hasher: Sha256,
    bytes: u64,
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.hasher.update(&buf[..read]);
        self.bytes += read as u64;
        Ok(read)
    }
}

/// `name` as a quoted SQL identifier (the archive's table names were checked against the
/// built schema's already).
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// What an import wrote.
#[derive(Debug, Clone, Serialize)]
pub struct ImportSummary {
    pub tenant_id: Uuid,
    pub name: String,
    pub schema_name: String,
    pub domains: Vec<String>,
    /// The version the archive was restored at, and the one it was migrated to.
    pub archive_version: String,
    pub migrated_to: String,
    pub tables: usize,
    pub rows: u64,
    pub users: u64,
    pub api_keys: u64,
}
