//! The `school-service` command line: serve, migrate, provision schools and users.
//! `seed` holds the commands that generate data (`demo`, `tenant create-many`); `fleet` the
//! ones over every school's schema version (`migrate`, `tenant status`).

mod archive;
mod demo;
mod fleet;
mod oneroster;
mod ops;
mod seed;

use std::io::Write;

use clap::{Args, Parser, Subcommand};

use crate::{
    config::Config,
    db::models::{TenantChanges, TenantRow},
    startup::Application,
    tenancy::provision::{self, NewTenant},
};
use ops::{CliAccount, Ops, blocking};

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
    /// Migrate the public schema, then the school schemas, each school in one transaction.
    Migrate(fleet::MigrateArgs),
    /// Manage schools.
    #[command(subcommand)]
    Tenant(TenantCommand),
    /// Manage users.
    #[command(subcommand)]
    User(UserCommand),
    /// Create or complete the two demo schools (a school year, one account per role), and
    /// print how to reach them.
    Demo,
    /// Print the OpenAPI document (JSON) to stdout.
    Openapi,
    /// Run the webhook relay alone (with `WEBHOOK_RELAY=false` on the servers, say).
    Relay,
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
        /// Schools created at the same time, each in its own transaction and connection.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
        jobs: u32,
    },
    /// List schools.
    List,
    /// Every school's latest applied migration and how many it has not applied.
    Status {
        /// Only the schools with migrations still to apply.
        #[arg(long)]
        pending: bool,
    },
    /// Deactivate a school, or with --drop-schema delete it and all its data.
    Delete {
        #[arg(long)]
        schema: String,
        #[arg(long)]
        drop_schema: bool,
    },
    /// Write one school to an archive: its schema's rows, tenant row, domains, users and
    /// API keys, from one consistent snapshot.
    Export(archive::ExportArgs),
    /// Restore a school from an archive exactly as exported (refused on any clash).
    Import(archive::ImportArgs),
    /// Move a school to another Citus worker.
    Move(archive::MoveArgs),
    /// A school's OneRoster integration clients.
    #[command(subcommand)]
    OauthClient(oneroster::OauthClientCommand),
    /// Write a school's OneRoster 1.2 CSV zip (bulk).
    OnerosterExport(oneroster::ExportArgs),
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
        Command::Relay => {
            let config = Config::from_env(true)?;
            crate::db::pool::check_pool_mode(config.database_url.expose(), config.db_pool_mode)?;
            crate::startup::run_relay(config).await
        }
        Command::Openapi => {
            println!("{}", crate::api::docs::document_json());
            Ok(())
        }
        command => {
            let config = Config::from_env(true)?;
            crate::db::pool::check_pool_mode(config.database_url.expose(), config.db_pool_mode)?;
            let ops = Ops::open(config);
            match command {
                Command::Migrate(args) => fleet::migrate(&ops.config, args).await,
                Command::Tenant(command) => tenant(&ops, command).await,
                Command::User(command) => user(&ops, command).await,
                Command::Demo => demo::demo(&ops).await,
                Command::Serve | Command::Openapi | Command::Relay => {
                    unreachable!("handled above")
                }
            }
        }
    }
}

async fn serve() -> anyhow::Result<()> {
    let config = Config::from_env(false)?;
    crate::db::pool::check_pool_mode(config.database_url.expose(), config.db_pool_mode)?;
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

async fn tenant(ops: &Ops, command: TenantCommand) -> anyhow::Result<()> {
    let db = ops.db.clone();
    match command {
        TenantCommand::Create {
            schema,
            name,
            domains,
        } => {
            let new = NewTenant::parse(&schema, &name, &domains)?;
            let row =
                blocking(move || provision::create_tenant(&db, &new, crate::auth::roles::SEED))
                    .await?;
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
            jobs,
        } => {
            let many = seed::ManySchools {
                prefix,
                count,
                domain_suffix,
                jobs,
            };
            seed::create_many(ops, many, teacher_password).await?;
        }
        TenantCommand::Status { pending } => fleet::status(&ops.config, pending).await?,
        TenantCommand::List => {
            let (rows, nodes) = blocking(move || {
                db.with_conn(|conn| Ok((TenantRow::all(conn)?, provision::schema_nodes(conn)?)))
            })
            .await?;
            // Written, not printed: a reader that closes the pipe early (`| head`) just
            // ends the listing.
            let mut out = std::io::stdout().lock();
            for row in rows {
                let status = if row.is_active { "active" } else { "inactive" };
                // On Citus, the node the school's schema lives on.
                let node = nodes
                    .get(&row.schema_name)
                    .map_or_else(String::new, |node| format!("\t{node}"));
                if writeln!(
                    out,
                    "{}\t{}\t{}\t{}{node}",
                    row.schema_name, row.id, status, row.name
                )
                .is_err()
                {
                    break;
                }
            }
        }
        TenantCommand::Delete {
            schema,
            drop_schema,
        } => {
            let tenant = ops.school(&schema).await?;
            let id = tenant.id;
            if drop_schema {
                blocking(move || provision::drop_tenant(&db, id)).await?;
                println!(
                    "deleted school '{}' and dropped schema {}",
                    tenant.name, tenant.schema_name
                );
            } else {
                blocking(move || {
                    db.with_conn(|conn| {
                        Ok(TenantRow::update(conn, id, &TenantChanges::deactivate())?)
                    })
                })
                .await?;
                println!("deactivated school '{}'", tenant.name);
            }
        }
        TenantCommand::Export(args) => archive::export(ops, args).await?,
        TenantCommand::Import(args) => archive::import(ops, args).await?,
        TenantCommand::Move(args) => archive::move_school(ops, args).await?,
        TenantCommand::OauthClient(command) => oneroster::oauth_client(ops, command).await?,
        TenantCommand::OnerosterExport(args) => oneroster::export(ops, args).await?,
    }
    Ok(())
}

async fn user(ops: &Ops, command: UserCommand) -> anyhow::Result<()> {
    let user = match command {
        UserCommand::CreateSuperuser { contact } => {
            ops.create_account(CliAccount {
                email: contact.email.as_deref(),
                phone: contact.phone.as_deref(),
                password: &contact.password,
                first_name: "",
                last_name: "",
                school: None,
                roles: Vec::new(),
                superuser: true,
                teacher: false,
            })
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
            ops.create_account(CliAccount {
                email: contact.email.as_deref(),
                phone: contact.phone.as_deref(),
                password: &contact.password,
                first_name: &first_name,
                last_name: &last_name,
                school: Some(ops.school(&tenant).await?),
                roles,
                superuser: false,
                teacher,
            })
            .await?
        }
    };
    println!("created user {} ({})", user.display_name(), user.id);
    Ok(())
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
