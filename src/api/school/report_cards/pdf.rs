//! Report cards printed: one A4 page per card, real text in DejaVu Sans (shipped in
//! `assets/fonts/`, embedded as a subset, with a ToUnicode map so the text is searchable
//! and copyable), written with `pdf-writer`.

use std::io::Write;

use pdf_writer::{
    Content, Filter, Finish, Name, Pdf, Rect, Ref, Str,
    types::{CidFontType, FontFlags, SystemInfo, UnicodeCmap},
};

use chrono::NaiveDate;

use super::{
    font::Font,
    layout::{A4, MARGIN, Page, draw_card},
};
use crate::school::{
    general_settings::GeneralSettings, report_cards::ReportCard, report_settings::ReportSettings,
};

const REGULAR: &[u8] = include_bytes!("../../../../assets/fonts/DejaVuSans.ttf");
const BOLD: &[u8] = include_bytes!("../../../../assets/fonts/DejaVuSans-Bold.ttf");
const SYSTEM_INFO: SystemInfo = SystemInfo {
    registry: Str(b"Adobe"),
    ordering: Str(b"Identity"),
    supplement: 0,
};

/// The cards as one PDF, a page each (an empty class: one page saying so), issued on
/// `issued`.
pub fn render(
    cards: &[ReportCard],
    school: Option<&GeneralSettings>,
    report: &ReportSettings,
    issued: NaiveDate,
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
            Some(card) => draw_card(&mut page, card, school, report, issued),
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
