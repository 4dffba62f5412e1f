//! `/api/v1/system/tenants/`: the school registry, provisioning and domains.

use std::collections::HashMap;

use actix_web::{HttpResponse, web};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use crate::{
    api::{
        PathIds,
        body::read_object,
        fields::{Fields, Mode, any, len},
        openapi::{
            ApiDoc, Auth, Op,
            schema::{array, boolean, integer, object, object_requiring, page_of, string},
        },
        pagination::{ListQuery, flag, page, query_map},
        routes::Mount,
    },
    auth::{SystemNeed, SystemRequest},
    db::{
        models::{DomainRow, TenantRow, tenant::normalize_domain},
        schema_public::domains,
    },
    error::{ApiError, ApiResult},
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
                .body(object(vec![
                    ("schema_name", string()),
                    ("name", string()),
                    ("domains", array(string())),
                ]))
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
                .body(object(vec![("name", string()), ("is_active", boolean())]))
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
                .body(object_requiring(
                    vec![("domain", string()), ("is_primary", boolean())],
                    &["domain"],
                ))
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
    let mut by_tenant: HashMap<Uuid, Vec<DomainRow>> = HashMap::new();
    for domain in domains::table
        .filter(domains::tenant_id.eq_any(&ids))
        .order((domains::is_primary.desc(), domains::created_at, domains::id))
        .select(DomainRow::as_select())
        .load(conn)?
    {
        by_tenant.entry(domain.tenant_id).or_default().push(domain);
    }
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

async fn list(request: SystemRequest) -> ApiResult<HttpResponse> {
    let http = request.http().clone();
    let query = ListQuery::parse(&http)?;
    let page_query = query.clone();
    let (count, views) = request
        .run(SystemNeed::PlatformAdmin, move |conn, _| {
            let search = query.search.as_deref();
            let count = TenantRow::count(conn, search)?;
            query.check_page(count)?;
            let rows = TenantRow::page(conn, search, query.offset(), query.page_size)?;
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
    let body = body?;
    let mut fields = Fields::new(&body, Mode::Create);
    let schema_name = fields.required::<String>("schema_name", &any);
    let name = fields.required("name", &len(1, 255));
    let domains = fields.optional::<Vec<String>>("domains", Vec::new(), &any);
    let (schema_name, name, domains) = fields.finish((schema_name, name, domains))?;
    let new = NewTenant::parse(
        &schema_name.unwrap_or_default(),
        &name.unwrap_or_default(),
        &domains.unwrap_or_default(),
    )?;
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
            let name = fields.required("name", &len(1, 255));
            let is_active = fields.required::<bool>("is_active", &any);
            let (name, is_active) = fields.finish((name, is_active))?;
            let row = TenantRow::set_fields(conn, id, name.as_deref().map(str::trim), is_active)?;
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
                TenantRow::set_fields(conn, id, None, Some(false))?;
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
            let domain = fields.required::<String>("domain", &|d: &String| {
                normalize_domain(d)
                    .map(|_| ())
                    .ok_or_else(|| "enter a valid host name".to_owned())
            });
            let is_primary = fields.optional("is_primary", false, &any);
            let (domain, is_primary) = fields.finish((domain, is_primary))?;
            let domain = domain
                .as_deref()
                .and_then(normalize_domain)
                .unwrap_or_default();
            if main_domains.contains(&domain) {
                return Err(ApiError::validation(
                    "domain",
                    "this is a main domain of the platform",
                ));
            }
            conn.transaction(|conn| DomainRow::add(conn, id, &domain, is_primary.unwrap_or(false)))
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
