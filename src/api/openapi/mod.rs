//! The OpenAPI 3.1 document's building blocks: `ApiDoc` collects operations and component
//! schemas; each API module describes its operations where it mounts them (see
//! `api::routes::Mount`), request bodies by recording the very parsers that read them
//! (`fields::describe`) and responses by the serialised types (`ToSchema`). This module
//! knows no route: `api::document` assembles the document.

pub mod build;
pub mod naming;
pub mod op;
pub mod schema;

pub use build::ApiDoc;
pub use op::{Auth, Describe, Op, Undocumented};
