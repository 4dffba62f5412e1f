-- The public schema: the platform's own tables. Every school has its own schema
-- (see tenant_migrations/), registered here in `tenants`.

CREATE TABLE tenants (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    schema_name text NOT NULL UNIQUE
        CHECK (schema_name ~ '^[a-z][a-z0-9_]{0,62}$'
               AND schema_name NOT IN ('public', 'information_schema')
               AND schema_name NOT LIKE 'pg\_%'),
    name        varchar(255) NOT NULL CHECK (char_length(name) >= 1),
    is_active   boolean NOT NULL DEFAULT true,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE domains (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    domain     varchar(253) NOT NULL UNIQUE CHECK (domain = lower(domain) AND domain <> ''),
    tenant_id  uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    is_primary boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX domains_tenant_id ON domains (tenant_id);
CREATE UNIQUE INDEX domains_one_primary_per_tenant ON domains (tenant_id) WHERE is_primary;

CREATE TABLE users (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    email         varchar(254),
    phone         varchar(32) CHECK (phone ~ '^\+[0-9]{6,15}$'),
    password_hash text NOT NULL,
    first_name    varchar(150) NOT NULL DEFAULT '',
    last_name     varchar(150) NOT NULL DEFAULT '',
    is_active     boolean NOT NULL DEFAULT true,
    is_superuser  boolean NOT NULL DEFAULT false,
    is_staff      boolean NOT NULL DEFAULT false,
    -- The school the user belongs to; NULL for platform administrators.
    client_id     uuid REFERENCES tenants (id) ON DELETE CASCADE,
    -- Bumped on deactivation and password change: tokens carry the value they were
    -- issued under and are refused once it moved on.
    token_version integer NOT NULL DEFAULT 0,
    created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CHECK (email IS NOT NULL OR phone IS NOT NULL),
    CHECK (client_id IS NULL OR NOT is_superuser)
);
CREATE UNIQUE INDEX users_email_unique ON users (lower(email));
CREATE UNIQUE INDEX users_phone_unique ON users (phone);
CREATE INDEX users_client_id ON users (client_id);

-- Refresh tokens that were rotated or logged out; kept until they would have expired.
CREATE TABLE revoked_tokens (
    jti        uuid PRIMARY KEY,
    expires_at timestamptz NOT NULL
);
CREATE INDEX revoked_tokens_expires_at ON revoked_tokens (expires_at);

CREATE TABLE api_keys (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name         varchar(100) NOT NULL CHECK (char_length(name) >= 1),
    prefix       varchar(8) NOT NULL,
    -- HMAC-SHA256 of the key under the server secret, hex; the key itself is never stored.
    key_hash     text NOT NULL UNIQUE,
    tenant_id    uuid REFERENCES tenants (id) ON DELETE CASCADE,
    read_only    boolean NOT NULL DEFAULT false,
    expires_at   timestamptz,
    last_used_at timestamptz,
    created_by   uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    revoked_at   timestamptz
);

-- Servers cache the tenant directory in memory; any change here tells them to reload it.
CREATE FUNCTION notify_tenant_directory() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('tenant_directory', '');
    RETURN NULL;
END
$$;
CREATE TRIGGER tenants_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON tenants
    FOR EACH STATEMENT EXECUTE FUNCTION notify_tenant_directory();
CREATE TRIGGER domains_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON domains
    FOR EACH STATEMENT EXECUTE FUNCTION notify_tenant_directory();
