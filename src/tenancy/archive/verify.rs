//! The first pass of an import: reads the whole archive and checks it against its
//! manifest (format, every file's SHA-256, size and row count, the files' order) before
//! anything is written. A truncated, altered or foreign file is refused here, naming it.

use std::{
    fs::File,
    io::{BufReader, Read},
    path::{Path, PathBuf},
};

use flate2::read::GzDecoder;
use sha2::{Digest, Sha256};

use super::{
    ArchiveError,
    format::{
        DataFile, FORMAT, FORMAT_VERSION, MANIFEST_DIGEST_FILE, MANIFEST_FILE, MAX_MANIFEST_BYTES,
        Manifest, hex_digest,
    },
};

/// An archive whose every file matched its manifest when it was read.
#[derive(Debug, Clone)]
pub struct VerifiedArchive {
    pub path: PathBuf,
    pub manifest: Manifest,
}

/// The archive at `path` as a tar stream, gunzipped when it is gzip (told by its first
/// bytes).
pub(crate) fn open_tar(path: &Path) -> std::io::Result<tar::Archive<Box<dyn Read>>> {
    let mut file = BufReader::with_capacity(256 * 1024, File::open(path)?);
    let gzip = std::io::BufRead::fill_buf(&mut file)?.starts_with(&[0x1f, 0x8b]);
    let reader: Box<dyn Read> = if gzip {
        Box::new(GzDecoder::new(file))
    } else {
        Box::new(file)
    };
    Ok(tar::Archive::new(reader))
}

/// The UTF-8 path of a tar entry.
pub(crate) fn entry_path<R: Read>(entry: &tar::Entry<'_, R>) -> Option<String> {
    let path = entry.path().ok()?;
    path.to_str().map(str::to_owned)
}

/// Reads the archive at `path` through and checks it (see the module docs).
pub fn verify_archive(path: &Path) -> Result<VerifiedArchive, ArchiveError> {
    let damaged = |reason: String| ArchiveError::Damaged {
        file: path.display().to_string(),
        reason: one_line(&reason),
    };
    let mut archive = open_tar(path).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied => ArchiveError::Io {
            context: format!("cannot open {}", path.display()),
            source: err,
        },
        _ => damaged(err.to_string()),
    })?;
    let mut seen: Vec<DataFile> = Vec::new();
    let (mut manifest_bytes, mut digest_line) = (None, None);
    let entries = archive.entries().map_err(|err| damaged(err.to_string()))?;
    for entry in entries {
        let mut entry = entry.map_err(|err| damaged(err.to_string()))?;
        let name = entry_path(&entry).ok_or_else(|| damaged("a file name is not UTF-8".into()))?;
        let read_error = |err: std::io::Error| damaged(format!("{name}: {err}"));
        match name.as_str() {
            MANIFEST_FILE => {
                if entry.size() > MAX_MANIFEST_BYTES {
                    return Err(damaged(format!("{name} is too large")));
                }
                let mut bytes = Vec::new();
                entry.read_to_end(&mut bytes).map_err(read_error)?;
                manifest_bytes = Some(bytes);
            }
            MANIFEST_DIGEST_FILE => {
                let mut line = String::new();
                entry
                    .by_ref()
                    .take(1024)
                    .read_to_string(&mut line)
                    .map_err(read_error)?;
                digest_line = Some(line);
            }
            _ if manifest_bytes.is_some() => {
                return Err(damaged(format!("{name} comes after the manifest")));
            }
            _ => seen.push(digest_entry(&name, &mut entry).map_err(read_error)?),
        }
    }
    let manifest_bytes =
        manifest_bytes.ok_or_else(|| damaged(format!("{MANIFEST_FILE} is missing")))?;
    let expected = digest_line
        .as_deref()
        .and_then(|line| line.split_whitespace().next())
        .ok_or_else(|| damaged(format!("{MANIFEST_DIGEST_FILE} is missing")))?;
    if hex_digest(&Sha256::digest(&manifest_bytes)) != expected {
        return Err(damaged(format!(
            "{MANIFEST_FILE} does not match its SHA-256"
        )));
    }
    let manifest: Manifest = serde_json::from_slice(&manifest_bytes)
        .map_err(|err| damaged(format!("{MANIFEST_FILE}: {err}")))?;
    if manifest.format != FORMAT {
        return Err(damaged(format!(
            "not a {FORMAT} (format '{}')",
            manifest.format
        )));
    }
    if manifest.format_version != FORMAT_VERSION {
        return Err(ArchiveError::Refused(format!(
            "archive {} has format version {}; this binary reads version {FORMAT_VERSION}",
            path.display(),
            manifest.format_version
        )));
    }
    check_files(&manifest, &seen).map_err(damaged)?;
    Ok(VerifiedArchive {
        path: path.to_owned(),
        manifest,
    })
}

/// A reason as one short line: a damaged stream can put anything into a parser's message.
fn one_line(reason: &str) -> String {
    let words: Vec<&str> = reason
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .collect();
    let line = words.join(" ");
    match line.char_indices().nth(160) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

/// Reads one data file through: its size, SHA-256 and rows (lines).
fn digest_entry(name: &str, entry: &mut impl Read) -> std::io::Result<DataFile> {
    let mut hasher = Sha256::new();
    let (mut bytes, mut rows) = (0u64, 0u64);
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let read = entry.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        let data = &buffer[..read];
        hasher.update(data);
        bytes += read as u64;
        rows += data.iter().filter(|&&b| b == b'\n').count() as u64;
    }
    Ok(DataFile {
        path: name.to_owned(),
        rows,
        bytes,
        sha256: hex_digest(&hasher.finalize()),
    })
}

/// The files read must be the manifest's, in its order, each as it records, and each
/// table's rows the sum of its files'.
fn check_files(manifest: &Manifest, seen: &[DataFile]) -> Result<(), String> {
    let listed: Vec<&DataFile> = manifest.files().map(|(_, file)| file).collect();
    for (index, file) in listed.iter().enumerate() {
        let Some(read) = seen.get(index) else {
            return Err(format!("{} is missing", file.path));
        };
        if read.path != file.path {
            return Err(format!("found {} where {} belongs", read.path, file.path));
        }
        if read.bytes != file.bytes || read.sha256 != file.sha256 {
            return Err(format!("{} does not match its SHA-256", file.path));
        }
        if read.rows != file.rows {
            return Err(format!(
                "{} holds {} rows, not {}",
                file.path, read.rows, file.rows
            ));
        }
    }
    if let Some(extra) = seen.get(listed.len()) {
        return Err(format!("{} is not in the manifest", extra.path));
    }
    for table in &manifest.tables {
        let rows: u64 = table.files.iter().map(|f| f.rows).sum();
        if rows != table.rows {
            return Err(format!(
                "table {} lists {} rows, its files {rows}",
                table.name, table.rows
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn reasons_are_one_short_line() {
        assert_eq!(one_line("bad\n  header\t\u{1}x"), "bad header x");
        let long = one_line(&"word ".repeat(100));
        assert!(long.ends_with('…') && long.chars().count() == 161);
    }
}
