#!/usr/bin/env python3
"""Instruction counts per operation, ours vs LMDB, under callgrind.

Wall-clock numbers on a shared machine are noisy; instruction counts are
exact and repeatable, and callgrind's per-function costs show where the extra
work is. For every row and engine this runs the benchmark binary once under
`valgrind --tool=callgrind` with one round, no repetition and no verification,
then divides the inclusive cost of the timed workload function by the entry
count.

usage: callgrind_peers.py [--bin PATH] [--keep DIR] [ROW ...]
  ROW defaults to the 10K-entry rows of `--quick`; e.g. rand_get/k8/v100/10K.
  Build first: cargo build --release -p dlmdb-bench
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

QUICK = [f"{w}/k{k}/v100/10K" for k in (8, 64)
         for w in ("seq_put", "rand_put", "cursor_put", "seq_read", "rand_get", "rand_seek")]
FUNC = {"seq_put": "put_all", "rand_put": "put_all", "cursor_put": "cursor_put_all",
        "seq_read": "read_inner", "rand_get": "read_inner", "rand_seek": "read_inner"}
QUICK_SET = {"10K"}  # sizes that exist in --quick


def entries(row):
    n = row.rsplit("/", 1)[1]
    mult = {"K": 1000, "M": 1000000}.get(n[-1], 1)
    return int(n.rstrip("KM")) * mult


def measure(binary, row, engine, outdir):
    out = os.path.join(outdir, f"{row.replace('/', '_')}.{engine}.cg")
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary,
           "--only", engine, "--filter", row, "--rounds", "1", "--min-sample-ms", "0",
           "--no-verify", "-q"]
    if row.rsplit("/", 1)[1] in QUICK_SET:
        cmd.append("--quick")
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ann = subprocess.run(["callgrind_annotate", "--inclusive=yes", out],
                         check=True, capture_output=True, text=True).stdout
    fn = FUNC[row.split("/", 1)[0]]
    pat = re.compile(r"^\s*([\d,]+)\s+\([\d.]+%\)\s+.*workload::" + fn + r"(\s|$)")
    best = 0
    for line in ann.splitlines():
        m = pat.match(line)
        if m:
            best = max(best, int(m.group(1).replace(",", "")))
    if best == 0:
        raise SystemExit(f"{row} {engine}: workload::{fn} not found in {out}")
    return best / entries(row), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=None)
    ap.add_argument("--keep", default=None, help="keep callgrind outputs in this dir")
    ap.add_argument("rows", nargs="*")
    a = ap.parse_args()
    binary = a.bin
    if binary is None:
        root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
        tdir = os.environ.get("CARGO_TARGET_DIR", os.path.join(root, "target"))
        binary = os.path.join(tdir, "release", "dlmdb-bench-peers")
    outdir = a.keep or tempfile.mkdtemp(prefix="dlmdb-cg-")
    os.makedirs(outdir, exist_ok=True)
    print("| row | ours instr/op | LMDB instr/op | ours/LMDB |")
    print("|---|---:|---:|---:|")
    for row in a.rows or QUICK:
        o, _ = measure(binary, row, "ours", outdir)
        l, _ = measure(binary, row, "lmdb", outdir)
        print(f"| {row} | {o:.0f} | {l:.0f} | {o / l:.2f} |", flush=True)
    if a.keep:
        print(f"\ncallgrind outputs kept in {outdir} (inspect with callgrind_annotate)", file=sys.stderr)


if __name__ == "__main__":
    main()
