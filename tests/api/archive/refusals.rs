//! Imports that must not happen, each refused with its reason and nothing written; and an
//! archive from an older tenant migration, restored there and migrated forward.

use std::{io::Read, path::Path};

use diesel::{Connection, RunQueryDsl, connection::SimpleConnection, pg::PgConnection};
use diesel_migrations::MigrationHarness as _;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{cli_ok, cli_refused, export, platform_counts, scratch};
use crate::helpers::spawn_app;

#[tokio::test]
async fn every_clash_is_listed_and_nothing_is_written() {
    let app = spawn_app().await;
    let db = app.db.url.clone();
    let archive = export(&db, "alpha", "");
    let import = format!("tenant import --file {}", archive.display());

    let counts = platform_counts(&db);
    let line = cli_refused(&db, &import);
    for clash in [
        "school id ",
        "schema alpha exists",
        "domain alpha.localhost is registered",
        "e-mail admin@alpha.test is taken",
        "e-mail teacher@alpha.test is taken",
        "user id ",
        "nothing was written",
    ] {
        assert!(line.contains(clash), "{clash} in: {line}");
    }
    assert_eq!(platform_counts(&db), counts);

    // The school is gone, but a new one took its name and address, and a user of beta
    // took one of its e-mail addresses.
    cli_ok(&db, "tenant delete --schema alpha --drop-schema");
    cli_ok(
        &db,
        "tenant create --schema alpha --name Usurper --domain alpha.localhost",
    );
    cli_ok(
        &db,
        "user create --tenant beta --email Teacher@Alpha.test --password password-123",
    );
    let counts = platform_counts(&db);
    let line = cli_refused(&db, &import);
    assert!(
        line.contains("schema alpha exists")
            && line.contains("domain alpha.localhost is registered")
            && line.contains("e-mail teacher@alpha.test is taken")
            && !line.contains("school id")
            && !line.contains("admin@alpha.test"),
        "{line}"
    );
    assert_eq!(platform_counts(&db), counts);
    let line = cli_refused(
        &db,
        &format!("{import} --schema alpha2 --domain alpha2.localhost"),
    );
    assert!(
        line.contains("e-mail teacher@alpha.test is taken") && !line.contains("schema"),
        "{line}"
    );
    assert_eq!(platform_counts(&db), counts);
}

#[tokio::test]
async fn damaged_archives_are_refused_naming_the_file_and_nothing_is_written() {
    let app = spawn_app().await;
    let db = app.db.url.clone();
    let archive = export(&db, "alpha", "");
    let plain = export(&db, "alpha", "--no-compress");
    cli_ok(&db, "tenant delete --schema alpha --drop-schema");
    let counts = platform_counts(&db);
    let bytes = std::fs::read(&archive).expect("read");

    let mut flipped = bytes.clone();
    flipped[bytes.len() / 2] ^= 0x10;
    let truncated = bytes[..bytes.len() * 2 / 3].to_vec();
    let mut plain_bytes = std::fs::read(&plain).expect("read");
    let at = find(&plain_bytes, b"norole@alpha.test").expect("a user's e-mail in the tar");
    plain_bytes[at] = b'N';
    for (name, damaged, reason) in [
        ("flipped.tar.gz", flipped, "damaged or altered"),
        ("truncated.tar.gz", truncated, "damaged or altered"),
        (
            "altered.tar",
            plain_bytes,
            "public/users/000001.tsv does not match its SHA-256",
        ),
    ] {
        let path = scratch(name);
        std::fs::write(&path, damaged).expect("write");
        let line = cli_refused(&db, &format!("tenant import --file {}", path.display()));
        assert!(
            line.contains(&path.display().to_string()) && line.contains(reason),
            "{name}: {line}"
        );
        assert_eq!(platform_counts(&db), counts, "{name}");
        std::fs::remove_file(path).ok();
    }
    let line = cli_refused(&db, "tenant import --file /nonexistent/archive.tar.gz");
    assert!(line.contains("/nonexistent/archive.tar.gz"), "{line}");
    // The intact archive still restores.
    cli_ok(&db, &format!("tenant import --file {}", archive.display()));
}

#[tokio::test]
async fn an_archive_from_a_newer_tenant_migration_is_refused_naming_both_versions() {
    let app = spawn_app().await;
    let db = app.db.url.clone();
    let archive = export(&db, "alpha", "");
    cli_ok(&db, "tenant delete --schema alpha --drop-schema");
    let newer = scratch("newer.tar");
    rewrite_manifest(&archive, &newer, |manifest| {
        manifest["tenant_migration_version"] = "29991231000001".into();
    });
    let counts = platform_counts(&db);
    // Rewritten, so no longer signed: the operator vouches for it, and the version is read.
    let line = cli_refused(
        &db,
        &format!("tenant import --file {} --trust-unsigned", newer.display()),
    );
    let latest = latest_version();
    assert!(
        line.contains("29991231000001") && line.contains(&latest) && line.contains("newer"),
        "{line}"
    );
    assert_eq!(platform_counts(&db), counts);
}

