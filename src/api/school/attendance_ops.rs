//! Attendance beyond CRUD: `POST /api/v1/school/classes/{class_pk}/attendance/` takes a
//! class's attendance for one date in one request, `GET` on the same path lists the
//! class's records (a register and its week, for the class's teachers too), and
//! `GET /api/v1/school/students/{id}/attendance-summary/` counts a student's days (for the
//! student themselves too). The queries are in `crate::school::attendance_ops`; here are
//! HTTP, parsing and access.

use actix_web::{HttpResponse, web};
use chrono::NaiveDate;
use serde_json::Value;
use uuid::Uuid;

use crate::{
    api::{
        PathIds,
        body::read_object,
        fields::{Fields, Mode, any},
        list_filter,
        openapi::schema::page_of,
        openapi::{ApiDoc, Auth, Op, schema},
        pagination::{ListQuery, page_response, query_map},
        routes::Mount,
        school::class_access::require_class_access,
    },
    auth::permissions::{Action, Permission, Resource},
    error::{ApiError, ApiResult, FieldErrors},
    request::{Need, SchoolRequest},
    school::{
        Store, Target,
        attendance::{Attendance, Attendances, MAX_NOTE_CHARS, STATUSES},
        attendance_ops::{AttendanceSummary, TakeLine, check_take, summary_of, upsert_take},
        classes::Classes,
        students::Students,
    },
};

/// The most records one take may carry.
const MAX_RECORDS: usize = 2000;

const TAKE: &[Permission] = &[
    Permission::new(Action::Add, Resource::Attendance),
    Permission::new(Action::Change, Resource::Attendance),
];
const VIEW: &[Permission] = &[Permission::new(Action::View, Resource::Attendance)];

/// The body of a class take, for the API document (`take_class` parses it field by field).
#[derive(serde::Deserialize, utoipa::ToSchema)]
#[allow(dead_code)]
pub struct TakeClassAttendanceRequest {
    /// Inside the active academic session.
    date: NaiveDate,
    /// One per student of the class, each student at most once.
    #[schema(min_items = 1, max_items = 2000)]
    records: Vec<TakeAttendanceLine>,
}

#[derive(serde::Deserialize, utoipa::ToSchema)]
#[allow(dead_code)]
pub struct TakeAttendanceLine {
    /// A live student of the class.
    student: Uuid,
    #[schema(pattern = "^(present|absent|late|excused)$")]
    status: String,
    #[schema(max_length = 500)]
    note: Option<String>,
}

pub fn mount(m: &mut Mount) {
    m.endpoint("/api/v1/school/classes/{class_pk}/attendance/")
        .post(take_class, |doc: &mut ApiDoc| {
            let record = doc.schema::<Attendance>();
            Op::new(
                "attendance",
                "Take a class's attendance for one date",
                Auth::BearerOrKey,
            )
            .description(Some(
                "Creates or updates each listed student's record for the date, in one \
                 transaction; answers the records in the order given. Needs `add_attendance` \
                 and `change_attendance`, or an assignment to teach the class. A student who \
                 is not a live student of the class, a student listed twice, or a date outside \
                 the active academic session is a 400 naming the record (`records[i].student`, \
                 `date`).",
            ))
            .body(doc.schema::<TakeClassAttendanceRequest>())
            .ok(200, Some(schema::array(record)))
        })
        .get(class_records, |doc: &mut ApiDoc| {
            let record = doc.schema::<Attendance>();
            let page = page_of(doc, "AttendancePage", record);
            let mut op = Op::new(
                "attendance",
                "List a class's attendance records",
                Auth::BearerOrKey,
            )
            .description(Some(
                "The live records taken for the class (their `academic_class`), paged like \
                 every list, oldest first; `?date=`, `?date_from=`, `?date_to=` and \
                 `?student=` narrow them as on `/attendance/`. Needs `view_attendance`, or an \
                 assignment to teach the class (a register and its week); a guardian reads \
                 their children's records only. 404 when the class does not exist, or is \
                 soft-deleted without `include_deleted=true`.",
            ))
            .query("page", schema::integer(), "page number, from 1")
            .query(
                "page_size",
                schema::integer(),
                "records per page (default 50, max 200)",
            )
            .query(
                "include_deleted",
                schema::boolean(),
                "also soft-deleted records, and a soft-deleted class",
            );
            for (name, what) in super::attendance::ATTENDANCE_FILTERS {
                if *name != "academic_class" {
                    op = op.query(name, schema::string(), what);
                }
            }
            op.ok(200, Some(page)).errors(&[404])
        });
    m.endpoint("/api/v1/school/students/{id}/attendance-summary/")
        .get(summary, |doc: &mut ApiDoc| {
            Op::new(
                "attendance",
                "Days per attendance status of a student, and the attendance rate",
                Auth::BearerOrKey,
            )
            .description(Some(
                "Needs `view_attendance`, or an assignment to teach the student's class; a \
                 student (the `user` of the student record) reads their own.",
            ))
            .query(
                "date_from",
                schema::string(),
                "first day counted (YYYY-MM-DD)",
            )
            .query("date_to", schema::string(), "last day counted (YYYY-MM-DD)")
            .ok(200, Some(doc.schema::<AttendanceSummary>()))
        });
}

