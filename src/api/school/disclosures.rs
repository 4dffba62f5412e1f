//! `GET /api/v1/school/students/{id}/disclosures/`: who outside the school read the
//! student's records (API keys; integration clients), newest first, paged. Reading it is
//! not itself a disclosure. Needs `view_history`.

use actix_web::HttpResponse;

use crate::{
    api::{
        PathIds,
        openapi::{
            ApiDoc, Auth, Op,
            schema::{self, page_of},
        },
        pagination::{ListQuery, page_response},
        routes::Mount,
    },
    auth::permissions::{Action, Permission, Resource},
    error::{ApiError, ApiResult},
    request::{Need, SchoolRequest},
    school::disclosures::{Disclosure, Disclosures},
};

pub const PATH: &str = "/api/v1/school/students/{id}/disclosures/";
const VIEW_HISTORY: &[Permission] = &[Permission::new(Action::View, Resource::History)];

pub fn mount(m: &mut Mount) {
    m.endpoint(PATH).get(list, |doc: &mut ApiDoc| {
        let disclosure = doc.schema::<Disclosure>();
        let page = page_of(doc, "DisclosurePage", disclosure);
        Op::new(
            "students",
            "List the disclosures of a student's records",
            Auth::BearerOrKey,
        )
        .description(Some(
            "Every read of the student's records by a party outside the school (an API key, \
             an integration client), one entry per student a read answered, newest first. \
             Reads by the school's staff and guardians are not listed. Entries are written \
             within a fraction of a second after the read. Needs `view_history`; 404 for an \
             unknown student.",
        ))
        .query("page", schema::integer(), "page number, from 1")
        .query(
            "page_size",
            schema::integer(),
            "records per page (default 50, max 200)",
        )
        .ok(200, Some(page))
        .errors(&[404])
    });
}

async fn list(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let http = request.http().clone();
    let path = PathIds::of(&http);
    let query = ListQuery::parse(&http);
    let page_query = query.as_ref().ok().cloned();
    let (count, rows) = request
        .run(Need::All(VIEW_HISTORY), move |conn, _| {
            let student = path.last()?;
            if !Disclosures::student_exists(conn, student)? {
                return Err(ApiError::not_found());
            }
            let query = query?;
            let (count, rows) = Disclosures::page(conn, student, query.offset(), query.page_size)?;
            query.check_page(count)?;
            Ok((count, rows))
        })
        .await?;
    let query = page_query.ok_or_else(|| ApiError::InvalidQuery("bad list parameters".into()))?;
    page_response(&http, &query, count, rows)
}
