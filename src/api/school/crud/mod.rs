//! The one generic path for school resources with the usual shape: list, create, retrieve,
//! replace (PUT), patch and delete, nested under parents or not.
//!
//! A resource implements `SchoolResource` (its parsing, checks and queries); the handlers
//! here do the rest the same way for every resource: permission from the HTTP method, path
//! ids (400 `invalid_id`), parents and record (404), then the body, validation and the write,
//! all in one blocking task on one connection bound to the school.
//!
//! `macros` holds what the resources' own modules share: `table_queries!`,
//! `top_level_methods!`, `nested_methods!` and `check_ref`.

mod macros;

pub use macros::check_ref;
pub(crate) use macros::{nested_methods, table_queries, top_level_methods};

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use serde::Serialize;
use utoipa::openapi::{RefOr, schema::Schema};
use uuid::Uuid;

use crate::{
    api::{
        PathIds,
        body::{JsonObject, read_object},
        fields::{Fields, Mode, describe as describe_fields},
        openapi::{ApiDoc, Auth, Op, build},
        pagination::{ListQuery, flag, page_response, query_map},
        routes::Endpoint,
    },
    auth::{Caller, Need, SchoolRequest, permissions::Resource},
    error::{ApiError, ApiResult, FieldErrors},
    state::AppState,
    tenancy::{Tenant, TenantConn},
};

pub trait SchoolResource: Sized + Send + 'static {
    /// The resource permissions are checked on.
    const PERMISSION: Resource;
    /// The collection path, e.g. `/api/v1/school/sessions/{session_pk}/exam-sessions/`.
    const PATH: &'static str;
    /// What the parent ids of the path resolve to (`()` for top-level resources).
    type Scope: Send + 'static;
    /// The record as answered.
    type Record: Serialize + utoipa::ToSchema + Send + 'static;
    /// A parsed request body: on create and replace every field is set (required ones
    /// given, optional ones defaulted); on patch only the given ones.
    type Input: Send + 'static;

    /// Resolves the parent ids of the path; 404 when one is missing, deleted or under
    /// another parent.
    fn scope(conn: &mut TenantConn, parents: &[Uuid]) -> ApiResult<Self::Scope>;

    fn parse(fields: &mut Fields<'_>) -> Self::Input;

    /// Checks that need the database or the current record (references, cross-field
    /// rules on the merged result). Records problems in `errors`.
    fn validate(
        _conn: &mut TenantConn,
        _scope: &Self::Scope,
        _input: &Self::Input,
        _current: Option<&Self::Record>,
        _errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        Ok(())
    }

    /// The body of a 201 answer; the record itself unless the resource says otherwise.
    fn created_body(record: Self::Record) -> ApiResult<serde_json::Value> {
        serde_json::to_value(record).map_err(ApiError::internal)
    }

    /// Runs in the unit of work of every create, update and delete of this resource, after
    /// the write (to tell other processes about it: `NOTIFY` is delivered on commit).
    fn announce_write(_conn: &mut TenantConn) -> ApiResult<()> {
        Ok(())
    }

    /// Runs after a create, update or delete of this resource has committed (to drop
    /// this process's caches that depend on it).
    fn after_write(_state: &AppState, _school: &Tenant) {}

    /// Rules of create beyond the request schema (uniqueness and the like), for the
    /// OpenAPI document.
    const CREATE_RULES: Option<&'static str> = None;

    /// The schema of the 201 body (see `created_body`).
    fn created_schema(doc: &mut ApiDoc) -> RefOr<Schema> {
        doc.schema::<Self::Record>()
    }

    fn list(
        conn: &mut TenantConn,
        scope: &Self::Scope,
        query: &ListQuery,
    ) -> ApiResult<(i64, Vec<Self::Record>)>;

    fn find(
        conn: &mut TenantConn,
        scope: &Self::Scope,
        id: Uuid,
        include_deleted: bool,
    ) -> ApiResult<Option<Self::Record>>;

    fn create(
        conn: &mut TenantConn,
        scope: &Self::Scope,
        input: Self::Input,
        actor: &Caller,
    ) -> ApiResult<Self::Record>;

    fn update(
        conn: &mut TenantConn,
        scope: &Self::Scope,
        id: Uuid,
        input: Self::Input,
        actor: &Caller,
    ) -> ApiResult<Self::Record>;

    /// A real delete; 409 while other records reference it.
    fn delete(conn: &mut TenantConn, scope: &Self::Scope, id: Uuid) -> ApiResult<()>;
}

