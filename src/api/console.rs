//! The system admin console: a small single-page app for platform administrators at
//! `/admin/` on the main domain (`/` redirects there). It uses the public system API
//! only. Its files are compiled into the binary and served with a strict
//! Content-Security-Policy (no inline script or style, API calls to this origin only),
//! `X-Frame-Options: DENY`, and revalidated caching (`ETag`). What it shares with the
//! school app (`school_app.rs`) lives in `assets/shared/` and is served under both.

use actix_web::{HttpRequest, HttpResponse, guard, http::header, web};

use crate::{api::assets::Asset, request::host, state::AppState};

static INDEX_HTML: Asset = Asset::new(
    "text/html; charset=utf-8",
    include_str!("../../assets/console/index.html"),
);
static CONSOLE_JS: Asset = Asset::new(
    "text/javascript; charset=utf-8",
    include_str!("../../assets/console/console.js"),
);
pub static SHARED_JS: Asset = Asset::new(
    "text/javascript; charset=utf-8",
    include_str!("../../assets/shared/shared.js"),
);
pub static SHARED_CSS: Asset = Asset::new(
    "text/css; charset=utf-8",
    include_str!("../../assets/shared/shared.css"),
);
/// Both apps' icon (an SVG: browsers take it at `/favicon.ico` by its content type).
static FAVICON: Asset = Asset::new(
    "image/svg+xml",
    include_str!("../../assets/shared/favicon.svg"),
);

/// Where the console lives; main domain only (see `api::host`).
pub const PATH: &str = "/admin/";

/// GET, and HEAD for clients that probe (`curl -I`).
pub fn read() -> actix_web::Route {
    web::route().guard(guard::Any(guard::Get()).or(guard::Head()))
}

/// The route answering with a built-in file.
fn file(asset: &'static Asset) -> actix_web::Route {
    read().to(move |req: HttpRequest| async move { asset.respond(&req) })
}

/// Routes `files` (each a path under `app`, and its file) in one scope at `app` (`/admin/`,
/// `/app/`): any other path, the API's above all, is turned away by one prefix test
/// instead of trying each file's route on its way to the API's router.
pub fn serve_app(cfg: &mut web::ServiceConfig, app: &str, files: &[(&str, &'static Asset)]) {
    let mut scope = web::scope(app.trim_end_matches('/'));
    for &(path, asset) in files {
        scope = scope.route(path, file(asset));
    }
    cfg.service(scope);
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/", read().to(to_home));
    cfg.route("/favicon.ico/", file(&FAVICON));
    serve_app(
        cfg,
        PATH,
        &[
            ("/", &INDEX_HTML),
            ("/console.js/", &CONSOLE_JS),
            ("/shared.js/", &SHARED_JS),
            ("/shared.css/", &SHARED_CSS),
        ],
    );
}

/// `/`: the console on the main domain, the school app on a school's address.
async fn to_home(req: HttpRequest) -> HttpResponse {
    // Past the edge's host check, a host that is not a main domain is a school's.
    let school = req
        .app_data::<web::Data<AppState>>()
        .is_some_and(|state| !host::is_main(req.headers(), req.uri(), &state.config.main_domains));
    let home = if school {
        super::school_app::PATH
    } else {
        PATH
    };
    HttpResponse::Found()
        .insert_header((header::LOCATION, home))
        .finish()
}
