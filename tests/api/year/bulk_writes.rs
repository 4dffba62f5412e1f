//! The store's writes of many (issue 38): an import writes its rows a thousand at a time
//! and a rollover each kind of change at once, and a re-read shows what single writes
//! make: a student's events and history are the same (but for ids, times and the
//! admission number) whether the student came by a POST or by a file.

use serde_json::{Map, Value, json};

use crate::{
    helpers::{
        As, NewClass, NewRecord, NewSession, NewStudent, Rollover, SESSIONS, STUDENTS, TestApp,
        spawn_app,
    },
    imports::spreadsheets::{counts, csv},
};

const EVENTS: &str = "/api/v1/school/events/";
const HISTORY: &str = "/api/v1/school/history/";

fn text(body: &Value, pointer: &str) -> String {
    body.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no {pointer} in {body}"))
        .to_owned()
}

/// Every event of the school's feed, in order.
async fn feed(app: &TestApp, who: &As) -> Vec<Value> {
    let mut events = Vec::new();
    let mut path = format!("{EVENTS}?limit=500");
    loop {
        let reply = app.get(&path, who).await;
        reply.assert(200, None);
        let page = reply.body["results"].as_array().expect("results").clone();
        if page.is_empty() {
            return events;
        }
        events.extend(page);
        path = format!("{EVENTS}?limit=500&after={}", text(&reply.body, "/next"));
    }
}

/// `value` with the fields every write sets its own way left out (ids of the records,
/// times, who made them), the student's id as `S` and their admission number as `N`.
fn plain(value: &Value, student: &str, number: &str) -> Value {
    const LEFT_OUT: [&str; 8] = [
        "id",
        "at",
        "record",
        "timestamp",
        "created_at",
        "updated_at",
        "created_by",
        "updated_by",
    ];
    match value {
        Value::String(s) if s == student => json!("S"),
        Value::String(s) if s == number => json!("N"),
        Value::Array(items) => items.iter().map(|v| plain(v, student, number)).collect(),
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .filter(|(k, _)| !LEFT_OUT.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), plain(v, student, number)))
                .collect::<Map<_, _>>(),
        ),
        other => other.clone(),
    }
}

/// What a re-read shows of one student: the events of their records (the student, their
/// enrollments) in feed order, and their history oldest first.
async fn trail(app: &TestApp, who: &As, events: &[Value], number: &str) -> (Value, Value) {
    let found = app.get(&format!("{STUDENTS}?search={number}"), who).await;
    let student = text(&found.body, "/results/0/id");
    let theirs: Vec<Value> = (events.iter())
        .filter(|e| e["data"]["id"] == student.as_str() || e["data"]["student"] == student.as_str())
        .map(|e| plain(e, &student, number))
        .collect();
    let history = app
        .get(&format!("{HISTORY}?student={student}&page_size=100"), who)
        .await;
    history.assert(200, None);
    let mut entries: Vec<Value> = (history.body["results"].as_array().expect("results").iter())
        .map(|e| plain(e, &student, number))
        .collect();
    entries.reverse();
    (Value::Array(theirs), Value::Array(entries))
}

struct School {
    one: String,
    two: String,
}

async fn school(app: &TestApp, admin: &As) -> School {
    NewSession::new("2025/26", "2025-09-01", "2026-07-31")
        .create(app, admin)
        .await;
    let class = |name, level| NewClass {
        name,
        level: Some(level),
    };
    let one = class("One", 1).create(app, admin).await.id;
    let two = class("Two", 2).create(app, admin).await.id;
    School { one, two }
}

#[tokio::test]
async fn an_imported_students_events_and_history_are_those_of_single_writes() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let School { one, two } = school(&app, &admin).await;

    // One by one: a student in class One, moved to Two; a student with no class.
    let first = NewStudent::new("S-1", "Zoë", "Núñez")
        .in_class(&one)
        .create(&app, &admin)
        .await
        .id;
    NewStudent::new("S-2", "Bo", "Ray")
        .create(&app, &admin)
        .await;
    app.patch(
        &format!("{STUDENTS}{first}/"),
        &admin,
        json!({"academic_class": two}),
    )
    .await
    .assert(200, None);

    // By file: the same students, then the first one's class changed by a second file.
    let file = "admission_number,first_name,last_name,academic_class\n\
                B-1,Zoë,Núñez,One\nB-2,Bo,Ray,\n";
    let done = csv(&app, &admin, "students", false, file).await;
    done.assert(200, None);
    assert_eq!(counts(&done), (2, 2, 0, 0));
    let moved = csv(
        &app,
        &admin,
        "students",
        false,
        &file.replace(",One", ",Two"),
    )
    .await;
    assert_eq!(counts(&moved), (2, 0, 1, 1));

    let events = feed(&app, &admin).await;
    for (single, bulk) in [("S-1", "B-1"), ("S-2", "B-2")] {
        let (single_events, single_history) = trail(&app, &admin, &events, single).await;
        let (bulk_events, bulk_history) = trail(&app, &admin, &events, bulk).await;
        assert_eq!(bulk_events, single_events, "the events of {bulk}");
        assert_eq!(bulk_history, single_history, "the history of {bulk}");
    }
    let (moved_events, _) = trail(&app, &admin, &events, "B-1").await;
    let types: Vec<&str> = (moved_events.as_array().expect("events").iter())
        .map(|e| e["type"].as_str().expect("type"))
        .collect();
    assert_eq!(
        types,
        [
            "enrollment.created",
            "student.created",
            "enrollment.updated",
            "student.updated"
        ]
    );
}

