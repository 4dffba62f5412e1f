//! OneRoster 1.2 (issue 37): the school's records as OneRoster entities, its integration
//! clients, and the gradebook writes, which go through the exams' and marks' stores.
//! HTTP (the REST binding's paths, query parameters, errors) is the API layer's business.

pub mod categories;
pub mod clients;
pub mod csv;
pub mod gradebook;
pub mod gradebook_writes;
pub mod people;
pub mod roster;
pub mod sessions;
