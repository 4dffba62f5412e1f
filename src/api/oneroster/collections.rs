//! The binding's collections: each is read whole from the data layer (`load`), or, where
//! the data layer can, only the records a sourcedId or a line item names (`narrow`: a
//! single result or line item, a line item's results), then narrowed to the view it is
//! (`students` of `users`). Their reads are in `reads.rs`, their writes in `writes.rs`.

use serde_json::Value;

use super::{
    call::{DEMOGRAPHICS_READ, GRADEBOOK_READ, OrError, ROSTER_READ, Scopes},
    filter::Filter,
};
use crate::{
    school::oneroster::{
        categories,
        gradebook::{self, Only},
        people,
        roster::{self, Entity, Provider},
        sessions,
    },
    tenancy::TenantConn,
};

type Load = fn(&Provider, &mut TenantConn) -> crate::error::ApiResult<Vec<Entity>>;
/// A cheaper load of the records whose `field` names `id`, where the data layer has one
/// (`None`: read the whole collection). Its answer is narrowed further like a full one.
type Narrow =
    fn(&Provider, &mut TenantConn, &str, &str) -> crate::error::ApiResult<Option<Vec<Entity>>>;

/// The records changed at or after an instant, where the data layer can read only those
/// (a delta sync); a superset is fine, the filter still applies.
type ChangedSince = fn(
    &Provider,
    &mut TenantConn,
    chrono::DateTime<chrono::Utc>,
) -> crate::error::ApiResult<Vec<Entity>>;

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
    pub narrow: Option<Narrow>,
    pub changed_since: Option<ChangedSince>,
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
        narrow: None,
        changed_since: None,
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
        narrow: None,
        changed_since: None,
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
pub static USERS: Collection = Collection {
    changed_since: Some(people::users_changed_since),
    ..rostering("users", "users", "user", people::users, None)
};
pub static STUDENTS: Collection = Collection {
    changed_since: Some(people::users_changed_since),
    ..rostering(
        "students",
        "users",
        "user",
        people::users,
        Some(("role", "student")),
    )
};
pub static TEACHERS: Collection = Collection {
    changed_since: Some(people::users_changed_since),
    ..rostering(
        "teachers",
        "users",
        "user",
        people::users,
        Some(("role", "teacher")),
    )
};
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
    categories::categories,
);
pub static LINE_ITEMS: Collection = Collection {
    narrow: Some(narrow_line_items),
    ..gradebook_of("lineItems", "lineItems", "lineItem", gradebook::line_items)
};
pub static RESULTS: Collection = Collection {
    narrow: Some(narrow_results),
    ..gradebook_of("results", "results", "result", gradebook::results)
};

/// A line item by its sourcedId: its exam's row only.
fn narrow_line_items(
    p: &Provider,
    conn: &mut TenantConn,
    field: &str,
    id: &str,
) -> crate::error::ApiResult<Option<Vec<Entity>>> {
    if field != "sourcedId" {
        return Ok(None);
    }
    Ok(Some(match gradebook::exam_named(conn, id)? {
        Some(exam) => gradebook::line_items_of(p, conn, Only::Exam(exam))?,
        None => Vec::new(),
    }))
}

/// A result by its sourcedId (one mark), or a line item's results (one exam's marks).
fn narrow_results(
    p: &Provider,
    conn: &mut TenantConn,
    field: &str,
    id: &str,
) -> crate::error::ApiResult<Option<Vec<Entity>>> {
    let only = match field {
        "sourcedId" => gradebook::mark_named(conn, id)?.map(Only::Mark),
        "lineItem" => gradebook::exam_named(conn, id)?.map(Only::Exam),
        _ => return Ok(None),
    };
    Ok(Some(match only {
        Some(only) => gradebook::results_of(p, conn, only)?,
        None => Vec::new(),
    }))
}
pub static SCORE_SCALES: Collection = gradebook_of(
    "scoreScales",
    "scoreScales",
    "scoreScale",
    categories::score_scales,
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
        let records = (self.load)(p, conn)?;
        Ok(self.narrowed(records))
    }

    /// The records a read filtered by `filter` may answer: those changed since the
    /// filter's bound where the collection can read only them, else every record.
    pub fn records_for(
        &self,
        p: &Provider,
        conn: &mut TenantConn,
        filter: Option<&Filter>,
    ) -> Result<Vec<Entity>, OrError> {
        match (self.changed_since, filter.and_then(Filter::changed_since)) {
            (Some(load), Some(since)) => Ok(self.narrowed(load(p, conn, since)?)),
            _ => self.records(p, conn),
        }
    }

    /// The records whose `field` names `id`, read cheaply where the collection can; else
    /// every record (the caller filters on `field` either way).
    pub(super) fn records_naming(
        &self,
        p: &Provider,
        conn: &mut TenantConn,
        field: &str,
        id: &str,
    ) -> Result<Vec<Entity>, OrError> {
        match self
            .narrow
            .map(|narrow| narrow(p, conn, field, id))
            .transpose()?
        {
            Some(Some(records)) => Ok(self.narrowed(records)),
            _ => self.records(p, conn),
        }
    }

    fn narrowed(&self, mut records: Vec<Entity>) -> Vec<Entity> {
        if let Some((field, value)) = self.only {
            records.retain(|e| match field {
                "role" => has_role(e, value),
                _ => e.get(field).and_then(Value::as_str) == Some(value),
            });
        }
        records
    }

    /// The live record `id`, or 404.
    pub fn find(&self, p: &Provider, conn: &mut TenantConn, id: &str) -> Result<Entity, OrError> {
        self.records_naming(p, conn, "sourcedId", id)?
            .into_iter()
            .find(|e| e["sourcedId"] == id && e["status"] != "tobedeleted")
            .ok_or_else(|| OrError::unknown(self.singular))
    }
}
