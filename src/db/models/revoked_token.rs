//! Refresh tokens that were rotated or logged out, kept until they would have expired.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use uuid::Uuid;

use crate::db::schema_public::revoked_tokens;

/// Revokes `jti`. Returns false when it was already revoked: the caller lost a race with
/// another use of the same token and must refuse it.
pub fn revoke(conn: &mut PgConnection, jti: Uuid, expires_at: DateTime<Utc>) -> QueryResult<bool> {
    let inserted = diesel::insert_into(revoked_tokens::table)
        .values((
            revoked_tokens::jti.eq(jti),
            revoked_tokens::expires_at.eq(expires_at),
        ))
        .on_conflict_do_nothing()
        .execute(conn)?;
    Ok(inserted == 1)
}

pub fn is_revoked(conn: &mut PgConnection, jti: Uuid) -> QueryResult<bool> {
    diesel::select(diesel::dsl::exists(revoked_tokens::table.find(jti))).get_result(conn)
}

/// Drops entries whose token has expired anyway.
pub fn purge_expired(conn: &mut PgConnection) -> QueryResult<usize> {
    diesel::delete(revoked_tokens::table.filter(revoked_tokens::expires_at.lt(Utc::now())))
        .execute(conn)
}
