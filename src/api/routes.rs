//! `Endpoint`: one path with its method handlers, answering 405 with an `Allow` header
//! (as problem+json) for any other method.

use actix_web::{
    FromRequest, Handler, HttpRequest, HttpResponse, Resource, Responder,
    http::Method,
    web::{self, ServiceConfig},
};

use crate::error::ApiError;

pub struct Endpoint {
    resource: Resource,
    allow: Vec<Method>,
}

impl Endpoint {
    pub fn new(path: &str) -> Self {
        Self {
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

    pub fn get<F, Args>(self, handler: F) -> Self
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.on(Method::GET, handler)
    }

    pub fn post<F, Args>(self, handler: F) -> Self
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.on(Method::POST, handler)
    }

    pub fn put<F, Args>(self, handler: F) -> Self
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.on(Method::PUT, handler)
    }

    pub fn patch<F, Args>(self, handler: F) -> Self
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.on(Method::PATCH, handler)
    }

    pub fn delete<F, Args>(self, handler: F) -> Self
    where
        F: Handler<Args>,
        Args: FromRequest + 'static,
        F::Output: Responder + 'static,
    {
        self.on(Method::DELETE, handler)
    }

    pub fn register(self, cfg: &mut ServiceConfig) {
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
