//! The first pass of an import: reads the whole archive and checks it against its
//! manifest (format, every file's SHA-256, size and row count, the files' order) and the
//! manifest against its MAC under the platform's key, before anything is written. A
//! truncated, altered, foreign or unsigned file is refused here, naming it, and so is one
//! that inflates past the import's byte limit.

use std::{
    fs::File,
    io::{BufReader, Read},
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
};

use flate2::read::GzDecoder;
use sha2::{Digest, Sha256};

use super::{
    ArchiveError,
    format::{
        DataFile, FORMAT, FORMAT_VERSION, MANIFEST_DIGEST_FILE, MANIFEST_FILE, MANIFEST_MAC_FILE,
        MAX_ENTRIES, MAX_MANIFEST_BYTES, Manifest, hex_digest,
    },
    signing::Authentication,
};

/// An archive whose every file matched its manifest when it was read.
#[derive(Debug, Clone)]
pub struct VerifiedArchive {
    pub path: PathBuf,
    pub manifest: Manifest,
    /// Whether its MAC was checked under this platform's key (otherwise the operator
    /// trusted it with `--trust-unsigned`).
    pub authenticated: bool,
    /// The most bytes it may inflate to, for the second pass too.
    pub max_bytes: u64,
}

/// Set once a `Capped` reader refused to read past its limit.
#[derive(Clone, Default)]
pub(crate) struct Overflow(Arc<AtomicBool>);

impl Overflow {
    pub fn happened(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Reads at most `left` bytes, then fails (and says so in `overflow`).
struct Capped<R> {
    inner: R,
    left: u64,
    overflow: Overflow,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            // At the limit: end of stream is fine, one more byte is not.
            let mut probe = [0u8; 1];
            if self.inner.read(&mut probe)? == 0 {
                return Ok(0);
            }
            self.overflow.0.store(true, Ordering::Relaxed);
            return Err(std::io::Error::other("past the import's byte limit"));
        }
        let room = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let read = self.inner.read(&mut buf[..room])?;
        self.left -= read as u64;
        Ok(read)
    }
}

/// The archive at `path` as a tar stream, gunzipped when it is gzip (told by its first
/// bytes), of which at most `max_bytes` are read (`Overflow` tells when that was why a
/// read failed).
pub(crate) fn open_tar(
    path: &Path,
    max_bytes: u64,
) -> std::io::Result<(tar::Archive<Box<dyn Read>>, Overflow)> {
    let mut file = BufReader::with_capacity(256 * 1024, File::open(path)?);
    let gzip = std::io::BufRead::fill_buf(&mut file)?.starts_with(&[0x1f, 0x8b]);
    let reader: Box<dyn Read> = if gzip {
        Box::new(GzDecoder::new(file))
    } else {
        Box::new(file)
    };
    let overflow = Overflow::default();
    let capped = Capped {
        inner: reader,
        left: max_bytes,
        overflow: overflow.clone(),
    };
    Ok((tar::Archive::new(Box::new(capped)), overflow))
}

/// The UTF-8 path of a tar entry.
pub(crate) fn entry_path<R: Read>(entry: &tar::Entry<'_, R>) -> Option<String> {
    let path = entry.path().ok()?;
    path.to_str().map(str::to_owned)
}

/// Reads the archive at `path` through and checks it (see the module docs): at most
/// `max_bytes` of it, and its signature as `authentication` says.
pub fn verify_archive(
    path: &Path,
    authentication: &Authentication,
    max_bytes: u64,
) -> Result<VerifiedArchive, ArchiveError> {
    let file = path.display().to_string();
    let (mut archive, overflow) = open_tar(path, max_bytes).map_err(|err| match err.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied => ArchiveError::Io {
            context: format!("cannot open {}", path.display()),
            source: err,
        },
        _ => ArchiveError::Damaged {
            file: file.clone(),
            reason: one_line(&err.to_string()),
        },
    })?;
    let read = read_entries(path, &mut archive).map_err(|err| {
        if overflow.happened() {
            ArchiveError::TooLarge {
                file: file.clone(),
                limit: max_bytes,
            }
        } else {
            err
        }
    })?;
    let damaged = |reason: String| ArchiveError::Damaged {
        file: file.clone(),
        reason: one_line(&reason),
    };
    let manifest_bytes = read
        .manifest
        .ok_or_else(|| damaged(format!("{MANIFEST_FILE} is missing")))?;
    let expected = read
        .digest_line
        .as_deref()
        .and_then(|line| line.split_whitespace().next())
        .ok_or_else(|| damaged(format!("{MANIFEST_DIGEST_FILE} is missing")))?;
    if hex_digest(&Sha256::digest(&manifest_bytes)) != expected {
        return Err(damaged(format!(
            "{MANIFEST_FILE} does not match its SHA-256"
        )));
    }
    let authenticated = authenticate(&file, authentication, &manifest_bytes, read.mac_line)?;
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
    check_files(&manifest, &read.files).map_err(damaged)?;
    Ok(VerifiedArchive {
        path: path.to_owned(),
        manifest,
        authenticated,
        max_bytes,
    })
}

