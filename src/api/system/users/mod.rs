//! `/api/v1/system/users/`: platform administrators manage users of both populations.

mod new_user;

use new_user::{NewUserInput, create_user, read_new_user};

use actix_web::{HttpResponse, web};
use chrono::{DateTime, Utc};
use diesel::Connection;
use serde::Serialize;
use uuid::Uuid;

use crate::{
    api::{
        PathIds,
        body::read_object,
        fields::{Fields, Mode, any, describe, len},
        openapi::{
            ApiDoc, Auth, Op,
            schema::{page_of, request_schema, string},
        },
        pagination::{ListQuery, page, query_map},
        routes::Mount,
        system::tenants::paging,
    },
    auth::password,
    db::models::{User, UserChangeset, UserClient, UserView},
    error::{ApiError, ApiResult},
    request::{SystemNeed, SystemRequest},
};

const TAG: &str = "users";

pub fn mount(m: &mut Mount) {
    let record = m.doc().schema::<UserRecord>();
    m.endpoint("/api/v1/system/users/")
        .get(list, |doc: &mut ApiDoc| {
            let page = page_of(doc, "UserPage", record.clone());
            paging(Op::new(TAG, "List users", Auth::Bearer))
                .query("search", string(), "e-mail, phone or names")
                .query(
                    "client",
                    string(),
                    "a school's id (its users), or `platform`",
                )
                .ok(200, Some(page))
        })
        .post(
            create,
            Op::new(TAG, "Create a user", Auth::Bearer)
                .body(request_schema(&describe(read_new_user), true))
                .ok(201, Some(record.clone()))
                .errors(&[409]),
        );
    m.endpoint("/api/v1/system/users/{id}/")
        .get(
            retrieve,
            Op::new(TAG, "Retrieve a user", Auth::Bearer).ok(200, Some(record.clone())),
        )
        .patch(
            update,
            Op::new(TAG, "Update a user", Auth::Bearer)
                .body(request_schema(&describe(read_user_changes), false))
                .ok(200, Some(record)),
        );
}

