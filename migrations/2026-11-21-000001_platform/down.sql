DROP TABLE api_keys;
DROP TABLE revoked_tokens;
DROP TABLE users;
DROP TABLE domains;
DROP TABLE tenants;
DROP FUNCTION notify_tenant_directory();
