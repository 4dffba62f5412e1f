//! Every route, described. Generic school resources describe themselves
//! (`crud::describe`); the endpoints with their own shapes are described here.

use actix_web::http::Method;
use utoipa::openapi::{RefOr, schema::Schema};

use super::build::{ApiDoc, Auth, Op, array, boolean, integer, nullable, object, string, uuid};
use crate::{
    api::school::{
        academic_settings::Academic,
        assignments::Assignments,
        classes::Classes,
        crud,
        departments::Departments,
        exam_sessions::ExamSessions,
        exams::Exams,
        general_settings::General,
        grade_comments::GradeComments,
        marks::Marks,
        roles::{RoleAssignments, Roles},
        session_setup::SessionSetups,
        sessions::Sessions,
        students::Students,
        subjects::Subjects,
        teachers::{TeacherView, Teachers},
    },
    api::system::users::UserRecord,
    auth::api_key::ApiKeyRecord,
    db::models::{DomainRow, TenantRow, UserView},
};

pub fn all(doc: &mut ApiDoc) {
    health(doc);
    system(doc);
    school_auth(doc);
    crud::describe::<Classes>(doc);
    crud::describe::<Subjects>(doc);
    crud::describe::<Departments>(doc);
    crud::describe::<Sessions>(doc);
    crud::describe::<ExamSessions>(doc);
    crud::describe::<Exams>(doc);
    crud::describe::<Marks>(doc);
    crud::describe::<Teachers>(doc);
    crud::describe::<Students>(doc);
    crud::describe::<Assignments>(doc);
    crud::describe::<GradeComments>(doc);
    crud::describe::<SessionSetups>(doc);
    crud::describe::<General>(doc);
    crud::describe::<Academic>(doc);
    crud::describe::<Roles>(doc);
    crud::describe::<RoleAssignments>(doc);
    special(doc);
}

fn health(doc: &mut ApiDoc) {
    let status = object(vec![("status", string())]);
    doc.add(
        Method::GET,
        "/healthz/",
        Op::new("health", "Liveness (no database)", Auth::None).ok(200, Some(status.clone())),
    );
    let mut ready = Op::new("health", "Readiness: the database answers", Auth::None).ok(
        200,
        Some(object(vec![("status", string()), ("database", string())])),
    );
    ready.errors = vec![503];
    doc.add(Method::GET, "/readyz/", ready);
}

fn login_body() -> RefOr<Schema> {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Object)
        .description(Some(
            "`identifier` (an e-mail or phone); `email` or `phone` are accepted in its place",
        ))
        .property("identifier", string())
        .property("email", string())
        .property("phone", string())
        .property("password", string())
        .required("password")
        .into()
}

fn refresh_body() -> RefOr<Schema> {
    object(vec![("refresh", string())])
}

fn refreshed() -> RefOr<Schema> {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Object)
        .property("access", string())
        .required("access")
        .property("refresh", string())
        .into()
}

