//! `ApiDoc`: collects operations and component schemas, and builds the OpenAPI 3.1
//! document from them.

use std::collections::BTreeMap;

use actix_web::http::Method;
use utoipa::{
    ToSchema,
    openapi::{
        ComponentsBuilder, ContentBuilder, InfoBuilder, OpenApi, OpenApiBuilder, PathItem,
        PathsBuilder, Ref, RefOr, Required, ResponseBuilder, ResponsesBuilder,
        path::{HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn},
        request_body::RequestBodyBuilder,
        schema::{ObjectBuilder, Schema, Type},
        security::{
            ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme,
        },
    },
};

use super::{
    naming::{PathFacts, operation_id, request_body_name, response_body_name},
    op::{Auth, Op},
    schema::{array, has_type, integer, string, uuid},
};
use crate::api::fields::{FieldDoc, Kind};

#[derive(Default)]
pub struct ApiDoc {
    operations: BTreeMap<String, Vec<(Method, Op)>>,
    schemas: BTreeMap<String, RefOr<Schema>>,
}

fn http_method(method: &Method) -> HttpMethod {
    match *method {
        Method::POST => HttpMethod::Post,
        Method::PUT => HttpMethod::Put,
        Method::PATCH => HttpMethod::Patch,
        Method::DELETE => HttpMethod::Delete,
        _ => HttpMethod::Get,
    }
}

impl ApiDoc {
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers `T` (and what it refers to) as components; answers a reference to it.
    pub fn schema<T: ToSchema>(&mut self) -> RefOr<Schema> {
        let mut nested = Vec::new();
        T::schemas(&mut nested);
        for (name, schema) in nested {
            self.schemas.entry(name).or_insert(schema);
        }
        let name = T::name().into_owned();
        self.schemas.entry(name.clone()).or_insert_with(T::schema);
        Ref::from_schema_name(name).into()
    }

    /// Registers a named schema built by hand; answers a reference to it.
    pub fn named(&mut self, name: &str, schema: RefOr<Schema>) -> RefOr<Schema> {
        self.schemas.entry(name.to_owned()).or_insert(schema);
        Ref::from_schema_name(name).into()
    }

    /// Copies the limits of a resource's request fields onto the same-named properties of
    /// its registered record schema `record`: stored values keep to the limits they were
    /// accepted under, and a nullable property (`type: [string, null]`) keeps them too.
    pub fn constrain_record(&mut self, record: &RefOr<Schema>, fields: &[FieldDoc]) {
        let RefOr::Ref(reference) = record else {
            return;
        };
        let name = reference
            .ref_location
            .rsplit('/')
            .next()
            .unwrap_or_default();
        let Some(RefOr::T(Schema::Object(object))) = self.schemas.get_mut(name) else {
            return;
        };
        for field in fields {
            let Some(RefOr::T(Schema::Object(property))) = object.properties.get_mut(&field.name)
            else {
                continue;
            };
            let c = &field.constraints;
            match field.kind {
                Kind::String if has_type(&property.schema_type, Type::String) => {
                    property.min_length = property.min_length.or(c.min_length.filter(|n| *n > 0));
                    property.max_length = property.max_length.or(c.max_length);
                }
                Kind::Integer if has_type(&property.schema_type, Type::Integer) => {
                    let number = |v: i64| utoipa::Number::Int(v as isize);
                    property.minimum = property.minimum.clone().or(c.minimum.map(number));
                    property.maximum = property.maximum.clone().or(c.maximum.map(number));
                }
                _ => {}
            }
        }
    }

    pub fn add(&mut self, method: Method, path: &str, op: Op) {
        self.operations
            .entry(path.to_owned())
            .or_default()
            .push((method, op));
    }

    /// Every (path, method) described, for checking against the registered routes.
    pub fn routes(&self) -> Vec<(String, Method)> {
        self.operations
            .iter()
            .flat_map(|(path, ops)| {
                ops.iter()
                    .map(move |(method, _)| (path.clone(), method.clone()))
            })
            .collect()
    }

