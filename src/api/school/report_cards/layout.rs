//! What one report card's page shows and where: the school, the title with the school
//! year and the exam session, the student, the marks table (subject names and teacher
//! comments wrapped over lines, never cut), totals, attendance, the class teacher's remark,
//! the signature lines with the principal's name, the issue date and the footer.

use chrono::NaiveDate;
use pdf_writer::{Content, Name, Str};

use super::font::Font;
use crate::school::{
    general_settings::GeneralSettings,
    report_cards::{CardExamSession, ReportCard},
    report_settings::ReportSettings,
};

pub const A4: (f32, f32) = (595.28, 841.89);
pub const MARGIN: f32 = 50.0;
/// The right edge of every line of text.
const RIGHT: f32 = A4.0 - MARGIN;
/// The lowest a table row may reach: below are the totals, attendance, the remark and the
/// signatures.
const TABLE_FLOOR: f32 = 290.0;

/// The table's columns: heading and left edge (points from the margin).
const COLUMNS: [(&str, f32); 8] = [
    ("Subject", 0.0),
    ("Mark", 108.0),
    ("Max", 150.0),
    ("%", 184.0),
    ("Grade", 220.0),
    ("Result", 256.0),
    ("Class avg", 296.0),
    ("Comment", 350.0),
];

/// A page being written: the content stream and the two fonts.
pub struct Page<'f> {
    pub content: Content,
    pub fonts: &'f mut [Font; 2],
}

impl Page<'_> {
    /// `text` at (`x`, `y`) points from the page's bottom left; `bold` picks the font.
    pub fn text(&mut self, x: f32, y: f32, size: f32, bold: bool, text: &str) {
        let font = &mut self.fonts[usize::from(bold)];
        let encoded = font.encode(text);
        self.content
            .begin_text()
            .set_font(Name(if bold { b"F2" } else { b"F1" }), size)
            .next_line(x, y)
            .show(Str(&encoded))
            .end_text();
    }

    /// `text` ending at `right`.
    fn text_right(&mut self, right: f32, y: f32, size: f32, bold: bool, text: &str) {
        let width = self.fonts[usize::from(bold)].width(text, size);
        self.text(right - width, y, size, bold, text);
    }

    /// `text` wrapped to `max` points wide from (`x`, `y`) down, in at most `lines` lines;
    /// answers the number of lines written.
    fn wrapped_in(
        &mut self,
        (x, y): (f32, f32),
        size: f32,
        bold: bool,
        max: f32,
        text: &str,
        lines: usize,
    ) -> usize {
        let lines = self.fonts[usize::from(bold)].wrap(text, size, max, lines);
        for (index, line) in lines.iter().enumerate() {
            self.text(x, y - index as f32 * leading(size), size, bold, line);
        }
        lines.len()
    }

    fn line(&mut self, x1: f32, y1: f32, x2: f32, y2: f32, width: f32) {
        self.content
            .set_line_width(width)
            .move_to(x1, y1)
            .line_to(x2, y2)
            .stroke();
    }
}

/// The distance between two lines of text at `size`.
fn leading(size: f32) -> f32 {
    size * 1.25
}

/// A number with at most two decimals and no trailing zeros: 96, 72.5, 66.67.
pub fn number(value: Option<f64>) -> String {
    value.map_or_else(
        || "–".into(),
        |v| {
            let text = format!("{v:.2}");
            let text = text.trim_end_matches('0').trim_end_matches('.');
            if text == "-0" {
                "0".into()
            } else {
                text.into()
            }
        },
    )
}

fn mark(value: Option<i64>) -> String {
    value.map_or_else(|| "missing".into(), |v| v.to_string())
}

fn result(passed: Option<bool>) -> &'static str {
    match passed {
        Some(true) => "Pass",
        Some(false) => "Fail",
        None => "–",
    }
}

/// The exam session as a title reads it: "Term 1 examinations", with its term unless the
/// name already says it ("Mid-year tests · Term 2"; a bare number reads "Term 2").
pub fn exam_session_title(session: &CardExamSession) -> String {
    let term = session.term.trim();
    let term = match term.chars().all(|c| c.is_ascii_digit()) && !term.is_empty() {
        true => format!("Term {term}"),
        false => term.to_owned(),
    };
    let name = session.name.trim();
    if term.is_empty() || name.to_lowercase().contains(&term.to_lowercase()) {
        name.to_owned()
    } else {
        format!("{name} · {term}")
    }
}

