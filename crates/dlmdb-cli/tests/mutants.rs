//! Damaged stores through the CLI: the corrupted-store fuzzer of the engine
//! (`vendor/dlmdb/fuzz/fuzz_store.c`) writes a fixed seed list of mutants of
//! the fixtures and of generated stores, with the engine's own verdict for
//! each; every mutant then goes through `check`, `dump -a`, `stat -a
//! --pages`, `copy` and `copy -c`, and through the commands that read one
//! database: `scan` of every database (one of forward or reverse, with or
//! without values, turning from one mutant of a base to the next, so that
//! a mutant costs one process per database, not four), `count` of the
//! whole database and of a key range, a bounded `scan` (a key range in
//! either direction, a key prefix, or a run from a rank, in turn), `rank` by
//! rank, by key and by key and value, `get` of a key that exists and of one
//! that does not, `dump -s` and `stat -s` of a named database.  Databases,
//! keys and values come from the mutant's un-damaged base store
//! (`fuzz_store --bases`; mutant n is made from base n mod the number of
//! bases); which database `count`, `scan`, `rank`, `get`, `dump -s` and
//! `stat -s` read turns with each round through the bases.  None may die
//! from a signal or panic or hang; `check` exits only 0, 1 or 2, every
//! other command 0 or 1 (2 is a bad command line, 130 SIGINT: neither can
//! happen here), and a non-zero exit of those must come with a `dlmdb:`
//! error line.  Mutants the engine rejects but `check` passes are listed
//! and fail the test (`DLMDB_MUTANTS_STRICT=0` only lists them).
//!
//! `DLMDB_MUTANTS=N` sets the number of mutants (default 600),
//! `DLMDB_MUTANTS_SEED=S` the seed (default 11), `DLMDB_MUTANTS_PAGES=16384`
//! the system page size of the machine the fuzzer makes its stores as on
//! (default: this one's).

mod common;

use std::collections::{HashMap, HashSet};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Build the fuzzer with the engine's own Makefile.
fn mutator() -> PathBuf {
    let c_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../vendor/dlmdb");
    let status = Command::new("make")
        .arg("-C")
        .arg(&c_dir)
        .arg("--no-print-directory")
        .arg("build/release/fuzz/fuzz_store")
        .stdout(Stdio::null())
        .status()
        .expect("run make");
    assert!(status.success(), "building fuzz_store failed");
    c_dir.join("build/release/fuzz/fuzz_store")
}

/// The fuzzer with the same fixtures as the test; with
/// `DLMDB_MUTANTS_PAGES=N`, run as on a machine with N-byte pages, so that
/// the stores it makes (all but the fixtures) have pages of that size.
fn fuzz_command(fuzz: &Path) -> Command {
    let mut cmd = Command::new(fuzz);
    if let Some(fx) = common::fixtures() {
        cmd.env("DLMDB_FIXTURES", fx);
    }
    if let Some(system) = std::env::var("DLMDB_MUTANTS_PAGES")
        .ok()
        .map(|v| v.parse().expect("DLMDB_MUTANTS_PAGES: a page size"))
    {
        assert!(
            dlmdb_tests::pages::as_on_machine(&mut cmd, system),
            "DLMDB_MUTANTS_PAGES needs the page-size shim"
        );
    }
    cmd
}

struct Outcome {
    status: Option<ExitStatus>,
    stderr: String,
}

/// Run cmd with a deadline; `status` is None when it had to be killed.
fn run(mut cmd: Command, limit: Duration) -> Outcome {
    let errfile = tempfile::NamedTempFile::new().unwrap();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(errfile.reopen().unwrap())
        .spawn()
        .expect("spawn dlmdb");
    let start = Instant::now();
    // Most commands end within a few milliseconds: poll often at first, so
    // thousands of them do not each wait out a long sleep.
    let mut nap = Duration::from_micros(50);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break Some(st);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(2));
    };
    let stderr = std::fs::read_to_string(errfile.path()).unwrap_or_default();
    Outcome { status, stderr }
}

