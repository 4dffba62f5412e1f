//! What a school's schema holds, read from PostgreSQL's catalog rather than from the Rust
//! types of the school layer: the tables and columns an archive carries, and the foreign
//! keys and indexes a restore sets aside while it loads rows. Every query reads the schema
//! the connection is bound to (`current_schema()`); the platform tables are named.

use diesel::{
    QueryableByName, RunQueryDsl,
    pg::PgConnection,
    sql_types::{Nullable, Text},
};

use super::format::ArchivedColumn;

/// The table diesel keeps a schema's migration history in; restores rebuild it by migrating.
pub const MIGRATIONS_TABLE: &str = "__diesel_schema_migrations";

/// Derived data an archive leaves out: the kept counts of live rows start at 0 in the
/// schema a restore builds, and its triggers count the rows as they load.
const LIVE_COUNTS_TABLE: &str = "live_counts";

#[derive(QueryableByName)]
struct ColumnRow {
    #[diesel(sql_type = Text)]
    table_name: String,
    #[diesel(sql_type = Text)]
    column_name: String,
    #[diesel(sql_type = Text)]
    sql_type: String,
}

/// A table and its columns, in column order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableShape {
    pub name: String,
    pub columns: Vec<ArchivedColumn>,
}

impl TableShape {
    pub fn column_names(&self) -> Vec<String> {
        self.columns.iter().map(|c| c.name.clone()).collect()
    }
}

/// Columns of ordinary tables in `namespace_sql` (a `regnamespace` expression), generated
/// and dropped columns left out, grouped by table in name order.
fn shapes(
    conn: &mut PgConnection,
    namespace_sql: &str,
    only: Option<&[&str]>,
) -> diesel::QueryResult<Vec<TableShape>> {
    let filter = only.map_or_else(String::new, |names| {
        let list: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
        format!("AND c.relname IN ({})", list.join(", "))
    });
    let rows: Vec<ColumnRow> = diesel::sql_query(format!(
        "SELECT c.relname::text AS table_name, a.attname::text AS column_name, \
                format_type(a.atttypid, a.atttypmod) AS sql_type \
         FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid \
         WHERE c.relnamespace = {namespace_sql} AND c.relkind = 'r' \
           AND c.relname NOT IN ('{MIGRATIONS_TABLE}', '{LIVE_COUNTS_TABLE}') {filter} \
           AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '' \
         ORDER BY c.relname, a.attnum"
    ))
    .load(conn)?;
    let mut tables: Vec<TableShape> = Vec::new();
    for row in rows {
        let column = ArchivedColumn {
            name: row.column_name,
            sql_type: row.sql_type,
        };
        match tables.last_mut() {
            Some(table) if table.name == row.table_name => table.columns.push(column),
            _ => tables.push(TableShape {
                name: row.table_name,
                columns: vec![column],
            }),
        }
    }
    Ok(tables)
}

/// The tables of the school schema the connection is bound to.
pub fn school_tables(conn: &mut PgConnection) -> diesel::QueryResult<Vec<TableShape>> {
    shapes(conn, "current_schema()::regnamespace", None)
}

/// `public.users` and `public.api_keys`, in that order.
pub fn platform_tables(conn: &mut PgConnection) -> diesel::QueryResult<Vec<TableShape>> {
    let mut tables = shapes(conn, "'public'::regnamespace", Some(&["users", "api_keys"]))?;
    tables.sort_by_key(|t| t.name != "users");
    Ok(tables)
}

#[derive(QueryableByName)]
struct VersionRow {
    #[diesel(sql_type = Nullable<Text>)]
    version: Option<String>,
}

/// The latest migration applied to the bound school schema.
pub fn migration_version(conn: &mut PgConnection) -> diesel::QueryResult<Option<String>> {
    let row: VersionRow = diesel::sql_query(format!(
        "SELECT max(version)::text AS version FROM {MIGRATIONS_TABLE}"
    ))
    .get_result(conn)?;
    Ok(row.version)
}

#[derive(QueryableByName)]
struct SequenceRow {
    #[diesel(sql_type = Text)]
    name: String,
}

/// Sequences of the bound schema. School tables are keyed by UUIDs; an archive carries no
/// sequence positions, so an export refuses a schema that has one rather than restore it
/// behind its rows.
pub fn sequences(conn: &mut PgConnection) -> diesel::QueryResult<Vec<String>> {
    let rows: Vec<SequenceRow> = diesel::sql_query(
        "SELECT relname::text AS name FROM pg_class \
         WHERE relnamespace = current_schema()::regnamespace AND relkind = 'S' ORDER BY 1",
    )
    .load(conn)?;
    Ok(rows.into_iter().map(|r| r.name).collect())
}

/// A foreign key or an index of the bound schema, with the statements that remove it and
/// make it again.
#[derive(QueryableByName, Debug, Clone)]
pub struct SetAside {
    #[diesel(sql_type = Text)]
    pub drop_sql: String,
    #[diesel(sql_type = Text)]
    pub create_sql: String,
}

/// The foreign keys between the bound schema's tables: a restore drops them, loads every
/// table, and adds them again (checking every reference then), since tables may refer to
/// each other in a circle (departments and subjects do).
pub fn foreign_keys(conn: &mut PgConnection) -> diesel::QueryResult<Vec<SetAside>> {
    diesel::sql_query(
        "SELECT format('ALTER TABLE %I DROP CONSTRAINT %I', c.relname, con.conname) AS drop_sql, \
                format('ALTER TABLE %I ADD CONSTRAINT %I %s', c.relname, con.conname, \
                       pg_get_constraintdef(con.oid)) AS create_sql \
         FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid \
         WHERE c.relnamespace = current_schema()::regnamespace AND con.contype = 'f' \
         ORDER BY c.relname, con.conname",
    )
    .load(conn)
}

/// The indexes of the bound schema that back no constraint (primary keys and unique
/// constraints stay): built once after the rows are in, which is faster than keeping them
/// up to date row by row.
pub fn plain_indexes(conn: &mut PgConnection) -> diesel::QueryResult<Vec<SetAside>> {
    diesel::sql_query(
        "SELECT format('DROP INDEX %I', i.relname) AS drop_sql, \
                pg_get_indexdef(i.oid) AS create_sql \
         FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid \
              JOIN pg_class t ON t.oid = x.indrelid \
         WHERE t.relnamespace = current_schema()::regnamespace \
           AND NOT EXISTS (SELECT 1 FROM pg_constraint con \
                           WHERE con.conindid = x.indexrelid AND con.contype IN ('p', 'u', 'x')) \
         ORDER BY i.relname",
    )
    .load(conn)
}
