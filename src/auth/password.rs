//! Password hashing: bcrypt over a SHA-256 pre-hash, so passwords longer than bcrypt's
//! 72-byte limit are compared in full rather than truncated.

use sha2::{Digest, Sha256};

pub const MIN_LEN: usize = 8;
pub const MAX_LEN: usize = 128;

/// Why a new password is not acceptable, as a field message.
pub fn check_policy(password: &str) -> Result<(), String> {
    let len = password.chars().count();
    if len < MIN_LEN {
        Err(format!(
            "ensure this field has at least {MIN_LEN} characters"
        ))
    } else if len > MAX_LEN {
        Err(format!(
            "ensure this field has at most {MAX_LEN} characters"
        ))
    } else {
        Ok(())
    }
}

/// The stored hash of a user who has no password yet (created by the school without one):
/// no password verifies against it, so they cannot sign in until one is set.
pub const UNSET: &str = "!unset";

/// Whether `stored_hash` is a real password's hash.
pub fn is_set(stored_hash: &str) -> bool {
    stored_hash != UNSET
}

/// Hex SHA-256: 64 ASCII bytes, under bcrypt's limit and free of NUL bytes.
fn prehash(password: &str) -> String {
    let digest = Sha256::digest(password.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Hashes a password. Slow on purpose: call it off the async executor.
pub fn hash(password: &str, cost: u32) -> anyhow::Result<String> {
    Ok(bcrypt::hash(prehash(password), cost)?)
}

/// Checks a password against a stored hash. Slow on purpose: call it off the executor.
pub fn verify(password: &str, stored_hash: &str) -> bool {
    bcrypt::verify(prehash(password), stored_hash).unwrap_or(false)
}

/// A valid hash of a random password at `cost`, checked when no user matched a login so
/// that unknown identifiers take as long to refuse as wrong passwords.
pub fn dummy_hash(cost: u32) -> String {
    hash(&uuid::Uuid::new_v4().to_string(), cost).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_passwords_are_not_truncated() {
        let base = "x".repeat(80);
        let stored = hash(&format!("{base}A"), 4).expect("hash");
        assert!(verify(&format!("{base}A"), &stored));
        assert!(!verify(&format!("{base}B"), &stored));
    }

    #[test]
    fn policy_counts_characters() {
        assert!(check_policy("short").is_err());
        assert!(check_policy("ééééééé").is_err());
        assert!(check_policy("éééééééé").is_ok());
        assert!(check_policy(&"a".repeat(129)).is_err());
    }
}