fn system(doc: &mut ApiDoc) {
    let user = doc.schema::<UserView>();
    let tag = "system auth";
    let login = object(vec![
        ("access", string()),
        ("refresh", string()),
        ("user", user.clone()),
    ]);
    doc.add(
        Method::POST,
        "/api/v1/system/auth/login/",
        Op::new(tag, "Log in a platform user", Auth::None)
            .body(login_body())
            .ok(200, Some(login))
            .errors(&[401, 403, 429]),
    );
    doc.add(
        Method::POST,
        "/api/v1/system/auth/refresh/",
        Op::new(tag, "New access token from a refresh token", Auth::None)
            .body(refresh_body())
            .ok(200, Some(refreshed()))
            .errors(&[401]),
    );
    doc.add(
        Method::GET,
        "/api/v1/system/auth/me/",
        Op::new(tag, "The current platform user", Auth::Bearer)
            .ok(200, Some(object(vec![("user", user)]))),
    );
    doc.add(
        Method::POST,
        "/api/v1/system/auth/logout/",
        Op::new(tag, "Revoke a refresh token", Auth::Bearer)
            .body(refresh_body())
            .ok(204, None),
    );

    let tenant = {
        let row = doc.schema::<TenantRow>();
        let domain = doc.schema::<DomainRow>();
        let view = utoipa::openapi::schema::AllOfBuilder::new()
            .item(row)
            .item(object(vec![("domains", array(domain))]))
            .build();
        doc.named("Tenant", Schema::AllOf(view).into())
    };
    let domain = doc.schema::<DomainRow>();
    let tenants = "/api/v1/system/tenants/";
    let tenant_item = "/api/v1/system/tenants/{id}/";
    let tag = "tenants";
    let page = |doc: &mut ApiDoc, name: &str, item: RefOr<Schema>| {
        doc.named(
            name,
            object(vec![
                ("count", integer()),
                ("next", nullable(string())),
                ("previous", nullable(string())),
                ("results", array(item)),
            ]),
        )
    };
    let tenant_page = page(doc, "TenantPage", tenant.clone());
    let paging = |op: Op| {
        op.query("page", integer(), "page number")
            .query("page_size", integer(), "records per page")
    };
    doc.add(
        Method::GET,
        tenants,
        paging(Op::new(tag, "List schools", Auth::Bearer))
            .query("search", string(), "name, schema name or domain")
            .ok(200, Some(tenant_page)),
    );
    let create = object(vec![
        ("schema_name", string()),
        ("name", string()),
        ("domains", array(string())),
    ]);
    doc.add(
        Method::POST,
        tenants,
        Op::new(tag, "Create (provision) a school", Auth::Bearer)
            .body(create)
            .ok(201, Some(tenant.clone()))
            .errors(&[409]),
    );
    doc.add(
        Method::GET,
        tenant_item,
        Op::new(tag, "Retrieve a school", Auth::Bearer).ok(200, Some(tenant.clone())),
    );
    let patch = utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Object)
        .property("name", string())
        .property("is_active", boolean())
        .into();
    doc.add(
        Method::PATCH,
        tenant_item,
        Op::new(tag, "Rename or (de)activate a school", Auth::Bearer)
            .body(patch)
            .ok(200, Some(tenant)),
    );
    doc.add(
        Method::DELETE,
        tenant_item,
        Op::new(
            tag,
            "Deactivate a school, or drop it (drop_schema=true, superuser)",
            Auth::Bearer,
        )
        .query(
            "drop_schema",
            boolean(),
            "drop the schema and delete the record",
        )
        .ok(204, None),
    );
    let domain_page = page(doc, "DomainPage", domain.clone());
    doc.add(
        Method::GET,
        "/api/v1/system/tenants/{id}/domains/",
        paging(Op::new(tag, "List a school's domains", Auth::Bearer)).ok(200, Some(domain_page)),
    );
    let domain_body = utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Object)
        .property("domain", string())
        .required("domain")
        .property("is_primary", boolean())
        .into();
    doc.add(
        Method::POST,
        "/api/v1/system/tenants/{id}/domains/",
        Op::new(tag, "Add a domain", Auth::Bearer)
            .body(domain_body)
            .ok(201, Some(domain))
            .errors(&[409]),
    );

    let record = doc.schema::<UserRecord>();
    let tag = "users";
    let user_page = page(doc, "UserPage", record.clone());
    doc.add(
        Method::GET,
        "/api/v1/system/users/",
        paging(Op::new(tag, "List users", Auth::Bearer))
            .query("search", string(), "e-mail, phone or names")
            .query(
                "client",
                string(),
                "a school's id (its users), or `platform`",
            )
            .ok(200, Some(user_page)),
    );
    let create = utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Object)
        .property("email", nullable(string()))
        .property("phone", nullable(string()))
        .property("password", string())
        .required("password")
        .property("first_name", string())
        .property("last_name", string())
        .property("client", nullable(uuid()))
        .property("roles", array(string()))
        .property("is_staff", boolean())
        .property("is_superuser", boolean())
        .property("teacher", boolean())
        .into();
    doc.add(
        Method::POST,
        "/api/v1/system/users/",
        Op::new(tag, "Create a user", Auth::Bearer)
            .body(create)
            .ok(201, Some(record.clone()))
            .errors(&[409]),
    );
    doc.add(
        Method::GET,
        "/api/v1/system/users/{id}/",
        Op::new(tag, "Retrieve a user", Auth::Bearer).ok(200, Some(record.clone())),
    );
    let patch = utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Object)
        .property("first_name", string())
        .property("last_name", string())
        .property("password", string())
        .property("is_active", boolean())
        .property("is_staff", boolean())
        .property("is_superuser", boolean())
        .into();
    doc.add(
        Method::PATCH,
        "/api/v1/system/users/{id}/",
        Op::new(tag, "Update a user", Auth::Bearer)
            .body(patch)
            .ok(200, Some(record)),
    );

    let key = doc.schema::<ApiKeyRecord>();
    let tag = "api keys";
    let key_page = page(doc, "ApiKeyPage", key.clone());
    doc.add(
        Method::GET,
        "/api/v1/system/api-keys/",
        paging(Op::new(tag, "List API keys (never the keys)", Auth::Bearer))
            .ok(200, Some(key_page)),
    );
    let create = utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Object)
        .property("name", string())
        .required("name")
        .property("tenant", nullable(uuid()))
        .property("read_only", boolean())
        .property("expires_at", nullable(string()))
        .into();
    let created = utoipa::openapi::schema::AllOfBuilder::new()
        .item(key.clone())
        .item(object(vec![("key", string())]))
        .build();
    let created = doc.named("ApiKeyCreated", Schema::AllOf(created).into());
    doc.add(
        Method::POST,
        "/api/v1/system/api-keys/",
        Op::new(
            tag,
            "Create an API key (the key is shown once)",
            Auth::Bearer,
        )
        .body(create)
        .ok(201, Some(created)),
    );
    doc.add(
        Method::GET,
        "/api/v1/system/api-keys/{id}/",
        Op::new(tag, "Retrieve an API key record", Auth::Bearer).ok(200, Some(key)),
    );
    doc.add(
        Method::DELETE,
        "/api/v1/system/api-keys/{id}/",
        Op::new(tag, "Revoke an API key", Auth::Bearer).ok(204, None),
    );
}

