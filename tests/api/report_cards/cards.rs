//! Report cards checked against a small class computed by hand (a tie in position, a
//! missing mark, a grade-scale boundary, a teacher comment range, pass at exactly
//! `pass_mark`), who may read them, and the PDF read back with `pdftotext`.

use serde_json::{Value, json};

use crate::{
    helpers::{
        As, AttendanceLine, NewClass, NewExam, NewExamSession, NewGradeComment, NewMark, NewRecord,
        NewStudent, NewSubject, NewUser, TakeAttendance, TestApp, spawn_app, text,
    },
    report_cards::pdf::{pdf, pdf_text},
};

/// A class of four in an exam session, with maths (out of 100) and art (out of 50):
/// Zoë Ağaoğlu 90 + 40, Łukasz Nowak 50 + 25, Jürgen Straße 80 + 10, René Dupré 50 and no
/// art mark. Answers (cards path, class id, student ids in that order).
pub(crate) async fn class_with_marks(app: &TestApp, admin: &As) -> (String, String, Vec<String>) {
    let post = |path: &'static str, body: Value| async move {
        let reply = app.post(path, admin, body).await;
        reply.assert(201, None);
        reply
    };
    post(
        "/api/v1/school/academic-settings/",
        json!({"pass_mark": 50, "max_mark": 100, "grading_scale": [
            {"symbol": "A", "min": 70, "max": 100}, {"symbol": "B", "min": 50, "max": 69},
            {"symbol": "F", "min": 0, "max": 49}]}),
    )
    .await;
    for (grade, min_mark, max_mark, comment) in
        [("F", 0, 49, "Work harder"), ("P", 50, 100, "Well done")]
    {
        NewGradeComment::new(grade, min_mark..=max_mark, comment)
            .create(app, admin)
            .await;
    }
    post(
        "/api/v1/school/general-settings/",
        json!({"school_name": "Łódź Grammar School", "address": "1 Rue Café, Gdańsk",
               "phone": "+48 58 000 00 00", "email": "office@lodz.example"}),
    )
    .await;
    app.patch(
        "/api/v1/school/report-settings/",
        admin,
        json!({"footer_text": "Keep learning — Straße 1", "principal_signature": "Dr Ğül Şahin"}),
    )
    .await
    .assert(200, None);
    let session = app.session_2026(admin).await;
    let exam_session = NewExamSession {
        session: &session.id,
        name: "Term 1",
        term: "T1",
        start_date: Some("2026-01-01"),
        end_date: Some("2026-03-31"),
    }
    .create(app, admin)
    .await;
    let class = NewClass::named("Form 1").create(app, admin).await.id;
    let exams = exam_session.exams();
    let mut exam_ids = Vec::new();
    for (name, code, max) in [("Maths", "MAT", 100), ("Art", "ART", 50)] {
        let subject = NewSubject::new(name, code).create(app, admin).await;
        let exam = NewExam {
            exams: &exams,
            name: &format!("{name} paper"),
            subject: &subject.id,
            academic_class: &class,
            max_mark: Some(max),
        }
        .create(app, admin)
        .await;
        exam_ids.push(exam.id);
    }
    let mut students = Vec::new();
    for (n, (first_name, last_name, maths, art)) in [
        ("Zoë", "Ağaoğlu", 90, Some(40)),
        ("Łukasz", "Nowak", 50, Some(25)),
        ("Jürgen", "Straße", 80, Some(10)),
        ("René", "Dupré", 50, None),
    ]
    .into_iter()
    .enumerate()
    {
        let number = format!("S{n}");
        let student = NewStudent::new(&number, first_name, last_name)
            .in_class(&class)
            .create(app, admin)
            .await;
        students.push(student.id);
        for (exam, mark) in exam_ids.iter().zip([Some(maths), art]) {
            if let Some(mark) = mark {
                NewMark {
                    marks: &format!("{exams}{exam}/marks/"),
                    studentadmissionnumber: &number,
                    mark: Some(mark),
                    ..Default::default()
                }
                .create(app, admin)
                .await;
            }
        }
    }
    TakeAttendance {
        class: &class,
        date: "2026-02-02",
        records: vec![
            AttendanceLine::new(&students[0], "present"),
            AttendanceLine::new(&students[1], "late"),
            AttendanceLine::new(&students[2], "absent"),
            AttendanceLine::new(&students[3], "present"),
        ],
    }
    .post(app, admin)
    .await
    .assert(200, None);
    (exam_session.report_cards(), class, students)
}

