//! The one generic path for school resources with the usual shape: list, create, retrieve,
//! replace (PUT), patch and delete, nested under parents or not.
//!
//! A resource implements `SchoolResource` (its parsing, checks and queries); the handlers
//! here do the rest the same way for every resource: permission from the HTTP method, path
//! ids (400 `invalid_id`), parents and record (404), then the body, validation and the write,
//! all in one blocking task on one connection bound to the school.

use actix_web::{HttpRequest, HttpResponse, web};
use serde::Serialize;
use uuid::Uuid;

use crate::{
    api::{
        body::{JsonObject, read_object},
        fields::{Fields, Mode},
        pagination::{ListQuery, flag, page_response, query_map},
        path_id,
        routes::Endpoint,
    },
    auth::{Caller, Need, SchoolRequest, permissions::Resource},
    error::{ApiError, ApiResult, FieldErrors},
    tenancy::TenantConn,
};

pub trait SchoolResource: Sized + Send + 'static {
    /// The resource permissions are checked on.
    const PERMISSION: Resource;
    /// The collection path, e.g. `/api/v1/school/sessions/{session_pk}/exam-sessions/`.
    const PATH: &'static str;
    /// What the parent ids of the path resolve to (`()` for top-level resources).
    type Scope: Send + 'static;
    /// The record as answered.
    type Record: Serialize + Send + 'static;
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

/// The path's identifiers in order: parents first, then `{id}` when present.
struct PathIds {
    raw: Vec<String>,
    has_id: bool,
}

impl PathIds {
    fn of(req: &HttpRequest) -> Self {
        let info = req.match_info();
        let has_id = info.get("id").is_some();
        let mut raw: Vec<String> = info
            .iter()
            .filter(|(name, _)| *name != "id")
            .map(|(_, v)| v.to_owned())
            .collect();
        if let Some(id) = info.get("id") {
            raw.push(id.to_owned());
        }
        Self { raw, has_id }
    }

