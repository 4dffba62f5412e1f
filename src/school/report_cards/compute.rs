//! The arithmetic of report cards, free of the database: from a class's students, exams,
//! marks, settings and attendance to one card per student. Every rule a school would
//! argue about is here, with its unit test.
//!
//! - A subject's mark is the sum of its exams' marks; a missing mark (no mark record, or
//!   one without a value) leaves the subject's mark missing (`null`), never 0.
//! - Percentages are of the exams' `max_mark`s. Grades, teacher comments and pass/fail use
//!   the mark on the school's scale (`percentage × max_mark / 100` of academic settings):
//!   a band or comment range `min..=max` holds a scaled mark when it holds its whole part
//!   (49.9 is in 40-49, not 50-59); a mark passes when it is at least `pass_mark`.
//! - Totals, overall percentage and grade count the subjects that have a mark; `complete`
//!   says whether every subject had one.
//! - Position: competition ranking by overall percentage (1, 2, 2, 4) among the students
//!   with one; class average per subject: the mean percentage of the students with a mark.

use std::collections::HashMap;

use uuid::Uuid;

use super::{CardExam, CardSubject, ReportCard};
use crate::school::{academic_settings::GradingScale, attendance_ops::AttendanceSummary};

/// What the cards of a class are computed with.
#[derive(Debug, Clone)]
pub struct Rules {
    pub pass_mark: i32,
    /// `max_mark` of academic settings: the scale of grades, comments and `pass_mark`.
    pub scale_max: i32,
    pub grading: GradingScale,
    pub comments: Vec<CommentRange>,
    pub show_position: bool,
    pub show_class_average: bool,
    pub show_teacher_comments: bool,
}

/// A teacher grade comment: for marks (on the school's scale) from `min` to `max`;
/// `teacher: None` is the school's own.
#[derive(Debug, Clone)]
pub struct CommentRange {
    pub teacher: Option<Uuid>,
    pub min: i32,
    pub max: i32,
    pub comment: String,
}

/// An exam of the class in the exam session.
#[derive(Debug, Clone)]
pub struct ExamColumn {
    pub id: Uuid,
    pub name: String,
    pub max_mark: i32,
    pub teacher: Option<Uuid>,
}

/// A subject of the class, with its exams in the exam session.
#[derive(Debug, Clone)]
pub struct SubjectColumn {
    pub id: Uuid,
    pub name: String,
    pub code: String,
    pub exams: Vec<ExamColumn>,
}

/// A student of the class.
#[derive(Debug, Clone)]
pub struct StudentRow {
    pub id: Uuid,
    pub admission_number: String,
    pub first_name: String,
    pub last_name: String,
}

/// Everything a class's cards are computed from.
#[derive(Debug, Clone)]
pub struct ClassSheet {
    pub students: Vec<StudentRow>,
    pub subjects: Vec<SubjectColumn>,
    /// (exam, admission number) → the mark's value (`None`: recorded without one).
    pub marks: HashMap<(Uuid, String), Option<i32>>,
    /// The (exam, admission number) pairs marked absent.
    pub absent: std::collections::HashSet<(Uuid, String)>,
    pub attendance: HashMap<Uuid, AttendanceSummary>,
    /// The class teacher's remarks, by student.
    pub remarks: HashMap<Uuid, String>,
    pub rules: Rules,
}

