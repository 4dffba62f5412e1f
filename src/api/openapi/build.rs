//! `ApiDoc`: collects operations and component schemas, and turns recorded request fields
//! into JSON schemas with the enforced constraints.

use std::collections::BTreeMap;

use actix_web::http::Method;
use utoipa::{
    PartialSchema, ToSchema,
    openapi::{
        ComponentsBuilder, ContentBuilder, InfoBuilder, OpenApi, OpenApiBuilder, PathItem,
        PathsBuilder, Ref, RefOr, Required, ResponseBuilder, ResponsesBuilder,
        path::{HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn},
        request_body::RequestBodyBuilder,
        schema::{
            ArrayBuilder, KnownFormat, ObjectBuilder, Schema, SchemaFormat, SchemaType, Type,
        },
        security::{
            ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme,
        },
    },
};

use crate::api::fields::{FieldDoc, Kind};

/// Who may call an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Auth {
    None,
    /// A bearer token (platform endpoints).
    Bearer,
    /// A bearer token or an `X-API-KEY` (school endpoints).
    BearerOrKey,
}

/// One operation, described.
pub struct Op {
    pub summary: String,
    /// Rules a client should know beyond the schemas (Markdown).
    pub description: Option<String>,
    pub tag: String,
    pub auth: Auth,
    pub query: Vec<(&'static str, RefOr<Schema>, &'static str)>,
    pub body: Option<RefOr<Schema>>,
    /// The success status and its body (`None` for no body).
    pub ok: (u16, Option<RefOr<Schema>>),
    /// Error statuses this operation can answer (problem+json).
    pub errors: Vec<u16>,
}

impl Op {
    pub fn new(tag: impl Into<String>, summary: impl Into<String>, auth: Auth) -> Self {
        let errors = match auth {
            Auth::None => vec![400, 404, 413, 415, 503],
            _ => vec![400, 401, 403, 404, 413, 415, 503],
        };
        Self {
            summary: summary.into(),
            description: None,
            tag: tag.into(),
            auth,
            query: Vec::new(),
            body: None,
            ok: (200, None),
            errors,
        }
    }

    pub fn description(mut self, text: Option<&str>) -> Self {
        self.description = text.map(str::to_owned);
        self
    }

    pub fn body(mut self, schema: RefOr<Schema>) -> Self {
        self.body = Some(schema);
        self
    }

    pub fn ok(mut self, status: u16, schema: Option<RefOr<Schema>>) -> Self {
        self.ok = (status, schema);
        self
    }

    pub fn query(
        mut self,
        name: &'static str,
        schema: RefOr<Schema>,
        description: &'static str,
    ) -> Self {
        self.query.push((name, schema, description));
        self
    }

    pub fn errors(mut self, extra: &[u16]) -> Self {
        for status in extra {
            if !self.errors.contains(status) {
                self.errors.push(*status);
            }
        }
        self.errors.sort_unstable();
        self
    }
}

/// How an endpoint's operation is described when it is mounted: an [`Op`], a function
/// that builds one with the document (to register the schemas it refers to), or
/// [`Undocumented`] for routes that are not API operations.
pub trait Describe {
    fn describe(self, doc: &mut ApiDoc) -> Option<Op>;
}

impl Describe for Op {
    fn describe(self, _: &mut ApiDoc) -> Option<Op> {
        Some(self)
    }
}

impl<F: FnOnce(&mut ApiDoc) -> Op> Describe for F {
    fn describe(self, doc: &mut ApiDoc) -> Option<Op> {
        Some(self(doc))
    }
}

/// Not an API operation: the document leaves it out.
pub struct Undocumented;

impl Describe for Undocumented {
    fn describe(self, _: &mut ApiDoc) -> Option<Op> {
        None
    }
}

/// The paginated envelope `{count, next, previous, results}` of `item`, registered as
/// `name`.
pub fn page_of(doc: &mut ApiDoc, name: &str, item: RefOr<Schema>) -> RefOr<Schema> {
    doc.named(
        name,
        object(vec![
            ("count", integer()),
            ("next", nullable(string())),
            ("previous", nullable(string())),
            ("results", array(item)),
        ]),
    )
}

/// An object schema with `properties`, of which `required` must be present.
pub fn object_requiring(
    properties: Vec<(&str, RefOr<Schema>)>,
    required: &[&str],
) -> RefOr<Schema> {
    let mut builder = ObjectBuilder::new().schema_type(Type::Object);
    for (name, schema) in properties {
        builder = builder.property(name, schema);
    }
    for name in required {
        builder = builder.required(*name);
    }
    builder.into()
}

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

/// `T | null`.
pub fn nullable(schema: RefOr<Schema>) -> RefOr<Schema> {
    let null = ObjectBuilder::new().schema_type(Type::Null).build();
    Schema::OneOf(
        utoipa::openapi::schema::OneOfBuilder::new()
            .item(schema)
            .item(null)
            .build(),
    )
    .into()
}

pub fn string() -> RefOr<Schema> {
    ObjectBuilder::new().schema_type(Type::String).into()
}

pub fn integer() -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
        .into()
}

pub fn boolean() -> RefOr<Schema> {
    ObjectBuilder::new().schema_type(Type::Boolean).into()
}

