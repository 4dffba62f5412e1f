//! An export taken while the school is written is one moment of it: every exam in the
//! archive comes with all its marks, and no mark without its exam.

use std::{
    collections::HashMap,
    io::Read,
    path::Path,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
};

use diesel::{Connection, connection::SimpleConnection, pg::PgConnection};
use serde_json::Value;

use super::{cli_ok, export};
use crate::helpers::{TestDb, spawn_app};

/// Marks each writer transaction adds with its exam.
const MARKS_PER_EXAM: usize = 25;

#[tokio::test]
async fn an_export_taken_while_marks_are_written_is_one_moment() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let f = app.exam_fixture(&admin, "moment").await;
    let exam_session = f
        .exams
        .trim_end_matches("/exams/")
        .rsplit('/')
        .next()
        .expect("id")
        .to_owned();
    let subject = f.subject.as_str().expect("subject").to_owned();

    // Each transaction: a class, an exam of it, and its marks.
    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicU64::new(0));
    let writer = {
        let (url, stop, written) = (app.db.url.clone(), stop.clone(), written.clone());
        std::thread::spawn(move || {
            let mut conn = PgConnection::establish(&url).expect("connect");
            conn.batch_execute("SET search_path TO alpha")
                .expect("path");
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) || n < 3 {
                n += 1;
                let marks: Vec<String> = (0..MARKS_PER_EXAM)
                    .map(|m| format!("((SELECT id FROM e), 'S-{m}', {m})"))
                    .collect();
                conn.batch_execute(&format!(
                    "BEGIN; \
                     WITH c AS (INSERT INTO academic_classes (name) VALUES ('w-{n}') RETURNING id), \
                          e AS (INSERT INTO exams (exam_session_id, name, subject_id, academic_class_id) \
                                SELECT '{exam_session}', 'w-{n}', '{subject}', id FROM c RETURNING id) \
                     INSERT INTO marks (exam_id, studentadmissionnumber, mark) VALUES {}; \
                     COMMIT",
                    marks.join(", ")
                ))
                .expect("write");
                written.store(n, Ordering::Relaxed);
            }
        })
    };
    while written.load(Ordering::Relaxed) < 3 {
        assert!(!writer.is_finished(), "the writer stopped");
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let url = app.db.url.clone();
    let archives = tokio::task::spawn_blocking(move || {
        (0..4)
            .map(|_| export(&url, "alpha", ""))
            .collect::<Vec<_>>()
    })
    .await
    .expect("exports");
    stop.store(true, Ordering::Relaxed);
    writer.join().expect("writer");
    assert!(written.load(Ordering::Relaxed) >= 3);

    for archive in &archives {
        let exams = table(archive, "exams");
        let marks = table(archive, "marks");
        let mut per_exam: HashMap<String, usize> = HashMap::new();
        for mark in &marks {
            assert!(
                exams.iter().any(|exam| exam["id"] == mark["exam_id"]),
                "a mark without its exam"
            );
            *per_exam.entry(mark["exam_id"].clone()).or_default() += 1;
        }
        for exam in exams.iter().filter(|e| e["name"].starts_with("w-")) {
            assert_eq!(
                per_exam.get(&exam["id"]),
                Some(&MARKS_PER_EXAM),
                "exam {}",
                exam["name"]
            );
        }
    }

    // The last one restores (every reference checked) on another platform.
    let other = tokio::task::spawn_blocking(TestDb::empty)
        .await
        .expect("db");
    cli_ok(&other.url, "migrate");
    let last = archives.last().expect("archive");
    cli_ok(
        &other.url,
        &format!("tenant import --file {}", last.display()),
    );
    for archive in archives {
        std::fs::remove_file(archive).ok();
    }
}

/// The rows of school table `name` in the archive at `path`, by column name (raw text).
fn table(path: &Path, name: &str) -> Vec<HashMap<String, String>> {
    let file = std::fs::File::open(path).expect("open");
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let (mut data, mut manifest) = (String::new(), Value::Null);
    for entry in archive.entries().expect("entries") {
        let mut entry = entry.expect("entry");
        let entry_path = entry.path().expect("path").to_string_lossy().into_owned();
        if entry_path.starts_with(&format!("school/{name}/")) {
            entry.read_to_string(&mut data).expect("data");
        } else if entry_path == "manifest.json" {
            let mut text = String::new();
            entry.read_to_string(&mut text).expect("manifest");
            manifest = serde_json::from_str(&text).expect("json");
        }
    }
    let table = manifest["tables"]
        .as_array()
        .expect("tables")
        .iter()
        .find(|t| t["scope"] == "school" && t["name"] == name)
        .expect("table in the manifest");
    let columns: Vec<String> = table["columns"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| c["name"].as_str().expect("name").to_owned())
        .collect();
    data.lines()
        .map(|line| {
            columns
                .iter()
                .cloned()
                .zip(line.split('\t').map(str::to_owned))
                .collect()
        })
        .collect()
}
