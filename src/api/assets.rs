//! Files built into the binary and served to browsers (the console, the docs page): one
//! way to answer them, with a strong validator and the same security headers everywhere.
//!
//! Every asset is revalidated on each use (`Cache-Control: no-cache`) against its `ETag`,
//! a quoted digest of its content: a new binary serves its new files at once, and an
//! unchanged file costs a 304.

use std::sync::OnceLock;

use actix_web::{HttpRequest, HttpResponse, http::header};
use sha2::{Digest, Sha256};

/// No inline script or style, nothing from other origins, no framing.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
                       connect-src 'self'; img-src 'self' data:; base-uri 'none'; \
                       form-action 'none'; frame-ancestors 'none'";

pub struct Asset {
    content_type: &'static str,
    body: &'static str,
    etag: OnceLock<String>,
}

impl Asset {
    pub const fn new(content_type: &'static str, body: &'static str) -> Self {
        Self {
            content_type,
            body,
            etag: OnceLock::new(),
        }
    }

    /// The entity tag: a quoted digest of the content, computed once.
    pub fn etag(&self) -> &str {
        self.etag.get_or_init(|| {
            let digest = Sha256::digest(self.body.as_bytes());
            let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
            format!("\"{hex}\"")
        })
    }

    /// 200 with the content, or 304 when the client's `If-None-Match` names this version.
    pub fn respond(&self, req: &HttpRequest) -> HttpResponse {
        let tag = self.etag();
        let fresh = req
            .headers()
            .get(header::IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| matches_etag(v, tag));
        let mut res = if fresh {
            HttpResponse::NotModified()
        } else {
            HttpResponse::Ok()
        };
        res.insert_header((header::ETAG, tag))
            .insert_header((header::CACHE_CONTROL, "no-cache"))
            .insert_header((header::CONTENT_SECURITY_POLICY, CSP))
            .insert_header((header::X_FRAME_OPTIONS, "DENY"))
            .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
            .insert_header((header::REFERRER_POLICY, "no-referrer"));
        if fresh {
            res.finish()
        } else {
            res.content_type(self.content_type).body(self.body)
        }
    }
}

/// `If-None-Match` (RFC 9110 13.1.2, weak comparison): `*`, or a list of entity tags one
/// of which is `tag`. Anything that is not a quoted tag (an empty member, a bare word)
/// matches nothing.
fn matches_etag(header: &str, tag: &str) -> bool {
    let header = header.trim();
    if header == "*" {
        return true;
    }
    header.split(',').map(str::trim).any(|member| {
        let opaque = member.strip_prefix("W/").unwrap_or(member);
        opaque.len() >= 2 && opaque.starts_with('"') && opaque.ends_with('"') && opaque == tag
    })
}

#[cfg(test)]
mod tests {
    use super::{Asset, matches_etag};

    #[test]
    fn tags_are_quoted_and_follow_the_content() {
        let a = Asset::new("text/plain", "one");
        let b = Asset::new("text/plain", "two");
        assert!(a.etag().starts_with('"') && a.etag().ends_with('"'));
        assert!(a.etag().len() > 2);
        assert_ne!(a.etag(), b.etag());
    }

    #[test]
    fn only_a_listed_tag_or_a_star_matches() {
        let tag = "\"abc\"";
        assert!(matches_etag("\"abc\"", tag));
        assert!(matches_etag("W/\"abc\"", tag));
        assert!(matches_etag("\"x\", \"abc\"", tag));
        assert!(matches_etag("*", tag));
        for other in ["", " ", "x, ,y", "\"\"", "abc", "\"abd\""] {
            assert!(!matches_etag(other, tag), "{other:?}");
        }
    }
}
