//! The REST binding's query parameters over a collection: `filter` (its grammar in
//! `filter.rs`), `sort` and `orderBy`, `fields`, `limit` (default 100) and `offset`,
//! answered with `X-Total-Count` and RFC 8288 `Link` headers (`next`, `prev`, `first`,
//! `last`).

use actix_web::{HttpRequest, HttpResponseBuilder};
use serde_json::{Map, Value};

use super::{
    call::OrError,
    filter::{Filter, compare, has_field, parse_filter, texts},
};
use crate::school::oneroster::roster::Entity;

pub const DEFAULT_LIMIT: usize = 100;

/// The query parameters of a read.
#[derive(Debug, Default)]
pub struct ReadQuery {
    pub limit: usize,
    pub offset: usize,
    pub sort: Option<String>,
    pub descending: bool,
    pub fields: Option<Vec<String>>,
    pub filter: Option<Filter>,
    /// Every parameter as given, for the `Link` headers.
    params: Vec<(String, String)>,
}

impl ReadQuery {
    pub fn parse(req: &HttpRequest) -> Result<Self, OrError> {
        let params: Vec<(String, String)> =
            serde_urlencoded::from_str(req.query_string()).unwrap_or_default();
        let get = |key: &str| {
            params
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.trim().to_owned())
        };
        let number = |key: &str, default: usize, min: usize| -> Result<usize, OrError> {
            match get(key) {
                None => Ok(default),
                Some(raw) => raw
                    .parse::<usize>()
                    .ok()
                    .filter(|n| *n >= min)
                    .ok_or_else(|| {
                        OrError::bad(
                            "invaliddata",
                            format!("{key} must be an integer of at least {min}"),
                        )
                    }),
            }
        };
        let descending = match get("orderBy").as_deref() {
            None | Some("asc") | Some("") => false,
            Some("desc") => true,
            Some(other) => {
                return Err(OrError::bad(
                    "invalid_sort_field",
                    format!("orderBy must be asc or desc, not {other}"),
                ));
            }
        };
        Ok(Self {
            limit: number("limit", DEFAULT_LIMIT, 1)?,
            offset: number("offset", 0, 0)?,
            sort: get("sort").filter(|s| !s.is_empty()),
            descending,
            fields: get("fields").filter(|f| !f.is_empty()).map(|f| {
                f.split(',')
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty())
                    .collect()
            }),
            filter: get("filter")
                .filter(|f| !f.is_empty())
                .map(|f| parse_filter(&f))
                .transpose()?,
            params,
        })
    }

    /// Checks every field the query names against the collection's (those of its first
    /// record; an empty collection has nothing to refuse).
    fn check_fields(&self, sample: Option<&Entity>) -> Result<(), OrError> {
        let Some(sample) = sample else { return Ok(()) };
        if let Some(filter) = &self.filter {
            if let Some(p) = filter
                .predicates()
                .into_iter()
                .find(|p| !has_field(sample, &p.field))
            {
                return Err(OrError::bad(
                    "invalid_filter_field",
                    format!("no field {}", p.field),
                ));
            }
        }
        if let Some(sort) = self
            .sort
            .as_ref()
            .filter(|s| !sample.contains_key(s.as_str()))
        {
            return Err(OrError::bad(
                "invalid_sort_field",
                format!("no field {sort}"),
            ));
        }
        if let Some(field) = self
            .fields
            .iter()
            .flatten()
            .find(|f| !sample.contains_key(f.as_str()))
        {
            return Err(OrError::bad(
                "invalid_selection_field",
                format!("no field {field}"),
            ));
        }
        Ok(())
    }

    /// Selects the requested fields of one record.
    pub fn project(&self, e: Entity) -> Entity {
        match &self.fields {
            None => e,
            Some(fields) => e.into_iter().filter(|(k, _)| fields.contains(k)).collect(),
        }
    }

    /// The page of `records` the query asks for, and how many matched.
    pub fn apply(&self, records: Vec<Entity>) -> Result<(usize, Vec<Entity>), OrError> {
        let (total, page) = self.page_of(records)?;
        Ok((total, page.into_iter().map(|e| self.project(e)).collect()))
    }

    /// The page of `records` the query asks for, whole (not yet narrowed to `fields`), and
    /// how many matched.
    pub fn page_of(&self, mut records: Vec<Entity>) -> Result<(usize, Vec<Entity>), OrError> {
        self.check_fields(records.first())?;
        let sees_deleted = self.filter.as_ref().is_some_and(Filter::sees_deleted);
        records.retain(|e| {
            (sees_deleted || e.get("status").and_then(Value::as_str) != Some("tobedeleted"))
                && self.filter.as_ref().is_none_or(|f| f.matches(e))
        });
        if let Some(sort) = &self.sort {
            let key = |e: &Entity| e.get(sort).map(texts).unwrap_or_default().join(",");
            records.sort_by(|a, b| compare(&key(a), &key(b)));
            if self.descending {
                records.reverse();
            }
        }
        let total = records.len();
        let page = records
            .into_iter()
            .skip(self.offset)
            .take(self.limit)
            .collect();
        Ok((total, page))
    }

    /// `X-Total-Count` and the `Link` header of a page of `total` records.
    pub fn headers(&self, req: &HttpRequest, total: usize, answer: &mut HttpResponseBuilder) {
        answer.insert_header(("X-Total-Count", total.to_string()));
        let info = req.connection_info();
        let base = format!("{}://{}{}", info.scheme(), info.host(), req.path());
        let link = |offset: usize, rel: &str| {
            let mut params: Vec<(String, String)> = self
                .params
                .iter()
                .filter(|(k, _)| k != "offset" && k != "limit")
                .cloned()
                .collect();
            params.push(("limit".into(), self.limit.to_string()));
            params.push(("offset".into(), offset.to_string()));
            let query = serde_urlencoded::to_string(&params).unwrap_or_default();
            format!("<{base}?{query}>; rel=\"{rel}\"")
        };
        let last = total.saturating_sub(1) / self.limit * self.limit;
        let mut links = vec![link(0, "first")];
        if self.offset + self.limit < total {
            links.push(link(self.offset + self.limit, "next"));
        }
        if self.offset > 0 {
            links.push(link(self.offset.saturating_sub(self.limit), "prev"));
        }
        links.push(link(last, "last"));
        answer.insert_header(("Link", links.join(", ")));
    }
}

/// One record, as the binding answers a single read: `{<singular>: record}`.
pub fn single(key: &str, record: Entity) -> Value {
    let mut wrapper = Map::new();
    wrapper.insert(key.into(), Value::Object(record));
    Value::Object(wrapper)
}
