//! The OneRoster 1.2 CSV binding: a school's roster and gradebook as a bulk zip
//! (`manifest.csv` and the files it lists, with the binding's header rows and column
//! order). Bulk files carry live records only, with `status` and `dateLastModified`
//! blank, as the binding asks of bulk mode. The rows come from the same entities the
//! REST binding answers, so both say the same.

use std::io::{Seek, Write};

use serde_json::Value;
use zip::{CompressionMethod, ZipWriter, write::SimpleFileOptions};

use super::{
    categories, gradebook, people,
    roster::{self, Entity, Provider},
    sessions,
};
use crate::{
    error::{ApiError, ApiResult},
    tenancy::TenantConn,
};

/// How a column is read from an entity.
#[derive(Clone, Copy)]
enum Col {
    /// A scalar field, as text.
    Field(&'static str),
    /// A reference's sourcedId.
    Ref(&'static str),
    /// A list of references' sourcedIds, or of strings, comma-separated.
    List(&'static str),
    /// Left blank (bulk mode's status and dateLastModified, fields the school lacks).
    Blank,
}

use Col::{Blank, Field, List, Ref};

const HEAD: [(&str, Col); 3] = [
    ("sourcedId", Field("sourcedId")),
    ("status", Blank),
    ("dateLastModified", Blank),
];

struct File {
    name: &'static str,
    columns: &'static [(&'static str, Col)],
}

const FILES: [File; 10] = [
    File {
        name: "academicSessions",
        columns: &[
            ("title", Field("title")),
            ("type", Field("type")),
            ("startDate", Field("startDate")),
            ("endDate", Field("endDate")),
            ("parentSourcedId", Ref("parent")),
            ("schoolYear", Field("schoolYear")),
        ],
    },
    File {
        name: "orgs",
        columns: &[
            ("name", Field("name")),
            ("type", Field("type")),
            ("identifier", Field("identifier")),
            ("parentSourcedId", Ref("parent")),
        ],
    },
    File {
        name: "courses",
        columns: &[
            ("schoolYearSourcedId", Ref("schoolYear")),
            ("title", Field("title")),
            ("courseCode", Field("courseCode")),
            ("grades", List("grades")),
            ("orgSourcedId", Ref("org")),
            ("subjects", List("subjects")),
            ("subjectCodes", List("subjectCodes")),
        ],
    },
    File {
        name: "classes",
        columns: &[
            ("title", Field("title")),
            ("grades", List("grades")),
            ("courseSourcedId", Ref("course")),
            ("classCode", Field("classCode")),
            ("classType", Field("classType")),
            ("location", Field("location")),
            ("schoolSourcedId", Ref("school")),
            ("termSourcedIds", List("terms")),
            ("subjects", List("subjects")),
            ("subjectCodes", List("subjectCodes")),
            ("periods", List("periods")),
        ],
    },
    File {
        name: "enrollments",
        columns: &[
            ("classSourcedId", Ref("class")),
            ("schoolSourcedId", Ref("school")),
            ("userSourcedId", Ref("user")),
            ("role", Field("role")),
            ("primary", Field("primary")),
            ("beginDate", Field("beginDate")),
            ("endDate", Field("endDate")),
        ],
    },
    File {
        name: "users",
        columns: &[
            ("enabledUser", Field("enabledUser")),
            ("username", Field("username")),
            ("userIds", Blank),
            ("givenName", Field("givenName")),
            ("familyName", Field("familyName")),
            ("middleName", Field("middleName")),
            ("identifier", Field("identifier")),
            ("email", Field("email")),
            ("sms", Field("sms")),
            ("phone", Field("phone")),
            ("agentSourcedIds", List("agents")),
            ("grades", List("grades")),
            ("password", Blank),
            ("userMasterIdentifier", Field("userMasterIdentifier")),
            ("resourceSourcedIds", Blank),
            ("preferredGivenName", Blank),
            ("preferredMiddleName", Blank),
            ("preferredFamilyName", Blank),
            ("primaryOrgSourcedId", Ref("primaryOrg")),
            ("pronouns", Blank),
        ],
    },
    File {
        name: "roles",
        columns: &[
            ("userSourcedId", Field("userSourcedId")),
            ("roleType", Field("roleType")),
            ("role", Field("role")),
            ("beginDate", Blank),
            ("endDate", Blank),
            ("orgSourcedId", Field("orgSourcedId")),
            ("userProfileSourcedId", Blank),
        ],
    },
    File {
        name: "categories",
        columns: &[("title", Field("title")), ("weight", Field("weight"))],
    },
    File {
        name: "lineItems",
        columns: &[
            ("title", Field("title")),
            ("description", Field("description")),
            ("assignDate", Field("assignDate")),
            ("dueDate", Field("dueDate")),
            ("classSourcedId", Ref("class")),
            ("categorySourcedId", Ref("category")),
            ("gradingPeriodSourcedId", Ref("gradingPeriod")),
            ("resultValueMin", Field("resultValueMin")),
            ("resultValueMax", Field("resultValueMax")),
            ("schoolSourcedId", Ref("school")),
        ],
    },
    File {
        name: "results",
        columns: &[
            ("lineItemSourcedId", Ref("lineItem")),
            ("studentSourcedId", Ref("student")),
            ("scoreStatus", Field("scoreStatus")),
            ("score", Field("score")),
            ("scoreDate", Field("scoreDate")),
            ("comment", Field("comment")),
            ("scoreScaleSourcedId", Ref("scoreScale")),
            ("textScore", Field("textScore")),
        ],
    },
];

fn text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn cell(e: &Entity, col: Col) -> String {
    match col {
        Field(f) => text(e.get(f)),
        Ref(f) => text(e.get(f).and_then(|r| r.get("sourcedId"))),
        List(f) => e
            .get(f)
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .map(|i| text(i.get("sourcedId").or(Some(i))))
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_default(),
        Blank => String::new(),
    }
}

/// RFC 4180 quoting.
fn quoted(value: &str) -> String {
    if value.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", value.replace('"', "\"\""))
    } else {
        value.to_owned()
    }
}

