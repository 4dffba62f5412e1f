DROP TRIGGER api_keys_truncated ON api_keys;
DROP TRIGGER api_keys_deleted ON api_keys;
DROP TRIGGER api_keys_changed ON api_keys;
DROP FUNCTION notify_api_key_changed();