#[tokio::test]
async fn cards_match_the_hand_computed_class() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let (path, class, students) = class_with_marks(&app, &admin).await;
    let reply = app
        .get(&format!("{path}?academic_class={class}"), &admin)
        .await;
    reply.assert(200, None);
    let cards = reply.body.as_array().expect("cards");
    // Ordered by last name: Ağaoğlu, Dupré, Nowak, Straße.
    let by_student = |id: &str| {
        cards
            .iter()
            .find(|c| c["student"]["id"] == id)
            .expect("card")
    };
    let (zoe, lukasz, jurgen, rene) = (
        by_student(&students[0]),
        by_student(&students[1]),
        by_student(&students[2]),
        by_student(&students[3]),
    );
    assert_eq!(cards[0]["student"]["last_name"], "Ağaoğlu");
    // Subjects by name: Art, then Maths.
    assert_eq!(zoe["subjects"][0]["name"], "Art");
    assert_eq!(
        (zoe["total_mark"].clone(), zoe["total_max_mark"].clone()),
        (json!(130), json!(150))
    );
    assert_eq!(zoe["percentage"], 86.67);
    assert_eq!(zoe["grade"], "A");
    // 130/150 first; 90/150 = 60% second; 75/150 = 50% and 50/100 = 50% tie at third.
    let positions: Vec<Value> = [zoe, jurgen, lukasz, rene]
        .iter()
        .map(|c| c["position"].clone())
        .collect();
    assert_eq!(positions, vec![json!(1), json!(2), json!(3), json!(3)]);
    // Exactly pass_mark passes: Łukasz's 50/100 and 25/50.
    assert_eq!(lukasz["subjects"][1]["passed"], true);
    assert_eq!(lukasz["subjects"][0]["percentage"], 50.0);
    assert_eq!(lukasz["subjects"][0]["grade"], "B");
    assert_eq!(lukasz["passed"], true);
    // 10/50 = 20%: grade F and the 0-49 comment.
    assert_eq!(jurgen["subjects"][0]["grade"], "F");
    assert_eq!(jurgen["subjects"][0]["teacher_comment"], "Work harder");
    assert_eq!(jurgen["subjects"][1]["teacher_comment"], "Well done");
    // The missing art mark is missing, not 0, and the total counts maths only.
    assert_eq!(rene["subjects"][0]["mark"], Value::Null);
    assert_eq!(rene["subjects"][0]["exams"][0]["mark"], Value::Null);
    assert_eq!(rene["complete"], false);
    assert_eq!(
        (rene["total_mark"].clone(), rene["total_max_mark"].clone()),
        (json!(50), json!(100))
    );
    // Class averages: art (80 + 50 + 20) / 3 = 50, maths (90 + 50 + 80 + 50) / 4 = 67.5.
    assert_eq!(zoe["subjects"][0]["class_average"], 50.0);
    assert_eq!(zoe["subjects"][1]["class_average"], 67.5);
    assert_eq!(lukasz["attendance"]["late"], 1);
    assert_eq!(jurgen["attendance"]["absent"], 1);
    assert_eq!(zoe["class_size"], 4);

    let one = app.get(&format!("{path}{}/", students[3]), &admin).await;
    one.assert(200, None);
    assert_eq!(&one.body, rene);

    app.patch(
        "/api/v1/school/report-settings/",
        &admin,
        json!({"show_position": false, "show_class_average": false, "show_teacher_comments": false}),
    )
    .await
    .assert(200, None);
    let quiet = app.get(&format!("{path}{}/", students[2]), &admin).await;
    assert_eq!(quiet.body["position"], Value::Null);
    assert_eq!(quiet.body["subjects"][0]["class_average"], Value::Null);
    assert_eq!(quiet.body["subjects"][0]["teacher_comment"], Value::Null);

    // Without a class: every class's cards (one class here).
    let all = app.get(&path, &admin).await;
    all.assert(200, None);
    assert_eq!(all.body.as_array().map(Vec::len), Some(4));
    app.get(&format!("{path}?academic_class=x"), &admin)
        .await
        .assert(400, Some("invalid_query"));
    let missing = format!("{path}{}/", uuid::Uuid::new_v4());
    app.get(&missing, &admin)
        .await
        .assert(404, Some("not_found"));
}

