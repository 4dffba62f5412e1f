//! Second review, finding 1: nobody grants what they do not hold, and no school can lose
//! its last administrator through the school API.

use serde_json::{Value, json};

use crate::helpers::{As, NewRecord, NewRole, TestApp, spawn_app};

const ROLES: &str = "/api/v1/school/roles/";
const ASSIGNMENTS: &str = "/api/v1/school/role-assignments/";
const ME: &str = "/api/v1/school/auth/me/";

async fn id_of_role(app: &TestApp, admin: &As, name: &str) -> String {
    let list = app.get(&format!("{ROLES}?search={name}"), admin).await;
    list.assert(200, None);
    list.body["results"]
        .as_array()
        .expect("results")
        .iter()
        .find(|r| r["name"] == name)
        .expect("role")["id"]
        .as_str()
        .expect("id")
        .to_owned()
}

async fn user_of(app: &TestApp, who: &As) -> Value {
    app.get(ME, who).await.body["user"]["id"].clone()
}

/// A role of exactly `permissions`, given to alpha's `norole` user; answers that user.
async fn delegate_with(app: &TestApp, admin: &As, permissions: &[&str]) -> As {
    let role = app
        .post(
            ROLES,
            admin,
            json!({"name": "delegate", "permissions": permissions}),
        )
        .await;
    role.assert(201, None);
    let norole = app.as_school_user("alpha", "norole").await;
    let user = user_of(app, &norole).await;
    app.post(
        ASSIGNMENTS,
        admin,
        json!({"user": user, "role": role.body["id"]}),
    )
    .await
    .assert(201, None);
    // A fresh login, so the token's permissions are read after the assignment.
    app.as_school_user("alpha", "norole").await
}

#[tokio::test]
async fn whoever_manages_assignments_cannot_make_themselves_admin() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let delegate = delegate_with(
        &app,
        &admin,
        &[
            "view_userroleassignment",
            "add_userroleassignment",
            "view_schoolrole",
            "add_schoolrole",
        ],
    )
    .await;
    let me = user_of(&app, &delegate).await;
    let admin_role = id_of_role(&app, &admin, "admin").await;
    let before = app.get(ASSIGNMENTS, &admin).await.body["count"].clone();

    let escalate = app
        .post(
            ASSIGNMENTS,
            &delegate,
            json!({"user": me, "role": admin_role}),
        )
        .await;
    escalate.assert(403, Some("permission_denied"));
    assert!(
        escalate.body["detail"]
            .as_str()
            .is_some_and(|d| d.contains("delete_student")),
        "the answer names what the caller lacks: {}",
        escalate.body
    );
    assert_eq!(app.get(ASSIGNMENTS, &admin).await.body["count"], before);
    let permissions = app.get(ME, &delegate).await.body["permissions"].clone();
    assert_eq!(
        permissions.as_array().map(Vec::len),
        Some(4),
        "{permissions}"
    );

    // A role with permissions its creator lacks: refused, nothing written.
    let roles_before = app.get(ROLES, &admin).await.body["count"].clone();
    NewRole::new("sneaky", &["delete_student", "change_mark"])
        .post(&app, &delegate)
        .await
        .assert(403, Some("permission_denied"));
    assert_eq!(app.get(ROLES, &admin).await.body["count"], roles_before);

    // Within what they hold, they may create and assign.
    let small = NewRole::new("viewer", &["view_schoolrole"])
        .post(&app, &delegate)
        .await;
    small.assert(201, None);
    let teacher = app.as_school_user("alpha", "teacher").await;
    let teacher_id = user_of(&app, &teacher).await;
    app.post(
        ASSIGNMENTS,
        &delegate,
        json!({"user": teacher_id, "role": small.body["id"]}),
    )
    .await
    .assert(201, None);
}

#[tokio::test]
async fn a_role_cannot_be_changed_beyond_or_away_from_what_its_editor_holds() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let editor = delegate_with(
        &app,
        &admin,
        &["view_schoolrole", "change_schoolrole", "view_student"],
    )
    .await;
    let teacher_role = id_of_role(&app, &admin, "teacher").await;
    let delegate_role = id_of_role(&app, &admin, "delegate").await;
    // Adding a permission the editor lacks to their own role.
    app.patch(
        &format!("{ROLES}{delegate_role}/"),
        &editor,
        json!({"permissions": ["view_schoolrole", "change_schoolrole", "view_student", "delete_student"]}),
    )
    .await
    .assert(403, Some("permission_denied"));
    // Changing a role that holds permissions the editor lacks (even only renaming it).
    app.patch(
        &format!("{ROLES}{teacher_role}/"),
        &editor,
        json!({"name": "renamed"}),
    )
    .await
    .assert(403, Some("permission_denied"));
    assert_eq!(
        app.get(&format!("{ROLES}{teacher_role}/"), &admin)
            .await
            .body["name"],
        "teacher"
    );
    // Narrowing their own role is within what they hold.
    app.patch(
        &format!("{ROLES}{delegate_role}/"),
        &editor,
        json!({"permissions": ["view_schoolrole", "change_schoolrole"]}),
    )
    .await
    .assert(200, None);
}

#[tokio::test]
async fn a_school_keeps_its_last_administrator() {
    let app = spawn_app().await;
    let admin = app.as_school_user("alpha", "admin").await;
    let admin_role = id_of_role(&app, &admin, "admin").await;
    let own = app.role_assignment_of(&admin, &admin).await;

    let removed = app.delete(&own, &admin).await;
    removed.assert(409, Some("conflict"));
    assert!(
        removed.body["detail"]
            .as_str()
            .is_some_and(|d| d.contains("last assignment")),
        "{}",
        removed.body
    );
    let emptied = app
        .patch(
            &format!("{ROLES}{admin_role}/"),
            &admin,
            json!({"permissions": []}),
        )
        .await;
    emptied.assert(409, Some("conflict"));
    let teacher_role = id_of_role(&app, &admin, "teacher").await;
    app.patch(&own, &admin, json!({"role": teacher_role}))
        .await
        .assert(409, Some("conflict"));
    // Still an administrator, with every permission.
    let me = app.get(ME, &admin).await;
    assert!(
        me.body["roles"]
            .as_array()
            .is_some_and(|r| r.contains(&json!("admin")))
    );

    // With a second administrator, the first may step down.
    let teacher = app.as_school_user("alpha", "teacher").await;
    let teacher_id = user_of(&app, &teacher).await;
    app.post(
        ASSIGNMENTS,
        &admin,
        json!({"user": teacher_id, "role": admin_role}),
    )
    .await
    .assert(201, None);
    app.delete(&own, &admin).await.assert(204, None);
}
