//! `.../exams/{exam_pk}/marks/`: marks of an exam, and the spec's `confirm-students` upsert.

use actix_web::{HttpResponse, web};
use serde_json::Value;
use uuid::Uuid;

use crate::{
    api::{
        PathIds,
        body::read_object,
        fields::{Fields, Mode, OneOf, any, len},
        openapi::{ApiDoc, Auth, Op, schema::request_schema},
        routes::Mount,
        school::crud::{self, SchoolResource, fields_of, validated},
    },
    auth::permissions::{Action, Permission, Resource},
    error::{ApiError, ApiResult, FieldErrors},
    request::{Need, SchoolRequest},
    school::{
        Store,
        marks::{Mark, MarkChanges, Marks, SCORE_STATUSES, canonical_decimal},
        students::Students,
    },
    tenancy::TenantConn,
};

impl SchoolResource for Marks {
    const PERMISSION: Resource = Resource::Mark;
    const PATH: &'static str = "/api/v1/school/sessions/{session_pk}/exam-sessions/{exam_session_pk}/exams/{exam_pk}/marks/";
    const CREATE_RULES: Option<&'static str> = Some(
        "One live mark per (exam, studentadmissionnumber) (409 `conflict`); `confirm-students` creates or updates it instead.",
    );

    fn parse(f: &mut Fields<'_>) -> MarkChanges {
        MarkChanges {
            studentadmissionnumber: f.required("studentadmissionnumber", &len(1, 255)),
            mark: f.nullable("mark", None, &any),
            symbol: f.nullable("symbol", None, &len(0, 255)),
            comment: f.nullable("comment", None, &len(0, 10_000)),
            is_deleted: f.optional("is_deleted", false, &any),
            score: f.nullable::<Value>("score", None, &decimal).map(|score| {
                score
                    .as_ref()
                    .and_then(Value::as_f64)
                    .and_then(canonical_decimal)
            }),
            score_status: f.nullable("score_status", None, &OneOf(SCORE_STATUSES)),
            score_date: f.nullable("score_date", None, &any),
            text_score: f.nullable("text_score", None, &len(0, 255)),
        }
    }

    fn validate(
        conn: &mut TenantConn,
        _: &Uuid,
        changes: &MarkChanges,
        _: Option<&Mark>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        check_student(conn, changes, errors)
    }
}

/// A decimal score: any finite JSON number.
fn decimal(value: &Value) -> Result<(), String> {
    match value.as_f64().and_then(canonical_decimal) {
        Some(_) if value.is_number() => Ok(()),
        _ => Err("a number is required".into()),
    }
}

/// The admission number, when given, must be a live student's.
fn check_student(
    conn: &mut TenantConn,
    changes: &MarkChanges,
    errors: &mut FieldErrors,
) -> ApiResult<()> {
    if let Some(number) = &changes.studentadmissionnumber {
        if !Students::admission_number_is_live(conn, number)? {
            errors.add(
                "studentadmissionnumber",
                "no live student has this admission number",
            );
        }
    }
    Ok(())
}

pub fn mount(m: &mut Mount) {
    m.endpoint(&format!("{}confirm-students/", Marks::PATH))
        .post(confirm_students, |doc: &mut ApiDoc| {
            let mark = doc.schema::<Mark>();
            Op::new(
                "marks",
                "Create or update the mark of a student for this exam",
                Auth::BearerOrKey,
            )
            .body(request_schema(&fields_of::<Marks>(), true))
            .ok(200, Some(mark))
            .errors(&[409])
        });
    crud::mount::<Marks>(m);
}

const CONFIRM: &[Permission] = &[
    Permission::new(Action::Add, Resource::Mark),
    Permission::new(Action::Change, Resource::Mark),
];

/// Creates or updates the live mark of `studentadmissionnumber` for the exam; only the
/// given fields change on an update.
async fn confirm_students(
    request: SchoolRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let path = PathIds::of(request.http());
    let body = read_object(request.http(), payload).await;
    let mark = request
        .run(Need::All(CONFIRM), move |conn, caller| {
            let exam = Marks::scope(conn, &path.parse()?)?;
            let body = body?;
            let mut fields = Fields::new(&body, Mode::Patch);
            let changes = Marks::parse(&mut fields);
            if changes.studentadmissionnumber.is_none()
                && !fields.has_error("studentadmissionnumber")
            {
                fields.error("studentadmissionnumber", "this field is required");
            }
            let mut changes = validated::<Marks>(conn, &exam, fields, changes, None)?;
            let number = (changes.studentadmissionnumber.take()).ok_or_else(|| {
                ApiError::validation("studentadmissionnumber", "this field is required")
            })?;
            conn.transaction(|conn| Marks::upsert(conn, exam, &number, changes, &caller.actor()))
        })
        .await?;
    Ok(HttpResponse::Ok().json(mark))
}
