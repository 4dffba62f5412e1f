//! The tenant registry: schools and their domains.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use crate::db::{
    page::{Span, page},
    schema_public::{domains, tenants},
};

#[derive(Queryable, Selectable, Identifiable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = tenants, check_for_backend(diesel::pg::Pg))]
pub struct TenantRow {
    pub id: Uuid,
    pub schema_name: String,
    pub name: String,
    pub is_active: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Queryable, Selectable, Identifiable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = domains, check_for_backend(diesel::pg::Pg))]
pub struct DomainRow {
    pub id: Uuid,
    pub domain: String,
    #[serde(rename = "tenant")]
    pub tenant_id: Uuid,
    pub is_primary: bool,
    pub created_at: DateTime<Utc>,
}

/// What a change of a school sets (PATCH; `None`: unchanged).
#[derive(AsChangeset, Default, Debug)]
#[diesel(table_name = tenants)]
pub struct TenantChanges {
    pub name: Option<String>,
    pub is_active: Option<bool>,
}

impl TenantChanges {
    /// The change that deactivates a school.
    pub fn deactivate() -> Self {
        Self {
            is_active: Some(false),
            ..Self::default()
        }
    }
}

/// A domain to add to a school.
#[derive(Debug)]
pub struct NewDomain {
    /// A valid host name, lower-case (`normalize_domain`).
    pub domain: String,
    /// Asked to be primary (the first domain of a school is primary anyway).
    pub is_primary: bool,
}

impl TenantRow {
    pub fn find(conn: &mut PgConnection, id: Uuid) -> QueryResult<Option<Self>> {
        tenants::table
            .find(id)
            .select(Self::as_select())
            .first(conn)
            .optional()
    }

    pub fn find_by_schema(conn: &mut PgConnection, schema: &str) -> QueryResult<Option<Self>> {
        tenants::table
            .filter(tenants::schema_name.eq(schema))
            .select(Self::as_select())
            .first(conn)
            .optional()
    }

    /// One page (oldest first) of the schools whose name, schema or a domain holds
    /// `search` (case-insensitive), and the count of all of them.
    pub fn page(
        conn: &mut PgConnection,
        search: Option<&str>,
        span: Span,
    ) -> QueryResult<(i64, Vec<Self>)> {
        let pattern = search.map(crate::db::like_pattern);
        let matching = || {
            let q = tenants::table.select(Self::as_select()).into_boxed();
            match &pattern {
                Some(pattern) => q.filter(
                    tenants::name
                        .ilike(pattern.clone())
                        .or(tenants::schema_name.ilike(pattern.clone()))
                        .or(tenants::id.eq_any(
                            domains::table
                                .filter(domains::domain.ilike(pattern.clone()))
                                .select(domains::tenant_id),
                        )),
                ),
                None => q,
            }
        };
        page(conn, matching, (tenants::created_at, tenants::id), span)
    }

    /// How many schools the platform has.
    pub fn count(conn: &mut PgConnection) -> QueryResult<i64> {
        tenants::table.count().get_result(conn)
    }

    pub fn all(conn: &mut PgConnection) -> QueryResult<Vec<Self>> {
        tenants::table
            .order(tenants::schema_name)
            .select(Self::as_select())
            .load(conn)
    }

    /// Sets the given fields of school `id`.
    pub fn update(conn: &mut PgConnection, id: Uuid, changes: &TenantChanges) -> QueryResult<Self> {
        diesel::update(tenants::table.find(id))
            .set((changes, tenants::updated_at.eq(Utc::now())))
            .returning(Self::as_returning())
            .get_result(conn)
    }
}

impl DomainRow {
    /// The domains of each of `tenants` (primary first, then in the order they were added),
    /// in one query.
    pub fn of_tenants(
        conn: &mut PgConnection,
        tenants: &[Uuid],
    ) -> QueryResult<HashMap<Uuid, Vec<Self>>> {
        let mut by_tenant: HashMap<Uuid, Vec<Self>> = HashMap::new();
        for domain in domains::table
            .filter(domains::tenant_id.eq_any(tenants))
            .order((domains::is_primary.desc(), domains::created_at, domains::id))
            .select(Self::as_select())
            .load(conn)?
        {
            by_tenant.entry(domain.tenant_id).or_default().push(domain);
        }
        Ok(by_tenant)
    }

    pub fn for_tenant(conn: &mut PgConnection, tenant_id: Uuid) -> QueryResult<Vec<Self>> {
        domains::table
            .filter(domains::tenant_id.eq(tenant_id))
            .order((domains::is_primary.desc(), domains::created_at, domains::id))
            .select(Self::as_select())
            .load(conn)
    }

    /// Adds a domain. The first domain of a school is primary whatever was asked; a new
    /// primary demotes the others. Run it inside a transaction.
    pub fn add(conn: &mut PgConnection, tenant_id: Uuid, new: &NewDomain) -> QueryResult<Self> {
        let has_domains: bool = diesel::select(diesel::dsl::exists(
            domains::table.filter(domains::tenant_id.eq(tenant_id)),
        ))
        .get_result(conn)?;
        let is_primary = new.is_primary || !has_domains;
        if is_primary {
            diesel::update(domains::table.filter(domains::tenant_id.eq(tenant_id)))
                .set(domains::is_primary.eq(false))
                .execute(conn)?;
        }
        diesel::insert_into(domains::table)
            .values((
                domains::id.eq(Uuid::new_v4()),
                domains::domain.eq(&new.domain),
                domains::tenant_id.eq(tenant_id),
                domains::is_primary.eq(is_primary),
                // Not the transaction's `now()`: domains added together keep their order.
                domains::created_at.eq(Utc::now()),
            ))
            .returning(Self::as_returning())
            .get_result(conn)
    }
}

/// Domains are host names: lower-case letters, digits, dots and dashes, 1-253 characters.
pub fn normalize_domain(raw: &str) -> Option<String> {
    let domain = raw.trim().trim_end_matches('.').to_ascii_lowercase();
    let valid = !domain.is_empty()
        && domain.len() <= 253
        && domain.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        });
    valid.then_some(domain)
}

#[cfg(test)]
mod tests {
    use super::normalize_domain;

    #[test]
    fn domains_are_host_names() {
        assert_eq!(
            normalize_domain("Greenwood.Localhost").as_deref(),
            Some("greenwood.localhost")
        );
        assert_eq!(
            normalize_domain("a-b.example.org.").as_deref(),
            Some("a-b.example.org")
        );
        for bad in ["", "a..b", "-a.b", "a_b.c", "a b", "x:80", "http://x"] {
            assert_eq!(normalize_domain(bad), None, "{bad}");
        }
    }
}
