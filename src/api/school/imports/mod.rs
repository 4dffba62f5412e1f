//! `POST /api/v1/school/imports/{kind}/?dry_run=true|false`: a CSV or XLSX file of
//! records (API.md 10). Reading the file is here (`read.rs`); matching rows to records and
//! writing them is `crate::school::imports`.

mod read;

use actix_web::{HttpRequest, HttpResponse, http::header, web};
use futures_util::StreamExt;
use serde_json::json;

use uuid::Uuid;

use crate::{
    api::{
        PathIds,
        openapi::{ApiDoc, Auth, Op, schema},
        pagination::query_map,
        routes::Mount,
    },
    auth::{
        password::UNSET,
        permissions::{Action, Permission, Resource},
        roles::announce_change,
    },
    error::{ApiError, ApiResult},
    request::{Caller, Need, SchoolRequest},
    school::{
        imports::{Importer, Kind, Outcome, Refusal, RowError, Sheet, import},
        roles::lock_for_role_write,
        users::NamedRole,
    },
};

use super::users::rules::may_change;
use read::Unreadable;

pub const XLSX: &str = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

/// The file formats an import reads.
#[derive(Debug, Clone, Copy)]
enum Format {
    Csv,
    Xlsx,
}

fn format_of(req: &HttpRequest) -> Option<Format> {
    let content_type = req.headers().get(header::CONTENT_TYPE)?.to_str().ok()?;
    let essence = content_type.split(';').next()?.trim().to_ascii_lowercase();
    match essence.as_str() {
        "text/csv" => Some(Format::Csv),
        XLSX => Some(Format::Xlsx),
        _ => None,
    }
}

/// The permissions an import of `kind` needs: add and change of its resource (teachers:
/// also `add_user`, as their accounts are made).
fn needs(kind: Kind) -> &'static [Permission] {
    const fn both(resource: Resource) -> [Permission; 2] {
        [
            Permission::new(Action::Add, resource),
            Permission::new(Action::Change, resource),
        ]
    }
    const CLASSES: [Permission; 2] = both(Resource::AcademicClass);
    const SUBJECTS: [Permission; 2] = both(Resource::Subject);
    const STUDENTS: [Permission; 2] = both(Resource::Student);
    const TEACHERS: [Permission; 3] = {
        let [add, change] = both(Resource::TeacherProfile);
        [add, change, Permission::new(Action::Add, Resource::User)]
    };
    const ASSIGNMENTS: [Permission; 2] = both(Resource::TeacherAssignment);
    const ENROLLMENTS: [Permission; 2] = both(Resource::Enrollment);
    const MARKS: [Permission; 2] = both(Resource::Mark);
    match kind {
        Kind::Classes => &CLASSES,
        Kind::Subjects => &SUBJECTS,
        Kind::Students => &STUDENTS,
        Kind::Teachers => &TEACHERS,
        Kind::TeacherAssignments => &ASSIGNMENTS,
        Kind::Enrollments => &ENROLLMENTS,
        Kind::Marks(_) => &MARKS,
    }
}

/// Whether `caller` may change the account of a user holding `roles` (API.md 12's rule:
/// `change_user` and every permission of those roles).
fn may_change_user(caller: &Caller, roles: &[NamedRole]) -> Result<(), String> {
    let change_user = Permission::new(Action::Change, Resource::User);
    if !caller.permissions.contains(change_user) {
        return Err("changing this teacher's account needs change_user".into());
    }
    may_change(caller, roles, None).map_err(|err| err.to_string())
}

