//! Ordered link tables (a department's teachers, a guardian's students): an owner's list of
//! members kept with each one's position, replaced whole on every write.

use diesel::{
    prelude::*,
    sql_types::{Array, Uuid as SqlUuid},
};
use uuid::Uuid;

use crate::{error::ApiResult, tenancy::TenantConn};

/// A link table: its name and its owner and member columns (fixed names, never input).
pub struct LinkTable {
    pub table: &'static str,
    pub owner: &'static str,
    pub member: &'static str,
}

impl LinkTable {
    /// Replaces `owner`'s members with `members`, positions in this order: two statements
    /// however many members.
    pub fn replace(&self, conn: &mut TenantConn, owner: Uuid, members: &[Uuid]) -> ApiResult<()> {
        let LinkTable {
            table,
            owner: owner_column,
            member,
        } = self;
        diesel::sql_query(format!("DELETE FROM {table} WHERE {owner_column} = $1"))
            .bind::<SqlUuid, _>(owner)
            .execute(conn.pg())?;
        diesel::sql_query(format!(
            "INSERT INTO {table} ({owner_column}, {member}, position) \
             SELECT $1, linked.id, (linked.n - 1)::int \
             FROM unnest($2) WITH ORDINALITY AS linked(id, n)"
        ))
        .bind::<SqlUuid, _>(owner)
        .bind::<Array<SqlUuid>, _>(members)
        .execute(conn.pg())?;
        Ok(())
    }
}
