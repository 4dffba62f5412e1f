DROP TRIGGER user_role_assignments_changed ON user_role_assignments;
DROP TRIGGER school_roles_changed ON school_roles;
DROP FUNCTION notify_school_roles();
