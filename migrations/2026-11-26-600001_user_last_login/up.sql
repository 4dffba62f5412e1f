-- When a user last signed in (school users API, API.md 12); null until their first login.
ALTER TABLE public.users ADD COLUMN last_login TIMESTAMPTZ NULL;