fn school_auth(doc: &mut ApiDoc) {
    let user = doc.schema::<UserView>();
    let teacher = doc.schema::<TeacherView>();
    let tenant = doc.named(
        "TenantRef",
        object(vec![
            ("id", uuid()),
            ("schema_name", string()),
            ("name", string()),
        ]),
    );
    let tag = "school auth";
    let login = object(vec![
        ("access", string()),
        ("refresh", string()),
        ("user", user.clone()),
        ("tenant", tenant.clone()),
        ("roles", array(string())),
        ("permissions", array(string())),
        ("teacher", nullable(teacher.clone())),
    ]);
    doc.add(
        Method::POST,
        "/api/v1/school/auth/login/",
        Op::new(tag, "Log in a school user", Auth::None)
            .body(login_body())
            .ok(200, Some(login))
            .errors(&[401, 403, 429]),
    );
    doc.add(
        Method::POST,
        "/api/v1/school/auth/refresh/",
        Op::new(tag, "New access token from a refresh token", Auth::None)
            .body(refresh_body())
            .ok(200, Some(refreshed()))
            .errors(&[401, 403]),
    );
    let me = utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Object)
        .property("user", nullable(user))
        .required("user")
        .property("tenant", tenant)
        .required("tenant")
        .property("roles", array(string()))
        .required("roles")
        .property("permissions", array(string()))
        .required("permissions")
        .property("teacher", nullable(teacher))
        .required("teacher")
        .property(
            "api_key",
            object(vec![
                ("id", uuid()),
                ("name", string()),
                ("read_only", boolean()),
            ]),
        )
        .into();
    doc.add(
        Method::GET,
        "/api/v1/school/auth/me/",
        Op::new(
            tag,
            "The caller and their school context",
            Auth::BearerOrKey,
        )
        .ok(200, Some(me)),
    );
    doc.add(
        Method::POST,
        "/api/v1/school/auth/logout/",
        Op::new(tag, "Revoke a refresh token", Auth::BearerOrKey)
            .body(refresh_body())
            .ok(204, None),
    );
    doc.add(
        Method::GET,
        "/api/v1/school/permissions/",
        Op::new(
            "permissions",
            "Every permission codename, sorted",
            Auth::BearerOrKey,
        )
        .ok(200, Some(array(string()))),
    );
}

