//! The school API, served on each school's address (or with the school selected by
//! `X-Tenant` or the token on the main domain). One module per resource, each with its
//! `mount`; the records and their queries live in `crate::school`.

pub mod academic_settings;
pub mod assignments;
pub mod attendance;
pub mod attendance_ops;
pub mod auth;
pub mod class_access;
pub mod class_students;
pub mod classes;
pub mod crud;
pub mod departments;
pub mod disclosures;
pub mod enrollments;
pub mod events;
pub mod exam_sessions;
pub mod exams;
pub mod general_settings;
pub mod grade_comments;
pub mod guardians;
pub mod imports;
pub mod marks;
pub mod oauth_clients;
pub mod oauth_token;
pub mod report_cards;
pub mod report_remarks;
pub mod report_settings;
pub mod roles;
pub mod rollover;
pub mod session_setup;
pub mod sessions;
pub mod students;
pub mod subjects;
pub mod teachers;
pub mod users;
pub mod webhook_actions;
pub mod webhooks;

use actix_web::HttpResponse;

use crate::{
    api::{
        openapi::{
            Auth, Op,
            schema::{array, string},
        },
        routes::Mount,
    },
    auth::permissions::all_codenames,
    error::ApiResult,
    request::{Need, SchoolRequest},
};

pub fn mount(m: &mut Mount) {
    auth::mount(m);
    classes::mount(m);
    class_students::mount(m);
    subjects::mount(m);
    departments::mount(m);
    sessions::mount(m);
    exam_sessions::mount(m);
    exams::mount(m);
    marks::mount(m);
    teachers::mount(m);
    students::mount(m);
    enrollments::mount(m);
    rollover::mount(m);
    imports::mount(m);
    attendance::mount(m);
    attendance_ops::mount(m);
    assignments::mount(m);
    grade_comments::mount(m);
    session_setup::mount(m);
    general_settings::mount(m);
    academic_settings::mount(m);
    report_settings::mount(m);
    report_cards::mount(m);
    report_remarks::mount(m);
    roles::mount(m);
    guardians::mount(m);
    disclosures::mount(m);
    events::mount(m);
    webhooks::mount(m);
    webhook_actions::mount(m);
    oauth_clients::mount(m);
    oauth_token::mount(m);
    users::mount(m);
    m.endpoint("/api/v1/school/permissions/").get(
        permissions,
        Op::new(
            "permissions",
            "Every permission codename, sorted",
            Auth::BearerOrKey,
        )
        .ok(200, Some(array(string()))),
    );
}

/// Every permission codename, sorted, to any authenticated caller of the school.
async fn permissions(request: SchoolRequest) -> ApiResult<HttpResponse> {
    request.run(Need::Authenticated, |_, _| Ok(())).await?;
    Ok(HttpResponse::Ok().json(all_codenames()))
}
