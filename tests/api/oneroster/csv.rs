//! The CSV binding's bulk zip, from the API and the CLI.

use std::io::Read;

use super::roster;
use crate::helpers::spawn_app;

fn files(bytes: &[u8]) -> std::collections::BTreeMap<String, String> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes.to_vec())).expect("a zip");
    (0..archive.len())
        .map(|i| {
            let mut file = archive.by_index(i).expect("entry");
            let mut text = String::new();
            file.read_to_string(&mut text).expect("utf-8");
            (file.name().to_owned(), text)
        })
        .collect()
}

#[tokio::test]
async fn the_export_is_a_bulk_zip_with_the_bindings_headers() {
    let app = spawn_app().await;
    let r = roster(&app, "alpha").await;
    let teacher = app.as_school_user("alpha", "teacher").await;
    app.get("/api/v1/school/oneroster/export/", &teacher)
        .await
        .assert(403, Some("permission_denied"));
    let res = app
        .client
        .get(format!("{}/api/v1/school/oneroster/export/", app.address))
        .header("Host", "alpha.localhost")
        .bearer_auth(r.admin.token.as_deref().expect("token"))
        .send()
        .await
        .expect("export");
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "application/octet-stream");
    let files = files(&res.bytes().await.expect("body"));
    let manifest = &files["manifest.csv"];
    assert!(manifest.starts_with("propertyName,value\r\n"));
    assert!(manifest.contains("oneroster.version,1.2") && manifest.contains("file.users,bulk"));
    for listed in manifest.lines().filter(|l| l.ends_with(",bulk")) {
        let name = listed.trim_start_matches("file.").trim_end_matches(",bulk");
        assert!(
            files.contains_key(&format!("{name}.csv")),
            "{name}.csv missing"
        );
    }
    let users = &files["users.csv"];
    assert!(users.starts_with(
        "sourcedId,status,dateLastModified,enabledUser,username,userIds,givenName,familyName,"
    ));
    assert_eq!(users.lines().count(), 1 + 4, "{users}");
    assert!(users.contains(&r.students[0]));
    let classes = &files["classes.csv"];
    assert!(classes.contains(&r.class_sid()));
    // Python's csv module reads every file with its header's width.
    let dir = std::env::temp_dir().join(format!("or_csv_{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("dir");
    for (name, text) in &files {
        std::fs::write(dir.join(name), text).expect("write");
    }
    let check = std::process::Command::new("python3")
        .arg("-c")
        .arg(
            "import csv,glob,sys\n\
             for f in glob.glob(sys.argv[1]+'/*.csv'):\n\
             \x20   rows=list(csv.reader(open(f,newline='',encoding='utf-8')))\n\
             \x20   assert all(len(r)==len(rows[0]) for r in rows), f\n\
             print('ok')",
        )
        .arg(&dir)
        .output();
    if let Ok(out) = check {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = dir.join("cli.zip");
    let (ok, _, err) = crate::helpers::cli(
        &app.db.url,
        &format!(
            "tenant oneroster-export --schema alpha --out {}",
            out.display()
        ),
        &[],
    );
    assert!(ok, "{err}");
    let from_cli = files_of_path(&out);
    assert_eq!(from_cli["users.csv"], files["users.csv"]);
    let _ = std::fs::remove_dir_all(&dir);
}

fn files_of_path(path: &std::path::Path) -> std::collections::BTreeMap<String, String> {
    files(&std::fs::read(path).expect("zip file"))
}

/// A school exported and imported (`tenant export`, drop, `tenant import`) answers the same
/// sourcedIds in every rostering collection and in its CSV zip: an LMS keeps its links.
#[tokio::test]
async fn a_school_moved_by_archive_keeps_its_sourced_ids() {
    let app = spawn_app().await;
    roster(&app, "alpha").await;
    const COLLECTIONS: [(&str, &str); 6] = [
        ("orgs", "orgs"),
        ("academicSessions", "academicSessions"),
        ("courses", "courses"),
        ("classes", "classes"),
        ("users", "users"),
        ("enrollments", "enrollments"),
    ];
    async fn sourced_ids(app: &crate::helpers::TestApp) -> Vec<(String, Vec<String>)> {
        let token = super::oneroster_token(app, "alpha", None).await;
        let mut all = Vec::new();
        for (path, key) in COLLECTIONS {
            let path = format!("/ims/oneroster/rostering/v1p2/{path}?limit=10000");
            let reply = super::or_get(app, "alpha", &token, &path).await;
            reply.assert(200, None);
            let mut ids: Vec<String> = reply.body[key]
                .as_array()
                .unwrap_or_else(|| panic!("{key} in {}", reply.body))
                .iter()
                .map(|e| e["sourcedId"].as_str().expect("sourcedId").to_owned())
                .collect();
            ids.sort();
            assert!(!ids.is_empty(), "{path} answered no record");
            all.push((path, ids));
        }
        all
    }
    let before = sourced_ids(&app).await;
    let db = app.db.url.clone();
    let archive = tokio::task::spawn_blocking(move || {
        let archive = crate::archive::export(&db, "alpha", "");
        crate::archive::cli_ok(&db, "tenant delete --schema alpha --drop-schema");
        crate::archive::cli_ok(&db, &format!("tenant import --file {}", archive.display()));
        archive
    })
    .await
    .expect("export, drop, import");
    let after_app = crate::helpers::spawn_app_on(app.db.clone()).await;
    assert_eq!(before, sourced_ids(&after_app).await);
    std::fs::remove_file(archive).ok();
}
