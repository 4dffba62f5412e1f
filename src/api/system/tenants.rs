//! `/api/v1/system/tenants/`: the school registry, provisioning and domains.

use actix_web::{HttpResponse, web};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use crate::{
    api::{
        PathIds,
        body::JsonObject,
        body::read_object,
        fields::{Constraints, Fields, Mode, Rule, any, describe, len},
        openapi::{
            ApiDoc, Auth, Op,
            schema::{array, boolean, integer, object_requiring, page_of, request_schema, string},
        },
        pagination::{ListQuery, flag, page, query_map},
        routes::Mount,
    },
    db::models::{DomainRow, NewDomain, TenantChanges, TenantRow, tenant::normalize_domain},
    db::schema_name::SchemaName,
    error::{ApiError, ApiResult},
    request::{SystemNeed, SystemRequest},
    school::table::given,
    tenancy::provision::{self, NewTenant},
};

const TAG: &str = "tenants";

pub fn mount(m: &mut Mount) {
    let tenant = tenant_schema(m.doc());
    let domain = m.doc().schema::<DomainRow>();
    m.endpoint("/api/v1/system/tenants/")
        .get(list, |doc: &mut ApiDoc| {
            let item = tenant_schema(doc);
            let page = page_of(doc, "TenantPage", item);
            paging(Op::new(TAG, "List schools", Auth::Bearer))
                .query("search", string(), "name, schema name or domain")
                .ok(200, Some(page))
        })
        .post(
            create,
            Op::new(TAG, "Create (provision) a school", Auth::Bearer)
                .body(request_schema(&describe(parse_new), true))
                .ok(201, Some(tenant.clone()))
                .errors(&[409]),
        );
    m.endpoint("/api/v1/system/tenants/{id}/")
        .get(
            retrieve,
            Op::new(TAG, "Retrieve a school", Auth::Bearer).ok(200, Some(tenant.clone())),
        )
        .patch(
            update,
            Op::new(TAG, "Rename or (de)activate a school", Auth::Bearer)
                .body(request_schema(&describe(parse_changes), false))
                .ok(200, Some(tenant)),
        )
        .delete(
            delete,
            Op::new(
                TAG,
                "Deactivate a school, or drop it (drop_schema=true, superuser)",
                Auth::Bearer,
            )
            .query(
                "drop_schema",
                boolean(),
                "drop the schema and delete the record",
            )
            .ok(204, None),
        );
    m.endpoint("/api/v1/system/tenants/{id}/domains/")
        .get(list_domains, |doc: &mut ApiDoc| {
            let item = doc.schema::<DomainRow>();
            let page = page_of(doc, "DomainPage", item);
            paging(Op::new(TAG, "List a school's domains", Auth::Bearer)).ok(200, Some(page))
        })
        .post(
            add_domain,
            Op::new(TAG, "Add a domain", Auth::Bearer)
                .body(request_schema(&describe(parse_domain), true))
                .ok(201, Some(domain))
                .errors(&[409]),
        );
}

/// A school as answered: its registry row, its domains and, on Citus, the node
/// (`host:port`) its schema lives on.
fn tenant_schema(doc: &mut ApiDoc) -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    let row = doc.schema::<TenantRow>();
    let domain = doc.schema::<DomainRow>();
    let view = utoipa::openapi::schema::AllOfBuilder::new()
        .item(row)
        .item(object_requiring(
            vec![("domains", array(domain)), ("node", string())],
            &["domains"],
        ))
        .build();
    doc.named(
        "Tenant",
        utoipa::openapi::schema::Schema::AllOf(view).into(),
    )
}

/// The page parameters of the system lists.
pub fn paging(op: Op) -> Op {
    op.query("page", integer(), "page number")
        .query("page_size", integer(), "records per page")
}

#[derive(Serialize)]
struct TenantView {
    #[serde(flatten)]
    tenant: TenantRow,
    domains: Vec<DomainRow>,
    /// On Citus, the worker the school's schema lives on.
    #[serde(skip_serializing_if = "Option::is_none")]
    node: Option<String>,
}

