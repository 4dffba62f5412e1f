//! Creating and dropping schools.

use std::sync::Arc;

use diesel::{pg::PgConnection, prelude::*};
use uuid::Uuid;

use crate::{
    db::{
        Db,
        models::{DomainRow, NewDomain, TenantRow, tenant::normalize_domain},
        schema_public::tenants,
    },
    error::{ApiError, ApiResult, FieldErrors},
    tenancy::{
        SchemaName, Tenant, TenantRef,
        school_migrations::{DdlDelivery, SchoolSeed, create_school_schema},
    },
};

#[derive(Debug, Clone)]
pub struct NewTenant {
    pub schema_name: SchemaName,
    pub name: String,
    pub domains: Vec<String>,
}

impl NewTenant {
    /// Validates raw input into a `NewTenant`, reporting every bad field at once.
    pub fn parse(schema_name: &str, name: &str, domains: &[String]) -> ApiResult<Self> {
        let mut errors = FieldErrors::new();
        let schema = SchemaName::parse(schema_name)
            .map_err(|err| errors.add("schema_name", err.to_string()))
            .ok();
        let name = name.trim();
        if name.is_empty() || name.chars().count() > 255 {
            errors.add("name", "must be 1-255 characters");
        }
        let mut normalized = Vec::with_capacity(domains.len());
        for raw in domains {
            match normalize_domain(raw) {
                Some(domain) if !normalized.contains(&domain) => normalized.push(domain),
                Some(domain) => errors.add("domains", format!("'{domain}' is listed twice")),
                None => errors.add("domains", format!("'{raw}' is not a valid host name")),
            }
        }
        errors.into_result(())?;
        Ok(Self {
            schema_name: schema.ok_or_else(|| ApiError::validation("schema_name", "invalid"))?,
            name: name.to_owned(),
            domains: normalized,
        })
    }
}

#[derive(QueryableByName)]
struct Target {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    schema_taken: bool,
    #[diesel(sql_type = diesel::sql_types::Bool)]
    on_citus: bool,
}

/// Whether `schema` exists already, and whether the database is a Citus coordinator (which
/// takes DDL one statement at a time), in one round trip.
fn probe(conn: &mut PgConnection, schema: &SchemaName) -> QueryResult<Target> {
    diesel::sql_query(format!(
        "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = '{}') AS schema_taken, \
                EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS on_citus",
        schema.as_str()
    ))
    .get_result(conn)
}

/// Creates the school: registry row, domains, schema at the current version (from the
/// baseline, see `school_migrations`) and default roles, in one transaction, so a failure
/// leaves nothing behind.
pub fn create_tenant(db: &Db, new: &NewTenant, seed: SchoolSeed) -> ApiResult<TenantRow> {
    let tenant: TenantRef = Arc::new(Tenant {
        id: Uuid::new_v4(),
        schema_name: new.schema_name.clone(),
        name: new.name.clone(),
        is_active: true,
    });
    // Binding names a schema that does not exist yet: PostgreSQL allows that, and the SET
    // stays outside the transaction below, so a rollback cannot undo it behind our back.
    let row = db.with_tenant(&tenant, |conn| {
        conn.transaction(|conn| {
            let target = probe(conn.pg(), &tenant.schema_name)?;
            if target.schema_taken {
                return Err(ApiError::Conflict(format!(
                    "schema '{}' already exists",
                    tenant.schema_name
                )));
            }
            let row: TenantRow = diesel::insert_into(tenants::table)
                .values((
                    tenants::id.eq(tenant.id),
                    tenants::schema_name.eq(tenant.schema_name.as_str()),
                    tenants::name.eq(&tenant.name),
                ))
                .returning(TenantRow::as_returning())
                .get_result(conn.pg())
                .map_err(|err| conflict_as(err, "a school with this schema name already exists"))?;
            for domain in &new.domains {
                let new = NewDomain {
                    domain: domain.clone(),
                    is_primary: false,
                };
                DomainRow::add(conn.pg(), tenant.id, &new).map_err(|err| {
                    conflict_as(err, &format!("domain '{domain}' is already registered"))
                })?;
            }
            let delivery = if target.on_citus {
                DdlDelivery::EachStatement
            } else {
                DdlDelivery::OneQuery
            };
            create_school_schema(conn, delivery)?;
            (seed.apply)(conn)?;
            Ok(row)
        })
    })?;
    crate::observability::metrics::school_provisioned();
    Ok(row)
}

fn conflict_as(err: diesel::result::Error, message: &str) -> ApiError {
    match ApiError::from(err) {
        ApiError::Conflict(_) => ApiError::Conflict(message.to_owned()),
        other => other,
    }
}

/// Deletes the school's registry row (domains, users and keys go with it) and drops its
/// schema with every record in it.
pub fn drop_tenant(db: &Db, tenant_id: Uuid) -> ApiResult<()> {
    db.with_conn(|conn| {
        conn.transaction(|conn| {
            let row = TenantRow::find(conn, tenant_id)?.ok_or_else(ApiError::not_found)?;
            let schema = SchemaName::parse(&row.schema_name).map_err(ApiError::internal)?;
            diesel::delete(tenants::table.find(tenant_id)).execute(conn)?;
            diesel::sql_query(format!("DROP SCHEMA IF EXISTS {} CASCADE", schema.quoted()))
                .execute(conn)?;
            Ok(())
        })
    })
}

/// All schools as `TenantRef`s, for commands that walk every schema.
pub fn all_tenants(db: &Db) -> ApiResult<Vec<TenantRef>> {
    let rows = db.with_conn(|conn| Ok(TenantRow::all(conn)?))?;
    rows.iter()
        .map(|row| Ok(Arc::new(Tenant::try_from(row).map_err(ApiError::internal)?)))
        .collect()
}

#[derive(QueryableByName)]
struct Placement {
    #[diesel(sql_type = diesel::sql_types::Text)]
    schema_name: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    node: String,
}

/// On Citus with schema-based sharding: the node (`host:port`) each distributed school
/// schema lives on. Empty on plain PostgreSQL.
pub fn schema_nodes(
    conn: &mut PgConnection,
) -> ApiResult<std::collections::HashMap<String, String>> {
    let on_citus: bool = diesel::select(diesel::dsl::sql::<diesel::sql_types::Bool>(
        "EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')",
    ))
    .get_result(conn)?;
    if !on_citus {
        return Ok(Default::default());
    }
    // Citus's own catalogs, not the `citus_schemas` and `citus_shards` views: those live
    // in `public` (off a school-bound connection's path) and ask every worker for sizes.
    let rows: Vec<Placement> = diesel::sql_query(
        "SELECT DISTINCT ON (ns.nspname) ns.nspname::text AS schema_name, \
                n.nodename || ':' || n.nodeport AS node \
         FROM pg_catalog.pg_dist_schema ds \
         JOIN pg_catalog.pg_namespace ns ON ns.oid = ds.schemaid \
         JOIN pg_catalog.pg_dist_partition p ON p.colocationid = ds.colocationid \
         JOIN pg_catalog.pg_dist_shard sh ON sh.logicalrelid = p.logicalrelid \
         JOIN pg_catalog.pg_dist_placement pl ON pl.shardid = sh.shardid \
         JOIN pg_catalog.pg_dist_node n ON n.groupid = pl.groupid \
         ORDER BY ns.nspname, n.nodename, n.nodeport",
    )
    .load(conn)?;
    Ok(rows.into_iter().map(|p| (p.schema_name, p.node)).collect())
}
