//! School-schema migrations as embedded SQL, run statement by statement.
//!
//! Each folder of `tenant_migrations/` is one migration; its version is the one diesel
//! derives from the folder name (`2026-11-21-000001_school` → `20261121000001`) and is
//! recorded in the school's own `__diesel_schema_migrations`, so schools migrated by
//! diesel's harness before keep their history. `tenancy::school_migrations` runs them for
//! `migrate` (one transaction per school, the failing version reported); they are also a
//! diesel `MigrationSource` (for `tenancy::archive`, which restores a school at an older
//! version step by step).
//!
//! Statements are split here and sent one at a time: Citus refuses a multi-statement string
//! on a distributed schema (it forwards DDL to the worker as a prepared statement: "cannot
//! insert multiple commands into a prepared statement").

use std::fmt;

use diesel::{
    backend::Backend,
    connection::BoxableConnection,
    migration::{
        self, Migration, MigrationMetadata, MigrationName, MigrationSource, MigrationVersion,
    },
    pg::Pg,
};

/// One migration folder: its name and SQL, embedded at build time.
pub struct SqlMigration {
    folder: &'static str,
    up: &'static str,
    down: &'static str,
}

/// `sql_migration!("2026-11-21-000001_school")` embeds `tenant_migrations/<folder>/`.
macro_rules! sql_migration {
    ($folder:literal) => {
        $crate::db::sql_migrations::SqlMigration::new(
            $folder,
            include_str!(concat!("../../tenant_migrations/", $folder, "/up.sql")),
            include_str!(concat!("../../tenant_migrations/", $folder, "/down.sql")),
        )
    };
}
pub(crate) use sql_migration;

impl SqlMigration {
    pub const fn new(folder: &'static str, up: &'static str, down: &'static str) -> Self {
        Self { folder, up, down }
    }

    pub fn folder(&self) -> &'static str {
        self.folder
    }

    /// The version diesel derives from the folder name: its date and number, digits only.
    pub fn version(&self) -> String {
        version_of(self.folder)
    }

    /// The statements of `up.sql`, in order.
    pub fn statements(&self) -> Vec<&'static str> {
        split_statements(self.up)
    }
}

fn version_of(folder: &str) -> String {
    folder.split('_').next().unwrap_or(folder).replace('-', "")
}

/// A list of migrations, in order.
#[derive(Clone, Copy)]
pub struct SqlMigrations(pub &'static [SqlMigration]);

impl SqlMigrations {
    pub fn iter(&self) -> impl Iterator<Item = &'static SqlMigration> {
        self.0.iter()
    }

    /// The migrations whose versions are not in `applied`, in order.
    pub fn pending<'a>(
        &self,
        applied: &'a [String],
    ) -> impl Iterator<Item = &'static SqlMigration> + 'a {
        self.0
            .iter()
            .filter(move |m| !applied.iter().any(|v| *v == m.version()))
    }
}

/// The current school schema as one script (`tenant_migrations/baseline.sql`), which new
/// schools are created from: the same schema as replaying every migration through
/// `through` (a test compares the two catalogs).
pub struct TenantBaseline {
    pub sql: &'static str,
    /// The folder of the last migration the script contains.
    pub through: &'static str,
}

impl TenantBaseline {
    /// The versions the script stands for: those of `history` up to `through`; `None`
    /// when `through` names no migration of `history`.
    pub fn versions(&self, history: &SqlMigrations) -> Option<Vec<String>> {
        let mut versions = Vec::new();
        for migration in history.iter() {
            versions.push(migration.version());
            if migration.folder() == self.through {
                return Some(versions);
            }
        }
        None
    }
}

impl MigrationSource<Pg> for SqlMigrations {
    fn migrations(&self) -> migration::Result<Vec<Box<dyn Migration<Pg>>>> {
        Ok(self
            .0
            .iter()
            .map(|m| {
                Box::new(StepMigration {
                    sql: m,
                    name: Name(m.folder),
                }) as Box<dyn Migration<Pg>>
            })
            .collect())
    }
}

