//! `/api/v1/system/auth/`: login, refresh, me and logout for platform users.

use actix_web::{HttpRequest, HttpResponse, web};
use serde_json::json;

use crate::{
    api::{body::read_object, routes::Endpoint},
    auth::{
        SystemNeed, SystemRequest,
        jwt::Layer,
        login::{self, LoginInput},
    },
    db::models::revoked_token,
    error::{ApiError, ApiResult},
    state::AppState,
};

pub fn configure(cfg: &mut web::ServiceConfig) {
    Endpoint::new("/api/v1/system/auth/login/")
        .post(login_handler)
        .register(cfg);
    Endpoint::new("/api/v1/system/auth/refresh/")
        .post(refresh)
        .register(cfg);
    Endpoint::new("/api/v1/system/auth/me/")
        .get(me)
        .register(cfg);
    Endpoint::new("/api/v1/system/auth/logout/")
        .post(logout)
        .register(cfg);
}

async fn login_handler(
    state: web::Data<AppState>,
    req: HttpRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let body = read_object(&req, payload, state.config.max_body_bytes).await?;
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
    let body = read_object(&req, payload, state.config.max_body_bytes).await?;
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
    let body = read_object(
        request.http(),
        payload,
        request.state().config.max_body_bytes,
    )
    .await;
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
