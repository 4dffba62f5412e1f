//! The one generic path for school resources with the usual shape: list, create, retrieve,
//! replace (PUT), patch and delete, nested under parents or not.
//!
//! A resource is its school store (`crate::school::Store`: the records and their scoped
//! reads and writes) that also says what it is over HTTP (`SchoolResource`: path,
//! permission, how a body is parsed and checked, documentation); the handlers here do the
//! rest the same way for every resource: permission from the HTTP method, path ids (400
//! `invalid_id`), parents and record (404), then the body, validation and the write, all in
//! one blocking task on one connection bound to the school. `mount` registers and describes
//! the resource's two endpoints.

use actix_web::{HttpRequest, HttpResponse, web};
use serde::Serialize;
use utoipa::openapi::{RefOr, schema::Schema};
use uuid::Uuid;

use crate::{
    api::{
        PathIds,
        body::{JsonObject, read_object},
        fields::{FieldDoc, Fields, Mode, describe as describe_fields},
        openapi::{
            ApiDoc, Auth, Op,
            schema::{self, page_of},
        },
        pagination::{ListQuery, flag, page_response, query_map},
        routes::Mount,
    },
    auth::permissions::{Action, Permission, Resource},
    error::{ApiError, ApiResult, FieldErrors},
    request::{Caller, Need, SchoolRequest},
    school::{Store, Target, is_school_user},
    state::AppState,
    tenancy::{Tenant, TenantConn},
};

/// What a school store is over HTTP. Implemented on the store itself (`impl SchoolResource
/// for school::classes::Classes`), so a resource reads and writes through its own store.
pub trait SchoolResource: Store<Record: Serialize + utoipa::ToSchema> {
    /// The resource permissions are checked on.
    const PERMISSION: Resource;
    /// The collection path, e.g. `/api/v1/school/sessions/{session_pk}/exam-sessions/`.
    const PATH: &'static str;
    /// Rules of create beyond the request schema (uniqueness and the like), for the
    /// OpenAPI document.
    const CREATE_RULES: Option<&'static str> = None;
    /// Rules of every write (create, replace, patch, delete) beyond the permission of the
    /// method, for the OpenAPI document (see `authorize`).
    const WRITE_RULES: Option<&'static str> = None;
    /// Query parameters the list narrows by beyond the usual ones (name, what it does),
    /// read by the store's `list` from `ListQuery::params`; for the OpenAPI document.
    const LIST_FILTERS: &'static [(&'static str, &'static str)] = &[];

