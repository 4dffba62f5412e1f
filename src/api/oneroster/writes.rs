//! The gradebook's writes: PUT `categories|lineItems|results/{sourcedId}` (201 when the
//! PUT created the record, 200 when it changed one) and DELETE (204). The body is the
//! binding's `{<singular>: {...}}`; sourcedIds are kept as sent (1-255 characters).

use actix_web::{HttpRequest, HttpResponse, http::StatusCode, web};
use chrono::{DateTime, NaiveDate, Utc};
use futures_util::StreamExt;
use serde_json::{Map, Value};
use uuid::Uuid;

use super::{
    call::{self, GRADEBOOK_DELETE, GRADEBOOK_PUT, OrError},
    collections::{CATEGORIES, Collection, LINE_ITEMS, RESULTS},
    query::single,
};
use crate::school::{
    marks::{SCORE_STATUSES, canonical_decimal},
    oneroster::gradebook_writes::{self as gradebook, LineItemInput, ResultInput},
};

/// The largest body a PUT reads.
const MAX_BODY: usize = 256 * 1024;

fn invalid(description: impl Into<String>) -> OrError {
    OrError::bad("invaliddata", description)
}

/// The body's `{<key>: {...}}` object (a bare object is taken too).
async fn read_record(mut payload: web::Payload, key: &str) -> Result<Map<String, Value>, OrError> {
    let mut bytes = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|_| invalid("could not read the body"))?;
        if bytes.len() + chunk.len() > MAX_BODY {
            return Err(OrError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "invaliddata",
                "the body is too large",
            ));
        }
        bytes.extend_from_slice(&chunk);
    }
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(mut outer)) => match outer.remove(key) {
            Some(Value::Object(record)) => Ok(record),
            Some(_) => Err(invalid(format!("{key} must be an object"))),
            None => Ok(outer),
        },
        _ => Err(invalid(format!(
            "the body must be a JSON object {{\"{key}\": {{...}}}}"
        ))),
    }
}

fn text(record: &Map<String, Value>, key: &str, max: usize) -> Result<Option<String>, OrError> {
    match record.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.chars().count() <= max => Ok(Some(s.clone())),
        Some(_) => Err(invalid(format!(
            "{key} must be a string of at most {max} characters"
        ))),
    }
}

fn required_text(record: &Map<String, Value>, key: &str, max: usize) -> Result<String, OrError> {
    text(record, key, max)?
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| invalid(format!("{key} is required")))
}

/// A GUIDRef's sourcedId (`{"sourcedId": ...}`, or the bare string).
fn reference(record: &Map<String, Value>, key: &str) -> Result<Option<String>, OrError> {
    match record.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(Value::Object(r)) => match r.get("sourcedId") {
            Some(Value::String(s)) => Ok(Some(s.clone())),
            _ => Err(invalid(format!("{key}.sourcedId must be a string"))),
        },
        Some(_) => Err(invalid(format!(
            "{key} must be a reference {{\"sourcedId\": ...}}"
        ))),
    }
}

fn decimal(record: &Map<String, Value>, key: &str) -> Result<Option<String>, OrError> {
    match record.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value @ Value::Number(_)) => value
            .as_f64()
            .and_then(canonical_decimal)
            .map(Some)
            .ok_or_else(|| invalid(format!("{key} must be a finite number"))),
        Some(_) => Err(invalid(format!("{key} must be a number"))),
    }
}

fn instant(record: &Map<String, Value>, key: &str) -> Result<Option<DateTime<Utc>>, OrError> {
    let Some(raw) = text(record, key, 64)? else {
        return Ok(None);
    };
    DateTime::parse_from_rfc3339(&raw)
        .map(|t| t.with_timezone(&Utc))
        .ok()
        .or_else(|| {
            day(&raw)
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .map(|t| t.and_utc())
        })
        .map(Some)
        .ok_or_else(|| invalid(format!("{key} must be an ISO 8601 date or date-time")))
}

fn day(raw: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(raw.get(..10)?, "%Y-%m-%d").ok()
}

