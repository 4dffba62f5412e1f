//! The relays' queue of schools (`public.webhook_pending`): one row per school with
//! something to deliver, made due by its commits (`tenancy::numbering`) and leased by one
//! relay at a time. The school's own side of letting go is `webhook_queue::settle`.

use std::time::Duration;

use diesel::{QueryableByName, RunQueryDsl, pg::PgConnection, sql_types};
use uuid::Uuid;

use crate::{error::ApiResult, tenancy::TenantConn};

#[derive(QueryableByName)]
struct Claimed {
    #[diesel(sql_type = sql_types::Text)]
    schema_name: String,
}

/// Leases the most overdue school nobody works on to `relay` for `lease`, if any: its
/// schema's name.
pub fn claim(conn: &mut PgConnection, relay: Uuid, lease: Duration) -> ApiResult<Option<String>> {
    let claimed: Vec<Claimed> = diesel::sql_query(
        "UPDATE public.webhook_pending p \
            SET leased_until = now() + make_interval(secs => $2), leased_by = $1 \
          WHERE p.schema_name = ( \
                SELECT schema_name FROM public.webhook_pending \
                 WHERE due_at <= now() \
                   AND (leased_until IS NULL OR leased_until < now()) \
                 ORDER BY due_at LIMIT 1 FOR UPDATE SKIP LOCKED) \
         RETURNING p.schema_name",
    )
    .bind::<sql_types::Uuid, _>(relay)
    .bind::<sql_types::Double, _>(lease.as_secs_f64())
    .load(conn)?;
    Ok(claimed.into_iter().next().map(|c| c.schema_name))
}

/// Renews the relay's lease of the school.
pub fn renew_lease(conn: &mut TenantConn, relay: Uuid, lease: Duration) -> ApiResult<()> {
    let schema = conn.tenant().schema_name.to_string();
    diesel::sql_query(
        "UPDATE public.webhook_pending \
            SET leased_until = now() + make_interval(secs => $3) \
          WHERE schema_name = $1 AND leased_by = $2",
    )
    .bind::<sql_types::Text, _>(schema)
    .bind::<sql_types::Uuid, _>(relay)
    .bind::<sql_types::Double, _>(lease.as_secs_f64())
    .execute(conn.pg())?;
    Ok(())
}

/// Gives the school back due at once, if `relay` still holds it (after a failed visit).
pub fn let_go(conn: &mut PgConnection, schema: &str, relay: Uuid) -> ApiResult<()> {
    diesel::sql_query(
        "UPDATE public.webhook_pending \
            SET leased_until = NULL, leased_by = NULL, due_at = now() \
          WHERE schema_name = $1 AND leased_by = $2",
    )
    .bind::<sql_types::Text, _>(schema)
    .bind::<sql_types::Uuid, _>(relay)
    .execute(conn)?;
    Ok(())
}

/// Drops a school that is gone from the queue, with its work.
pub fn forget(conn: &mut PgConnection, schema: &str) -> ApiResult<()> {
    diesel::sql_query("DELETE FROM public.webhook_pending WHERE schema_name = $1")
        .bind::<sql_types::Text, _>(schema)
        .execute(conn)?;
    Ok(())
}
