//! Schema builders: the small JSON schemas operations are described with, and request
//! bodies from the fields a parser records (with the constraints it enforces).

use utoipa::{
    PartialSchema,
    openapi::{
        RefOr,
        schema::{
            ArrayBuilder, KnownFormat, ObjectBuilder, Schema, SchemaFormat, SchemaType, Type,
        },
    },
};

use super::ApiDoc;
use crate::api::fields::{FieldDoc, Kind};

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

/// A file's bytes (a download).
pub fn binary() -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Binary)))
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
pub(super) fn has_type(schema_type: &SchemaType, wanted: Type) -> bool {
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
        Kind::Date => builder
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Date))),
        Kind::UuidList => {
            return ArrayBuilder::new()
                .items(uuid())
                .min_items(c.min_items)
                .max_items(c.max_items)
                .into();
        }
        Kind::StringList => return array(string()),
        Kind::GradingScale => {
            return <crate::school::academic_settings::GradingScale as utoipa::PartialSchema>::schema();
        }
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
        Kind::UuidList if c.min_items.unwrap_or(0) > 0 => {
            json!(["3fa85f64-5717-4562-b3fc-2c963f66afa6"])
        }
        Kind::Date => json!("2026-09-01"),
        Kind::UuidList | Kind::StringList | Kind::GradingScale => json!([]),
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

/// A schema `T` has without registering it (for inline use).
pub fn inline<T: PartialSchema>() -> RefOr<Schema> {
    T::schema()
}