#[tokio::test]
async fn a_file_of_more_rows_than_one_statement_takes_is_written_whole() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    school(&app, &admin).await;
    let mut file = String::from("admission_number,first_name,last_name,academic_class\n");
    for n in 0..1_100 {
        let class = ["One", "Two", ""][n % 3];
        file.push_str(&format!("A-{n:04},Zoë,Row {n},{class}\n"));
    }
    let done = csv(&app, &admin, "students", false, &file).await;
    done.assert(200, None);
    assert_eq!(counts(&done), (1100, 1100, 0, 0));
    let students = app.get(&format!("{STUDENTS}?page_size=1"), &admin).await;
    assert_eq!(students.body["count"], 1100);
    let events = feed(&app, &admin).await;
    let of = |kind: &str| events.iter().filter(|e| e["type"] == kind).count();
    // Two classes of three rows have a class, so an enrollment.
    assert_eq!(
        (of("student.created"), of("enrollment.created")),
        (1100, 734)
    );
    // The last row's student, written in the second statement, has both.
    let (last, history) = trail(&app, &admin, &events, "A-1099").await;
    assert_eq!(last.as_array().map(Vec::len), Some(2), "{last}");
    assert_eq!(history.as_array().map(Vec::len), Some(2), "{history}");
    let again = csv(&app, &admin, "students", false, &file).await;
    assert_eq!(counts(&again), (1100, 0, 0, 1100));
}

#[tokio::test]
async fn a_rollover_writes_each_students_events_and_history() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    school(&app, &admin).await;
    let file = "admission_number,first_name,last_name,academic_class\n\
                P-1,Zoë,Up,One\nG-1,Ann,Out,Two\nL-1,Bo,Gone,One\n";
    csv(&app, &admin, "students", false, file)
        .await
        .assert(200, None);
    let sessions = app.get(SESSIONS, &admin).await;
    let session = text(&sessions.body, "/results/0/id");
    let leaver = app.get(&format!("{STUDENTS}?search=L-1"), &admin).await;
    let rolled = Rollover {
        session: &session,
        name: "2026/27",
        start_date: "2026-09-01",
        end_date: "2027-07-31",
        leave: Some(vec![text(&leaver.body, "/results/0/id")]),
        dry_run: Some(false),
        ..Default::default()
    }
    .post(&app, &admin)
    .await;
    rolled.assert(200, None);

    let events = feed(&app, &admin).await;
    let after_import = |trail: &Value| -> Vec<(String, Value)> {
        (trail.as_array().expect("events").iter().skip(2))
            .map(|e| {
                let status = e["data"]["status"].clone();
                (e["type"].as_str().expect("type").to_owned(), status)
            })
            .collect()
    };
    let expected = [
        // Promoted: last year's enrollment completed, their class set by this year's
        // enrollment (its hook writes before its own event).
        (
            "P-1",
            vec![
                ("enrollment.updated", json!("completed")),
                ("student.updated", Value::Null),
                ("enrollment.created", json!("active")),
            ],
        ),
        // Graduated and left: last year's enrollment closed, no class.
        (
            "G-1",
            vec![
                ("enrollment.updated", json!("completed")),
                ("student.updated", Value::Null),
            ],
        ),
        (
            "L-1",
            vec![
                ("enrollment.updated", json!("withdrawn")),
                ("student.updated", Value::Null),
            ],
        ),
    ];
    for (number, kinds) in expected {
        let (theirs, history) = trail(&app, &admin, &events, number).await;
        let kinds: Vec<(String, Value)> =
            kinds.into_iter().map(|(k, s)| (k.to_owned(), s)).collect();
        assert_eq!(after_import(&theirs), kinds, "{number}: {theirs}");
        let entries = history.as_array().expect("history");
        assert_eq!(entries.len(), 2 + kinds.len(), "{number}: {history}");
    }
}
