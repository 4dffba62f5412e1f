//! `/api/v1/school/users/` (API.md 12): the school manages its own users, the accounts
//! whose `client` is this school. One form makes the account and what it is for (roles, a
//! teacher profile, a link to a student or guardian record); nobody grants what they do not
//! hold; users are deactivated, never deleted.

pub(super) mod rules;

use actix_web::{HttpResponse, web};
use chrono::Utc;
use uuid::Uuid;

use crate::{
    api::{
        PathIds,
        body::read_object,
        fields::describe,
        openapi::{
            ApiDoc, Auth, Op,
            schema::{self, page_of, request_schema},
        },
        pagination::{ListQuery, page_response},
        routes::Mount,
    },
    auth::{
        password::UNSET,
        permissions::{PermissionSet, Resource},
        roles::announce_change,
    },
    db::models::{NewUser, UserChangeset},
    error::{ApiError, ApiResult},
    request::{Need, SchoolRequest},
    school::{
        roles::{held_roles, lock_for_role_write},
        users::{NamedRole, SchoolUser, SchoolUserLinks, SchoolUsers},
    },
    state::AppState,
    tenancy::{TenantConn, TenantRef},
};
use rules::{NewSchoolUser, SchoolUserChanges, may_change, may_create, read_changes, read_new};

pub const PATH: &str = "/api/v1/school/users/";
const TAG: &str = "users";

const RULES: &str = "The school's own users (never a platform user or another school's: \
    404). Nobody grants what they do not hold: `roles` may name only roles whose every \
    permission the caller holds (the `teacher`, `student` and `guardian` roles may be given \
    on create by anyone who may add users), a user may be changed only by a caller holding \
    every permission of the user's roles, `teacher: true` needs `add_teacherprofile`, \
    `student` `change_student`, `guardian` `change_guardian`; otherwise 403 \
    `permission_denied` naming what is lacking. Without a password the user cannot sign in \
    until one is set. A change that would leave the school without an active holder of a \
    role with every permission answers 409.";

pub fn mount(m: &mut Mount) {
    let record = m.doc().schema::<SchoolUser>();
    m.endpoint(PATH)
        .get(list, |doc: &mut ApiDoc| {
            let page = page_of(doc, "SchoolUserPage", record.clone());
            Op::new(TAG, "List the school's users", Auth::BearerOrKey)
                .description(Some(RULES))
                .query("page", schema::integer(), "page number, from 1")
                .query(
                    "page_size",
                    schema::integer(),
                    "records per page (default 50, max 200)",
                )
                .query("search", schema::string(), "names, e-mail or phone")
                .query(
                    "role",
                    schema::string(),
                    "only holders of the role so named",
                )
                .ok(200, Some(page))
        })
        .post(
            create,
            Op::new(TAG, "Create a school user", Auth::BearerOrKey)
                .description(Some(RULES))
                .body(request_schema(&describe(read_new), true))
                .ok(201, Some(record.clone()))
                .errors(&[409]),
        );
    m.endpoint("/api/v1/school/users/{id}/")
        .get(
            retrieve,
            Op::new(TAG, "Retrieve a school user", Auth::BearerOrKey)
                .ok(200, Some(record.clone()))
                .errors(&[404]),
        )
        .patch(
            update,
            Op::new(TAG, "Update a school user", Auth::BearerOrKey)
                .description(Some(RULES))
                .body(request_schema(&describe(read_changes), false))
                .ok(200, Some(record))
                .errors(&[404, 409]),
        );
}

/// `?role=`: only the users holding the role of this name.
pub const USER_FILTERS: &[(&str, &str)] = &[("role", "only users holding the role so named")];

async fn list(request: SchoolRequest) -> ApiResult<HttpResponse> {
    let http = request.http().clone();
    let query = ListQuery::parse_filtered(&http, USER_FILTERS);
    let page_query = query.as_ref().ok().cloned();
    let (count, rows) = request
        .run(Need::Method(Resource::User), move |conn, _| {
            let query = query?;
            let (count, rows) = SchoolUsers::page(conn, &query)?;
            query.check_page(count)?;
            Ok((count, rows))
        })
        .await?;
    let query = page_query.ok_or_else(|| ApiError::InvalidQuery("bad list parameters".into()))?;
    page_response(&http, &query, count, rows)
}

async fn retrieve(request: SchoolRequest, path: PathIds) -> ApiResult<HttpResponse> {
    let user = request
        .run(Need::Method(Resource::User), move |conn, _| {
            SchoolUsers::find(conn, path.last()?)?.ok_or_else(ApiError::not_found)
        })
        .await?;
    Ok(HttpResponse::Ok().json(user))
}

/// Checks everything (permission, body, roles, who may grant them), hashes the password
/// off the executor, then writes the user and its links in one transaction.
async fn create(request: SchoolRequest, payload: web::Payload) -> ApiResult<HttpResponse> {
    let state = request.state();
    let body = read_object(request.http(), payload).await;
    let (school, actor, input, roles) = request
        .run(Need::Method(Resource::User), move |conn, caller| {
            let input = NewSchoolUser::parse(&body?)?;
            let roles = SchoolUsers::roles_named(conn, &input.roles)?;
            may_create(caller, &input, &roles)?;
            Ok((caller.tenant.clone(), caller.actor(), input, roles))
        })
        .await?;
    let password_hash = match input.password.clone() {
        Some(password) => state.hash_password(password).await?,
        None => UNSET.to_owned(),
    };
    let new = NewUser {
        id: Uuid::new_v4(),
        email: input.email,
        phone: input.phone,
        password_hash,
        first_name: input.first_name,
        last_name: input.last_name,
        is_superuser: false,
        is_staff: false,
        client_id: Some(school.id),
    };
    let links = SchoolUserLinks {
        roles,
        teacher: input.teacher,
        student: input.student,
        guardian: input.guardian,
    };
    let user = state
        .db
        .run_in_tenant(school.clone(), move |conn| {
            conn.transaction(|conn| {
                lock_for_role_write(conn)?;
                let user = SchoolUsers::create(conn, new, links, &actor)?;
                announce_change(conn)?;
                Ok(user)
            })
        })
        .await?;
    forget_roles(&state, &school);
    Ok(HttpResponse::Created().json(user))
}

