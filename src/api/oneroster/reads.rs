//! The binding's reads: every collection (`collections.rs`), its single-record form and
//! the nested reads. A collection is read from the data layer, narrowed by what the path
//! names, then filtered, sorted and paged by `query`.

use std::collections::HashSet;

use actix_web::{HttpRequest, HttpResponse};
use serde_json::{Map, Value};

use super::{
    call::{self, OrError},
    collections::{Collection, ENROLLMENTS},
    query::{ReadQuery, single},
};
use crate::{
    school::oneroster::roster::{Entity, Provider},
    tenancy::TenantConn,
};

/// How the records of a nested read relate to the record(s) its path names.
#[derive(Clone, Copy)]
pub enum Relation {
    /// Every record of the child collection (a class's categories: they are the school's).
    Every,
    /// The child's reference (or list of references) `field` names the parent.
    Field(&'static str),
    /// Users enrolled in the class with this role.
    Members(&'static str),
    /// Classes the user is enrolled in.
    ClassesOf,
    /// Results of the class (first id) for the line item (second id) in `field`.
    AlsoField(&'static str),
}

/// A nested read: `<parent>/{id}/<child>`, or with a second id.
pub struct Nested {
    pub parent: &'static Collection,
    pub child: &'static Collection,
    pub relation: Relation,
    /// Where the second id's record is looked up (`lineItems`, `students`).
    pub second: Option<&'static Collection>,
}

fn names(e: &Entity, field: &str, id: &str) -> bool {
    match e.get(field) {
        Some(Value::Array(items)) => items.iter().any(|r| r["sourcedId"] == id),
        Some(Value::Object(r)) => r.get("sourcedId").and_then(Value::as_str) == Some(id),
        Some(Value::String(s)) => s == id,
        _ => false,
    }
}

fn enrolled(
    p: &Provider,
    conn: &mut TenantConn,
    keep: impl Fn(&Entity) -> bool,
    take: &str,
) -> Result<HashSet<String>, OrError> {
    Ok(ENROLLMENTS
        .records(p, conn)?
        .into_iter()
        .filter(|e| e["status"] != "tobedeleted" && keep(e))
        .filter_map(|e| e[take]["sourcedId"].as_str().map(str::to_owned))
        .collect())
}

impl Nested {
    fn records(
        &self,
        p: &Provider,
        conn: &mut TenantConn,
        ids: &[String],
    ) -> Result<Vec<Entity>, OrError> {
        let id = ids.first().map(String::as_str).unwrap_or_default();
        self.parent.find(p, conn, id)?;
        if let (Some(second), Some(other)) = (self.second, ids.get(1)) {
            second.find(p, conn, other)?;
        }
        let records = match (self.relation, ids.get(1)) {
            (Relation::AlsoField(field), Some(other)) => {
                self.child.records_naming(p, conn, field, other)?
            }
            _ => self.child.records(p, conn)?,
        };
        let keep: Box<dyn Fn(&Entity) -> bool> = match self.relation {
            Relation::Every => Box::new(|_| true),
            Relation::Field(field) => Box::new(move |e| names(e, field, id)),
            Relation::Members(role) => {
                let members = enrolled(
                    p,
                    conn,
                    |e| names(e, "class", id) && e["role"] == role,
                    "user",
                )?;
                Box::new(move |e| e["sourcedId"].as_str().is_some_and(|s| members.contains(s)))
            }
            Relation::ClassesOf => {
                let classes = enrolled(p, conn, |e| names(e, "user", id), "class")?;
                Box::new(move |e| e["sourcedId"].as_str().is_some_and(|s| classes.contains(s)))
            }
            Relation::AlsoField(field) => {
                let other = ids.get(1).cloned().unwrap_or_default();
                Box::new(move |e| names(e, "class", id) && names(e, field, &other))
            }
        };
        Ok(records.into_iter().filter(|e| keep(e)).collect())
    }
}

/// The ids of the path, in order.
fn path_ids(req: &HttpRequest) -> Vec<String> {
    ["id", "second"]
        .iter()
        .filter_map(|key| req.match_info().get(key).map(str::to_owned))
        .collect()
}

/// Answers a page of `records` as `{<plural>: [...]}` with the paging headers.
fn page(
    req: &HttpRequest,
    query: &ReadQuery,
    plural: &str,
    total: usize,
    records: Vec<Entity>,
) -> HttpResponse {
    let mut answer = HttpResponse::Ok();
    query.headers(req, total, &mut answer);
    let mut body = Map::new();
    body.insert(
        plural.into(),
        Value::Array(records.into_iter().map(Value::Object).collect()),
    );
    answer.json(Value::Object(body))
}

pub async fn list(
    req: HttpRequest,
    collection: &'static Collection,
) -> Result<HttpResponse, OrError> {
    let query = ReadQuery::parse(&req);
    let (query, (total, records)) = call::run(&req, collection.scopes, move |conn, p, _| {
        let query = query?;
        let records = collection.records_for(p, conn, query.filter.as_ref())?;
        let (total, page) = query.page_of(records)?;
        call::disclosed(conn, collection.singular, &page)?;
        let page = page.into_iter().map(|e| query.project(e)).collect();
        Ok((query, (total, page)))
    })
    .await?;
    Ok(page(&req, &query, collection.plural, total, records))
}

pub async fn one(
    req: HttpRequest,
    collection: &'static Collection,
) -> Result<HttpResponse, OrError> {
    let query = ReadQuery::parse(&req);
    let id = path_ids(&req).into_iter().next().unwrap_or_default();
    let record = call::run(&req, collection.scopes, move |conn, p, _| {
        let query = query?;
        let record = collection.find(p, conn, &id)?;
        call::disclosed(conn, collection.singular, std::slice::from_ref(&record))?;
        Ok(query.project(record))
    })
    .await?;
    Ok(HttpResponse::Ok().json(single(collection.singular, record)))
}

pub async fn nested(req: HttpRequest, route: &'static Nested) -> Result<HttpResponse, OrError> {
    let query = ReadQuery::parse(&req);
    let ids = path_ids(&req);
    let (query, (total, records)) = call::run(&req, route.child.scopes, move |conn, p, _| {
        let query = query?;
        let (total, page) = query.page_of(route.records(p, conn, &ids)?)?;
        call::disclosed(conn, route.child.singular, &page)?;
        let page = page.into_iter().map(|e| query.project(e)).collect();
        Ok((query, (total, page)))
    })
    .await?;
    Ok(page(&req, &query, route.child.plural, total, records))
}
