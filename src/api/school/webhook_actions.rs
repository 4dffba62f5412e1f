//! What the app's Webhooks page asks of one subscription (API.md 9, additions):
//! `POST /webhooks/{id}/test/` sends it a signed test event now and answers the attempt;
//! `POST /webhooks/{id}/deliveries/{event}/retry/` ("send again") queues an event it was
//! sent before for the relay once more, with the same `webhook-id`. Both need
//! `change_webhook`. The queries are in `crate::school::webhook_actions`.

use actix_web::HttpResponse;
use chrono::Utc;
use serde::Serialize;
use serde_json::json;
use uuid::Uuid;

use crate::{
    api::{
        PathIds,
        openapi::{ApiDoc, Auth, Op, schema},
        routes::Mount,
    },
    auth::permissions::{Action, Permission, Resource},
    error::{ApiError, ApiResult},
    relay::{deliver, destination},
    request::{Need, SchoolRequest},
    school::{
        webhook_actions::{self, Resent, TEST_EVENT_TYPE},
        webhook_queue::Due,
        webhooks::Delivery,
    },
};

const CHANGE_WEBHOOK: &[Permission] = &[Permission::new(Action::Change, Resource::Webhook)];

pub fn mount(m: &mut Mount) {
    m.endpoint("/api/v1/school/webhooks/{id}/test/").on(
        actix_web::http::Method::POST,
        test,
        |doc: &mut ApiDoc| {
            Op::new(
                "webhooks",
                "Send the subscription a test event now",
                Auth::BearerOrKey,
            )
            .description(Some(
                "Sends one event of type `webhook.test` (`data`: `{webhook, message}`), \
                 signed like every delivery, to the subscription's URL (checked again as at \
                 every delivery), even when it is disabled, and answers the attempt (also \
                 listed in `/deliveries/`). Sent once, never retried; it is no event of the \
                 school (not in `/events/`). Waits for the answer, at most \
                 `WEBHOOK_TIMEOUT_MS`. Needs `change_webhook`.",
            ))
            .ok(200, Some(doc.schema::<Delivery>()))
            .errors(&[404])
        },
    );
    m.endpoint("/api/v1/school/webhooks/{id}/deliveries/{event}/retry/")
        .on(actix_web::http::Method::POST, retry, |_: &mut ApiDoc| {
            let queued = schema::object(vec![
                ("event", schema::uuid()),
                ("attempt", schema::integer()),
            ]);
            Op::new(
                "webhooks",
                "Send an event to the subscription again",
                Auth::BearerOrKey,
            )
            .description(Some(
                "Queues the event (one the subscription was sent before, still in the \
                     feed) for the relay again, due now, with the same `webhook-id`; answers \
                     202 with the number its next attempt will have. A failure is retried on \
                     the rest of the schedule. An earlier queued event of the same record \
                     still goes first. 404 when the subscription has no attempt of this event \
                     in the feed (a test event, or a pruned one); 409 `conflict` when the \
                     subscription is disabled. Needs `change_webhook`.",
            ))
            .ok(202, Some(queued))
            .errors(&[404, 409])
        });
}

#[derive(Serialize)]
struct Queued {
    event: Uuid,
    attempt: i32,
}

async fn test(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let state = request.state();
    let settings = state.config.events.clone();
    let own = destination::own_addresses(Some(state.config.bind_addr.ip()));
    let path = PathIds::of(request.http());
    let (tenant, webhook, target) = request
        .run(Need::All(CHANGE_WEBHOOK), move |conn, caller| {
            let id = path.last()?;
            let target = webhook_actions::target(conn, id)?.ok_or_else(ApiError::not_found)?;
            Ok((caller.tenant.clone(), id, target))
        })
        .await?;
    let event = Uuid::new_v4();
    let due = Due {
        webhook_id: webhook,
        seq: 0,
        event_id: event,
        attempts: 0,
        url: target.url,
        secret: target.secret,
        event_type: TEST_EVENT_TYPE.into(),
        occurred_at: Utc::now(),
        data: json!({
            "webhook": webhook,
            "message": "A test event: your endpoint receives this school's events.",
        }),
    };
    // No connection is held while the receiver answers.
    let outcome = deliver::deliver(
        &due,
        settings.webhook_timeout,
        settings.allow_insecure,
        &own,
    )
    .await;
    let attempt = state
        .db
        .run_in_tenant(tenant, move |conn| {
            webhook_actions::record_test(conn, webhook, event, &outcome)
        })
        .await?;
    Ok(HttpResponse::Ok().json(attempt))
}

async fn retry(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let path = PathIds::of(request.http());
    let queued = request
        .run(Need::All(CHANGE_WEBHOOK), move |conn, _| {
            let ids = path.parse()?;
            let (Some(webhook), Some(event)) = (ids.first(), ids.get(1)) else {
                return Err(ApiError::not_found());
            };
            match webhook_actions::resend(conn, *webhook, *event)? {
                Resent::Queued(attempt) => Ok(Queued {
                    event: *event,
                    attempt,
                }),
                Resent::NoSuchEvent => Err(ApiError::NotFound(
                    "this subscription has no attempt of this event in the feed (a test \
                     event, or one pruned)",
                )),
                Resent::Inactive => Err(ApiError::Conflict(
                    "the subscription is disabled: activate it (is_active) first".into(),
                )),
            }
        })
        .await?;
    Ok(HttpResponse::Accepted().json(queued))
}