fn with_domains(conn: &mut PgConnection, tenants: Vec<TenantRow>) -> ApiResult<Vec<TenantView>> {
    let ids: Vec<Uuid> = tenants.iter().map(|t| t.id).collect();
    let mut by_tenant = DomainRow::of_tenants(conn, &ids)?;
    let mut nodes = provision::schema_nodes(conn)?;
    Ok(tenants
        .into_iter()
        .map(|tenant| TenantView {
            domains: by_tenant.remove(&tenant.id).unwrap_or_default(),
            node: nodes.remove(&tenant.schema_name),
            tenant,
        })
        .collect())
}

fn one_with_domains(conn: &mut PgConnection, row: TenantRow) -> ApiResult<TenantView> {
    let mut views = with_domains(conn, vec![row])?;
    views.pop().ok_or_else(ApiError::not_found)
}

/// A schema name `SchemaName::parse` accepts: 1-63 characters.
struct ValidSchemaName;

impl Rule<String> for ValidSchemaName {
    fn check(&self, name: &String) -> Result<(), String> {
        SchemaName::parse(name)
            .map(|_| ())
            .map_err(|err| err.to_string())
    }

    fn describe(&self, c: &mut Constraints) {
        c.min_length = Some(1);
        c.max_length = Some(63);
    }
}

/// A create's body as read (`None`: not given, and reported).
struct NewTenantFields {
    schema_name: Option<String>,
    name: Option<String>,
    domains: Option<Vec<String>>,
}

/// The rules of a create's body (also its documentation). The schema name and domains are
/// checked further by `NewTenant::parse`.
fn parse_new(f: &mut Fields<'_>) -> NewTenantFields {
    NewTenantFields {
        schema_name: f.required("schema_name", &ValidSchemaName),
        name: f.required("name", &len(1, 255)),
        domains: f.optional("domains", Vec::new(), &any),
    }
}

/// A create's body: the school to provision.
fn new_tenant(body: &JsonObject) -> ApiResult<NewTenant> {
    let mut fields = Fields::new(body, Mode::Create);
    let parsed = parse_new(&mut fields);
    let parsed = fields.finish(parsed)?;
    let schema_name = given(parsed.schema_name, "schema_name").map_err(ApiError::internal)?;
    let name = given(parsed.name, "name").map_err(ApiError::internal)?;
    let domains = given(parsed.domains, "domains").map_err(ApiError::internal)?;
    NewTenant::parse(&schema_name, &name, &domains)
}

/// The rules of a change's body (PATCH: only the given fields change).
fn parse_changes(f: &mut Fields<'_>) -> TenantChanges {
    TenantChanges {
        name: f
            .required("name", &len(1, 255))
            .map(|n: String| n.trim().to_owned()),
        is_active: f.required("is_active", &any),
    }
}

/// A domain's body as read (`None`: not given, and reported).
struct DomainFields {
    domain: Option<String>,
    is_primary: Option<bool>,
}

/// The rules of an added domain's body: a valid host name, normalised.
fn parse_domain(f: &mut Fields<'_>) -> DomainFields {
    let domain = f.required::<String>("domain", &|d: &String| {
        normalize_domain(d)
            .map(|_| ())
            .ok_or_else(|| "enter a valid host name".to_owned())
    });
    DomainFields {
        domain: domain.as_deref().and_then(normalize_domain),
        is_primary: f.optional("is_primary", false, &any),
    }
}

async fn list(request: SystemRequest) -> ApiResult<HttpResponse> {
    let http = request.http().clone();
    let query = ListQuery::parse(&http)?;
    let page_query = query.clone();
    let (count, views) = request
        .run(SystemNeed::PlatformAdmin, move |conn, _| {
            let (count, rows) = TenantRow::page(conn, query.search.as_deref(), query.span())?;
            query.check_page(count)?;
            Ok((count, with_domains(conn, rows)?))
        })
        .await?;
    Ok(HttpResponse::Ok().json(page(&http, &page_query, count, views)?))
}

async fn create(request: SystemRequest, payload: web::Payload) -> ApiResult<HttpResponse> {
    let state = request.state();
    let body = read_object(request.http(), payload).await;
    request
        .run(SystemNeed::PlatformAdmin, |_, _| Ok(()))
        .await?;
    let new = new_tenant(&body?)?;
    if let Some(main) = new
        .domains
        .iter()
        .find(|d| state.config.main_domains.contains(d))
    {
        return Err(ApiError::validation(
            "domains",
            format!("'{main}' is a main domain of the platform"),
        ));
    }
    let db = state.db.clone();
    let row =
        web::block(move || provision::create_tenant(&db, &new, crate::auth::roles::SEED)).await??;
    state.directory.invalidate();
    let view = state
        .db
        .run(move |conn| one_with_domains(conn, row))
        .await?;
    Ok(HttpResponse::Created().json(view))
}