/// What the first pass read: each data file's record, the manifest and the lines beside it.
#[derive(Default)]
struct Entries {
    files: Vec<DataFile>,
    manifest: Option<Vec<u8>>,
    digest_line: Option<String>,
    mac_line: Option<String>,
}

fn read_entries(
    path: &Path,
    archive: &mut tar::Archive<Box<dyn Read>>,
) -> Result<Entries, ArchiveError> {
    let damaged = |reason: String| ArchiveError::Damaged {
        file: path.display().to_string(),
        reason: one_line(&reason),
    };
    let mut read = Entries::default();
    let entries = archive.entries().map_err(|err| damaged(err.to_string()))?;
    for (count, entry) in entries.enumerate() {
        if count >= MAX_ENTRIES {
            return Err(damaged(format!("it holds more than {MAX_ENTRIES} files")));
        }
        let mut entry = entry.map_err(|err| damaged(err.to_string()))?;
        let name = entry_path(&entry).ok_or_else(|| damaged("a file name is not UTF-8".into()))?;
        let read_error = |err: std::io::Error| damaged(format!("{name}: {err}"));
        let line = |entry: &mut tar::Entry<'_, Box<dyn Read>>| {
            let mut line = String::new();
            entry
                .by_ref()
                .take(1024)
                .read_to_string(&mut line)
                .map(|_| line)
        };
        match name.as_str() {
            MANIFEST_FILE => {
                if entry.size() > MAX_MANIFEST_BYTES {
                    return Err(damaged(format!("{name} is too large")));
                }
                let mut bytes = Vec::new();
                entry.read_to_end(&mut bytes).map_err(read_error)?;
                read.manifest = Some(bytes);
            }
            MANIFEST_DIGEST_FILE => read.digest_line = Some(line(&mut entry).map_err(read_error)?),
            MANIFEST_MAC_FILE => read.mac_line = Some(line(&mut entry).map_err(read_error)?),
            _ if read.manifest.is_some() => {
                return Err(damaged(format!("{name} comes after the manifest")));
            }
            _ => read
                .files
                .push(digest_entry(&name, &mut entry).map_err(read_error)?),
        }
    }
    Ok(read)
}

/// Whether the manifest's MAC checks out under this platform's key; an archive it does not
/// vouch for passes only with `--trust-unsigned` (answered `false`).
fn authenticate(
    file: &str,
    authentication: &Authentication,
    manifest: &[u8],
    mac_line: Option<String>,
) -> Result<bool, ArchiveError> {
    let refused = |reason: &str| {
        if authentication.trust_unsigned {
            Ok(false)
        } else {
            Err(ArchiveError::Unauthenticated {
                file: file.to_owned(),
                reason: reason.to_owned(),
            })
        }
    };
    match (&authentication.key, mac_line) {
        (Some(key), Some(line)) if key.verifies(manifest, &line) => Ok(true),
        (Some(_), Some(_)) => refused(
            "is not signed with this platform's ARCHIVE_SIGNING_KEY (signed under another \
             key, or altered since)",
        ),
        (_, None) => refused("is not signed (it has no manifest.json.hmac-sha256)"),
        (None, Some(_)) => refused(
            "is signed, but ARCHIVE_SIGNING_KEY is not set here, so its signature cannot be \
             checked",
        ),
    }
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
