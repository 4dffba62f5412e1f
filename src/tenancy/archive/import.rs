//! `tenant import`: checks what an archive may be restored as (its tenant-migration
//! version against this binary's, the schema and domains it will get), then restores it in
//! one transaction (see `restore`).

use std::sync::Arc;

use diesel::migration::MigrationSource;

use super::{
    ArchiveError,
    format::Manifest,
    restore::{ImportSummary, Restore},
    verify::VerifiedArchive,
};
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
    /// The platform's main domains (`MAIN_DOMAINS`), which no school may have.
    pub main_domains: Vec<String>,
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
    let domains = target_domains(manifest, &options.domains, &options.main_domains)?;
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

/// The domains the school gets: `renamed` (the first primary) or the archive's, each
/// passing the API's rule for a school's domain: a valid host name (normalised), given
/// once, and not one of the platform's `main_domains`.
fn target_domains(
    manifest: &Manifest,
    renamed: &[String],
    main_domains: &[String],
) -> Result<Vec<(String, bool)>, ArchiveError> {
    let given: Vec<(&str, bool, &str)> = if renamed.is_empty() {
        manifest
            .domains
            .iter()
            .map(|d| (d.domain.as_str(), d.is_primary, "the archive's domain"))
            .collect()
    } else {
        renamed
            .iter()
            .enumerate()
            .map(|(index, d)| (d.as_str(), index == 0, "--domain"))
            .collect()
    };
    let mut normalized: Vec<(String, bool)> = Vec::new();
    for (raw, is_primary, source) in given {
        let domain = normalize_domain(raw).ok_or_else(|| {
            ArchiveError::Refused(format!("{source} '{raw}' is not a valid host name"))
        })?;
        if main_domains.contains(&domain) {
            return Err(ArchiveError::Refused(format!(
                "{source} '{domain}' is a main domain of the platform (MAIN_DOMAINS), which \
                 no school may have; give the school its own with --domain"
            )));
        }
        if normalized.iter().any(|(d, _)| *d == domain) {
            return Err(ArchiveError::Refused(format!(
                "domain '{domain}' is given twice"
            )));
        }
        normalized.push((domain, is_primary));
    }
    Ok(normalized)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;
    use uuid::Uuid;

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
        let main = ["localhost".to_owned()];
        assert_eq!(
            target_domains(&manifest, &[], &main).expect("archived"),
            vec![("www.s.test".into(), false), ("s.test".into(), true)]
        );
        assert_eq!(
            target_domains(&manifest, &["New.Test.".into(), "b.test".into()], &main)
                .expect("given"),
            vec![("new.test".into(), true), ("b.test".into(), false)]
        );
        assert!(target_domains(&manifest, &["a.test".into(), "A.test".into()], &main).is_err());
        assert!(target_domains(&manifest, &["not a host".into()], &main).is_err());
        assert!(target_domains(&manifest, &["LocalHost".into()], &main).is_err());
    }

    #[test]
    fn the_archives_own_domains_pass_the_apis_rule() {
        let main = ["localhost".to_owned()];
        let refused = |domains: &[(&str, bool)]| {
            target_domains(&manifest_with(domains), &[], &main)
                .expect_err("refused")
                .to_string()
        };
        let line = refused(&[("localhost", true)]);
        assert!(line.contains("'localhost' is a main domain"), "{line}");
        let line = refused(&[("no host xxxx", true)]);
        assert!(
            line.contains("'no host xxxx' is not a valid host name"),
            "{line}"
        );
        let line = refused(&[("s.test", true), ("S.Test.", false)]);
        assert!(line.contains("'s.test' is given twice"), "{line}");
        assert_eq!(
            target_domains(&manifest_with(&[("S.Test", true)]), &[], &main).expect("normalised"),
            vec![("s.test".into(), true)]
        );
    }

    #[test]
    fn this_binary_knows_its_tenant_migrations_in_order() {
        let versions = known_versions().expect("versions");
        assert!(versions.windows(2).all(|pair| pair[0] < pair[1]));
        assert!(versions.contains(&"20261121000001".to_owned()));
    }
}
