//! Change events and history written by the stores (API.md 9, 11).

mod feed;
mod numbering;
mod store_actors;
