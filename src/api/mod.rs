//! The HTTP API: routing, request parsing helpers, and the system and school endpoints.
//! Every module mounts its own routes and describes them in the same place (`routes`);
//! `document` is the OpenAPI description of exactly what `configure` serves.

pub mod access;
pub mod assets;
pub mod body;
pub mod console;
pub mod docs;
pub mod fields;
pub mod health;
pub mod host;
pub mod list_filter;
pub mod metrics;
pub mod normalize;
pub mod oneroster;
pub mod openapi;
pub mod pagination;
pub mod path;
pub mod router;
pub mod routes;
pub mod school;
pub mod school_app;
pub mod spool;
pub mod system;

use actix_web::web::ServiceConfig;
use utoipa::openapi::OpenApi;

pub use path::PathIds;

use openapi::ApiDoc;
use routes::Mount;

/// Every API route, in matching order.
pub fn mount(m: &mut Mount) {
    health::mount(m);
    docs::mount(m);
    system::mount(m);
    school::mount(m);
    oneroster::mount(m);
}

/// Adds the API (and the pages of the admin console and the school app) to an app.
pub fn configure(cfg: &mut ServiceConfig) {
    console::configure(cfg);
    school_app::configure(cfg);
    let mut doc = ApiDoc::new();
    let mut m = Mount::new(cfg, &mut doc);
    mount(&mut m);
    m.serve();
}

/// The OpenAPI document of the API.
pub fn document() -> OpenApi {
    let mut doc = ApiDoc::new();
    mount(&mut Mount::document(&mut doc));
    doc.build()
}

#[cfg(test)]
mod tests {
    use actix_web::{App, test as actix_test};

    #[actix_web::test]
    async fn the_api_mounts_without_a_shadowed_route() {
        // `Mount` panics on a route an earlier one would take.
        let _app = actix_test::init_service(App::new().configure(super::configure)).await;
    }

    #[test]
    fn every_mounted_route_but_the_docs_is_described() {
        let mut doc = super::ApiDoc::new();
        let mut mount = super::Mount::document(&mut doc);
        super::mount(&mut mount);
        let mounted: Vec<String> = mount.paths().to_vec();
        let described: std::collections::BTreeSet<String> =
            doc.routes().into_iter().map(|(path, _)| path).collect();
        for path in mounted {
            assert!(
                described.contains(&path)
                    || path.starts_with("/api/v1/docs/")
                    || path == "/api/v1/schema/",
                "{path} is mounted but not described"
            );
        }
    }

    #[test]
    fn the_document_is_openapi_3_1_with_both_security_schemes() {
        let json = serde_json::to_value(super::document()).expect("json");
        assert_eq!(json["openapi"], "3.1.0");
        let schemes = &json["components"]["securitySchemes"];
        assert_eq!(schemes["bearer"]["scheme"], "bearer");
        assert_eq!(schemes["api_key"]["name"], "X-API-KEY");
        let body = &json["paths"]["/api/v1/school/departments/"]["post"]["requestBody"]["content"]
            ["application/json"]["schema"]["$ref"];
        assert_eq!(body, "#/components/schemas/CreateDepartmentRequest");
        let name = &json["components"]["schemas"]["CreateDepartmentRequest"]["properties"]["name"];
        assert_eq!(
            (name["minLength"].as_u64(), name["maxLength"].as_u64()),
            (Some(1), Some(255))
        );
    }

    #[test]
    fn every_operation_has_a_unique_operation_id_and_a_named_body() {
        let json = serde_json::to_value(super::document()).expect("json");
        let mut seen = std::collections::BTreeSet::new();
        for (path, item) in json["paths"].as_object().expect("paths") {
            for (method, op) in item.as_object().expect("operations") {
                let id = op["operationId"].as_str();
                assert!(
                    id.is_some_and(|id| !id.is_empty()),
                    "{method} {path} has no operationId"
                );
                let id = id.unwrap_or_default();
                assert!(seen.insert(id.to_owned()), "{id} names two operations");
                if let Some(body) =
                    op["requestBody"]["content"]["application/json"]["schema"].as_object()
                {
                    let name = body["$ref"].as_str().unwrap_or_default();
                    assert!(
                        name.starts_with("#/components/schemas/"),
                        "{method} {path}: the request body is not a named component"
                    );
                }
            }
        }
    }

    #[test]
    fn limits_survive_on_nullable_fields_of_requests_and_responses() {
        let json = serde_json::to_value(super::document()).expect("json");
        let symbol = &json["components"]["schemas"]["Mark"]["properties"]["symbol"];
        assert_eq!(symbol["maxLength"], 255, "{symbol}");
        // Every nullable string of every component is bounded (or of a fixed format).
        for (name, schema) in json["components"]["schemas"].as_object().expect("schemas") {
            for (property, value) in schema["properties"].as_object().into_iter().flatten() {
                if value["type"] == serde_json::json!(["string", "null"])
                    && value.get("format").is_none_or(|f| f == "email")
                {
                    assert!(
                        value["maxLength"].is_u64(),
                        "{name}.{property} has no maxLength: {value}"
                    );
                }
            }
        }
    }
}
