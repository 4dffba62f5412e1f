-- Trigram indexes make `?search=` (case-insensitive substring, ILIKE '%..%') an index
-- lookup instead of a scan of every row. The extension lives in `public`, once per
-- database; school schemas name its operator class as `public.gin_trgm_ops`, so it
-- resolves whatever a connection's search_path is (PgBouncer, Citus workers included).
CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;

-- Teachers are searched by their users' names and e-mail.
CREATE INDEX users_search_trgm ON public.users
    USING gin (first_name public.gin_trgm_ops, last_name public.gin_trgm_ops, email public.gin_trgm_ops);
