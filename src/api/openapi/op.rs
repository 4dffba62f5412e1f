//! `Op`: one operation as the document describes it, and `Describe`, how an endpoint says
//! what its operation is when it is mounted.

use super::ApiDoc;
use utoipa::openapi::{RefOr, schema::Schema};

/// Who may call an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Auth {
    None,
    /// A bearer token (platform endpoints).
    Bearer,
    /// A bearer token or an `X-API-KEY` (school endpoints).
    BearerOrKey,
}

/// One operation, described.
pub struct Op {
    pub summary: String,
    /// Rules a client should know beyond the schemas (Markdown).
    pub description: Option<String>,
    pub tag: String,
    pub auth: Auth,
    pub query: Vec<(&'static str, RefOr<Schema>, &'static str)>,
    pub body: Option<RefOr<Schema>>,
    /// The success status and its body (`None` for no body).
    pub ok: (u16, Option<RefOr<Schema>>),
    /// The success body's media type: JSON, unless the operation answers a file.
    pub ok_media_type: &'static str,
    /// Another media type the success may come as, a binary file (content negotiation:
    /// report cards as `application/pdf`).
    pub ok_also: Option<&'static str>,
    /// Error statuses this operation can answer (problem+json).
    pub errors: Vec<u16>,
}

impl Op {
    pub fn new(tag: impl Into<String>, summary: impl Into<String>, auth: Auth) -> Self {
        let errors = match auth {
            Auth::None => vec![400, 404, 413, 415, 503],
            _ => vec![400, 401, 403, 404, 413, 415, 503],
        };
        Self {
            summary: summary.into(),
            description: None,
            tag: tag.into(),
            auth,
            query: Vec::new(),
            body: None,
            ok: (200, None),
            ok_media_type: "application/json",
            ok_also: None,
            errors,
        }
    }

    pub fn description(mut self, text: Option<&str>) -> Self {
        self.description = text.map(str::to_owned);
        self
    }

    pub fn body(mut self, schema: RefOr<Schema>) -> Self {
        self.body = Some(schema);
        self
    }

    pub fn ok(mut self, status: u16, schema: Option<RefOr<Schema>>) -> Self {
        self.ok = (status, schema);
        self
    }

    /// A success answer that is a file download (`application/octet-stream`, binary).
    pub fn ok_file(mut self, status: u16) -> Self {
        self.ok = (status, Some(super::schema::binary()));
        self.ok_media_type = "application/octet-stream";
        self
    }

    /// The success may also be a file of `media_type`, chosen by the `Accept` header.
    pub fn also_file(mut self, media_type: &'static str) -> Self {
        self.ok_also = Some(media_type);
        self
    }

    pub fn query(
        mut self,
        name: &'static str,
        schema: RefOr<Schema>,
        description: &'static str,
    ) -> Self {
        self.query.push((name, schema, description));
        self
    }

    pub fn errors(mut self, extra: &[u16]) -> Self {
        for status in extra {
            if !self.errors.contains(status) {
                self.errors.push(*status);
            }
        }
        self.errors.sort_unstable();
        self
    }
}

/// How an endpoint's operation is described when it is mounted: an [`Op`], a function
/// that builds one with the document (to register the schemas it refers to), or
/// [`Undocumented`] for routes that are not API operations.
pub trait Describe {
    fn describe(self, doc: &mut ApiDoc) -> Option<Op>;
}

impl Describe for Op {
    fn describe(self, _: &mut ApiDoc) -> Option<Op> {
        Some(self)
    }
}

impl<F: FnOnce(&mut ApiDoc) -> Op> Describe for F {
    fn describe(self, doc: &mut ApiDoc) -> Option<Op> {
        Some(self(doc))
    }
}

/// Not an API operation: the document leaves it out.
pub struct Undocumented;

impl Describe for Undocumented {
    fn describe(self, _: &mut ApiDoc) -> Option<Op> {
        None
    }
}
