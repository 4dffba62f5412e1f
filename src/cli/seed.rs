//! `tenant create-many`: many schools for load tests (the demo schools: `demo.rs`).

use std::{
    io::IsTerminal,
    sync::atomic::{AtomicBool, AtomicUsize, Ordering},
};

use super::ops::{Ops, blocking};
use crate::{
    auth::accounts::{self, NewAccount},
    db::{Db, models::TenantRow},
    error::ApiError,
    tenancy::{
        fleet::in_parallel,
        provision::{self, NewTenant},
    },
};

/// `tenant create-many`: schools `<prefix>1..<prefix><count>`, `jobs` at a time.
pub(super) struct ManySchools {
    pub prefix: String,
    pub count: u32,
    pub domain_suffix: String,
    pub jobs: u32,
}

pub(super) async fn create_many(
    ops: &Ops,
    many: ManySchools,
    teacher_password: Option<String>,
) -> anyhow::Result<()> {
    // One hash serves every generated teacher: bcrypt embeds its salt, so it verifies.
    let password_hash = match teacher_password {
        Some(password) => {
            crate::auth::password::check_policy(&password)
                .map_err(|m| anyhow::anyhow!("password: {m}"))?;
            Some(ops.hash(&password).await?)
        }
        None => None,
    };
    let schools = (1..=many.count)
        .map(|i| {
            let schema = format!("{}{i}", many.prefix);
            let domain = format!("{schema}.{}", many.domain_suffix);
            NewTenant::parse(&schema, &format!("School {schema}"), &[domain])
        })
        .collect::<Result<Vec<_>, _>>()?;
    // Exactly `jobs` connections: one per school being created.
    let db = Db::with_mode(
        ops.config.database_url.expose(),
        many.jobs,
        ops.config.db_pool_timeout,
        ops.config.db_pool_mode,
    );
    let show_progress = std::io::stderr().is_terminal();
    let (done, failed) = (AtomicUsize::new(0), AtomicBool::new(false));
    let started = std::time::Instant::now();
    let results = blocking(move || {
        let create = |new: &NewTenant| -> Result<bool, ApiError> {
            let row = match provision::create_tenant(&db, new, crate::auth::roles::SEED) {
                Ok(row) => row,
                Err(ApiError::Conflict(_)) => return Ok(false),
                Err(err) => return Err(err),
            };
            if let Some(hash) = &password_hash {
                add_generated_teacher(&db, &row, hash.clone())?;
            }
            Ok(true)
        };
        Ok::<_, ApiError>(in_parallel(schools.len(), many.jobs as usize, |index| {
            // After a failure, the schools not yet started are left alone.
            if failed.load(Ordering::Relaxed) {
                return Ok(false);
            }
            let result = create(&schools[index]);
            failed.fetch_or(result.is_err(), Ordering::Relaxed);
            let done = done.fetch_add(1, Ordering::Relaxed) + 1;
            if show_progress {
                eprint!("\rprovisioning schools: {done}/{}", schools.len());
            }
            result
        }))
    })
    .await?;
    if show_progress {
        eprintln!();
    }
    let mut created = 0u32;
    for result in results {
        created += u32::from(result?);
    }
    let elapsed = started.elapsed();
    let per_school = elapsed.as_secs_f64() * 1000.0 / f64::from(created.max(1));
    println!(
        "created {created} school(s) in {:.1} s ({per_school:.1} ms per school)",
        elapsed.as_secs_f64()
    );
    Ok(())
}

/// `teacher@<schema>.test` with the teacher role and a teacher profile.
fn add_generated_teacher(db: &Db, row: &TenantRow, password_hash: String) -> Result<(), ApiError> {
    let school =
        std::sync::Arc::new(crate::tenancy::Tenant::try_from(row).map_err(ApiError::internal)?);
    let teacher = NewAccount {
        email: Some(format!("teacher@{}.test", row.schema_name)),
        phone: None,
        password_hash,
        first_name: "Teacher".into(),
        last_name: row.schema_name.clone(),
        school: Some(school),
        roles: vec!["teacher".into()],
        is_staff: false,
        is_superuser: false,
        teacher: true,
    };
    accounts::create(db, teacher).map(|_| ())
}
