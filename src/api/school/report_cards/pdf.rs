//! Report cards printed: one A4 page per card, real text in DejaVu Sans (shipped in
//! `assets/fonts/`, embedded as a subset, with a ToUnicode map so the text is searchable
//! and copyable), written with `pdf-writer`.

use std::io::Write;

use pdf_writer::{
    Content, Filter, Finish, Name, Pdf, Rect, Ref, Str,
    types::{CidFontType, FontFlags, SystemInfo, UnicodeCmap},
};

use super::font::Font;
use crate::school::{
    general_settings::GeneralSettings, report_cards::ReportCard, report_settings::ReportSettings,
};

const REGULAR: &[u8] = include_bytes!("../../../../assets/fonts/DejaVuSans.ttf");
const BOLD: &[u8] = include_bytes!("../../../../assets/fonts/DejaVuSans-Bold.ttf");
const A4: (f32, f32) = (595.28, 841.89);
const MARGIN: f32 = 50.0;
const SYSTEM_INFO: SystemInfo = SystemInfo {
    registry: Str(b"Adobe"),
    ordering: Str(b"Identity"),
    supplement: 0,
};

/// The table's columns: heading and left edge (points from the margin).
const COLUMNS: [(&str, f32); 8] = [
    ("Subject", 0.0),
    ("Mark", 150.0),
    ("Max", 190.0),
    ("%", 225.0),
    ("Grade", 265.0),
    ("Result", 305.0),
    ("Class avg", 345.0),
    ("Comment", 398.0),
];

/// A page being written: the content stream and the two fonts.
struct Page<'f> {
    content: Content,
    fonts: &'f mut [Font; 2],
}

impl Page<'_> {
    /// `text` at (`x`, `y`) points from the page's bottom left; `bold` picks the font.
    fn text(&mut self, x: f32, y: f32, size: f32, bold: bool, text: &str) {
        let font = &mut self.fonts[usize::from(bold)];
        let encoded = font.encode(text);
        self.content
            .begin_text()
            .set_font(Name(if bold { b"F2" } else { b"F1" }), size)
            .next_line(x, y)
            .show(Str(&encoded))
            .end_text();
    }

    /// `text` cut to `max` points wide.
    fn text_fit(&mut self, x: f32, y: f32, size: f32, max: f32, text: &str) {
        let fitted = self.fonts[0].fit(text, size, max);
        self.text(x, y, size, false, &fitted);
    }

    fn line(&mut self, x1: f32, y1: f32, x2: f32, y2: f32, width: f32) {
        self.content
            .set_line_width(width)
            .move_to(x1, y1)
            .line_to(x2, y2)
            .stroke();
    }
}