/// Record in `failures` what is wrong with how a command ended: a hang, a
/// signal, a panic, an exit status outside `codes`, or (with `error_line`)
/// a non-zero exit without an error line. Returns the exit status of a
/// command that exited without panicking.
fn judge(
    desc: &str,
    o: &Outcome,
    codes: &[i32],
    error_line: bool,
    limit: Duration,
    failures: &mut Vec<String>,
) -> Option<i32> {
    let Some(st) = o.status else {
        failures.push(format!("{desc}: still running after {limit:?}"));
        return None;
    };
    if let Some(sig) = st.signal() {
        failures.push(format!("{desc}: killed by signal {sig}"));
        return None;
    }
    if o.stderr.contains("panicked") || st.code() == Some(101) {
        failures.push(format!("{desc}: panic: {}", o.stderr.trim()));
        return None;
    }
    let code = st.code().unwrap_or(-1);
    if !codes.contains(&code) {
        failures.push(format!("{desc}: exit status {code}: {}", o.stderr.trim()));
    } else if error_line
        && code != 0
        && !o
            .stderr
            .lines()
            .any(|l| l.starts_with("dlmdb: ") && !l.starts_with("dlmdb: note: "))
    {
        failures.push(format!(
            "{desc}: exit status {code} without an error line: {:?}",
            o.stderr
        ));
    }
    Some(code)
}