pub fn uuid() -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Uuid)))
        .into()
}

pub fn array(items: RefOr<Schema>) -> RefOr<Schema> {
    ArrayBuilder::new().items(items).into()
}

/// An object with the given properties, all required.
pub fn object(properties: Vec<(&str, RefOr<Schema>)>) -> RefOr<Schema> {
    let mut builder = ObjectBuilder::new().schema_type(Type::Object);
    for (name, schema) in properties {
        builder = builder.property(name, schema).required(name);
    }
    builder.into()
}

/// Whether a schema type is `wanted`, alone or with `null`.
fn has_type(schema_type: &SchemaType, wanted: Type) -> bool {
    match schema_type {
        SchemaType::Type(t) => *t == wanted,
        SchemaType::Array(types) => types.contains(&wanted),
        SchemaType::AnyValue => false,
    }
}

/// The JSON schema of one recorded request field.
fn field_schema(field: &FieldDoc) -> RefOr<Schema> {
    let c = &field.constraints;
    let mut builder = ObjectBuilder::new();
    builder = match field.kind {
        Kind::String => builder.schema_type(Type::String),
        Kind::Integer => builder
            .schema_type(Type::Integer)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int32)))
            .minimum(Some(c.minimum.unwrap_or(i32::MIN.into())))
            .maximum(Some(c.maximum.unwrap_or(i32::MAX.into()))),
        Kind::Boolean => builder.schema_type(Type::Boolean),
        Kind::Uuid => builder
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Uuid))),
        Kind::DateTime => builder.schema_type(Type::String).description(Some(
            "RFC 3339 date-time with an offset, or YYYY-MM-DD (midnight UTC)",
        )),
        Kind::UuidList => {
            return ArrayBuilder::new()
                .items(uuid())
                .max_items(c.max_items)
                .into();
        }
        Kind::StringList => return array(string()),
        Kind::Any => builder.schema_type(SchemaType::AnyValue),
    };
    if field.kind == Kind::String {
        builder = builder.min_length(c.min_length).max_length(c.max_length);
        if let Some(format) = c.format {
            builder = builder.format(Some(SchemaFormat::Custom(format.to_owned())));
        }
        if let Some(values) = c.one_of {
            builder = builder.enum_values(Some(values.iter().copied()));
        }
    }
    let schema: RefOr<Schema> = builder.into();
    if field.nullable {
        nullable(schema)
    } else {
        schema
    }
}

/// A value that satisfies the field's recorded constraints, for the document's examples.
fn example_value(field: &FieldDoc) -> serde_json::Value {
    use serde_json::json;
    let c = &field.constraints;
    match field.kind {
        Kind::String => {
            if let Some(first) = c.one_of.and_then(|values| values.first()) {
                json!(first)
            } else if c.format == Some("email") {
                json!("office@example.org")
            } else {
                let mut text: String = field.name.replace('_', " ");
                text.truncate(c.max_length.unwrap_or(usize::MAX).max(1));
                json!(text)
            }
        }
        Kind::Integer => json!(
            c.minimum
                .unwrap_or(0)
                .max(0)
                .min(c.maximum.unwrap_or(i64::MAX))
        ),
        Kind::Boolean => json!(false),
        Kind::Uuid => json!("3fa85f64-5717-4562-b3fc-2c963f66afa6"),
        Kind::DateTime => json!("2026-09-01T00:00:00Z"),
        Kind::UuidList | Kind::StringList => json!([]),
        Kind::Any => json!([]),
    }
}

/// The request body schema of a parser's fields; `required` lists the required ones (for
/// create and replace; patch bodies require nothing). The example fills the required
/// fields with values that meet their constraints.
pub fn request_schema(fields: &[FieldDoc], with_required: bool) -> RefOr<Schema> {
    let example: serde_json::Map<String, serde_json::Value> = fields
        .iter()
        .filter(|f| f.required || !with_required)
        // Optional references are left out: an example id would name no record.
        .filter(|f| f.kind != Kind::Uuid || f.required)
        .map(|f| (f.name.clone(), example_value(f)))
        .collect();
    let mut builder = ObjectBuilder::new()
        .schema_type(Type::Object)
        .examples([serde_json::Value::Object(example)]);
    for field in fields {
        builder = builder.property(&field.name, field_schema(field));
        if with_required && field.required {
            builder = builder.required(&field.name);
        }
    }
    builder.into()
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
        for (path, ops) in std::mem::take(&mut self.operations) {
            let path_params: Vec<String> = path
                .split('/')
                .filter_map(|segment| segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
                .map(str::to_owned)
                .collect();
            for (method, op) in ops {
                let mut operation = OperationBuilder::new()
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
                    ok = ok.content(
                        "application/json",
                        ContentBuilder::new().schema(Some(schema)).build(),
                    );
                }
                responses = responses.response(status.to_string(), ok.build());
                for error in op.errors {
                    responses = responses.response(
                        error.to_string(),
                        ResponseBuilder::new()
                            .description(reason(error))
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

/// A schema `T` has without registering it (for inline use).
pub fn inline<T: PartialSchema>() -> RefOr<Schema> {
    T::schema()
}
