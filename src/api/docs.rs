//! `GET /api/v1/schema/`: the OpenAPI document as JSON, on every address; and
//! `GET /api/v1/docs/`: interactive documentation (Swagger UI) for it, on the main domain
//! only (a platform page, like the console: nothing a user pastes into it lives on a
//! school's origin). The UI's assets are compiled into the binary (the page needs no
//! network) and served like the console's, with the same security headers; authorization
//! entered into it is kept in memory only (no `persistAuthorization`).

use std::sync::OnceLock;

use actix_web::{HttpRequest, HttpResponse};

use crate::api::{assets::Asset, openapi::Undocumented, routes::Mount};

/// Where the docs page and its files live.
pub const PATH: &str = "/api/v1/docs/";

const PAGE: &str = r#"<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>School Management Service API</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="/api/v1/docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/api/v1/docs/swagger-ui-bundle.js"></script>
  <script src="/api/v1/docs/init.js"></script>
</body>
</html>
"#;

const INIT_JS: &str = r##"window.ui = SwaggerUIBundle({
  url: "/api/v1/schema/",
  dom_id: "#swagger-ui",
  deepLinking: true,
  persistAuthorization: false
});
"##;

static PAGE_HTML: Asset = Asset::new("text/html; charset=utf-8", PAGE);
static BUNDLE_JS: Asset = Asset::new(
    "text/javascript; charset=utf-8",
    include_str!("../../assets/swagger-ui/swagger-ui-bundle.js"),
);
static STYLE_CSS: Asset = Asset::new(
    "text/css; charset=utf-8",
    include_str!("../../assets/swagger-ui/swagger-ui.css"),
);
static INIT: Asset = Asset::new("text/javascript; charset=utf-8", INIT_JS);

/// The docs routes; they are not API operations, so the document does not list them (nor
/// itself). Mounted as the path normaliser leaves them (with a trailing slash); the page
/// asks for them without one.
static PAGES: [(&str, &Asset); 4] = [
    ("/api/v1/docs/", &PAGE_HTML),
    ("/api/v1/docs/swagger-ui-bundle.js/", &BUNDLE_JS),
    ("/api/v1/docs/swagger-ui.css/", &STYLE_CSS),
    ("/api/v1/docs/init.js/", &INIT),
];

pub fn mount(m: &mut Mount) {
    m.endpoint("/api/v1/schema/").get(schema, Undocumented);
    for (path, asset) in &PAGES {
        m.endpoint(path).get(
            move |req: HttpRequest| async move { asset.respond(&req) },
            Undocumented,
        );
    }
}

/// The document as JSON, built once.
pub fn document_json() -> &'static str {
    static JSON: OnceLock<String> = OnceLock::new();
    JSON.get_or_init(|| {
        super::document()
            .to_pretty_json()
            .unwrap_or_else(|_| "{}".into())
    })
}

async fn schema() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/json")
        .body(document_json())
}
