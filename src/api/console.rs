//! The system admin console: a small single-page app for platform administrators at
//! `/admin/` on the main domain (`/` redirects there). It uses the public system API
//! only. Its three files are compiled into the binary and served with a strict
//! Content-Security-Policy (no inline script or style, API calls to this origin only),
//! `X-Frame-Options: DENY`, and revalidated caching (`ETag`).

use actix_web::{HttpRequest, HttpResponse, guard, http::header, web};

use crate::api::assets::Asset;

static INDEX_HTML: Asset = Asset::new(
    "text/html; charset=utf-8",
    include_str!("../../assets/console/index.html"),
);
static CONSOLE_JS: Asset = Asset::new(
    "text/javascript; charset=utf-8",
    include_str!("../../assets/console/console.js"),
);
static CONSOLE_CSS: Asset = Asset::new(
    "text/css; charset=utf-8",
    include_str!("../../assets/console/console.css"),
);

/// Where the console lives; main domain only (see `tenancy::host`).
pub const PATH: &str = "/admin/";

pub fn configure(cfg: &mut web::ServiceConfig) {
    // GET, and HEAD for clients that probe (`curl -I`).
    let read = || web::route().guard(guard::Any(guard::Get()).or(guard::Head()));
    cfg.route("/", read().to(to_console))
        .route(
            PATH,
            read().to(|req: HttpRequest| async move { INDEX_HTML.respond(&req) }),
        )
        .route(
            "/admin/console.js/",
            read().to(|req: HttpRequest| async move { CONSOLE_JS.respond(&req) }),
        )
        .route(
            "/admin/console.css/",
            read().to(|req: HttpRequest| async move { CONSOLE_CSS.respond(&req) }),
        );
}

async fn to_console() -> HttpResponse {
    HttpResponse::Found()
        .insert_header((header::LOCATION, PATH))
        .finish()
}