fn number(value: Option<f64>) -> String {
    value.map_or_else(|| "–".into(), |v| format!("{v:.2}"))
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

/// One card's page.
fn draw_card(
    page: &mut Page<'_>,
    card: &ReportCard,
    school: Option<&GeneralSettings>,
    report: &ReportSettings,
) {
    let (width, height) = A4;
    let right = width - MARGIN;
    let mut y = height - MARGIN - 10.0;
    let name = school.map_or("School", |s| s.school_name.as_str());
    page.text(MARGIN, y, 16.0, true, name);
    if let Some(school) = school {
        y -= 15.0;
        page.text_fit(MARGIN, y, 9.0, right - MARGIN, &school.address);
        y -= 12.0;
        let contact = [school.phone.as_str(), school.email.as_str()]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" · ");
        page.text_fit(MARGIN, y, 9.0, right - MARGIN, &contact);
    }
    y -= 10.0;
    page.line(MARGIN, y, right, y, 1.0);
    y -= 24.0;
    let session = &card.exam_session;
    page.text(
        MARGIN,
        y,
        13.0,
        true,
        &format!("Report card: {} ({})", session.name, session.term),
    );
    y -= 20.0;
    let student = &card.student;
    page.text(
        MARGIN,
        y,
        10.0,
        false,
        &format!("Student: {} {}", student.first_name, student.last_name),
    );
    page.text(
        320.0,
        y,
        10.0,
        false,
        &format!("Admission number: {}", student.admission_number),
    );
    y -= 14.0;
    let class = card
        .academic_class
        .as_ref()
        .map_or("–", |c| c.name.as_str());
    page.text(MARGIN, y, 10.0, false, &format!("Class: {class}"));
    if let Some(position) = card.position {
        page.text(
            320.0,
            y,
            10.0,
            false,
            &format!("Position: {position} of {}", card.class_size),
        );
    }
    y -= 26.0;
    for (heading, x) in COLUMNS {
        page.text(MARGIN + x, y, 9.0, true, heading);
    }
    y -= 5.0;
    page.line(MARGIN, y, right, y, 0.5);
    for subject in &card.subjects {
        y -= 14.0;
        let cells = [
            subject.name.clone(),
            mark(subject.mark),
            subject.max_mark.to_string(),
            number(subject.percentage),
            subject.grade.clone().unwrap_or_else(|| "–".into()),
            result(subject.passed).to_owned(),
            number(subject.class_average),
        ];
        for (index, cell) in cells.iter().enumerate() {
            let max = COLUMNS[index + 1].1 - COLUMNS[index].1 - 4.0;
            page.text_fit(MARGIN + COLUMNS[index].1, y, 9.0, max, cell);
        }
        let comment = subject.teacher_comment.as_deref().unwrap_or("");
        page.text_fit(
            MARGIN + COLUMNS[7].1,
            y,
            8.0,
            right - MARGIN - COLUMNS[7].1,
            comment,
        );
        if y < 260.0 {
            break;
        }
    }
    y -= 6.0;
    page.line(MARGIN, y, right, y, 0.5);
    y -= 14.0;
    page.text(MARGIN, y, 9.0, true, "Total");
    page.text(MARGIN + COLUMNS[1].1, y, 9.0, true, &mark(card.total_mark));
    page.text(
        MARGIN + COLUMNS[2].1,
        y,
        9.0,
        true,
        &card.total_max_mark.to_string(),
    );
    page.text(
        MARGIN + COLUMNS[3].1,
        y,
        9.0,
        true,
        &number(card.percentage),
    );
    page.text(
        MARGIN + COLUMNS[4].1,
        y,
        9.0,
        true,
        card.grade.as_deref().unwrap_or("–"),
    );
    page.text(MARGIN + COLUMNS[5].1, y, 9.0, true, result(card.passed));
    if !card.complete {
        y -= 12.0;
        page.text(
            MARGIN,
            y,
            8.0,
            false,
            "Totals count the subjects with a mark; a missing mark is not counted as 0.",
        );
    }
    y -= 26.0;
    let a = &card.attendance;
    let rate = a
        .attendance_rate
        .map_or_else(|| "–".into(), |r| format!("{:.1}%", r * 100.0));
    page.text(
        MARGIN,
        y,
        9.5,
        false,
        &format!(
            "Attendance: present {}, late {}, absent {}, excused {}; days recorded: {} (rate {rate})",
            a.present, a.late, a.absent, a.excused, a.days
        ),
    );
    let signature_y = 140.0;
    page.line(MARGIN, signature_y, MARGIN + 200.0, signature_y, 0.5);
    let principal = if report.principal_signature.is_empty() {
        "Principal".to_owned()
    } else {
        format!("Principal: {}", report.principal_signature)
    };
    page.text_fit(MARGIN, signature_y - 12.0, 9.0, 300.0, &principal);
    if !report.footer_text.is_empty() {
        page.line(MARGIN, 70.0, right, 70.0, 0.3);
        page.text_fit(MARGIN, 56.0, 8.0, right - MARGIN, &report.footer_text);
    }
}

