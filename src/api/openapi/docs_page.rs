//! `GET /api/v1/docs/`: interactive API documentation (Swagger UI) for the document at
//! `/api/v1/schema/`. Its assets are compiled into the binary: the page needs no network.

use actix_web::{HttpResponse, http::header, web};

use crate::api::routes::Endpoint;

const BUNDLE_JS: &str = include_str!("../../../assets/swagger-ui/swagger-ui-bundle.js");
const STYLE_CSS: &str = include_str!("../../../assets/swagger-ui/swagger-ui.css");

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

/// The docs routes; they are not API operations, so the document does not list them.
/// Registered as the path normaliser leaves them (with a trailing slash); the page asks
/// for them without one.
pub const PATHS: [&str; 4] = [
    "/api/v1/docs/",
    "/api/v1/docs/swagger-ui-bundle.js/",
    "/api/v1/docs/swagger-ui.css/",
    "/api/v1/docs/init.js/",
];

pub fn configure(cfg: &mut web::ServiceConfig) {
    Endpoint::new(PATHS[0])
        .get(|| asset("text/html; charset=utf-8", PAGE))
        .register(cfg);
    Endpoint::new(PATHS[1])
        .get(|| asset("application/javascript", BUNDLE_JS))
        .register(cfg);
    Endpoint::new(PATHS[2])
        .get(|| asset("text/css", STYLE_CSS))
        .register(cfg);
    Endpoint::new(PATHS[3])
        .get(|| asset("application/javascript", INIT_JS))
        .register(cfg);
}

async fn asset(content_type: &'static str, body: &'static str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(content_type)
        .insert_header((header::CACHE_CONTROL, "public, max-age=3600"))
        .body(body)
}
