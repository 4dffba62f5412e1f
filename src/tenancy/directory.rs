//! The tenant directory: every school's domains and schema name, held in memory so that
//! routing a request costs no query.
//!
//! The snapshot is dropped whenever a tenant or domain changes: at once by this process's
//! own writes (`invalidate`), and for changes made by other processes (the CLI, another
//! server) through a `tenant_directory` NOTIFY that triggers on the tables send, which a
//! background listener turns into `invalidate`. The next request reloads the whole
//! snapshot in one query; unknown hosts never cause a reload.

use std::{
    collections::HashMap,
    sync::{
        Arc, RwLock,
        atomic::{AtomicU64, Ordering},
    },
};

use diesel::{pg::PgConnection, prelude::*};

use crate::observability::metrics;
use crate::{
    db::{
        Db,
        schema_public::{domains, tenants},
    },
    error::{ApiError, ApiResult},
    tenancy::{SchemaName, Tenant, TenantRef},
};

/// The cache's name in metrics.
const CACHE: &str = "tenant_directory";

#[derive(Default)]
pub struct Snapshot {
    by_domain: HashMap<String, TenantRef>,
    by_schema: HashMap<String, TenantRef>,
}

impl Snapshot {
    pub fn by_domain(&self, host: &str) -> Option<&TenantRef> {
        self.by_domain.get(host)
    }

    pub fn by_schema(&self, schema: &str) -> Option<&TenantRef> {
        self.by_schema.get(schema)
    }

    fn load(conn: &mut PgConnection) -> ApiResult<Self> {
        let rows: Vec<(uuid::Uuid, String, String, bool)> = tenants::table
            .select((
                tenants::id,
                tenants::schema_name,
                tenants::name,
                tenants::is_active,
            ))
            .load(conn)?;
        let mut by_id = HashMap::with_capacity(rows.len());
        let mut by_schema = HashMap::with_capacity(rows.len());
        for (id, schema_name, name, is_active) in rows {
            // The table's CHECK enforces the rule; a row that still fails it is skipped
            // rather than ever reaching SQL.
            let Ok(schema_name) = SchemaName::parse(&schema_name) else {
                log::error!("tenant {id} has an invalid schema name; ignored");
                continue;
            };
            let tenant = Arc::new(Tenant {
                id,
                schema_name,
                name,
                is_active,
            });
            by_schema.insert(tenant.schema_name.as_str().to_owned(), tenant.clone());
            by_id.insert(id, tenant);
        }
        let domain_rows: Vec<(String, uuid::Uuid)> = domains::table
            .select((domains::domain, domains::tenant_id))
            .load(conn)?;
        let by_domain = domain_rows
            .into_iter()
            .filter_map(|(domain, tenant_id)| Some((domain, by_id.get(&tenant_id)?.clone())))
            .collect();
        Ok(Self {
            by_domain,
            by_schema,
        })
    }
}

pub struct TenantDirectory {
    db: Db,
    snapshot: RwLock<Option<Arc<Snapshot>>>,
    /// Bumped by every invalidation, so a load that raced one is not cached.
    generation: AtomicU64,
}

impl TenantDirectory {
    pub fn new(db: Db) -> Self {
        Self {
            db,
            snapshot: RwLock::new(None),
            generation: AtomicU64::new(0),
        }
    }

    /// The current snapshot, loading it (off the executor) when it was invalidated.
    pub async fn snapshot(self: &Arc<Self>) -> ApiResult<Arc<Snapshot>> {
        if let Some(snapshot) = self.cached() {
            metrics::cache_lookup(CACHE, true);
            return Ok(snapshot);
        }
        metrics::cache_lookup(CACHE, false);
        let directory = self.clone();
        crate::db::blocking(move || directory.load_blocking()).await?
    }

    /// The blocking form of `snapshot`, for code already off the executor.
    pub fn load_blocking(&self) -> ApiResult<Arc<Snapshot>> {
        if let Some(snapshot) = self.cached() {
            return Ok(snapshot);
        }
        let generation = self.generation.load(Ordering::Acquire);
        let snapshot = Arc::new(self.db.with_conn(Snapshot::load)?);
        if self.generation.load(Ordering::Acquire) == generation {
            *self.snapshot.write().unwrap_or_else(|e| e.into_inner()) = Some(snapshot.clone());
        }
        Ok(snapshot)
    }

    fn cached(&self) -> Option<Arc<Snapshot>> {
        self.snapshot
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// (active, inactive) schools in the loaded registry, without loading it.
    pub fn cached_counts(&self) -> Option<(usize, usize)> {
        self.cached().map(|snapshot| {
            let active = snapshot.by_schema.values().filter(|t| t.is_active).count();
            (active, snapshot.by_schema.len() - active)
        })
    }

    pub fn invalidate(&self) {
        metrics::cache_invalidated(CACHE);
        self.generation.fetch_add(1, Ordering::AcqRel);
        *self.snapshot.write().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// Looks a school up by schema name (blocking; CLI and provisioning use it).
    pub fn find_schema(&self, schema: &str) -> ApiResult<TenantRef> {
        self.load_blocking()?
            .by_schema(schema)
            .cloned()
            .ok_or(ApiError::TenantNotFound)
    }
}

/// Changes to `tenants` and `domains` by any process (triggers send `tenant_directory`).
impl crate::db::notify::Subscriber for TenantDirectory {
    fn channel(&self) -> &'static str {
        "tenant_directory"
    }

    fn notified(&self, _payload: &str) {
        self.invalidate();
    }

    fn missed(&self) {
        self.invalidate();
    }
}
