//! Archives are authenticated with a keyed MAC over their manifest: HMAC-SHA256 under the
//! platform's `ARCHIVE_SIGNING_KEY`, written beside the manifest as
//! `manifest.json.hmac-sha256`. The manifest records every data file's SHA-256, size and
//! rows, so the MAC covers the whole archive; the plain `manifest.json.sha256` only catches
//! accidents, since whoever alters an archive can write it anew.
//!
//! The key has no default (nothing it could be derived from is secret and belongs to
//! archives alone): without one, exports are unsigned and an import refuses them unless
//! the operator says `--trust-unsigned`.

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::format::hex_digest;

/// The MAC algorithm, as its file names it.
pub const MAC_ALGORITHM: &str = "hmac-sha256";

/// A platform's key for signing and checking archives.
#[derive(Clone)]
pub struct ArchiveKey(Vec<u8>);

impl std::fmt::Debug for ArchiveKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ArchiveKey(..)")
    }
}

/// How an import treats the archive's signature.
#[derive(Debug, Clone, Default)]
pub struct Authentication {
    /// This platform's key (`ARCHIVE_SIGNING_KEY`), if it has one.
    pub key: Option<ArchiveKey>,
    /// `--trust-unsigned`: the operator vouches for an archive that is unsigned, signed
    /// under another key, or cannot be checked for want of a key.
    pub trust_unsigned: bool,
}

impl ArchiveKey {
    pub fn new(secret: &str) -> Self {
        Self(secret.as_bytes().to_vec())
    }

    fn mac(&self) -> Hmac<Sha256> {
        Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes any key length")
    }

    /// The line of the MAC file for `manifest`: `hmac-sha256 <hex>`.
    pub fn sign(&self, manifest: &[u8]) -> String {
        let mut mac = self.mac();
        mac.update(manifest);
        format!(
            "{MAC_ALGORITHM} {}\n",
            hex_digest(&mac.finalize().into_bytes())
        )
    }

    /// Whether `line` (the MAC file's content) is this key's MAC of `manifest`, compared
    /// in constant time.
    pub fn verifies(&self, manifest: &[u8], line: &str) -> bool {
        let mut words = line.split_whitespace();
        let (Some(MAC_ALGORITHM), Some(hex), None) = (words.next(), words.next(), words.next())
        else {
            return false;
        };
        let Some(tag) = from_hex(hex) else {
            return false;
        };
        let mut mac = self.mac();
        mac.update(manifest);
        mac.verify_slice(&tag).is_ok()
    }
}

fn from_hex(hex: &str) -> Option<Vec<u8>> {
    if hex.len() % 2 != 0 || !hex.is_ascii() {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&hex[at..at + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_verifies_under_its_key_only_and_for_its_manifest_only() {
        let key = ArchiveKey::new("one platform's key, long enough to use");
        let other = ArchiveKey::new("another platform's key, long enough too");
        let line = key.sign(b"{\"manifest\": 1}");
        assert!(line.starts_with("hmac-sha256 ") && line.ends_with('\n'));
        assert!(key.verifies(b"{\"manifest\": 1}", &line));
        assert!(!key.verifies(b"{\"manifest\": 2}", &line));
        assert!(!other.verifies(b"{\"manifest\": 1}", &line));
        for bad in [
            "",
            "hmac-sha256",
            "hmac-sha256 zz",
            "sha256 00",
            &line.replace(' ', "  x "),
        ] {
            assert!(!key.verifies(b"{\"manifest\": 1}", bad), "{bad}");
        }
    }
}
