//! The school app: a single-page app for a school's staff (and students) at `/app/` of
//! every school address (`/` redirects there; the main domain has none). It uses the
//! public school API only and is served like the console (`console.rs`), whose shared
//! files (`assets/shared/`) it loads from its own path.

use actix_web::web;

use super::console::{SHARED_CSS, SHARED_JS, serve_app};
use crate::api::assets::Asset;

static INDEX_HTML: Asset = Asset::new(
    "text/html; charset=utf-8",
    include_str!("../../assets/app/index.html"),
);
static APP_JS: Asset = Asset::new(
    "text/javascript; charset=utf-8",
    include_str!("../../assets/app/app.js"),
);
static RESOURCES_JS: Asset = Asset::new(
    "text/javascript; charset=utf-8",
    include_str!("../../assets/app/resources.js"),
);
static YEAR_JS: Asset = Asset::new(
    "text/javascript; charset=utf-8",
    include_str!("../../assets/app/year.js"),
);
static MARKS_JS: Asset = Asset::new(
    "text/javascript; charset=utf-8",
    include_str!("../../assets/app/marks.js"),
);
static SETTINGS_JS: Asset = Asset::new(
    "text/javascript; charset=utf-8",
    include_str!("../../assets/app/settings.js"),
);
static FAMILY_JS: Asset = Asset::new(
    "text/javascript; charset=utf-8",
    include_str!("../../assets/app/family.js"),
);
static SCHOOL_YEAR_JS: Asset = Asset::new(
    "text/javascript; charset=utf-8",
    include_str!("../../assets/app/school_year.js"),
);
static USERS_JS: Asset = Asset::new(
    "text/javascript; charset=utf-8",
    include_str!("../../assets/app/users.js"),
);
static HISTORY_JS: Asset = Asset::new(
    "text/javascript; charset=utf-8",
    include_str!("../../assets/app/history.js"),
);
static REGISTERS_JS: Asset = Asset::new(
    "text/javascript; charset=utf-8",
    include_str!("../../assets/app/registers.js"),
);
static REPORT_CARDS_JS: Asset = Asset::new(
    "text/javascript; charset=utf-8",
    include_str!("../../assets/app/report_cards.js"),
);
static STUDENT_JS: Asset = Asset::new(
    "text/javascript; charset=utf-8",
    include_str!("../../assets/app/student.js"),
);
static DAY_CSS: Asset = Asset::new(
    "text/css; charset=utf-8",
    include_str!("../../assets/app/day.css"),
);
static INTEGRATIONS_JS: Asset = Asset::new(
    "text/javascript; charset=utf-8",
    include_str!("../../assets/app/integrations.js"),
);
static WEBHOOKS_JS: Asset = Asset::new(
    "text/javascript; charset=utf-8",
    include_str!("../../assets/app/webhooks.js"),
);
static APP_CSS: Asset = Asset::new(
    "text/css; charset=utf-8",
    include_str!("../../assets/app/app.css"),
);

/// Where the app lives; school addresses only (see `api::host`).
pub const PATH: &str = "/app/";

pub fn configure(cfg: &mut web::ServiceConfig) {
    serve_app(
        cfg,
        PATH,
        &[
            ("/", &INDEX_HTML),
            ("/app.js/", &APP_JS),
            ("/resources.js/", &RESOURCES_JS),
            ("/year.js/", &YEAR_JS),
            ("/marks.js/", &MARKS_JS),
            ("/settings.js/", &SETTINGS_JS),
            ("/family.js/", &FAMILY_JS),
            ("/school_year.js/", &SCHOOL_YEAR_JS),
            ("/users.js/", &USERS_JS),
            ("/history.js/", &HISTORY_JS),
            ("/registers.js/", &REGISTERS_JS),
            ("/report_cards.js/", &REPORT_CARDS_JS),
            ("/student.js/", &STUDENT_JS),
            ("/integrations.js/", &INTEGRATIONS_JS),
            ("/webhooks.js/", &WEBHOOKS_JS),
            ("/app.css/", &APP_CSS),
            ("/day.css/", &DAY_CSS),
            ("/shared.js/", &SHARED_JS),
            ("/shared.css/", &SHARED_CSS),
        ],
    );
}