async fn update(
    request: SchoolRequest,
    path: PathIds,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let state = request.state();
    let body = read_object(request.http(), payload).await;
    let (school, actor, id, changes, roles, permissions) = request
        .run(Need::Method(Resource::User), move |conn, caller| {
            let id = path.last()?;
            let current = SchoolUsers::row(conn, id, false)?.ok_or_else(ApiError::not_found)?;
            let changes = SchoolUserChanges::parse(
                &body?,
                current.email.as_deref(),
                current.phone.as_deref(),
            )?;
            let roles = match &changes.roles {
                Some(names) => Some(SchoolUsers::roles_named(conn, names)?),
                None => None,
            };
            let held = SchoolUsers::roles_of(conn, id)?;
            may_change(caller, &held, roles.as_deref())?;
            Ok((
                caller.tenant.clone(),
                caller.actor(),
                id,
                changes,
                roles,
                caller.permissions,
            ))
        })
        .await?;
    let password_hash = match changes.password.clone() {
        Some(password) => Some(state.hash_password(password).await?),
        None => None,
    };
    let user = state
        .db
        .run_in_tenant(school.clone(), move |conn| {
            conn.transaction(|conn| {
                apply_changes(conn, id, changes, password_hash, roles, &actor, permissions)
            })
        })
        .await?;
    state.user_cache.invalidate(id);
    forget_roles(&state, &school);
    Ok(HttpResponse::Ok().json(user))
}

/// Writes a checked change: the user row (a deactivation or new password ends the user's
/// sessions), then the roles, keeping the school an active administrator.
fn apply_changes(
    conn: &mut TenantConn,
    id: Uuid,
    changes: SchoolUserChanges,
    password_hash: Option<String>,
    roles: Option<Vec<NamedRole>>,
    actor: &crate::school::Actor,
    caller_permissions: PermissionSet,
) -> ApiResult<SchoolUser> {
    lock_for_role_write(conn)?;
    let current = SchoolUsers::row(conn, id, true)?.ok_or_else(ApiError::not_found)?;
    // Checked again under the lock: the user's roles may have changed while the password
    // was hashed.
    let held = SchoolUsers::roles_of(conn, id)?;
    let needed = held.iter().fold(PermissionSet::default(), |set, role| {
        set.union(PermissionSet::from_codenames(
            role.permissions.iter().map(String::as_str),
        ))
    });
    if !caller_permissions.lacking(needed).is_empty() {
        return Err(ApiError::PermissionDenied(
            "this user's roles changed meanwhile; you no longer hold them all".into(),
        ));
    }
    let deactivating = changes.is_active == Some(false) && current.is_active;
    keep_an_administrator(conn, id, deactivating, roles.as_deref())?;
    let revoke = changes.is_active == Some(false) || password_hash.is_some();
    let row_changes = UserChangeset {
        email: changes.email,
        phone: changes.phone,
        first_name: changes.first_name,
        last_name: changes.last_name,
        password_hash,
        is_active: changes.is_active,
        token_version: revoke.then_some(current.token_version + 1),
        updated_at: Some(Utc::now()),
        ..UserChangeset::default()
    };
    SchoolUsers::update(conn, id, &row_changes)?;
    if let Some(roles) = &roles {
        SchoolUsers::set_roles(conn, id, roles, actor)?;
        announce_change(conn)?;
    }
    SchoolUsers::find(conn, id)?.ok_or_else(ApiError::not_found)
}

/// 409 when the change would leave no assignment of a role holding every permission (while
/// there is one): no school locks itself out, by taking roles away or by deactivating.
fn keep_an_administrator(
    conn: &mut TenantConn,
    user: Uuid,
    deactivating: bool,
    new_roles: Option<&[NamedRole]>,
) -> ApiResult<()> {
    if !deactivating && new_roles.is_none() {
        return Ok(());
    }
    let own = SchoolUsers::role_ids(conn, user)?;
    let keeps = |role: Uuid| {
        !deactivating && new_roles.is_none_or(|roles| roles.iter().any(|r| r.id == role))
    };
    let full: Vec<_> = held_roles(conn)?
        .into_iter()
        .filter(|h| {
            PermissionSet::from_codenames(h.permissions.iter().map(String::as_str)).is_complete()
        })
        .collect();
    let before: usize = full.iter().map(|h| h.assignments.len()).sum();
    let after: usize = full
        .iter()
        .flat_map(|h| h.assignments.iter().map(move |a| (h.role_id, *a)))
        .filter(|(role, assignment)| {
            let theirs = own.iter().any(|(mine, _)| mine == assignment);
            !theirs || keeps(*role)
        })
        .count();
    if before > 0 && after == 0 {
        return Err(ApiError::Conflict(
            "this would leave the school without anyone holding a role with every \
             permission; give such a role to another user first"
                .into(),
        ));
    }
    Ok(())
}

/// Drops the school from this process's role cache (others hear `announce_change`).
fn forget_roles(state: &AppState, school: &TenantRef) {
    state
        .role_cache
        .invalidate_school(school.schema_name.as_str());
}
