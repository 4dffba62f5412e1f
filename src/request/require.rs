//! Stage 6, require, on the connection's lane at the start of the request's unit of work:
//! the caller's roles and permissions in this school (`cache::roles`; a guardian's reads
//! narrowed to their children), then the permission the endpoint needs.

use std::sync::Arc;

use actix_web::http::Method;
use chrono::Utc;
use uuid::Uuid;

use crate::{
    auth::{
        api_key::ApiKeyRecord,
        permissions::{Action, Permission, PermissionSet, Resource},
    },
    cache::roles::RoleCache,
    db::models::User,
    error::{ApiError, ApiResult},
    request::authenticate::Authenticated,
    school::Actor,
    tenancy::{ReadScope, TenantConn, TenantRef},
};

/// What a school endpoint requires of its caller.
#[derive(Clone, Copy, Debug)]
pub enum Need {
    /// Any authenticated caller of this school, even one without roles.
    Authenticated,
    /// The action the HTTP method maps to, on this resource.
    Method(Resource),
    /// Every one of these permissions.
    All(&'static [Permission]),
}

/// The authenticated party of a school request.
#[derive(Debug, Clone)]
pub enum Principal {
    /// Shared with the user cache: a cached user is not copied per request.
    User(Arc<User>),
    /// Shared with the key cache, likewise.
    ApiKey(Arc<ApiKeyRecord>),
}

#[derive(Debug, Clone)]
pub struct Caller {
    pub tenant: TenantRef,
    pub principal: Principal,
    pub roles: Arc<[String]>,
    pub permissions: PermissionSet,
}

impl Caller {
    /// The user behind the request; `None` for API keys (their records have no creator).
    pub fn user_id(&self) -> Option<Uuid> {
        match &self.principal {
            Principal::User(user) => Some(user.id),
            Principal::ApiKey(_) => None,
        }
    }

    /// Who the request's writes are by (history's actor; `created_by` keeps its user).
    pub fn actor(&self) -> Actor {
        match &self.principal {
            Principal::User(user) => Actor::user(user.id, user.display_name()),
            Principal::ApiKey(key) => Actor::api_key(key.id, key.name.clone()),
        }
    }

    pub fn user(&self) -> Option<&User> {
        match &self.principal {
            Principal::User(user) => Some(user),
            Principal::ApiKey(_) => None,
        }
    }

    /// Whether the caller may make a `method` request to an endpoint that needs `need`
    /// (403 `permission_denied` naming the missing permission otherwise).
    pub(super) fn require(&self, need: Need, method: &Method) -> ApiResult<()> {
        if let Principal::ApiKey(key) = &self.principal {
            if key.read_only && !matches!(*method, Method::GET | Method::HEAD) {
                return Err(ApiError::PermissionDenied(
                    "this API key is read-only".into(),
                ));
            }
        }
        let missing = match need {
            Need::Authenticated => None,
            Need::Method(resource) => Action::for_method(method)
                .map(|action| Permission::new(action, resource))
                .filter(|p| !self.permissions.contains(*p)),
            Need::All(required) => required
                .iter()
                .copied()
                .find(|p| !self.permissions.contains(*p)),
        };
        match missing {
            None => Ok(()),
            Some(permission) => Err(ApiError::PermissionDenied(format!(
                "you do not have permission to perform this action ({permission} is required)"
            ))),
        }
    }
}

/// The authenticated caller's permissions in this school (an API key's `last_used_at` is
/// recorded here, once it is let in).
pub fn caller_of(
    conn: &mut TenantConn,
    role_cache: &RoleCache,
    tenant: TenantRef,
    authenticated: Authenticated,
) -> ApiResult<Caller> {
    match authenticated {
        Authenticated::User(user) => {
            let grants = role_cache.get_or_load(conn, user.id)?;
            let (role_names, permissions) = (grants.roles, grants.permissions);
            if let Some(children) = grants.children {
                // A guardian reads their children's records only, whatever else they hold.
                conn.narrow_reads(ReadScope::Students(children));
            }
            Ok(Caller {
                tenant,
                principal: Principal::User(user),
                roles: role_names,
                permissions,
            })
        }
        Authenticated::Key(key) => {
            let now = Utc::now();
            if key.claim_use(now) {
                ApiKeyRecord::record_use(conn.pg(), key.record.id, now)?;
            }
            Ok(key_caller(tenant, key.record.clone()))
        }
    }
}

/// An API key's caller: every permission, or every view permission for a read-only key.
fn key_caller(tenant: TenantRef, record: Arc<ApiKeyRecord>) -> Caller {
    let permissions = if record.read_only {
        PermissionSet::all().view_only()
    } else {
        PermissionSet::all()
    };
    Caller {
        tenant,
        principal: Principal::ApiKey(record),
        roles: Arc::new([]),
        permissions,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use actix_web::http::Method;
    use chrono::Utc;
    use uuid::Uuid;

    use super::{Caller, Need, key_caller};
    use crate::{
        auth::{
            api_key::ApiKeyRecord,
            permissions::{Action, Permission, PermissionSet, Resource},
        },
        db::schema_name::SchemaName,
        error::ApiError,
        tenancy::Tenant,
    };

    fn school() -> Arc<Tenant> {
        Arc::new(Tenant {
            id: Uuid::new_v4(),
            schema_name: SchemaName::parse("alpha").expect("name"),
            name: "Alpha".into(),
            is_active: true,
        })
    }

    fn key(read_only: bool) -> Caller {
        key_caller(
            school(),
            std::sync::Arc::new(ApiKeyRecord {
                id: Uuid::new_v4(),
                name: "sync".into(),
                prefix: "abc".into(),
                tenant_id: None,
                read_only,
                expires_at: None,
                last_used_at: None,
                created_at: Utc::now(),
                revoked_at: None,
            }),
        )
    }

    #[test]
    fn a_read_only_key_reads_only() {
        let students = Need::Method(Resource::Student);
        assert!(key(true).require(students, &Method::GET).is_ok());
        assert!(matches!(
            key(true).require(Need::Authenticated, &Method::POST),
            Err(ApiError::PermissionDenied(_))
        ));
        assert!(key(false).require(students, &Method::DELETE).is_ok());
        assert!(key(true).user_id().is_none());
    }

    #[test]
    fn the_method_names_the_permission_a_caller_must_hold() {
        const VIEW: Permission = Permission::new(Action::View, Resource::Student);
        let mut caller = key(false);
        caller.permissions = [VIEW].into_iter().collect::<PermissionSet>();
        let students = Need::Method(Resource::Student);
        assert!(caller.require(students, &Method::GET).is_ok());
        assert!(caller.require(Need::All(&[VIEW]), &Method::POST).is_ok());
        let Err(ApiError::PermissionDenied(detail)) = caller.require(students, &Method::PATCH)
        else {
            panic!("a change needs its permission");
        };
        assert!(detail.contains("change_student"), "{detail}");
        caller.permissions = PermissionSet::default();
        assert!(caller.require(Need::Authenticated, &Method::POST).is_ok());
    }
}