/// The cards as one PDF, a page each (an empty class: one page saying so).
pub fn render(
    cards: &[ReportCard],
    school: Option<&GeneralSettings>,
    report: &ReportSettings,
) -> Vec<u8> {
    let (Some(regular), Some(bold)) = (Font::new(REGULAR), Font::new(BOLD)) else {
        return Vec::new();
    };
    let mut fonts = [regular, bold];
    let mut pdf = Pdf::new();
    let mut next = 1;
    let mut alloc = || {
        next += 1;
        Ref::new(next - 1)
    };
    let (catalog, tree) = (alloc(), alloc());
    let font_refs: Vec<[Ref; 5]> = (0..2)
        .map(|_| [alloc(), alloc(), alloc(), alloc(), alloc()])
        .collect();
    let mut pages = Vec::new();
    let mut contents = Vec::new();
    for card in cards
        .iter()
        .map(Some)
        .chain(cards.is_empty().then_some(None))
    {
        let mut page = Page {
            content: Content::new(),
            fonts: &mut fonts,
        };
        match card {
            Some(card) => draw_card(&mut page, card, school, report),
            None => page.text(
                MARGIN,
                A4.1 - 80.0,
                12.0,
                false,
                "This class has no students.",
            ),
        }
        pages.push(alloc());
        contents.push((alloc(), page.content.finish()));
    }
    pdf.catalog(catalog).pages(tree);
    pdf.pages(tree)
        .kids(pages.iter().copied())
        .count(pages.len() as i32);
    for (page_ref, (content_ref, content)) in pages.iter().zip(&contents) {
        let mut page = pdf.page(*page_ref);
        page.media_box(Rect::new(0.0, 0.0, A4.0, A4.1))
            .parent(tree)
            .contents(*content_ref);
        let mut resources = page.resources();
        let mut used = resources.fonts();
        used.pair(Name(b"F1"), font_refs[0][0]);
        used.pair(Name(b"F2"), font_refs[1][0]);
        used.finish();
        resources.finish();
        page.finish();
        pdf.stream(*content_ref, &deflate(content))
            .filter(Filter::FlateDecode);
    }
    // Subset fonts are named with a six-letter tag (PDF 32000-1, 9.6.4).
    for ((font, refs), name) in fonts
        .iter()
        .zip(&font_refs)
        .zip([b"AAAAAA+DejaVuSans".as_slice(), b"AAAAAB+DejaVuSans-Bold"])
    {
        embed(&mut pdf, font, *refs, Name(name));
    }
    pdf.finish()
}

fn deflate(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    let _ = encoder.write_all(data);
    encoder.finish().unwrap_or_default()
}

/// The font as a Type0 font with a CIDFontType2 descendant (CID = glyph id), widths of the
/// used glyphs, a ToUnicode map, and the subset program.
fn embed(
    pdf: &mut Pdf,
    font: &Font,
    [type0, cid, descriptor, unicode, program]: [Ref; 5],
    base: Name<'_>,
) {
    pdf.type0_font(type0)
        .base_font(base)
        .encoding_predefined(Name(b"Identity-H"))
        .descendant_font(cid)
        .to_unicode(unicode);
    let mut cid_font = pdf.cid_font(cid);
    cid_font
        .subtype(CidFontType::Type2)
        .base_font(base)
        .system_info(SYSTEM_INFO)
        .font_descriptor(descriptor)
        .cid_to_gid_map_predefined(Name(b"Identity"));
    let mut widths = cid_font.widths();
    for gid in font.used.keys() {
        widths.consecutive(*gid, [font.advance(*gid)]);
    }
    widths.finish();
    cid_font.finish();
    let [x0, y0, x1, y1] = font.bbox();
    pdf.font_descriptor(descriptor)
        .name(base)
        .flags(FontFlags::NON_SYMBOLIC)
        .bbox(Rect::new(x0, y0, x1, y1))
        .italic_angle(0.0)
        .ascent(font.ascent())
        .descent(font.descent())
        .cap_height(font.cap_height())
        .stem_v(80.0)
        .font_file2(program);
    let mut cmap = UnicodeCmap::new(Name(b"Custom"), SYSTEM_INFO);
    for (gid, c) in &font.used {
        cmap.pair(*gid, *c);
    }
    pdf.cmap(unicode, &cmap.finish()).finish();
    let subset = font.subset();
    pdf.stream(program, &deflate(&subset))
        .filter(Filter::FlateDecode)
        .pair(Name(b"Length1"), subset.len() as i32);
}
