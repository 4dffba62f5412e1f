//! The gradebook: line items are exams, results are marks, one gradebook read and written
//! from both sides.

use reqwest::Method;
use serde_json::{Value, json};

use super::{GRADEBOOK, oneroster_token, or_get, or_request, roster};
use crate::helpers::{ConfirmMark, NewMark, NewRecord, NewSubject, spawn_app};

#[tokio::test]
async fn an_lms_writes_line_items_and_results_that_the_school_sees() {
    let app = spawn_app().await;
    let r = roster(&app, "alpha").await;
    let token = oneroster_token(&app, "alpha", None).await;
    // The LMS grades in a subject of its own for this class.
    let subject = NewSubject::new("Art", "ART")
        .post(&app, &r.admin)
        .await
        .body["id"]
        .as_str()
        .expect("subject")
        .to_owned();
    let class = format!("{}.{subject}", r.class);
    let put = |path: String, body: Value| {
        let (app, token) = (&app, &token);
        async move { or_request(app, Method::PUT, "alpha", token, &path, Some(body)).await }
    };
    let item = json!({"lineItem": {"title": "Portrait", "assignDate": "2026-03-01",
        "dueDate": "2026-03-10T12:00:00Z", "class": {"sourcedId": class},
        "category": {"sourcedId": "assignment"},
        "gradingPeriod": {"sourcedId": format!("{}.gp", r.term)}, "resultValueMax": 10}});
    let created = put(format!("{GRADEBOOK}lineItems/lms:portrait/1"), item.clone()).await;
    assert_eq!(
        created.status, 404,
        "a sourcedId with a slash is a path of its own"
    );
    let created = put(format!("{GRADEBOOK}lineItems/lms:portrait"), item.clone()).await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.body["lineItem"]["sourcedId"], "lms:portrait");
    assert_eq!(created.body["lineItem"]["resultValueMax"], 10);
    let mut edited = item.clone();
    edited["lineItem"]["title"] = json!("Self-portrait");
    let again = put(format!("{GRADEBOOK}lineItems/lms:portrait"), edited).await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.body["lineItem"]["title"], "Self-portrait");
    // The exam exists in the school's own API.
    let exams = app.get(&r.fixture.exams, &r.admin).await;
    let exam = exams.body["results"]
        .as_array()
        .expect("exams")
        .iter()
        .find(|e| e["name"] == "Self-portrait")
        .expect("the line item's exam")
        .clone();
    // A decimal result with extra credit, read back exactly.
    let result = |score: Value, status: &str| {
        json!({"result": {"lineItem": {"sourcedId": "lms:portrait"},
            "student": {"sourcedId": r.students[0]}, "scoreStatus": status, "score": score,
            "scoreDate": "2026-03-11", "comment": "Bold colours", "textScore": "A"}})
    };
    let path = format!("{GRADEBOOK}results/lms-result-1");
    let created = put(path.clone(), result(json!(12.75), "fully graded")).await;
    assert_eq!(created.status, 201, "{}", created.body);
    let read = or_get(&app, "alpha", &token, &path).await;
    assert_eq!(read.body["result"]["score"], json!(12.75));
    assert_eq!(read.body["result"]["scoreStatus"], "fully graded");
    assert_eq!(read.body["result"]["comment"], "Bold colours");
    assert_eq!(read.body["result"]["textScore"], "A");
    assert_eq!(read.body["result"]["scoreDate"], "2026-03-11");
    let marks = format!(
        "{}{}/marks/",
        r.fixture.exams,
        exam["id"].as_str().expect("id")
    );
    let sheet = app.get(&marks, &r.admin).await;
    assert_eq!(sheet.body["results"][0]["mark"], 13, "{}", sheet.body);
    assert_eq!(sheet.body["results"][0]["score"], json!(12.75));
    // Exempt reads back as sent and leaves the school's mark empty.
    let exempt = put(
        path.clone(),
        json!({"result": {"lineItem": {"sourcedId": "lms:portrait"},
        "student": {"sourcedId": r.students[0]}, "scoreStatus": "exempt"}}),
    )
    .await;
    assert_eq!(exempt.status, 200, "{}", exempt.body);
    assert_eq!(exempt.body["result"]["scoreStatus"], "exempt");
    let sheet = app.get(&marks, &r.admin).await;
    assert_eq!(sheet.body["results"][0]["mark"], Value::Null);
    // Nested reads.
    for nested in [
        format!("classes/{class}/lineItems"),
        format!("classes/{class}/results"),
        format!("classes/{class}/lineItems/lms:portrait/results"),
        format!("classes/{class}/students/{}/results", r.students[0]),
    ] {
        let reply = or_get(&app, "alpha", &token, &format!("{GRADEBOOK}{nested}")).await;
        assert_eq!(reply.status, 200, "{nested}: {}", reply.body);
        let key = if nested.ends_with("lineItems") {
            "lineItems"
        } else {
            "results"
        };
        assert_eq!(
            reply.body[key].as_array().map(Vec::len),
            Some(1),
            "{nested}: {}",
            reply.body
        );
    }
    // Delete: gone from lists at once, seen by a delta sync as tobedeleted.
    let delete = or_request(&app, Method::DELETE, "alpha", &token, &path, None).await;
    assert_eq!(delete.status, 204);
    let list = or_get(&app, "alpha", &token, &format!("{GRADEBOOK}results")).await;
    assert!(
        !list.body.to_string().contains("lms-result-1"),
        "{}",
        list.body
    );
    let delta = or_get(
        &app,
        "alpha",
        &token,
        &format!("{GRADEBOOK}results?filter=status='tobedeleted'"),
    )
    .await;
    assert!(
        delta.body.to_string().contains("lms-result-1"),
        "{}",
        delta.body
    );
    assert_eq!(or_get(&app, "alpha", &token, &path).await.status, 404);
    let again = or_request(&app, Method::DELETE, "alpha", &token, &path, None).await;
    assert_eq!(again.status, 404);
    let gone = or_request(
        &app,
        Method::DELETE,
        "alpha",
        &token,
        &format!("{GRADEBOOK}lineItems/lms:portrait"),
        None,
    )
    .await;
    assert_eq!(gone.status, 204);
    let items = or_get(&app, "alpha", &token, &format!("{GRADEBOOK}lineItems")).await;
    assert!(!items.body.to_string().contains("lms:portrait"));
}