    /// Parses every id (400 `invalid_id` on the first bad one); `(parents, id)`.
    fn parse(&self) -> ApiResult<(Vec<Uuid>, Option<Uuid>)> {
        let mut ids = self
            .raw
            .iter()
            .map(|raw| path_id(raw))
            .collect::<ApiResult<Vec<_>>>()?;
        let id = if self.has_id { ids.pop() } else { None };
        Ok((ids, id))
    }
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
    let (parents, id) = path.parse()?;
    let scope = R::scope(conn, &parents)?;
    let id = id.ok_or_else(ApiError::not_found)?;
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
            let (parents, _) = path.parse()?;
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
    let record = request
        .run(Need::Method(R::PERMISSION), move |conn, caller| {
            let (parents, _) = path.parse()?;
            let scope = R::scope(conn, &parents)?;
            let body = body?;
            conn.transaction(|conn| {
                let input = parse_input::<R>(conn, &scope, &body, Mode::Create, None)?;
                R::create(conn, &scope, input, caller)
            })
        })
        .await?;
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
    let record = request
        .run(Need::Method(R::PERMISSION), move |conn, caller| {
            conn.transaction(|conn| {
                let (scope, id, current) = scope_and_record::<R>(conn, &path, include_deleted)?;
                let body = body?;
                let input = parse_input::<R>(conn, &scope, &body, mode, Some(&current))?;
                R::update(conn, &scope, id, input, caller)
            })
        })
        .await?;
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
    request
        .run(Need::Method(R::PERMISSION), move |conn, _| {
            conn.transaction(|conn| {
                let (scope, id, _) = scope_and_record::<R>(conn, &path, include_deleted)?;
                R::delete(conn, &scope, id)
            })
        })
        .await?;
    Ok(HttpResponse::NoContent().finish())
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

/// Generates the query functions school tables share, in the resource's module:
/// `list_rows` (pagination, `search` over the named text columns, order `created_at, id`,
/// narrowed by a scope filter), `find_row`, `live_exists` and `delete_row`. With
/// `soft_delete: is_deleted`, soft-deleted rows are hidden unless `include_deleted`.
macro_rules! table_queries {
    (@search $q:ident, $table:ident, $search:ident, []) => {{
        let _ = $search;
        $q
    }};
    (@search $q:ident, $table:ident, $search:ident, [$($column:ident),+]) => {{
        let pattern = $crate::db::like_pattern($search);
        $q.filter(diesel::dsl::sql::<diesel::sql_types::Bool>("false") $(.or($table::$column.ilike(pattern.clone())))+)
    }};
    ($table:ident, $record:ty, search: [$($column:ident),*] $(, soft_delete: $live:ident)? $(, changes: $input:ty)?) => {
        $(
            /// Applies `changes` and records who changed the row, and when.
            pub fn update_row(
                conn: &mut $crate::tenancy::TenantConn,
                id: uuid::Uuid,
                changes: &$input,
                caller: &$crate::auth::Caller,
            ) -> $crate::error::ApiResult<$record> {
                use diesel::prelude::*;
                Ok(diesel::update($table::table.find(id))
                    .set((changes, $table::updated_by.eq(caller.user_id()), $table::updated_at.eq(chrono::Utc::now())))
                    .returning(<$record>::as_returning())
                    .get_result(conn.pg())?)
            }
        )?

        pub type Boxed = $table::BoxedQuery<'static, diesel::pg::Pg>;

        fn filtered(query: &$crate::api::pagination::ListQuery) -> Boxed {
            use diesel::prelude::*;
            let mut q = $table::table.into_boxed();
            $(if !query.include_deleted {
                q = q.filter($table::$live.eq(false));
            })?
            if let Some(search) = &query.search {
                q = $crate::api::school::crud::table_queries!(@search q, $table, search, [$($column),*]);
            }
            q
        }

        pub fn list_rows(
            conn: &mut $crate::tenancy::TenantConn,
            query: &$crate::api::pagination::ListQuery,
            scope: impl Fn(Boxed) -> Boxed,
        ) -> $crate::error::ApiResult<(i64, Vec<$record>)> {
            use diesel::prelude::*;
            let count = scope(filtered(query)).count().get_result(conn.pg())?;
            let rows = scope(filtered(query))
                .order(($table::created_at, $table::id))
                .offset(query.offset())
                .limit(query.page_size)
                .select(<$record>::as_select())
                .load(conn.pg())?;
            Ok((count, rows))
        }

        pub fn find_row(
            conn: &mut $crate::tenancy::TenantConn,
            id: uuid::Uuid,
            include_deleted: bool,
        ) -> $crate::error::ApiResult<Option<$record>> {
            use diesel::prelude::*;
            // Tables without soft deletion ignore the flag.
            let _ = include_deleted;
            Ok($table::table
                .find(id)
                .select(<$record>::as_select())
                .first(conn.pg())
                .optional()?
                .filter(|_row| true $(&& (include_deleted || !_row.$live))?))
        }

        /// Whether a live (not soft-deleted) record has this id: the rule for references.
        /// (Not every table is referenced.)
        #[allow(dead_code)]
        pub fn live_exists(conn: &mut $crate::tenancy::TenantConn, id: uuid::Uuid) -> $crate::error::ApiResult<bool> {
            use diesel::prelude::*;
            Ok(diesel::select(diesel::dsl::exists(
                $table::table.find(id)$(.filter($table::$live.eq(false)))?,
            ))
            .get_result(conn.pg())?)
        }

        pub fn delete_row(conn: &mut $crate::tenancy::TenantConn, id: uuid::Uuid) -> $crate::error::ApiResult<()> {
            use diesel::prelude::*;
            match diesel::delete($table::table.find(id)).execute(conn.pg())? {
                0 => Err($crate::error::ApiError::not_found()),
                _ => Ok(()),
            }
        }
    };
}
pub(crate) use table_queries;

/// The `SchoolResource` methods of a top-level resource whose record is its table row:
/// scope, list, find, update and delete through the `table_queries!` functions of the
/// module (declared with `changes:`).
macro_rules! top_level_methods {
    () => {
        fn scope(
            _: &mut $crate::tenancy::TenantConn,
            _: &[uuid::Uuid],
        ) -> $crate::error::ApiResult<()> {
            Ok(())
        }

        fn list(
            conn: &mut $crate::tenancy::TenantConn,
            _: &(),
            query: &$crate::api::pagination::ListQuery,
        ) -> $crate::error::ApiResult<(i64, Vec<Self::Record>)> {
            list_rows(conn, query, |q| q)
        }

        fn find(
            conn: &mut $crate::tenancy::TenantConn,
            _: &(),
            id: uuid::Uuid,
            include_deleted: bool,
        ) -> $crate::error::ApiResult<Option<Self::Record>> {
            find_row(conn, id, include_deleted)
        }

        fn update(
            conn: &mut $crate::tenancy::TenantConn,
            _: &(),
            id: uuid::Uuid,
            input: Self::Input,
            caller: &$crate::auth::Caller,
        ) -> $crate::error::ApiResult<Self::Record> {
            update_row(conn, id, &input, caller)
        }

        fn delete(
            conn: &mut $crate::tenancy::TenantConn,
            _: &(),
            id: uuid::Uuid,
        ) -> $crate::error::ApiResult<()> {
            delete_row(conn, id)
        }
    };
}
pub(crate) use top_level_methods;

/// The rule for references: the id must name a live record of this school. Records a
/// message on `field` otherwise (`id` of `None`: nothing to check).
pub fn check_ref(
    conn: &mut TenantConn,
    errors: &mut FieldErrors,
    field: &str,
    id: Option<Uuid>,
    what: &str,
    live_exists: fn(&mut TenantConn, Uuid) -> ApiResult<bool>,
) -> ApiResult<()> {
    if let Some(id) = id {
        if !live_exists(conn, id)? {
            errors.add(field, format!("no live {what} has the id {id}"));
        }
    }
    Ok(())
}

/// The `SchoolResource` methods of a resource nested under one parent (`Scope = Uuid`),
/// whose record is its row and whose `$parent` column (and field) names the parent: list
/// and find see only the parent's records.
macro_rules! nested_methods {
    ($table:ident, $parent:ident) => {
        fn list(
            conn: &mut $crate::tenancy::TenantConn,
            parent: &uuid::Uuid,
            query: &$crate::api::pagination::ListQuery,
        ) -> $crate::error::ApiResult<(i64, Vec<Self::Record>)> {
            use diesel::prelude::*;
            let parent = *parent;
            list_rows(conn, query, move |q| q.filter($table::$parent.eq(parent)))
        }

        fn find(
            conn: &mut $crate::tenancy::TenantConn,
            parent: &uuid::Uuid,
            id: uuid::Uuid,
            include_deleted: bool,
        ) -> $crate::error::ApiResult<Option<Self::Record>> {
            Ok(find_row(conn, id, include_deleted)?.filter(|row| row.$parent == *parent))
        }

        fn update(
            conn: &mut $crate::tenancy::TenantConn,
            _: &uuid::Uuid,
            id: uuid::Uuid,
            input: Self::Input,
            caller: &$crate::auth::Caller,
        ) -> $crate::error::ApiResult<Self::Record> {
            update_row(conn, id, &input, caller)
        }

        fn delete(
            conn: &mut $crate::tenancy::TenantConn,
            _: &uuid::Uuid,
            id: uuid::Uuid,
        ) -> $crate::error::ApiResult<()> {
            delete_row(conn, id)
        }
    };
}
pub(crate) use nested_methods;
