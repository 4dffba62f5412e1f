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

#[derive(diesel::QueryableByName, Debug)]
struct Figures {
    #[diesel(sql_type = diesel::sql_types::Double)]
    low: f64,
    #[diesel(sql_type = diesel::sql_types::Double)]
    high: f64,
    #[diesel(sql_type = diesel::sql_types::Double)]
    spread: f64,
}

/// One figure per group of `sql`'s rows: the lowest and highest `x`, and the mean `s`.
fn figures(conn: &mut PgConnection, sql: &str) -> Figures {
    diesel::sql_query(format!(
        "SELECT min(x)::float8 AS low, max(x)::float8 AS high, avg(s)::float8 AS spread FROM ({sql}) f"
    ))
    .get_result(conn)
    .expect(sql)
}

/// Greenwood reads like a real school (issue 39): class averages and spreads of a school's,
/// marks that follow the student (a strong student is strong in most subjects), a term of
/// attendance with a few frequent absentees, surnames that do not repeat in a cycle, and the
/// principal's name on the report cards.
fn realistic(url: &str) {
    let mut conn = PgConnection::establish(url).expect("connect");
    let classes = figures(
        &mut conn,
        "SELECT avg(m.mark) AS x, stddev_pop(m.mark) AS s FROM greenwood.marks m \
         JOIN greenwood.exams e ON e.id = m.exam_id GROUP BY e.academic_class_id",
    );
    assert!(
        classes.low > 50.0 && classes.high < 75.0 && classes.high - classes.low < 15.0,
        "class averages {classes:?}"
    );
    assert!(
        classes.spread > 7.0 && classes.spread < 18.0,
        "spread {classes:?}"
    );
    // Between students, averages differ much more than one student's marks do.
    let students = figures(
        &mut conn,
        "SELECT avg(m.mark) AS x, stddev_pop(m.mark) AS s FROM greenwood.marks m \
         GROUP BY m.studentadmissionnumber",
    );
    assert!(students.high - students.low > 25.0, "{students:?}");
    assert!(students.spread < 8.0, "within one student {students:?}");
    // Attendance: every class has a term of it; most students are rarely away, a few often.
    let away = figures(
        &mut conn,
        "SELECT count(*) FILTER (WHERE status = 'absent')::float8 / count(*) AS x, \
         count(*)::float8 AS s FROM greenwood.attendance GROUP BY student_id",
    );
    assert!(away.spread >= 20.0, "school days recorded {away:?}");
    assert!(away.low < 0.05 && away.high > 0.1, "{away:?}");
    let often = count(
        &mut conn,
        "(SELECT student_id FROM greenwood.attendance GROUP BY student_id \
          HAVING count(*) FILTER (WHERE status = 'absent') > 0.1 * count(*)) o",
    );
    assert!(
        (2..=25).contains(&often),
        "{often} frequent absentees of 120"
    );
    let surnames = count(
        &mut conn,
        "(SELECT DISTINCT last_name FROM greenwood.students) s",
    );
    assert!(surnames >= 40, "{surnames} surnames");
    // Every student with term-1 marks has a class teacher's remark on the card.
    let remarks = count(&mut conn, "greenwood.report_remarks");
    assert_eq!(remarks, 120, "a remark per student");
    let signed = count(
        &mut conn,
        "greenwood.report_settings WHERE principal_signature = 'Patricia Okafor'",
    );
    assert_eq!(signed, 1);
}

fn count(conn: &mut PgConnection, sql: &str) -> i64 {
    diesel::sql_query(format!("SELECT count(*) AS n FROM {sql}"))
        .get_result::<Count>(conn)
        .expect(sql)
        .n
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

        realistic(url);

        let (ok, out, err) = cli(url, "demo", &[]);
        assert!(ok, "{out}{err}");
        assert!(out.contains("already filled"), "{out}");
        assert_eq!(counts(url), filled, "a second run adds nothing");
    })
    .await
    .expect("test");
}
