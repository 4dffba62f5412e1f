//! Typed bodies of the two auth layers (API.md 3): a login, and the refresh token a
//! refresh or a logout carries.

use serde::Serialize;
use serde_json::Value;

use super::{As, PASSWORD, Reply, TestApp};

/// The school layer's auth endpoints.
pub const SCHOOL_AUTH: &str = "/api/v1/school/auth/";
/// The platform layer's auth endpoints.
pub const SYSTEM_AUTH: &str = "/api/v1/system/auth/";

/// A login by e-mail or phone (`identifier`).
#[derive(Serialize)]
pub struct Login<'a> {
    pub identifier: &'a str,
    pub password: &'a str,
}

impl<'a> Login<'a> {
    /// `identifier` with the seeded users' password.
    pub fn of(identifier: &'a str) -> Self {
        Self {
            identifier,
            password: PASSWORD,
        }
    }

    pub fn body(&self) -> Value {
        serde_json::to_value(self).expect("a JSON body")
    }

    /// Posts the login to `auth` (`SCHOOL_AUTH` or `SYSTEM_AUTH`) as `who`.
    pub async fn post(&self, app: &TestApp, auth: &str, who: &As) -> Reply {
        app.post(&format!("{auth}login/"), who, self.body()).await
    }
}

/// `{"refresh": token}`, the body of a refresh and of a logout.
pub fn refresh_body(token: &Value) -> Value {
    #[derive(Serialize)]
    struct Refresh<'a> {
        refresh: &'a Value,
    }
    serde_json::to_value(Refresh { refresh: token }).expect("a JSON body")
}

impl TestApp {
    /// Refreshes `token` on `auth` (`SCHOOL_AUTH` or `SYSTEM_AUTH`) as `who`.
    pub async fn refresh(&self, auth: &str, who: &As, token: &Value) -> Reply {
        self.post(&format!("{auth}refresh/"), who, refresh_body(token))
            .await
    }

    /// Logs `token` out on `auth` as `who`.
    pub async fn logout(&self, auth: &str, who: &As, token: &Value) -> Reply {
        self.post(&format!("{auth}logout/"), who, refresh_body(token))
            .await
    }
}