/// The live record `id` of `R` under `scope`, or 404: how nested paths check their
/// parents.
pub fn live_under<R: SchoolResource>(
    conn: &mut TenantConn,
    scope: &R::Scope,
    id: Uuid,
) -> ApiResult<R::Record> {
    R::find(conn, scope, id, false)?.ok_or_else(ApiError::not_found)
}

/// `?include_deleted=true` on item paths.
fn include_deleted(req: &HttpRequest) -> ApiResult<bool> {
    flag(&query_map(req)?, "include_deleted")
}

/// Resolves scope and the addressed record (404 when missing or hidden).
fn scope_and_record<R: SchoolResource>(
    conn: &mut TenantConn,
    path: &PathIds,
    include_deleted: ApiResult<bool>,
) -> ApiResult<(R::Scope, Uuid, R::Record)> {
    // Item paths end with the record's `{id}`; the ids before it name its parents.
    let mut parents = path.parse()?;
    let id = parents.pop().ok_or_else(ApiError::not_found)?;
    let scope = R::scope(conn, &parents)?;
    let record = R::find(conn, &scope, id, include_deleted?)?.ok_or_else(ApiError::not_found)?;
    Ok((scope, id, record))
}

fn parse_input<R: SchoolResource>(
    conn: &mut TenantConn,
    scope: &R::Scope,
    body: &JsonObject,
    mode: Mode,
    current: Option<&R::Record>,
) -> ApiResult<R::Input> {
    let mut fields = Fields::new(body, mode);
    let input = R::parse(&mut fields);
    let mut errors = FieldErrors::new();
    R::validate(conn, scope, &input, current, &mut errors)?;
    fields.merge(errors);
    fields.finish(input)
}

pub async fn list<R: SchoolResource>(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let http = request.http().clone();
    let path = PathIds::of(&http);
    let query = ListQuery::parse(&http);
    let page_query = query.as_ref().ok().cloned();
    let (count, rows) = request
        .run(Need::Method(R::PERMISSION), move |conn, _| {
            let parents = path.parse()?;
            let scope = R::scope(conn, &parents)?;
            let query = query?;
            let (count, rows) = R::list(conn, &scope, &query)?;
            query.check_page(count)?;
            Ok((count, rows))
        })
        .await?;
    let query = page_query.ok_or_else(|| ApiError::InvalidQuery("bad list parameters".into()))?;
    page_response(&http, &query, count, rows)
}

pub async fn create<R: SchoolResource>(
    request: SchoolRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let http = request.http().clone();
    let body = read_object(&http, payload, request.state().config.max_body_bytes).await;
    let path = PathIds::of(&http);
    let state = request.state();
    let (record, school) = request
        .run(Need::Method(R::PERMISSION), move |conn, caller| {
            let parents = path.parse()?;
            let scope = R::scope(conn, &parents)?;
            let body = body?;
            let record = conn.transaction(|conn| {
                let input = parse_input::<R>(conn, &scope, &body, Mode::Create, None)?;
                let record = R::create(conn, &scope, input, caller)?;
                R::announce_write(conn)?;
                Ok::<_, ApiError>(record)
            })?;
            Ok((record, caller.tenant.clone()))
        })
        .await?;
    R::after_write(&state, &school);
    Ok(HttpResponse::Created().json(R::created_body(record)?))
}

pub async fn retrieve<R: SchoolResource>(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let http = request.http().clone();
    let path = PathIds::of(&http);
    let include_deleted = include_deleted(&http);
    let record = request
        .run(Need::Method(R::PERMISSION), move |conn, _| {
            Ok(scope_and_record::<R>(conn, &path, include_deleted)?.2)
        })
        .await?;
    Ok(HttpResponse::Ok().json(record))
}

async fn write<R: SchoolResource>(
    request: SchoolRequest,
    payload: web::Payload,
    mode: Mode,
) -> ApiResult<HttpResponse> {
    let http = request.http().clone();
    let body = read_object(&http, payload, request.state().config.max_body_bytes).await;
    let path = PathIds::of(&http);
    let include_deleted = include_deleted(&http);
    let state = request.state();
    let (record, school) = request
        .run(Need::Method(R::PERMISSION), move |conn, caller| {
            let record = conn.transaction(|conn| {
                let (scope, id, current) = scope_and_record::<R>(conn, &path, include_deleted)?;
                let body = body?;
                let input = parse_input::<R>(conn, &scope, &body, mode, Some(&current))?;
                let record = R::update(conn, &scope, id, input, caller)?;
                R::announce_write(conn)?;
                Ok::<_, ApiError>(record)
            })?;
            Ok((record, caller.tenant.clone()))
        })
        .await?;
    R::after_write(&state, &school);
    Ok(HttpResponse::Ok().json(record))
}

