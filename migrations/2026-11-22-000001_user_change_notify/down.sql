DROP TRIGGER users_truncated ON users;
DROP TRIGGER users_changed ON users;
DROP FUNCTION notify_user_changed();
