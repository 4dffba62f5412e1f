//! Typed requests of a school's people and rights: accounts made by the school
//! (`/users/`), roles and role assignments, grade comments.

// The answers carry the fields a test may assert on; each test reads a few.
#![allow(dead_code)]

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{As, NewRecord, PASSWORD, TestApp, item};

pub const SCHOOL_USERS: &str = "/api/v1/school/users/";
pub const ROLES: &str = "/api/v1/school/roles/";
pub const ROLE_ASSIGNMENTS: &str = "/api/v1/school/role-assignments/";
pub const GRADE_COMMENTS: &str = "/api/v1/school/teacher-grade-comments/";

/// An account of the school, made through its users API (API.md 12).
#[derive(Serialize, Default)]
pub struct NewSchoolUser<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phone: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_name: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_name: Option<&'a str>,
    /// Role names; none leaves `roles` out of the body.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub roles: &'a [&'a str],
    /// Give the user a teacher profile.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub teacher: Option<bool>,
    /// The student record the account belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub student: Option<&'a str>,
}

#[derive(Deserialize, Debug, Clone)]
pub struct SchoolUser {
    pub id: String,
    pub email: Option<String>,
    pub phone: Option<String>,
    pub roles: Vec<String>,
    pub teacher: Option<String>,
    pub student: Option<String>,
}

posted_to!(NewSchoolUser => SchoolUser at SCHOOL_USERS);

#[derive(Serialize, Default)]
pub struct NewRole<'a> {
    pub name: &'a str,
    pub permissions: &'a [&'a str],
}

#[derive(Deserialize, Debug, Clone)]
pub struct Role {
    pub id: String,
    pub name: String,
    pub permissions: Vec<String>,
}

posted_to!(NewRole => Role at ROLES);

impl<'a> NewRole<'a> {
    pub fn new(name: &'a str, permissions: &'a [&'a str]) -> Self {
        Self { name, permissions }
    }
}

#[derive(Serialize, Default)]
pub struct NewRoleAssignment<'a> {
    pub user: &'a str,
    pub role: &'a str,
}

#[derive(Deserialize, Debug, Clone)]
pub struct RoleAssignment {
    pub id: String,
    pub user: String,
    pub role: String,
}

posted_to!(NewRoleAssignment => RoleAssignment at ROLE_ASSIGNMENTS);

/// A teacher's comment for a band of marks.
#[derive(Serialize, Default)]
pub struct NewGradeComment<'a> {
    pub grade: &'a str,
    pub min_mark: i64,
    pub max_mark: i64,
    pub comment: &'a str,
}

#[derive(Deserialize, Debug, Clone)]
pub struct GradeComment {
    pub id: String,
    pub grade: String,
    pub comment: String,
    pub min_mark: Value,
    pub max_mark: Value,
}

posted_to!(NewGradeComment => GradeComment at GRADE_COMMENTS);

impl<'a> NewGradeComment<'a> {
    /// `comment` for the marks in `marks` (both ends included).
    pub fn new(grade: &'a str, marks: std::ops::RangeInclusive<i64>, comment: &'a str) -> Self {
        Self {
            grade,
            min_mark: *marks.start(),
            max_mark: *marks.end(),
            comment,
        }
    }
}

impl TestApp {
    /// Logged in as a new office user of `school` (`office@{school}.test`, Olive Office),
    /// made by the school's `admin` through the users API.
    pub async fn office_of(&self, school: &str, admin: &As) -> As {
        let email = format!("office@{school}.test");
        NewSchoolUser {
            email: Some(&email),
            password: Some(PASSWORD),
            first_name: Some("Olive"),
            last_name: Some("Office"),
            roles: &["office"],
            ..Default::default()
        }
        .create(self, admin)
        .await;
        self.as_school_user_at(school, &email).await
    }
}
