//! `/api/v1/school/webhooks/`: the school's webhook subscriptions (API.md 9), and
//! `/webhooks/{id}/deliveries/`, their recent attempts. A URL is checked when saved
//! (`relay::destination`: https, and a resolved address that is no loopback, private,
//! link-local or own address) and again by the relay at every delivery. The queries are in
//! `crate::school::webhooks`.

use std::net::IpAddr;

use actix_web::{HttpResponse, web};
use serde::Serialize;

use crate::{
    api::{
        PathIds,
        body::{JsonObject, read_object},
        fields::{self, Fields, Mode, any, len},
        openapi::{
            ApiDoc, Auth, Op,
            schema::{self, page_of, request_schema},
        },
        pagination::{ListQuery, page_response},
        routes::Mount,
    },
    auth::permissions::Resource,
    config::EventSettings,
    error::{ApiError, ApiResult},
    relay::{destination, signature},
    request::{Need, SchoolRequest},
    school::webhooks::{Delivery, NewWebhook, Webhook, WebhookChanges, Webhooks},
};

const MAX_DESCRIPTION: usize = 500;
const MAX_EVENT_TYPES: usize = 100;

pub fn mount(m: &mut Mount) {
    let collection = "/api/v1/school/webhooks/";
    m.endpoint(collection)
        .on(actix_web::http::Method::GET, list, |doc: &mut ApiDoc| {
            let item = doc.schema::<Webhook>();
            let page = page_of(doc, "WebhookPage", item);
            Op::new(
                "webhooks",
                "List the school's webhook subscriptions",
                Auth::BearerOrKey,
            )
            .query("page", schema::integer(), "page number, from 1")
            .query(
                "page_size",
                schema::integer(),
                "records per page (default 50, max 200)",
            )
            .ok(200, Some(page))
        })
        .on(actix_web::http::Method::POST, create, |doc: &mut ApiDoc| {
            let created = doc.named(
                "CreatedWebhook",
                schema::object(vec![
                    ("id", schema::uuid()),
                    ("url", schema::string()),
                    ("event_types", schema::array(schema::string())),
                    ("description", schema::string()),
                    ("is_active", schema::boolean()),
                    ("disabled_reason", schema::nullable(schema::string())),
                    ("created_at", schema::string()),
                    ("secret", schema::string()),
                ]),
            );
            Op::new(
                "webhooks",
                "Subscribe a URL to the school's events",
                Auth::BearerOrKey,
            )
            .description(Some(
                "Answers the subscription with its `secret` (`whsec_` + base64), shown \
                     this once; deliveries are signed with it (Standard Webhooks). `url` must \
                     be https and resolve to no loopback, private, link-local or own address \
                     (400 `validation_error` on `url`).",
            ))
            .body(request_schema(&fields::describe(|f| read(f, false)), true))
            .ok(201, Some(created))
        });
    let item = "/api/v1/school/webhooks/{id}/";
    m.endpoint(item)
        .on(
            actix_web::http::Method::GET,
            retrieve,
            |doc: &mut ApiDoc| {
                Op::new("webhooks", "A webhook subscription", Auth::BearerOrKey)
                    .ok(200, Some(doc.schema::<Webhook>()))
                    .errors(&[404])
            },
        )
        .on(
            actix_web::http::Method::PATCH,
            change,
            |doc: &mut ApiDoc| {
                Op::new(
                    "webhooks",
                    "Change a webhook subscription",
                    Auth::BearerOrKey,
                )
                .description(Some(
                    "`url`, `event_types`, `description`, `is_active`; activating a \
                     subscription the relay disabled clears `disabled_reason`.",
                ))
                .body(request_schema(&fields::describe(|f| read(f, true)), false))
                .ok(200, Some(doc.schema::<Webhook>()))
                .errors(&[404])
            },
        )
        .on(actix_web::http::Method::DELETE, remove, |_: &mut ApiDoc| {
            Op::new(
                "webhooks",
                "Delete a webhook subscription",
                Auth::BearerOrKey,
            )
            .ok(204, None)
            .errors(&[404])
        });
    m.endpoint("/api/v1/school/webhooks/{id}/deliveries/").on(
        actix_web::http::Method::GET,
        deliveries,
        |doc: &mut ApiDoc| {
            let item = doc.schema::<Delivery>();
            let page = page_of(doc, "DeliveryPage", item);
            Op::new(
                "webhooks",
                "Recent delivery attempts of a subscription",
                Auth::BearerOrKey,
            )
            .description(Some("Newest first; `event` is the event's id."))
            .query("page", schema::integer(), "page number, from 1")
            .query(
                "page_size",
                schema::integer(),
                "records per page (default 50, max 200)",
            )
            .ok(200, Some(page))
            .errors(&[404])
        },
    );
}

/// The fields of a subscription, as parsed (each `None` when absent on a patch or bad).
struct Read {
    url: Option<String>,
    event_types: Option<Vec<String>>,
    description: Option<String>,
    is_active: Option<bool>,
}

fn read(f: &mut Fields<'_>, patch: bool) -> Read {
    let url = f.required("url", &len(1, destination::MAX_URL_CHARS));
    let event_types = f.required("event_types", &event_types);
    let description = f.optional("description", String::new(), &len(0, MAX_DESCRIPTION));
    let is_active = if patch {
        f.when_given("is_active", &any)
    } else {
        None
    };
    Read {
        url,
        event_types,
        description,
        is_active,
    }
}