#[derive(Serialize, utoipa::ToSchema)]
pub struct UserRecord {
    #[serde(flatten)]
    user: UserView,
    is_active: bool,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl From<&User> for UserRecord {
    fn from(user: &User) -> Self {
        Self {
            user: user.view(),
            is_active: user.is_active,
            created_at: user.created_at,
            updated_at: user.updated_at,
        }
    }
}

/// `?client=`: the users of one school (its id), or `platform` for platform users.
fn client_filter(http: &actix_web::HttpRequest) -> ApiResult<UserClient> {
    match query_map(http)?.get("client").map(|c| c.trim()) {
        None | Some("") => Ok(UserClient::Any),
        Some("platform") => Ok(UserClient::Platform),
        Some(raw) => Uuid::parse_str(raw)
            .map(UserClient::School)
            .map_err(|_| ApiError::InvalidQuery("client must be a school id or 'platform'".into())),
    }
}

async fn list(request: SystemRequest) -> ApiResult<HttpResponse> {
    let http = request.http().clone();
    // Query parameters are judged after authentication (API.md 2).
    let query = ListQuery::parse(&http);
    let client = client_filter(&http);
    let page_query = query.as_ref().ok().cloned();
    let (count, rows) = request
        .run(SystemNeed::PlatformAdmin, move |conn, _| {
            let (query, client) = (query?, client?);
            let (count, rows) = User::page(conn, client, query.search.as_deref(), query.span())?;
            query.check_page(count)?;
            Ok((count, rows.iter().map(UserRecord::from).collect::<Vec<_>>()))
        })
        .await?;
    let page_query =
        page_query.ok_or_else(|| ApiError::InvalidQuery("bad list parameters".into()))?;
    Ok(HttpResponse::Ok().json(page(&http, &page_query, count, rows)?))
}

async fn create(request: SystemRequest, payload: web::Payload) -> ApiResult<HttpResponse> {
    let state = request.state();
    let body = read_object(request.http(), payload).await;
    let actor = request
        .run(SystemNeed::PlatformAdmin, |_, actor| Ok(actor.clone()))
        .await?;
    let input = NewUserInput::parse(&body?)?;
    if input.is_superuser && !actor.is_superuser {
        return Err(ApiError::PermissionDenied(
            "only a superuser may create a superuser".into(),
        ));
    }
    let user = create_user(&state, input).await?;
    Ok(HttpResponse::Created().json(UserRecord::from(&user)))
}

async fn retrieve(request: SystemRequest, path: PathIds) -> ApiResult<HttpResponse> {
    let record = request
        .run(SystemNeed::PlatformAdmin, move |conn, _| {
            let user = User::find(conn, path.last()?)?.ok_or_else(ApiError::not_found)?;
            Ok(UserRecord::from(&user))
        })
        .await?;
    Ok(HttpResponse::Ok().json(record))
}

async fn update(
    request: SystemRequest,
    path: PathIds,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let state = request.state();
    let body = read_object(request.http(), payload).await;
    // Checks first (so the order of answers is auth, id, existence, body, validation);
    // the password is hashed after, off the executor, then applied.
    let (id, actor_is_superuser, changes, new_password) = request
        .run(SystemNeed::PlatformAdmin, move |conn, actor| {
            let id = path.last()?;
            let target = User::find(conn, id)?.ok_or_else(ApiError::not_found)?;
            may_change(actor.is_superuser, &target)?;
            let body = body?;
            let mut f = Fields::new(&body, Mode::Patch);
            let (changes, new_password) = read_user_changes(&mut f);
            if changes.is_superuser.is_some() && !actor.is_superuser {
                return Err(ApiError::PermissionDenied(
                    "only a superuser may set is_superuser".into(),
                ));
            }
            if changes.is_superuser == Some(true) && target.client_id.is_some() {
                f.error("is_superuser", "school users cannot be superusers");
            }
            f.finish(())?;
            Ok((target.id, actor.is_superuser, changes, new_password))
        })
        .await?;
    let password_hash = match new_password {
        Some(password) => Some(state.hash_password(password).await?),
        None => None,
    };
    let user = state
        .db
        .run(move |conn| {
            conn.transaction(|conn| {
                let current = User::find_for_update(conn, id)?.ok_or_else(ApiError::not_found)?;
                // Checked again under the transaction: the target may have become a
                // superuser while the password was being hashed.
                may_change(actor_is_superuser, &current)?;
                // Deactivation and password changes end every session the user had.
                let revoke = changes.is_active == Some(false) || password_hash.is_some();
                let changes = UserChangeset {
                    password_hash,
                    token_version: revoke.then_some(current.token_version + 1),
                    updated_at: Some(Utc::now()),
                    first_name: changes.first_name.map(|n| n.trim().to_owned()),
                    last_name: changes.last_name.map(|n| n.trim().to_owned()),
                    ..changes
                };
                Ok(User::update(conn, id, &changes)?)
            })
        })
        .await?;
    // Before answering: the next request of this process sees the change at once.
    state.user_cache.invalidate(id);
    Ok(HttpResponse::Ok().json(UserRecord::from(&user)))
}

/// The rules of a change's body (PATCH: only the given fields change; also its
/// documentation): the changes, and the new password when one is given.
fn read_user_changes(f: &mut Fields<'_>) -> (UserChangeset, Option<String>) {
    let changes = UserChangeset {
        first_name: f.required("first_name", &len(0, 150)),
        last_name: f.required("last_name", &len(0, 150)),
        is_active: f.required("is_active", &any),
        is_staff: f.required("is_staff", &any),
        is_superuser: f.required("is_superuser", &any),
        ..UserChangeset::default()
    };
    let new_password = f.required::<String>("password", &|p: &String| password::check_policy(p));
    (changes, new_password)
}

/// Only a superuser may change a superuser: otherwise a staff admin could take over a
/// superuser account (password, activation) and with it every school.
fn may_change(actor_is_superuser: bool, target: &User) -> ApiResult<()> {
    if target.is_superuser && !actor_is_superuser {
        return Err(ApiError::PermissionDenied(
            "only a superuser may change a superuser".into(),
        ));
    }
    Ok(())
}
