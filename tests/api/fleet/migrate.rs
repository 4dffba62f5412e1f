//! `migrate` over many schools (a failing school, re-runs, `--schema`, `--canary`, `--jobs`)
//! and `tenant status`, through the real binary. Schools are put behind by undoing tenant
//! migration 2026-11-22-000004 (two columns of `user_role_assignments`) in them; a school
//! "fails" when its version row is gone but the columns are still there, so the migration
//! finds what it creates already present.

use diesel::{Connection, RunQueryDsl, pg::PgConnection};

use school_service::db::migrations::TENANT_MIGRATIONS;

use crate::helpers::{TestDb, cli};

const AUDIT: &str = "20261122000004";
const DELETED_INACTIVE: &str = "20261122000002";

fn sql(url: &str, statements: &str) {
    let mut conn = PgConnection::establish(url).expect("connect");
    diesel::connection::SimpleConnection::batch_execute(&mut conn, statements).expect(statements);
}

fn count(url: &str, query: &str) -> i64 {
    #[derive(diesel::QueryableByName)]
    struct Count {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let mut conn = PgConnection::establish(url).expect("connect");
    diesel::sql_query(format!("SELECT ({query})::bigint AS n"))
        .get_result::<Count>(&mut conn)
        .expect(query)
        .n
}

fn forget(url: &str, schema: &str, version: &str) {
    sql(
        url,
        &format!("DELETE FROM {schema}.__diesel_schema_migrations WHERE version = '{version}'"),
    );
}

/// The school is behind by migration 000004 and will apply it cleanly.
fn behind(url: &str, schema: &str) {
    forget(url, schema, AUDIT);
    undo_audit_columns(url, schema);
}

fn undo_audit_columns(url: &str, schema: &str) {
    sql(
        url,
        &format!(
            "ALTER TABLE {schema}.user_role_assignments DROP COLUMN updated_by, DROP COLUMN updated_at"
        ),
    );
}

/// The school is behind by migration 000004, whose columns it already has: it will fail.
fn failing(url: &str, schema: &str) {
    forget(url, schema, AUDIT);
}

fn has_version(url: &str, schema: &str, version: &str) -> bool {
    count(
        url,
        &format!(
            "SELECT count(*) FROM {schema}.__diesel_schema_migrations WHERE version = '{version}'"
        ),
    ) == 1
}

fn has_audit_columns(url: &str, schema: &str) -> bool {
    count(
        url,
        &format!(
            "SELECT count(*) FROM information_schema.columns WHERE table_schema = '{schema}' \
             AND table_name = 'user_role_assignments' AND column_name IN ('updated_by', 'updated_at')"
        ),
    ) == 2
}

/// `tenant status --pending`: (schema, pending count) of the schools behind.
fn pending(url: &str) -> Vec<(String, usize)> {
    let (ok, out, err) = cli(url, "tenant status --pending", &[]);
    assert!(ok, "{err}");
    out.lines()
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            assert_eq!(fields.len(), 3, "{line}");
            let count = fields[2].trim_end_matches(" pending").parse().expect(line);
            (fields[0].to_owned(), count)
        })
        .collect()
}

fn schools(list: &[(&str, usize)]) -> Vec<(String, usize)> {
    list.iter().map(|(s, n)| ((*s).to_owned(), *n)).collect()
}

