//! A TrueType font built into the binary, measured with `ttf-parser`, and embedded in a PDF
//! as a subset: glyph ids stay as they are (so text is written as glyph ids, CID = GID),
//! but the outlines of glyphs no text used are dropped, along with every table a PDF
//! viewer does not read. DejaVu Sans is 740 kB; a report card's subset is a few tens of kB.

use std::collections::{BTreeMap, BTreeSet};

use ttf_parser::{Face, GlyphId};

/// A font of the report cards and the glyphs written with it so far.
pub struct Font {
    pub data: &'static [u8],
    face: Face<'static>,
    /// Glyph id → the character it was written for (the PDF's ToUnicode map, which makes
    /// the text searchable and copyable).
    pub used: BTreeMap<u16, char>,
}

impl Font {
    /// `data` must be a TrueType font (the ones shipped in `assets/fonts/` are).
    pub fn new(data: &'static [u8]) -> Option<Self> {
        Some(Self {
            data,
            face: Face::parse(data, 0).ok()?,
            used: BTreeMap::new(),
        })
    }

    pub fn units_per_em(&self) -> f32 {
        f32::from(self.face.units_per_em())
    }

    /// Font units → thousandths of the text size (PDF glyph space).
    fn to_pdf(&self, units: f32) -> f32 {
        units * 1000.0 / self.units_per_em()
    }

    fn glyph(&self, c: char) -> u16 {
        self.face.glyph_index(c).map_or(0, |g| g.0)
    }

    /// The advance of glyph `gid` in PDF glyph space.
    pub fn advance(&self, gid: u16) -> f32 {
        self.to_pdf(f32::from(
            self.face.glyph_hor_advance(GlyphId(gid)).unwrap_or(0),
        ))
    }

    /// The width of `text` at `size` points.
    pub fn width(&self, text: &str, size: f32) -> f32 {
        text.chars()
            .map(|c| self.advance(self.glyph(c)))
            .sum::<f32>()
            * size
            / 1000.0
    }

    /// `text` cut to fit `max` points at `size`, with an ellipsis when cut: the longest
    /// prefix that leaves room for the ellipsis. One pass over the characters with a running
    /// width, which stops at the first character past `max`, so a cell costs what it shows,
    /// not the square of the text's length (a 10,000-character comment in a 200-point cell
    /// measures some 60 characters).
    pub fn fit(&self, text: &str, size: f32, max: f32) -> String {
        if size <= 0.0 {
            return text.to_owned();
        }
        // In glyph space (thousandths of the size), where advances are summed.
        let limit = max * 1000.0 / size;
        let room = limit - self.width("…", 1000.0);
        let mut width = 0.0;
        // Bytes of the longest prefix seen whose width leaves room for the ellipsis.
        let mut keep = 0;
        for (at, c) in text.char_indices() {
            if width <= room {
                keep = at;
            }
            width += self.advance(self.glyph(c));
            if width > limit {
                return format!("{}…", text[..keep].trim_end());
            }
        }
        text.to_owned()
    }

    /// `text` broken at white space into lines at most `max` points wide at `size` (a word
    /// wider than a line is broken between characters, with a hyphen). At most `max_lines`
    /// lines: text beyond them ends the last line with an ellipsis. Reads the text once and
    /// stops past the last line, so a long text costs what it shows.
    pub fn wrap(&self, text: &str, size: f32, max: f32, max_lines: usize) -> Vec<String> {
        let space = self.width(" ", size);
        let mut lines: Vec<String> = Vec::new();
        let (mut line, mut width) = (String::new(), 0.0_f32);
        for word in text.split_whitespace() {
            let word_width = self.width(word, size);
            if line.is_empty() && word_width <= max {
                (line, width) = (word.to_owned(), word_width);
                continue;
            }
            if !line.is_empty() && width + space + word_width <= max {
                line.push(' ');
                line.push_str(word);
                width += space + word_width;
                continue;
            }
            // `line` is full: the last line allowed takes what fits, and an ellipsis.
            if lines.len() + 1 >= max_lines.max(1) {
                lines.push(self.fit(&format!("{line} {word}…"), size, max));
                return lines;
            }
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            // A word wider than a line: as much as fits with a hyphen, the rest below.
            let mut rest = word;
            while self.width(rest, size) > max && lines.len() + 1 < max_lines {
                let fitted = self.fit(rest, size, max);
                let kept = fitted.trim_end_matches('…');
                let kept = match kept.is_empty() {
                    true => rest.chars().next().map_or("", |c| &rest[..c.len_utf8()]),
                    false => kept,
                };
                lines.push(format!("{kept}-"));
                rest = &rest[kept.len()..];
            }
            width = self.width(rest, size);
            if width > max {
                lines.push(self.fit(rest, size, max));
                return lines;
            }
            line = rest.to_owned();
        }
        if !line.is_empty() {
            lines.push(line);
        }
        lines
    }

