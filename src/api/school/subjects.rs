//! `/api/v1/school/subjects/`: subjects, and the spec's `bulk-soft-delete`.

use actix_web::{HttpResponse, web};
use uuid::Uuid;

use crate::{
    api::{
        body::{JsonObject, read_object},
        fields::{Constraints, Fields, Mode, Rule, any, describe, len},
        openapi::{
            ApiDoc, Auth, Op,
            schema::{request_schema, string},
        },
        pagination::query_map,
        routes::Mount,
        school::crud::{self, SchoolResource, check_ref},
    },
    auth::permissions::{Action, Permission, Resource},
    error::{ApiError, ApiResult, FieldErrors},
    request::{Need, SchoolRequest},
    school::{
        departments::Departments,
        subjects::{Subject, SubjectChanges, Subjects},
        table::given,
    },
    tenancy::TenantConn,
};

impl SchoolResource for Subjects {
    const PERMISSION: Resource = Resource::Subject;
    const PATH: &'static str = "/api/v1/school/subjects/";
    const CREATE_RULES: Option<&'static str> =
        Some("`code` is unique among live subjects (409 `conflict`).");

    fn parse(f: &mut Fields<'_>) -> SubjectChanges {
        SubjectChanges {
            name: f.required("name", &len(1, 255)),
            code: f.required("code", &len(1, 50)),
            department_id: f.nullable("department", None, &any),
            is_deleted: f.optional("is_deleted", false, &any),
        }
    }

    fn validate(
        conn: &mut TenantConn,
        _: &(),
        changes: &SubjectChanges,
        _: Option<&Subject>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        let department = changes.department_id.flatten();
        check_ref::<Departments>(conn, errors, "department", department, "department")
    }
}

/// 1 to `BULK_MAX` subject ids, the rule of `bulk-soft-delete`'s `ids` (body or query).
struct BulkCount;

impl Rule<Vec<Uuid>> for BulkCount {
    fn check(&self, ids: &Vec<Uuid>) -> Result<(), String> {
        match ids.len() {
            1..=BULK_MAX => Ok(()),
            _ => Err(format!("give between 1 and {BULK_MAX} ids")),
        }
    }

    fn describe(&self, c: &mut Constraints) {
        c.min_items = Some(1);
        c.max_items = Some(BULK_MAX);
    }
}

/// The body of `bulk-soft-delete` (also its documentation).
fn parse_bulk(f: &mut Fields<'_>) -> Option<Vec<Uuid>> {
    f.required("ids", &BulkCount)
}

/// The answer of `bulk-soft-delete`.
#[derive(serde::Serialize, utoipa::ToSchema)]
struct BulkSoftDeleted {
    /// Always true.
    deleted: bool,
    /// How many live subjects were marked deleted.
    count: usize,
}

pub fn mount(m: &mut Mount) {
    m.endpoint("/api/v1/school/subjects/bulk-soft-delete/")
        .delete(bulk_soft_delete, |doc: &mut ApiDoc| {
            let answer = doc.schema::<BulkSoftDeleted>();
            Op::new(
                "subjects",
                "Soft-delete several subjects (body `ids`, or `?ids=a,b`)",
                Auth::BearerOrKey,
            )
            .query(
                "ids",
                string(),
                "comma-separated UUIDs, instead of the body",
            )
            .body(request_schema(&describe(parse_bulk), true))
            .ok(200, Some(answer))
        });
    crud::mount::<Subjects>(m);
}

const BULK_MAX: usize = 1000;
const DELETE_SUBJECT: &[Permission] = &[Permission::new(Action::Delete, Resource::Subject)];

/// `{"ids": [uuid, ...]}` (1-1000), or `?ids=a,b`: marks the live ones deleted.
async fn bulk_soft_delete(
    request: SchoolRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    // The query string is judged after authentication, like the body (API.md 2).
    let query_ids = query_map(request.http()).map(|query| query.get("ids").cloned());
    let body = read_object(request.http(), payload).await;
    let count = request
        .run(Need::All(DELETE_SUBJECT), move |conn, caller| {
            let ids = bulk_ids(body?, query_ids?)?;
            Subjects::soft_delete_many(conn, &ids, &caller.actor())
        })
        .await?;
    Ok(HttpResponse::Ok().json(BulkSoftDeleted {
        deleted: true,
        count,
    }))
}

/// The ids of the body, or else of `?ids=a,b`.
fn bulk_ids(body: JsonObject, query_ids: Option<String>) -> ApiResult<Vec<Uuid>> {
    let ids: Vec<Uuid> = match (body.contains_key("ids"), query_ids) {
        (true, _) => {
            let mut fields = Fields::new(&body, Mode::Create);
            let ids = parse_bulk(&mut fields);
            let ids = fields.finish(ids)?;
            return given(ids, "ids").map_err(ApiError::internal);
        }
        (false, Some(raw)) => raw
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| Uuid::parse_str(s.trim()))
            .collect::<Result<_, _>>()
            .map_err(|_| ApiError::validation("ids", "must be a list of valid UUIDs"))?,
        (false, None) => return Err(ApiError::validation("ids", "this field is required")),
    };
    BulkCount
        .check(&ids)
        .map_err(|m| ApiError::validation("ids", m))?;
    Ok(ids)
}
