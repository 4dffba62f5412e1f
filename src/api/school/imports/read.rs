//! A file's rows as a [`Sheet`]: CSV (UTF-8 with or without a BOM, comma or semicolon,
//! read by the `csv` crate) or XLSX (the first sheet, read by `calamine`; a formula cell
//! reads as the value it last computed). Rows wholly blank are skipped, keeping the row
//! numbers a spreadsheet shows.

use std::io::Cursor;

use calamine::{Data, Reader, Xlsx};

use crate::school::imports::{RowError, Sheet, SheetRow};

/// Why a file could not be read as a sheet.
#[derive(Debug)]
pub enum Unreadable {
    /// Past `IMPORT_MAX_ROWS`.
    TooManyRows,
    /// Broken: where and why.
    Broken(RowError),
}

fn broken(row: usize, code: &'static str, message: impl Into<String>) -> Unreadable {
    Unreadable::Broken(RowError {
        row,
        column: None,
        code,
        message: message.into(),
    })
}

/// Adds a row read from the file (numbered `number`) unless every cell is blank: the first
/// non-blank row is the header.
fn push(
    sheet: &mut Sheet,
    seen_header: &mut bool,
    number: usize,
    cells: Vec<String>,
    max_rows: usize,
) -> Result<(), Unreadable> {
    if cells.iter().all(|c| c.trim().is_empty()) {
        return Ok(());
    }
    if !*seen_header {
        *seen_header = true;
        sheet.columns = cells.iter().map(|c| c.trim().to_lowercase()).collect();
        return Ok(());
    }
    if sheet.rows.len() == max_rows {
        return Err(Unreadable::TooManyRows);
    }
    sheet.rows.push(SheetRow { number, cells });
    Ok(())
}

/// The delimiter of a CSV whose first line is `header`: a semicolon when it holds more of
/// them than commas (what Excel writes where the comma is the decimal sign).
fn delimiter(header: &[u8]) -> u8 {
    let count = |b: u8| header.iter().filter(|c| **c == b).count();
    if count(b';') > count(b',') {
        b';'
    } else {
        b','
    }
}

pub fn csv(bytes: &[u8], max_rows: usize) -> Result<Sheet, Unreadable> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let first_line = bytes.split(|b| *b == b'\n').next().unwrap_or_default();
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter(first_line))
        .from_reader(bytes);
    let (mut sheet, mut seen_header) = (Sheet::default(), false);
    // (bytes counted, line ends among them)
    let mut counted = (0usize, 0usize);
    for (index, record) in reader.records().enumerate() {
        // The reader skips empty lines: the row a spreadsheet shows is the line the record
        // starts on (one more than the line ends before its first byte).
        let start = match &record {
            Ok(record) => record.position(),
            Err(err) => err.position(),
        };
        // The reader's position is where the previous record ended, before its line end
        // and any blank lines: the record starts at the first byte past them.
        // Line ends are counted once, from where the last count stopped (positions only
        // grow), so numbering a file's rows is linear in its size.
        let number = start.map_or(index + 1, |p| {
            let from = (p.byte() as usize).min(bytes.len());
            let skipped = bytes[from..]
                .iter()
                .take_while(|b| matches!(b, b'\r' | b'\n'))
                .count();
            let end = (from + skipped).max(counted.0);
            counted.1 += bytes[counted.0..end]
                .iter()
                .filter(|b| **b == b'\n')
                .count();
            counted.0 = end;
            counted.1 + 1
        });
        let record = record.map_err(|err| match err.kind() {
            csv::ErrorKind::Utf8 { .. } => broken(
                number,
                "encoding",
                "this row is not UTF-8 text; save the file as CSV UTF-8",
            ),
            _ => broken(
                number,
                "malformed",
                format!("this row cannot be read as CSV: {err}"),
            ),
        })?;
        let cells = record.iter().map(str::to_owned).collect();
        push(&mut sheet, &mut seen_header, number, cells, max_rows)?;
    }
    Ok(sheet)
}

/// A cell as text: whole numbers without a decimal point, dates as `YYYY-MM-DD`.
fn text_of(cell: &Data) -> Result<String, String> {
    Ok(match cell {
        Data::Empty => String::new(),
        Data::String(s) => s.clone(),
        Data::Int(n) => n.to_string(),
        Data::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{f:.0}"),
        Data::Float(f) => f.to_string(),
        Data::Bool(b) => b.to_string(),
        Data::DateTime(d) => excel_date(d.as_f64()),
        Data::DateTimeIso(s) | Data::DurationIso(s) => s.clone(),
        Data::Error(e) => return Err(format!("the cell holds the error {e}")),
    })
}

/// An Excel date serial (days since 1899-12-30, the fraction the time of day) as text.
fn excel_date(serial: f64) -> String {
    let epoch = chrono::NaiveDate::from_ymd_opt(1899, 12, 30).unwrap_or_default();
    let day = epoch + chrono::Duration::days(serial.trunc() as i64);
    match serial.fract() {
        0.0 => day.to_string(),
        fraction => {
            let seconds = (fraction * 86_400.0).round() as i64;
            (day.and_time(chrono::NaiveTime::MIN) + chrono::Duration::seconds(seconds)).to_string()
        }
    }
}

pub fn xlsx(bytes: &[u8], max_rows: usize) -> Result<Sheet, Unreadable> {
    let mut book = Xlsx::new(Cursor::new(bytes)).map_err(|err| {
        broken(
            1,
            "malformed",
            format!("this is not a readable .xlsx file: {err}"),
        )
    })?;
    let range = match book.worksheet_range_at(0) {
        Some(Ok(range)) => range,
        Some(Err(err)) => {
            return Err(broken(
                1,
                "malformed",
                format!("the first sheet cannot be read: {err}"),
            ));
        }
        None => return Err(broken(1, "malformed", "the workbook has no sheet")),
    };
    let first_row = range.start().map_or(0, |(row, _)| row as usize);
    let first_column = range.start().map_or(0, |(_, column)| column as usize);
    let (mut sheet, mut seen_header) = (Sheet::default(), false);
    for (index, row) in range.rows().enumerate() {
        let number = first_row + index + 1;
        // Cells left of the used range are empty: keep columns where the sheet shows them.
        let mut cells = vec![String::new(); first_column];
        for cell in row {
            cells.push(text_of(cell).map_err(|message| broken(number, "invalid", message))?);
        }
        push(&mut sheet, &mut seen_header, number, cells, max_rows)?;
    }
    Ok(sheet)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semicolons_a_bom_accents_and_blank_rows() {
        let file = "\u{feff}Name;Level\r\nFörm 1;1\r\n\r\n\"Form; 2\";2\r\n;\r\n\r\n".as_bytes();
        let sheet = csv(file, 10).expect("sheet");
        assert_eq!(sheet.columns, ["name", "level"]);
        let rows: Vec<(usize, Vec<String>)> = sheet
            .rows
            .into_iter()
            .map(|r| (r.number, r.cells))
            .collect();
        assert_eq!(
            rows,
            vec![
                (2, vec!["Förm 1".into(), "1".into()]),
                (4, vec!["Form; 2".into(), "2".into()])
            ]
        );
        assert!(matches!(csv(file, 1), Err(Unreadable::TooManyRows)));
    }

    #[test]
    fn latin1_is_refused_naming_the_row() {
        let file = b"name,level\nF\xf6rm,1\n";
        match csv(file, 10) {
            Err(Unreadable::Broken(e)) => assert_eq!((e.row, e.code), (2, "encoding")),
            other => panic!("{other:?}"),
        }
    }
}
