//! `POST /api/v1/school/sessions/{id}/rollover/`: the school year turns (API.md 10). The
//! plan and its apply are `crate::school::rollover`; here are the body and the answer.

use actix_web::{HttpResponse, web};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use crate::{
    api::{
        PathIds,
        body::read_object,
        fields::{Fields, Mode, any, len},
        openapi::{ApiDoc, Auth, Op},
        routes::Mount,
    },
    auth::permissions::{Action, Permission, Resource},
    error::{ApiError, ApiResult, FieldErrors},
    request::{Need, SchoolRequest},
    school::{
        Store,
        rollover::{Plan, Request, roll_over},
        sessions::{AcademicSession, Sessions},
    },
};

const NEEDS: &[Permission] = &[
    Permission::new(Action::Add, Resource::AcademicSession),
    Permission::new(Action::Add, Resource::Enrollment),
];

/// The body, for the API document (`parse` reads it field by field).
#[derive(serde::Deserialize, utoipa::ToSchema)]
#[allow(dead_code)]
pub struct RolloverRequest {
    /// The new session's name (1-255 characters).
    #[schema(min_length = 1, max_length = 255)]
    name: String,
    start_date: DateTime<Utc>,
    /// Not before `start_date`.
    end_date: DateTime<Utc>,
    /// Where a class's students go; a class not named goes to the one live class of the
    /// next level, or graduates when no class has a higher level.
    promotions: Option<Vec<RolloverPromotion>>,
    /// Students who stay in their class.
    retain: Option<Vec<Uuid>>,
    /// Students who leave the school.
    leave: Option<Vec<Uuid>>,
    /// Only answer the plan (default false).
    dry_run: Option<bool>,
}

#[derive(serde::Deserialize, utoipa::ToSchema)]
#[allow(dead_code)]
pub struct RolloverPromotion {
    from_class: Uuid,
    /// `null`: the class graduates.
    to_class: Option<Uuid>,
}

/// The answer.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Rollover {
    pub dry_run: bool,
    /// The new session; `null` on a dry run.
    pub session: Option<AcademicSession>,
    pub plan: Plan,
}

pub fn mount(m: &mut Mount) {
    m.endpoint("/api/v1/school/sessions/{id}/rollover/")
        .post(rollover, |doc: &mut ApiDoc| {
            Op::new(
                "sessions",
                "Roll a session over into a new school year",
                Auth::BearerOrKey,
            )
            .description(Some(
                "Moves the session's actively enrolled students into a new session (which \
                 becomes the active one), in one transaction: promoted by class, retained, \
                 graduated or leaving; last year's enrollments become `completed` \
                 (`withdrawn` for `leave`). `dry_run: true` answers the same plan and writes \
                 nothing. A class the rules cannot place is a 400 naming it in \
                 `errors.promotions`; a session rolled over already is a 409 naming the \
                 session it made. Needs `add_academicsession` and `add_enrollment`.",
            ))
            .body(doc.schema::<RolloverRequest>())
            .ok(200, Some(doc.schema::<Rollover>()))
            .errors(&[404, 409])
        });
}

/// A list of ids under `key` (absent: empty).
fn ids(body: &serde_json::Map<String, Value>, key: &str, errors: &mut FieldErrors) -> Vec<Uuid> {
    match body.get(key) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => {
            let parsed: Vec<Option<Uuid>> = items
                .iter()
                .map(|v| v.as_str().and_then(|s| Uuid::parse_str(s).ok()))
                .collect();
            if parsed.iter().any(Option::is_none) {
                errors.add(key, "expected a list of student ids (UUIDs)");
            }
            parsed.into_iter().flatten().collect()
        }
        Some(_) => {
            errors.add(key, "expected a list of student ids (UUIDs)");
            Vec::new()
        }
    }
}

/// `promotions`: `[{from_class, to_class | null}]`.
fn promotions(
    body: &serde_json::Map<String, Value>,
    errors: &mut FieldErrors,
) -> Vec<(Uuid, Option<Uuid>)> {
    let items = match body.get("promotions") {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Array(items)) => items,
        Some(_) => {
            errors.add("promotions", "expected a list of {from_class, to_class}");
            return Vec::new();
        }
    };
    let mut out = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let id = |key: &str| {
            item.get(key)
                .and_then(Value::as_str)
                .and_then(|s| Uuid::parse_str(s).ok())
        };
        let from = id("from_class");
        if from.is_none() {
            errors.add(
                &format!("promotions[{index}].from_class"),
                "a class id (UUID) is required",
            );
        }
        let to = match item.get("to_class") {
            Some(Value::Null) => Some(None),
            Some(_) => id("to_class").map(Some),
            None => None,
        };
        if to.is_none() {
            errors.add(
                &format!("promotions[{index}].to_class"),
                "a class id (UUID), or null to graduate, is required",
            );
        }
        if let (Some(from), Some(to)) = (from, to) {
            out.push((from, to));
        }
    }
    out
}

/// The body as a request, and whether it is a dry run: every problem at once.
fn parse(body: &serde_json::Map<String, Value>) -> ApiResult<(Request, bool)> {
    let mut f = Fields::new(body, Mode::Create);
    let name: Option<String> = f.required("name", &len(1, 255));
    let start: Option<DateTime<Utc>> = f.required("start_date", &any);
    let end: Option<DateTime<Utc>> = f.required("end_date", &any);
    let dry_run: Option<bool> = f.optional("dry_run", false, &any);
    let mut errors = FieldErrors::new();
    if let (Some(start), Some(end)) = (start, end) {
        if end < start {
            errors.add("end_date", "must not be before start_date");
        }
    }
    let promotions = promotions(body, &mut errors);
    let retain = ids(body, "retain", &mut errors);
    let leave = ids(body, "leave", &mut errors);
    f.merge(errors);
    f.finish(())?;
    match (name, start, end) {
        (Some(name), Some(start_date), Some(end_date)) => Ok((
            Request {
                name,
                start_date,
                end_date,
                promotions,
                retain,
                leave,
            },
            dry_run.unwrap_or(false),
        )),
        _ => Err(ApiError::validation("name", "this field is required")),
    }
}

async fn rollover(request: SchoolRequest, payload: web::Payload) -> ApiResult<HttpResponse> {
    let path = PathIds::of(request.http());
    let body = read_object(request.http(), payload).await;
    let answer = request
        .run(Need::All(NEEDS), move |conn, caller| {
            let from = path.last()?;
            if !Sessions::live_exists(conn, from)? {
                return Err(ApiError::not_found());
            }
            let (asked, dry_run) = parse(&body?)?;
            let actor = caller.actor();
            let (plan, session) =
                conn.transaction(|conn| roll_over(conn, from, &asked, dry_run, &actor))?;
            Ok(Rollover {
                dry_run,
                session,
                plan,
            })
        })
        .await?;
    Ok(HttpResponse::Ok().json(answer))
}
