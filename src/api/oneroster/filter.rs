//! The REST binding's `filter` grammar: `field op 'value'` with the ops
//! `= != > >= < <= ~`, at most one `AND` or `OR`, single or double quotes; a field may be
//! a dotted path (`class.sourcedId`). Values compare as instants, numbers or text.

use std::cmp::Ordering;

use chrono::{DateTime, NaiveDate, Utc};
use serde_json::Value;

use super::call::OrError;
use crate::school::oneroster::roster::Entity;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
    Contains,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Predicate {
    pub field: String,
    pub op: Op,
    pub value: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    One(Predicate),
    And(Predicate, Predicate),
    Or(Predicate, Predicate),
}

impl Filter {
    pub(super) fn predicates(&self) -> Vec<&Predicate> {
        match self {
            Filter::One(p) => vec![p],
            Filter::And(a, b) | Filter::Or(a, b) => vec![a, b],
        }
    }

    /// Whether the filter asks about status or change time: then records already
    /// deleted (`tobedeleted`) are answered too, as a delta sync needs.
    pub fn sees_deleted(&self) -> bool {
        self.predicates()
            .iter()
            .any(|p| p.field == "status" || p.field == "dateLastModified")
    }

    /// The earliest change time the filter lets through (`dateLastModified >` or `>=`,
    /// alone or in an `AND`): a collection may read only the records changed since, and
    /// filters those as usual. `None` when any change time may match.
    pub fn changed_since(&self) -> Option<DateTime<Utc>> {
        let bound = |p: &Predicate| {
            (p.field == "dateLastModified" && matches!(p.op, Op::Gt | Op::Ge))
                .then(|| instant(&p.value))
                .flatten()
        };
        match self {
            Filter::One(p) => bound(p),
            Filter::And(a, b) => bound(a).max(bound(b)),
            Filter::Or(..) => None,
        }
    }

    pub(super) fn matches(&self, e: &Entity) -> bool {
        match self {
            Filter::One(p) => p.matches(e),
            Filter::And(a, b) => a.matches(e) && b.matches(e),
            Filter::Or(a, b) => a.matches(e) || b.matches(e),
        }
    }
}

/// The position of ` AND ` or ` OR ` outside quotes, with its length.
fn split_logical(text: &str) -> Option<(usize, usize, bool)> {
    let mut quote: Option<char> = None;
    let bytes: Vec<(usize, char)> = text.char_indices().collect();
    for (i, &(at, c)) in bytes.iter().enumerate() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == ' ' => {
                let rest = &text[at..];
                if rest.starts_with(" AND ") {
                    return Some((at, 5, true));
                }
                if rest.starts_with(" OR ") {
                    return Some((at, 4, false));
                }
            }
            None => {}
        }
        let _ = i;
    }
    None
}

pub fn parse_filter(text: &str) -> Result<Filter, OrError> {
    let text = text.trim();
    match split_logical(text) {
        Some((at, len, and)) => {
            let (a, b) = (
                parse_predicate(&text[..at])?,
                parse_predicate(&text[at + len..])?,
            );
            if split_logical(&text[at + len..]).is_some() {
                return Err(OrError::bad(
                    "invalid_filter_field",
                    "at most one AND or OR",
                ));
            }
            Ok(if and {
                Filter::And(a, b)
            } else {
                Filter::Or(a, b)
            })
        }
        None => Ok(Filter::One(parse_predicate(text)?)),
    }
}

fn parse_predicate(text: &str) -> Result<Predicate, OrError> {
    let text = text.trim();
    let bad = || {
        OrError::bad(
            "invalid_filter_field",
            format!("cannot read the filter \"{text}\""),
        )
    };
    let end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_'))
        .ok_or_else(bad)?;
    let (field, rest) = (&text[..end], text[end..].trim_start());
    if field.is_empty() {
        return Err(bad());
    }
    let (op, rest) = [
        (">=", Op::Ge),
        ("<=", Op::Le),
        ("!=", Op::Ne),
        ("=", Op::Eq),
        (">", Op::Gt),
        ("<", Op::Lt),
        ("~", Op::Contains),
    ]
    .iter()
    .find_map(|(token, op)| rest.strip_prefix(token).map(|rest| (*op, rest.trim())))
    .ok_or_else(bad)?;
    let value = match rest.chars().next() {
        Some(q @ ('\'' | '"')) => rest
            .strip_prefix(q)
            .and_then(|r| r.strip_suffix(q))
            .ok_or_else(bad)?,
        _ => rest,
    };
    Ok(Predicate {
        field: field.to_owned(),
        op,
        value: value.to_owned(),
    })
}

/// The comparable text of a field: a string as it is, a reference by its sourcedId,
/// numbers and booleans as JSON writes them; a list gives each of its items.
pub(super) fn texts(value: &Value) -> Vec<String> {
    match value {
        Value::String(s) => vec![s.clone()],
        Value::Null => vec![String::new()],
        Value::Array(items) => items.iter().flat_map(texts).collect(),
        Value::Object(o) => o.get("sourcedId").map(texts).unwrap_or_default(),
        other => vec![other.to_string()],
    }
}

fn instant(text: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .ok()
        .or_else(|| {
            NaiveDate::parse_from_str(text, "%Y-%m-%d")
                .ok()
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .map(|t| t.and_utc())
        })
}