    /// Reads a body: on create and replace every field is set (required ones given,
    /// optional ones defaulted), on patch only the given ones.
    fn parse(fields: &mut Fields<'_>) -> Self::Changes;

    /// Checks that need the database or the current record (references, cross-field
    /// rules on the merged result). Records problems in `errors`.
    fn validate(
        _conn: &mut TenantConn,
        _parent: &Self::Parent,
        _changes: &Self::Changes,
        _current: Option<&Self::Record>,
        _errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        Ok(())
    }

    /// Whether `caller` may make this write, beyond holding the resource's permission for
    /// the method (roles: nobody grants what they do not hold). Runs in the write's
    /// transaction, after the body is validated and before anything is written; an error
    /// writes nothing.
    fn authorize(
        _conn: &mut TenantConn,
        _caller: &Caller,
        _write: Proposed<'_, Self>,
    ) -> ApiResult<()> {
        Ok(())
    }

    /// Puts in, or refuses, who a create, replace or patch is on behalf of (a teacher's
    /// own grade comments), once the body is read and validated and before `authorize`:
    /// `current` is the record changed (none on create). An error writes nothing.
    fn on_behalf(
        _conn: &mut TenantConn,
        _caller: &Caller,
        _changes: &mut Self::Changes,
        _current: Option<&Self::Record>,
    ) -> ApiResult<()> {
        Ok(())
    }

    /// Whether a caller without the resource's permission for a write's `action` may still
    /// make it, record by record (`authorize` then decides): a teacher recording their own
    /// classes' attendance. Checked where the permission would be, before the body.
    fn may_write_without_permission(
        _conn: &mut TenantConn,
        _caller: &Caller,
        _action: Action,
    ) -> ApiResult<bool> {
        Ok(false)
    }

    /// The body of a 201 answer; the record itself unless the resource says otherwise.
    fn created_body(record: Self::Record) -> ApiResult<serde_json::Value> {
        serde_json::to_value(record).map_err(ApiError::internal)
    }

    /// The schema of the 201 body (see `created_body`).
    fn created_schema(doc: &mut ApiDoc) -> RefOr<Schema> {
        doc.schema::<Self::Record>()
    }

    /// Runs in the unit of work of every create, update and delete of this resource, after
    /// the write (to tell other processes about it: `NOTIFY` is delivered on commit).
    fn announce_write(_conn: &mut TenantConn) -> ApiResult<()> {
        Ok(())
    }

    /// Runs after a create, update or delete of this resource has committed (to drop
    /// this process's caches that depend on it).
    fn after_write(_state: &AppState, _school: &Tenant) {}
}

/// A write as `SchoolResource::authorize` sees it: the record as it is, and what the
/// request would make of it.
pub enum Proposed<'a, R: SchoolResource> {
    Create(&'a R::New),
    Replace(&'a R::Record, &'a R::New),
    Patch(&'a R::Record, &'a R::Changes),
    Delete(&'a R::Record),
}

/// The rule for references: the id must name a live record of `S` in this school. Records
/// a message on `field` otherwise (`id` of `None`: nothing to check).
pub fn check_ref<S: Store>(
    conn: &mut TenantConn,
    errors: &mut FieldErrors,
    field: &str,
    id: Option<Uuid>,
    what: &str,
) -> ApiResult<()> {
    if let Some(id) = id {
        if !S::live_exists(conn, id)? {
            errors.add(field, format!("no live {what} has the id {id}"));
        }
    }
    Ok(())
}

/// Records an error on `field` when `user` is given and is not a user of this school.
pub fn check_school_user(
    conn: &mut TenantConn,
    field: &str,
    user: Option<Uuid>,
    errors: &mut FieldErrors,
) -> ApiResult<()> {
    if let Some(user) = user {
        if !is_school_user(conn, user)? {
            errors.add(field, "no user of this school has this id");
        }
    }
    Ok(())
}

/// `?include_deleted=true` on item paths.
fn include_deleted(req: &HttpRequest) -> ApiResult<bool> {
    flag(&query_map(req)?, "include_deleted")
}

/// Resolves the addressed record (404 when it, or a parent, is missing or hidden).
fn target_and_record<R: SchoolResource>(
    conn: &mut TenantConn,
    path: &PathIds,
    include_deleted: ApiResult<bool>,
) -> ApiResult<(Target<R::Parent>, R::Record)> {
    // Item paths end with the record's `{id}`; the ids before it name its parents.
    let mut parents = path.parse()?;
    let id = parents.pop().ok_or_else(ApiError::not_found)?;
    let target = Target {
        parent: R::scope(conn, &parents)?,
        id,
        include_deleted: include_deleted?,
    };
    let record = R::find(conn, target)?.ok_or_else(ApiError::not_found)?;
    Ok((target, record))
}

/// Parses and validates `body` in `mode`: every problem of the body at once.
pub fn parse_changes<R: SchoolResource>(
    conn: &mut TenantConn,
    parent: &R::Parent,
    body: &JsonObject,
    mode: Mode,
    current: Option<&R::Record>,
) -> ApiResult<R::Changes> {
    let mut fields = Fields::new(body, mode);
    let changes = R::parse(&mut fields);
    validated::<R>(conn, parent, fields, changes, current)
}

/// `changes` read by `fields`, once `R::validate` has had its say: every problem at once.
pub fn validated<R: SchoolResource>(
    conn: &mut TenantConn,
    parent: &R::Parent,
    mut fields: Fields<'_>,
    changes: R::Changes,
    current: Option<&R::Record>,
) -> ApiResult<R::Changes> {
    let mut errors = FieldErrors::new();
    R::validate(conn, parent, &changes, current, &mut errors)?;
    fields.merge(errors);
    fields.finish(changes)
}

/// A complete form from changes parsed in create or replace mode.
pub fn complete<R: SchoolResource>(changes: R::Changes) -> ApiResult<R::New> {
    R::New::try_from(changes).map_err(ApiError::internal)
}

pub async fn list<R: SchoolResource>(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let http = request.http().clone();
    let path = PathIds::of(&http);
    let query = ListQuery::parse_filtered(&http, R::LIST_FILTERS);
    let page_query = query.as_ref().ok().cloned();
    let (count, rows) = request
        .run(Need::Method(R::PERMISSION), move |conn, _| {
            let parents = path.parse()?;
            let parent = R::scope(conn, &parents)?;
            let query = query?;
            let (count, rows) = R::list(conn, parent, &query)?;
            query.check_page(count)?;
            Ok((count, rows))
        })
        .await?;
    let query = page_query.ok_or_else(|| ApiError::InvalidQuery("bad list parameters".into()))?;
    page_response(&http, &query, count, rows)
}

/// Runs `write` in a transaction with the resource's announcement, then its `after_write`.
pub async fn write<R, T, F>(request: SchoolRequest, write: F) -> ApiResult<T>
where
    R: SchoolResource,
    T: Send + 'static,
    F: FnOnce(&mut TenantConn, &Caller) -> ApiResult<T> + Send + 'static,
{
    let state = request.state();
    let action = Action::for_method(request.http().method());
    let (result, school) = request
        .run(Need::Authenticated, move |conn, caller| {
            let action = action
                .ok_or_else(|| ApiError::internal(anyhow::anyhow!("a write without an action")))?;
            let permission = Permission::new(action, R::PERMISSION);
            if !caller.permissions.contains(permission)
                && !R::may_write_without_permission(conn, caller, action)?
            {
                return Err(ApiError::PermissionDenied(format!(
                    "you do not have permission to perform this action ({permission} is required)"
                )));
            }
            let result = conn.transaction(|conn| {
                let result = write(conn, caller)?;
                R::announce_write(conn)?;
                Ok::<_, ApiError>(result)
            })?;
            Ok((result, caller.tenant.clone()))
        })
        .await?;
    R::after_write(&state, &school);
    Ok(result)
}

pub async fn create<R: SchoolResource>(
    request: SchoolRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let path = PathIds::of(request.http());
    let body = read_object(request.http(), payload).await;
    let record = write::<R, _, _>(request, move |conn, caller| {
        let parent = R::scope(conn, &path.parse()?)?;
        let mut changes = parse_changes::<R>(conn, &parent, &body?, Mode::Create, None)?;
        R::on_behalf(conn, caller, &mut changes, None)?;
        let new = complete::<R>(changes)?;
        R::authorize(conn, caller, Proposed::Create(&new))?;
        R::create(conn, parent, new, &caller.actor())
    })
    .await?;
    Ok(HttpResponse::Created().json(R::created_body(record)?))
}

pub async fn retrieve<R: SchoolResource>(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let path = PathIds::of(request.http());
    let include_deleted = include_deleted(request.http());
    let record = request
        .run(Need::Method(R::PERMISSION), move |conn, _| {
            Ok(target_and_record::<R>(conn, &path, include_deleted)?.1)
        })
        .await?;
    Ok(HttpResponse::Ok().json(record))
}

/// PUT and PATCH: the body in `mode` over the addressed record.
async fn change<R: SchoolResource>(
    request: SchoolRequest,
    payload: web::Payload,
    mode: Mode,
) -> ApiResult<HttpResponse> {
    let path = PathIds::of(request.http());
    let include_deleted = include_deleted(request.http());
    let body = read_object(request.http(), payload).await;
    let record = write::<R, _, _>(request, move |conn, caller| {
        let (target, current) = target_and_record::<R>(conn, &path, include_deleted)?;
        let mut changes = parse_changes::<R>(conn, &target.parent, &body?, mode, Some(&current))?;
        R::on_behalf(conn, caller, &mut changes, Some(&current))?;
        let actor = caller.actor();
        match mode {
            Mode::Patch => {
                R::authorize(conn, caller, Proposed::Patch(&current, &changes))?;
                R::update(conn, target, changes, &actor)
            }
            _ => {
                let new = complete::<R>(changes)?;
                R::authorize(conn, caller, Proposed::Replace(&current, &new))?;
                R::replace(conn, target, new, &actor)
            }
        }
    })
    .await?;
    Ok(HttpResponse::Ok().json(record))
}

pub async fn replace<R: SchoolResource>(
    request: SchoolRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    change::<R>(request, payload, Mode::Replace).await
}

pub async fn patch<R: SchoolResource>(
    request: SchoolRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    change::<R>(request, payload, Mode::Patch).await
}

pub async fn destroy<R: SchoolResource>(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let path = PathIds::of(request.http());
    let include_deleted = include_deleted(request.http());
    write::<R, _, _>(request, move |conn, caller| {
        let (target, current) = target_and_record::<R>(conn, &path, include_deleted)?;
        R::authorize(conn, caller, Proposed::Delete(&current))?;
        R::delete(conn, target, &caller.actor())
    })
    .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Two optional descriptions as one.
fn joined(first: Option<&'static str>, second: Option<&'static str>) -> Option<String> {
    match (first, second) {
        (Some(a), Some(b)) => Some(format!("{a}\n\n{b}")),
        (a, b) => a.or(b).map(str::to_owned),
    }
}

/// The fields `R` reads, as the OpenAPI document describes them.
pub fn fields_of<R: SchoolResource>() -> Vec<FieldDoc> {
    describe_fields(R::parse)
}

/// Mounts the collection and item endpoints of `R`, described for the OpenAPI document:
/// request bodies from `R::parse` itself, responses from its record type.
pub fn mount<R: SchoolResource>(m: &mut Mount) {
    let name = R::PATH
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or("records")
        .to_owned();
    let fields = fields_of::<R>();
    let doc = m.doc();
    let record = doc.schema::<R::Record>();
    doc.constrain_record(&record, &fields);
    let created = R::created_schema(doc);
    let page_name = format!("{}Page", <R::Record as utoipa::ToSchema>::name());
    let page = page_of(doc, &page_name, record.clone());
    let op = |summary: &str| {
        Op::new(
            name.as_str(),
            format!("{summary} {name}"),
            Auth::BearerOrKey,
        )
    };
    let with_flag = |o: Op| {
        o.query(
            "include_deleted",
            schema::boolean(),
            "also soft-deleted records",
        )
    };
    let full_body = schema::request_schema(&fields, true);
    let mut list_op = op("List");
    for (filter, what) in R::LIST_FILTERS {
        list_op = list_op.query(filter, schema::string(), what);
    }
    m.endpoint(R::PATH)
        .get(
            list::<R>,
            with_flag(
                list_op
                    .query("page", schema::integer(), "page number, from 1")
                    .query(
                        "page_size",
                        schema::integer(),
                        "records per page (default 50, max 200)",
                    )
                    .query(
                        "search",
                        schema::string(),
                        "case-insensitive substring of the name-like fields",
                    ),
            )
            .ok(200, Some(page)),
        )
        .post(
            create::<R>,
            op("Create one of")
                .description(joined(R::CREATE_RULES, R::WRITE_RULES).as_deref())
                .body(full_body.clone())
                .ok(201, Some(created))
                .errors(&[409]),
        );
    m.endpoint(&format!("{}{{id}}/", R::PATH))
        .get(
            retrieve::<R>,
            with_flag(op("Retrieve one of")).ok(200, Some(record.clone())),
        )
        .put(
            replace::<R>,
            with_flag(op("Replace one of"))
                .description(R::WRITE_RULES)
                .body(full_body)
                .ok(200, Some(record.clone()))
                .errors(&[409]),
        )
        .patch(
            patch::<R>,
            with_flag(op("Update one of"))
                .description(R::WRITE_RULES)
                .body(schema::request_schema(&fields, false))
                .ok(200, Some(record))
                .errors(&[409]),
        )
        .delete(
            destroy::<R>,
            with_flag(op("Delete one of"))
                .description(R::WRITE_RULES)
                .ok(204, None)
                .errors(&[409]),
        );
}
