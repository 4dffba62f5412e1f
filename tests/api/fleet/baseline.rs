//! The baseline (`tenant_migrations/baseline.sql`, what new schools are created from) and
//! the history (`tenant_migrations/*/up.sql`, what existing schools replay) give the same
//! school schema: same tables, columns (order, types, defaults, nullability), constraints
//! and indexes, the same recorded versions and default roles, and no triggers but those
//! that keep `live_counts`.

use std::{collections::BTreeSet, sync::Arc, time::Duration};

use diesel::{RunQueryDsl, pg::PgConnection};
use school_service::{
    auth::roles,
    db::{
        Db,
        migrations::{TENANT_BASELINE, TENANT_MIGRATIONS},
    },
    tenancy::{
        SchemaName, Tenant,
        provision::{NewTenant, create_tenant},
        school_migrations::migrate_school,
    },
};
use uuid::Uuid;

use crate::helpers::TestDb;

const WHAT_TO_DO: &str = "A tenant migration changes the schema of existing schools only; \
    new schools are created from tenant_migrations/baseline.sql. Apply the same change there \
    (same names, columns in the same order) and set TENANT_BASELINE.through in \
    src/db/migrations.rs to the new migration's folder.";

#[derive(diesel::QueryableByName)]
struct Line {
    #[diesel(sql_type = diesel::sql_types::Text)]
    line: String,
}

/// One sorted line per object of `schema`'s catalog (names unqualified), plus its applied
/// versions and role names.
fn catalog(conn: &mut PgConnection, schema: &str) -> BTreeSet<String> {
    let query = format!(
        "WITH s AS (SELECT '{schema}'::regnamespace AS oid)
         SELECT 'relation ' || c.relname || ' kind ' || c.relkind::text AS line
           FROM pg_class c, s WHERE c.relnamespace = s.oid
         UNION ALL
         SELECT 'column ' || c.relname || '.' || a.attname || ' #'
                || row_number() OVER (PARTITION BY c.oid ORDER BY a.attnum) || ' '
                || format_type(a.atttypid, a.atttypmod)
                || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
                || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
           FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
           LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum, s
          WHERE c.relnamespace = s.oid AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
            AND a.attnum > 0 AND NOT a.attisdropped
         UNION ALL
         SELECT 'constraint ' || c.relname || '.' || con.conname || ' ' || pg_get_constraintdef(con.oid)
           FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid, s
          WHERE con.connamespace = s.oid
         UNION ALL
         SELECT 'index ' || pg_get_indexdef(i.indexrelid)
           FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid, s WHERE c.relnamespace = s.oid
         UNION ALL
         SELECT 'trigger ' || c.relname || '.' || t.tgname
           FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid, s
          WHERE c.relnamespace = s.oid AND NOT t.tgisinternal
         UNION ALL
         SELECT 'function ' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')'
           FROM pg_proc p, s WHERE p.pronamespace = s.oid
         UNION ALL
         SELECT 'type ' || t.typname || ' ' || t.typtype::text
           FROM pg_type t, s WHERE t.typnamespace = s.oid AND t.typtype NOT IN ('b', 'c')
         UNION ALL
         SELECT 'applied ' || version FROM {schema}.__diesel_schema_migrations
         UNION ALL
         SELECT 'role ' || name || ' ' || array_length(permissions, 1) FROM {schema}.school_roles"
    );
    diesel::sql_query(query)
        .load::<Line>(conn)
        .expect("catalog")
        .into_iter()
        .map(|row| row.line.replace(&format!("{schema}."), ""))
        .collect()
}

#[tokio::test]
async fn the_baseline_and_the_replayed_history_give_the_same_school_schema() {
    let last = TENANT_MIGRATIONS
        .iter()
        .last()
        .expect("migrations")
        .folder();
    assert_eq!(
        TENANT_BASELINE.through, last,
        "tenant migration {last} is newer than the baseline. {WHAT_TO_DO}"
    );
    tokio::task::spawn_blocking(|| {
        let test_db = TestDb::new();
        let db = Db::new(&test_db.url, 2, Duration::from_secs(10));
        let new = NewTenant::parse("from_baseline", "From the baseline", &[]).expect("tenant");
        create_tenant(&db, &new, roles::SEED).expect("create from the baseline");
        // An existing school that predates every migration: an empty schema, replayed.
        let replayed = Arc::new(Tenant {
            id: Uuid::new_v4(),
            schema_name: SchemaName::parse("from_history").expect("name"),
            name: "From the history".into(),
            is_active: true,
        });
        db.with_conn(|conn| {
            diesel::sql_query("CREATE SCHEMA from_history").execute(conn)?;
            Ok(())
        })
        .expect("schema");
        let applied = db
            .with_tenant(&replayed, |conn| Ok(migrate_school(conn, roles::SEED)))
            .expect("bind")
            .expect("replay the history");
        assert_eq!(applied.len(), TENANT_MIGRATIONS.iter().count());

        let mut conn = diesel::Connection::establish(&test_db.url).expect("connect");
        let baseline = catalog(&mut conn, "from_baseline");
        let history = catalog(&mut conn, "from_history");
        let only = |a: &BTreeSet<String>, b: &BTreeSet<String>| {
            a.difference(b).cloned().collect::<Vec<_>>().join("\n  ")
        };
        assert!(
            baseline == history,
            "tenant_migrations/baseline.sql and the replayed history differ.\n\
             only from the baseline:\n  {}\nonly from the history:\n  {}\n{WHAT_TO_DO}",
            only(&baseline, &history),
            only(&history, &baseline),
        );
        assert!(baseline.iter().any(|l| l.starts_with("column marks.mark")));
        assert!(baseline.iter().any(|l| l.starts_with("role admin")));
        let triggers: Vec<&str> = baseline
            .iter()
            .filter_map(|l| l.strip_prefix("trigger "))
            .collect();
        assert_eq!(
            triggers,
            [
                "attendance.attendance_live_delete",
                "attendance.attendance_live_insert",
                "attendance.attendance_live_truncate",
                "attendance.attendance_live_update",
                "students.students_live_delete",
                "students.students_live_insert",
                "students.students_live_truncate",
                "students.students_live_update",
            ],
            "a new school's only triggers keep live_counts (events are numbered by the application)"
        );
    })
    .await
    .expect("blocking");
}
