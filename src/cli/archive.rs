//! `tenant export`, `tenant import` and `tenant move`: one school as a unit (see
//! `tenancy::archive` and `tenancy::placement`).

use std::{
    fs::File,
    io::{BufWriter, Write},
    path::PathBuf,
};

use clap::Args;

use super::ops::{Ops, blocking};
use crate::{
    config::Config,
    tenancy::{
        SchemaName,
        archive::{self, ArchiveKey, Authentication, ImportOptions},
        placement::{self, NodeAddress, TransferMode},
    },
};

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The school's schema name.
    #[arg(long)]
    schema: String,
    /// Where to write the archive; `-` for standard output.
    #[arg(long)]
    out: PathBuf,
    /// Write a plain tar instead of a gzip-compressed one.
    #[arg(long)]
    no_compress: bool,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The archive to restore.
    #[arg(long)]
    file: PathBuf,
    /// Restore under this schema name instead of the archived one.
    #[arg(long)]
    schema: Option<String>,
    /// Give the school these domains instead of the archived ones (repeatable; the first
    /// is primary).
    #[arg(long = "domain")]
    domains: Vec<String>,
    /// Import an archive that this platform's ARCHIVE_SIGNING_KEY does not vouch for
    /// (unsigned, signed under another key, or no key set here). Its users and API keys
    /// are still checked to be the school's own.
    #[arg(long)]
    trust_unsigned: bool,
    /// Refuse an archive that inflates to more than this many bytes (a small file that
    /// unpacks without end would otherwise fill the disk).
    #[arg(long, default_value_t = archive::format::DEFAULT_MAX_IMPORT_BYTES)]
    max_bytes: u64,
}

#[derive(Args, Debug)]
pub struct MoveArgs {
    /// The school's schema name.
    #[arg(long)]
    schema: String,
    /// The Citus worker to move it to, HOST:PORT as the coordinator knows it.
    #[arg(long)]
    node: NodeAddress,
    /// How Citus copies the tables: auto, force_logical (reads and writes go on; needs
    /// wal_level = logical) or block_writes (reads go on).
    #[arg(long, default_value = "auto")]
    transfer_mode: TransferMode,
}

pub(super) async fn export(ops: &Ops, args: ExportArgs) -> anyhow::Result<()> {
    let tenant = ops.school(&args.schema).await?;
    let to_stdout = args.out.as_os_str() == "-";
    let out: Box<dyn Write + Send> = if to_stdout {
        Box::new(std::io::stdout())
    } else {
        let file = File::create(&args.out)
            .map_err(|err| anyhow::anyhow!("cannot create {}: {err}", args.out.display()))?;
        Box::new(file)
    };
    let db = ops.db.clone();
    let compress = !args.no_compress;
    let key = signing_key(&ops.config);
    let summary = blocking(move || {
        let out = BufWriter::with_capacity(256 * 1024, out);
        archive::export_school(&db, &tenant, out, compress, key.as_ref())
            .map(|(summary, _)| summary)
    })
    .await?;
    let size = if to_stdout {
        String::new()
    } else {
        let bytes = std::fs::metadata(&args.out).map(|m| m.len()).unwrap_or(0);
        format!(" to {} ({bytes} bytes)", args.out.display())
    };
    let line = format!(
        "exported school {} at tenant migration {}: {} tables, {} rows, {} users, {} API keys{size}",
        args.schema,
        summary.tenant_migration_version,
        summary.tables,
        summary.rows,
        summary.users,
        summary.api_keys
    );
    // The archive may be on standard output: the report goes to standard error then.
    if to_stdout {
        eprintln!("{line}");
    } else {
        println!("{line}");
    }
    if !summary.signed {
        eprintln!(
            "warning: the archive is unsigned (ARCHIVE_SIGNING_KEY is not set); importing it \
             will need --trust-unsigned"
        );
    }
    Ok(())
}

/// The platform's archive key, if it has one.
fn signing_key(config: &Config) -> Option<ArchiveKey> {
    config
        .archive_signing_key
        .as_ref()
        .map(|key| ArchiveKey::new(key.expose()))
}

pub(super) async fn import(ops: &Ops, args: ImportArgs) -> anyhow::Result<()> {
    let db = ops.db.clone();
    let options = ImportOptions {
        schema: args.schema,
        domains: args.domains,
        main_domains: ops.config.main_domains.clone(),
    };
    let authentication = Authentication {
        key: signing_key(&ops.config),
        trust_unsigned: args.trust_unsigned,
    };
    let (file, max_bytes) = (args.file, args.max_bytes);
    let (summary, authenticated) = blocking(move || {
        let verified = archive::verify_archive(&file, &authentication, max_bytes)?;
        let summary = archive::import_school(&db, &verified, &options)?;
        Ok::<_, archive::ArchiveError>((summary, verified.authenticated))
    })
    .await?;
    if !authenticated {
        eprintln!(
            "warning: the archive's signature was not checked (--trust-unsigned); its users \
             and API keys were checked to be the school's own"
        );
    }
    println!(
        "imported school '{}' ({}) as schema {} (domains: {}) at tenant migration {}, migrated to {}: \
         {} tables, {} rows, {} users, {} API keys",
        summary.name,
        summary.tenant_id,
        summary.schema_name,
        if summary.domains.is_empty() {
            "none".to_owned()
        } else {
            summary.domains.join(", ")
        },
        summary.archive_version,
        summary.migrated_to,
        summary.tables,
        summary.rows,
        summary.users,
        summary.api_keys
    );
    Ok(())
}

pub(super) async fn move_school(ops: &Ops, args: MoveArgs) -> anyhow::Result<()> {
    let schema = SchemaName::parse(&args.schema)?;
    let db = ops.db.clone();
    let node = args.node.clone();
    let moved =
        blocking(move || placement::move_school(&db, &schema, &node, args.transfer_mode)).await?;
    println!(
        "moved school {} from {} to {}",
        args.schema, moved.from, moved.to
    );
    Ok(())
}
