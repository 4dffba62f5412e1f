//! `/api/v1/school/subjects/`: subjects (code unique among live subjects), and the spec's
//! `bulk-soft-delete`.

use actix_web::{HttpResponse, web};
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use serde_json::json;
use uuid::Uuid;

use crate::{
    api::{
        body::read_object,
        fields::{FieldType, Fields, any, len},
        pagination::query_map,
        routes::Endpoint,
        school::{
            crud::{SchoolResource, check_ref, table_queries, top_level_methods},
            departments,
        },
    },
    auth::{
        Caller, Need, SchoolRequest,
        permissions::{Action, Permission, Resource},
    },
    db::schema_tenant::subjects as t,
    error::{ApiError, ApiResult, FieldErrors},
    tenancy::TenantConn,
};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct Subject {
    pub id: Uuid,
    pub name: String,
    pub code: String,
    #[serde(rename = "department")]
    pub department_id: Option<Uuid>,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(AsChangeset, Default)]
#[diesel(table_name = t)]
pub struct SubjectInput {
    name: Option<String>,
    code: Option<String>,
    department_id: Option<Option<Uuid>>,
    is_deleted: Option<bool>,
}

table_queries!(t, Subject, search: [name, code], soft_delete: is_deleted, changes: SubjectInput);

pub struct Subjects;

impl SchoolResource for Subjects {
    const CREATE_RULES: Option<&'static str> =
        Some("`code` is unique among live subjects (409 `conflict`).");
    const PERMISSION: Resource = Resource::Subject;
    const PATH: &'static str = "/api/v1/school/subjects/";
    type Scope = ();
    type Record = Subject;
    type Input = SubjectInput;

    top_level_methods!();

    fn parse(f: &mut Fields<'_>) -> SubjectInput {
        SubjectInput {
            name: f.required("name", &len(1, 255)),
            code: f.required("code", &len(1, 50)),
            department_id: f.nullable("department", None, &any),
            is_deleted: f.optional("is_deleted", false, &any),
        }
    }

    fn validate(
        conn: &mut TenantConn,
        _: &(),
        input: &SubjectInput,
        _: Option<&Subject>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        check_ref(
            conn,
            errors,
            "department",
            input.department_id.flatten(),
            "department",
            departments::live_exists,
        )?;
        Ok(())
    }

    fn create(
        conn: &mut TenantConn,
        _: &(),
        input: SubjectInput,
        caller: &Caller,
    ) -> ApiResult<Subject> {
        Ok(diesel::insert_into(t::table)
            .values((
                t::id.eq(Uuid::new_v4()),
                t::name.eq(input.name.unwrap_or_default()),
                t::code.eq(input.code.unwrap_or_default()),
                t::department_id.eq(input.department_id.flatten()),
                t::is_deleted.eq(input.is_deleted.unwrap_or(false)),
                t::created_by.eq(caller.user_id()),
                t::updated_by.eq(caller.user_id()),
            ))
            .returning(Subject::as_returning())
            .get_result(conn.pg())?)
    }
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    // Before the generic `{id}` routes, which would take `bulk-soft-delete` for an id.
    Endpoint::new("/api/v1/school/subjects/bulk-soft-delete/")
        .delete(bulk_soft_delete)
        .register(cfg);
}

const BULK_MAX: usize = 1000;
const DELETE_SUBJECT: &[Permission] = &[Permission::new(Action::Delete, Resource::Subject)];

/// `{"ids": [uuid, ...]}` (1-1000), or `?ids=a,b`: marks the live ones deleted.
async fn bulk_soft_delete(
    request: SchoolRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let http = request.http().clone();
    let body = read_object(&http, payload, request.state().config.max_body_bytes).await;
    let query_ids = query_map(&http)?.get("ids").cloned();
    let count = request
        .run(Need::All(DELETE_SUBJECT), move |conn, caller| {
            let ids = bulk_ids(body?, query_ids)?;
            Ok(diesel::update(
                t::table
                    .filter(t::id.eq_any(&ids))
                    .filter(t::is_deleted.eq(false)),
            )
            .set((
                t::is_deleted.eq(true),
                t::updated_by.eq(caller.user_id()),
                t::updated_at.eq(Utc::now()),
            ))
            .execute(conn.pg())?)
        })
        .await?;
    Ok(HttpResponse::Ok().json(json!({"deleted": true, "count": count})))
}

fn bulk_ids(body: crate::api::body::JsonObject, query_ids: Option<String>) -> ApiResult<Vec<Uuid>> {
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
    Ok(ids)
}
