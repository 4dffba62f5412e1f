use clap::Parser;
use school_service::cli::{Cli, run};

#[actix_web::main]
async fn main() {
    if let Err(err) = school_service::observability::logging::init_from_env() {
        eprintln!("error: {err}");
        std::process::exit(1);
    }
    if let Err(err) = run(Cli::parse()).await {
        eprintln!("error: {err:#}");
        std::process::exit(1);
    }
}
