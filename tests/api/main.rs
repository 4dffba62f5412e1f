//! Integration tests: black-box HTTP against a real server and a real PostgreSQL, one
//! directory per area (README "Tests").

mod helpers;

mod archive;
mod auth;
mod contract;
mod events;
mod fleet;
mod imports;
mod oneroster;
mod reliability;
mod report_cards;
mod resources;
mod security;
mod stores;
mod tenancy;
mod webhooks;
mod year;