fn special(doc: &mut ApiDoc) {
    let ids = utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Object)
        .property(
            "ids",
            utoipa::openapi::schema::ArrayBuilder::new()
                .items(uuid())
                .min_items(Some(1))
                .max_items(Some(1000)),
        )
        .into();
    doc.add(
        Method::DELETE,
        "/api/v1/school/subjects/bulk-soft-delete/",
        Op::new(
            "subjects",
            "Soft-delete several subjects (body `ids`, or `?ids=a,b`)",
            Auth::BearerOrKey,
        )
        .query(
            "ids",
            string(),
            "comma-separated UUIDs, instead of the body",
        )
        .body(ids)
        .ok(
            200,
            Some(object(vec![("deleted", boolean()), ("count", integer())])),
        ),
    );
    doc.add(
        Method::DELETE,
        "/api/v1/school/teacher-grade-comments/{id}/soft-delete/",
        Op::new(
            "teacher-grade-comments",
            "Soft-delete a grade comment (idempotent)",
            Auth::BearerOrKey,
        )
        .ok(200, Some(object(vec![("deleted", boolean())]))),
    );
    let mark = doc.schema::<crate::api::school::marks::Mark>();
    let confirm = crate::api::openapi::build::request_schema(
        &crate::api::fields::describe(|f| {
            crate::api::school::marks::parse_fields(f);
        }),
        true,
    );
    doc.add(
        Method::POST,
        "/api/v1/school/sessions/{session_pk}/exam-sessions/{exam_session_pk}/exams/{exam_pk}/marks/confirm-students/",
        Op::new("marks", "Create or update the mark of a student for this exam", Auth::BearerOrKey).body(confirm).ok(200, Some(mark)).errors(&[409]),
    );
    let created = object(vec![
        ("id", uuid()),
        ("subject", string()),
        ("subject_code", string()),
        ("academic_class", string()),
        ("created", boolean()),
    ]);
    let existing = object(vec![
        ("id", uuid()),
        ("subject", string()),
        ("subject_code", string()),
        ("academic_class", string()),
        ("created_by", string()),
        ("created_by_you", boolean()),
    ]);
    let answer = object(vec![
        ("success", boolean()),
        ("message", string()),
        (
            "summary",
            object(vec![
                ("total_assignments", integer()),
                ("newly_created", integer()),
                ("already_existed", integer()),
                ("created_by_you", integer()),
                ("created_by_others", integer()),
            ]),
        ),
        (
            "details",
            object(vec![
                ("created_exams", array(created)),
                ("existing_exams", array(existing)),
            ]),
        ),
        ("teacher", object(vec![("id", uuid()), ("name", string())])),
        (
            "exam_session",
            object(vec![("id", uuid()), ("name", string()), ("term", string())]),
        ),
    ]);
    let answer = doc.named("AutoCreateTeacherExams", answer);
    let any_object = utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Object)
        .into();
    doc.add(
        Method::POST,
        "/api/v1/school/sessions/{session_pk}/exam-sessions/{exam_session_pk}/exams/auto-create-teacher-exams/",
        Op::new("exams", "Create the caller's exams for their class-subject assignments", Auth::BearerOrKey).body(any_object).ok(200, Some(answer)),
    );
    let report = doc.schema::<crate::api::school::report_settings::ReportSettings>();
    let report_body = crate::api::openapi::build::request_schema(
        &crate::api::fields::describe(|f| {
            crate::api::school::report_settings::parse_input(f);
        }),
        false,
    );
    let path = "/api/v1/school/report-settings/";
    doc.add(
        Method::GET,
        path,
        Op::new(
            "report-settings",
            "The school's report settings (created with defaults on first read)",
            Auth::BearerOrKey,
        )
        .ok(200, Some(report.clone())),
    );
    doc.add(
        Method::PUT,
        path,
        Op::new(
            "report-settings",
            "Replace the report settings",
            Auth::BearerOrKey,
        )
        .body(report_body.clone())
        .ok(200, Some(report.clone())),
    );
    doc.add(
        Method::PATCH,
        path,
        Op::new(
            "report-settings",
            "Update the report settings",
            Auth::BearerOrKey,
        )
        .body(report_body)
        .ok(200, Some(report)),
    );
}
