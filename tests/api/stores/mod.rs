//! The stores' hooks tested directly on a connection bound to a school (crates.io's model
//! tests): what one write makes another store do, and the history written with it, with
//! no HTTP in between.

mod hooks;