struct StepMigration {
    sql: &'static SqlMigration,
    name: Name,
}

/// `2026-11-21-000001_school` → `20261121000001`, as diesel names it.
struct Name(&'static str);

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl MigrationName for Name {
    fn version(&self) -> MigrationVersion<'_> {
        MigrationVersion::from(version_of(self.0))
    }
}

struct InTransaction;

impl MigrationMetadata for InTransaction {}

fn run_each<DB: Backend>(conn: &mut dyn BoxableConnection<DB>, sql: &str) -> migration::Result<()> {
    for statement in split_statements(sql) {
        conn.batch_execute(statement)?;
    }
    Ok(())
}

impl Migration<Pg> for StepMigration {
    fn run(&self, conn: &mut dyn BoxableConnection<Pg>) -> migration::Result<()> {
        run_each(conn, self.sql.up)
    }

    fn revert(&self, conn: &mut dyn BoxableConnection<Pg>) -> migration::Result<()> {
        run_each(conn, self.sql.down)
    }

    fn metadata(&self) -> &dyn MigrationMetadata {
        &InTransaction
    }

    fn name(&self) -> &dyn MigrationName {
        &self.name
    }
}

/// Splits SQL into statements at the top-level `;`: not inside quotes, quoted names,
/// dollar-quoted bodies or comments. Blank statements (comments only) are dropped.
pub fn split_statements(sql: &str) -> Vec<&str> {
    let bytes = sql.as_bytes();
    let mut statements = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        match bytes[i] {
            b'\'' | b'"' => {
                let quote = bytes[i];
                i += 1;
                while i < bytes.len() && bytes[i] != quote {
                    i += 1;
                }
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < bytes.len() && !(bytes[i] == b'*' && bytes[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b'$' => {
                // `$tag$ ... $tag$` (the tag may be empty); a `$1` parameter is no quote.
                let tag_end = sql[i + 1..]
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .map(|n| i + 1 + n);
                if let Some(end) = tag_end.filter(|&e| bytes[e] == b'$')
                    && !bytes.get(i + 1).is_some_and(u8::is_ascii_digit)
                {
                    let tag = &sql[i..=end];
                    i = match sql[end + 1..].find(tag) {
                        Some(close) => end + 1 + close + tag.len() - 1,
                        None => bytes.len(),
                    };
                }
            }
            b';' => {
                statements.push(&sql[start..=i]);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    statements.push(&sql[start.min(sql.len())..]);
    statements
        .into_iter()
        .filter(|s| has_code(s))
        .map(str::trim)
        .collect()
}

/// Whether a piece of SQL holds anything but white space and comments.
fn has_code(sql: &str) -> bool {
    sql.lines().any(|line| {
        let code = line.split("--").next().unwrap_or("").trim();
        !code.is_empty() && code != ";"
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_top_level_semicolons_only() {
        let sql = "-- header; with a semicolon\nCREATE TABLE a (x text DEFAULT 'a;b');\n\
                   CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n  \
                   PERFORM pg_notify('c', 'd;e');\n  RETURN NULL;\nEND\n$$;\n\
                   /* block; comment */ CREATE INDEX \"i;x\" ON a (x);\n-- trailing comment\n";
        let statements = split_statements(sql);
        assert_eq!(statements.len(), 3, "{statements:#?}");
        assert!(statements[0].ends_with("DEFAULT 'a;b');"));
        assert!(statements[1].contains("RETURN NULL;") && statements[1].ends_with("$$;"));
        assert!(statements[2].contains("\"i;x\""));
    }

    #[test]
    fn tagged_dollar_quotes_and_parameters() {
        let sql = "SELECT $1; DO $body$ BEGIN PERFORM 1; END $body$; SELECT 2";
        assert_eq!(
            split_statements(sql),
            vec![
                "SELECT $1;",
                "DO $body$ BEGIN PERFORM 1; END $body$;",
                "SELECT 2"
            ]
        );
    }

    #[test]
    fn versions_are_diesels() {
        assert_eq!(version_of("2026-11-21-000001_school"), "20261121000001");
    }
}
