//! `tenant import`: checks what an archive may be restored as (its tenant-migration
//! version against this binary's, the schema and domains it will get), then restores it in
//! one transaction (see `restore`).

use std::sync::Arc;

use diesel::migration::MigrationSource;
use serde::Serialize;
use uuid::Uuid;

use super::{ArchiveError, format::Manifest, restore::Restore, verify::VerifiedArchive};
use crate::{
    db::{
        Db,
        migrations::{TENANT_MIGRATIONS, migration_error},
        models::tenant::normalize_domain,
    },
    tenancy::{SchemaName, Tenant},
};

/// How to restore: under another schema name, or with other domains.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    pub schema: Option<String>,
    /// Replaces the archive's domains when not empty (the first is primary).
    pub domains: Vec<String>,
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

/// Every tenant migration version this binary has, in order.
fn known_versions() -> Result<Vec<String>, ArchiveError> {
    let migrations = MigrationSource::<diesel::pg::Pg>::migrations(&TENANT_MIGRATIONS)
        .map_err(migration_error)?;
    Ok(migrations
        .iter()
        .map(|m| m.name().version().to_string())
        .collect())
}

/// Restores the verified `archive` (see the module docs).
pub fn import_school(
    db: &Db,
    archive: &VerifiedArchive,
    options: &ImportOptions,
) -> Result<ImportSummary, ArchiveError> {
    let manifest = &archive.manifest;
    let file = archive.path.display().to_string();
    let version = manifest.tenant_migration_version.clone();
    let known = known_versions()?;
    let latest = known.last().cloned().unwrap_or_default();
    if !known.contains(&version) {
        return Err(if version > latest {
            ArchiveError::NewerVersion {
                file,
                archive: version,
                binary: latest,
            }
        } else {
            ArchiveError::UnknownVersion {
                file,
                archive: version,
            }
        });
    }
    let schema_name = options
        .schema
        .as_deref()
        .unwrap_or(&manifest.tenant.schema_name);
    let schema = SchemaName::parse(schema_name)
        .map_err(|err| ArchiveError::Refused(format!("schema '{schema_name}': {err}")))?;
    let domains = target_domains(manifest, &options.domains)?;
    let tenant = Arc::new(Tenant {
        id: manifest.tenant.id,
        schema_name: schema,
        name: manifest.tenant.name.clone(),
        is_active: manifest.tenant.is_active,
    });
    // Binding names a schema that does not exist yet, as provisioning does: the setting
    // is made outside the transaction below.
    db.with_tenant_for(&tenant, |conn| {
        conn.transaction(|conn| {
            let restore = Restore {
                archive,
                domains: &domains,
                latest: &latest,
            };
            restore.run(conn)
        })
    })
}

/// The domains the school gets: `renamed` (normalised, the first primary) or the archive's.
fn target_domains(
    manifest: &Manifest,
    renamed: &[String],
) -> Result<Vec<(String, bool)>, ArchiveError> {
    if renamed.is_empty() {
        return Ok(manifest
            .domains
            .iter()
            .map(|d| (d.domain.clone(), d.is_primary))
            .collect());
    }
    let mut normalized: Vec<(String, bool)> = Vec::new();
    for raw in renamed {
        let domain = normalize_domain(raw)
            .ok_or_else(|| ArchiveError::Refused(format!("'{raw}' is not a valid host name")))?;
        if normalized.iter().any(|(d, _)| *d == domain) {
            return Err(ArchiveError::Refused(format!(
                "domain '{domain}' is given twice"
            )));
        }
        normalized.push((domain, normalized.is_empty()));
    }
    Ok(normalized)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    fn manifest_with(domains: &[(&str, bool)]) -> Manifest {
        let now = Utc::now();
        Manifest {
            format: super::super::format::FORMAT.into(),
            format_version: 1,
            created_at: now,
            binary_version: "0".into(),
            tenant_migration_version: "1".into(),
            tenant: super::super::format::ArchivedTenant {
                id: Uuid::new_v4(),
                schema_name: "s".into(),
                name: "S".into(),
                is_active: true,
                created_at: now,
                updated_at: now,
            },
            domains: domains
                .iter()
                .map(
                    |(domain, is_primary)| super::super::format::ArchivedDomain {
                        id: Uuid::new_v4(),
                        domain: (*domain).into(),
                        is_primary: *is_primary,
                        created_at: now,
                    },
                )
                .collect(),
            tables: Vec::new(),
        }
    }

    #[test]
    fn domains_are_the_archives_unless_given_and_the_first_given_is_primary() {
        let manifest = manifest_with(&[("www.s.test", false), ("s.test", true)]);
        assert_eq!(
            target_domains(&manifest, &[]).expect("archived"),
            vec![("www.s.test".into(), false), ("s.test".into(), true)]
        );
        assert_eq!(
            target_domains(&manifest, &["New.Test.".into(), "b.test".into()]).expect("given"),
            vec![("new.test".into(), true), ("b.test".into(), false)]
        );
        assert!(target_domains(&manifest, &["a.test".into(), "A.test".into()]).is_err());
        assert!(target_domains(&manifest, &["not a host".into()]).is_err());
    }

    #[test]
    fn this_binary_knows_its_tenant_migrations_in_order() {
        let versions = known_versions().expect("versions");
        assert!(versions.windows(2).all(|pair| pair[0] < pair[1]));
        assert!(versions.contains(&"20261121000001".to_owned()));
    }
}