#[tokio::test]
async fn students_read_only_their_own_card_and_teachers_their_classes() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let (path, class, students) = class_with_marks(&app, &admin).await;
    let teacher = app.as_school_user("alpha", "teacher").await;
    let class_cards = format!("{path}?academic_class={class}");
    app.get(&class_cards, &teacher)
        .await
        .assert(403, Some("permission_denied"));
    app.get(&path, &teacher)
        .await
        .assert(403, Some("permission_denied"));

    let root = app.as_root().await;
    let tenants = app.get("/api/v1/system/tenants/?search=alpha", &root).await;
    let school = tenants.body["results"][0]["id"].clone();
    let user = NewUser {
        email: Some("zoe@alpha.test"),
        password: "password-123",
        client: Some(text(&school)),
        roles: Some(&["student"]),
        ..Default::default()
    }
    .post(&app, &root)
    .await;
    user.assert(201, None);
    app.patch(
        &format!("/api/v1/school/students/{}/", students[0]),
        &admin,
        json!({"user": user.body["id"]}),
    )
    .await
    .assert(200, None);
    let zoe = app.as_school_user_at("alpha", "zoe@alpha.test").await;
    let own = app.get(&format!("{path}{}/", students[0]), &zoe).await;
    own.assert(200, None);
    assert_eq!(own.body["student"]["first_name"], "Zoë");
    app.get(&format!("{path}{}/", students[1]), &zoe)
        .await
        .assert(403, Some("permission_denied"));
    app.get(&class_cards, &zoe)
        .await
        .assert(403, Some("permission_denied"));
}

/// The text `pdftotext` reads from `bytes`, pages separated by form feeds.
fn pdftotext(bytes: &[u8]) -> String {
    if let Ok(keep) = std::env::var("REPORT_CARD_SAMPLE") {
        std::fs::write(keep, bytes).expect("sample");
    }
    pdf_text(bytes, "-layout")
}

#[tokio::test]
async fn the_pdf_is_a_page_of_real_text_per_student() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let (path, class, students) = class_with_marks(&app, &admin).await;
    let text = pdftotext(&pdf(&app, &format!("{path}?academic_class={class}"), &admin).await);
    let pages: Vec<&str> = text
        .split('\u{c}')
        .filter(|p| !p.trim().is_empty())
        .collect();
    assert_eq!(pages.len(), 4, "{text}");
    for (page, (first, last, marks)) in pages.iter().zip([
        ("Zoë", "Ağaoğlu", ["40", "90", "130"]),
        ("René", "Dupré", ["missing", "50", "50"]),
        ("Łukasz", "Nowak", ["25", "50", "75"]),
        ("Jürgen", "Straße", ["10", "80", "90"]),
    ]) {
        assert!(page.contains(&format!("{first} {last}")), "{page}");
        for expected in [
            "Łódź Grammar School",
            "Maths",
            "Art",
            "Keep learning — Straße 1",
            "Dr Ğül Şahin",
            "Term 1",
        ] {
            assert!(page.contains(expected), "{expected} in {page}");
        }
        for mark in marks {
            assert!(page.contains(mark), "{mark} in {page}");
        }
    }
    assert!(pages[0].contains("Position: 1 of 4"), "{}", pages[0]);
    let one = pdftotext(&pdf(&app, &format!("{path}{}/", students[2]), &admin).await);
    assert_eq!(
        one.split('\u{c}').filter(|p| !p.trim().is_empty()).count(),
        1
    );
    assert!(
        one.contains("Jürgen Straße") && one.contains("Work harder"),
        "{one}"
    );
}
