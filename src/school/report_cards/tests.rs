//! The card rules on a small hand-computed class.

use std::collections::HashMap;

use uuid::Uuid;

use super::{
    CardClass, CardExamSession, CardHeader, CardSession,
    compute::{
        ClassSheet, CommentRange, ExamColumn, Rules, StudentRow, SubjectColumn, cards,
        competition_rank,
    },
};
use crate::school::academic_settings::{GradeBand, GradingScale};

fn band(symbol: &str, min: i32, max: i32) -> GradeBand {
    GradeBand {
        symbol: symbol.into(),
        min,
        max,
    }
}

fn rules() -> Rules {
    Rules {
        pass_mark: 50,
        scale_max: 100,
        grading: GradingScale(vec![
            band("A", 70, 100),
            band("B", 50, 69),
            band("F", 0, 49),
        ]),
        comments: vec![
            CommentRange {
                teacher: None,
                min: 0,
                max: 49,
                comment: "Work harder".into(),
            },
            CommentRange {
                teacher: None,
                min: 50,
                max: 100,
                comment: "Well done".into(),
            },
        ],
        show_position: true,
        show_class_average: true,
        show_teacher_comments: true,
    }
}

fn header() -> CardHeader {
    CardHeader {
        academic_session: CardSession {
            id: Uuid::nil(),
            name: "2026/2027".into(),
        },
        exam_session: CardExamSession {
            id: Uuid::nil(),
            name: "Term 1".into(),
            term: "T1".into(),
        },
        academic_class: Some(CardClass {
            id: Uuid::nil(),
            name: "Form 1".into(),
        }),
    }
}

/// Four students, two subjects (maths out of 100, art out of 50). Marks:
/// A: 90, 40 → 130/150; B: 50, 25 → 75/150; C: 80, 10 → 90/150; D: 50, missing.
fn sheet() -> ClassSheet {
    let students: Vec<StudentRow> = ["A", "B", "C", "D"]
        .iter()
        .map(|n| StudentRow {
            id: Uuid::new_v4(),
            admission_number: (*n).into(),
            first_name: (*n).into(),
            last_name: "Test".into(),
        })
        .collect();
    let exam = |name: &str, max_mark| ExamColumn {
        id: Uuid::new_v4(),
        name: name.into(),
        max_mark,
        teacher: None,
    };
    let maths = SubjectColumn {
        id: Uuid::new_v4(),
        name: "Maths".into(),
        code: "MAT".into(),
        exams: vec![exam("Maths paper", 100)],
    };
    let art = SubjectColumn {
        id: Uuid::new_v4(),
        name: "Art".into(),
        code: "ART".into(),
        exams: vec![exam("Art project", 50)],
    };
    let mut marks = HashMap::new();
    for (number, m, a) in [
        ("A", Some(90), Some(40)),
        ("B", Some(50), Some(25)),
        ("C", Some(80), Some(10)),
        ("D", Some(50), None),
    ] {
        marks.insert((maths.exams[0].id, number.to_owned()), m);
        if a.is_some() {
            marks.insert((art.exams[0].id, number.to_owned()), a);
        }
    }
    ClassSheet {
        students,
        subjects: vec![maths, art],
        marks,
        absent: std::collections::HashSet::new(),
        attendance: HashMap::new(),
        remarks: HashMap::new(),
        rules: rules(),
    }
}

#[test]
fn ranking_is_competition_style() {
    let ranks = competition_rank(&[Some(0.9), Some(0.8), Some(0.8), Some(0.7), None]);
    assert_eq!(ranks, vec![Some(1), Some(2), Some(2), Some(4), None]);
}

#[test]
fn a_missing_mark_stays_missing_and_totals_count_the_marked_subjects() {
    let cards = cards(&sheet(), &header());
    let d = &cards[3];
    assert_eq!(d.subjects[1].mark, None);
    assert_eq!(d.subjects[1].percentage, None);
    assert_eq!(d.subjects[1].grade, None);
    assert_eq!(d.subjects[1].exams[0].mark, None);
    assert!(!d.complete);
    assert_eq!((d.total_mark, d.total_max_mark), (Some(50), 100));
    assert_eq!(d.percentage, Some(50.0));
    assert!(cards[0].complete);
    assert_eq!(
        (cards[0].total_mark, cards[0].total_max_mark),
        (Some(130), 150)
    );
    assert_eq!(cards[0].percentage, Some(86.67));
}

