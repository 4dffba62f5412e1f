//! Who may reach a class's attendance and report cards: a holder of the permissions
//! (admin, principal and office by default), or a teacher assigned to that class (a live
//! teacher assignment of their live teacher profile) without them.

use uuid::Uuid;

use crate::{
    auth::permissions::Permission,
    error::{ApiError, ApiResult},
    request::Caller,
    school::assignments::Assignments,
    tenancy::TenantConn,
};

/// 403 `permission_denied` unless the caller holds every one of `needed`, or teaches
/// `class` (none: nobody teaches it).
pub fn require_class_access(
    conn: &mut TenantConn,
    caller: &Caller,
    needed: &[Permission],
    class: Option<Uuid>,
) -> ApiResult<()> {
    let Some(missing) = needed
        .iter()
        .copied()
        .find(|p| !caller.permissions.contains(*p))
    else {
        return Ok(());
    };
    if let (Some(user), Some(class)) = (caller.user_id(), class) {
        if Assignments::teaches_class(conn, user, class)? {
            return Ok(());
        }
    }
    Err(ApiError::PermissionDenied(format!(
        "you do not have permission to perform this action ({missing} is required, or an \
         assignment to teach this class)"
    )))
}
