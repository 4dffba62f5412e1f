DROP INDEX IF EXISTS public.users_search_trgm;
-- The extension stays: school schemas' indexes may still use it.
