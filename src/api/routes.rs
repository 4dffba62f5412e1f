//! `Endpoint`: one path with its method handlers, answering 405 with an `Allow` header
//! (as problem+json) for any other method.

use actix_web::{
    FromRequest, Handler, HttpRequest, HttpResponse, Resource, Responder,
    http::Method,
    web::{self, ServiceConfig},
};

use std::{
    collections::BTreeSet,
    sync::{Mutex, OnceLock},
};

use crate::error::ApiError;

/// Every (path, method) registered through `Endpoint`, so the OpenAPI document can be
/// checked against the routes that really exist.
fn registry() -> &'static Mutex<BTreeSet<(String, String)>> {
    static ROUTES: OnceLock<Mutex<BTreeSet<(String, String)>>> = OnceLock::new();
    ROUTES.get_or_init(|| Mutex::new(BTreeSet::new()))
}

/// The routes registered so far (after the app has been configured at least once).
pub fn registered_routes() -> BTreeSet<(String, String)> {
    registry()
        .lock()
        .map(|routes| routes.clone())
        .unwrap_or_default()
}

/// `endpoint.get(handler)` and friends: `on` with the method named by the helper.
macro_rules! method_helpers {
    ($($name:ident $method:ident),+) => {
        $(
            pub fn $name<F, Args>(self, handler: F) -> Self
            where
                F: Handler<Args>,
                Args: FromRequest + 'static,
                F::Output: Responder + 'static,
            {
                self.on(Method::$method, handler)
            }
        )+
    };
}

pub struct Endpoint {
    path: String,
    resource: Resource,
    allow: Vec<Method>,
}

impl Endpoint {
    pub fn new(path: &str) -> Self {
        Self {
            path: path.to_owned(),
            resource: web::resource(path),
            allow: Vec::new(),
        }
    }

    pub fn on<F, Args>(mut self, method: Method, handler: F) -> Self
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.allow.push(method.clone());
        self.resource = self.resource.route(web::method(method).to(handler));
        self
    }

    method_helpers!(get GET, post POST, put PUT, patch PATCH, delete DELETE);

    pub fn register(self, cfg: &mut ServiceConfig) {
        if let Ok(mut routes) = registry().lock() {
            routes.extend(
                self.allow
                    .iter()
                    .map(|m| (self.path.clone(), m.to_string())),
            );
        }
        let allow = self.allow;
        cfg.service(
            self.resource
                .default_service(web::to(move |req: HttpRequest| {
                    let allow = allow.clone();
                    async move {
                        Err::<HttpResponse, _>(ApiError::MethodNotAllowed {
                            method: req.method().clone(),
                            allow,
                        })
                    }
                })),
        );
    }
}

/// The answer for paths that match no route.
pub async fn not_found() -> Result<HttpResponse, ApiError> {
    Err(ApiError::NotFound("no such path"))
}
