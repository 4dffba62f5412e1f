//! The OpenAPI 3.1 document, assembled from the code: routes describe themselves next to
//! their registration, request bodies are described by recording the very parsers that
//! read them (`fields::describe`), and responses by the serialised types (`ToSchema`).

pub mod build;
mod describe;
pub mod docs_page;
pub mod serve;

pub use build::{ApiDoc, Auth, Op};

use utoipa::openapi::OpenApi;

/// The whole API description.
pub fn document() -> OpenApi {
    let mut doc = ApiDoc::new();
    describe::all(&mut doc);
    doc.build()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use actix_web::{App, test as actix_test};

    use crate::api::{self, routes::registered_routes};

    #[actix_web::test]
    async fn every_registered_route_is_documented_and_every_documented_route_exists() {
        let _app = actix_test::init_service(App::new().configure(api::configure)).await;
        let registered = registered_routes();
        let mut doc = super::ApiDoc::new();
        super::describe::all(&mut doc);
        let mut documented: BTreeSet<(String, String)> = doc
            .routes()
            .into_iter()
            .map(|(path, method)| (path, method.to_string()))
            .collect();
        // The document describes everything but itself and the docs page.
        documented.insert(("/api/v1/schema/".into(), "GET".into()));
        documented.extend(
            super::docs_page::PATHS
                .iter()
                .map(|p| (p.to_string(), "GET".to_string())),
        );
        let registered_only: Vec<_> = registered.difference(&documented).collect();
        let documented_only: Vec<_> = documented.difference(&registered).collect();
        assert!(
            registered_only.is_empty(),
            "registered but not documented: {registered_only:?}"
        );
        assert!(
            documented_only.is_empty(),
            "documented but not registered: {documented_only:?}"
        );
    }

    #[test]
    fn the_document_is_openapi_3_1_with_both_security_schemes() {
        let json = serde_json::to_value(super::document()).expect("json");
        assert_eq!(json["openapi"], "3.1.0");
        let schemes = &json["components"]["securitySchemes"];
        assert_eq!(schemes["bearer"]["scheme"], "bearer");
        assert_eq!(schemes["api_key"]["name"], "X-API-KEY");
        let name = &json["paths"]["/api/v1/school/departments/"]["post"]["requestBody"]["content"]
            ["application/json"]["schema"]["properties"]["name"];
        assert_eq!(
            (name["minLength"].as_u64(), name["maxLength"].as_u64()),
            (Some(1), Some(255))
        );
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
