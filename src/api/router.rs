//! Finding the endpoint for a path: a tree of path segments, walked once per request.
//!
//! actix-web tries its routes in turn, running a regular expression for each one with a
//! `{placeholder}`; a profile of a one-row read put about a tenth of the server's CPU
//! there (issue 42), and the cost grows with every route mounted. Here a path costs one
//! map look-up per segment, however many routes there are.
//!
//! A literal segment is preferred to a placeholder, with a step back when the literal
//! leads nowhere. That answers what trying the routes in mount order would, because
//! `Mount` refuses a route that overlaps an earlier one in any other way (`routes::claim`).

use std::{collections::HashMap, rc::Rc, sync::Arc};

use foldhash::fast::RandomState;

use actix_web::{
    Error, HttpMessage, Route,
    dev::{Service, ServiceFactory, ServiceRequest, ServiceResponse},
    http::Method,
};
use futures_util::future::{self, Either, LocalBoxFuture, Ready};

use crate::error::ApiError;

/// Every mounted path pattern, as a tree of segments.
#[derive(Default)]
pub struct RouteTable {
    root: Node,
    endpoints: Vec<Pattern>,
}

/// One mounted pattern: the text (`/api/v1/school/classes/{class_pk}/attendance/`) and the
/// names of its placeholders in order.
struct Pattern {
    text: String,
    params: Vec<String>,
}

#[derive(Default)]
struct Node {
    /// foldhash rather than SipHash: the keys are the mounted routes' own segments, so a
    /// path cannot add to them, and this is hashed for every segment of every request.
    literals: HashMap<Box<str>, Node, RandomState>,
    /// The child any non-empty segment leads to (a `{placeholder}`).
    param: Option<Box<Node>>,
    /// The endpoint whose pattern ends here.
    endpoint: Option<usize>,
}

/// The endpoint the router matched, kept with the request so that the access log and the
/// metrics name its route without walking the path a second time.
#[derive(Clone, Copy, Debug)]
pub struct Matched(usize);

/// The endpoint a path leads to and the path's values for its placeholders, in order.
#[derive(Debug, PartialEq, Eq)]
pub struct Found<'p> {
    pub endpoint: usize,
    pub params: Vec<&'p str>,
}

fn is_placeholder(segment: &str) -> bool {
    segment.starts_with('{') && segment.ends_with('}')
}

impl RouteTable {
    /// Adds `pattern` as the next endpoint; returns its number. A pattern added twice keeps
    /// its first endpoint (`Mount` refuses that before it gets here).
    pub fn insert(&mut self, pattern: &str) -> usize {
        let mut node = &mut self.root;
        let mut params = Vec::new();
        for segment in pattern.split('/') {
            node = if is_placeholder(segment) {
                params.push(segment[1..segment.len() - 1].to_owned());
                node.param.get_or_insert_with(Box::default)
            } else {
                node.literals.entry(segment.into()).or_default()
            };
        }
        let number = self.endpoints.len();
        node.endpoint.get_or_insert(number);
        self.endpoints.push(Pattern {
            text: pattern.to_owned(),
            params,
        });
        number
    }

    /// The endpoint `path` leads to, with its placeholders' values.
    pub fn find<'p>(&self, path: &'p str) -> Option<Found<'p>> {
        let mut params = Vec::new();
        let endpoint = self.root.walk(path.split('/'), &mut params)?;
        Some(Found { endpoint, params })
    }

    /// The pattern `path` matches (what the access log and the metrics call the route).
    pub fn pattern_of(&self, path: &str) -> Option<&str> {
        let found = self.find(path)?;
        Some(&self.endpoints[found.endpoint].text)
    }

    /// The pattern of the endpoint the router matched.
    pub fn matched_pattern(&self, matched: Matched) -> &str {
        &self.endpoints[matched.0].text
    }

    /// The names of endpoint `number`'s placeholders, in order.
    fn param_names(&self, number: usize) -> &[String] {
        &self.endpoints[number].params
    }
}

