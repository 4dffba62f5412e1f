//! `school-service demo`: the demo schools with a school year and one account per role,
//! and running it again adds nothing.

use diesel::{Connection, PgConnection, RunQueryDsl, sql_types::BigInt};

use crate::helpers::{TestDb, cli};

#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// How many rows of each demo table Greenwood and Riverside hold, and their accounts.
fn counts(url: &str) -> Vec<(String, i64)> {
    let mut conn = PgConnection::establish(url).expect("connect");
    let mut count = |sql: &str| {
        diesel::sql_query(format!("SELECT count(*) AS n FROM {sql}"))
            .get_result::<Count>(&mut conn)
            .expect(sql)
            .n
    };
    let mut all = Vec::new();
    for table in [
        "academic_sessions",
        "academic_sessions WHERE is_active",
        "exam_sessions",
        "subjects",
        "departments",
        "academic_classes",
        "students",
        "teacher_profiles",
        "teacher_assignments",
        "exams",
        "marks",
        "teacher_grade_comments",
        "general_settings",
        "academic_settings",
    ] {
        for school in ["greenwood", "riverside"] {
            all.push((
                format!("{school}.{table}"),
                count(&format!("{school}.{table}")),
            ));
        }
    }
    for school in ["greenwood", "riverside"] {
        let users = count(&format!("public.users WHERE email LIKE '%@{school}.test'"));
        all.push((format!("{school} users"), users));
    }
    all
}

#[tokio::test]
async fn the_demo_fills_a_school_year_once() {
    tokio::task::spawn_blocking(|| {
        let db = TestDb::new();
        let url = db.url.as_str();
        let (ok, out, err) = cli(url, "demo", &[]);
        assert!(ok, "{out}{err}");
        assert!(
            out.contains("http://greenwood.localhost:8000/app/"),
            "{out}"
        );
        for role in ["admin", "principal", "teacher", "office", "student"] {
            assert!(out.contains(&format!("{role}@greenwood.test")), "{out}");
        }
        let filled = counts(url);
        let of = |name: &str| filled.iter().find(|(n, _)| n == name).expect(name).1;
        assert_eq!(of("greenwood.academic_sessions"), 2);
        assert_eq!(of("greenwood.academic_sessions WHERE is_active"), 1);
        assert_eq!(of("greenwood.exam_sessions"), 3);
        assert_eq!(of("greenwood.subjects"), 8);
        assert_eq!(of("greenwood.departments"), 3);
        assert_eq!(of("greenwood.academic_classes"), 4);
        assert_eq!(of("greenwood.students"), 120);
        assert_eq!(of("greenwood.teacher_profiles"), 6);
        assert_eq!(of("greenwood.teacher_assignments"), 32);
        assert_eq!(of("greenwood.exams"), 32, "term 1: one exam per assignment");
        assert_eq!(
            of("greenwood.marks"),
            900,
            "all but the demo teacher's two sheets"
        );
        assert_eq!(of("greenwood users"), 10);
        assert!(of("riverside.students") > 0 && of("riverside.students") < 120);
        assert!(of("riverside.marks") > 0);

        let (ok, out, err) = cli(url, "demo", &[]);
        assert!(ok, "{out}{err}");
        assert!(out.contains("already filled"), "{out}");
        assert_eq!(counts(url), filled, "a second run adds nothing");
    })
    .await
    .expect("test");
}