fn sourced_id(req: &HttpRequest) -> Result<String, OrError> {
    let id = req.match_info().get("id").unwrap_or_default().to_owned();
    match id.chars().count() {
        1..=255 => Ok(id),
        _ => Err(invalid("a sourcedId has 1 to 255 characters")),
    }
}

/// Which record a PUT writes, parsed from its body.
enum Write {
    Category {
        title: String,
        weight: Option<String>,
    },
    LineItem(LineItemInput),
    Result(ResultInput),
}

fn parse_write(collection: &Collection, r: &Map<String, Value>) -> Result<Write, OrError> {
    Ok(match collection.path {
        "categories" => Write::Category {
            title: required_text(r, "title", 255)?,
            weight: decimal(r, "weight")?,
        },
        "lineItems" => Write::LineItem(LineItemInput {
            title: required_text(r, "title", 255)?,
            description: text(r, "description", 10_000)?,
            assign_date: instant(r, "assignDate")?,
            due_date: instant(r, "dueDate")?,
            class: reference(r, "class")?.ok_or_else(|| invalid("class is required"))?,
            category: reference(r, "category")?,
            term: reference(r, "gradingPeriod")?.or(reference(r, "academicSession")?),
            result_value_min: decimal(r, "resultValueMin")?,
            result_value_max: decimal(r, "resultValueMax")?,
        }),
        _ => {
            let status = required_text(r, "scoreStatus", 32)?;
            if !SCORE_STATUSES.contains(&status.as_str()) {
                return Err(invalid(format!(
                    "scoreStatus must be one of {}",
                    SCORE_STATUSES.join(", ")
                )));
            }
            let student = reference(r, "student")?.ok_or_else(|| invalid("student is required"))?;
            let date = match text(r, "scoreDate", 64)? {
                None => None,
                Some(raw) => {
                    Some(day(&raw).ok_or_else(|| invalid("scoreDate must be an ISO 8601 date"))?)
                }
            };
            Write::Result(ResultInput {
                line_item: reference(r, "lineItem")?
                    .ok_or_else(|| invalid("lineItem is required"))?,
                student: Uuid::parse_str(&student).map_err(|_| invalid("no such student"))?,
                score_status: status,
                score: decimal(r, "score")?,
                text_score: text(r, "textScore", 255)?,
                score_date: date,
                comment: text(r, "comment", 10_000)?,
            })
        }
    })
}

pub async fn put(
    req: HttpRequest,
    payload: web::Payload,
    collection: &'static Collection,
) -> Result<HttpResponse, OrError> {
    let id = sourced_id(&req);
    let body = read_record(payload, collection.singular).await;
    let (created, record) = call::run(&req, GRADEBOOK_PUT, move |conn, p, grant| {
        let id = id?;
        let actor = grant.actor();
        let write = parse_write(collection, &body?)?;
        let created = match write {
            Write::Category { title, weight } => {
                gradebook::put_category(conn, &id, &title, weight)?
            }
            Write::LineItem(input) => gradebook::put_line_item(conn, &id, input, &actor)?,
            Write::Result(input) => gradebook::put_result(conn, &id, input, &actor)?,
        };
        Ok((created, collection.find(p, conn, &id)?))
    })
    .await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok(HttpResponse::build(status).json(single(collection.singular, record)))
}

pub async fn delete(
    req: HttpRequest,
    collection: &'static Collection,
) -> Result<HttpResponse, OrError> {
    let id = sourced_id(&req);
    call::run(&req, GRADEBOOK_DELETE, move |conn, _, grant| {
        let id = id?;
        let actor = grant.actor();
        let deleted = match collection.path {
            "categories" => gradebook::delete_category(conn, &id)?,
            "lineItems" => gradebook::delete_line_item(conn, &id, &actor)?,
            _ => gradebook::delete_result(conn, &id, &actor)?,
        };
        if deleted {
            Ok(())
        } else {
            Err(OrError::unknown(collection.singular))
        }
    })
    .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// The collections that take writes.
pub static WRITABLE: [&Collection; 3] = [&CATEGORIES, &LINE_ITEMS, &RESULTS];