#[tokio::test]
async fn a_mark_typed_in_the_app_reads_as_a_result() {
    let app = spawn_app().await;
    let r = roster(&app, "alpha").await;
    let token = oneroster_token(&app, "alpha", Some(&["gradebook.readonly"])).await;
    ConfirmMark(NewMark {
        marks: &r.fixture.marks(),
        studentadmissionnumber: "A2",
        mark: Some(42),
        ..Default::default()
    })
    .create(&app, &r.admin)
    .await;
    let results = or_get(&app, "alpha", &token, &format!("{GRADEBOOK}results")).await;
    let result = &results.body["results"][0];
    assert_eq!(result["score"], 42, "{}", results.body);
    assert_eq!(result["scoreStatus"], "fully graded");
    assert_eq!(result["student"]["sourcedId"], r.students[1].as_str());
    assert_eq!(result["lineItem"]["sourcedId"], r.fixture.exam.as_str());
    let items = or_get(
        &app,
        "alpha",
        &token,
        &format!("{GRADEBOOK}lineItems/{}", r.fixture.exam),
    )
    .await;
    assert_eq!(items.body["lineItem"]["class"]["sourcedId"], r.class_sid());
    // A read-only token writes nothing.
    let put = or_request(
        &app,
        Method::PUT,
        "alpha",
        &token,
        &format!("{GRADEBOOK}results/x"),
        Some(json!({"result": {"lineItem": {"sourcedId": r.fixture.exam}, "student": {"sourcedId": r.students[0]}, "scoreStatus": "fully graded", "score": 1}})),
    )
    .await;
    assert_eq!(put.status, 403);
    let after = or_get(&app, "alpha", &token, &format!("{GRADEBOOK}results")).await;
    assert_eq!(after.body["results"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn categories_and_score_scales() {
    let app = spawn_app().await;
    let r = roster(&app, "alpha").await;
    let token = oneroster_token(&app, "alpha", None).await;
    let defaults = or_get(&app, "alpha", &token, &format!("{GRADEBOOK}categories")).await;
    assert_eq!(
        defaults.body["categories"].as_array().map(Vec::len),
        Some(3)
    );
    let path = format!("{GRADEBOOK}categories/quiz");
    let body = json!({"category": {"title": "Quizzes", "weight": 0.25}});
    let created = or_request(
        &app,
        Method::PUT,
        "alpha",
        &token,
        &path,
        Some(body.clone()),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.body["category"]["weight"], json!(0.25));
    let replaced = or_request(&app, Method::PUT, "alpha", &token, &path, Some(body)).await;
    assert_eq!(replaced.status, 200);
    let class = or_get(
        &app,
        "alpha",
        &token,
        &format!("{GRADEBOOK}classes/{}/categories", r.class_sid()),
    )
    .await;
    assert_eq!(class.body["categories"].as_array().map(Vec::len), Some(4));
    let bad = or_request(
        &app,
        Method::PUT,
        "alpha",
        &token,
        &path,
        Some(json!({"category": {"weight": 1}})),
    )
    .await;
    assert_eq!(bad.status, 400);
    assert_eq!(
        or_request(&app, Method::DELETE, "alpha", &token, &path, None)
            .await
            .status,
        204
    );
    assert_eq!(or_get(&app, "alpha", &token, &path).await.status, 404);
    let scales = or_get(&app, "alpha", &token, &format!("{GRADEBOOK}scoreScales")).await;
    assert_eq!(scales.status, 200, "{}", scales.body);
}