/// The `records` of a take, every problem reported under `records[i].<field>`.
fn parse_lines(raw: Option<&Value>, errors: &mut FieldErrors) -> Vec<TakeLine> {
    let Some(raw) = raw else {
        errors.add("records", "this field is required");
        return Vec::new();
    };
    let Value::Array(items) = raw else {
        errors.add("records", "expected a list");
        return Vec::new();
    };
    if items.is_empty() || items.len() > MAX_RECORDS {
        errors.add("records", format!("must hold 1-{MAX_RECORDS} records"));
        return Vec::new();
    }
    let mut lines = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let at = |field: &str| format!("records[{index}].{field}");
        let Value::Object(item) = item else {
            errors.add(&format!("records[{index}]"), "expected an object");
            continue;
        };
        let student = match item.get("student") {
            Some(Value::String(s)) => Uuid::parse_str(s).ok(),
            _ => None,
        };
        if student.is_none() {
            errors.add(&at("student"), "a student id (UUID) is required");
        }
        let status = match item.get("status") {
            Some(Value::String(s)) if STATUSES.contains(&s.as_str()) => Some(s.clone()),
            _ => None,
        };
        if status.is_none() {
            errors.add(
                &at("status"),
                format!("must be one of {}", STATUSES.join(", ")),
            );
        }
        let note = match item.get("note") {
            None | Some(Value::Null) => Some(None),
            Some(Value::String(s)) if s.chars().count() <= MAX_NOTE_CHARS && !s.contains('\0') => {
                Some(Some(s.clone()))
            }
            Some(_) => None,
        };
        if note.is_none() {
            errors.add(
                &at("note"),
                format!("at most {MAX_NOTE_CHARS} characters, or null"),
            );
        }
        for key in item.keys() {
            if !["student", "status", "note"].contains(&key.as_str()) {
                errors.add(&at(key), "unknown field");
            }
        }
        if let (Some(student), Some(status), Some(note)) = (student, status, note) {
            lines.push(TakeLine {
                student,
                status,
                note,
            });
        }
    }
    lines
}

async fn take_class(request: SchoolRequest, payload: web::Payload) -> ApiResult<HttpResponse> {
    let path = PathIds::of(request.http());
    let body = read_object(request.http(), payload).await;
    let records = request
        .run(Need::Authenticated, move |conn, caller| {
            let class_id = path.last()?;
            require_class_access(conn, caller, TAKE, Some(class_id))?;
            if !Classes::live_exists(conn, class_id)? {
                return Err(ApiError::not_found());
            }
            let body = body?;
            let mut fields = Fields::new(&body, Mode::Create);
            let date: Option<NaiveDate> = fields.required("date", &any);
            let mut errors = FieldErrors::new();
            let lines = parse_lines(body.get("records"), &mut errors);
            check_take(conn, class_id, date, &lines, &mut errors)?;
            fields.merge(errors);
            fields.finish(())?;
            let date =
                date.ok_or_else(|| ApiError::validation("date", "this field is required"))?;
            conn.transaction(|conn| upsert_take(conn, class_id, date, &lines, &caller.actor()))
        })
        .await?;
    Ok(HttpResponse::Ok().json(records))
}

async fn class_records(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let http = request.http().clone();
    let path = PathIds::of(&http);
    let query = ListQuery::parse_filtered(&http, super::attendance::ATTENDANCE_FILTERS);
    let page_query = query.as_ref().ok().cloned();
    let (count, rows) = request
        .run(Need::Authenticated, move |conn, caller| {
            let class_id = path.last()?;
            require_class_access(conn, caller, VIEW, Some(class_id))?;
            let mut query = query?;
            // As `/classes/{id}/students/`: a soft-deleted class (and its soft-deleted
            // records) only with `include_deleted=true`.
            let class = Target {
                parent: (),
                id: class_id,
                include_deleted: query.include_deleted,
            };
            if Classes::find(conn, class)?.is_none() {
                return Err(ApiError::not_found());
            }
            query.filter.academic_class = Some(class_id);
            let (count, rows) = Attendances::list(conn, (), &query)?;
            query.check_page(count)?;
            Ok((count, rows))
        })
        .await?;
    let query = page_query.ok_or_else(|| ApiError::InvalidQuery("bad list parameters".into()))?;
    page_response(&http, &query, count, rows)
}

async fn summary(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let path = PathIds::of(request.http());
    let params = query_map(request.http());
    let answer = request
        .run(Need::Authenticated, move |conn, caller| {
            let student_id = path.last()?;
            // A soft-deleted student's records are still theirs.
            let student = Students::find(
                conn,
                Target {
                    parent: (),
                    id: student_id,
                    include_deleted: true,
                },
            )?;
            let class = student.as_ref().and_then(|s| s.academic_class_id);
            // A student reads their own days (their page in the school app).
            let own = student
                .as_ref()
                .is_some_and(|s| caller.user_id().is_some() && s.user_id == caller.user_id());
            if !own {
                require_class_access(conn, caller, VIEW, class)?;
            }
            let student = student.ok_or_else(ApiError::not_found)?;
            let filter = list_filter::read(&params?, super::attendance::ATTENDANCE_FILTERS)?;
            summary_of(conn, student.id, filter.date_from, filter.date_to)
        })
        .await?;
    Ok(HttpResponse::Ok().json(answer))
}