fn csv_of(file: &File, records: &[Entity]) -> String {
    let columns: Vec<(&str, Col)> = HEAD.iter().chain(file.columns).copied().collect();
    let mut out = columns
        .iter()
        .map(|(name, _)| *name)
        .collect::<Vec<_>>()
        .join(",");
    out.push_str("\r\n");
    for e in records {
        let row: Vec<String> = columns
            .iter()
            .map(|(_, col)| quoted(&cell(e, *col)))
            .collect();
        out.push_str(&row.join(","));
        out.push_str("\r\n");
    }
    out
}

/// One row per (user, role) of `roles.csv`.
fn roles_of(users: &[Entity]) -> Vec<Entity> {
    users
        .iter()
        .flat_map(|u| {
            let roles = u
                .get("roles")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            roles.into_iter().map(move |r| {
                let user = text(u.get("sourcedId"));
                let mut e = Entity::new();
                e.insert(
                    "sourcedId".into(),
                    Value::String(format!("{user}.{}", text(r.get("role")))),
                );
                e.insert("userSourcedId".into(), Value::String(user));
                e.insert(
                    "roleType".into(),
                    r.get("roleType").cloned().unwrap_or_default(),
                );
                e.insert("role".into(), r.get("role").cloned().unwrap_or_default());
                e.insert("orgSourcedId".into(), r["org"]["sourcedId"].clone());
                e
            })
        })
        .collect()
}

/// The school's bulk zip, written into `out` one file at a time: each collection is read,
/// written and dropped before the next, so memory holds one collection, not the school.
pub fn export<W: Write + Seek>(p: &Provider, conn: &mut TenantConn, out: W) -> ApiResult<W> {
    let live = |records: Vec<Entity>| -> Vec<Entity> {
        records
            .into_iter()
            .filter(|e| e["status"] != "tobedeleted")
            .collect()
    };
    let mut zip = ZipWriter::new(out);
    let options = SimpleFileOptions::default().compression_method(CompressionMethod::Stored);
    let mut manifest =
        String::from("propertyName,value\r\nmanifest.version,1.0\r\noneroster.version,1.2\r\n");
    for name in [
        "academicSessions",
        "categories",
        "classes",
        "classResources",
        "courses",
        "courseResources",
        "demographics",
        "enrollments",
        "lineItemLearningObjectiveIds",
        "lineItems",
        "lineItemScoreScales",
        "orgs",
        "resources",
        "resultLearningObjectiveIds",
        "results",
        "resultScoreScales",
        "roles",
        "scoreScales",
        "userProfiles",
        "userResources",
        "users",
    ] {
        let mode = if FILES.iter().any(|f| f.name == name) {
            "bulk"
        } else {
            "absent"
        };
        manifest.push_str(&format!("file.{name},{mode}\r\n"));
    }
    manifest.push_str("source.systemName,school-service\r\nsource.systemCode,\r\n");
    let mut write = |name: &str, body: &str| -> ApiResult<()> {
        zip.start_file(name, options).map_err(ApiError::internal)?;
        zip.write_all(body.as_bytes()).map_err(ApiError::internal)
    };
    write("manifest.csv", &manifest)?;
    // `users` and `roles` come from the same records: read once, for both files.
    let mut users: Option<Vec<Entity>> = None;
    for file in &FILES {
        let records = match file.name {
            "academicSessions" => live(sessions::academic_sessions(p, conn)?),
            "orgs" => live(roster::orgs(p, conn)?),
            "courses" => live(roster::courses(p, conn)?),
            "classes" => live(roster::classes(p, conn)?),
            "enrollments" => live(people::enrollments(p, conn)?),
            "users" => {
                let all = live(people::users(p, conn)?);
                let written = csv_of(file, &all);
                users = Some(all);
                write("users.csv", &written)?;
                continue;
            }
            "roles" => roles_of(&users.take().unwrap_or_default()),
            "categories" => live(categories::categories(p, conn)?),
            "lineItems" => live(gradebook::line_items(p, conn)?),
            "results" => live(gradebook::results(p, conn)?),
            other => {
                return Err(ApiError::internal(anyhow::anyhow!(
                    "no reader for {other}.csv"
                )));
            }
        };
        write(&format!("{}.csv", file.name), &csv_of(file, &records))?;
    }
    zip.finish().map_err(ApiError::internal)
}
