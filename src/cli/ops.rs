//! What an operator's command works with: the configuration and a pool that connects on
//! first use. No server state: a command opens no tenant directory, starts no metrics
//! recorder or background thread, and hashes a password only when it creates an account.

use crate::{
    auth::{
        accounts::{self, NewAccount},
        password,
    },
    config::Config,
    db::{Db, models::TenantRow, models::User},
    tenancy::{Tenant, TenantRef},
};

pub(super) struct Ops {
    pub config: Config,
    pub db: Db,
}

/// An account to create from the command line, checked by the rules the system API holds
/// accounts to (`auth::accounts`).
pub(super) struct CliAccount<'a> {
    pub email: Option<&'a str>,
    pub phone: Option<&'a str>,
    pub password: &'a str,
    pub first_name: &'a str,
    pub last_name: &'a str,
    /// The user's school; `None` for a platform user.
    pub school: Option<TenantRef>,
    pub roles: Vec<String>,
    pub superuser: bool,
    pub teacher: bool,
}

impl Ops {
    pub fn open(mut config: Config) -> Self {
        // Operators' commands (migrations above all) may run long statements.
        config.db_statement_timeout = None;
        crate::school::change_log::set_retention_days(config.events.retention_days);
        crate::school::change_log::set_history_writes(config.events.history_writes);
        let db = Db::open(config.database_url.expose(), &config.pool_settings());
        Self { config, db }
    }

    /// The school with this schema name: one query, no directory.
    pub async fn school(&self, schema: &str) -> anyhow::Result<TenantRef> {
        self.find_school(schema)
            .await?
            .ok_or_else(|| anyhow::anyhow!("no school has the schema name '{schema}'"))
    }

    /// The school with this schema name, if there is one (a command that creates it when
    /// missing).
    pub async fn find_school(&self, schema: &str) -> anyhow::Result<Option<TenantRef>> {
        let db = self.db.clone();
        let name = schema.to_owned();
        let row =
            blocking(move || db.with_conn(|conn| Ok(TenantRow::find_by_schema(conn, &name)?)))
                .await?;
        Ok(row
            .map(|row| Tenant::try_from(&row))
            .transpose()?
            .map(TenantRef::new))
    }

    /// bcrypt at `BCRYPT_COST`, off the executor.
    pub async fn hash(&self, password: &str) -> anyhow::Result<String> {
        let (password, cost) = (password.to_owned(), self.config.bcrypt_cost);
        blocking(move || password::hash(&password, cost)).await
    }

    /// Checks and creates an account; a conflict is `ApiError::Conflict` inside the error.
    pub async fn create_account(&self, spec: CliAccount<'_>) -> anyhow::Result<User> {
        let email = spec.email.map(str::trim).filter(|e| !e.is_empty());
        if let Some(email) = email {
            accounts::check_email(email).map_err(|m| anyhow::anyhow!("--email: {m}"))?;
        }
        let phone = spec
            .phone
            .map(|raw| accounts::phone_number(raw).map_err(|m| anyhow::anyhow!("--phone: {m}")))
            .transpose()?;
        if email.is_none() && phone.is_none() {
            anyhow::bail!("give an --email or a --phone");
        }
        accounts::check_password(spec.password).map_err(|m| anyhow::anyhow!("--password: {m}"))?;
        for (flag, name) in [
            ("--first-name", spec.first_name),
            ("--last-name", spec.last_name),
        ] {
            if name.trim().chars().count() > 150 {
                anyhow::bail!("{flag}: ensure this field has at most 150 characters");
            }
        }
        let account = NewAccount {
            email: email.map(str::to_owned),
            phone,
            password_hash: self.hash(spec.password).await?,
            first_name: spec.first_name.trim().to_owned(),
            last_name: spec.last_name.trim().to_owned(),
            school: spec.school,
            roles: spec.roles,
            is_staff: spec.superuser,
            is_superuser: spec.superuser,
            teacher: spec.teacher,
        };
        let db = self.db.clone();
        blocking(move || accounts::create(&db, account)).await
    }
}

/// Runs blocking work (diesel, bcrypt, files) off the async executor: the command line's
/// one way to wait for it. The work's own error is the line `main` prints.
pub(super) async fn blocking<T, E>(
    work: impl FnOnce() -> Result<T, E> + Send + 'static,
) -> anyhow::Result<T>
where
    T: Send + 'static,
    E: Into<anyhow::Error> + Send + 'static,
{
    crate::db::blocking(work).await?.map_err(Into::into)
}
