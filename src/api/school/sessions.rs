//! `/api/v1/school/sessions/`: academic sessions. At most one is active: creating one makes
//! it the active one, and activating one deactivates the others, in the same transaction
//! and under a table lock, so concurrent requests cannot leave two active.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use serde_json::json;
use uuid::Uuid;

use utoipa::openapi::{RefOr, schema::Schema};

use crate::{
    api::{
        fields::{Fields, any, len},
        openapi::ApiDoc,
        pagination::ListQuery,
        school::crud::{SchoolResource, table_queries},
    },
    auth::{Caller, permissions::Resource},
    db::schema_tenant::academic_sessions as t,
    error::{ApiResult, FieldErrors},
    tenancy::TenantConn,
};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct AcademicSession {
    pub id: Uuid,
    pub name: String,
    pub start_date: DateTime<Utc>,
    pub end_date: DateTime<Utc>,
    pub is_active: bool,
    pub is_deleted: bool,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(AsChangeset, Default)]
#[diesel(table_name = t)]
pub struct SessionInput {
    name: Option<String>,
    start_date: Option<DateTime<Utc>>,
    end_date: Option<DateTime<Utc>>,
    is_active: Option<bool>,
    is_deleted: Option<bool>,
}

table_queries!(t, AcademicSession, search: [name], soft_delete: is_deleted);

/// Serialises session activation across concurrent transactions of this school.
fn lock_sessions(conn: &mut TenantConn) -> ApiResult<()> {
    diesel::sql_query("LOCK TABLE academic_sessions IN SHARE ROW EXCLUSIVE MODE")
        .execute(conn.pg())?;
    Ok(())
}

fn deactivate_others(conn: &mut TenantConn, keep: Uuid) -> ApiResult<()> {
    diesel::update(
        t::table
            .filter(t::is_active.eq(true))
            .filter(t::id.ne(keep)),
    )
    .set((t::is_active.eq(false), t::updated_at.eq(Utc::now())))
    .execute(conn.pg())?;
    Ok(())
}

pub struct Sessions;

impl SchoolResource for Sessions {
    const PERMISSION: Resource = Resource::AcademicSession;
    const PATH: &'static str = "/api/v1/school/sessions/";
    type Scope = ();
    type Record = AcademicSession;
    type Input = SessionInput;

    fn scope(_: &mut TenantConn, _: &[Uuid]) -> ApiResult<()> {
        Ok(())
    }

    fn parse(f: &mut Fields<'_>) -> SessionInput {
        SessionInput {
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
        input: &SessionInput,
        current: Option<&AcademicSession>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        let start = input.start_date.or(current.map(|c| c.start_date));
        let end = input.end_date.or(current.map(|c| c.end_date));
        if let (Some(start), Some(end)) = (start, end) {
            if end < start {
                errors.add("end_date", "must not be before start_date");
            }
        }
        let deleted = input
            .is_deleted
            .or(current.map(|c| c.is_deleted))
            .unwrap_or(false);
        if deleted && input.is_active == Some(true) {
            errors.add("is_active", "a deleted session cannot be active");
        }
        Ok(())
    }

    fn created_schema(doc: &mut ApiDoc) -> RefOr<Schema> {
        use crate::api::openapi::build::{boolean, object, string, uuid};
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

    fn list(
        conn: &mut TenantConn,
        _: &(),
        query: &ListQuery,
    ) -> ApiResult<(i64, Vec<AcademicSession>)> {
        list_rows(conn, query, |q| q)
    }

    fn find(
        conn: &mut TenantConn,
        _: &(),
        id: Uuid,
        include_deleted: bool,
    ) -> ApiResult<Option<AcademicSession>> {
        find_row(conn, id, include_deleted)
    }

    fn create(
        conn: &mut TenantConn,
        _: &(),
        input: SessionInput,
        caller: &Caller,
    ) -> ApiResult<AcademicSession> {
        let id = Uuid::new_v4();
        // A new session becomes the active one, unless it is created deleted: a deleted
        // session is never active, and leaves the others as they are.
        let deleted = input.is_deleted.unwrap_or(false);
        if !deleted {
            lock_sessions(conn)?;
            deactivate_others(conn, id)?;
        }
        Ok(diesel::insert_into(t::table)
            .values((
                t::id.eq(id),
                t::name.eq(input.name.unwrap_or_default()),
                t::start_date.eq(input.start_date.unwrap_or_default()),
                t::end_date.eq(input.end_date.unwrap_or_default()),
                t::is_active.eq(!deleted),
                t::is_deleted.eq(deleted),
                t::created_by.eq(caller.user_id()),
                t::updated_by.eq(caller.user_id()),
            ))
            .returning(AcademicSession::as_returning())
            .get_result(conn.pg())?)
    }

    fn update(
        conn: &mut TenantConn,
        _: &(),
        id: Uuid,
        mut input: SessionInput,
        caller: &Caller,
    ) -> ApiResult<AcademicSession> {
        // Deleting a session deactivates it (`validate` refuses activating a deleted one).
        if input.is_deleted == Some(true) {
            input.is_active = Some(false);
        }
        if input.is_active == Some(true) {
            lock_sessions(conn)?;
            deactivate_others(conn, id)?;
        }
        Ok(diesel::update(t::table.find(id))
            .set((
                &input,
                t::updated_by.eq(caller.user_id()),
                t::updated_at.eq(Utc::now()),
            ))
            .returning(AcademicSession::as_returning())
            .get_result(conn.pg())?)
    }

    fn delete(conn: &mut TenantConn, _: &(), id: Uuid) -> ApiResult<()> {
        delete_row(conn, id)
    }
}
