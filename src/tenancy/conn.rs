//! `TenantConn`: the only way to get a connection for school queries, and it is always
//! bound to one school's schema.
//!
//! Every query function over school tables takes `&mut TenantConn`, never a bare
//! `PgConnection`, and the only constructor sets `search_path` (or checks the pooled
//! connection is already set to that schema). So a school query cannot run against another
//! school's schema, or against none.

use diesel::{
    connection::{AnsiTransactionManager, TransactionManager},
    pg::PgConnection,
    prelude::*,
};

use crate::{
    db::{models::User, pool::PooledConn, schema_public::users},
    error::ApiResult,
    tenancy::{Tenant, TenantRef},
};

diesel::define_sql_function! {
    /// PostgreSQL `set_config(setting, value, is_local)`.
    fn set_config(setting: diesel::sql_types::Text, value: diesel::sql_types::Text, is_local: diesel::sql_types::Bool) -> diesel::sql_types::Text;
}

pub struct TenantConn {
    pooled: PooledConn,
    tenant: TenantRef,
}

impl TenantConn {
    /// Binds a pooled connection to `tenant`. The `SET` runs outside any transaction, so
    /// no rollback can undo it; the remembered schema is cleared first, so a failed `SET`
    /// leaves the connection unbound rather than wrongly marked.
    pub(crate) fn bind(mut pooled: PooledConn, tenant: TenantRef) -> ApiResult<Self> {
        if pooled.bound_schema.as_ref() != Some(&tenant.schema_name) {
            pooled.bound_schema = None;
            diesel::sql_query(format!(
                "SET search_path TO {}",
                tenant.schema_name.quoted()
            ))
            .execute(&mut pooled.conn)?;
            pooled.bound_schema = Some(tenant.schema_name.clone());
        }
        Ok(Self { pooled, tenant })
    }

    /// Binds like `bind`, and loads the user `user_id` (from `public.users`) on the way. A
    /// connection that must be rebound sets its search_path inside the user query itself
    /// (`set_config`), so rebinding costs no extra round trip; that query reads only
    /// `public.*`, so it does not depend on the path it changes. Rows in, path set: when no
    /// user matches, `set_config` did not run and a plain `bind` follows.
    pub(crate) fn bind_loading_user(
        mut pooled: PooledConn,
        tenant: TenantRef,
        user_id: uuid::Uuid,
    ) -> ApiResult<(Self, Option<User>)> {
        if pooled.bound_schema.as_ref() == Some(&tenant.schema_name) {
            let user = User::find(&mut pooled.conn, user_id)?;
            return Ok((Self { pooled, tenant }, user));
        }
        pooled.bound_schema = None;
        let row: Option<(String, User)> = users::table
            .filter(users::id.eq(user_id))
            .select((
                set_config("search_path", tenant.schema_name.quoted(), false),
                User::as_select(),
            ))
            .first(&mut pooled.conn)
            .optional()?;
        match row {
            Some((_, user)) => {
                pooled.bound_schema = Some(tenant.schema_name.clone());
                Ok((Self { pooled, tenant }, Some(user)))
            }
            None => Ok((Self::bind(pooled, tenant)?, None)),
        }
    }

    pub fn tenant(&self) -> &Tenant {
        &self.tenant
    }

    /// The underlying connection, for running diesel queries. Its `search_path` is this
    /// tenant's schema; platform tables are schema-qualified (`public.*`) and work too.
    pub fn pg(&mut self) -> &mut PgConnection {
        &mut self.pooled.conn
    }

    pub(crate) fn pooled_mut(&mut self) -> &mut PooledConn {
        &mut self.pooled
    }

    /// Runs `work` in a transaction (a savepoint when one is already open), keeping the
    /// bound connection type, so query functions compose.
    pub fn transaction<T, E>(
        &mut self,
        work: impl FnOnce(&mut TenantConn) -> Result<T, E>,
    ) -> Result<T, E>
    where
        E: From<diesel::result::Error>,
    {
        AnsiTransactionManager::begin_transaction(self.pg())?;
        match work(self) {
            Ok(value) => {
                AnsiTransactionManager::commit_transaction(self.pg())?;
                Ok(value)
            }
            Err(err) => match AnsiTransactionManager::rollback_transaction(self.pg()) {
                // The original error is the one worth reporting.
                Ok(()) | Err(diesel::result::Error::BrokenTransactionManager) => Err(err),
                Err(rollback_err) => Err(rollback_err.into()),
            },
        }
    }
}