    /// `text` as 2-byte glyph ids (Identity-H), recording the glyphs used.
    pub fn encode(&mut self, text: &str) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(text.len() * 2);
        for c in text.chars() {
            let gid = self.glyph(c);
            self.used.entry(gid).or_insert(c);
            bytes.extend_from_slice(&gid.to_be_bytes());
        }
        bytes
    }

    pub fn ascent(&self) -> f32 {
        self.to_pdf(f32::from(self.face.ascender()))
    }

    pub fn descent(&self) -> f32 {
        self.to_pdf(f32::from(self.face.descender()))
    }

    pub fn cap_height(&self) -> f32 {
        self.to_pdf(f32::from(self.face.capital_height().unwrap_or(700)))
    }

    /// The font's bounding box in PDF glyph space.
    pub fn bbox(&self) -> [f32; 4] {
        let b = self.face.global_bounding_box();
        [
            self.to_pdf(f32::from(b.x_min)),
            self.to_pdf(f32::from(b.y_min)),
            self.to_pdf(f32::from(b.x_max)),
            self.to_pdf(f32::from(b.y_max)),
        ]
    }

    /// The font program with only the used glyphs' outlines (and their components).
    pub fn subset(&self) -> Vec<u8> {
        subset(self.data, self.used.keys().copied().collect()).unwrap_or_else(|| self.data.to_vec())
    }
}

fn u16_at(data: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(data.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(data.get(at..at + 4)?.try_into().ok()?))
}

/// The tables of `data`, by tag.
fn tables(data: &[u8]) -> Option<BTreeMap<[u8; 4], &[u8]>> {
    let count = usize::from(u16_at(data, 4)?);
    let mut tables = BTreeMap::new();
    for i in 0..count {
        let record = 12 + 16 * i;
        let tag: [u8; 4] = data.get(record..record + 4)?.try_into().ok()?;
        let offset = u32_at(data, record + 8)? as usize;
        let length = u32_at(data, record + 12)? as usize;
        tables.insert(tag, data.get(offset..offset + length)?);
    }
    Some(tables)
}

/// The glyph ids a composite glyph is made of (none for a simple one).
fn components(glyph: &[u8]) -> Vec<u16> {
    const WORDS: u16 = 0x0001;
    const SCALE: u16 = 0x0008;
    const MORE: u16 = 0x0020;
    const XY_SCALE: u16 = 0x0040;
    const TWO_BY_TWO: u16 = 0x0080;
    let mut found = Vec::new();
    if glyph.len() < 10 || i16::from_be_bytes([glyph[0], glyph[1]]) >= 0 {
        return found;
    }
    let mut at = 10;
    while let (Some(flags), Some(gid)) = (u16_at(glyph, at), u16_at(glyph, at + 2)) {
        found.push(gid);
        at += 4 + if flags & WORDS != 0 { 4 } else { 2 };
        at += if flags & SCALE != 0 {
            2
        } else if flags & XY_SCALE != 0 {
            4
        } else if flags & TWO_BY_TWO != 0 {
            8
        } else {
            0
        };
        if flags & MORE == 0 {
            break;
        }
    }
    found
}

