//! Compiles the C engine in `vendor/dlmdb/*.c` into a static library.
//!
//! Every public function is renamed `mdb_X` -> `dlmdb_X` by compiling with
//! `-DDLMDB_PREFIX_SYMBOLS` (see `vendor/dlmdb/dlmdb_prefix.h`), so this library
//! can be linked into the same binary as stock LMDB (`lmdb-master-sys`).

use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let vendor = manifest.join("../../vendor/dlmdb");
    let vendor = vendor.canonicalize().unwrap_or(vendor);

    println!("cargo:rerun-if-changed={}", vendor.display());
    println!("cargo:rerun-if-env-changed=DLMDB_CFLAGS");

    let sources = c_sources(&vendor);
    for s in &sources {
        println!("cargo:rerun-if-changed={}", s.display());
    }
    if let Ok(entries) = std::fs::read_dir(&vendor) {
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "h") {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
    println!("cargo:include={}", vendor.display());

    if sources.is_empty() {
        // The engine is written concurrently; keep the crate buildable meanwhile.
        println!(
            "cargo:warning=no C sources in {}; dlmdb-sys will not link",
            vendor.display()
        );
        return;
    }

    let mut build = cc::Build::new();
    build
        .files(&sources)
        .include(&vendor)
        .define("_GNU_SOURCE", None)
        .define("DLMDB_PREFIX_SYMBOLS", None)
        .flag_if_supported("-pthread")
        .flag_if_supported("-fno-strict-aliasing")
        // -Wall -Wextra, as the Makefile (which adds -Werror); cargo shows
        // what they find.
        .warnings(true)
        .extra_warnings(true);
    // The optimisation level follows the Cargo profile (cc reads OPT_LEVEL),
    // exactly as lmdb-master-sys builds stock LMDB, so benchmarks compare
    // like with like; NDEBUG likewise matches its release builds.
    if std::env::var("DEBUG").as_deref() != Ok("true") {
        build.define("NDEBUG", None);
    }
    // Feature `stock-format`: new stores default to stock LMDB's format.
    if std::env::var_os("CARGO_FEATURE_STOCK_FORMAT").is_some() {
        build.define("DLMDB_DEFAULT_FORMAT_LMDB", None);
    }
    if let Ok(extra) = std::env::var("DLMDB_CFLAGS") {
        for f in extra.split_whitespace() {
            build.flag(f);
        }
    }
    build.compile("dlmdb");
    println!("cargo:rustc-link-lib=pthread");
}

/// Top-level `*.c` files of the engine, sorted (tests/ and dev/ are not part of it).
fn c_sources(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "c"))
            .collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}
