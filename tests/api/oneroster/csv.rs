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