/// `data` with the outlines of glyphs outside `keep` (and their components) emptied, long
/// `loca` offsets, and only the tables a PDF's TrueType font program needs.
fn subset(data: &[u8], mut keep: BTreeSet<u16>) -> Option<Vec<u8>> {
    let tables = tables(data)?;
    let head = tables.get(b"head")?;
    let short_loca = u16_at(head, 50)? == 0;
    let loca = tables.get(b"loca")?;
    let glyf = tables.get(b"glyf")?;
    let glyphs = usize::from(u16_at(tables.get(b"maxp")?, 4)?);
    let offset = |gid: usize| -> Option<usize> {
        if short_loca {
            Some(usize::from(u16_at(loca, gid * 2)?) * 2)
        } else {
            Some(u32_at(loca, gid * 4)? as usize)
        }
    };
    let outline = |gid: usize| -> Option<&[u8]> { glyf.get(offset(gid)?..offset(gid + 1)?) };
    keep.insert(0);
    let mut pending: Vec<u16> = keep.iter().copied().collect();
    while let Some(gid) = pending.pop() {
        for part in components(outline(usize::from(gid)).unwrap_or_default()) {
            if keep.insert(part) {
                pending.push(part);
            }
        }
    }
    let mut new_glyf = Vec::new();
    let mut new_loca = Vec::with_capacity((glyphs + 1) * 4);
    for gid in 0..glyphs {
        new_loca.extend_from_slice(&u32::try_from(new_glyf.len()).ok()?.to_be_bytes());
        if keep.contains(&u16::try_from(gid).ok()?) {
            new_glyf.extend_from_slice(outline(gid)?);
            new_glyf.resize(new_glyf.len().div_ceil(4) * 4, 0);
        }
    }
    new_loca.extend_from_slice(&u32::try_from(new_glyf.len()).ok()?.to_be_bytes());
    let mut new_head = head.to_vec();
    new_head.get_mut(8..12)?.copy_from_slice(&[0; 4]);
    new_head
        .get_mut(50..52)?
        .copy_from_slice(&1u16.to_be_bytes());
    let mut out_tables: Vec<([u8; 4], Vec<u8>)> = Vec::new();
    for tag in [
        b"cvt ", b"fpgm", b"glyf", b"head", b"hhea", b"hmtx", b"loca", b"maxp", b"prep",
    ] {
        let body = match tag {
            b"glyf" => new_glyf.clone(),
            b"loca" => new_loca.clone(),
            b"head" => new_head.clone(),
            _ => match tables.get(tag) {
                Some(table) => table.to_vec(),
                None => continue,
            },
        };
        out_tables.push((*tag, body));
    }
    Some(write_sfnt(&out_tables))
}

