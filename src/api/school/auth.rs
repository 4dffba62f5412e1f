//! `/api/v1/school/auth/`: login, refresh, me and logout for school users.

use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::json;

use crate::{
    api::{
        body::read_object,
        openapi::{
            ApiDoc, Auth, Op,
            schema::{array, boolean, nullable, object, object_requiring, string, uuid},
        },
        routes::Mount,
        system::auth::{login_body, refresh_body, refreshed, token_answer},
    },
    auth::jwt::Layer,
    db::models::{UserView, revoked_token},
    error::{ApiError, ApiResult},
    request::{
        Need, Principal, SchoolRequest,
        login::{self, LoginInput},
    },
    school::{
        students::{Student, Students},
        teachers::TeacherView,
    },
    tenancy::Tenant,
};

const TAG: &str = "school auth";

pub fn mount(m: &mut Mount) {
    let doc = m.doc();
    let user = doc.schema::<UserView>();
    let teacher = doc.schema::<TeacherView>();
    let student = doc.schema::<Student>();
    let tenant = doc.named(
        "TenantRef",
        object(vec![
            ("id", uuid()),
            ("schema_name", string()),
            ("name", string()),
        ]),
    );
    m.endpoint("/api/v1/school/auth/login/").post(
        login_handler,
        Op::new(TAG, "Log in a school user", Auth::None)
            .body(login_body())
            .ok(
                200,
                Some(object(vec![
                    ("access", string()),
                    ("refresh", string()),
                    ("user", user.clone()),
                    ("tenant", tenant.clone()),
                    ("roles", array(string())),
                    ("permissions", array(string())),
                    ("teacher", nullable(teacher.clone())),
                ])),
            )
            .errors(&[401, 403, 429]),
    );
    m.endpoint("/api/v1/school/auth/refresh/").post(
        refresh,
        Op::new(TAG, "New access token from a refresh token", Auth::None)
            .body(refresh_body())
            .ok(200, Some(refreshed()))
            .errors(&[401, 403]),
    );
    let me_answer = object_requiring(
        vec![
            ("user", nullable(user)),
            ("tenant", tenant),
            ("roles", array(string())),
            ("permissions", array(string())),
            ("teacher", nullable(teacher)),
            ("student", nullable(student)),
            (
                "api_key",
                object(vec![
                    ("id", uuid()),
                    ("name", string()),
                    ("read_only", boolean()),
                ]),
            ),
        ],
        &[
            "user",
            "tenant",
            "roles",
            "permissions",
            "teacher",
            "student",
        ],
    );
    m.endpoint("/api/v1/school/auth/me/").get(
        me,
        Op::new(
            TAG,
            "The caller and their school context",
            Auth::BearerOrKey,
        )
        .description(Some(
            "`teacher`: the caller's live teacher profile; `student`: the live student record \
             linked to the caller's account (their own page in the school app); each null \
             when there is none.",
        ))
        .ok(200, Some(me_answer)),
    );
    m.endpoint("/api/v1/school/auth/logout/")
        .post(logout, |_: &mut ApiDoc| {
            Op::new(TAG, "Revoke a refresh token", Auth::BearerOrKey)
                .body(refresh_body())
                .ok(204, None)
        });
}

fn tenant_json(tenant: &Tenant) -> serde_json::Value {
    json!({"id": tenant.id, "schema_name": tenant.schema_name, "name": tenant.name})
}