/// Error numbers of the engine that mean "this store is damaged"
/// (not resource limits of the fuzzer's own writes).
fn engine_rejects(rc: i32) -> bool {
    const ENOMEM: i32 = 12;
    const MDB_MAP_FULL: i32 = -30792;
    rc != 0 && rc != ENOMEM && rc != MDB_MAP_FULL
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// What an un-damaged base store holds: its named databases, and for each
/// database (the main one first, then `names` in order) its distinct keys
/// in hex, in the database's order, and the last value (in hex) of its
/// middle key.
struct BaseInfo {
    names: Vec<String>,
    keys: Vec<Vec<String>>,
    mid_values: Vec<Option<String>>,
}

/// Read the base store `src` (opened with `--layout layout`) with the CLI.
/// The base is not damaged, so every read must succeed, and `get` must find
/// the key the mutants are asked for.
fn base_info(src: &Path, layout: &str, dir: &Path) -> BaseInfo {
    std::fs::create_dir_all(dir).unwrap();
    let store = dir.join("base.mdb");
    std::fs::copy(src, &store).unwrap();
    let out = |args: &[&str]| {
        let o = common::bin()
            .arg(args[0])
            .arg(&store)
            .args(&args[1..])
            .args(["--layout", layout])
            .output()
            .unwrap();
        (
            o.status.success(),
            String::from_utf8(o.stdout).unwrap(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (ok, list, err) = out(&["dump", "-l"]);
    let names: Vec<String> = if ok {
        list.lines().map(str::to_owned).collect()
    } else {
        assert!(
            err.contains("does not contain multiple databases"),
            "dump -l of base {}: {err}",
            src.display()
        );
        Vec::new()
    };
    let mut keys = Vec::new();
    let mut mid_values = Vec::new();
    for name in std::iter::once(None).chain(names.iter().map(Some)) {
        let mut args = vec!["scan", "--keys-only", "--format", "hex"];
        if let Some(n) = name {
            args.extend(["-s", n.as_str()]);
        }
        let (ok, list, err) = out(&args);
        assert!(ok, "{args:?} of base {}: {err}", src.display());
        let k: Vec<String> = list.lines().map(str::to_owned).collect();
        let mut mid_value = None;
        if let Some(mid) = k.get(k.len() / 2) {
            let mut args = vec!["get", "--hex", mid.as_str(), "--format", "hex"];
            if let Some(n) = name {
                args.extend(["-s", n.as_str()]);
            }
            let (ok, values, err) = out(&args);
            assert!(ok, "{args:?} of base {}: {err}", src.display());
            mid_value = values
                .lines()
                .last()
                .filter(|v| !v.is_empty())
                .map(str::to_owned);
        }
        keys.push(k);
        mid_values.push(mid_value);
    }
    BaseInfo {
        names,
        keys,
        mid_values,
    }
}

/// A key of the same length as `near` (so INTEGERKEY databases take it),
/// or of one byte without `near`, that `keys` does not hold.
fn missing_key(near: Option<&String>, keys: &[String]) -> String {
    let have: HashSet<&str> = keys.iter().map(String::as_str).collect();
    let mut k = near
        .map(|n| unhex(n))
        .filter(|k| !k.is_empty())
        .unwrap_or_else(|| vec![b'm']);
    let last = k.len() - 1;
    let orig = k[last];
    for flip in 1..=255u8 {
        k[last] = orig ^ flip;
        let h = hex(&k);
        if !have.contains(h.as_str()) {
            return h;
        }
    }
    k.push(0);
    hex(&k)
}

/// The read commands for a mutant of `info`'s base in round `round` (how
/// many mutants of the same base came before it): a description, the
/// arguments from the command's name on without the store path (it goes
/// right after the name), and whether it is the `get` of a key the base
/// holds.
fn read_commands(info: &BaseInfo, round: usize) -> Vec<(String, Vec<String>, bool)> {
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<String>>();
    let sub = |db: usize| -> Vec<String> {
        match db {
            0 => Vec::new(),
            i => vec!["-s".into(), info.names[i - 1].clone()],
        }
    };
    let mut cmds = Vec::new();
    // One walk of each database per mutant; the four kinds take turns
    // from round to round, so every database of a base meets each of them.
    const WALKS: [&[&str]; 4] = [
        &[],
        &["--reverse", "--keys-only"],
        &["--keys-only"],
        &["--reverse"],
    ];
    for db in 0..info.keys.len() {
        let mut args = vec!["scan".to_string()];
        args.extend(sub(db));
        args.extend(s(WALKS[(round + db) % WALKS.len()]));
        cmds.push((args.join(" "), args, false));
    }
    let db = round % info.keys.len();
    let keys = &info.keys[db];
    let n = keys.len();
    let with = |head: &[&str], tail: &[&str]| {
        let mut args = s(head);
        args.extend(sub(db));
        args.extend(s(tail));
        (args.join(" "), args, false)
    };
    cmds.push(with(&["count"], &[]));
    if n > 0 {
        cmds.push(with(
            &["count"],
            &["--hex", "--from", &keys[n / 4], "--to", &keys[3 * n / 4]],
        ));
        // A bounded walk of the same database: a key range (one of the
        // two directions), or the entries under the middle key's first
        // byte, or a run from a rank, in turn.
        let range = match round % 3 {
            0 => {
                let mut a = vec!["--hex", "--from", &keys[n / 4], "--to", &keys[3 * n / 4]];
                if round % 2 == 1 {
                    a.push("--reverse");
                }
                s(&a)
            }
            1 => {
                let first: String = keys[n / 2].chars().take(2).collect();
                s(&["--hex", "--prefix", &first])
            }
            _ => s(&["--from-rank", &(n / 3).to_string(), "--limit", "20"]),
        };
        let refs: Vec<&str> = range.iter().map(String::as_str).collect();
        cmds.push(with(&["scan"], &refs));
    }
    cmds.push(with(&["rank"], &["--rank", &(n / 2).to_string()]));
    let missing = missing_key(keys.get(n / 2), keys);
    if let Some(mid) = keys.get(n / 2) {
        cmds.push(with(&["rank"], &["--hex", "--key", mid]));
        if let Some(v) = &info.mid_values[db] {
            cmds.push(with(&["rank"], &["--hex", "--key", mid, "--value", v]));
        }
        let mut get = with(&["get"], &["--hex", mid]);
        get.2 = true;
        cmds.push(get);
    }
    cmds.push(with(&["get"], &["--hex", &missing]));
    if !info.names.is_empty() {
        let name = &info.names[round % info.names.len()];
        for c in ["dump", "stat"] {
            let args = s(&[c, "-s", name]);
            cmds.push((args.join(" "), args, false));
        }
    }
    cmds
}

#[test]
fn mutants_through_the_cli() {
    let n: u64 = std::env::var("DLMDB_MUTANTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    let seed: u64 = std::env::var("DLMDB_MUTANTS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(11);
    let strict = !std::env::var("DLMDB_MUTANTS_STRICT").is_ok_and(|v| v == "0");
    let fuzz = mutator();
    let tmp = tempfile::tempdir().unwrap();
    let emit = tmp.path().join("mutants");
    let out = fuzz_command(&fuzz)
        .args([
            "--seed",
            &seed.to_string(),
            "--cases",
            &n.to_string(),
            "--emit",
        ])
        .arg(&emit)
        .output()
        .expect("run fuzz_store");
    assert!(
        out.status.success(),
        "the engine itself failed on a mutant:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The base stores, in the fuzzer's order (files `NN-name.mdb`).
    let bases_dir = tmp.path().join("bases");
    let out = fuzz_command(&fuzz)
        .arg("--bases")
        .arg(&bases_dir)
        .output()
        .expect("run fuzz_store --bases");
    assert!(
        out.status.success(),
        "fuzz_store --bases: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut bases: Vec<(usize, PathBuf)> = std::fs::read_dir(&bases_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let file = p.file_name().unwrap().to_string_lossy().into_owned();
            let i = file.split('-').next().unwrap().parse().unwrap();
            (i, p)
        })
        .collect();
    bases.sort();
    assert!(
        !bases.is_empty() && bases.iter().enumerate().all(|(i, b)| b.0 == i),
        "base stores {bases:?}"
    );
    let mut infos: HashMap<usize, BaseInfo> = HashMap::new();
    let verdicts = std::fs::read_to_string(emit.join("verdicts.txt")).unwrap();
    let limit = Duration::from_secs(60);
    let mut failures = Vec::new();
    let mut misses = Vec::new();
    let (mut checked, mut check_problems, mut reads) = (0u64, 0u64, 0u64);
    // Mutants the engine reads and writes without an error that are asked
    // for a key of their base, and how many of them `get` finds it in:
    // most, or the keys are not the mutants' own.
    let (mut clean, mut clean_found) = (0u64, 0u64);
    for line in verdicts.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 4, "verdict line {line:?}");
        let (name, ro, rw, layout) = (
            f[0],
            f[1].parse::<i32>().unwrap(),
            f[2].parse::<i32>().unwrap(),
            f[3],
        );
        let case: usize = name[1..].parse().unwrap();
        let (base, round) = (case % bases.len(), case / bases.len());
        let info = infos.entry(base).or_insert_with(|| {
            base_info(
                &bases[base].1,
                layout,
                &tmp.path().join(format!("base{base}")),
            )
        });
        let src = emit.join(format!("{name}.mdb"));
        // Each mutant gets its own copy: opening creates a lock file and
        // `copy` writes beside it.
        let work = tmp.path().join("work");
        let _ = std::fs::remove_dir_all(&work);
        std::fs::create_dir(&work).unwrap();
        let store = work.join("m.mdb");
        std::fs::copy(&src, &store).unwrap();
        let at = |args: &[&str]| {
            let mut v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            v.push(store.to_string_lossy().into_owned());
            v
        };
        let mut commands: Vec<(String, Vec<String>, bool)> = vec![
            ("check".into(), at(&["check", "-q"]), false),
            ("dump -a".into(), at(&["dump", "-a"]), false),
            (
                "stat -a --pages".into(),
                at(&["stat", "-a", "--pages"]),
                false,
            ),
            (
                "copy".into(),
                vec![
                    "copy".into(),
                    store.to_string_lossy().into_owned(),
                    work.join("copy.mdb").to_string_lossy().into_owned(),
                ],
                false,
            ),
            (
                "copy -c".into(),
                vec![
                    "copy".into(),
                    "-c".into(),
                    store.to_string_lossy().into_owned(),
                    work.join("compact.mdb").to_string_lossy().into_owned(),
                ],
                false,
            ),
        ];
        let read = read_commands(info, round);
        reads += read.len() as u64;
        let asked = read.iter().any(|c| c.2);
        for (what, mut args, known) in read {
            args.insert(1, store.to_string_lossy().into_owned());
            commands.push((what, args, known));
        }
        let mut check_code = None;
        let mut found = false;
        for (what, args, known) in commands {
            let mut cmd = common::bin();
            cmd.args(&args).args(["--layout", layout]);
            let o = run(cmd, limit);
            let desc = format!("{name} ({layout}): dlmdb {what}");
            let is_check = what == "check";
            let codes: &[i32] = if is_check { &[0, 1, 2] } else { &[0, 1] };
            let code = judge(&desc, &o, codes, !is_check, limit, &mut failures);
            if is_check {
                check_code = code;
            }
            found |= known && code == Some(0);
        }
        checked += 1;
        if check_code == Some(1) {
            check_problems += 1;
        }
        if asked && ro == 0 && rw == 0 {
            clean += 1;
            clean_found += u64::from(found);
        }
        let rejected = engine_rejects(ro) || engine_rejects(rw);
        if rejected && check_code == Some(0) {
            misses.push(format!(
                "{name} ({layout}): engine {ro}/{rw}, check says ok"
            ));
        }
    }
    eprintln!(
        "mutants: {checked} through the CLI ({reads} single-database reads), check found \
         problems in {check_problems}, {} misses (engine rejects, check passes), {} failures; \
         get found the base's key in {clean_found} of {clean} mutants the engine reads clean",
        misses.len(),
        failures.len()
    );
    for m in &misses {
        eprintln!("  miss: {m}");
    }
    assert!(
        failures.is_empty(),
        "{} CLI failures on mutants (seed {seed}):\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        !strict || misses.is_empty(),
        "{} mutants the engine rejects pass check",
        misses.len()
    );
    assert!(
        clean == 0 || clean_found * 2 > clean,
        "get found the base's key in only {clean_found} of {clean} clean mutants"
    );
}
