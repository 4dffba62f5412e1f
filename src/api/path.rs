//! The identifiers in a request's path, as one extractor for every handler.
//!
//! Extraction never fails: API.md checks path identifiers (400 `invalid_id`) only after
//! authentication and permission, so handlers parse them inside their unit of work.

use std::future::{Ready, ready};

use actix_web::{FromRequest, HttpRequest, dev::Payload};
use uuid::Uuid;

use crate::error::{ApiError, ApiResult};

/// The path's identifiers in the order they appear (`{session_pk}`, ..., `{id}`), unparsed.
#[derive(Clone, Debug)]
pub struct PathIds {
    raw: Vec<String>,
}

impl PathIds {
    pub fn of(req: &HttpRequest) -> Self {
        Self {
            raw: req.match_info().iter().map(|(_, v)| v.to_owned()).collect(),
        }
    }

    /// Every identifier, parsed; 400 `invalid_id` on the first that is not a UUID.
    pub fn parse(&self) -> ApiResult<Vec<Uuid>> {
        self.raw.iter().map(|raw| parse_id(raw)).collect()
    }

    /// The last identifier (the record's own `{id}`), parsed.
    pub fn last(&self) -> ApiResult<Uuid> {
        parse_id(self.raw.last().map_or("", String::as_str))
    }
}

impl FromRequest for PathIds {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(Ok(Self::of(req)))
    }
}

/// A path identifier; anything but a UUID is a 400 `invalid_id`.
pub fn parse_id(raw: &str) -> ApiResult<Uuid> {
    Uuid::parse_str(raw).map_err(|_| ApiError::InvalidId(raw.chars().take(64).collect()))
}
