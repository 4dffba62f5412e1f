//! Database access: the pool, migrations, the two diesel schemas (platform tables in
//! `public`, school tables in each school's schema) and the query functions on them.

pub mod affinity;
pub mod migrations;
pub mod models;
pub mod notify;
pub mod pool;
pub mod recycle;
pub mod schema_name;
pub mod schema_public;
pub mod slots;
pub mod sql_migrations;

pub use pool::Db;

use diesel::{define_sql_function, sql_types::Text};

define_sql_function! {
    /// SQL `lower(text)`.
    fn lower(x: Text) -> Text;
}

/// Escapes `%`, `_` and `\` so user text matches literally inside an `ILIKE` pattern.
pub fn like_pattern(needle: &str) -> String {
    let mut pattern = String::with_capacity(needle.len() + 2);
    pattern.push('%');
    for c in needle.chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}