/// Rounded to two decimals.
pub fn round2(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

impl Rules {
    fn scaled(&self, mark: i64, max: i64) -> f64 {
        mark as f64 / max as f64 * f64::from(self.scale_max)
    }

    /// The grade symbol of a scaled mark: the first band holding its whole part.
    pub fn grade(&self, scaled: f64) -> Option<String> {
        let whole = scaled.floor() as i64;
        self.grading
            .0
            .iter()
            .find(|band| i64::from(band.min) <= whole && whole <= i64::from(band.max))
            .map(|band| band.symbol.clone())
    }

    /// Whether a scaled mark passes (at least `pass_mark`; float noise forgiven).
    pub fn passes(&self, scaled: f64) -> bool {
        scaled + 1e-9 >= f64::from(self.pass_mark)
    }

    /// The comment for a scaled mark: the exam teacher's own range first, else the school's.
    pub fn comment(&self, scaled: f64, teacher: Option<Uuid>) -> Option<String> {
        let whole = scaled.floor() as i64;
        let holds = |c: &&CommentRange| i64::from(c.min) <= whole && whole <= i64::from(c.max);
        let own = teacher.and_then(|t| {
            self.comments
                .iter()
                .filter(holds)
                .find(|c| c.teacher == Some(t))
        });
        own.or_else(|| {
            self.comments
                .iter()
                .filter(holds)
                .find(|c| c.teacher.is_none())
        })
        .map(|c| c.comment.clone())
    }
}

/// Competition ranking (1, 2, 2, 4) of `scores`, highest first; `None` scores get none.
pub fn competition_rank(scores: &[Option<f64>]) -> Vec<Option<u32>> {
    scores
        .iter()
        .map(|score| {
            score.map(|mine| {
                let above = scores
                    .iter()
                    .flatten()
                    .filter(|other| **other > mine)
                    .count();
                u32::try_from(above).unwrap_or(u32::MAX).saturating_add(1)
            })
        })
        .collect()
}

/// One card per student of `sheet`, in the students' order; `session` and `class` are
/// copied into each.
pub fn cards(sheet: &ClassSheet, header: &super::CardHeader) -> Vec<ReportCard> {
    let rules = &sheet.rules;
    let mut cards: Vec<ReportCard> = sheet
        .students
        .iter()
        .map(|student| card(sheet, header, student))
        .collect();
    let overall: Vec<Option<f64>> = cards.iter().map(|c| c.ratio).collect();
    if rules.show_position {
        for (card, position) in cards.iter_mut().zip(competition_rank(&overall)) {
            card.position = position;
        }
    }
    if rules.show_class_average {
        for (index, subject) in sheet.subjects.iter().enumerate() {
            let percentages: Vec<f64> = cards
                .iter()
                .filter_map(|c| c.subjects[index].percentage_exact)
                .collect();
            let average = (!percentages.is_empty())
                .then(|| round2(percentages.iter().sum::<f64>() / percentages.len() as f64));
            for card in &mut cards {
                debug_assert_eq!(card.subjects[index].subject, subject.id);
                card.subjects[index].class_average = average;
            }
        }
    }
    cards
}

fn card(sheet: &ClassSheet, header: &super::CardHeader, student: &StudentRow) -> ReportCard {
    let rules = &sheet.rules;
    let subjects: Vec<CardSubject> = sheet
        .subjects
        .iter()
        .map(|subject| subject_result(sheet, subject, &student.admission_number))
        .collect();
    let marked: Vec<&CardSubject> = subjects.iter().filter(|s| s.mark.is_some()).collect();
    let total: i64 = marked.iter().filter_map(|s| s.mark).sum();
    let total_max: i64 = marked.iter().map(|s| s.max_mark).sum();
    let ratio = (total_max > 0).then(|| total as f64 / total_max as f64);
    let scaled = ratio.map(|r| r * f64::from(rules.scale_max));
    ReportCard {
        student: student.into(),
        academic_class: header.academic_class.clone(),
        academic_session: header.academic_session.clone(),
        exam_session: header.exam_session.clone(),
        complete: marked.len() == subjects.len(),
        total_mark: (!marked.is_empty()).then_some(total),
        total_max_mark: total_max,
        percentage: ratio.map(|r| round2(r * 100.0)),
        grade: scaled.and_then(|s| rules.grade(s)),
        passed: scaled.map(|s| rules.passes(s)),
        position: None,
        class_size: sheet.students.len(),
        attendance: sheet
            .attendance
            .get(&student.id)
            .cloned()
            .unwrap_or_else(|| {
                AttendanceSummary::of_counts(student.id, None, None, &HashMap::new())
            }),
        class_teacher_remark: sheet.remarks.get(&student.id).cloned(),
        subjects,
        ratio,
    }
}

fn subject_result(sheet: &ClassSheet, subject: &SubjectColumn, number: &str) -> CardSubject {
    let rules = &sheet.rules;
    let exams: Vec<CardExam> = subject
        .exams
        .iter()
        .map(|exam| {
            let key = (exam.id, number.to_owned());
            let mark = sheet.marks.get(&key).copied().flatten();
            CardExam {
                exam: exam.id,
                name: exam.name.clone(),
                max_mark: exam.max_mark,
                mark,
                absent: mark.is_none() && sheet.absent.contains(&key),
            }
        })
        .collect();
    let max: i64 = exams.iter().map(|e| i64::from(e.max_mark)).sum();
    let mark: Option<i64> = if exams.is_empty() {
        None
    } else {
        exams.iter().map(|e| e.mark.map(i64::from)).sum()
    };
    let scaled = mark.filter(|_| max > 0).map(|m| rules.scaled(m, max));
    let percentage = mark
        .filter(|_| max > 0)
        .map(|m| m as f64 / max as f64 * 100.0);
    let teacher = subject.exams.first().and_then(|e| e.teacher);
    CardSubject {
        subject: subject.id,
        name: subject.name.clone(),
        code: subject.code.clone(),
        absent: mark.is_none() && exams.iter().any(|e| e.absent),
        exams,
        mark,
        max_mark: max,
        percentage: percentage.map(round2),
        grade: scaled.and_then(|s| rules.grade(s)),
        passed: scaled.map(|s| rules.passes(s)),
        teacher_comment: scaled
            .filter(|_| rules.show_teacher_comments)
            .and_then(|s| rules.comment(s, teacher)),
        class_average: None,
        percentage_exact: percentage,
    }
}
