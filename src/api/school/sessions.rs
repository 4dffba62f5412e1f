//! `/api/v1/school/sessions/`: academic sessions (at most one active, see
//! `school::sessions`). A create answers the spec's envelope with plain dates.

use serde_json::json;
use utoipa::openapi::{RefOr, schema::Schema};

use crate::{
    api::{
        fields::{Fields, any, len},
        openapi::{
            ApiDoc,
            schema::{boolean, object, string, uuid},
        },
        routes::Mount,
        school::crud::{self, SchoolResource},
    },
    auth::permissions::Resource,
    error::{ApiResult, FieldErrors},
    school::sessions::{AcademicSession, SessionChanges, Sessions},
    tenancy::TenantConn,
};

impl SchoolResource for Sessions {
    const PERMISSION: Resource = Resource::AcademicSession;
    const PATH: &'static str = "/api/v1/school/sessions/";

    fn parse(f: &mut Fields<'_>) -> SessionChanges {
        SessionChanges {
            name: f.required("name", &len(1, 255)),
            start_date: f.required("start_date", &any),
            end_date: f.required("end_date", &any),
            // A PUT without is_active leaves it as it is.
            is_active: f.when_given("is_active", &any),
            is_deleted: f.optional("is_deleted", false, &any),
        }
    }

    fn validate(
        _: &mut TenantConn,
        _: &(),
        changes: &SessionChanges,
        current: Option<&AcademicSession>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        let start = changes.start_date.or(current.map(|c| c.start_date));
        let end = changes.end_date.or(current.map(|c| c.end_date));
        if let (Some(start), Some(end)) = (start, end) {
            if end < start {
                errors.add("end_date", "must not be before start_date");
            }
        }
        let deleted = changes
            .is_deleted
            .or(current.map(|c| c.is_deleted))
            .unwrap_or(false);
        if deleted && changes.is_active == Some(true) {
            errors.add("is_active", "a deleted session cannot be active");
        }
        Ok(())
    }

    /// `{"created": true, "data": {...}}` with plain dates and `is_active` as a string.
    fn created_body(s: AcademicSession) -> ApiResult<serde_json::Value> {
        Ok(json!({
            "created": true,
            "data": {
                "id": s.id,
                "name": s.name,
                "start_date": s.start_date.date_naive().to_string(),
                "end_date": s.end_date.date_naive().to_string(),
                "is_active": s.is_active.to_string(),
                "created_at": s.created_at,
                "updated_at": s.updated_at,
            }
        }))
    }

    fn created_schema(doc: &mut ApiDoc) -> RefOr<Schema> {
        let date = || {
            utoipa::openapi::schema::ObjectBuilder::new()
                .schema_type(utoipa::openapi::schema::Type::String)
                .format(Some(utoipa::openapi::schema::SchemaFormat::KnownFormat(
                    utoipa::openapi::schema::KnownFormat::Date,
                )))
                .into()
        };
        let envelope = object(vec![
            ("created", boolean()),
            (
                "data",
                object(vec![
                    ("id", uuid()),
                    ("name", string()),
                    ("start_date", date()),
                    ("end_date", date()),
                    ("is_active", string()),
                    ("created_at", string()),
                    ("updated_at", string()),
                ]),
            ),
        ]);
        doc.named("AcademicSessionCreated", envelope)
    }
}

pub fn mount(m: &mut Mount) {
    crud::mount::<Sessions>(m);
}
