//! The `school-service` command line: serve, migrate, provision schools and users.

use std::io::IsTerminal;

use actix_web::web;
use clap::{Args, Parser, Subcommand};

use crate::{
    api::system::users::create_user_from_cli,
    config::Config,
    db::{migrations::migrate_public, models::TenantRow},
    error::ApiError,
    startup::{AppState, Application},
    tenancy::{
        TenantDirectory,
        provision::{self, NewTenant},
    },
};

#[derive(Parser, Debug)]
#[command(
    name = "school-service",
    version,
    about = "Multi-tenant school management API server"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Serve the HTTP API on BIND_ADDR.
    Serve,
    /// Migrate the public schema, then every school schema.
    Migrate,
    /// Manage schools.
    #[command(subcommand)]
    Tenant(TenantCommand),
    /// Manage users.
    #[command(subcommand)]
    User(UserCommand),
    /// Create two demo schools with users, and print how to log in.
    Demo,
}

#[derive(Subcommand, Debug)]
pub enum TenantCommand {
    /// Create a school: its schema, tables, default roles and domains.
    Create {
        #[arg(long)]
        schema: String,
        #[arg(long)]
        name: String,
        #[arg(long = "domain")]
        domains: Vec<String>,
    },
    /// Create many schools `<prefix>1..<prefix>N` (domains `<prefix>I.<domain-suffix>`),
    /// each with a teacher `teacher@<prefix>I.test` when a password is given; existing
    /// schools are skipped. For load tests and demos.
    CreateMany {
        #[arg(long)]
        prefix: String,
        #[arg(long)]
        count: u32,
        #[arg(long, default_value = "localhost")]
        domain_suffix: String,
        #[arg(long)]
        teacher_password: Option<String>,
    },
    /// List schools.
    List,
    /// Deactivate a school, or with --drop-schema delete it and all its data.
    Delete {
        #[arg(long)]
        schema: String,
        #[arg(long)]
        drop_schema: bool,
    },
}

#[derive(Args, Debug)]
pub struct Contact {
    #[arg(long)]
    email: Option<String>,
    #[arg(long)]
    phone: Option<String>,
    #[arg(long)]
    password: String,
}

#[derive(Subcommand, Debug)]
pub enum UserCommand {
    /// Create a platform superuser.
    CreateSuperuser {
        #[command(flatten)]
        contact: Contact,
    },
    /// Create a user of a school.
    Create {
        #[arg(long)]
        tenant: String,
        #[command(flatten)]
        contact: Contact,
        #[arg(long, default_value = "")]
        first_name: String,
        #[arg(long, default_value = "")]
        last_name: String,
        /// A role to assign (repeatable): admin, principal, office, teacher, student, ...
        #[arg(long = "role")]
        roles: Vec<String>,
        /// Also create the user's teacher profile.
        #[arg(long)]
        teacher: bool,
    },
}

/// Runs a command; the error is printed as one line by `main`.
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve => serve().await,
        command => {
            let state = web::Data::new(AppState::new(Config::from_env(true)?));
            match command {
                Command::Migrate => migrate(&state).await,
                Command::Tenant(command) => tenant(&state, command).await,
                Command::User(command) => user(&state, command).await,
                Command::Demo => demo(&state).await,
                Command::Serve => unreachable!("handled above"),
            }
        }
    }
}

async fn serve() -> anyhow::Result<()> {
    let config = Config::from_env(false)?;
    if config.insecure_dev_secret {
        log::warn!(
            "JWT_SECRET is not set: using an insecure development secret (APP_ENV=development)"
        );
    }
    let app = Application::build(config.clone())?;
    log::info!("listening on {} (port {})", config.bind_addr, app.port());
    app.run_until_stopped().await?;
    log::info!("stopped");
    Ok(())
}

/// Runs blocking database work off the async executor.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> anyhow::Result<T> {
    Ok(web::block(work).await.map_err(ApiError::from)??)
}

async fn migrate(state: &AppState) -> anyhow::Result<()> {
    let url = state.config.database_url.clone();
    let applied = blocking(move || migrate_public(&url)).await?;
    println!("public schema: {} migration(s) applied", applied.len());
    let db = state.db.clone();
    let tenants = blocking(move || provision::all_tenants(&db)).await?;
    let total = tenants.len();
    let show_progress = std::io::stderr().is_terminal();
    let mut applied_total = 0;
    for (index, tenant) in tenants.into_iter().enumerate() {
        let db = state.db.clone();
        let schema = tenant.schema_name.clone();
        applied_total += blocking(move || provision::migrate_one(&db, &tenant))
            .await
            .map_err(|err| anyhow::anyhow!("school '{schema}': {err}"))?;
        if show_progress {
            eprint!("\rmigrating schools: {}/{total}", index + 1);
        }
    }
    if show_progress && total > 0 {
        eprintln!();
    }
    println!("{total} school schema(s) up to date; {applied_total} migration(s) applied");
    Ok(())
}