/// Orders two field texts: as instants when both are, as numbers when both are, else as text.
pub(super) fn compare(a: &str, b: &str) -> Ordering {
    if let (Some(x), Some(y)) = (instant(a), instant(b)) {
        return x.cmp(&y);
    }
    if let (Ok(x), Ok(y)) = (a.parse::<f64>(), b.parse::<f64>()) {
        return x.partial_cmp(&y).unwrap_or(Ordering::Equal);
    }
    a.cmp(b)
}

/// The values a field path names: `class` the field itself, `class.sourcedId` or
/// `roles.role` a field inside it (in each item of a list), as clients write them.
fn at_path<'a>(e: &'a Entity, path: &str) -> Vec<&'a Value> {
    let mut parts = path.split('.');
    let Some(first) = parts.next().and_then(|name| e.get(name)) else {
        return Vec::new();
    };
    let mut values = vec![first];
    for part in parts {
        values = values
            .into_iter()
            .flat_map(|v| match v {
                Value::Array(items) => items.iter().collect(),
                other => vec![other],
            })
            .filter_map(|v| v.get(part))
            .collect();
    }
    values
}

/// The record has the field a path starts with.
pub(super) fn has_field(e: &Entity, path: &str) -> bool {
    e.contains_key(path.split('.').next().unwrap_or(path))
}

impl Predicate {
    fn matches(&self, e: &Entity) -> bool {
        let values: Vec<String> = at_path(e, &self.field)
            .into_iter()
            .flat_map(texts)
            .collect();
        let holds = |v: &String| match self.op {
            Op::Eq => compare(v, &self.value) == Ordering::Equal,
            Op::Ne => compare(v, &self.value) != Ordering::Equal,
            Op::Gt => compare(v, &self.value) == Ordering::Greater,
            Op::Ge => compare(v, &self.value) != Ordering::Less,
            Op::Lt => compare(v, &self.value) == Ordering::Less,
            Op::Le => compare(v, &self.value) != Ordering::Greater,
            Op::Contains => v.to_lowercase().contains(&self.value.to_lowercase()),
        };
        match self.op {
            // A list differs from a value when none of its items equals it.
            Op::Ne => values.iter().all(holds),
            _ => values.iter().any(holds),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn entity(value: Value) -> Entity {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn the_filter_grammar_reads_every_operator_and_one_logical() {
        for (text, op) in [
            ("a='1'", Op::Eq),
            ("a != '1'", Op::Ne),
            ("a>'1'", Op::Gt),
            ("a >= '1'", Op::Ge),
            ("a<'1'", Op::Lt),
            ("a<='1'", Op::Le),
            ("a~'1'", Op::Contains),
        ] {
            assert_eq!(
                parse_filter(text).ok(),
                Some(Filter::One(Predicate {
                    field: "a".into(),
                    op,
                    value: "1".into()
                })),
                "{text}"
            );
        }
        assert!(matches!(
            parse_filter("a='x AND y' AND b='2'"),
            Ok(Filter::And(..))
        ));
        assert!(matches!(parse_filter("a='1' OR b='2'"), Ok(Filter::Or(..))));
        assert!(parse_filter("a='1' AND b='2' AND c='3'").is_err());
        assert!(parse_filter("='1'").is_err());
        assert!(parse_filter("a '1'").is_err());
    }

    #[test]
    fn predicates_compare_times_numbers_references_and_lists() {
        let e = entity(
            json!({"dateLastModified": "2026-11-26T08:00:00.000Z", "score": 7.5,
            "class": {"sourcedId": "c1"}, "roles": [{"sourcedId": "r1"}], "givenName": "Ada"}),
        );
        let holds = |text: &str| parse_filter(text).map(|f| f.matches(&e)).unwrap_or(false);
        assert!(holds("dateLastModified>'2026-11-26T07:59:59Z'"));
        assert!(!holds("dateLastModified>'2026-11-26T08:00:00Z'"));
        assert!(holds("score>='7.25'") && holds("score<'10'"));
        assert!(holds("class='c1'") && holds("roles='r1'"));
        assert!(holds("givenName~'ad'") && holds("givenName!='Bob'"));
        // Dotted paths reach inside a reference and into each item of a list.
        assert!(holds("class.sourcedId='c1'") && !holds("class.sourcedId='c2'"));
        assert!(holds("roles.sourcedId='r1'"));
        assert!(!holds("class.title='c1'"));
    }

    /// A delta sync's bound: only `>`/`>=` on `dateLastModified`, alone or in an `AND`.
    #[test]
    fn a_filter_bounds_the_change_times_it_can_match() {
        let since = |text: &str| parse_filter(text).expect("filter").changed_since();
        let t = instant("2026-11-26T08:00:00Z");
        assert_eq!(since("dateLastModified>'2026-11-26T08:00:00Z'"), t);
        assert_eq!(since("dateLastModified >= '2026-11-26T08:00:00Z'"), t);
        assert_eq!(
            since("status='active' AND dateLastModified>'2026-11-26T08:00:00Z'"),
            t
        );
        assert_eq!(since("dateLastModified<'2026-11-26T08:00:00Z'"), None);
        assert_eq!(
            since("status='active' OR dateLastModified>'2026-11-26T08:00:00Z'"),
            None
        );
        assert_eq!(since("givenName>'A'"), None);
        assert_eq!(since("dateLastModified>'yesterday'"), None);
    }
}
