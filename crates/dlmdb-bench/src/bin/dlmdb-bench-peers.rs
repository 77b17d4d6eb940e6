//! Stand-alone runner for the peers benchmark (the same thing the CLI's
//! `dlmdb bench peers` runs). Build with `--release`.

use clap::Parser;
use dlmdb_bench::PeersArgs;

#[derive(Parser)]
#[command(about = "Benchmark dlmdb against stock LMDB, side by side")]
struct Cli {
    #[command(flatten)]
    args: PeersArgs,
}

fn main() {
    let code = match Cli::parse().args.run() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("dlmdb-bench-peers: {e:#}");
            1
        }
    };
    std::process::exit(code);
}
