//! `school-service tenant oauth-client create`: a school's OneRoster integration client
//! from the command line (API.md 8), printed as one JSON object.

use clap::{Args, Subcommand};

use super::ops::Ops;
use crate::school::oneroster::{
    clients::{self, SCOPES},
    csv,
    roster::Provider,
};

#[derive(Subcommand, Debug)]
pub enum OauthClientCommand {
    /// Create an integration client; prints `{"client_id", "client_secret", "scopes"}`.
    Create(CreateClientArgs),
}

/// `tenant oneroster-export`: the school's OneRoster 1.2 CSV zip.
#[derive(Args, Debug)]
pub struct ExportArgs {
    #[arg(long)]
    schema: String,
    /// Where the zip is written.
    #[arg(long)]
    out: std::path::PathBuf,
}

pub(super) async fn export(ops: &Ops, args: ExportArgs) -> anyhow::Result<()> {
    let tenant = ops.school(&args.schema).await?;
    let provider = Provider {
        base: "/ims/oneroster".into(),
        org_id: tenant.id,
        org_name: tenant.name.clone(),
    };
    let out = std::fs::File::create(&args.out)
        .map_err(|err| anyhow::anyhow!("cannot create {}: {err}", args.out.display()))?;
    let out = std::io::BufWriter::new(out);
    let mut written = ops
        .db
        .run_in_tenant_snapshot(tenant, move |conn| csv::export(&provider, conn, out))
        .await?;
    std::io::Write::flush(&mut written)?;
    let bytes = std::fs::metadata(&args.out).map(|m| m.len()).unwrap_or(0);
    println!("wrote {} ({bytes} bytes)", args.out.display());
    Ok(())
}

#[derive(Args, Debug)]
pub struct CreateClientArgs {
    #[arg(long)]
    schema: String,
    #[arg(long)]
    name: String,
    /// A OneRoster 1.2 scope URI (repeatable); none: all six.
    #[arg(long = "scope")]
    scopes: Vec<String>,
}

pub(super) async fn oauth_client(ops: &Ops, command: OauthClientCommand) -> anyhow::Result<()> {
    let OauthClientCommand::Create(args) = command;
    let name_chars = args.name.chars().count();
    if !(1..=100).contains(&name_chars) {
        anyhow::bail!("--name must have 1 to 100 characters");
    }
    if let Some(unknown) = args.scopes.iter().find(|s| !SCOPES.contains(&s.as_str())) {
        anyhow::bail!("{unknown} is not a OneRoster 1.2 scope; use one of {SCOPES:?}");
    }
    let mut scopes = match args.scopes.is_empty() {
        true => SCOPES.iter().map(|s| (*s).to_owned()).collect(),
        false => args.scopes,
    };
    scopes.sort();
    scopes.dedup();
    let tenant = ops.school(&args.schema).await?;
    let key = ops.config.jwt_secret.clone();
    let name = args.name;
    let (record, secret) = ops
        .db
        .run_in_tenant(tenant, move |conn| {
            clients::create(conn, key.expose(), &name, &scopes, None)
        })
        .await?;
    println!(
        "{}",
        serde_json::json!({
            "client_id": record.client_id,
            "client_secret": secret,
            "scopes": record.scope_list(),
        })
    );
    Ok(())
}