impl Node {
    fn walk<'p>(
        &self,
        mut segments: std::str::Split<'p, char>,
        params: &mut Vec<&'p str>,
    ) -> Option<usize> {
        let Some(segment) = segments.next() else {
            return self.endpoint;
        };
        if let Some(found) = (self.literals.get(segment)).and_then(|next| {
            let segments = segments.clone();
            next.walk(segments, params)
        }) {
            return Some(found);
        }
        let next = self.param.as_ref().filter(|_| !segment.is_empty())?;
        params.push(segment);
        let found = next.walk(segments, params);
        if found.is_none() {
            params.pop();
        }
        found
    }
}

/// One endpoint's handlers: each method with its route, and the methods for `Allow`.
pub struct EndpointRoutes {
    pub routes: Vec<(Method, Route)>,
}

/// The API's routes as one actix service (the app's default service: what no other route
/// took). Each worker builds its handlers from it; the table is shared.
pub struct Router {
    table: Arc<RouteTable>,
    endpoints: Vec<EndpointRoutes>,
}

impl Router {
    pub fn new(table: Arc<RouteTable>, endpoints: Vec<EndpointRoutes>) -> Self {
        Self { table, endpoints }
    }
}

type RouteService = <Route as ServiceFactory<ServiceRequest>>::Service;

/// A worker's router: the shared table and the worker's own handler services.
pub struct RouterService {
    table: Arc<RouteTable>,
    endpoints: Rc<[Vec<(Method, RouteService)>]>,
}

impl ServiceFactory<ServiceRequest> for Router {
    type Response = ServiceResponse;
    type Error = Error;
    type Config = ();
    type Service = RouterService;
    type InitError = ();
    type Future = LocalBoxFuture<'static, Result<RouterService, ()>>;

    fn new_service(&self, _: ()) -> Self::Future {
        let table = self.table.clone();
        let endpoints = self.endpoints.iter().map(|endpoint| {
            future::try_join_all(endpoint.routes.iter().map(|(method, route)| {
                let method = method.clone();
                let service = route.new_service(());
                async move { Ok::<_, ()>((method, service.await?)) }
            }))
        });
        let endpoints = future::try_join_all(endpoints);
        Box::pin(async move {
            Ok(RouterService {
                table,
                endpoints: endpoints.await?.into(),
            })
        })
    }
}

impl Service<ServiceRequest> for RouterService {
    type Response = ServiceResponse;
    type Error = Error;
    type Future = Either<
        <RouteService as Service<ServiceRequest>>::Future,
        Ready<Result<ServiceResponse, Error>>,
    >;

    actix_web::dev::always_ready!();

