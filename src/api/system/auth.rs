//! `/api/v1/system/auth/`: login, refresh, me and logout for platform users.

use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::json;
use utoipa::openapi::{RefOr, schema::Schema};

use crate::{
    api::{
        body::read_object,
        openapi::{
            ApiDoc, Auth, Op,
            schema::{object, object_requiring, string},
        },
        routes::Mount,
    },
    auth::jwt::Layer,
    db::models::{UserView, revoked_token},
    error::{ApiError, ApiResult},
    request::{
        SystemNeed, SystemRequest,
        login::{self, LoginInput},
    },
    state::AppState,
};

const TAG: &str = "system auth";

pub fn mount(m: &mut Mount) {
    m.endpoint("/api/v1/system/auth/login/")
        .post(login_handler, |doc: &mut ApiDoc| {
            let user = doc.schema::<UserView>();
            let answer = object(vec![
                ("access", string()),
                ("refresh", string()),
                ("user", user),
            ]);
            Op::new(TAG, "Log in a platform user", Auth::None)
                .body(login_body())
                .ok(200, Some(answer))
                .errors(&[401, 403, 429])
        });
    m.endpoint("/api/v1/system/auth/refresh/").post(
        refresh,
        Op::new(TAG, "New access token from a refresh token", Auth::None)
            .body(refresh_body())
            .ok(200, Some(refreshed()))
            .errors(&[401]),
    );
    m.endpoint("/api/v1/system/auth/me/")
        .get(me, |doc: &mut ApiDoc| {
            let user = doc.schema::<UserView>();
            Op::new(TAG, "The current platform user", Auth::Bearer)
                .ok(200, Some(object(vec![("user", user)])))
        });
    m.endpoint("/api/v1/system/auth/logout/").post(
        logout,
        Op::new(TAG, "Revoke a refresh token", Auth::Bearer)
            .body(refresh_body())
            .ok(204, None),
    );
}

/// The login body of both layers.
pub fn login_body() -> RefOr<Schema> {
    let mut schema = object_requiring(
        vec![
            ("identifier", string()),
            ("email", string()),
            ("phone", string()),
            ("password", string()),
        ],
        &["password"],
    );
    if let RefOr::T(Schema::Object(object)) = &mut schema {
        object.description = Some(
            "`identifier` (an e-mail or phone); `email` or `phone` are accepted in its place"
                .into(),
        );
    }
    schema
}

/// The refresh and logout body of both layers.
pub fn refresh_body() -> RefOr<Schema> {
    object(vec![("refresh", string())])
}

/// The answer of a refresh: a new access token, and a new refresh token when rotated.
pub fn refreshed() -> RefOr<Schema> {
    object_requiring(
        vec![("access", string()), ("refresh", string())],
        &["access"],
    )
}

async fn login_handler(
    state: web::Data<AppState>,
    req: HttpRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let body = read_object(&req, payload).await?;
    let input = LoginInput::parse(&body)?;
    let user = login::verify_credentials(&state, &req, input).await?;
    if user.client_id.is_some() {
        return Err(ApiError::WrongAuthLayer(
            "school users log in through /api/v1/school/auth/login/",
        ));
    }
    let tokens = state
        .jwt
        .issue_pair(user.id, user.token_version, Layer::System, None)?;
    Ok(HttpResponse::Ok()
        .json(json!({"access": tokens.access, "refresh": tokens.refresh, "user": user.view()})))
}

async fn refresh(
    state: web::Data<AppState>,
    req: HttpRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let body = read_object(&req, payload).await?;
    let (access, refresh) = login::refresh(&state, &body, Layer::System, |_, user| {
        if user.client_id.is_some() {
            return Err(ApiError::TokenNotValid(
                "school users cannot use system tokens",
            ));
        }
        Ok(())
    })
    .await?;
    Ok(HttpResponse::Ok().json(token_answer(access, refresh)))
}

pub fn token_answer(access: String, refresh: Option<String>) -> serde_json::Value {
    match refresh {
        Some(refresh) => json!({"access": access, "refresh": refresh}),
        None => json!({"access": access}),
    }
}

async fn me(request: SystemRequest) -> ApiResult<HttpResponse> {
    let user = request
        .run(SystemNeed::PlatformUser, |_, user| Ok(user.view()))
        .await?;
    Ok(HttpResponse::Ok().json(json!({ "user": user })))
}

async fn logout(request: SystemRequest, payload: web::Payload) -> ApiResult<HttpResponse> {
    let body = read_object(request.http(), payload).await;
    let state = request.state().clone();
    request
        .run(SystemNeed::PlatformUser, move |conn, user| {
            let claims = login::revoke_refresh(&state, &body?, Layer::System, user.id)?;
            revoked_token::revoke(conn, claims.jti, claims.expires_at())?;
            Ok(())
        })
        .await?;
    Ok(HttpResponse::NoContent().finish())
}
