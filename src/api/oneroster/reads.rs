//! The binding's reads: every collection, its single-record form and the nested reads.
//! A collection is read whole from the data layer, narrowed by what the path names, then
//! filtered, sorted and paged by `query`.

use std::collections::HashSet;

use actix_web::{HttpRequest, HttpResponse};
use serde_json::{Map, Value};

use super::{
    call::{self, DEMOGRAPHICS_READ, GRADEBOOK_READ, OrError, ROSTER_READ, Scopes},
    query::{ReadQuery, single},
};
use crate::{
    school::oneroster::{
        gradebook, people,
        roster::{self, Entity, Provider},
        sessions,
    },
    tenancy::TenantConn,
};

type Load = fn(&Provider, &mut TenantConn) -> crate::error::ApiResult<Vec<Entity>>;

/// A collection of the binding.
pub struct Collection {
    /// The path segment (`users`, `terms`).
    pub path: &'static str,
    /// `rostering` or `gradebook`.
    pub service: &'static str,
    /// The answer's keys: `{users: [...]}`, `{user: {...}}`.
    pub plural: &'static str,
    pub singular: &'static str,
    pub load: Load,
    /// A narrower view of the loaded collection (`students` of `users`): field and value.
    pub only: Option<(&'static str, &'static str)>,
    pub scopes: Scopes,
}

fn no_demographics(_: &Provider, _: &mut TenantConn) -> crate::error::ApiResult<Vec<Entity>> {
    // The school keeps no demographic data (birth dates, sex, ethnicity).
    Ok(Vec::new())
}

const fn rostering(
    path: &'static str,
    plural: &'static str,
    singular: &'static str,
    load: Load,
    only: Option<(&'static str, &'static str)>,
) -> Collection {
    Collection {
        path,
        service: "rostering",
        plural,
        singular,
        load,
        only,
        scopes: ROSTER_READ,
    }
}

const fn gradebook_of(
    path: &'static str,
    plural: &'static str,
    singular: &'static str,
    load: Load,
) -> Collection {
    Collection {
        path,
        service: "gradebook",
        plural,
        singular,
        load,
        only: None,
        scopes: GRADEBOOK_READ,
    }
}

pub static ORGS: Collection = rostering("orgs", "orgs", "org", roster::orgs, None);
pub static SCHOOLS: Collection = rostering(
    "schools",
    "orgs",
    "org",
    roster::orgs,
    Some(("type", "school")),
);
pub static SESSIONS: Collection = rostering(
    "academicSessions",
    "academicSessions",
    "academicSession",
    sessions::academic_sessions,
    None,
);
pub static TERMS: Collection = rostering(
    "terms",
    "academicSessions",
    "academicSession",
    sessions::academic_sessions,
    Some(("type", "term")),
);
pub static PERIODS: Collection = rostering(
    "gradingPeriods",
    "academicSessions",
    "academicSession",
    sessions::academic_sessions,
    Some(("type", "gradingPeriod")),
);
pub static COURSES: Collection = rostering("courses", "courses", "course", roster::courses, None);
pub static CLASSES: Collection = rostering("classes", "classes", "class", roster::classes, None);
pub static ENROLLMENTS: Collection = rostering(
    "enrollments",
    "enrollments",
    "enrollment",
    people::enrollments,
    None,
);
pub static USERS: Collection = rostering("users", "users", "user", people::users, None);
pub static STUDENTS: Collection = rostering(
    "students",
    "users",
    "user",
    people::users,
    Some(("role", "student")),
);
pub static TEACHERS: Collection = rostering(
    "teachers",
    "users",
    "user",
    people::users,
    Some(("role", "teacher")),
);
pub static DEMOGRAPHICS: Collection = Collection {
    scopes: DEMOGRAPHICS_READ,
    ..rostering(
        "demographics",
        "demographics",
        "demographics",
        no_demographics,
        None,
    )
};
pub static CATEGORIES: Collection = gradebook_of(
    "categories",
    "categories",
    "category",
    gradebook::categories,
);
pub static LINE_ITEMS: Collection =
    gradebook_of("lineItems", "lineItems", "lineItem", gradebook::line_items);
pub static RESULTS: Collection = gradebook_of("results", "results", "result", gradebook::results);
pub static SCORE_SCALES: Collection = gradebook_of(
    "scoreScales",
    "scoreScales",
    "scoreScale",
    gradebook::score_scales,
);

pub static ALL: [&Collection; 16] = [
    &ORGS,
    &SCHOOLS,
    &SESSIONS,
    &TERMS,
    &PERIODS,
    &COURSES,
    &CLASSES,
    &ENROLLMENTS,
    &USERS,
    &STUDENTS,
    &TEACHERS,
    &DEMOGRAPHICS,
    &CATEGORIES,
    &LINE_ITEMS,
    &RESULTS,
    &SCORE_SCALES,
];

/// Whether a user record has `role` among its roles.
fn has_role(e: &Entity, role: &str) -> bool {
    e.get("roles")
        .and_then(Value::as_array)
        .is_some_and(|roles| roles.iter().any(|r| r["role"] == role))
}

impl Collection {
    pub fn records(&self, p: &Provider, conn: &mut TenantConn) -> Result<Vec<Entity>, OrError> {
        let mut records = (self.load)(p, conn)?;
        if let Some((field, value)) = self.only {
            records.retain(|e| match field {
                "role" => has_role(e, value),
                _ => e.get(field).and_then(Value::as_str) == Some(value),
            });
        }
        Ok(records)
    }

    /// The live record `id`, or 404.
    pub fn find(&self, p: &Provider, conn: &mut TenantConn, id: &str) -> Result<Entity, OrError> {
        self.records(p, conn)?
            .into_iter()
            .find(|e| e["sourcedId"] == id && e["status"] != "tobedeleted")
            .ok_or_else(|| OrError::unknown(self.singular))
    }
}

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
        let records = self.child.records(p, conn)?;
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
        let page = query.apply(collection.records(p, conn)?)?;
        Ok((query, page))
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
        let page = query.apply(route.records(p, conn, &ids)?)?;
        Ok((query, page))
    })
    .await?;
    Ok(page(&req, &query, route.child.plural, total, records))
}
