//! What an import would collide with: the school's id, schema and domains, and its users
//! and API keys, staged first in temporary tables (`pg_temp.archive_<table>`) so that
//! every clash is found by a query and listed, not only the first a write would hit.

use diesel::{
    QueryableByName, RunQueryDsl,
    pg::PgConnection,
    sql_types::{Array, Text, Uuid as SqlUuid},
};
use uuid::Uuid;

use super::copy::quote_ident;

#[derive(QueryableByName)]
struct Found {
    #[diesel(sql_type = Text)]
    value: String,
}

/// The staging table of platform table `table`.
pub fn staging_table(table: &str) -> String {
    format!("pg_temp.{}", quote_ident(&format!("archive_{table}")))
}

/// Creates the (empty) staging table of `public.<table>`, dropped when the transaction ends.
pub fn create_staging(conn: &mut PgConnection, table: &str) -> diesel::QueryResult<()> {
    diesel::sql_query(format!(
        "CREATE TEMP TABLE {} (LIKE public.{} INCLUDING DEFAULTS) ON COMMIT DROP",
        staging_table(table),
        quote_ident(table)
    ))
    .execute(conn)?;
    Ok(())
}

/// Every clash of the school about to be written with what the database holds.
pub fn find(
    conn: &mut PgConnection,
    tenant_id: Uuid,
    schema: &str,
    domains: &[String],
) -> diesel::QueryResult<Vec<String>> {
    let mut clashes = Vec::new();
    let mut add = |query: diesel::query_builder::BoxedSqlQuery<'_, diesel::pg::Pg, _>,
                   describe: &dyn Fn(String) -> String|
     -> diesel::QueryResult<()> {
        let found: Vec<Found> = query.load(conn)?;
        clashes.extend(found.into_iter().map(|f| describe(f.value)));
        Ok(())
    };
    add(
        diesel::sql_query("SELECT schema_name AS value FROM public.tenants WHERE id = $1")
            .into_boxed()
            .bind::<SqlUuid, _>(tenant_id),
        &|existing| format!("school id {tenant_id} exists (schema {existing})"),
    )?;
    add(
        diesel::sql_query(
            "SELECT nspname::text AS value FROM pg_namespace WHERE nspname = $1 \
             UNION SELECT schema_name FROM public.tenants WHERE schema_name = $1",
        )
        .into_boxed()
        .bind::<Text, _>(schema),
        &|name| format!("schema {name} exists"),
    )?;
    add(
        diesel::sql_query(
            "SELECT domain::text AS value FROM public.domains WHERE domain = ANY($1) ORDER BY 1",
        )
        .into_boxed()
        .bind::<Array<Text>, _>(domains),
        &|domain| format!("domain {domain} is registered"),
    )?;
    let users = staging_table("users");
    let keys = staging_table("api_keys");
    let staged: [(String, &dyn Fn(String) -> String); 4] = [
        (
            format!(
                "SELECT a.id::text AS value FROM {users} a JOIN public.users u ON u.id = a.id ORDER BY 1"
            ),
            &|id| format!("user id {id} exists"),
        ),
        (
            format!(
                "SELECT a.email::text AS value FROM {users} a \
                 JOIN public.users u ON lower(u.email) = lower(a.email) ORDER BY 1"
            ),
            &|email| format!("e-mail {email} is taken"),
        ),
        (
            format!(
                "SELECT a.phone::text AS value FROM {users} a \
                 JOIN public.users u ON u.phone = a.phone ORDER BY 1"
            ),
            &|phone| format!("phone {phone} is taken"),
        ),
        (
            format!(
                "SELECT a.name || ' (' || a.id || ')' AS value FROM {keys} a \
                 JOIN public.api_keys k ON k.id = a.id OR k.key_hash = a.key_hash ORDER BY 1"
            ),
            &|key| format!("API key {key} exists"),
        ),
    ];
    for (sql, describe) in staged {
        add(diesel::sql_query(sql).into_boxed(), describe)?;
    }
    Ok(clashes)
}

/// Moves the staged rows of `table` into `public.<table>` (`columns`: the archive's), once
/// `platform_rows` has checked them.
pub fn insert_staged(
    conn: &mut PgConnection,
    table: &str,
    columns: &[String],
) -> diesel::QueryResult<usize> {
    let staging = staging_table(table);
    let list: Vec<String> = columns.iter().map(|c| quote_ident(c)).collect();
    let list = list.join(", ");
    diesel::sql_query(format!(
        "INSERT INTO public.{} ({list}) SELECT {list} FROM {staging}",
        quote_ident(table)
    ))
    .execute(conn)
}
