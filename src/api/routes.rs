//! `Mount` and `Endpoint`: each API module mounts its routes in one function,
//! `mount(m: &mut Mount)`, registering every endpoint with its handlers and describing
//! each operation in the same place, so the OpenAPI document and the router cannot drift
//! apart. An endpoint answers 405 with an `Allow` header (as problem+json) for any other
//! method.
//!
//! Routes are matched in the order they are mounted, so a literal path must come before a
//! pattern that would take it (`.../bulk-soft-delete/` before `.../{id}/`): `Mount` refuses
//! (panics at start-up, and in the tests) a route that an earlier one shadows.

use actix_web::{
    FromRequest, Handler, HttpRequest, HttpResponse, Resource, Responder,
    http::Method,
    web::{self, ServiceConfig},
};

use crate::{
    api::openapi::{ApiDoc, Describe},
    error::ApiError,
};

/// Where routes are mounted: the app's `ServiceConfig` (absent when only the document is
/// built) and the OpenAPI document.
pub struct Mount<'a> {
    cfg: Option<&'a mut ServiceConfig>,
    doc: &'a mut ApiDoc,
    /// Every path mounted so far, in order.
    paths: Vec<String>,
}

impl<'a> Mount<'a> {
    /// Mounts into the app and describes into `doc`.
    pub fn new(cfg: &'a mut ServiceConfig, doc: &'a mut ApiDoc) -> Self {
        Self {
            cfg: Some(cfg),
            doc,
            paths: Vec::new(),
        }
    }

    /// Only describes (to build the OpenAPI document).
    pub fn document(doc: &'a mut ApiDoc) -> Self {
        Self {
            cfg: None,
            doc,
            paths: Vec::new(),
        }
    }

    /// The document, for component schemas shared by several operations.
    pub fn doc(&mut self) -> &mut ApiDoc {
        self.doc
    }

    /// Every path mounted, in order.
    pub fn paths(&self) -> &[String] {
        &self.paths
    }

    fn claim(&mut self, path: &str) {
        if let Some(earlier) = self.paths.iter().find(|earlier| shadows(earlier, path)) {
            panic!("route {path} is mounted after {earlier}, which would take its requests");
        }
        self.paths.push(path.to_owned());
    }
}

/// Whether `earlier` matches every request `later` would: as many segments, and each
/// either equal or a `{placeholder}` in `earlier`.
fn shadows(earlier: &str, later: &str) -> bool {
    let (a, b): (Vec<_>, Vec<_>) = (earlier.split('/').collect(), later.split('/').collect());
    a.len() == b.len()
        && a.iter()
            .zip(&b)
            .all(|(x, y)| x == y || (x.starts_with('{') && x.ends_with('}')))
}

/// `endpoint.get(handler, op)` and friends: `on` with the method named by the helper.
macro_rules! method_helpers {
    ($($name:ident $method:ident),+) => {
        $(
            pub fn $name<F, Args>(self, handler: F, op: impl Describe) -> Self
            where
                F: Handler<Args>,
                Args: FromRequest + 'static,
                F::Output: Responder + 'static,
            {
                self.on(Method::$method, handler, op)
            }
        )+
    };
}

/// One path with its method handlers and their descriptions.
pub struct Endpoint<'m, 'a> {
    mount: &'m mut Mount<'a>,
    path: String,
    /// Taken when the endpoint is dropped into the app.
    resource: Option<Resource>,
    allow: Vec<Method>,
}

impl<'a> Mount<'a> {
    pub fn endpoint(&mut self, path: &str) -> Endpoint<'_, 'a> {
        self.claim(path);
        Endpoint {
            path: path.to_owned(),
            resource: Some(web::resource(path)),
            allow: Vec::new(),
            mount: self,
        }
    }
}

impl Endpoint<'_, '_> {
    /// Adds `handler` for `method`, described by `op` (see [`Describe`]).
    pub fn on<F, Args>(mut self, method: Method, handler: F, op: impl Describe) -> Self
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        if let Some(op) = op.describe(self.mount.doc) {
            self.mount.doc.add(method.clone(), &self.path, op);
        }
        self.allow.push(method.clone());
        self.resource = (self.resource.take()).map(|r| r.route(web::method(method).to(handler)));
        self
    }

    method_helpers!(get GET, post POST, put PUT, patch PATCH, delete DELETE);
}

impl Drop for Endpoint<'_, '_> {
    /// The endpoint reaches the app once all its methods are added.
    fn drop(&mut self) {
        let (Some(cfg), Some(resource)) = (self.mount.cfg.as_deref_mut(), self.resource.take())
        else {
            return;
        };
        let allow = std::mem::take(&mut self.allow);
        cfg.service(resource.default_service(web::to(move |req: HttpRequest| {
            let allow = allow.clone();
            async move {
                Err::<HttpResponse, _>(ApiError::MethodNotAllowed {
                    method: req.method().clone(),
                    allow,
                })
            }
        })));
    }
}

/// The answer for paths that match no route.
pub async fn not_found() -> Result<HttpResponse, ApiError> {
    Err(ApiError::NotFound("no such path"))
}

#[cfg(test)]
mod tests {
    use super::shadows;

    #[test]
    fn a_placeholder_shadows_a_literal_of_the_same_shape_only() {
        assert!(shadows("/a/{id}/", "/a/bulk/"));
        assert!(shadows("/a/{id}/", "/a/{pk}/"));
        assert!(!shadows("/a/bulk/", "/a/{id}/"));
        assert!(!shadows("/a/{id}/", "/a/{id}/b/"));
        assert!(!shadows("/a/{id}/b/", "/a/{id}/c/"));
    }

    #[test]
    #[should_panic(expected = "is mounted after")]
    fn mounting_a_shadowed_route_panics() {
        let mut doc = crate::api::openapi::ApiDoc::new();
        let mut mount = super::Mount::document(&mut doc);
        mount.endpoint("/x/{id}/");
        mount.endpoint("/x/literal/");
    }
}