async fn retrieve(request: SystemRequest, path: PathIds) -> ApiResult<HttpResponse> {
    let view = request
        .run(SystemNeed::PlatformAdmin, move |conn, _| {
            let id = path.last()?;
            let row = TenantRow::find(conn, id)?.ok_or_else(ApiError::not_found)?;
            one_with_domains(conn, row)
        })
        .await?;
    Ok(HttpResponse::Ok().json(view))
}

async fn update(
    request: SystemRequest,
    path: PathIds,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let state = request.state();
    let body = read_object(request.http(), payload).await;
    let view = request
        .run(SystemNeed::PlatformAdmin, move |conn, _| {
            let id = path.last()?;
            TenantRow::find(conn, id)?.ok_or_else(ApiError::not_found)?;
            let body = body?;
            let mut fields = Fields::new(&body, Mode::Patch);
            let changes = parse_changes(&mut fields);
            let row = TenantRow::update(conn, id, &fields.finish(changes)?)?;
            one_with_domains(conn, row)
        })
        .await?;
    state.directory.invalidate();
    Ok(HttpResponse::Ok().json(view))
}

async fn delete(request: SystemRequest, path: PathIds) -> ApiResult<HttpResponse> {
    let state = request.state();
    let drop_schema = flag(&query_map(request.http())?, "drop_schema")?;
    let need = if drop_schema {
        SystemNeed::SuperAdmin
    } else {
        SystemNeed::PlatformAdmin
    };
    let id = request
        .run(need, move |conn, _| {
            let id = path.last()?;
            TenantRow::find(conn, id)?.ok_or_else(ApiError::not_found)?;
            if !drop_schema {
                TenantRow::update(conn, id, &TenantChanges::deactivate())?;
            }
            Ok(id)
        })
        .await?;
    if drop_schema {
        let db = state.db.clone();
        web::block(move || provision::drop_tenant(&db, id)).await??;
        // The school's users went with it.
        state.user_cache.invalidate_all();
    }
    state.directory.invalidate();
    Ok(HttpResponse::NoContent().finish())
}

async fn list_domains(request: SystemRequest, path: PathIds) -> ApiResult<HttpResponse> {
    let http = request.http().clone();
    let query = ListQuery::parse(&http)?;
    let rows = request
        .run(SystemNeed::PlatformAdmin, move |conn, _| {
            let id = path.last()?;
            TenantRow::find(conn, id)?.ok_or_else(ApiError::not_found)?;
            Ok(DomainRow::for_tenant(conn, id)?)
        })
        .await?;
    let count = rows.len() as i64;
    let results = rows
        .into_iter()
        .skip(query.offset() as usize)
        .take(query.page_size as usize)
        .collect();
    Ok(HttpResponse::Ok().json(page(&http, &query, count, results)?))
}

async fn add_domain(
    request: SystemRequest,
    path: PathIds,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let state = request.state();
    let body = read_object(request.http(), payload).await;
    let main_domains = state.config.main_domains.clone();
    let row = request
        .run(SystemNeed::PlatformAdmin, move |conn, _| {
            let id = path.last()?;
            TenantRow::find(conn, id)?.ok_or_else(ApiError::not_found)?;
            let body = body?;
            let mut fields = Fields::new(&body, Mode::Create);
            let parsed = parse_domain(&mut fields);
            let parsed = fields.finish(parsed)?;
            let new = NewDomain {
                domain: given(parsed.domain, "domain").map_err(ApiError::internal)?,
                is_primary: given(parsed.is_primary, "is_primary").map_err(ApiError::internal)?,
            };
            let domain = new.domain.clone();
            if main_domains.contains(&domain) {
                return Err(ApiError::validation(
                    "domain",
                    "this is a main domain of the platform",
                ));
            }
            conn.transaction(|conn| DomainRow::add(conn, id, &new))
                .map_err(|err| match ApiError::from(err) {
                    ApiError::Conflict(_) => {
                        ApiError::Conflict(format!("domain '{domain}' is already registered"))
                    }
                    other => other,
                })
        })
        .await?;
    state.directory.invalidate();
    Ok(HttpResponse::Created().json(row))
}
