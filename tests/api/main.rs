//! Integration tests: black-box HTTP against a real server and a real PostgreSQL.

mod helpers;

mod access;

mod exams;
mod fairness;
mod fairness_admission;
mod hostile;

mod archive;
mod attendance;
mod auth;
mod baseline;
mod black_box;
mod bulk_writes;
mod caches;
mod class_students;
mod contract;
mod demo;
mod disclosures;
mod events;
mod fleet;
mod grade_comment_owners;
mod guardian_years;
mod guardians;
mod imports;
mod imports_marks;
mod imports_teachers;
mod isolation;
mod live_counts;
mod observability;
mod oneroster;
mod permission_sync;
mod pgbouncer;
mod placement;
mod pool_affinity;
mod proxy;
mod report_card_costs;
mod report_card_print;
mod report_cards;
mod resilience;
mod resources;
mod school_app;
mod school_day;
mod school_users;
mod security;
mod sessions;
mod settings;
mod store_actors;
mod system;
mod tenancy;
mod webhook_actions;
mod webhook_hostile;
mod webhook_import;
mod webhooks;
mod year;