/// One card's page, issued on `issued`.
pub fn draw_card(
    page: &mut Page<'_>,
    card: &ReportCard,
    school: Option<&GeneralSettings>,
    report: &ReportSettings,
    issued: NaiveDate,
) {
    let width = RIGHT - MARGIN;
    let mut y = A4.1 - MARGIN - 10.0;
    let name = school.map_or("School", |s| s.school_name.as_str());
    let issued = format!("Issued {}", issued.format("%-d %B %Y"));
    page.text_right(RIGHT, y, 9.0, false, &issued);
    let issued_width = page.fonts[0].width(&issued, 9.0);
    let lines = page.wrapped_in(
        (MARGIN, y),
        16.0,
        true,
        width - issued_width - 12.0,
        name,
        2,
    );
    y -= leading(16.0) * (lines.max(1) - 1) as f32;
    if let Some(school) = school {
        let contact = [school.phone.as_str(), school.email.as_str()]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" · ");
        for text in [school.address.as_str(), contact.as_str()] {
            if !text.is_empty() {
                y -= 13.0;
                let lines = page.wrapped_in((MARGIN, y), 9.0, false, width, text, 2);
                y -= leading(9.0) * (lines.max(1) - 1) as f32;
            }
        }
    }
    y -= 10.0;
    page.line(MARGIN, y, RIGHT, y, 1.0);
    y -= 24.0;
    let title = format!("Report card · {}", card.academic_session.name);
    let lines = page.wrapped_in((MARGIN, y), 14.0, true, width, &title, 2);
    y -= leading(14.0) * lines.max(1) as f32 + 2.0;
    let session = exam_session_title(&card.exam_session);
    let lines = page.wrapped_in((MARGIN, y), 11.0, false, width, &session, 2);
    y -= leading(11.0) * (lines.max(1) - 1) as f32 + 20.0;
    let student = &card.student;
    let full_name = format!("Student: {} {}", student.first_name, student.last_name);
    page.wrapped_in((MARGIN, y), 10.0, false, 260.0, &full_name, 1);
    let admission = format!("Admission number: {}", student.admission_number);
    page.wrapped_in((320.0, y), 10.0, false, RIGHT - 320.0, &admission, 1);
    y -= 14.0;
    let class = card
        .academic_class
        .as_ref()
        .map_or("–", |c| c.name.as_str());
    page.wrapped_in(
        (MARGIN, y),
        10.0,
        false,
        260.0,
        &format!("Class: {class}"),
        1,
    );
    if let Some(position) = card.position {
        let text = format!("Position: {position} of {}", card.class_size);
        page.text(320.0, y, 10.0, false, &text);
    }
    y -= 26.0;
    y = table(page, card, y);
    y -= 26.0;
    let a = &card.attendance;
    let rate = a
        .attendance_rate
        .map_or_else(|| "–".into(), |r| format!("{}%", number(Some(r * 100.0))));
    let attendance = format!(
        "Attendance: present {}, late {}, absent {}, excused {}; days recorded: {} (rate {rate})",
        a.present, a.late, a.absent, a.excused, a.days
    );
    let lines = page.wrapped_in((MARGIN, y), 9.5, false, width, &attendance, 2);
    y -= leading(9.5) * lines.max(1) as f32 + 12.0;
    page.text(MARGIN, y, 9.5, true, "Class teacher's remark");
    y -= leading(9.5);
    let remark = card.class_teacher_remark.as_deref().unwrap_or("–");
    page.wrapped_in((MARGIN, y), 9.5, false, width, remark, 5);
    signatures(page, report);
}

