//! `/api/v1/school/subjects/`: subjects, and the spec's `bulk-soft-delete`.

use actix_web::{HttpResponse, web};
use uuid::Uuid;

use crate::{
    api::{
        body::{JsonObject, read_object},
        fields::{FieldType, Fields, any, len},
        openapi::{ApiDoc, Auth, Op, schema::string},
        pagination::query_map,
        routes::Mount,
        school::crud::{self, SchoolResource, check_ref},
    },
    auth::{
        Need, SchoolRequest,
        permissions::{Action, Permission, Resource},
    },
    error::{ApiError, ApiResult, FieldErrors},
    school::{
        departments::Departments,
        subjects::{Subject, SubjectChanges, Subjects},
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

/// The body of `bulk-soft-delete` (or `?ids=a,b`).
#[derive(utoipa::ToSchema)]
struct BulkIds {
    /// 1-1000 subject ids.
    #[schema(min_items = 1, max_items = 1000)]
    ids: Vec<Uuid>,
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
            .body(<BulkIds as utoipa::PartialSchema>::schema())
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
            let bulk = bulk_ids(body?, query_ids?)?;
            Subjects::soft_delete_many(conn, &bulk.ids, caller.user_id())
        })
        .await?;
    Ok(HttpResponse::Ok().json(BulkSoftDeleted {
        deleted: true,
        count,
    }))
}

fn bulk_ids(body: JsonObject, query_ids: Option<String>) -> ApiResult<BulkIds> {
    let ids: Vec<Uuid> = match (body.get("ids"), query_ids) {
        (Some(value), _) => {
            Vec::<Uuid>::from_json(value).map_err(|m| ApiError::validation("ids", m))?
        }
        (None, Some(raw)) => raw
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| Uuid::parse_str(s.trim()))
            .collect::<Result<_, _>>()
            .map_err(|_| ApiError::validation("ids", "must be a list of valid UUIDs"))?,
        (None, None) => return Err(ApiError::validation("ids", "this field is required")),
    };
    if ids.is_empty() || ids.len() > BULK_MAX {
        return Err(ApiError::validation(
            "ids",
            format!("give between 1 and {BULK_MAX} ids"),
        ));
    }
    Ok(BulkIds { ids })
}
