#!/usr/bin/env python3
"""Instruction counts per operation, ours vs LMDB, under callgrind.

Wall-clock numbers on a shared machine are noisy; instruction counts are
exact and repeatable, and callgrind's per-function costs show where the extra
work is. For every row and engine this runs the benchmark binary once under
`valgrind --tool=callgrind` with one round, no repetition and no verification,
then divides the inclusive cost of the timed workload function by the entry
count.

usage: callgrind_peers.py [--bin PATH] [--keep DIR] [ROW ...]
  ROW defaults to the rows of `--quick`; e.g. rand_get/k8/v100/10K.
  Build first: cargo build --release -p dlmdb-bench
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

WORKLOADS = ("seq_put", "rand_put", "cursor_put", "seq_read", "rand_get", "rand_seek")
QUICK = [f"{w}/k{k}/v100/10K" for k in (8, 64) for w in WORKLOADS] + \
    [f"{w}/k8/v8192/1K" for w in WORKLOADS]
FUNC = {"seq_put": "put_all", "rand_put": "put_all", "cursor_put": "cursor_put_all",
        "seq_read": "read_inner", "rand_get": "read_inner", "rand_seek": "read_inner"}
QUICK_SET = {"10K", "1K"}  # sizes that exist in --quick


def entries(row):
    n = row.rsplit("/", 1)[1]
    mult = {"K": 1000, "M": 1000000}.get(n[-1], 1)
    return int(n.rstrip("KM")) * mult


def measure(binary, row, engine, outdir):
    """Instructions per op of `row` for `engine`, and the callgrind file."""
    fn = FUNC[row.split("/", 1)[0]]
    out = os.path.join(outdir, f"{row.replace('/', '_')}.{engine}.cg")
    # Collect only inside the timed workload function (and what it calls).
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
           f"--toggle-collect=*workload::{fn}*", binary,
           "--only", engine, "--filter", row, "--rounds", "1", "--min-sample-ms", "0",
           "--no-verify", "-q"]
    if row.rsplit("/", 1)[1] in QUICK_SET:
        cmd.append("--quick")
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ann = annotate(out)
    m = re.search(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+PROGRAM TOTALS", ann, re.M)
    if not m:
        raise SystemExit(f"{row} {engine}: no totals in {out}")
    return int(m.group(1).replace(",", "")) / entries(row), ann


def annotate(path):
    return subprocess.run(["callgrind_annotate", "--threshold=100", path], check=True,
                          capture_output=True, text=True, errors="replace").stdout


def top_functions(ann, row, n):
    """The n functions with the highest exclusive cost, in instructions/op."""
    merged = {}
    in_summary = False
    for line in ann.splitlines():
        if line.startswith("Ir") and "file:function" in line:
            in_summary = True
            continue
        if not in_summary or line.startswith("---"):
            continue
        if not line.strip():
            break  # end of the function summary; source annotation follows
        m = re.match(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$", line)
        if m:
            # "file:function [object]" -> function (inlined parts are merged)
            name = m.group(2).split(" [")[0].rsplit(":", 1)[-1]
            merged[name] = merged.get(name, 0) + int(m.group(1).replace(",", ""))
    best = sorted(merged.items(), key=lambda kv: -kv[1])[:n]
    return ", ".join(f"{name} {c / entries(row):.0f}" for name, c in best)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=None)
    ap.add_argument("--keep", default=None, help="keep callgrind outputs in this dir")
    ap.add_argument("--top", type=int, default=0,
                    help="also list the N costliest functions (instr/op) per engine")
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
        o, oann = measure(binary, row, "ours", outdir)
        l, lann = measure(binary, row, "lmdb", outdir)
        print(f"| {row} | {o:.0f} | {l:.0f} | {o / l:.2f} |", flush=True)
        if a.top:
            print(f"|  ours top: {top_functions(oann, row, a.top)} | | | |")
            print(f"|  lmdb top: {top_functions(lann, row, a.top)} | | | |", flush=True)
    if a.keep:
        print(f"\ncallgrind outputs kept in {outdir} (inspect with callgrind_annotate)", file=sys.stderr)


if __name__ == "__main__":
    main()
