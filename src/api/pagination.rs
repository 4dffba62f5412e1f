//! List query parameters (`page`, `page_size`, `include_deleted`, `search`) and the
//! paginated envelope `{count, next, previous, results}`.

use std::collections::HashMap;

use actix_web::{HttpRequest, HttpResponse, web};
use serde::Serialize;

use crate::{
    api::{host::public_host, list_filter},
    error::{ApiError, ApiResult},
    state::AppState,
};

pub const DEFAULT_PAGE_SIZE: i64 = 50;
pub const MAX_PAGE_SIZE: i64 = 200;

pub use crate::school::ListQuery;

impl ListQuery {
    /// Fails with 404 `invalid_page` when the page lies past the last one.
    pub fn check_page(&self, count: i64) -> ApiResult<()> {
        if self.page > 1 && self.offset() >= count {
            Err(ApiError::InvalidPage)
        } else {
            Ok(())
        }
    }
}

/// Query parameters as a map; a query string that does not decode is a 400.
pub fn query_map(req: &HttpRequest) -> ApiResult<HashMap<String, String>> {
    web::Query::<HashMap<String, String>>::from_query(req.query_string())
        .map(web::Query::into_inner)
        .map_err(|_| ApiError::InvalidQuery("the query string is malformed".into()))
}

pub fn flag(params: &HashMap<String, String>, key: &str) -> ApiResult<bool> {
    match params.get(key).map(String::as_str) {
        None | Some("false" | "0" | "") => Ok(false),
        Some("true" | "1") => Ok(true),
        Some(_) => Err(ApiError::InvalidQuery(format!(
            "{key} must be true or false"
        ))),
    }
}

/// A positive integer: digits (an optional leading `+`), not all zeros. A well-formed one
/// too large for any list saturates (a page past the last is 404 `invalid_page`, however
/// far past; a huge `page_size` is clamped), so syntax alone decides what is a 400.
fn positive(params: &HashMap<String, String>, key: &str, default: i64) -> ApiResult<i64> {
    let Some(raw) = params.get(key) else {
        return Ok(default);
    };
    let digits = raw.strip_prefix('+').unwrap_or(raw);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApiError::InvalidQuery(format!(
            "{key} must be a positive integer"
        )));
    }
    match digits.parse::<i64>() {
        Ok(0) => Err(ApiError::InvalidQuery(format!(
            "{key} must be a positive integer"
        ))),
        Ok(n) => Ok(n),
        // Only digits, so only too large.
        Err(_) => Ok(i64::MAX),
    }
}

impl ListQuery {
    /// The page, `search` and `include_deleted`; no filters.
    pub fn parse(req: &HttpRequest) -> ApiResult<Self> {
        Self::parse_filtered(req, &[])
    }

    /// The page, `search`, `include_deleted` and the resource's `filters`, typed.
    pub fn parse_filtered(req: &HttpRequest, filters: list_filter::Filters) -> ApiResult<Self> {
        let params = query_map(req)?;
        let page = positive(&params, "page", 1)?;
        let page_size = positive(&params, "page_size", DEFAULT_PAGE_SIZE)?.min(MAX_PAGE_SIZE);
        // Keep offsets far from overflow: no list has billions of rows.
        if page > 10_000_000 {
            return Err(ApiError::InvalidPage);
        }
        let search = params
            .get("search")
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty());
        if search
            .as_ref()
            .is_some_and(|s| s.contains('\0') || s.chars().count() > 255)
        {
            return Err(ApiError::InvalidQuery(
                "search must be at most 255 characters".into(),
            ));
        }
        Ok(Self {
            page,
            page_size,
            include_deleted: flag(&params, "include_deleted")?,
            search,
            filter: list_filter::read(&params, filters)?,
        })
    }
}

#[derive(Serialize)]
pub struct Page<T> {
    pub count: i64,
    pub next: Option<String>,
    pub previous: Option<String>,
    pub results: Vec<T>,
}

/// Builds the envelope; `next`/`previous` are absolute URLs on the request's own host.
pub fn page<T: Serialize>(
    req: &HttpRequest,
    query: &ListQuery,
    count: i64,
    results: Vec<T>,
) -> ApiResult<Page<T>> {
    query.check_page(count)?;
    // Scheme from configuration and host as matched against the registered domains:
    // neither `X-Forwarded-Proto` nor a raw `Host` header reaches a link.
    let scheme = req
        .app_data::<web::Data<AppState>>()
        .map_or("http", |state| state.config.public_scheme.as_str());
    let host = public_host(req);
    let url_for = |page: i64| -> String {
        let mut params: Vec<(String, String)> =
            web::Query::<Vec<(String, String)>>::from_query(req.query_string())
                .map(web::Query::into_inner)
                .unwrap_or_default();
        params.retain(|(k, _)| k != "page");
        params.push(("page".into(), page.to_string()));
        let query = params
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        format!("{scheme}://{host}{}?{query}", req.path())
    };
    let last_page = ((count + query.page_size - 1) / query.page_size).max(1);
    Ok(Page {
        count,
        next: (query.page < last_page).then(|| url_for(query.page + 1)),
        previous: (query.page > 1).then(|| url_for(query.page - 1)),
        results,
    })
}

pub fn page_response<T: Serialize>(
    req: &HttpRequest,
    query: &ListQuery,
    count: i64,
    results: Vec<T>,
) -> ApiResult<HttpResponse> {
    Ok(HttpResponse::Ok().json(page(req, query, count, results)?))
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