async fn login_handler(
    request: SchoolRequest,
    req: HttpRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let tenant = request.tenant_for_login().await?;
    let state = request.state();
    let body = read_object(&req, payload).await?;
    let input = LoginInput::parse(&body)?;
    let user = login::verify_credentials(&state, &req, input).await?;
    match user.client_id {
        None => {
            return Err(ApiError::WrongAuthLayer(
                "platform administrators log in through /api/v1/system/auth/login/",
            ));
        }
        Some(client) if client != tenant.id => {
            return Err(ApiError::TenantMismatch(
                "this user belongs to another school",
            ));
        }
        Some(_) => {}
    }
    // Paced once the credentials are good: failed logins spend the login throttle's
    // per-address count, never the school's rate (issue 35).
    request.pace(&tenant).await?;
    let tokens = state.jwt.issue_pair(
        user.id,
        user.token_version,
        Layer::School,
        Some(tenant.schema_name.as_str()),
    )?;
    let tenant_view = tenant_json(&tenant);
    let role_cache = state.role_cache.clone();
    let (user, role_names, permissions, teacher) = state
        .db
        .run_in_tenant(tenant, move |conn| {
            let grants = role_cache.get_or_load(conn, user.id)?;
            let (role_names, permissions) = (grants.roles, grants.permissions);
            let teacher = TeacherView::of_user(conn, &user)?;
            Ok((user.view(), role_names, permissions.codenames(), teacher))
        })
        .await?;
    Ok(HttpResponse::Ok().json(json!({
        "access": tokens.access,
        "refresh": tokens.refresh,
        "user": user,
        "tenant": tenant_view,
        "roles": &*role_names,
        "permissions": permissions,
        "teacher": teacher,
    })))
}

async fn refresh(
    request: SchoolRequest,
    req: HttpRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let state = request.state();
    let tenant = request.tenant_for_login().await;
    let body = read_object(&req, payload).await?;
    // On the main domain without X-Tenant the token's own school is used.
    let tenant = match tenant {
        Ok(tenant) => Some(tenant),
        Err(ApiError::TenantNotFound) if request.is_main_without_selection() => None,
        Err(err) => return Err(err),
    };
    let directory = state.directory.clone();
    // Not paced on the school: after the check the old refresh token is spent, and a 429
    // then would lose the new pair; a failed refresh spends its address's budget instead.
    let (access, refresh) = login::refresh(&state, &body, Layer::School, move |claims, user| {
        let schema = claims.tenant.as_deref().unwrap_or_default();
        let tenant = match tenant {
            Some(tenant) => tenant,
            None => directory
                .load_blocking()?
                .by_schema(schema)
                .cloned()
                .ok_or(ApiError::TenantNotFound)?,
        };
        if !tenant.is_active {
            return Err(ApiError::TenantInactive);
        }
        if schema != tenant.schema_name.as_str() || user.client_id != Some(tenant.id) {
            return Err(ApiError::TenantMismatch(
                "this token was issued for another school",
            ));
        }
        Ok(())
    })
    .await
    .map_err(|refused| request.failed_authentication(refused))?;
    Ok(HttpResponse::Ok().json(token_answer(access, refresh)))
}

async fn me(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let body = request
        .run(Need::Authenticated, |conn, caller| {
            let tenant = tenant_json(&caller.tenant);
            let permissions = caller.permissions.codenames();
            Ok(match &caller.principal {
                Principal::User(user) => json!({
                    "user": user.view(),
                    "tenant": tenant,
                    "roles": &*caller.roles,
                    "permissions": permissions,
                    "teacher": TeacherView::of_user(conn, user)?,
                    "student": Students::live_of_user(conn, user.id)?,
                }),
                Principal::ApiKey(key) => json!({
                    "user": null,
                    "tenant": tenant,
                    "roles": [],
                    "permissions": permissions,
                    "teacher": null,
                    "student": null,
                    "api_key": {"id": key.id, "name": key.name, "read_only": key.read_only},
                }),
            })
        })
        .await?;
    Ok(HttpResponse::Ok().json(body))
}

async fn logout(
    request: SchoolRequest,
    req: HttpRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let state = request.state();
    let body = read_object(&req, payload).await;
    request
        .run(Need::Authenticated, move |conn, caller| {
            let user_id = caller.user_id().ok_or_else(|| {
                ApiError::validation("refresh", "API keys have no session to log out of")
            })?;
            let claims = login::revoke_refresh(&state, &body?, Layer::School, user_id)?;
            revoked_token::revoke(conn.pg(), claims.jti, claims.expires_at())?;
            Ok(())
        })
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
