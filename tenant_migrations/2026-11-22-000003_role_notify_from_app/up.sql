-- Role changes are announced by the application (`NOTIFY school_roles` in the same
-- transaction as the write): on Citus a school's tables live on a worker, where these
-- triggers' notifications would reach no listener.
DROP TRIGGER user_role_assignments_changed ON user_role_assignments;
DROP TRIGGER school_roles_changed ON school_roles;
DROP FUNCTION notify_school_roles();
