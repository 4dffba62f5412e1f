//! An archive brings rows of platform tables (`public.users`, `public.api_keys`) along
//! with its school, and whoever can hand an operator an archive could write anything into
//! them: a platform superuser, a key for every school, a user of another school. So every
//! staged row is checked against the school being imported before anything lands, and the
//! first row that is not the school's own is named in the refusal:
//!
//! - users: `client_id` is the school's id, and neither `is_superuser` nor `is_staff`;
//! - API keys: `tenant_id` is the school's id (never empty: a key without one is global);
//!   a key's `created_by` that is not a user of the archive is written empty, so a key
//!   never names a user outside its school (a platform administrator who made it, say).
//!
//! A platform table added to archives later must be added here too: one whose owner column
//! is not known is refused.

use diesel::{
    QueryableByName, RunQueryDsl,
    pg::PgConnection,
    sql_types::{Text, Uuid as SqlUuid},
};
use uuid::Uuid;

use super::{ArchiveError, clashes::staging_table};

#[derive(QueryableByName)]
struct Offender {
    #[diesel(sql_type = Text)]
    which: String,
    #[diesel(sql_type = Text)]
    reason: String,
}

/// The first staged row of `table` that is not the school's own, described: the checks of
/// the module docs as one query per table (`$1`: the school's id).
fn offender_sql(table: &str) -> Option<String> {
    let staged = staging_table(table);
    let sql = match table {
        "users" => format!(
            "SELECT format('user %s (%s)', id, coalesce(email, phone, 'no e-mail or phone')) \
                    AS which, \
                    CASE WHEN client_id IS NULL THEN 'belongs to no school (a platform user)' \
                         WHEN client_id <> $1 THEN format('belongs to another school (%s)', \
                                                          client_id) \
                         WHEN is_superuser THEN 'is a platform superuser' \
                         ELSE 'is platform staff' END AS reason \
             FROM {staged} \
             WHERE client_id IS DISTINCT FROM $1 OR is_superuser OR is_staff \
             ORDER BY id LIMIT 1"
        ),
        "api_keys" => format!(
            "SELECT format('API key ''%s'' (%s)', name, id) AS which, \
                    CASE WHEN tenant_id IS NULL THEN 'is not scoped to a school (a global key)' \
                         ELSE format('is scoped to another school (%s)', tenant_id) END \
                    AS reason \
             FROM {staged} WHERE tenant_id IS DISTINCT FROM $1 ORDER BY id LIMIT 1"
        ),
        _ => return None,
    };
    Some(sql)
}

/// Refuses the import when a staged row of `tables` is not school `school`'s own (see the
/// module docs), naming the row; then empties the creators of API keys that are not users
/// of the archive.
pub fn check_staged(
    conn: &mut PgConnection,
    school: Uuid,
    tables: &[&str],
) -> Result<(), ArchiveError> {
    for table in tables {
        let sql = offender_sql(table).ok_or_else(|| {
            ArchiveError::ForeignRow(format!(
                "the archive holds rows of public.{table}, which an import does not know how \
                 to check"
            ))
        })?;
        let found: Vec<Offender> = diesel::sql_query(sql)
            .bind::<SqlUuid, _>(school)
            .load(conn)?;
        if let Some(offender) = found.into_iter().next() {
            return Err(ArchiveError::ForeignRow(format!(
                "the archive's {} {}, and an archive may bring only the school's own users \
                 and API keys",
                offender.which, offender.reason
            )));
        }
    }
    if tables.contains(&"api_keys") {
        let keys = staging_table("api_keys");
        let users = staging_table("users");
        let users_of_archive = if tables.contains(&"users") {
            format!("SELECT id FROM {users}")
        } else {
            "SELECT NULL::uuid WHERE false".to_owned()
        };
        diesel::sql_query(format!(
            "UPDATE {keys} SET created_by = NULL WHERE created_by IS NOT NULL \
             AND created_by NOT IN ({users_of_archive})"
        ))
        .execute(conn)?;
    }
    Ok(())
}
