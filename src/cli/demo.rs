//! `school-service demo`: Greenwood High and Riverside Academy, each with one account per
//! role and a school year to look at (`school::demo`). Running it again adds nothing: an
//! existing school, user or school year is left as it is.

use super::ops::{CliAccount, Ops, blocking};
use crate::{
    db::models::{Identifier, User},
    error::ApiError,
    school::demo::{self, DemoSchool},
    tenancy::{
        Tenant, TenantRef,
        provision::{self, NewTenant},
    },
};

pub(super) const DEMO_PASSWORD: &str = "demo-password-123";

/// One demo account: (e-mail local part, first name, last name, role, phone).
type Account = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    Option<&'static str>,
);

struct Demo {
    schema: &'static str,
    school: DemoSchool,
    /// The first teacher is `teacher@`: the one whose marks sheet is left to fill in.
    accounts: &'static [Account],
}

const SCHOOLS: [Demo; 2] = [
    Demo {
        schema: "greenwood",
        school: demo::GREENWOOD,
        accounts: &[
            ("admin", "Alex", "Morgan", "admin", None),
            ("principal", "Patricia", "Okafor", "principal", None),
            ("office", "Omar", "Haddad", "office", None),
            ("student", "Amara", "Adams", "student", None),
            (
                "teacher",
                "Grace",
                "Mensah",
                "teacher",
                Some("+15550100101"),
            ),
            ("david.kim", "David", "Kim", "teacher", None),
            ("lucia.ferreira", "Lucia", "Ferreira", "teacher", None),
            ("samuel.osei", "Samuel", "Osei", "teacher", None),
            ("hannah.berg", "Hannah", "Berg", "teacher", None),
            ("ravi.patel", "Ravi", "Patel", "teacher", None),
        ],
    },
    Demo {
        schema: "riverside",
        school: demo::RIVERSIDE,
        accounts: &[
            ("admin", "Rita", "Holm", "admin", None),
            ("principal", "Peter", "Lund", "principal", None),
            ("office", "Olive", "Shaw", "office", None),
            ("student", "Sami", "Berg", "student", None),
            ("teacher", "Tom", "Reed", "teacher", None),
            ("amy.cole", "Amy", "Cole", "teacher", None),
            ("jon.park", "Jon", "Park", "teacher", None),
        ],
    },
];

pub(super) async fn demo(ops: &Ops) -> anyhow::Result<()> {
    for demo in &SCHOOLS {
        let (schema, name) = (demo.schema, demo.school.name);
        let tenant = match ops.find_school(schema).await? {
            Some(tenant) => tenant,
            None => {
                let db = ops.db.clone();
                let new = NewTenant::parse(schema, name, &[format!("{schema}.localhost")])?;
                let row =
                    blocking(move || provision::create_tenant(&db, &new, crate::auth::roles::SEED))
                        .await?;
                TenantRef::new(Tenant::try_from(&row)?)
            }
        };
        for (local, first, last, role, phone) in demo.accounts {
            let email = format!("{local}@{}", demo.school.mail);
            let user = CliAccount {
                email: Some(&email),
                phone: *phone,
                password: DEMO_PASSWORD,
                first_name: first,
                last_name: last,
                school: Some(tenant.clone()),
                roles: vec![(*role).to_owned()],
                superuser: false,
                teacher: *role == "teacher",
            };
            if !user_exists(ops, &email).await? {
                ignore_existing(ops.create_account(user).await)?;
            }
        }
        let db = ops.db.clone();
        let school = &demo.school;
        let filled =
            blocking(move || db.with_tenant(&tenant, |conn| demo::fill(conn, school))).await?;
        let what = if filled {
            "filled"
        } else {
            "already filled; left as it is"
        };
        println!("demo school '{name}' at {schema}.localhost: {what}");
    }
    const ROOT: &str = "root@platform.test";
    let superuser = CliAccount {
        email: Some(ROOT),
        phone: None,
        password: DEMO_PASSWORD,
        first_name: "",
        last_name: "",
        school: None,
        roles: Vec::new(),
        superuser: true,
        teacher: false,
    };
    if !user_exists(ops, ROOT).await? {
        ignore_existing(ops.create_account(superuser).await)?;
    }
    print_accounts(ops.config.bind_addr.port());
    Ok(())
}

/// Skips the password hashing of accounts made by an earlier run.
async fn user_exists(ops: &Ops, email: &str) -> anyhow::Result<bool> {
    let db = ops.db.clone();
    let identifier = Identifier::Email(email.to_owned());
    blocking(move || {
        db.with_conn(|conn| Ok(User::find_by_identifier(conn, &identifier)?.is_some()))
    })
    .await
}

fn ignore_existing<T>(result: anyhow::Result<T>) -> anyhow::Result<()> {
    match result {
        Err(err) if !matches!(err.downcast_ref(), Some(ApiError::Conflict(_))) => Err(err),
        _ => Ok(()),
    }
}

/// How to reach the demo: the app's address and one account per role.
pub(super) fn print_accounts(port: u16) {
    println!("\nThe school app: http://greenwood.localhost:{port}/app/");
    println!("  (riverside.localhost too; *.localhost reaches this machine in most browsers)");
    println!("Demo accounts, password '{DEMO_PASSWORD}':");
    for role in ["admin", "principal", "teacher", "office", "student"] {
        println!("  {role:<10} {role}@greenwood.test   {role}@riverside.test");
    }
    println!("  the teacher also signs in by phone: +15550100101");
    println!("Platform console: http://127.0.0.1:{port}/admin/ (root@platform.test)");
    println!("The API from a shell:");
    println!(
        "  curl -s -H 'Host: greenwood.localhost' -H 'Content-Type: application/json' \\\n    -d '{{\"identifier\": \"admin@greenwood.test\", \"password\": \"{DEMO_PASSWORD}\"}}' \\\n    http://127.0.0.1:{port}/api/v1/school/auth/login/"
    );
}
