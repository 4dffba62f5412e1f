//! `GET /api/v1/school/events/`: the school's change events from a cursor (API.md 9), and
//! `GET /api/v1/school/history/`: the history of a record or of a student (API.md 11). The
//! queries are in `crate::school::{events, history}`; here are HTTP and parsing.

use std::collections::HashMap;

use actix_web::HttpResponse;
use serde::Serialize;

use crate::{
    api::{
        openapi::{
            ApiDoc, Auth, Op,
            schema::{self, object_requiring, page_of},
        },
        pagination::{ListQuery, page_response, query_map},
        routes::Mount,
    },
    auth::permissions::{Action, Permission, Resource},
    error::{ApiError, ApiResult},
    request::{Need, SchoolRequest},
    school::{
        events::{self, Event},
        history::{self, About, HistoryEntry},
    },
};

const VIEW_EVENTS: &[Permission] = &[Permission::new(Action::View, Resource::Event)];
const VIEW_HISTORY: &[Permission] = &[Permission::new(Action::View, Resource::History)];
const DEFAULT_LIMIT: i64 = 100;
const MAX_LIMIT: i64 = 1000;

pub fn mount(m: &mut Mount) {
    m.endpoint("/api/v1/school/events/")
        .get(feed, |doc: &mut ApiDoc| {
            let event = doc.schema::<Event>();
            let page = doc.named(
                "EventFeed",
                object_requiring(
                    vec![
                        ("results", schema::array(event)),
                        ("next", schema::string()),
                    ],
                    &["results", "next"],
                ),
            );
            Op::new(
                "events",
                "The school's change events, in commit order",
                Auth::BearerOrKey,
            )
            .description(Some(
                "Events after the cursor `after` (without it, from the oldest kept event), \
                     at most `limit` (1-1000, default 100), of type `type` when given. `next` \
                     is the cursor to read on from; reading again from one cursor answers the \
                     same events. An unknown cursor or a `limit` outside 1-1000 is 400 \
                     `invalid_query`. Needs `view_event`.",
            ))
            .query("after", schema::string(), "a cursor answered as `next`")
            .query(
                "limit",
                schema::integer(),
                "events per answer, 1-1000 (default 100)",
            )
            .query(
                "type",
                schema::string(),
                "only events of this type (`mark.updated`)",
            )
            .ok(200, Some(page))
        });
    m.endpoint("/api/v1/school/history/")
        .get(history_list, |doc: &mut ApiDoc| {
            let entry = doc.schema::<HistoryEntry>();
            let page = page_of(doc, "HistoryPage", entry);
            Op::new(
                "history",
                "The history of a record, or of a student",
                Auth::BearerOrKey,
            )
            .description(Some(
                "Every create, update and delete of the record `record` (a mark, an \
                     attendance record, a student), or of everything about the student \
                     `student`, newest first; entries stay after their record is deleted. One \
                     of the two is required (400 `invalid_query` otherwise). Needs \
                     `view_history`.",
            ))
            .query("record", schema::uuid(), "the record's id")
            .query("student", schema::uuid(), "a student's id")
            .query("page", schema::integer(), "page number, from 1")
            .query(
                "page_size",
                schema::integer(),
                "entries per page (default 50, max 200)",
            )
            .ok(200, Some(page))
        });
}

#[derive(Serialize)]
struct FeedAnswer {
    results: Vec<Event>,
    next: String,
}

/// What a feed request asks for, as parsed from its query.
struct FeedQuery {
    after: Option<i64>,
    limit: i64,
    kind: Option<String>,
}

fn feed_query(params: &HashMap<String, String>) -> ApiResult<FeedQuery> {
    let after = params
        .get("after")
        .map(|raw| {
            raw.parse::<i64>()
                .ok()
                .filter(|n| *n >= events::START)
                .ok_or_else(|| ApiError::InvalidQuery("after: unknown cursor".into()))
        })
        .transpose()?;
    let limit = match params.get("limit") {
        None => DEFAULT_LIMIT,
        Some(raw) => raw
            .parse::<i64>()
            .ok()
            .filter(|n| (1..=MAX_LIMIT).contains(n))
            .ok_or_else(|| {
                ApiError::InvalidQuery(format!("limit must be an integer from 1 to {MAX_LIMIT}"))
            })?,
    };
    Ok(FeedQuery {
        after,
        limit,
        kind: params.get("type").cloned(),
    })
}

async fn feed(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let params = query_map(request.http());
    let page = request
        .run(Need::All(VIEW_EVENTS), move |conn, _| {
            let query = feed_query(&params?)?;
            let after = match query.after {
                // A cursor past the newest event was never answered.
                Some(cursor) if cursor > events::newest(conn)?.unwrap_or(events::START) => {
                    return Err(ApiError::InvalidQuery("after: unknown cursor".into()));
                }
                Some(cursor) => cursor,
                None => events::START,
            };
            events::after(conn, after, query.limit, query.kind.as_deref())
        })
        .await?;
    Ok(HttpResponse::Ok().json(FeedAnswer {
        results: page.events,
        next: page.next.to_string(),
    }))
}

/// What a history is of: `?record=`, else `?student=` (read in this order).
pub const HISTORY_FILTERS: &[(&str, &str)] =
    &[("record", "the record's id"), ("student", "a student's id")];

async fn history_list(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let http = request.http().clone();
    let query = ListQuery::parse_filtered(&http, HISTORY_FILTERS);
    let page_query = query.as_ref().ok().cloned();
    let (count, entries) = request
        .run(Need::All(VIEW_HISTORY), move |conn, _| {
            let query = query?;
            let about = match (query.filter.record, query.filter.student) {
                (Some(record), _) => About::Record(record),
                (None, Some(student)) => About::Student(student),
                (None, None) => {
                    return Err(ApiError::InvalidQuery(
                        "record or student is required".into(),
                    ));
                }
            };
            let (count, entries) = history::page(conn, about, query.offset(), query.page_size)?;
            query.check_page(count)?;
            Ok((count, entries))
        })
        .await?;
    let query = page_query.ok_or_else(|| ApiError::InvalidQuery("bad list parameters".into()))?;
    page_response(&http, &query, count, entries)
}
