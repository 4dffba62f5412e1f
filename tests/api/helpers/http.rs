//! Requests as a host and credentials (`As`) and their answers read whole (`Reply`);
//! logging in to a school or the platform.

use reqwest::{Method, StatusCode};
use serde_json::Value;

use super::{Login, SCHOOL_AUTH, SYSTEM_AUTH, TestApp};

/// A response, read whole.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl Reply {
    /// The problem `code` of an error answer.
    pub fn code(&self) -> &str {
        self.body["code"].as_str().unwrap_or("")
    }

    #[track_caller]
    pub fn assert(&self, status: u16, code: Option<&str>) -> &Self {
        assert_eq!(
            self.status.as_u16(),
            status,
            "unexpected status; body: {}",
            self.body
        );
        if let Some(code) = code {
            assert_eq!(self.code(), code, "unexpected code; body: {}", self.body);
            let content_type = self
                .headers
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            assert_eq!(content_type, "application/problem+json");
        }
        self
    }
}

/// How a request reaches the server: host and credentials.
#[derive(Clone, Default)]
pub struct As {
    pub host: String,
    pub token: Option<String>,
    pub api_key: Option<String>,
    pub x_tenant: Option<String>,
}

impl As {
    pub fn host(host: &str) -> Self {
        Self {
            host: host.into(),
            ..Self::default()
        }
    }
    pub fn school(school: &str) -> Self {
        Self::host(&format!("{school}.localhost"))
    }
    pub fn main() -> Self {
        Self::host("localhost")
    }
    pub fn token(mut self, token: &str) -> Self {
        self.token = Some(token.into());
        self
    }
    pub fn key(mut self, key: &str) -> Self {
        self.api_key = Some(key.into());
        self
    }
    pub fn tenant(mut self, schema: &str) -> Self {
        self.x_tenant = Some(schema.into());
        self
    }
}

impl TestApp {
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        who: &As,
        body: Option<Value>,
    ) -> Reply {
        let mut req = self
            .client
            .request(method, format!("{}{}", self.address, path))
            .header("Host", &who.host);
        if let Some(token) = &who.token {
            req = req.bearer_auth(token);
        }
        if let Some(key) = &who.api_key {
            req = req.header("X-API-KEY", key);
        }
        if let Some(schema) = &who.x_tenant {
            req = req.header("X-Tenant", schema);
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        let res = req.send().await.expect("request");
        Self::read(res).await
    }

    pub async fn read(res: reqwest::Response) -> Reply {
        let status = res.status();
        let headers = res.headers().clone();
        let bytes = res.bytes().await.expect("body");
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .unwrap_or(Value::String(String::from_utf8_lossy(&bytes).into()))
        };
        Reply {
            status,
            headers,
            body,
        }
    }

    pub async fn get(&self, path: &str, who: &As) -> Reply {
        self.request(Method::GET, path, who, None).await
    }

    /// Polls `GET path` as `who` until its status is `status` (at most about 4 s: a change
    /// another process makes reaches this one's caches within the listener's poll).
    pub async fn until_status(&self, path: &str, who: &As, status: u16) -> bool {
        for _ in 0..80 {
            if self.get(path, who).await.status == status {
                return true;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        false
    }
    pub async fn post(&self, path: &str, who: &As, body: Value) -> Reply {
        self.request(Method::POST, path, who, Some(body)).await
    }
    /// A POST whose body is the empty object `{}` (the operations that take none).
    pub async fn post_empty(&self, path: &str, who: &As) -> Reply {
        self.post(path, who, Value::Object(Default::default()))
            .await
    }
    pub async fn patch(&self, path: &str, who: &As, body: Value) -> Reply {
        self.request(Method::PATCH, path, who, Some(body)).await
    }
    pub async fn delete(&self, path: &str, who: &As) -> Reply {
        self.request(Method::DELETE, path, who, None).await
    }

    /// Logs in to a school; answers the whole login body.
    pub async fn school_login(&self, school: &str, identifier: &str) -> Value {
        let reply = Login::of(identifier)
            .post(self, SCHOOL_AUTH, &As::school(school))
            .await;
        reply.assert(200, None);
        reply.body
    }

    /// An access token of `who@school.test` on `school`.
    pub async fn school_token(&self, school: &str, who: &str) -> String {
        self.school_login(school, &format!("{who}@{school}.test"))
            .await["access"]
            .as_str()
            .expect("access")
            .to_owned()
    }

    /// The path of `user`'s (first) role assignment, read as `admin` of the same school.
    pub async fn role_assignment_of(&self, admin: &As, user: &As) -> String {
        let user_id = self.get("/api/v1/school/auth/me/", user).await.body["user"]["id"].clone();
        let assignments = self
            .get("/api/v1/school/role-assignments/?page_size=200", admin)
            .await;
        let id = assignments.body["results"]
            .as_array()
            .expect("results")
            .iter()
            .find(|a| a["user"] == user_id)
            .expect("the user's assignment")["id"]
            .as_str()
            .expect("id")
            .to_owned();
        format!("/api/v1/school/role-assignments/{id}/")
    }

    /// Logged in as `identifier` (password `PASSWORD`) on `school`'s own address.
    pub async fn as_school_user_at(&self, school: &str, identifier: &str) -> As {
        let login = self.school_login(school, identifier).await;
        As::school(school).token(login["access"].as_str().expect("access"))
    }

    /// Logged in as `who` of `school`, on the school's own address.
    pub async fn as_school_user(&self, school: &str, who: &str) -> As {
        As::school(school).token(&self.school_token(school, who).await)
    }

    pub async fn system_login(&self, identifier: &str) -> Value {
        let reply = Login::of(identifier)
            .post(self, SYSTEM_AUTH, &As::main())
            .await;
        reply.assert(200, None);
        reply.body
    }

    pub async fn as_root(&self) -> As {
        As::main().token(
            self.system_login("root@platform.test").await["access"]
                .as_str()
                .expect("access"),
        )
    }

    pub async fn as_staff(&self) -> As {
        As::main().token(
            self.system_login("staff@platform.test").await["access"]
                .as_str()
                .expect("access"),
        )
    }
}

/// A JWT of `claims` signed (HS256) with `secret`.
pub fn forge(claims: Value, secret: &str) -> String {
    jsonwebtoken::encode(
        &jsonwebtoken::Header::default(),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()),
    )
    .expect("encode")
}
