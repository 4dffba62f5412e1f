//! A printed report card a parent would accept (issue 39): the school year and exam
//! session in the title, marks as entered (90, not 90.00), teacher comments wrapped over
//! lines and never cut, the class teacher's remark (`report-remarks/`), the principal's
//! name on the signature line and an issue date; checked as text and as a picture
//! (`pdftoppm`: nothing is drawn between the right margin and the page's edge).

use std::{path::Path, process::Command};

use serde_json::{Value, json};

use crate::{
    helpers::spawn_app,
    report_cards::{
        cards::class_with_marks,
        pdf::{pdf, pdf_text, poppler, with_pdf_file},
    },
};

/// A comment longer than its column: it must wrap, whole, inside the margins.
const LONG_COMMENT: &str = "Very good work this term; a little more practice with fractions \
    and long division will make it excellent. Keep reading every evening, endpoint-word.";
const REMARK: &str = "Zoë is a kind classmate who helps others, asks good questions and has \
    grown in confidence this term; she should keep practising her times tables at home.";

/// The text of `bytes` in the order it is drawn (`pdftotext -raw`), so the lines of a
/// wrapped cell follow one another.
fn drawn_text(bytes: &[u8]) -> String {
    pdf_text(bytes, "-raw")
}

/// Page 1 at 72 dpi in grey (one pixel a point): (width, height, pixels by row).
fn page_one_pixels(bytes: &[u8]) -> (usize, usize, Vec<u8>) {
    let image = with_pdf_file(bytes, |file, dir| {
        poppler(
            Command::new("pdftoppm")
                .args(["-r", "72", "-gray", "-f", "1", "-l", "1", "-singlefile"])
                .arg(file)
                .arg(dir.join("page")),
        );
        std::fs::read(dir.join("page.pgm")).expect("page.pgm")
    });
    if let Ok(keep) = std::env::var("REPORT_CARD_PICTURE") {
        std::fs::write(Path::new(&keep), &image).expect("keep");
    }
    // P5 <width> <height> <maxval> then one byte a pixel.
    let mut fields = Vec::new();
    let mut at = 0;
    while fields.len() < 4 {
        while image[at].is_ascii_whitespace() {
            at += 1;
        }
        let start = at;
        while !image[at].is_ascii_whitespace() {
            at += 1;
        }
        fields.push(String::from_utf8_lossy(&image[start..at]).into_owned());
    }
    assert_eq!(fields[0], "P5");
    let (width, height) = (fields[1].parse().expect("w"), fields[2].parse().expect("h"));
    let pixels = image[at + 1..].to_vec();
    assert_eq!(pixels.len(), width * height);
    (width, height, pixels)
}

#[tokio::test]
async fn the_printed_card_is_one_a_parent_would_accept() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let (cards, _class, students) = class_with_marks(&app, &admin).await;
    // "Well done" (50-100) becomes a comment longer than its column.
    let comments = app
        .get("/api/v1/school/teacher-grade-comments/?search=Well", &admin)
        .await;
    let comment = comments.body["results"]
        .as_array()
        .and_then(|list| list.iter().find(|c| c["comment"] == "Well done"))
        .and_then(|c| c["id"].as_str())
        .expect("the Well done comment")
        .to_owned();
    app.patch(
        &format!("/api/v1/school/teacher-grade-comments/{comment}/"),
        &admin,
        json!({"comment": LONG_COMMENT}),
    )
    .await
    .assert(200, None);
    // The class teacher's remark: one per student and exam session.
    let remarks = cards.replace("/report-cards/", "/report-remarks/");
    let made = app
        .post(
            &remarks,
            &admin,
            json!({"student": students[0], "remark": "Draft"}),
        )
        .await;
    made.assert(201, None);
    app.post(
        &remarks,
        &admin,
        json!({"student": students[0], "remark": "Again"}),
    )
    .await
    .assert(409, Some("conflict"));
    let remark_id = made.body["id"].as_str().expect("id").to_owned();
    app.patch(
        &format!("{remarks}{remark_id}/"),
        &admin,
        json!({"remark": REMARK}),
    )
    .await
    .assert(200, None);
    app.post(
        &remarks,
        &admin,
        json!({"student": students[1], "remark": ""}),
    )
    .await
    .assert(400, None);

    let card = app.get(&format!("{cards}{}/", students[0]), &admin).await;
    card.assert(200, None);
    assert_eq!(card.body["academic_session"]["name"], "2026");
    assert_eq!(card.body["class_teacher_remark"], REMARK);
    assert_eq!(card.body["subjects"][1]["teacher_comment"], LONG_COMMENT);
    let other = app.get(&format!("{cards}{}/", students[1]), &admin).await;
    assert_eq!(other.body["class_teacher_remark"], Value::Null);

    let bytes = pdf(&app, &format!("{cards}{}/", students[0]), &admin).await;
    let text = drawn_text(&bytes);
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for expected in [
        "Report card · 2026",
        "Term 1 · T1",
        "Principal: Dr Ğül Şahin",
        "Class teacher",
        "Class teacher's remark",
        REMARK,
        LONG_COMMENT,
    ] {
        let expected = expected.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains(&expected), "{expected:?} in {flat}");
    }
    assert!(!flat.contains('…'), "nothing is cut: {flat}");
    assert!(!flat.contains(".00"), "marks as entered: {flat}");
    assert!(
        flat.contains("90 100 90 A Pass"),
        "Maths 90 of 100, 90%: {flat}"
    );
    let issued = chrono::Utc::now()
        .date_naive()
        .format("Issued %-d %B %Y")
        .to_string();
    assert!(flat.contains(&issued), "{issued} in {flat}");

    // René has no art mark: "missing" is printed whole, like everything else on a card.
    let rene = drawn_text(&pdf(&app, &format!("{cards}{}/", students[3]), &admin).await);
    assert!(rene.contains("missing") && !rene.contains('…'), "{rene}");

    // As a picture: ink near the right margin (the wrapped comment reaches it), none past it.
    let (width, height, pixels) = page_one_pixels(&bytes);
    assert!(
        (595..=596).contains(&width) && height == 842,
        "{width}x{height}"
    );
    let ink = |x0: usize, x1: usize| {
        (0..height)
            .flat_map(|y| (x0..x1).map(move |x| (x, y)))
            .filter(|(x, y)| pixels[y * width + x] < 160)
            .count()
    };
    let right_margin = 595 - 50;
    assert!(
        ink(right_margin - 60, right_margin) > 50,
        "text reaches toward the margin"
    );
    assert_eq!(
        ink(right_margin + 3, width),
        0,
        "nothing runs past the right margin"
    );
    // The comment column holds several lines of ink rows: the comment wrapped, not cut.
    let column_rows = (0..height)
        .filter(|y| (420..right_margin).any(|x| pixels[y * width + x] < 160))
        .count();
    assert!(
        column_rows > 40,
        "{column_rows} rows of ink in the comment column"
    );
}