    fn call(&self, mut req: ServiceRequest) -> Self::Future {
        let found = self.table.find(req.match_info().as_str()).map(|found| {
            let values: Vec<String> = found.params.into_iter().map(str::to_owned).collect();
            (found.endpoint, values)
        });
        let Some((number, values)) = found else {
            return Either::Right(future::ready(Ok(
                req.error_response(ApiError::NotFound("no such path"))
            )));
        };
        req.extensions_mut().insert(Matched(number));
        let names = self.table.param_names(number);
        for (name, value) in names.iter().zip(values) {
            req.match_info_mut().add_static(name.clone(), value);
        }
        let methods = &self.endpoints[number];
        match methods.iter().find(|(method, _)| method == req.method()) {
            Some((_, service)) => Either::Left(service.call(req)),
            None => {
                let allow = methods.iter().map(|(method, _)| method.clone()).collect();
                let method = req.method().clone();
                let refused = ApiError::MethodNotAllowed { method, allow };
                Either::Right(future::ready(Ok(req.error_response(refused))))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Found, RouteTable};

    fn table(patterns: &[&str]) -> RouteTable {
        let mut table = RouteTable::default();
        for pattern in patterns {
            table.insert(pattern);
        }
        table
    }

    #[test]
    fn literals_win_over_placeholders_and_values_come_in_order() {
        let table = table(&[
            "/a/bulk/",
            "/a/{id}/",
            "/a/{id}/b/",
            "/c/{class_pk}/x/{id}/",
        ]);
        assert_eq!(table.pattern_of("/a/bulk/"), Some("/a/bulk/"));
        assert_eq!(
            table.find("/a/42/"),
            Some(Found {
                endpoint: 1,
                params: vec!["42"]
            })
        );
        assert_eq!(table.pattern_of("/a/bulk/b/"), Some("/a/{id}/b/"));
        assert_eq!(
            table.find("/c/1/x/2/").map(|f| f.params),
            Some(vec!["1", "2"])
        );
        assert_eq!(
            table.pattern_of("/a/"),
            None,
            "a placeholder is never empty"
        );
        assert_eq!(table.pattern_of("/a/1"), None, "no trailing slash");
        assert_eq!(table.pattern_of("/a/1/b/c/"), None);
        assert_eq!(table.pattern_of("/"), None);
    }

    #[test]
    fn a_literal_that_leads_nowhere_falls_back_to_the_placeholder() {
        let table = table(&["/a/bulk/x/", "/a/{id}/y/"]);
        assert_eq!(
            table.find("/a/bulk/y/"),
            Some(Found {
                endpoint: 1,
                params: vec!["bulk"]
            })
        );
    }

    /// Today's routes and `copies` more sets of them (`/api/v1/copy1-school/...`), in
    /// mount order, with a path for each (placeholders filled with a UUID).
    fn routes_times(copies: usize) -> (Vec<String>, Vec<String>) {
        let mut doc = crate::api::openapi::ApiDoc::new();
        let mut mount = crate::api::routes::Mount::document(&mut doc);
        crate::api::mount(&mut mount);
        let today = mount.paths().to_vec();
        let mut patterns = today.clone();
        for copy in 1..=copies {
            let prefix = format!("/api/v1/copy{copy}-");
            patterns.extend(today.iter().map(|p| p.replacen("/api/v1/", &prefix, 1)));
        }
        let id = "0b7e7a3c-5d5e-4a8e-9a43-2f1c6a0c9d11";
        let paths = patterns
            .iter()
            .map(|pattern| {
                let segments: Vec<&str> = pattern
                    .split('/')
                    .map(|s| if super::is_placeholder(s) { id } else { s })
                    .collect();
                segments.join("/")
            })
            .collect();
        (patterns, paths)
    }

    /// What actix-web does: each route's pattern tried in mount order.
    fn first_in_order(routes: &[actix_web::dev::ResourceDef], path: &str) -> Option<usize> {
        routes.iter().position(|route| {
            let mut matched = actix_web::dev::Path::new(path);
            route.capture_match_info(&mut matched)
        })
    }

    #[test]
    fn the_table_answers_what_trying_routes_in_mount_order_answers() {
        let (patterns, paths) = routes_times(2);
        let routes: Vec<_> = patterns
            .iter()
            .map(actix_web::dev::ResourceDef::new)
            .collect();
        let table = table(&patterns.iter().map(String::as_str).collect::<Vec<_>>());
        for path in paths
            .iter()
            .map(String::as_str)
            .chain(["/api/v1/nowhere/", "/"])
        {
            assert_eq!(
                table.find(path).map(|f| f.endpoint),
                first_in_order(&routes, path),
                "{path}"
            );
        }
    }

    /// Route lookup figures (issue 42): today's routes, and three times as many, looked up
    /// the way actix-web does and with the table. Prints nanoseconds per look-up.
    /// `cargo test --release --lib route_lookup_cost -- --ignored --nocapture`
    #[test]
    #[ignore = "a measurement: prints figures"]
    fn route_lookup_cost() {
        for copies in [0, 2] {
            let (patterns, paths) = routes_times(copies);
            let routes: Vec<_> = patterns
                .iter()
                .map(actix_web::dev::ResourceDef::new)
                .collect();
            let table = table(&patterns.iter().map(String::as_str).collect::<Vec<_>>());
            let rounds = 200;
            let time = |lookup: &dyn Fn(&str) -> Option<usize>| {
                let started = std::time::Instant::now();
                for _ in 0..rounds {
                    for path in &paths {
                        assert!(std::hint::black_box(lookup(path)).is_some());
                    }
                }
                started.elapsed().as_nanos() as f64 / (rounds * paths.len()) as f64
            };
            let in_order = time(&|path| first_in_order(&routes, path));
            let by_table = time(&|path| table.find(path).map(|f| f.endpoint));
            println!(
                "{} routes: in mount order {in_order:.0} ns, table {by_table:.0} ns per look-up",
                patterns.len()
            );
        }
    }
}