async fn tenant(state: &AppState, command: TenantCommand) -> anyhow::Result<()> {
    let db = state.db.clone();
    match command {
        TenantCommand::Create {
            schema,
            name,
            domains,
        } => {
            let new = NewTenant::parse(&schema, &name, &domains)?;
            let row = blocking(move || provision::create_tenant(&db, &new)).await?;
            println!(
                "created school '{}' ({}) with schema {}",
                row.name, row.id, row.schema_name
            );
        }
        TenantCommand::CreateMany {
            prefix,
            count,
            domain_suffix,
            teacher_password,
        } => {
            create_many(state, &prefix, count, &domain_suffix, teacher_password).await?;
        }
        TenantCommand::List => {
            let rows = blocking(move || db.with_conn(|conn| Ok(TenantRow::all(conn)?))).await?;
            for row in rows {
                let status = if row.is_active { "active" } else { "inactive" };
                println!("{}\t{}\t{}\t{}", row.schema_name, row.id, status, row.name);
            }
        }
        TenantCommand::Delete {
            schema,
            drop_schema,
        } => {
            let directory = TenantDirectory::new(db.clone());
            let tenant = blocking(move || directory.find_schema(&schema))
                .await
                .map_err(|_| anyhow::anyhow!("no school has this schema name"))?;
            let id = tenant.id;
            if drop_schema {
                blocking(move || provision::drop_tenant(&db, id)).await?;
                println!(
                    "deleted school '{}' and dropped schema {}",
                    tenant.name, tenant.schema_name
                );
            } else {
                blocking(move || {
                    db.with_conn(|conn| Ok(TenantRow::set_fields(conn, id, None, Some(false))?))
                })
                .await?;
                println!("deactivated school '{}'", tenant.name);
            }
        }
    }
    Ok(())
}

async fn user(state: &AppState, command: UserCommand) -> anyhow::Result<()> {
    let user = match command {
        UserCommand::CreateSuperuser { contact } => {
            create_user_from_cli(
                state,
                contact.email.as_deref(),
                contact.phone.as_deref(),
                &contact.password,
                (String::new(), String::new()),
                None,
                Vec::new(),
                true,
                false,
            )
            .await?
        }
        UserCommand::Create {
            tenant,
            contact,
            first_name,
            last_name,
            roles,
            teacher,
        } => {
            create_user_from_cli(
                state,
                contact.email.as_deref(),
                contact.phone.as_deref(),
                &contact.password,
                (first_name, last_name),
                Some(&tenant),
                roles,
                false,
                teacher,
            )
            .await?
        }
    };
    println!("created user {} ({})", user.display_name(), user.id);
    Ok(())
}

