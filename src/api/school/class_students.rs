//! `GET /api/v1/school/classes/{class_pk}/students/`: the students of one class, paged and
//! searched like every list. What a marks sheet needs (its rows) without reading every
//! student of the school; `view_student` permission, 404 for a missing class (or a
//! soft-deleted one, unless `include_deleted=true`).

use actix_web::HttpResponse;

use crate::{
    api::{
        PathIds,
        list_filter::Filters,
        openapi::{
            ApiDoc, Auth, Op,
            schema::{self, page_of},
        },
        pagination::{ListQuery, page_response},
        routes::Mount,
    },
    auth::permissions::Resource,
    error::{ApiError, ApiResult},
    request::{Need, SchoolRequest},
    school::students::{Student, Students},
};

pub const PATH: &str = "/api/v1/school/classes/{class_pk}/students/";

/// The class is the path's; the session may be chosen (API.md 10).
const CLASS_STUDENTS_FILTERS: Filters = &[(
    "academic_session",
    "the class's students enrolled in this academic session (id; default: the active one)",
)];

pub fn mount(m: &mut Mount) {
    m.endpoint(PATH).get(list, |doc: &mut ApiDoc| {
        let student = doc.schema::<Student>();
        let page = page_of(doc, "StudentPage", student);
        Op::new(
            "students",
            "List the students of a class",
            Auth::BearerOrKey,
        )
        .description(Some(
            "The class's students, oldest first, paged and searched like `/students/`; 404 when the class does not exist, or is soft-deleted without `include_deleted=true`.",
        ))
        .query("page", schema::integer(), "page number, from 1")
        .query(
            "page_size",
            schema::integer(),
            "records per page (default 50, max 200)",
        )
        .query(
            "search",
            schema::string(),
            "case-insensitive substring of admission number, first or last name",
        )
        .query(
            "include_deleted",
            schema::boolean(),
            "also soft-deleted students, and a soft-deleted class",
        )
        .query(
            CLASS_STUDENTS_FILTERS[0].0,
            schema::string(),
            CLASS_STUDENTS_FILTERS[0].1,
        )
        .ok(200, Some(page))
        .errors(&[404])
    });
}

async fn list(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let http = request.http().clone();
    let path = PathIds::of(&http);
    let query = ListQuery::parse_filtered(&http, CLASS_STUDENTS_FILTERS);
    let page_query = query.as_ref().ok().cloned();
    let (count, rows) = request
        .run(Need::Method(Resource::Student), move |conn, _| {
            let class = path.last()?;
            let query = query?;
            let (count, rows) =
                Students::page_in_class(conn, class, &query)?.ok_or_else(ApiError::not_found)?;
            query.check_page(count)?;
            Ok((count, rows))
        })
        .await?;
    let query = page_query.ok_or_else(|| ApiError::InvalidQuery("bad list parameters".into()))?;
    page_response(&http, &query, count, rows)
}
