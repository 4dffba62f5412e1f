//! School data: the tables of each school's schema, the records read from them, the forms
//! written to them (`NewX` for create and replace, `XChanges` for patch) and their queries,
//! as methods that take a connection bound to the school (`&mut TenantConn`).
//!
//! The diesel schema of school tables (`schema`) is private to this module: a school table
//! cannot be named anywhere else, so no code can query one over a connection that is not
//! bound to a school.
//!
//! - `store`: the `Store` trait, one implementation per resource (a unit type such as
//!   `classes::Classes`): its scoped reads and writes, as default methods, and the hooks
//!   where a resource differs;
//! - `table`: the statements a store is made of (`Table`), implemented by `school_table!`
//!   from a description of the table's columns, and `school_forms!`, which declares a
//!   table's `NewX` and `XChanges` from one field list.

mod schema;

pub mod demo;
pub mod disclosure_log;
pub mod disclosures;

pub mod actor;
pub mod change_log;

pub mod academic_settings;
pub mod assignments;
pub mod attendance;
pub mod attendance_ops;
pub mod classes;
pub mod departments;
pub mod enrollments;
pub mod events;
pub mod exam_sessions;
pub mod exams;
pub mod family;
pub mod general_settings;
pub mod grade_comments;
pub mod guardians;
pub mod history;
pub mod imports;
pub mod links;
pub mod list_filter;
pub mod marks;
pub mod oneroster;
pub mod report_cards;
pub mod report_remarks;
pub mod report_settings;
pub mod roles;
pub mod rollover;
pub mod session_setup;
pub mod sessions;
pub mod store;
pub mod students;
pub mod subjects;
pub mod table;
pub mod teachers;
pub mod users;
pub mod webhook_actions;
pub mod webhook_pending;
pub mod webhook_queue;
pub mod webhooks;

pub use list_filter::ListFilter;
pub use store::{FromRows, Store};
pub use table::{Actor, Incomplete, Table, Target, Targets};

use uuid::Uuid;

use crate::{error::ApiResult, tenancy::TenantConn};

/// Which page of a list, narrowed how.
#[derive(Debug, Clone)]
pub struct ListQuery {
    /// From 1.
    pub page: i64,
    pub page_size: i64,
    pub include_deleted: bool,
    /// A case-insensitive substring of the table's name-like columns.
    pub search: Option<String>,
    /// The resource's own filters, typed (`api::list_filter` reads them).
    pub filter: ListFilter,
}

impl ListQuery {
    pub fn offset(&self) -> i64 {
        (self.page - 1) * self.page_size
    }

    /// The rows of the page asked for.
    pub fn span(&self) -> crate::db::page::Span {
        crate::db::page::Span {
            offset: self.offset(),
            limit: self.page_size,
        }
    }
}

/// Whether `user_id` is a user of the connection's school (students, teachers and role
/// holders must be).
pub fn is_school_user(conn: &mut TenantConn, user_id: Uuid) -> ApiResult<bool> {
    let school = conn.tenant().id;
    Ok(crate::db::models::User::find(conn.pg(), user_id)?
        .is_some_and(|u| u.client_id == Some(school)))
}
