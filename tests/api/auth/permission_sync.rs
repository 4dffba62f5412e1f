//! Permissions that grow: codenames added to the catalogue after a school was created reach
//! its default roles at `migrate`, once; what an administrator removes later stays removed.

use std::time::Duration;

use diesel::{QueryableByName, RunQueryDsl, sql_types};
use school_service::{
    auth::roles,
    db::Db,
    tenancy::{
        TenantRef,
        fleet::{FleetOptions, migrate_schools},
        school_migrations::migrate_school,
    },
};

use crate::helpers::{TestDb, school_at_version};

/// The last tenant migration before attendance and report cards were catalogued.
const BEFORE_ATTENDANCE: &str = "20261123000001";

#[derive(QueryableByName)]
struct Codes {
    #[diesel(sql_type = sql_types::Array<sql_types::Text>)]
    permissions: Vec<String>,
}

fn role(db: &Db, tenant: &TenantRef, name: &str) -> Vec<String> {
    db.with_tenant(tenant, |conn| {
        Ok(diesel::sql_query(format!(
            "SELECT permissions FROM school_roles WHERE name = '{name}'"
        ))
        .get_result::<Codes>(conn.pg())?
        .permissions)
    })
    .expect("role")
}

fn sql(db: &Db, tenant: &TenantRef, statement: &str) {
    db.with_tenant(tenant, |conn| {
        diesel::sql_query(statement).execute(conn.pg())?;
        Ok(())
    })
    .expect(statement);
}

/// A school as it stood before attendance existed: schema at `BEFORE_ATTENDANCE`, and the
/// default roles of that time (the principal's `delete_student` removed by its admin).
fn old_school(db: &Db) -> TenantRef {
    let tenant = school_at_version(db, "old_school", BEFORE_ATTENDANCE);
    let old_catalogue = "SELECT array_agg(a || '_' || r ORDER BY a || '_' || r) \
        FROM unnest(ARRAY['view','add','change','delete']) a, \
             unnest(ARRAY['academicsession','examsession','exam','mark','department','subject', \
                          'academicclass','student','teacherprofile','teacherassignment', \
                          'teachergradecomment','sessionsetup','generalsettings', \
                          'academicsettings','reportsettings','schoolrole', \
                          'userroleassignment']) r";
    sql(
        db,
        &tenant,
        &format!(
            "INSERT INTO school_roles (name, permissions) VALUES \
             ('admin', ({old_catalogue})), \
             ('principal', array_remove(({old_catalogue}), 'delete_student')), \
             ('office', ARRAY['view_student']), ('teacher', ARRAY['view_exam'])"
        ),
    );
    tenant
}

#[tokio::test]
async fn codenames_catalogued_after_a_school_was_created_reach_its_default_roles_once() {
    tokio::task::spawn_blocking(|| {
        let test_db = TestDb::new();
        let db = Db::new(&test_db.url, 2, Duration::from_secs(10));
        let school = old_school(&db);
        assert!(!role(&db, &school, "admin").contains(&"view_attendance".to_owned()));

        let applied = db
            .with_tenant(&school, |conn| Ok(migrate_school(conn, roles::SEED)))
            .expect("bind")
            .expect("migrate");
        assert!(!applied.is_empty());
        let new = [
            "add_attendance",
            "change_attendance",
            "delete_attendance",
            "view_attendance",
            "view_report_card",
        ];
        for name in ["admin", "principal"] {
            let codes = role(&db, &school, name);
            assert!(
                new.iter().all(|c| codes.contains(&(*c).to_owned())),
                "{name}: {codes:?}"
            );
            let mut sorted = codes.clone();
            sorted.sort();
            assert_eq!(codes, sorted, "kept sorted");
        }
        // The old 68, and everything catalogued since (attendance, report cards, guardians,
        // events, webhooks, history, ...).
        assert_eq!(
            role(&db, &school, "admin").len(),
            school_service::auth::permissions::all_codenames().len()
        );
        // What the principal's administrator removed before stays removed.
        assert!(!role(&db, &school, "principal").contains(&"delete_student".to_owned()));
        let office = role(&db, &school, "office");
        assert!(
            new.iter().all(|c| office.contains(&(*c).to_owned())),
            "{office:?}"
        );
        // view_student, the attendance five, the four guardian codenames, view_event and
        // the four of enrollments (issue 38), view_user and add_user (API.md 12).
        assert!(office.contains(&"view_student".to_owned()) && office.len() == 17);
        assert!(office.contains(&"view_event".to_owned()));
        assert!(office.contains(&"add_enrollment".to_owned()));
        // The guardian role came with its codenames: made with its default permissions.
        let guardian = role(&db, &school, "guardian");
        assert!(guardian.contains(&"view_mark".to_owned()) && guardian.len() == 8);
        // Teachers reach attendance through their class assignments, not their role; they
        // read enrollments.
        assert_eq!(
            role(&db, &school, "teacher"),
            vec!["view_enrollment".to_owned(), "view_exam".to_owned()]
        );

        // Granted once: an administrator's later removal survives another migrate.
        sql(
            &db,
            &school,
            "UPDATE school_roles SET permissions = array_remove(permissions, 'add_attendance') \
             WHERE name = 'office'",
        );
        db.with_tenant(&school, |conn| Ok(migrate_school(conn, roles::SEED)))
            .expect("bind")
            .expect("migrate again");
        assert!(!role(&db, &school, "office").contains(&"add_attendance".to_owned()));

        // A codename new to a school that has every migration: the fleet visits it anyway.
        sql(
            &db,
            &school,
            "DELETE FROM known_permissions WHERE codename = 'view_report_card'",
        );
        sql(
            &db,
            &school,
            "UPDATE school_roles SET permissions = array_remove(permissions, 'view_report_card')",
        );
        let report = migrate_schools(
            &db,
            std::slice::from_ref(&school),
            FleetOptions { jobs: 1, canary: 0 },
            roles::SEED,
            &|| {},
        )
        .expect("fleet");
        assert_eq!(report.failed(), 0, "{}", report.summary());
        for name in ["admin", "principal", "office"] {
            assert!(
                role(&db, &school, name).contains(&"view_report_card".to_owned()),
                "{name}"
            );
        }
        assert!(!role(&db, &school, "office").contains(&"add_attendance".to_owned()));
    })
    .await
    .expect("blocking");
}
