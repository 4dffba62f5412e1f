//! `COPY` for tables named at run time.
//!
//! diesel's `copy_to`/`copy_from` name their table through `CopyTarget`, whose SQL comes
//! from the table's type, fixed at compile time. An archive reads a school's tables from
//! the catalog instead, so that a table added by a tenant migration is exported without a
//! code change. [`RuntimeTarget`] is a `CopyTarget` whose SQL is the text set for the one
//! statement being built, on this thread, by [`copy_out`] or [`copy_in`]; diesel builds a
//! statement on the calling thread, and a `COPY` statement is never cached (diesel marks it
//! unsafe to cache), so each one gets its own text.

use std::{cell::RefCell, io::BufRead};

use diesel::{
    ExecuteCopyFromDsl, QueryResult,
    connection::SimpleConnection,
    pg::{CopyFormat, CopyTarget, Pg, PgConnection},
    query_builder::AstPass,
    result::Error,
};

diesel::table! {
    /// Never queried: the table type `RuntimeTarget` must name for diesel's bounds.
    archive_runtime_target (id) {
        id -> Integer,
    }
}

thread_local! {
    static TARGET_SQL: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// The target of a `COPY` whose text is chosen at run time (see the module docs).
struct RuntimeTarget;

impl CopyTarget for RuntimeTarget {
    type Table = archive_runtime_target::table;
    type SqlType = diesel::sql_types::Integer;

    fn walk_target(mut pass: AstPass<'_, '_, Pg>) -> QueryResult<()> {
        TARGET_SQL.with(|sql| match sql.borrow().as_deref() {
            Some(sql) => {
                pass.push_sql(sql);
                Ok(())
            }
            None => Err(Error::QueryBuilderError(
                "a COPY target is built outside copy_out/copy_in".into(),
            )),
        })
    }
}

/// Sets the target text for the statements built by `build`, and clears it after.
fn with_target<T>(target: &str, build: impl FnOnce() -> T) -> T {
    TARGET_SQL.with(|sql| *sql.borrow_mut() = Some(target.to_owned()));
    let built = build();
    TARGET_SQL.with(|sql| *sql.borrow_mut() = None);
    built
}

/// `COPY <target> TO STDOUT` in text format: `target` is `"table" ("a", "b")` or a
/// parenthesised query. `read` gets the rows as they arrive, one line each, and must read
/// them to the end.
///
/// diesel leaves the `COPY`'s closing result unread after the last row, and its next
/// prepared statement would fail ("another command is already in progress"); a plain
/// statement sent through `batch_execute` (libpq's `PQexec`, which first discards the
/// finished command's result) collects it. A `read` that fails leaves the connection
/// inside the `COPY`: its unit of work cannot roll back, and the pool discards it.
pub fn copy_out<T, E: From<Error>>(
    conn: &mut PgConnection,
    target: &str,
    read: impl FnOnce(&mut dyn BufRead) -> Result<T, E>,
) -> Result<T, E> {
    let value = {
        let mut rows = with_target(target, || {
            diesel::copy_to(RuntimeTarget)
                .with_format(CopyFormat::Text)
                .load_raw(conn)
        })?;
        read(&mut rows)?
    };
    conn.batch_execute("SELECT 1")?;
    Ok(value)
}

/// `COPY <target> FROM STDIN` in text format, fed by `feed` (which writes whole rows).
/// Answers the number of rows written.
pub fn copy_in(
    conn: &mut PgConnection,
    target: &str,
    feed: impl Fn(&mut dyn std::io::Write) -> Result<(), Error>,
) -> QueryResult<usize> {
    with_target(target, || {
        diesel::copy_from(archive_runtime_target::table)
            .from_raw_data(RuntimeTarget, feed)
            .with_format(CopyFormat::Text)
            .execute(conn)
    })
}

/// `"name"`: an identifier quoted for SQL.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `"table" ("a", "b")`: a table and its columns, for `COPY`.
pub fn table_target(qualifier: Option<&str>, table: &str, columns: &[String]) -> String {
    let columns: Vec<String> = columns.iter().map(|c| quote_ident(c)).collect();
    let table = match qualifier {
        Some(schema) => format!("{}.{}", quote_ident(schema), quote_ident(table)),
        None => quote_ident(table),
    };
    format!("{table} ({})", columns.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_quote_every_name() {
        assert_eq!(
            table_target(None, "marks", &["id".into(), "we\"ird".into()]),
            r#""marks" ("id", "we""ird")"#
        );
        assert_eq!(
            table_target(Some("public"), "users", &["id".into()]),
            r#""public"."users" ("id")"#
        );
    }
}
