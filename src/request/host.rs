//! Stage 1, host: what the request's `Host` header names, the main domain or a school's
//! address (`tenancy::host`). Only `Host` counts: `Forwarded` and `X-Forwarded-Host` are
//! client-controlled and never pick a school.
//!
//! Computed where it is needed (the edge's placement check in `api::host`, the school
//! extractor's tenant stage, OneRoster) rather than handed on: it is a comparison with the
//! main domains and one look-up in the cached directory, no allocation for a lower-case
//! `Host`.

use std::{borrow::Cow, sync::Arc};

use actix_web::http::{
    Uri,
    header::{self, HeaderMap},
};

use crate::{
    error::ApiResult,
    tenancy::{
        TenantDirectory,
        host::{self, HostKind, normalize_host},
    },
};

/// The host name of the request, lower-cased, without port or trailing dot.
pub fn request_host<'r>(headers: &'r HeaderMap, uri: &'r Uri) -> Cow<'r, str> {
    let raw = headers
        .get(header::HOST)
        .and_then(|value| value.to_str().ok())
        .or_else(|| uri.host())
        .unwrap_or("");
    normalize_host(raw)
}

/// Whether the request names a main domain. Past the edge (which refused unknown hosts)
/// any other host is a school's address.
pub fn is_main(headers: &HeaderMap, uri: &Uri, main_domains: &[String]) -> bool {
    let host = request_host(headers, uri);
    main_domains.iter().any(|main| *main == host)
}

/// What the request's host is: a main domain or an active school's address (403
/// `tenant_inactive` for an inactive school's, 404 `tenant_not_found` for an unknown one).
pub async fn kind(
    headers: &HeaderMap,
    uri: &Uri,
    main_domains: &[String],
    directory: &Arc<TenantDirectory>,
) -> ApiResult<HostKind> {
    host::resolve(&request_host(headers, uri), main_domains, directory).await
}

#[cfg(test)]
mod tests {
    use actix_web::{
        http::{Uri, header::HeaderValue},
        test::TestRequest,
    };

    use super::{is_main, request_host};

    #[test]
    fn the_host_header_names_the_host_and_the_uri_stands_in() {
        let req = TestRequest::default()
            .insert_header(("host", "Greenwood.Localhost:8000"))
            .to_http_request();
        assert_eq!(
            request_host(req.headers(), req.uri()),
            "greenwood.localhost"
        );
        let absolute: Uri = "http://main.example/api/".parse().expect("uri");
        let bare = TestRequest::default().uri("/").to_http_request();
        assert_eq!(request_host(bare.headers(), &absolute), "main.example");
        let mains = ["main.example".to_owned()];
        let forwarded = TestRequest::default()
            .insert_header(("host", HeaderValue::from_static("school.example")))
            .insert_header(("x-forwarded-host", "main.example"))
            .to_http_request();
        assert!(!is_main(forwarded.headers(), forwarded.uri(), &mains));
        let main = TestRequest::default()
            .insert_header(("host", "MAIN.example:80"))
            .to_http_request();
        assert!(is_main(main.headers(), main.uri(), &mains));
    }
}