/// An sfnt file of `tables` (sorted by tag).
fn write_sfnt(tables: &[([u8; 4], Vec<u8>)]) -> Vec<u8> {
    let count = tables.len() as u16;
    let power = 1u16 << (15 - count.leading_zeros());
    let mut out = Vec::new();
    out.extend_from_slice(&0x0001_0000u32.to_be_bytes());
    out.extend_from_slice(&count.to_be_bytes());
    out.extend_from_slice(&(power * 16).to_be_bytes());
    out.extend_from_slice(&(power.trailing_zeros() as u16).to_be_bytes());
    out.extend_from_slice(&((count - power) * 16).to_be_bytes());
    let mut offset = 12 + 16 * tables.len();
    let mut bodies = Vec::new();
    for (tag, body) in tables {
        let checksum = body
            .chunks(4)
            .map(|c| {
                let mut word = [0u8; 4];
                word[..c.len()].copy_from_slice(c);
                u32::from_be_bytes(word)
            })
            .fold(0u32, u32::wrapping_add);
        out.extend_from_slice(tag);
        out.extend_from_slice(&checksum.to_be_bytes());
        out.extend_from_slice(&(offset as u32).to_be_bytes());
        out.extend_from_slice(&(body.len() as u32).to_be_bytes());
        let mut padded = body.clone();
        padded.resize(body.len().div_ceil(4) * 4, 0);
        offset += padded.len();
        bodies.extend_from_slice(&padded);
    }
    out.extend_from_slice(&bodies);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subset_keeps_the_used_glyphs_and_is_small() {
        let data: &'static [u8] = include_bytes!("../../../../assets/fonts/DejaVuSans.ttf");
        let mut font = Font::new(data).expect("font");
        font.encode("Zoë Łukasz Straße Ağaoğlu, Łódź 42 %");
        let subset = font.subset();
        assert!(subset.len() < data.len() / 5, "{} bytes", subset.len());
        let face = Face::parse(&subset, 0).expect("the subset parses");
        for c in ['Z', 'Ł', 'ó', 'ß', 'ğ', 'ë'] {
            let gid = font.glyph(c);
            assert!(gid != 0, "{c}");
            assert!(
                face.outline_glyph(GlyphId(gid), &mut NoPath).is_some(),
                "{c} ({gid})"
            );
        }
        assert!(
            face.outline_glyph(GlyphId(font.glyph('Q')), &mut NoPath)
                .is_none()
        );
    }

    fn dejavu() -> Font {
        Font::new(include_bytes!("../../../../assets/fonts/DejaVuSans.ttf")).expect("font")
    }

    /// The fit of the quadratic cut it replaces: pop a character, measure it all again.
    fn fit_by_popping(font: &Font, text: &str, size: f32, max: f32) -> String {
        if font.width(text, size) <= max {
            return text.to_owned();
        }
        let mut cut = text.to_owned();
        while !cut.is_empty() && font.width(&format!("{cut}…"), size) > max {
            cut.pop();
        }
        format!("{}…", cut.trim_end())
    }

    #[test]
    fn fitting_cuts_where_measuring_every_prefix_would() {
        let font = dejavu();
        for text in [
            "",
            "Excellent",
            "Very good work, keep it up",
            "Zoë Łukasz Straße",
        ] {
            for max in [0.0, 5.0, 30.0, 60.0, 120.0, 500.0] {
                assert_eq!(
                    font.fit(text, 9.0, max),
                    fit_by_popping(&font, text, 9.0, max),
                    "{text:?} in {max}"
                );
            }
        }
        let long = "word ".repeat(2_000);
        let fitted = font.fit(&long, 9.0, 200.0);
        assert!(fitted.ends_with('…') && fitted.len() < 100, "{fitted}");
        assert!(font.width(&fitted, 9.0) <= 200.0);
    }

    #[test]
    fn wrapping_keeps_every_word_within_the_width() {
        let font = dejavu();
        let text = "Very good; a little more practice will make it excellent.";
        let lines = font.wrap(text, 8.0, 100.0, 10);
        assert!(lines.len() > 1, "{lines:?}");
        assert_eq!(lines.join(" "), text);
        assert!(
            lines.iter().all(|l| font.width(l, 8.0) <= 100.0),
            "{lines:?}"
        );
        let long = font.wrap(&"Keep going. ".repeat(900), 8.0, 100.0, 4);
        assert_eq!(long.len(), 4);
        assert!(long[3].ends_with('…') && font.width(&long[3], 8.0) <= 100.0);
        let word = font.wrap("Antidisestablishmentarianism", 9.0, 40.0, 10);
        assert!(word.len() > 2 && word[0].ends_with('-'), "{word:?}");
        assert_eq!(
            word.concat().replace('-', ""),
            "Antidisestablishmentarianism"
        );
        assert!(font.wrap("", 9.0, 40.0, 3).is_empty());
    }

    struct NoPath;

    impl ttf_parser::OutlineBuilder for NoPath {
        fn move_to(&mut self, _: f32, _: f32) {}
        fn line_to(&mut self, _: f32, _: f32) {}
        fn quad_to(&mut self, _: f32, _: f32, _: f32, _: f32) {}
        fn curve_to(&mut self, _: f32, _: f32, _: f32, _: f32, _: f32, _: f32) {}
        fn close(&mut self) {}
    }
}
