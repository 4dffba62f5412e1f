//! The school year: enrollments by session, the rollover, a guardian across years.

mod bulk_writes;
mod guardians;
mod rollover;