    pub fn build(mut self) -> OpenApi {
        let problem = self.named("Problem", problem_schema());
        let mut paths = PathsBuilder::new();
        let operations = std::mem::take(&mut self.operations);
        let all_paths: Vec<String> = operations.keys().cloned().collect();
        for (path, ops) in operations {
            let methods: Vec<Method> = ops.iter().map(|(method, _)| method.clone()).collect();
            let facts = PathFacts {
                path: &path,
                methods: &methods,
                has_items: all_paths.iter().any(|other| {
                    other
                        .strip_prefix(path.as_str())
                        .is_some_and(|rest| rest.starts_with('{'))
                }),
            };
            let path_params: Vec<String> = path
                .split('/')
                .filter_map(|segment| segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
                .map(str::to_owned)
                .collect();
            for (method, op) in ops {
                let id = operation_id(&method, &facts);
                let mut operation = OperationBuilder::new()
                    .operation_id(Some(id.clone()))
                    .summary(Some(op.summary))
                    .description(op.description)
                    .tag(op.tag);
                for name in &path_params {
                    operation = operation.parameter(
                        ParameterBuilder::new()
                            .name(name)
                            .parameter_in(ParameterIn::Path)
                            .required(Required::True)
                            .schema(Some(uuid())),
                    );
                }
                for (name, schema, description) in op.query {
                    operation = operation.parameter(
                        ParameterBuilder::new()
                            .name(name)
                            .parameter_in(ParameterIn::Query)
                            .required(Required::False)
                            .description(Some(description))
                            .schema(Some(schema)),
                    );
                }
                if let Some(body) = op.body {
                    // Inline bodies become named components, so generated types are named too.
                    let body = match body {
                        RefOr::T(schema) => self.named(&request_body_name(&id), RefOr::T(schema)),
                        reference => reference,
                    };
                    operation = operation.request_body(Some(
                        RequestBodyBuilder::new()
                            .required(Some(Required::True))
                            .content(
                                "application/json",
                                ContentBuilder::new().schema(Some(body)).build(),
                            )
                            .build(),
                    ));
                }
                let mut responses = ResponsesBuilder::new();
                let (status, ok_schema) = op.ok;
                let mut ok = ResponseBuilder::new().description(reason(status));
                if let Some(schema) = ok_schema {
                    let json = op.ok_media_type == "application/json";
                    let schema = match schema {
                        RefOr::T(schema) if json => {
                            self.named(&response_body_name(&id), RefOr::T(schema))
                        }
                        other => other,
                    };
                    ok = ok.content(
                        op.ok_media_type,
                        ContentBuilder::new().schema(Some(schema)).build(),
                    );
                }
                if let Some(media_type) = op.ok_also {
                    ok = ok.content(
                        media_type,
                        ContentBuilder::new()
                            .schema(Some(super::schema::binary()))
                            .build(),
                    );
                }
                responses = responses.response(status.to_string(), ok.build());
                for error in op.errors {
                    responses = responses.response(
                        error.to_string(),
                        ResponseBuilder::new()
                            .description(error_description(error))
                            .content(
                                "application/problem+json",
                                ContentBuilder::new().schema(Some(problem.clone())).build(),
                            )
                            .build(),
                    );
                }
                operation = operation.responses(responses.build());
                operation = match op.auth {
                    Auth::None => operation.securities(Some(Vec::<SecurityRequirement>::new())),
                    Auth::Bearer => {
                        operation.security(SecurityRequirement::new("bearer", Vec::<String>::new()))
                    }
                    Auth::BearerOrKey => operation
                        .security(SecurityRequirement::new("bearer", Vec::<String>::new()))
                        .security(SecurityRequirement::new("api_key", Vec::<String>::new())),
                };
                paths = paths.path(
                    path.clone(),
                    PathItem::new(http_method(&method), operation.build()),
                );
            }
        }
        let mut components = ComponentsBuilder::new()
            .security_scheme(
                "bearer",
                SecurityScheme::Http(
                    HttpBuilder::new()
                        .scheme(HttpAuthScheme::Bearer)
                        .bearer_format("JWT")
                        .build(),
                ),
            )
            .security_scheme(
                "api_key",
                SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new("X-API-KEY"))),
            );
        for (name, schema) in self.schemas {
            components = components.schema(name, schema);
        }
        OpenApiBuilder::new()
            .info(
                InfoBuilder::new()
                    .title("School Management Service")
                    .version(env!("CARGO_PKG_VERSION"))
                    .description(Some(
                        "Multi-tenant school management API. School endpoints are served on each \
                         school's address (or with `X-Tenant` on the main domain); system \
                         endpoints on the main domain. Errors are RFC 9457 problem details.",
                    ))
                    .build(),
            )
            .paths(paths.build())
            .components(Some(components.build()))
            .build()
    }
}

fn reason(status: u16) -> &'static str {
    actix_web::http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("Response")
}

/// An error response's description: the reason phrase, and for the statuses with more
/// than one cause the `code`s that tell them apart.
fn error_description(status: u16) -> String {
    match status {
        503 => "Service Unavailable: `service_unavailable` (the database is unreachable, \
                the pool is exhausted, or the request waited DB_POOL_TIMEOUT_MS for its \
                school's turn: SCHOOL_MAX_IN_FLIGHT) or `database_timeout` (a statement ran \
                past DB_STATEMENT_TIMEOUT_MS and was cancelled); both carry `Retry-After`"
            .to_owned(),
        429 => "Too Many Requests: `throttled` (the login throttle, or the school's \
                SCHOOL_RATE_PER_SECOND: a request past it is first held up to \
                SCHOOL_RATE_MAX_DELAY_MS for its turn); carries `Retry-After`"
            .to_owned(),
        other => reason(other).to_owned(),
    }
}

/// RFC 9457 problem details, with the stable `code` and per-field `errors`.
fn problem_schema() -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .property("type", string())
        .required("type")
        .property("title", string())
        .required("title")
        .property("status", integer())
        .required("status")
        .property("code", string())
        .required("code")
        .property("detail", string())
        .required("detail")
        .property(
            "errors",
            ObjectBuilder::new()
                .schema_type(Type::Object)
                .additional_properties(Some(array(string()))),
        )
        .into()
}
