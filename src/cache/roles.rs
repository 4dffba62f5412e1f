//! Each user's roles and permissions per school, cached so that authorising a request
//! costs no query. Dropped per school at once by this process's role writes, and by other
//! processes' through the `school_roles` NOTIFY that every role write sends
//! (`roles::announce_change`; the change listener in `db::notify` forwards it).
//!
//! A guardian's grants also carry their children (the students their reads are narrowed
//! to), so a guardian's request costs no query for them either: every write of a guardian
//! (its user, its students, a delete) sends the same `school_roles` NOTIFY from the store's
//! write path (`Store::CHANGES_READ_SCOPES`), so a child unlinked anywhere leaves the
//! guardian's reads within the listener's poll (250 ms), in this process too.

use std::sync::Arc;

use uuid::Uuid;

use crate::{
    auth::{
        permissions::{GUARDIAN_ROLE, PermissionSet},
        roles,
    },
    cache::Cache,
    error::ApiResult,
    school::guardians::Guardians,
    tenancy::TenantConn,
};

/// A user's role names and what they grant, in one school. A copy shares the names: a
/// cache hit allocates nothing.
#[derive(Clone, Debug)]
pub struct Grants {
    pub roles: Arc<[String]>,
    pub permissions: PermissionSet,
    /// For a guardian, the students their reads are narrowed to, whatever else they hold.
    pub children: Option<Arc<[Uuid]>>,
    /// The school's schema name, for dropping a school's entries.
    school: Arc<str>,
}

/// (school id, user id) → grants.
pub struct RoleCache(Cache<(Uuid, Uuid), Grants>);

impl Default for RoleCache {
    fn default() -> Self {
        Self(Cache::new("roles"))
    }
}

impl RoleCache {
    /// The user's role names and permissions in the connection's school.
    pub fn get_or_load(&self, conn: &mut TenantConn, user_id: Uuid) -> ApiResult<Grants> {
        let key = (conn.tenant().id, user_id);
        if let Some(hit) = self.0.get(&key) {
            return Ok(hit);
        }
        let generation = self.0.generation();
        let (roles, permissions) = roles::for_user(conn, user_id)?;
        let children = match roles.iter().any(|role| role == GUARDIAN_ROLE) {
            true => Some(Guardians::children_of(conn, user_id)?.into()),
            false => None,
        };
        let loaded = Grants {
            roles: roles.into(),
            permissions,
            children,
            school: conn.tenant().schema_name.as_str().into(),
        };
        self.0.insert(generation, key, loaded.clone());
        Ok(loaded)
    }

    /// Drops what is cached for one school.
    pub fn invalidate_school(&self, schema: &str) {
        self.0.retain(|_, grants| &*grants.school != schema);
    }

    /// Drops everything.
    pub fn invalidate_all(&self) {
        self.0.clear();
    }
}

/// Role writes of any process (`roles::announce_change` sends `school_roles`).
impl crate::db::notify::Subscriber for RoleCache {
    fn channel(&self) -> &'static str {
        "school_roles"
    }

    fn notified(&self, schema: &str) {
        self.invalidate_school(schema);
    }

    fn missed(&self) {
        self.invalidate_all();
    }
}