#[tokio::test]
async fn an_archive_from_an_older_tenant_migration_is_restored_there_then_migrated() {
    let app = spawn_app().await;
    let db = app.db.url.clone();
    // A school as provisioning made them at tenant migration 20261122000001, before a
    // deleted session was made inactive (2026-11-22-000002), holding such a session.
    let mut conn = PgConnection::establish(&db).expect("connect");
    conn.batch_execute("CREATE SCHEMA oldschool; SET search_path TO oldschool")
        .expect("schema");
    for _ in 0..2 {
        conn.run_next_migration(school_service::db::migrations::TENANT_MIGRATIONS)
            .expect("migration");
    }
    conn.batch_execute(
        "INSERT INTO academic_sessions (name, start_date, end_date, is_active, is_deleted) \
             VALUES ('2025', '2025-01-01', '2025-12-31', true, true); \
         INSERT INTO public.tenants (schema_name, name) VALUES ('oldschool', 'Old School'); \
         RESET search_path",
    )
    .expect("rows");
    let archive = export(&db, "oldschool", "");
    assert!(
        cli_ok(&db, "tenant list").contains("oldschool"),
        "the old school is registered"
    );
    cli_ok(&db, "tenant delete --schema oldschool --drop-schema");
    let out = cli_ok(&db, &format!("tenant import --file {}", archive.display()));
    assert!(
        out.contains("at tenant migration 20261122000001, migrated to"),
        "{out}"
    );
    let inactive: Vec<(bool, bool)> =
        diesel::sql_query("SELECT is_active, is_deleted FROM oldschool.academic_sessions")
            .load::<ActiveDeleted>(&mut conn)
            .expect("sessions")
            .into_iter()
            .map(|r| (r.is_active, r.is_deleted))
            .collect();
    assert_eq!(
        inactive,
        vec![(false, true)],
        "migrated forward after the restore"
    );
    let version: Vec<Version> = diesel::sql_query(
        "SELECT max(version)::text AS version FROM oldschool.__diesel_schema_migrations",
    )
    .load(&mut conn)
    .expect("version");
    assert_eq!(
        version[0].version,
        latest_version(),
        "migrated to this binary's latest"
    );
}

#[derive(diesel::QueryableByName)]
struct Version {
    #[diesel(sql_type = diesel::sql_types::Text)]
    version: String,
}

/// The latest tenant migration of this binary, as diesel numbers it.
fn latest_version() -> String {
    use diesel::migration::MigrationSource;
    MigrationSource::<diesel::pg::Pg>::migrations(
        &school_service::db::migrations::TENANT_MIGRATIONS,
    )
    .expect("migrations")
    .last()
    .expect("a migration")
    .name()
    .version()
    .to_string()
}

#[derive(diesel::QueryableByName)]
struct ActiveDeleted {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    is_active: bool,
    #[diesel(sql_type = diesel::sql_types::Bool)]
    is_deleted: bool,
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Copies the archive at `from` to a plain tar at `to` with its manifest edited by `edit`
/// (and its digest written anew): an archive as a newer binary might write it.
fn rewrite_manifest(from: &Path, to: &Path, edit: impl FnOnce(&mut Value)) {
    let file = std::fs::File::open(from).expect("open");
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut out = tar::Builder::new(std::fs::File::create(to).expect("create"));
    let mut edit = Some(edit);
    let mut manifest = Vec::new();
    for entry in archive.entries().expect("entries") {
        let mut entry = entry.expect("entry");
        let path = entry.path().expect("path").to_string_lossy().into_owned();
        let mut data = Vec::new();
        entry.read_to_end(&mut data).expect("read");
        if path == "manifest.json" {
            let mut value: Value = serde_json::from_slice(&data).expect("json");
            (edit.take().expect("one manifest"))(&mut value);
            data = serde_json::to_vec_pretty(&value).expect("json");
            manifest = data.clone();
        }
        if path == "manifest.json.sha256" {
            let digest: String = Sha256::digest(&manifest)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            data = format!("{digest}  manifest.json\n").into_bytes();
        }
        let mut header = entry.header().clone();
        header.set_size(data.len() as u64);
        out.append_data(&mut header, &path, data.as_slice())
            .expect("append");
    }
    out.finish().expect("finish");
}
