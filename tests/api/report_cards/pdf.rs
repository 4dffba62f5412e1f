//! Report cards as PDF: fetched whole, and read back with poppler's tools.

use std::{path::Path, process::Command};

use crate::helpers::{As, TestApp};

/// The body of a GET with `Accept: application/pdf`, checked to be a PDF.
pub async fn pdf(app: &TestApp, path: &str, who: &As) -> Vec<u8> {
    let res = app
        .client
        .get(format!("{}{path}", app.address))
        .header("Host", &who.host)
        .bearer_auth(who.token.as_deref().expect("token"))
        .header("Accept", "application/pdf")
        .send()
        .await
        .expect("request");
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "application/pdf");
    let bytes = res.bytes().await.expect("body").to_vec();
    assert!(bytes.starts_with(b"%PDF-"));
    bytes
}

/// `read(file, folder)` with `bytes` written to `file`, alone in a folder removed after.
pub fn with_pdf_file<T>(bytes: &[u8], read: impl FnOnce(&Path, &Path) -> T) -> T {
    let dir = std::env::temp_dir().join(format!("card-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("card.pdf");
    std::fs::write(&file, bytes).expect("write");
    let answer = read(&file, &dir);
    let _ = std::fs::remove_dir_all(dir);
    answer
}

/// Runs a poppler tool (Debian's poppler-utils), asserting it succeeds; answers its stdout.
pub fn poppler(command: &mut Command) -> Vec<u8> {
    let out = command
        .output()
        .expect("poppler-utils (pdftotext, pdftoppm) is installed");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The text `pdftotext` reads from `bytes` in `mode` (`-layout`: as laid out, pages
/// separated by form feeds; `-raw`: in the order it is drawn).
pub fn pdf_text(bytes: &[u8], mode: &str) -> String {
    let out = with_pdf_file(bytes, |file, _| {
        poppler(
            Command::new("pdftotext")
                .args([mode, "-enc", "UTF-8"])
                .arg(file)
                .arg("-"),
        )
    });
    String::from_utf8(out).expect("utf-8")
}
