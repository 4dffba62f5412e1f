//! `Secret`: a configured secret (the JWT signing key and the like). It never prints (its
//! `Debug` says `Secret(..)`, so a logged `Config` shows no key), and two secrets compare
//! in constant time: how long a comparison takes says nothing about where they differ.

use std::fmt;

#[derive(Clone, Default)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself, for the code that signs or hashes with it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `other` is this secret, in time that depends on the lengths only.
    pub fn matches(&self, other: &[u8]) -> bool {
        let mine = self.0.as_bytes();
        let differences = mine
            .iter()
            .zip(other)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        // `black_box`: the compiler may not turn the fold into an early exit.
        std::hint::black_box(differences) == 0 && mine.len() == other.len()
    }
}

impl PartialEq for Secret {
    fn eq(&self, other: &Self) -> bool {
        self.matches(other.0.as_bytes())
    }
}

impl Eq for Secret {}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Self::new(value)
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self(value)
    }
}

#[cfg(test)]
mod tests {
    use super::Secret;

    #[test]
    fn a_secret_never_prints_and_compares_by_value() {
        let secret = Secret::from("correct horse battery staple, 32+ bytes");
        let shown = format!("{secret:?} {:?}", Some(&secret));
        assert!(!shown.contains("horse"), "{shown}");
        assert_eq!(
            secret,
            Secret::from("correct horse battery staple, 32+ bytes")
        );
        assert_ne!(
            secret,
            Secret::from("correct horse battery staple, 32+ byteZ")
        );
        assert_ne!(
            secret,
            Secret::from("correct horse"),
            "a prefix is not the secret"
        );
        assert!(secret.matches(b"correct horse battery staple, 32+ bytes"));
        assert!(!secret.matches(b""));
    }
}