#[tokio::test]
async fn a_failing_school_is_reported_and_left_unchanged_while_the_others_migrate() {
    tokio::task::spawn_blocking(|| {
        let db = TestDb::new();
        let url = db.url.as_str();
        // alpha: two migrations behind; the first would apply, the second fails.
        forget(url, "alpha", DELETED_INACTIVE);
        sql(
            url,
            "ALTER TABLE alpha.academic_sessions DROP CONSTRAINT academic_sessions_deleted_inactive",
        );
        failing(url, "alpha");
        behind(url, "beta");
        // Every school, with its latest applied version and how many it lacks.
        let (ok, out, _) = cli(url, "tenant status", &[]);
        let latest = TENANT_MIGRATIONS.iter().last().expect("migrations").version();
        assert!(ok && out.contains(&format!("alpha\t{latest}\t2 pending")), "{out}");
        assert_eq!(pending(url), schools(&[("alpha", 2), ("beta", 1)]));

        let (ok, out, err) = cli(url, "migrate", &[]);
        assert!(!ok, "a failed school fails the run: {out}");
        assert!(err.contains("1 school(s) failed"), "{err}");
        assert!(
            out.contains(&format!(
                "failed: alpha at {AUDIT}: column \"updated_by\" of relation \"user_role_assignments\" already exists"
            )),
            "{out}"
        );
        assert!(out.contains("2 schools: 0 up to date, 1 migrated, 1 failed"), "{out}");
        // alpha is untouched: the migration before the failing one was rolled back with it.
        assert!(!has_version(url, "alpha", DELETED_INACTIVE));
        assert!(!has_version(url, "alpha", AUDIT));
        assert_eq!(
            count(
                url,
                "SELECT count(*) FROM pg_constraint WHERE conname = 'academic_sessions_deleted_inactive' \
                 AND connamespace = 'alpha'::regnamespace"
            ),
            0
        );
        // beta went on.
        assert!(has_version(url, "beta", AUDIT) && has_audit_columns(url, "beta"));
        assert_eq!(pending(url), schools(&[("alpha", 2)]));

        // Fixed by hand, the re-run applies only what is missing.
        undo_audit_columns(url, "alpha");
        let (ok, out, err) = cli(url, "migrate", &[]);
        assert!(ok, "{out}{err}");
        assert!(out.contains("2 schools: 1 up to date, 1 migrated, 0 failed"), "{out}");
        assert!(has_version(url, "alpha", DELETED_INACTIVE) && has_audit_columns(url, "alpha"));
        assert!(pending(url).is_empty());
        let (ok, out, _) = cli(url, "migrate", &[]);
        assert!(ok && out.contains("2 schools: 2 up to date, 0 migrated, 0 failed"), "{out}");
    })
    .await
    .expect("blocking");
}

#[tokio::test]
async fn a_failing_canary_stops_the_run_and_schema_selects_schools() {
    tokio::task::spawn_blocking(|| {
        let db = TestDb::new();
        let url = db.url.as_str();
        let (ok, out, err) = cli(url, "tenant create-many --prefix c --count 3 --jobs 2", &[]);
        assert!(ok && out.contains("created 3 school(s)"), "{out}{err}");
        // In schema-name order alpha is the first canary; it fails.
        failing(url, "alpha");
        for school in ["beta", "c1", "c2", "c3"] {
            behind(url, school);
        }
        let (ok, out, _) = cli(url, "migrate --canary 2 --jobs 2", &[]);
        assert!(!ok);
        assert!(
            out.contains(
                "5 schools: 0 up to date, 1 migrated, 1 failed, 3 not attempted (a canary school failed)"
            ),
            "{out}"
        );
        assert_eq!(
            pending(url),
            schools(&[("alpha", 1), ("c1", 1), ("c2", 1), ("c3", 1)])
        );

        let (ok, out, err) = cli(url, "migrate --schema c1 --schema c2", &[]);
        assert!(ok && out.contains("2 schools: 0 up to date, 2 migrated, 0 failed"), "{out}{err}");
        assert_eq!(pending(url), schools(&[("alpha", 1), ("c3", 1)]));
        let (ok, _, err) = cli(url, "migrate --schema nosuch", &[]);
        assert!(!ok && err.contains("no school has schema nosuch"), "{err}");

        // Canaries are chosen among the schools behind: with alpha fixed, it and c3.
        undo_audit_columns(url, "alpha");
        let (ok, out, err) = cli(url, "migrate --canary 1 --jobs 3", &[]);
        assert!(ok && out.contains("5 schools: 3 up to date, 2 migrated, 0 failed"), "{out}{err}");
        assert!(pending(url).is_empty());
        for school in ["alpha", "beta", "c1", "c2", "c3"] {
            assert!(has_version(url, school, AUDIT) && has_audit_columns(url, school));
        }
    })
    .await
    .expect("blocking");
}
