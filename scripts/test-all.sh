#!/usr/bin/env bash
# The one test command: C engine tests (plain + sanitizers), then the Rust
# lints (rustfmt, clippy with warnings as errors) and every Rust test of the
# workspace in release mode (the model-based tests run 100k ops).
#
#   bash scripts/test-all.sh
#
# Fixtures: $DLMDB_FIXTURES if set, else the repository's copy in tests/fixtures.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

if [[ -z "${DLMDB_FIXTURES:-}" ]]; then
    DLMDB_FIXTURES="$repo/tests/fixtures"
fi
export DLMDB_FIXTURES
if [[ ! -d "$DLMDB_FIXTURES" ]]; then
    echo "error: fixtures directory $DLMDB_FIXTURES not found" >&2
    exit 1
fi

section() {
    printf '\n==================== %s ====================\n' "$*"
}

section "environment"
echo "repo:      $repo"
echo "fixtures:  $DLMDB_FIXTURES"
cc --version | head -n1 || true
cargo --version
rustc --version

# Both stages always run, so one invocation shows every failure; the exit
# status is non-zero if either failed.
c_rc=0
rust_rc=0

section "C engine tests: make -C vendor/dlmdb check (plain, ASan/UBSan, TSan, stock liblmdb, fuzz and power-loss lists)"
make -C vendor/dlmdb check FIXTURES="$DLMDB_FIXTURES" || c_rc=$?

section "Rust lints: cargo fmt --check, cargo clippy -D warnings"
cargo fmt --all --check || rust_rc=$?
cargo clippy --workspace --all-targets --release -- -D warnings || rust_rc=$?

section "Rust tests: cargo test --workspace --release"
cargo test --workspace --release --no-fail-fast || rust_rc=$?
# The engine built with the dlmdb-sys feature that makes new stores stock format.
cargo test --release -p dlmdb-sys --features stock-format --test create_format || rust_rc=$?
# The model tests again with a write txn limited to 8 dirty pages in memory
# (DLMDB_DIRTY_LIMIT, read at env open): their transactions spill pages to
# the data file before commit and reload them when touched again.
DLMDB_DIRTY_LIMIT=8 cargo test --release -p dlmdb-tests \
    --test model --test dupsort_model --test counted_model || rust_rc=$?

section "summary"
echo "C engine tests: $([[ $c_rc -eq 0 ]] && echo passed || echo "FAILED (exit $c_rc)")"
echo "Rust tests:     $([[ $rust_rc -eq 0 ]] && echo passed || echo "FAILED (exit $rust_rc)")"
if [[ $c_rc -ne 0 || $rust_rc -ne 0 ]]; then
    exit 1
fi
echo "all tests passed"
