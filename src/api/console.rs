//! The system admin console: a small single-page app for platform administrators at
//! `/admin/` on the main domain (`/` redirects there). It uses the public system API
//! only. Its three files are compiled into the binary and served with a strict
//! Content-Security-Policy (no inline script or style, API calls to this origin only),
//! `X-Frame-Options: DENY`, and revalidated caching (`ETag`).

use std::sync::OnceLock;

use actix_web::{HttpRequest, HttpResponse, guard, http::header, web};
use sha2::{Digest, Sha256};

const INDEX_HTML: &str = include_str!("../../assets/console/index.html");
const CONSOLE_JS: &str = include_str!("../../assets/console/console.js");
const CONSOLE_CSS: &str = include_str!("../../assets/console/console.css");

/// Where the console lives; main domain only (see `tenancy::host`).
pub const PATH: &str = "/admin/";

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
                   connect-src 'self'; img-src 'self' data:; base-uri 'none'; \
                   form-action 'none'; frame-ancestors 'none'";

pub fn configure(cfg: &mut web::ServiceConfig) {
    // GET, and HEAD for clients that probe (`curl -I`).
    let read = || web::route().guard(guard::Any(guard::Get()).or(guard::Head()));
    cfg.route("/", read().to(to_console))
        .route(
            PATH,
            read().to(|req| asset(req, "text/html; charset=utf-8", INDEX_HTML)),
        )
        .route(
            "/admin/console.js/",
            read().to(|req| asset(req, "text/javascript; charset=utf-8", CONSOLE_JS)),
        )
        .route(
            "/admin/console.css/",
            read().to(|req| asset(req, "text/css; charset=utf-8", CONSOLE_CSS)),
        );
}

async fn to_console() -> HttpResponse {
    HttpResponse::Found()
        .insert_header((header::LOCATION, PATH))
        .finish()
}

/// A strong validator per asset, computed once.
fn etag(body: &'static str) -> String {
    static TAGS: OnceLock<std::collections::HashMap<usize, String>> = OnceLock::new();
    let tags = TAGS.get_or_init(|| {
        [INDEX_HTML, CONSOLE_JS, CONSOLE_CSS]
            .into_iter()
            .map(|b| {
                let digest = Sha256::digest(b.as_bytes());
                let hex: String = digest[..12].iter().map(|x| format!("{x:02x}")).collect();
                (b.as_ptr() as usize, format!("\"{hex}\""))
            })
            .collect()
    });
    tags.get(&(body.as_ptr() as usize))
        .cloned()
        .unwrap_or_default()
}

async fn asset(req: HttpRequest, content_type: &'static str, body: &'static str) -> HttpResponse {
    let tag = etag(body);
    let fresh = req
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == tag));
    let mut res = if fresh {
        HttpResponse::NotModified()
    } else {
        HttpResponse::Ok()
    };
    res.insert_header((header::ETAG, tag))
        // Revalidate every time (cheap with the ETag): a new binary serves new files at once.
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header((header::CONTENT_SECURITY_POLICY, CSP))
        .insert_header((header::X_FRAME_OPTIONS, "DENY"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((header::REFERRER_POLICY, "no-referrer"));
    if fresh {
        res.finish()
    } else {
        res.content_type(content_type).body(body)
    }
}
