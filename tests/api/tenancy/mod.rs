//! Addresses and tenant selection, and a connection bound to one school only.

mod hosts;
mod isolation;
mod school_app;
