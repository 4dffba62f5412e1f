ALTER TABLE public.users DROP COLUMN last_login;
