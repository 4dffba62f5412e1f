//! Typed requests of the platform API (API.md 4-5): schools (tenants), platform users and
//! API keys, made by a platform admin on the main host.

// The answers carry the fields a test may assert on; each test reads a few.
#![allow(dead_code)]

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{As, NewRecord, TestApp, item};

pub const TENANTS: &str = "/api/v1/system/tenants/";
pub const PLATFORM_USERS: &str = "/api/v1/system/users/";
pub const API_KEYS: &str = "/api/v1/system/api-keys/";

/// A school: its schema and the domains it answers on.
#[derive(Serialize, Default)]
pub struct NewTenant<'a> {
    pub schema_name: &'a str,
    pub name: &'a str,
    pub domains: &'a [&'a str],
}

#[derive(Deserialize, Debug, Clone)]
pub struct Tenant {
    pub id: String,
    pub schema_name: String,
    pub name: String,
}

posted_to!(NewTenant => Tenant at TENANTS);

/// A user made by the platform: of a school (`client`, a tenant id) or of the platform.
#[derive(Serialize, Default)]
pub struct NewUser<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phone: Option<&'a str>,
    pub password: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub roles: Option<&'a [&'a str]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_superuser: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_name: Option<&'a str>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct User {
    pub id: String,
    pub email: Option<String>,
    pub phone: Option<String>,
    pub client: Option<String>,
}

posted_to!(NewUser => User at PLATFORM_USERS);

/// An API key: of one school (`tenant`) or of the platform.
#[derive(Serialize, Default)]
pub struct NewApiKey<'a> {
    pub name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<&'a str>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct ApiKey {
    pub id: String,
    pub name: String,
    /// The secret, answered once at creation.
    pub key: String,
    pub tenant: Value,
    pub read_only: bool,
}

posted_to!(NewApiKey => ApiKey at API_KEYS);

impl<'a> NewApiKey<'a> {
    /// A global key of full rights.
    pub fn named(name: &'a str) -> Self {
        Self {
            name,
            ..Default::default()
        }
    }

    /// Scoped to one school (a tenant id).
    pub fn of_school(self, tenant: &'a str) -> Self {
        Self {
            tenant: Some(tenant),
            ..self
        }
    }

    /// With the `view_*` permissions only.
    pub fn read_only(self) -> Self {
        Self {
            read_only: Some(true),
            ..self
        }
    }
}

impl TestApp {
    /// The id of the school whose schema is `schema`, read by a platform admin.
    pub async fn tenant_id(&self, root: &As, schema: &str) -> String {
        let tenants = self
            .list::<Tenant>(&format!("{TENANTS}?search={schema}"), root)
            .await;
        (tenants.results.into_iter())
            .find(|t| t.schema_name == schema)
            .unwrap_or_else(|| panic!("no school {schema}"))
            .id
    }
}
