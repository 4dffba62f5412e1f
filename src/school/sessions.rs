//! Academic sessions. At most one is active: creating one makes it the active one, and
//! activating one deactivates the others, in the same transaction and under a table lock,
//! so concurrent requests cannot leave two active. A deleted session is never active.

use chrono::{DateTime, NaiveDate, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Store, Target, Targets,
    change_log::{self, Action},
    schema::academic_sessions as t,
    table::{school_forms, school_table},
};
use crate::{
    error::{ApiError, ApiResult},
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

school_forms!(t: NewSession, SessionChanges {
    name: String,
    start_date: DateTime<Utc>,
    end_date: DateTime<Utc>,
    is_deleted: bool,
} when_given {
    /// A PUT without it leaves it as it is; decided by [`Sessions`] on create.
    is_active: bool,
});

/// Academic sessions, with their activation rules.
pub struct Sessions;

school_table!(Sessions: AcademicSession in t, new: NewSession, changes: SessionChanges, search: [name],
    soft_delete: is_deleted);

/// Makes `keep` (when given) the only active session: locks the table against concurrent
/// activations, then deactivates every other active session, each with its
/// `academic_session.updated` event.
fn deactivate_others(conn: &mut TenantConn, keep: Option<Uuid>) -> ApiResult<()> {
    diesel::sql_query("LOCK TABLE academic_sessions IN SHARE ROW EXCLUSIVE MODE")
        .execute(conn.pg())?;
    let deactivated: Vec<AcademicSession> = diesel::update(
        t::table
            .filter(t::is_active.eq(true))
            .filter(t::id.ne(keep.unwrap_or_else(Uuid::nil))),
    )
    .set((t::is_active.eq(false), t::updated_at.eq(Utc::now())))
    .returning(AcademicSession::as_returning())
    .get_results(conn.pg())?;
    for session in &deactivated {
        let data = serde_json::to_value(session).map_err(crate::error::ApiError::internal)?;
        change_log::emit(conn, Sessions::NAME, Action::Updated, session.id, &data)?;
    }
    Ok(())
}

/// The activation rules around a write of `is_active` / `is_deleted` to session `id`:
/// deleting deactivates, activating deactivates the others.
fn settle_activation(
    conn: &mut TenantConn,
    id: Uuid,
    is_deleted: Option<bool>,
    is_active: &mut Option<bool>,
) -> ApiResult<()> {
    if is_deleted == Some(true) {
        *is_active = Some(false);
    }
    if *is_active == Some(true) {
        deactivate_others(conn, Some(id))?;
    }
    Ok(())
}

impl Sessions {
    /// The active academic session's id, if one is active.
    pub fn active_id(conn: &mut TenantConn) -> ApiResult<Option<Uuid>> {
        Ok(t::table
            .filter(t::is_active.eq(true))
            .filter(t::is_deleted.eq(false))
            .select(t::id)
            .first(conn.pg())
            .optional()?)
    }

    /// The first and last day (UTC) of the active academic session, if one is active.
    pub fn active_dates(conn: &mut TenantConn) -> ApiResult<Option<(NaiveDate, NaiveDate)>> {
        let row: Option<(DateTime<Utc>, DateTime<Utc>)> = t::table
            .filter(t::is_active.eq(true))
            .filter(t::is_deleted.eq(false))
            .select((t::start_date, t::end_date))
            .first(conn.pg())
            .optional()?;
        Ok(row.map(|(start, end)| (start.date_naive(), end.date_naive())))
    }
}

impl Store for Sessions {
    type Record = AcademicSession;
    const NAME: &'static str = "academic_session";

    fn about_students(
        children: &std::sync::Arc<[uuid::Uuid]>,
    ) -> Option<super::store::Narrowing<Self>> {
        super::family::sessions(children)
    }

    /// A new session becomes the active one, unless it is created deleted: then it is
    /// inactive and the others stay as they are. One session is active: live ones are
    /// created one at a time.
    fn before_create(conn: &mut TenantConn, _: (), news: &mut [NewSession]) -> ApiResult<()> {
        for new in news.iter_mut() {
            new.is_active = Some(!new.is_deleted);
        }
        match news.iter().filter(|new| !new.is_deleted).count() {
            0 => Ok(()),
            1 => deactivate_others(conn, None),
            _ => Err(ApiError::internal(anyhow::anyhow!(
                "live sessions are created one at a time"
            ))),
        }
    }

    fn before_replace(
        conn: &mut TenantConn,
        target: Target<()>,
        new: &mut NewSession,
    ) -> ApiResult<()> {
        settle_activation(conn, target.id, Some(new.is_deleted), &mut new.is_active)
    }

    /// Sessions are updated one at a time (an activation deactivates the others).
    fn before_update(
        conn: &mut TenantConn,
        targets: &Targets<()>,
        changes: &mut SessionChanges,
    ) -> ApiResult<()> {
        let [id] = targets.ids[..] else {
            return Err(ApiError::internal(anyhow::anyhow!(
                "sessions are updated one at a time"
            )));
        };
        settle_activation(conn, id, changes.is_deleted, &mut changes.is_active)
    }
}
