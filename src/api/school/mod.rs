//! The school API, served on each school's address (or with the school selected by
//! `X-Tenant` or the token on the main domain). One module per resource.

pub mod academic_settings;
pub mod assignments;
pub mod auth;
pub mod classes;
pub mod crud;
pub mod departments;
pub mod exam_sessions;
pub mod exams;
pub mod general_settings;
pub mod grade_comments;
pub mod marks;
pub mod report_settings;
pub mod roles;
pub mod session_setup;
pub mod sessions;
pub mod students;
pub mod subjects;
pub mod teachers;

use actix_web::{HttpResponse, web};

use crate::{
    api::routes::Endpoint,
    auth::{Need, SchoolRequest, permissions::all_codenames},
    error::ApiResult,
};

pub fn configure(cfg: &mut web::ServiceConfig) {
    auth::configure(cfg);
    subjects::configure(cfg);
    crud::register::<classes::Classes>(cfg);
    crud::register::<subjects::Subjects>(cfg);
    crud::register::<departments::Departments>(cfg);
    crud::register::<sessions::Sessions>(cfg);
    crud::register::<exam_sessions::ExamSessions>(cfg);
    exams::configure(cfg);
    marks::configure(cfg);
    crud::register::<marks::Marks>(cfg);
    crud::register::<exams::Exams>(cfg);
    crud::register::<teachers::Teachers>(cfg);
    crud::register::<students::Students>(cfg);
    crud::register::<assignments::Assignments>(cfg);
    grade_comments::configure(cfg);
    crud::register::<grade_comments::GradeComments>(cfg);
    crud::register::<session_setup::SessionSetups>(cfg);
    crud::register::<general_settings::General>(cfg);
    crud::register::<academic_settings::Academic>(cfg);
    report_settings::configure(cfg);
    crud::register::<roles::Roles>(cfg);
    crud::register::<roles::RoleAssignments>(cfg);
    Endpoint::new("/api/v1/school/permissions/")
        .get(permissions)
        .register(cfg);
}

/// Every permission codename, sorted, to any authenticated caller of the school.
async fn permissions(request: SchoolRequest) -> ApiResult<HttpResponse> {
    request.run(Need::Authenticated, |_, _| Ok(())).await?;
    Ok(HttpResponse::Ok().json(all_codenames()))
}
