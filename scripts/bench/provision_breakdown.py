"""What provisioning one school is made of, measured on PostgreSQL alone (one connection,
the variants interleaved school by school so they share catalog size and machine load):

  floor        CREATE SCHEMA + the baseline script, one query (implicit transaction)
  ddl/commit   the same in BEGIN .. COMMIT: the DDL's execution and the commit apart
  all rows     the floor plus everything else the service writes (versions, default
               roles, registry row and domain with their NOTIFY triggers), one query
  round trips  the same statements as the service sends them: one round trip each
  clone        a template schema cloned by a PL/pgSQL function (the alternative to a script)

plus the WAL each writes (smallest over the schools: the cluster is shared).

    provision_breakdown.py URL BASELINE_SQL COUNT
"""

import sys
import time
import uuid

import psycopg2

CLONE = """
CREATE OR REPLACE FUNCTION pg_temp.clone_schema(src text, dst text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  EXECUTE format('CREATE SCHEMA %I', dst);
  FOR r IN SELECT c.relname FROM pg_class c WHERE c.relnamespace = src::regnamespace
           AND c.relkind = 'r' ORDER BY c.oid LOOP
    EXECUTE format('CREATE TABLE %I.%I (LIKE %I.%I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)',
                   dst, r.relname, src, r.relname);
  END LOOP;
  FOR r IN SELECT con.conname, cl.relname, pg_get_constraintdef(con.oid) AS def, con.contype
           FROM pg_constraint con JOIN pg_class cl ON cl.oid = con.conrelid
           WHERE con.connamespace = src::regnamespace AND con.contype IN ('p', 'u', 'f')
           ORDER BY con.contype DESC, con.oid LOOP
    EXECUTE format('SET LOCAL search_path TO %I', dst);
    EXECUTE format('ALTER TABLE %I.%I ADD CONSTRAINT %I %s', dst, r.relname, r.conname, r.def);
  END LOOP;
  FOR r IN SELECT pg_get_indexdef(i.indexrelid) AS def FROM pg_index i
           JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relnamespace = src::regnamespace
           AND NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conindid = i.indexrelid) LOOP
    EXECUTE replace(r.def, ' ON ' || src || '.', ' ON ' || dst || '.');
  END LOOP;
END $$;
"""

VERSIONS = ["20261121000001", "20261122000001", "20261122000002", "20261122000003",
            "20261122000004", "20261123000001"]
ROLE = "('{}', ARRAY[{}])".format
CODES = ",".join(f"'view_x{i}'" for i in range(68))


def rows_sql(schema):
    tenant = uuid.uuid4()
    versions = ", ".join(f"('{v}')" for v in VERSIONS)
    roles = ", ".join(ROLE(name, CODES) for name in ("admin", "principal", "office", "teacher", "student"))
    return [
        f"INSERT INTO public.tenants (id, schema_name, name) VALUES ('{tenant}', '{schema}', 'School {schema}')",
        f"INSERT INTO public.domains (id, domain, tenant_id, is_primary, created_at) "
        f"VALUES ('{uuid.uuid4()}', '{schema}.localhost', '{tenant}', true, now())",
        f"INSERT INTO __diesel_schema_migrations (version) VALUES {versions}",
        f"INSERT INTO school_roles (id, name, permissions) SELECT gen_random_uuid(), n, p "
        f"FROM (VALUES {roles}) AS r (n, p) ON CONFLICT (name) DO NOTHING",
        f"NOTIFY school_roles, '{schema}'",
    ]


def main():
    url, baseline, count = sys.argv[1], open(sys.argv[2]).read(), int(sys.argv[3])
    conn = psycopg2.connect(url)
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute(CLONE)
    cur.execute(f"CREATE SCHEMA bd_template; SET LOCAL search_path TO bd_template;\n{baseline}")
    lsn = lambda: (cur.execute("SELECT pg_current_wal_insert_lsn() - '0/0'"), cur.fetchone()[0])[1]
    names = ["floor", "ddl", "commit", "all rows", "round trips", "clone"]
    total = {n: 0.0 for n in names}
    wal = {n: None for n in ("floor", "all rows", "clone")}
    for i in range(count):
        for variant in ("floor", "split", "all rows", "round trips", "clone"):
            schema = f"bd_{variant.replace(' ', '_')}_{i}"
            head = f"CREATE SCHEMA {schema}; SET LOCAL search_path TO {schema};\n{baseline}"
            before = lsn()
            started = time.perf_counter()
            if variant == "floor":
                cur.execute(head)
            elif variant == "split":
                cur.execute("BEGIN")
                cur.execute(head)
                total["ddl"] += time.perf_counter() - started
                started = time.perf_counter()
                cur.execute("COMMIT")
                total["commit"] += time.perf_counter() - started
                continue
            elif variant == "all rows":
                cur.execute(head + ";\n" + ";\n".join(rows_sql(schema)))
            elif variant == "round trips":
                tenant_sql, domain_sql, versions_sql, roles_sql, notify_sql = rows_sql(schema)
                cur.execute(f"SELECT set_config('search_path', '{schema}', false)")
                cur.execute("BEGIN")
                cur.execute(f"SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = '{schema}'), "
                            "EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')")
                cur.execute(tenant_sql + " RETURNING *")
                cur.execute("SELECT EXISTS (SELECT 1 FROM public.domains WHERE tenant_id = "
                            f"(SELECT id FROM public.tenants WHERE schema_name = '{schema}'))")
                cur.execute("UPDATE public.domains SET is_primary = false WHERE tenant_id = "
                            f"(SELECT id FROM public.tenants WHERE schema_name = '{schema}')")
                cur.execute(domain_sql + " RETURNING *")
                cur.execute(f"CREATE SCHEMA {schema};\n{baseline};\n{versions_sql}")
                cur.execute(roles_sql)
                cur.execute(notify_sql)
                cur.execute("COMMIT")
            else:
                cur.execute(f"SELECT pg_temp.clone_schema('bd_template', '{schema}')")
            total[variant] += time.perf_counter() - started
            if variant in wal:
                written = lsn() - before
                wal[variant] = written if wal[variant] is None else min(wal[variant], written)
    for name in names:
        print(f"{name:12} {total[name] * 1000 / count:7.1f} ms per school")
    for name, written in wal.items():
        print(f"{name:12} {written / 1024:7.0f} KiB of WAL per school (least over {count})")
    for i in range(count):
        for variant in ("floor", "split", "all_rows", "round_trips", "clone"):
            cur.execute(f"DROP SCHEMA IF EXISTS bd_{variant}_{i} CASCADE")
    cur.execute("DROP SCHEMA bd_template CASCADE")
    cur.execute("DELETE FROM public.tenants WHERE schema_name LIKE 'bd\\_%'")


if __name__ == "__main__":
    main()