pub async fn replace<R: SchoolResource>(
    request: SchoolRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    write::<R>(request, payload, Mode::Replace).await
}

pub async fn patch<R: SchoolResource>(
    request: SchoolRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    write::<R>(request, payload, Mode::Patch).await
}

pub async fn destroy<R: SchoolResource>(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let http = request.http().clone();
    let path = PathIds::of(&http);
    let include_deleted = include_deleted(&http);
    let state = request.state();
    let school = request
        .run(Need::Method(R::PERMISSION), move |conn, caller| {
            conn.transaction(|conn| {
                let (scope, id, _) = scope_and_record::<R>(conn, &path, include_deleted)?;
                R::delete(conn, &scope, id)?;
                R::announce_write(conn)
            })?;
            Ok(caller.tenant.clone())
        })
        .await?;
    R::after_write(&state, &school);
    Ok(HttpResponse::NoContent().finish())
}

/// Describes the collection and item endpoints of `R` for the OpenAPI document: request
/// bodies from `R::parse` itself, responses from `R::Record`.
pub fn describe<R: SchoolResource>(doc: &mut ApiDoc) {
    let name = R::PATH
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or("records")
        .to_owned();
    let fields = describe_fields(R::parse);
    let record = doc.schema::<R::Record>();
    doc.constrain_record(&record, &fields);
    let created = R::created_schema(doc);
    let page = build::object(vec![
        ("count", build::integer()),
        ("next", build::nullable(build::string())),
        ("previous", build::nullable(build::string())),
        ("results", build::array(record.clone())),
    ]);
    let page = doc.named(
        &format!("{}Page", <R::Record as utoipa::ToSchema>::name()),
        page,
    );
    let item = format!("{}{{id}}/", R::PATH);
    let op = |summary: String| Op::new(name.as_str(), summary, Auth::BearerOrKey);
    let include_deleted = || {
        (
            "include_deleted",
            build::boolean(),
            "also soft-deleted records",
        )
    };
    let list = op(format!("List {name}"))
        .query("page", build::integer(), "page number, from 1")
        .query(
            "page_size",
            build::integer(),
            "records per page (default 50, max 200)",
        )
        .query(
            "search",
            build::string(),
            "case-insensitive substring of the name-like fields",
        )
        .query(
            include_deleted().0,
            include_deleted().1,
            include_deleted().2,
        )
        .ok(200, Some(page));
    doc.add(Method::GET, R::PATH, list);
    doc.add(
        Method::POST,
        R::PATH,
        op(format!("Create one of {name}"))
            .description(R::CREATE_RULES)
            .body(build::request_schema(&fields, true))
            .ok(201, Some(created))
            .errors(&[409]),
    );
    let with_flag = |o: Op| {
        o.query(
            include_deleted().0,
            include_deleted().1,
            include_deleted().2,
        )
    };
    doc.add(
        Method::GET,
        &item,
        with_flag(op(format!("Retrieve one of {name}"))).ok(200, Some(record.clone())),
    );
    doc.add(
        Method::PUT,
        &item,
        with_flag(op(format!("Replace one of {name}")))
            .body(build::request_schema(&fields, true))
            .ok(200, Some(record.clone()))
            .errors(&[409]),
    );
    doc.add(
        Method::PATCH,
        &item,
        with_flag(op(format!("Update one of {name}")))
            .body(build::request_schema(&fields, false))
            .ok(200, Some(record))
            .errors(&[409]),
    );
    doc.add(
        Method::DELETE,
        &item,
        with_flag(op(format!("Delete one of {name}")))
            .ok(204, None)
            .errors(&[409]),
    );
}

/// Registers the collection and item endpoints of `R`.
pub fn register<R: SchoolResource>(cfg: &mut web::ServiceConfig) {
    Endpoint::new(R::PATH)
        .get(list::<R>)
        .post(create::<R>)
        .register(cfg);
    Endpoint::new(&format!("{}{{id}}/", R::PATH))
        .get(retrieve::<R>)
        .put(replace::<R>)
        .patch(patch::<R>)
        .delete(destroy::<R>)
        .register(cfg);
}
