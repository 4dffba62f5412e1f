//! API.md as a whole: every endpoint against the served OpenAPI document, and the
//! deviations black-box tests found.

mod black_box;
mod openapi;
