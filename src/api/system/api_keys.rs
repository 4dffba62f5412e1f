//! `/api/v1/system/api-keys/`: keys for scripts and integrations, managed by platform
//! administrators. The plain key is answered once, at creation; only its hash is stored.

use actix_web::{HttpResponse, web};
use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

use crate::{
    api::{
        PathIds,
        body::read_object,
        fields::{Fields, Mode, any, describe, len},
        openapi::{
            ApiDoc, Auth, Op,
            schema::{object, page_of, request_schema, string},
        },
        pagination::{ListQuery, page},
        routes::Mount,
        system::tenants::paging,
    },
    auth::api_key::{ApiKeyRecord, NewApiKey},
    db::models::TenantRow,
    error::{ApiError, ApiResult},
    request::{SystemNeed, SystemRequest},
    school::table::given,
};

const TAG: &str = "api keys";

pub fn mount(m: &mut Mount) {
    let key = m.doc().schema::<ApiKeyRecord>();
    m.endpoint("/api/v1/system/api-keys/")
        .get(list, |doc: &mut ApiDoc| {
            let page = page_of(doc, "ApiKeyPage", key.clone());
            paging(Op::new(TAG, "List API keys (never the keys)", Auth::Bearer))
                .query(
                    "search",
                    string(),
                    "case-insensitive substring of the name or the prefix",
                )
                .ok(200, Some(page))
        })
        .post(create, |doc: &mut ApiDoc| {
            let created = utoipa::openapi::schema::AllOfBuilder::new()
                .item(key.clone())
                .item(object(vec![("key", string())]))
                .build();
            let created = doc.named(
                "ApiKeyCreated",
                utoipa::openapi::schema::Schema::AllOf(created).into(),
            );
            Op::new(
                TAG,
                "Create an API key (the key is shown once)",
                Auth::Bearer,
            )
            .body(request_schema(&describe(parse_new_key), true))
            .ok(201, Some(created))
        });
    m.endpoint("/api/v1/system/api-keys/{id}/")
        .get(
            retrieve,
            Op::new(TAG, "Retrieve an API key record", Auth::Bearer).ok(200, Some(key.clone())),
        )
        .delete(
            revoke,
            Op::new(TAG, "Revoke an API key", Auth::Bearer).ok(204, None),
        );
}

async fn list(request: SystemRequest) -> ApiResult<HttpResponse> {
    let http = request.http().clone();
    // Query parameters are judged after authentication (API.md 2).
    let query = ListQuery::parse(&http);
    let page_query = query.as_ref().ok().cloned();
    let (count, rows) = request
        .run(SystemNeed::PlatformAdmin, move |conn, _| {
            let query = query?;
            let (count, rows) = ApiKeyRecord::page(conn, query.search.as_deref(), query.span())?;
            query.check_page(count)?;
            Ok((count, rows))
        })
        .await?;
    let page_query =
        page_query.ok_or_else(|| ApiError::InvalidQuery("bad list parameters".into()))?;
    Ok(HttpResponse::Ok().json(page(&http, &page_query, count, rows)?))
}

/// A create's body as read (`None`: not given, and reported).
struct NewKeyFields {
    name: Option<String>,
    tenant: Option<Option<Uuid>>,
    read_only: Option<bool>,
    expires_at: Option<Option<DateTime<Utc>>>,
}

/// The rules of a create's body (also its documentation).
fn parse_new_key(f: &mut Fields<'_>) -> NewKeyFields {
    NewKeyFields {
        name: f.required("name", &len(1, 100)),
        tenant: f.nullable("tenant", None, &any),
        read_only: f.optional("read_only", false, &any),
        expires_at: f.nullable("expires_at", None, &|at: &DateTime<Utc>| {
            if *at > Utc::now() {
                Ok(())
            } else {
                Err("must be in the future".into())
            }
        }),
    }
}

#[derive(Serialize)]
struct CreatedKey {
    #[serde(flatten)]
    record: ApiKeyRecord,
    key: String,
}

async fn create(request: SystemRequest, payload: web::Payload) -> ApiResult<HttpResponse> {
    let state = request.state();
    let body = read_object(request.http(), payload).await;
    let secret = state.config.jwt_secret.clone();
    let created = request
        .run(SystemNeed::PlatformAdmin, move |conn, actor| {
            let body = body?;
            let mut f = Fields::new(&body, Mode::Create);
            let parsed = parse_new_key(&mut f);
            if let Some(id) = parsed.tenant.flatten() {
                if !f.has_error("tenant") && TenantRow::find(conn, id)?.is_none() {
                    f.error("tenant", "no school has this id");
                }
            }
            let parsed = f.finish(parsed)?;
            let new = NewApiKey {
                name: given(parsed.name, "name").map_err(ApiError::internal)?,
                tenant_id: parsed.tenant.flatten(),
                read_only: given(parsed.read_only, "read_only").map_err(ApiError::internal)?,
                expires_at: parsed.expires_at.flatten(),
                created_by: actor.id,
            };
            let (record, key) = ApiKeyRecord::create(conn, secret.expose(), &new)?;
            Ok(CreatedKey { record, key })
        })
        .await?;
    Ok(HttpResponse::Created().json(created))
}

async fn retrieve(request: SystemRequest, path: PathIds) -> ApiResult<HttpResponse> {
    let record = request
        .run(SystemNeed::PlatformAdmin, move |conn, _| {
            Ok(ApiKeyRecord::find(conn, path.last()?)?)
        })
        .await?
        .ok_or_else(ApiError::not_found)?;
    Ok(HttpResponse::Ok().json(record))
}

async fn revoke(request: SystemRequest, path: PathIds) -> ApiResult<HttpResponse> {
    let state = request.state();
    request
        .run(
            SystemNeed::PlatformAdmin,
            move |conn, _| match ApiKeyRecord::revoke(conn, path.last()?)? {
                true => Ok(()),
                false => Err(ApiError::not_found()),
            },
        )
        .await?;
    // Before answering: the next request of this process refuses the key at once.
    state.key_cache.invalidate_all();
    Ok(HttpResponse::NoContent().finish())
}
