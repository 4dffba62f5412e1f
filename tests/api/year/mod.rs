//! The school year: enrollments by session, the rollover, a guardian across years.

mod guardians;
mod rollover;