/// `["*"]`, or 1-100 types `<resource>.<created|updated|deleted>`.
#[allow(clippy::ptr_arg)] // a field rule takes the field's own type
fn event_types(types: &Vec<String>) -> Result<(), String> {
    if types.is_empty() || types.len() > MAX_EVENT_TYPES {
        return Err(format!("give 1-{MAX_EVENT_TYPES} event types, or [\"*\"]"));
    }
    let well_formed = |t: &String| {
        t == "*"
            || t.split_once('.').is_some_and(|(resource, action)| {
                !resource.is_empty()
                    && resource.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                    && ["created", "updated", "deleted"].contains(&action)
            })
    };
    match types.iter().find(|t| !well_formed(t)) {
        Some(bad) => Err(format!(
            "{bad:?} is not an event type (<resource>.<created|updated|deleted> or *)"
        )),
        None => Ok(()),
    }
}

/// Parses a body and checks its URL's destination (resolving its name: on the blocking
/// pool, where handlers' work runs).
fn parsed(
    body: &JsonObject,
    mode: Mode,
    settings: &EventSettings,
    bind: IpAddr,
) -> ApiResult<Read> {
    let mut f = Fields::new(body, mode);
    let read = read(&mut f, mode == Mode::Patch);
    if let Some(url) = &read.url {
        let own = destination::own_addresses(Some(bind));
        let checked = destination::parse(url, settings.allow_insecure).and_then(|parsed| {
            destination::resolve_blocking(&parsed, settings.allow_insecure, &own)
        });
        if let Err(why) = checked {
            f.error("url", why);
        }
    }
    f.finish(read)
}

#[derive(Serialize)]
struct Created {
    #[serde(flatten)]
    webhook: Webhook,
    secret: String,
}

async fn list(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let http = request.http().clone();
    let query = ListQuery::parse(&http);
    let page_query = query.as_ref().ok().cloned();
    let (count, rows) = request
        .run(Need::Method(Resource::Webhook), move |conn, _| {
            let query = query?;
            let (count, rows) = Webhooks::list(conn, query.offset(), query.page_size)?;
            query.check_page(count)?;
            Ok((count, rows))
        })
        .await?;
    let query = page_query.ok_or_else(|| ApiError::InvalidQuery("bad list parameters".into()))?;
    page_response(&http, &query, count, rows)
}

async fn create(request: SchoolRequest, payload: web::Payload) -> ApiResult<HttpResponse> {
    let settings = request.state().config.events.clone();
    let bind = request.state().config.bind_addr.ip();
    let body = read_object(request.http(), payload).await;
    let created = request
        .run(Need::Method(Resource::Webhook), move |conn, caller| {
            let read = parsed(&body?, Mode::Create, &settings, bind)?;
            let (Some(url), Some(event_types), Some(description)) =
                (read.url, read.event_types, read.description)
            else {
                return Err(ApiError::internal(anyhow::anyhow!(
                    "incomplete webhook form"
                )));
            };
            let secret = signature::new_secret();
            let new = NewWebhook {
                url,
                event_types,
                description,
            };
            let webhook = Webhooks::create(conn, new, &secret, &caller.actor())?;
            Ok(Created { webhook, secret })
        })
        .await?;
    Ok(HttpResponse::Created().json(created))
}

async fn retrieve(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let path = PathIds::of(request.http());
    let webhook = request
        .run(Need::Method(Resource::Webhook), move |conn, _| {
            Webhooks::find(conn, path.last()?)?.ok_or_else(ApiError::not_found)
        })
        .await?;
    Ok(HttpResponse::Ok().json(webhook))
}

async fn change(request: SchoolRequest, payload: web::Payload) -> ApiResult<HttpResponse> {
    let settings = request.state().config.events.clone();
    let bind = request.state().config.bind_addr.ip();
    let path = PathIds::of(request.http());
    let body = read_object(request.http(), payload).await;
    let webhook = request
        .run(Need::Method(Resource::Webhook), move |conn, caller| {
            let id = path.last()?;
            Webhooks::find(conn, id)?.ok_or_else(ApiError::not_found)?;
            let read = parsed(&body?, Mode::Patch, &settings, bind)?;
            let changes = WebhookChanges {
                url: read.url,
                event_types: read.event_types,
                description: read.description,
                is_active: read.is_active,
            };
            Webhooks::update(conn, id, changes, &caller.actor())?.ok_or_else(ApiError::not_found)
        })
        .await?;
    Ok(HttpResponse::Ok().json(webhook))
}

async fn remove(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let path = PathIds::of(request.http());
    request
        .run(
            Need::Method(Resource::Webhook),
            move |conn, _| match Webhooks::delete(conn, path.last()?)? {
                true => Ok(()),
                false => Err(ApiError::not_found()),
            },
        )
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

async fn deliveries(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let http = request.http().clone();
    let path = PathIds::of(&http);
    let query = ListQuery::parse(&http);
    let page_query = query.as_ref().ok().cloned();
    let (count, rows) = request
        .run(Need::Method(Resource::Webhook), move |conn, _| {
            let id = path.last()?;
            Webhooks::find(conn, id)?.ok_or_else(ApiError::not_found)?;
            let query = query?;
            let (count, rows) = Webhooks::deliveries(conn, id, query.offset(), query.page_size)?;
            query.check_page(count)?;
            Ok((count, rows))
        })
        .await?;
    let query = page_query.ok_or_else(|| ApiError::InvalidQuery("bad list parameters".into()))?;
    page_response(&http, &query, count, rows)
}
