//! `Mount` and `Endpoint`: each API module mounts its routes in one function,
//! `mount(m: &mut Mount)`, registering every endpoint with its handlers and describing
//! each operation in the same place, so the OpenAPI document and the router cannot drift
//! apart. An endpoint answers 405 with an `Allow` header (as problem+json) for any other
//! method.
//!
//! The routes are found through a tree of path segments (`api::router`), a literal
//! segment before a placeholder: `.../bulk-soft-delete/` before `.../{id}/`, whichever is
//! mounted first. That is what trying them in mount order would answer as long as no route
//! overlaps an earlier one otherwise, so `Mount` refuses (panics at start-up, and in the
//! tests) a route that an earlier one would take, in whole or in part.

use std::sync::Arc;

use actix_web::{
    FromRequest, Handler, Responder, Route,
    http::Method,
    web::{self, Data, ServiceConfig},
};

use crate::api::{
    openapi::{ApiDoc, Describe},
    router::{EndpointRoutes, RouteTable, Router},
};

/// Where routes are mounted: the app's `ServiceConfig` (absent when only the document is
/// built) and the OpenAPI document.
pub struct Mount<'a> {
    cfg: Option<&'a mut ServiceConfig>,
    doc: &'a mut ApiDoc,
    /// Every path mounted so far, in order.
    paths: Vec<String>,
    /// The routes, when mounting into the app.
    table: RouteTable,
    endpoints: Vec<EndpointRoutes>,
}

impl<'a> Mount<'a> {
    /// Mounts into the app (once [`Mount::serve`] is called) and describes into `doc`.
    pub fn new(cfg: &'a mut ServiceConfig, doc: &'a mut ApiDoc) -> Self {
        Self {
            cfg: Some(cfg),
            doc,
            paths: Vec::new(),
            table: RouteTable::default(),
            endpoints: Vec::new(),
        }
    }

    /// Only describes (to build the OpenAPI document).
    pub fn document(doc: &'a mut ApiDoc) -> Self {
        Self {
            cfg: None,
            doc,
            paths: Vec::new(),
            table: RouteTable::default(),
            endpoints: Vec::new(),
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
        if let Some(earlier) = self.paths.iter().find(|earlier| overlaps(earlier, path)) {
            panic!("route {path} is mounted after {earlier}, which would take its requests");
        }
        self.paths.push(path.to_owned());
    }

    /// Hands the mounted routes to the app: as its default service (what the console's
    /// and the metrics' own routes do not take), with the route table as app data for the
    /// access log.
    pub fn serve(self) {
        let Some(cfg) = self.cfg else {
            return;
        };
        let table = Arc::new(self.table);
        cfg.app_data(Data::from(table.clone()));
        cfg.default_service(Router::new(table, self.endpoints));
    }
}

/// Whether `earlier` takes some of the requests `later` would where the route tree would
/// give them to `later`: both match some path (as many segments, each equal or a
/// `{placeholder}` in one of them) and at the first segment where they part, `earlier` has
/// the placeholder (the tree tries the literal first). Same shapes count too.
fn overlaps(earlier: &str, later: &str) -> bool {
    let placeholder = |s: &str| s.starts_with('{') && s.ends_with('}');
    let same = |x: &str, y: &str| x == y || (placeholder(x) && placeholder(y));
    let (a, b): (Vec<_>, Vec<_>) = (earlier.split('/').collect(), later.split('/').collect());
    let both_match_some_path = a.len() == b.len()
        && a.iter()
            .zip(&b)
            .all(|(x, y)| x == y || placeholder(x) || placeholder(y));
    let first_parting = a.iter().zip(&b).find(|(x, y)| !same(x, y));
    both_match_some_path && first_parting.is_none_or(|(x, _)| placeholder(x))
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
    /// Each method's handler, handed to the mount when the endpoint is dropped.
    routes: Vec<(Method, Route)>,
}

impl<'a> Mount<'a> {
    pub fn endpoint(&mut self, path: &str) -> Endpoint<'_, 'a> {
        self.claim(path);
        Endpoint {
            path: path.to_owned(),
            routes: Vec::new(),
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
        if self.mount.cfg.is_some() {
            self.routes.push((method, web::to(handler)));
        }
        self
    }

    method_helpers!(get GET, post POST, put PUT, patch PATCH, delete DELETE);
}

impl Drop for Endpoint<'_, '_> {
    /// The endpoint reaches the route table once all its methods are added.
    fn drop(&mut self) {
        if self.mount.cfg.is_none() {
            return;
        }
        let routes = std::mem::take(&mut self.routes);
        let number = self.mount.table.insert(&self.path);
        debug_assert_eq!(number, self.mount.endpoints.len());
        self.mount.endpoints.push(EndpointRoutes { routes });
    }
}

#[cfg(test)]
mod tests {
    use super::overlaps;

    #[test]
    fn a_placeholder_takes_a_literal_of_the_same_shape_only() {
        assert!(overlaps("/a/{id}/", "/a/bulk/"));
        assert!(overlaps("/a/{id}/", "/a/{pk}/"));
        assert!(overlaps("/a/x/", "/a/x/"));
        assert!(!overlaps("/a/bulk/", "/a/{id}/"));
        assert!(!overlaps("/a/{id}/", "/a/{id}/b/"));
        assert!(!overlaps("/a/{id}/b/", "/a/{id}/c/"));
        assert!(
            overlaps("/a/{id}/b/", "/a/x/{y}/"),
            "in part: /a/x/b/ is the earlier's in mount order, the later's in the tree"
        );
        assert!(!overlaps("/a/x/{y}/", "/a/{id}/b/"));
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
