//! `GET /api/v1/schema/`: the OpenAPI document as JSON, on every address; and
//! `GET /api/v1/docs/`: interactive documentation (Swagger UI) for it. The UI's assets are
//! compiled into the binary: the page needs no network.

use std::sync::OnceLock;

use actix_web::{HttpResponse, http::header};

use crate::api::{openapi::Undocumented, routes::Mount};

const BUNDLE_JS: &str = include_str!("../../assets/swagger-ui/swagger-ui-bundle.js");
const STYLE_CSS: &str = include_str!("../../assets/swagger-ui/swagger-ui.css");

const PAGE: &str = r#"<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>School Management Service API</title>
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
  persistAuthorization: true
});
"##;

/// The docs routes; they are not API operations, so the document does not list them (nor
/// itself). Mounted as the path normaliser leaves them (with a trailing slash); the page
/// asks for them without one.
const PAGES: [(&str, &str, &str); 4] = [
    ("/api/v1/docs/", "text/html; charset=utf-8", PAGE),
    (
        "/api/v1/docs/swagger-ui-bundle.js/",
        "application/javascript",
        BUNDLE_JS,
    ),
    ("/api/v1/docs/swagger-ui.css/", "text/css", STYLE_CSS),
    ("/api/v1/docs/init.js/", "application/javascript", INIT_JS),
];

pub fn mount(m: &mut Mount) {
    m.endpoint("/api/v1/schema/").get(schema, Undocumented);
    for (path, content_type, body) in PAGES {
        m.endpoint(path)
            .get(move || asset(content_type, body), Undocumented);
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

async fn asset(content_type: &'static str, body: &'static str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(content_type)
        .insert_header((header::CACHE_CONTROL, "public, max-age=3600"))
        .body(body)
}
