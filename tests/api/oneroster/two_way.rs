//! One gradebook, not two (issue 37 item 4): a result the LMS PUTs is the mark the
//! school's report card counts; an exempt result is a missing mark there, never 0.

use reqwest::Method;
use serde_json::{Value, json};

use super::{GRADEBOOK, oneroster_token, or_get, or_request, roster};
use crate::helpers::spawn_app;

#[tokio::test]
async fn a_result_put_by_the_lms_shows_in_the_report_cards_figures() {
    let app = spawn_app().await;
    let r = roster(&app, "alpha").await;
    let token = oneroster_token(&app, "alpha", None).await;
    // The fixture's exam is a line item (its sourcedId the exam id): three results on it.
    let put = |sid: &str, student: &str, status: &str, score: Value| {
        let body = json!({"result": {"lineItem": {"sourcedId": r.fixture.exam},
            "student": {"sourcedId": student}, "scoreStatus": status, "score": score}});
        let path = format!("{GRADEBOOK}results/{sid}");
        let (app, token) = (&app, &token);
        async move { or_request(app, Method::PUT, "alpha", token, &path, Some(body)).await }
    };
    for (sid, student, status, score) in [
        ("lms-r1", &r.students[0], "fully graded", json!(87.5)),
        ("lms-r2", &r.students[1], "exempt", Value::Null),
        ("lms-r3", &r.students[2], "fully graded", json!(42.25)),
    ] {
        let reply = put(sid, student, status, score).await;
        assert_eq!(reply.status, 201, "{}", reply.body);
    }
    let cards_path = format!(
        "{}report-cards/?academic_class={}",
        r.fixture.exams.trim_end_matches("exams/"),
        r.class
    );
    let card_of = |cards: &Value, student: &str| -> Value {
        cards
            .as_array()
            .expect("cards")
            .iter()
            .find(|c| c["student"]["id"] == student)
            .expect("the student's card")
            .clone()
    };
    let cards = app.get(&cards_path, &r.admin).await;
    cards.assert(200, None);
    // 87.5 rounds half away from zero to 88; 42.25 to 42.
    let ada = card_of(&cards.body, &r.students[0]);
    assert_eq!(ada["subjects"][0]["mark"], 88, "{ada}");
    assert_eq!(ada["subjects"][0]["exams"][0]["mark"], 88, "{ada}");
    assert_eq!(ada["total_mark"], 88);
    let cy = card_of(&cards.body, &r.students[2]);
    assert_eq!(cy["subjects"][0]["mark"], 42, "{cy}");
    // Exempt without a score: missing on the card, not 0, and the card is incomplete.
    let bob = card_of(&cards.body, &r.students[1]);
    assert_eq!(bob["subjects"][0]["mark"], Value::Null, "{bob}");
    assert_eq!(bob["complete"], false);
    assert_eq!(ada["subjects"][0]["class_average"], 65.0, "(88 + 42) / 2");
    assert_eq!(
        (ada["position"].clone(), cy["position"].clone()),
        (json!(1), json!(2))
    );

    // The LMS edits a result: the card follows at once.
    let reply = put("lms-r3", &r.students[2], "fully graded", json!(95)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let cards = app.get(&cards_path, &r.admin).await;
    let cy = card_of(&cards.body, &r.students[2]);
    assert_eq!(cy["subjects"][0]["mark"], 95, "{cy}");
    assert_eq!(cy["position"], 1);
    // A line item's results, as the class reads them: the three, by their sourcedIds; a
    // result named by the client answers only to its own sourcedId.
    let nested = or_get(
        &app,
        "alpha",
        &token,
        &format!(
            "{GRADEBOOK}classes/{}/lineItems/{}/results",
            r.class_sid(),
            r.fixture.exam
        ),
    )
    .await;
    let mut sids: Vec<&str> = nested.body["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|x| x["sourcedId"].as_str())
        .collect();
    sids.sort_unstable();
    assert_eq!(sids, ["lms-r1", "lms-r2", "lms-r3"], "{}", nested.body);
    let sheet = app.get(&r.fixture.marks(), &r.admin).await;
    let mark_id = sheet.body["results"][0]["id"]
        .as_str()
        .expect("mark id")
        .to_owned();
    let by_mark_id = or_get(
        &app,
        "alpha",
        &token,
        &format!("{GRADEBOOK}results/{mark_id}"),
    )
    .await;
    assert_eq!(by_mark_id.status, 404, "{}", by_mark_id.body);
    // And a deleted result leaves the card.
    let gone = or_request(
        &app,
        Method::DELETE,
        "alpha",
        &token,
        &format!("{GRADEBOOK}results/lms-r1"),
        None,
    )
    .await;
    assert_eq!(gone.status, 204);
    let cards = app.get(&cards_path, &r.admin).await;
    let ada = card_of(&cards.body, &r.students[0]);
    assert_eq!(ada["subjects"][0]["mark"], Value::Null, "{ada}");
}