/// The marks table from `y` down; answers where it ends.
fn table(page: &mut Page<'_>, card: &ReportCard, mut y: f32) -> f32 {
    let right = RIGHT - MARGIN;
    for (heading, x) in COLUMNS {
        page.text(MARGIN + x, y, 9.0, true, heading);
    }
    y -= 5.0;
    page.line(MARGIN, y, RIGHT, y, 0.5);
    let cell = |index: usize| COLUMNS[index + 1].1 - COLUMNS[index].1 - 5.0;
    for (row, subject) in card.subjects.iter().enumerate() {
        y -= 13.0;
        let cells = [
            match subject.absent {
                true => "absent".to_owned(),
                false => mark(subject.mark),
            },
            subject.max_mark.to_string(),
            number(subject.percentage),
            subject.grade.clone().unwrap_or_else(|| "–".into()),
            result(subject.passed).to_owned(),
            number(subject.class_average),
        ];
        for (index, text) in cells.iter().enumerate() {
            page.wrapped_in(
                (MARGIN + COLUMNS[index + 1].1, y),
                9.0,
                false,
                cell(index + 1),
                text,
                1,
            );
        }
        // The rows left below this one keep a line each.
        let room = ((y - TABLE_FLOOR) / leading(8.0)) as usize;
        let spare = room
            .saturating_sub(card.subjects.len() - row - 1)
            .clamp(1, 8);
        let names = page.wrapped_in(
            (MARGIN, y),
            9.0,
            false,
            cell(0),
            &subject.name,
            spare.min(3),
        );
        let comment = subject.teacher_comment.as_deref().unwrap_or("");
        let x = MARGIN + COLUMNS[7].1;
        let comments = page.wrapped_in((x, y), 8.0, false, right - COLUMNS[7].1, comment, spare);
        let below = (names as f32 - 1.0) * leading(9.0);
        y -= below.max((comments.max(1) as f32 - 1.0) * leading(8.0));
        if y < TABLE_FLOOR && row + 1 < card.subjects.len() {
            y -= 13.0;
            let more = card.subjects.len() - row - 1;
            page.text(
                MARGIN,
                y,
                8.0,
                false,
                &format!("and {more} more subjects (see the report card's data)"),
            );
            break;
        }
    }
    y -= 6.0;
    page.line(MARGIN, y, RIGHT, y, 0.5);
    y -= 14.0;
    page.text(MARGIN, y, 9.0, true, "Total");
    let totals = [
        mark(card.total_mark),
        card.total_max_mark.to_string(),
        number(card.percentage),
        card.grade.clone().unwrap_or_else(|| "–".into()),
        result(card.passed).to_owned(),
    ];
    for (index, text) in totals.iter().enumerate() {
        page.text(MARGIN + COLUMNS[index + 1].1, y, 9.0, true, text);
    }
    if !card.complete {
        y -= 12.0;
        page.text(
            MARGIN,
            y,
            8.0,
            false,
            "Totals count the subjects with a mark; a missing or absent mark is not counted as 0.",
        );
    }
    y
}

/// The class teacher's and the principal's signature lines, and the footer.
fn signatures(page: &mut Page<'_>, report: &ReportSettings) {
    let y = 120.0;
    let half = (RIGHT - MARGIN) / 2.0;
    page.line(MARGIN, y, MARGIN + half - 30.0, y, 0.5);
    page.text(MARGIN, y - 12.0, 9.0, false, "Class teacher");
    let principal = report.principal_signature.trim();
    let principal = match principal.is_empty() {
        true => "Principal".to_owned(),
        false => format!("Principal: {principal}"),
    };
    let x = MARGIN + half + 10.0;
    page.line(x, y, RIGHT, y, 0.5);
    page.wrapped_in((x, y - 12.0), 9.0, false, RIGHT - x, &principal, 2);
    if !report.footer_text.is_empty() {
        page.line(MARGIN, 70.0, RIGHT, 70.0, 0.3);
        page.wrapped_in(
            (MARGIN, 56.0),
            8.0,
            false,
            RIGHT - MARGIN,
            &report.footer_text,
            2,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_as_entered() {
        assert_eq!(number(Some(96.0)), "96");
        assert_eq!(number(Some(72.5)), "72.5");
        assert_eq!(number(Some(66.666)), "66.67");
        assert_eq!(number(Some(0.0)), "0");
        assert_eq!(number(None), "–");
    }

    #[test]
    fn a_title_names_the_term_once() {
        let session = |name: &str, term: &str| CardExamSession {
            id: uuid::Uuid::nil(),
            name: name.into(),
            term: term.into(),
        };
        assert_eq!(
            exam_session_title(&session("Term 1 examinations", "1")),
            "Term 1 examinations"
        );
        assert_eq!(
            exam_session_title(&session("Mid-year tests", "2")),
            "Mid-year tests · Term 2"
        );
        assert_eq!(
            exam_session_title(&session("Finals", "Spring")),
            "Finals · Spring"
        );
    }
}
