//! `SchemaName`: a PostgreSQL schema name that passed the tenant naming rule, so it can be
//! put into SQL as a quoted identifier without any further escaping concerns.

use std::{fmt, str::FromStr};

use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct SchemaName(String);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid schema name {0:?}: use 1-63 characters a-z, 0-9 and _, starting with a letter; \
     not 'public', 'information_schema' or a name starting with 'pg_'"
)]
pub struct InvalidSchemaName(pub String);

impl SchemaName {
    pub fn parse(raw: &str) -> Result<Self, InvalidSchemaName> {
        let valid_chars = raw.len() <= 63
            && raw.starts_with(|c: char| c.is_ascii_lowercase())
            && raw
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        let reserved = raw == "public" || raw == "information_schema" || raw.starts_with("pg_");
        if valid_chars && !reserved {
            Ok(Self(raw.to_owned()))
        } else {
            Err(InvalidSchemaName(raw.to_owned()))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name as a quoted SQL identifier. The naming rule admits no quote characters, so
    /// quoting cannot be escaped from.
    pub fn quoted(&self) -> String {
        format!("\"{}\"", self.0)
    }
}

impl FromStr for SchemaName {
    type Err = InvalidSchemaName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl fmt::Display for SchemaName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_ordinary_names() {
        for name in ["greenwood", "a", "school_2", &"a".repeat(63)] {
            assert!(SchemaName::parse(name).is_ok(), "{name}");
        }
    }

    #[test]
    fn refuses_reserved_and_malformed_names() {
        for name in [
            "",
            "public",
            "information_schema",
            "pg_temp",
            "2school",
            "_x",
            "Greenwood",
            "green-wood",
            "green wood",
            "x\"; DROP SCHEMA public; --",
            "école",
            &"a".repeat(64),
        ] {
            assert!(SchemaName::parse(name).is_err(), "{name}");
        }
    }

    #[test]
    fn quotes_as_identifier() {
        assert_eq!(
            SchemaName::parse("greenwood").expect("valid").quoted(),
            "\"greenwood\""
        );
    }
}
