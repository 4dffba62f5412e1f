//! The platform side over many schools: the system API and the command line, `migrate`,
//! the baseline schema, placement on Citus, the demo schools.

mod baseline;
mod demo;
mod migrate;
mod placement;
mod system;
