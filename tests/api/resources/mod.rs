//! School resources through the school API: the generic CRUD path and each resource's own
//! rules (attendance, exams, sessions, settings, guardians, the school's users).

mod attendance;
mod class_students;
mod crud;
mod exams;
mod grade_comment_owners;
mod one_shape;
pub(crate) mod guardians;
mod school_day;
mod school_users;
mod sessions;
mod settings;
