//! What an archive may bring is the school's own: rows of platform tables rewritten to
//! mint a superuser, a global key or a user of another school are refused naming the row,
//! even when the operator trusts the archive; archives are signed with the platform's key,
//! and unsigned or foreign-signed ones need `--trust-unsigned`; an archive's domains pass
//! the API's rule; an archive that inflates past `--max-bytes` is refused.

use std::{io::Read, path::Path};

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::{cli_ok, cli_refused, export, platform_counts, scratch};
use crate::helpers::{cli, spawn_app};

/// Copies the archive at `from` to a plain tar at `to`, each data file through
/// `edit_file(path, text)` and the manifest through `edit_manifest`, with the manifest's
/// records and SHA-256 written anew, as whoever rewrites an archive would; the MAC file is
/// kept as it was (and so no longer matches).
fn rewrite(
    from: &Path,
    to: &Path,
    mut edit_file: impl FnMut(&str, &Value, String) -> String,
    edit_manifest: impl FnOnce(&mut Value),
) {
    let open = || {
        let file = std::fs::File::open(from).expect("open");
        tar::Archive::new(flate2::read::GzDecoder::new(file))
    };
    let mut manifest: Value = Value::Null;
    let mut first = open();
    for entry in first.entries().expect("entries") {
        let mut entry = entry.expect("entry");
        if entry.path().expect("path").to_string_lossy() == "manifest.json" {
            let mut data = Vec::new();
            entry.read_to_end(&mut data).expect("read");
            manifest = serde_json::from_slice(&data).expect("json");
        }
    }
    let mut out = tar::Builder::new(std::fs::File::create(to).expect("create"));
    let mut second = open();
    let mut manifest_bytes = Vec::new();
    let mut edit_manifest = Some(edit_manifest);
    for entry in second.entries().expect("entries") {
        let mut entry = entry.expect("entry");
        let path = entry.path().expect("path").to_string_lossy().into_owned();
        let mut data = Vec::new();
        entry.read_to_end(&mut data).expect("read");
        if path.ends_with(".tsv") {
            let table = manifest["tables"]
                .as_array()
                .expect("tables")
                .iter()
                .find(|t| {
                    t["files"]
                        .as_array()
                        .expect("files")
                        .iter()
                        .any(|f| f["path"] == path)
                })
                .expect("its table")
                .clone();
            data = edit_file(&path, &table, String::from_utf8(data).expect("utf-8")).into_bytes();
            for t in manifest["tables"].as_array_mut().expect("tables") {
                for f in t["files"].as_array_mut().expect("files") {
                    if f["path"] == path {
                        f["bytes"] = data.len().into();
                        f["sha256"] = hex(&Sha256::digest(&data)).into();
                    }
                }
            }
        }
        if path == "manifest.json" {
            (edit_manifest.take().expect("one manifest"))(&mut manifest);
            data = serde_json::to_vec_pretty(&manifest).expect("json");
            manifest_bytes = data.clone();
        }
        if path == "manifest.json.sha256" {
            data =
                format!("{}  manifest.json\n", hex(&Sha256::digest(&manifest_bytes))).into_bytes();
        }
        let mut header = entry.header().clone();
        header.set_size(data.len() as u64);
        out.append_data(&mut header, &path, data.as_slice())
            .expect("append");
    }
    out.finish().expect("finish");
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `text` (a data file of `table`) with column `column` of the row whose `match_column`
/// is `value` set to `to`.
fn set_column(
    table: &Value,
    text: &str,
    (match_column, value): (&str, &str),
    changes: &[(&str, &str)],
) -> String {
    let columns: Vec<&str> = table["columns"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| c["name"].as_str().expect("name"))
        .collect();
    let at = |name: &str| columns.iter().position(|c| *c == name).expect(name);
    text.lines()
        .map(|line| {
            let mut cells: Vec<&str> = line.split('\t').collect();
            if cells[at(match_column)] == value {
                for (column, to) in changes {
                    cells[at(column)] = to;
                }
            }
            format!("{}\n", cells.join("\t"))
        })
        .collect()
}

/// An id of `schema`'s school.
fn school_id(db: &str, schema: &str) -> String {
    let list = cli_ok(db, "tenant list");
    list.lines()
        .find(|l| l.starts_with(&format!("{schema}\t")))
        .and_then(|l| l.split('\t').nth(1))
        .expect("listed")
        .to_owned()
}

#[tokio::test]
async fn platform_rows_that_are_not_the_schools_own_are_refused_naming_the_row() {
    let app = spawn_app().await;
    let db = app.db.url.clone();
    let root = app.as_root().await;
    let alpha = school_id(&db, "alpha");
    let beta = school_id(&db, "beta");
    app.post(
        "/api/v1/system/api-keys/",
        &root,
        serde_json::json!({"name": "reporting", "tenant": alpha, "read_only": true}),
    )
    .await
    .assert(201, None);
    let archive = export(&db, "alpha", "");
    cli_ok(&db, "tenant delete --schema alpha --drop-schema");
    let counts = platform_counts(&db);
    let admin = ("email", "admin@alpha.test");
    let cases = [
        (
            "superuser",
            "users",
            admin,
            vec![
                ("client_id", "\\N"),
                ("is_superuser", "t"),
                ("is_staff", "t"),
            ],
            "user ",
        ),
        (
            "superuser in school",
            "users",
            admin,
            vec![("is_superuser", "t")],
            "is a platform superuser",
        ),
        (
            "staff",
            "users",
            admin,
            vec![("is_staff", "t")],
            "is platform staff",
        ),
        (
            "other school",
            "users",
            admin,
            vec![("client_id", beta.as_str())],
            "belongs to another school",
        ),
        (
            "global key",
            "api_keys",
            ("name", "reporting"),
            vec![("tenant_id", "\\N")],
            "is not scoped to a school",
        ),
    ];
    for (name, table, matching, changes, reason) in cases {
        let rewritten = scratch(&format!("{}.tar", name.replace(' ', "-")));
        rewrite(
            &archive,
            &rewritten,
            |path, shape, text| {
                if path.starts_with(&format!("public/{table}/")) {
                    set_column(shape, &text, matching, &changes)
                } else {
                    text
                }
            },
            |_| {},
        );
        let import = format!("tenant import --file {}", rewritten.display());
        // The MAC no longer matches: refused as not signed by this platform.
        let line = cli_refused(&db, &import);
        assert!(
            line.contains("is not signed with this platform's"),
            "{name}: {line}"
        );
        // Trusted by the operator, the rows are still checked.
        let line = cli_refused(&db, &format!("{import} --trust-unsigned"));
        assert!(
            line.contains(reason) && line.contains("nothing was written"),
            "{name}: {line}"
        );
        if table == "users" {
            assert!(
                line.contains("admin@alpha.test"),
                "the row is named: {line}"
            );
        } else {
            assert!(line.contains("'reporting'"), "the row is named: {line}");
        }
        assert_eq!(platform_counts(&db), counts, "{name}");
        std::fs::remove_file(rewritten).ok();
    }
    // The archive as exported is the school's own, and signed.
    cli_ok(&db, &format!("tenant import --file {}", archive.display()));
}

#[tokio::test]
async fn unsigned_and_foreign_archives_need_the_operators_word() {
    let app = spawn_app().await;
    let db = app.db.url.clone();
    let unsigned = scratch("unsigned.tar.gz");
    let (ok, _, err) = cli(
        &db,
        &format!("tenant export --schema alpha --out {}", unsigned.display()),
        &[],
    );
    assert!(ok && err.contains("unsigned"), "{err}");
    let foreign = scratch("foreign.tar.gz");
    let other_key = [(
        "ARCHIVE_SIGNING_KEY",
        "another-platforms-archive-key-0123456789",
    )];
    let (ok, _, err) = cli(
        &db,
        &format!("tenant export --schema alpha --out {}", foreign.display()),
        &other_key,
    );
    assert!(ok, "{err}");
    let signed = export(&db, "alpha", "");
    cli_ok(&db, "tenant delete --schema alpha --drop-schema");
    let counts = platform_counts(&db);
    for (archive, reason) in [
        (
            &unsigned,
            "is not signed (it has no manifest.json.hmac-sha256)",
        ),
        (
            &foreign,
            "is not signed with this platform's ARCHIVE_SIGNING_KEY",
        ),
    ] {
        let line = cli_refused(&db, &format!("tenant import --file {}", archive.display()));
        assert!(
            line.contains(&archive.display().to_string())
                && line.contains(reason)
                && line.contains("--trust-unsigned"),
            "{line}"
        );
        assert_eq!(platform_counts(&db), counts);
    }
    // Without a key here, even a signed archive cannot be checked.
    let (ok, _, err) = cli(
        &db,
        &format!("tenant import --file {}", signed.display()),
        &[],
    );
    assert!(
        !ok && err.contains("ARCHIVE_SIGNING_KEY is not set here"),
        "{err}"
    );
    // A school moved between platforms that share no key: a key agreed for the move.
    let (ok, _, err) = cli(
        &db,
        &format!("tenant import --file {}", foreign.display()),
        &other_key,
    );
    assert!(ok, "{err}");
    cli_ok(&db, "tenant delete --schema alpha --drop-schema");
    let (ok, _, err) = cli(
        &db,
        &format!(
            "tenant import --file {} --trust-unsigned",
            unsigned.display()
        ),
        &[],
    );
    assert!(ok && err.contains("--trust-unsigned"), "{err}");
}

#[tokio::test]
async fn an_archives_own_domains_pass_the_apis_domain_rule() {
    let app = spawn_app().await;
    let db = app.db.url.clone();
    let archive = export(&db, "alpha", "");
    cli_ok(&db, "tenant delete --schema alpha --drop-schema");
    let counts = platform_counts(&db);
    for (domain, reason) in [
        ("localhost", "'localhost' is a main domain of the platform"),
        ("no host xxxx", "'no host xxxx' is not a valid host name"),
    ] {
        let rewritten = scratch("domain.tar");
        rewrite(
            &archive,
            &rewritten,
            |_, _, text| text,
            |manifest| {
                manifest["domains"][0]["domain"] = domain.into();
            },
        );
        let line = cli_refused(
            &db,
            &format!(
                "tenant import --file {} --trust-unsigned",
                rewritten.display()
            ),
        );
        assert!(line.contains(reason), "{line}");
        assert_eq!(platform_counts(&db), counts);
        std::fs::remove_file(rewritten).ok();
    }
    let line = cli_refused(
        &db,
        &format!(
            "tenant import --file {} --domain 127.0.0.1",
            archive.display()
        ),
    );
    assert!(line.contains("'127.0.0.1' is a main domain"), "{line}");
    // Upper case is the API's too: normalised.
    let rewritten = scratch("upper.tar");
    rewrite(
        &archive,
        &rewritten,
        |_, _, text| text,
        |manifest| {
            manifest["domains"][0]["domain"] = "Alpha.Localhost.".into();
        },
    );
    let out = cli_ok(
        &db,
        &format!(
            "tenant import --file {} --trust-unsigned",
            rewritten.display()
        ),
    );
    assert!(out.contains("(domains: alpha.localhost)"), "{out}");
}

#[tokio::test]
async fn an_archive_that_inflates_past_the_limit_is_refused() {
    let app = spawn_app().await;
    let db = app.db.url.clone();
    let archive = export(&db, "alpha", "");
    cli_ok(&db, "tenant delete --schema alpha --drop-schema");
    let counts = platform_counts(&db);
    let line = cli_refused(
        &db,
        &format!(
            "tenant import --file {} --max-bytes 2000",
            archive.display()
        ),
    );
    assert!(
        line.contains("holds more than 2000 bytes uncompressed (--max-bytes)"),
        "{line}"
    );
    assert_eq!(platform_counts(&db), counts);
    cli_ok(&db, &format!("tenant import --file {}", archive.display()));
}