#[test]
fn an_absent_mark_is_missing_and_says_absent_and_the_remark_is_the_students() {
    let mut sheet = sheet();
    let art = sheet.subjects[1].exams[0].id;
    sheet.marks.insert((art, "D".into()), None);
    sheet.absent.insert((art, "D".into()));
    sheet
        .remarks
        .insert(sheet.students[0].id, "A fine term.".into());
    let cards = cards(&sheet, &header());
    let d = &cards[3];
    assert!(d.subjects[1].absent && d.subjects[1].exams[0].absent);
    assert_eq!(d.subjects[1].mark, None);
    assert_eq!((d.total_mark, d.complete), (Some(50), false));
    assert!(!d.subjects[0].absent && !cards[0].subjects[1].absent);
    assert_eq!(
        cards[0].class_teacher_remark.as_deref(),
        Some("A fine term.")
    );
    assert_eq!(cards[1].class_teacher_remark, None);
    assert_eq!(d.academic_session.name, "2026/2027");
}

#[test]
fn positions_tie_and_skip() {
    // Overall: A 86.67%, B 50%, C 60%, D 50% → 1, 3, 2, 3.
    let positions: Vec<Option<u32>> = cards(&sheet(), &header())
        .iter()
        .map(|c| c.position)
        .collect();
    assert_eq!(positions, vec![Some(1), Some(3), Some(2), Some(3)]);
    let mut hidden = sheet();
    hidden.rules.show_position = false;
    assert!(
        cards(&hidden, &header())
            .iter()
            .all(|c| c.position.is_none())
    );
}

#[test]
fn pass_mark_is_inclusive_and_grades_use_the_whole_part_of_the_scaled_mark() {
    let cards = cards(&sheet(), &header());
    // B: exactly 50 in maths, 25/50 = 50% in art: both pass at pass_mark 50, grade B.
    let b = &cards[1];
    assert_eq!(b.subjects[0].passed, Some(true));
    assert_eq!(b.subjects[1].passed, Some(true));
    assert_eq!(b.subjects[1].grade.as_deref(), Some("B"));
    // C: art 10/50 = 20% → F, fails.
    assert_eq!(cards[2].subjects[1].grade.as_deref(), Some("F"));
    assert_eq!(cards[2].subjects[1].passed, Some(false));
    let rules = rules();
    assert_eq!(rules.grade(69.99).as_deref(), Some("B"));
    assert_eq!(rules.grade(70.0).as_deref(), Some("A"));
    assert_eq!(rules.grade(49.9).as_deref(), Some("F"));
    assert!(!rules.passes(49.99) && rules.passes(50.0));
}

#[test]
fn teacher_comments_follow_ranges_and_prefer_the_exam_teachers_own() {
    let cards = cards(&sheet(), &header());
    assert_eq!(
        cards[1].subjects[0].teacher_comment.as_deref(),
        Some("Well done")
    );
    assert_eq!(
        cards[2].subjects[1].teacher_comment.as_deref(),
        Some("Work harder")
    );
    let teacher = Uuid::new_v4();
    let mut rules = rules();
    rules.comments.push(CommentRange {
        teacher: Some(teacher),
        min: 50,
        max: 59,
        comment: "Close to a B+".into(),
    });
    assert_eq!(
        rules.comment(55.0, Some(teacher)).as_deref(),
        Some("Close to a B+")
    );
    assert_eq!(rules.comment(55.0, None).as_deref(), Some("Well done"));
    assert_eq!(
        rules.comment(60.0, Some(teacher)).as_deref(),
        Some("Well done")
    );
    let mut quiet = sheet();
    quiet.rules.show_teacher_comments = false;
    let cards = super::compute::cards(&quiet, &header());
    assert!(
        cards
            .iter()
            .all(|c| c.subjects.iter().all(|s| s.teacher_comment.is_none()))
    );
}

#[test]
fn class_averages_leave_out_missing_marks() {
    let cards = cards(&sheet(), &header());
    // Maths: (90 + 50 + 80 + 50) / 4 = 67.5; art: (80 + 50 + 20) / 3 = 50.
    assert_eq!(cards[0].subjects[0].class_average, Some(67.5));
    assert_eq!(cards[0].subjects[1].class_average, Some(50.0));
}