async fn create_many(
    state: &AppState,
    prefix: &str,
    count: u32,
    domain_suffix: &str,
    teacher_password: Option<String>,
) -> anyhow::Result<()> {
    // One hash serves every generated teacher: bcrypt embeds its salt, so it verifies.
    let password_hash = match teacher_password {
        Some(password) => {
            crate::auth::password::check_policy(&password)
                .map_err(|m| anyhow::anyhow!("password: {m}"))?;
            let cost = state.config.bcrypt_cost;
            Some(web::block(move || crate::auth::password::hash(&password, cost)).await??)
        }
        None => None,
    };
    let show_progress = std::io::stderr().is_terminal();
    let started = std::time::Instant::now();
    let mut created = 0u32;
    for i in 1..=count {
        let schema = format!("{prefix}{i}");
        let new = NewTenant::parse(
            &schema,
            &format!("School {schema}"),
            &[format!("{schema}.{domain_suffix}")],
        )?;
        let db = state.db.clone();
        let hash = password_hash.clone();
        let made = blocking(move || {
            let row = match provision::create_tenant(&db, &new) {
                Ok(row) => row,
                Err(ApiError::Conflict(_)) => return Ok(false),
                Err(err) => return Err(err),
            };
            if let Some(hash) = hash {
                add_generated_teacher(&db, &row, hash)?;
            }
            Ok(true)
        })
        .await?;
        created += u32::from(made);
        if show_progress {
            eprint!("\rprovisioning schools: {i}/{count}");
        }
    }
    if show_progress {
        eprintln!();
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
fn add_generated_teacher(
    db: &crate::db::Db,
    row: &TenantRow,
    password_hash: String,
) -> Result<(), ApiError> {
    let tenant = std::sync::Arc::new(crate::tenancy::Tenant {
        id: row.id,
        schema_name: crate::tenancy::SchemaName::parse(&row.schema_name)
            .map_err(ApiError::internal)?,
        name: row.name.clone(),
        is_active: row.is_active,
    });
    db.with_tenant(&tenant, |conn| {
        conn.transaction(|conn| {
            let user = crate::db::models::User::insert(
                conn.pg(),
                &crate::db::models::NewUser {
                    id: uuid::Uuid::new_v4(),
                    email: Some(format!("teacher@{}.test", row.schema_name)),
                    phone: None,
                    password_hash,
                    first_name: "Teacher".into(),
                    last_name: row.schema_name.clone(),
                    is_superuser: false,
                    is_staff: false,
                    client_id: Some(row.id),
                },
            )?;
            crate::auth::roles::assign_by_name(conn, user.id, "teacher")?;
            crate::api::school::teachers::create_for_user(conn, user.id, None)?;
            Ok(())
        })
    })
}

const DEMO_PASSWORD: &str = "demo-password-123";
const DEMO_SCHOOLS: [(&str, &str); 2] = [
    ("greenwood", "Greenwood High"),
    ("riverside", "Riverside Academy"),
];

async fn demo(state: &AppState) -> anyhow::Result<()> {
    let directory = state.directory.clone();
    for (schema, name) in DEMO_SCHOOLS {
        let dir = directory.clone();
        if blocking(move || dir.find_schema(schema)).await.is_ok() {
            println!("school '{schema}' exists; skipped");
            continue;
        }
        let db = state.db.clone();
        let new = NewTenant::parse(schema, name, &[format!("{schema}.localhost")])?;
        blocking(move || provision::create_tenant(&db, &new)).await?;
        directory.invalidate();
        for (who, role, teacher) in [("admin", "admin", false), ("teacher", "teacher", true)] {
            let email = format!("{who}@{schema}.test");
            create_user_from_cli(
                state,
                Some(&email),
                None,
                DEMO_PASSWORD,
                (capitalize(who), capitalize(schema)),
                Some(schema),
                vec![role.to_owned()],
                false,
                teacher,
            )
            .await?;
        }
        println!("created demo school '{name}' at {schema}.localhost");
    }
    let superuser = create_user_from_cli(
        state,
        Some("root@platform.test"),
        None,
        DEMO_PASSWORD,
        (String::new(), String::new()),
        None,
        Vec::new(),
        true,
        false,
    )
    .await;
    match superuser {
        Ok(_) | Err(ApiError::Conflict(_)) => {}
        Err(err) => return Err(err.into()),
    }
    let port = state.config.bind_addr.port();
    println!(
        "\nDemo users (password '{DEMO_PASSWORD}'): admin@greenwood.test, teacher@greenwood.test,"
    );
    println!(
        "admin@riverside.test, teacher@riverside.test; platform superuser root@platform.test."
    );
    println!("Log in to a school:");
    println!(
        "  curl -s -H 'Host: greenwood.localhost' -H 'Content-Type: application/json' \\\n    -d '{{\"identifier\": \"admin@greenwood.test\", \"password\": \"{DEMO_PASSWORD}\"}}' \\\n    http://127.0.0.1:{port}/api/v1/school/auth/login/"
    );
    Ok(())
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_valid() {
        Cli::command().debug_assert();
    }

    #[test]
    fn parses_the_documented_commands() {
        let parse = |args: &[&str]| {
            Cli::try_parse_from(std::iter::once("school-service").chain(args.iter().copied()))
        };
        assert!(
            parse(&[
                "tenant", "create", "--schema", "g", "--name", "G", "--domain", "a", "--domain",
                "b"
            ])
            .is_ok()
        );
        assert!(parse(&["tenant", "delete", "--schema", "g", "--drop-schema"]).is_ok());
        assert!(
            parse(&[
                "user",
                "create-superuser",
                "--email",
                "a@b.c",
                "--password",
                "x"
            ])
            .is_ok()
        );
        assert!(
            parse(&[
                "user",
                "create",
                "--tenant",
                "g",
                "--phone",
                "+1555",
                "--password",
                "p",
                "--role",
                "admin",
                "--role",
                "teacher",
                "--teacher"
            ])
            .is_ok()
        );
        assert!(parse(&["user", "create"]).is_err());
    }
}
