//! School resources through the school API: the generic CRUD path and each resource's own
//! rules (attendance, exams, sessions, settings, guardians, the school's users).

mod attendance;
mod class_students;
mod crud;
mod exams;
mod grade_comment_owners;
pub(crate) mod guardians;
mod one_shape;
mod school_day;
mod school_users;
mod sessions;
mod settings;