/// Reads the whole body, up to `limit` bytes (413 past it), within the body timeout.
async fn read_file(
    req: &HttpRequest,
    mut payload: web::Payload,
    limit: usize,
    timeout: std::time::Duration,
) -> ApiResult<(Format, Vec<u8>)> {
    let read = async {
        let format = format_of(req).ok_or(ApiError::UnsupportedMediaType);
        let declared = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok());
        if declared.is_some_and(|len| len > limit as u64) {
            return Err(ApiError::PayloadTooLarge(limit));
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = payload.next().await {
            let chunk = chunk.map_err(|err| {
                ApiError::MalformedJson(format!("could not read the body: {err}"))
            })?;
            if bytes.len() + chunk.len() > limit {
                return Err(ApiError::PayloadTooLarge(limit));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok((format?, bytes))
    };
    tokio::time::timeout(timeout, read)
        .await
        .unwrap_or_else(|_| {
            Err(ApiError::BodyTimeout(
                u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            ))
        })
}

/// The 400 answer of a refused import: every bad row in `errors` (API.md 10's shape).
fn refused(detail: String, errors: Vec<RowError>) -> HttpResponse {
    HttpResponse::BadRequest()
        .content_type("application/problem+json")
        .json(json!({
            "type": "about:blank",
            "title": "Bad Request",
            "status": 400,
            "code": "validation_error",
            "detail": detail,
            "errors": errors,
        }))
}

fn rows_sentence(errors: &[RowError]) -> String {
    let mut rows: Vec<usize> = errors.iter().map(|e| e.row).collect();
    rows.dedup();
    format!(
        "{} bad row{} ({}); nothing was imported",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" },
        rows.iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// What the work inside the request answers.
enum Answer {
    Done(Outcome),
    Refused(String, Vec<RowError>),
}

/// Imports the body as records of `kind` (an error: the path's exam id is not one),
/// needing `needed`.
async fn import_file(
    request: SchoolRequest,
    payload: web::Payload,
    kind: ApiResult<Kind>,
    needed: &'static [Permission],
) -> ApiResult<HttpResponse> {
    let state = request.state();
    let (limit, max_rows, timeout) = (
        state.config.import_max_bytes,
        state.config.import_max_rows,
        state.config.request_body_timeout,
    );
    let dry_run =
        query_map(request.http()).and_then(|q| match q.get("dry_run").map(String::as_str) {
            None | Some("false") => Ok(false),
            Some("true") => Ok(true),
            Some(_) => Err(ApiError::InvalidQuery(
                "dry_run must be true or false".into(),
            )),
        });
    let file = read_file(request.http(), payload, limit, timeout).await;
    let answer = request
        .run(Need::All(needed), move |conn, caller| {
            let kind = kind?;
            let dry_run = dry_run?;
            let (format, bytes) = file?;
            let sheet: Result<Sheet, Unreadable> = match format {
                Format::Csv => read::csv(&bytes, max_rows),
                Format::Xlsx => read::xlsx(&bytes, max_rows),
            };
            let sheet = match sheet {
                Ok(sheet) => sheet,
                Err(Unreadable::TooManyRows) => return Err(ApiError::PayloadTooLarge(limit)),
                Err(Unreadable::Broken(error)) => {
                    return Ok(Answer::Refused(
                        format!("the file cannot be read: {}", error.message),
                        vec![error],
                    ));
                }
            };
            let check = |roles: &[NamedRole]| may_change_user(caller, roles);
            let importer = Importer {
                actor: caller.actor(),
                may_change_user: &check,
                no_password: UNSET,
            };
            let outcome = conn.transaction(|conn| {
                let teachers = kind == Kind::Teachers && !dry_run;
                if teachers {
                    lock_for_role_write(conn)?;
                }
                let outcome = import(conn, kind, &sheet, dry_run, &importer)?;
                if teachers && outcome.is_ok() {
                    announce_change(conn)?;
                }
                Ok::<_, ApiError>(outcome)
            })?;
            Ok(match outcome {
                Ok(outcome) => Answer::Done(outcome),
                Err(Refusal::Columns(sentence)) => {
                    let error = RowError {
                        row: 1,
                        column: None,
                        code: "wrong_columns",
                        message: sentence.clone(),
                    };
                    Answer::Refused(sentence, vec![error])
                }
                Err(Refusal::Rows(errors)) => Answer::Refused(rows_sentence(&errors), errors),
            })
        })
        .await?;
    Ok(match answer {
        Answer::Done(outcome) => HttpResponse::Ok().json(outcome),
        Answer::Refused(detail, errors) => refused(detail, errors),
    })
}

/// The path of the marks of one exam.
pub const MARKS_PATH: &str = "/api/v1/school/imports/exams/{exam_pk}/marks/";

/// What an import's operation says, for `kind` (`path` names it).
fn describe(doc: &mut ApiDoc, kind: Kind) -> Op {
    let columns = kind.template().join(", ");
    let key = kind.key();
    let what = match kind {
        Kind::Marks(_) => "the marks of one exam".to_owned(),
        _ => kind.name().to_owned(),
    };
    Op::new("imports", format!("Import {what} from a CSV or XLSX file"), Auth::BearerOrKey)
        .description(Some(&format!(
            "The body is the file: `text/csv` (UTF-8, with or without a BOM; comma or semicolon) or `{XLSX}` (the first sheet). The first row names the columns ({columns}; case-insensitive). Rows are matched by {key}: a row whose key exists updates that record, other rows create records; nothing is deleted. Any bad row makes the import write nothing: 400 `validation_error` with `errors: [{{row, column, code, message}}]`. `IMPORT_MAX_ROWS` and `IMPORT_MAX_BYTES` bound a file (413). Needs the `add_` and `change_` permissions of the kind."
        )))
        .query("dry_run", schema::boolean(), "only count what the import would do (default false)")
        .ok(200, Some(doc.schema::<Outcome>()))
        .errors(&[413, 415])
}

pub fn mount(m: &mut Mount) {
    for kind in Kind::FIXED {
        let path = format!("/api/v1/school/imports/{}/", kind.name());
        let handler = move |request: SchoolRequest, payload: web::Payload| {
            import_file(request, payload, Ok(kind), needs(kind))
        };
        m.endpoint(&path)
            .post(handler, move |doc: &mut ApiDoc| describe(doc, kind));
    }
    let marks = |request: SchoolRequest, payload: web::Payload| {
        let exam = PathIds::of(request.http()).last();
        import_file(
            request,
            payload,
            exam.map(Kind::Marks),
            needs(Kind::Marks(Uuid::nil())),
        )
    };
    m.endpoint(MARKS_PATH).post(marks, |doc: &mut ApiDoc| {
        describe(doc, Kind::Marks(Uuid::nil())).errors(&[404])
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The app's Import page offers every kind with its template's columns as the server
    /// reads them (`assets/app/school_year.js`).
    #[test]
    fn the_app_offers_every_kind_with_its_columns() {
        let page = include_str!("../../../../assets/app/school_year.js");
        for kind in Kind::FIXED.into_iter().chain([Kind::Marks(Uuid::nil())]) {
            let name = kind.name();
            let key = match name.contains('-') {
                true => format!("\"{name}\": {{"),
                false => format!("{name}: {{"),
            };
            let columns = kind
                .template()
                .iter()
                .map(|c| format!("\"{c}\""))
                .collect::<Vec<_>>()
                .join(", ");
            let line = page
                .lines()
                .find(|l| l.trim_start().starts_with(&key))
                .unwrap_or_else(|| panic!("the Import page has no {name}"));
            assert!(
                line.contains(&format!("columns: [{columns}]")),
                "{name}: {line}"
            );
        }
    }
}
