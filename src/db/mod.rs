//! Database access: the pool, migrations, the platform tables' diesel schema (`public`;
//! the school tables' is `school::schema`), platform models and the change listener.

pub mod affinity;
pub mod commit_watch;
mod lanes;
pub mod migrations;
pub mod models;
pub mod notify;
pub mod page;
pub mod pool;
pub mod recycle;
pub mod schema_name;
pub mod schema_public;
pub mod slots;
pub mod sql_migrations;

pub use pool::Db;

use diesel::{define_sql_function, sql_types::Text};

use crate::error::{ApiError, ApiResult};

/// Runs blocking work (diesel, bcrypt, files) on the runtime's blocking threads, never on
/// the async executor's: the one way async code here waits for synchronous work.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> ApiResult<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|err| ApiError::internal(anyhow::anyhow!("blocking task failed: {err}")))
}

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
