//! `get`, `scan` and `drop` against stores stock LMDB wrote, with the
//! reference tool's dump of the same store as the ground truth.

mod common;

use common::{bin, dlmdb_at, fixture_dir, fixtures, stdout_at};
use dlmdb_cli::util::hex;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

type Records = Vec<(Vec<u8>, Vec<u8>)>;

/// Records per database of a bytevalue dump text.
fn parse_dump(text: &str) -> BTreeMap<String, Records> {
    let mut out = BTreeMap::new();
    let (mut name, mut recs, mut key): (String, Records, Option<Vec<u8>>) =
        (String::new(), Vec::new(), None);
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("database=") {
            name = n.to_string();
        } else if line == "DATA=END" {
            out.insert(std::mem::take(&mut name), std::mem::take(&mut recs));
        } else if let Some(h) = line.strip_prefix(' ') {
            let mut b = Vec::new();
            dlmdb_cli::util::hex_decode_into(&mut b, h.as_bytes(), 2).unwrap();
            match key.take() {
                None => key = Some(b),
                Some(k) => recs.push((k, b)),
            }
        }
    }
    out
}

fn run(args: &[&str], store: &Path) -> (Option<i32>, String, String) {
    let out = dlmdb_at(args, store);
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// A copy of fixture `data` as a directory store in a temp dir, and the
/// parsed reference dump `dump`; `None` (skipped) without the fixtures.
fn fixture_and_dump(
    data: &str,
    dump: &str,
) -> Option<(tempfile::TempDir, PathBuf, BTreeMap<String, Records>)> {
    let fx = fixtures()?;
    let tmp = tempfile::tempdir().unwrap();
    let store = fixture_dir(data, tmp.path(), "s")?;
    let text = std::fs::read_to_string(fx.join(dump)).unwrap();
    Some((tmp, store, parse_dump(&text)))
}

/// `KEYHEX\tVALUEHEX` lines of `recs`.
fn lines(recs: &[(Vec<u8>, Vec<u8>)]) -> String {
    recs.iter()
        .map(|(k, v)| format!("{}\t{}\n", hex(k), hex(v)))
        .collect()
}

#[test]
fn scan_matches_the_reference_dump() {
    let Some((_tmp, store, dump)) = fixture_and_dump("stock.mdb", "stock.dump.txt") else {
        return;
    };
    let acc = &dump["accounts"];
    let tags = &dump["tags"];
    let hexs = ["--format", "hex"];
    let scan = |extra: &[&str]| {
        let mut a = vec!["scan", "-s"];
        a.extend_from_slice(extra);
        a.extend_from_slice(&hexs);
        stdout_at(&a, &store)
    };
    assert_eq!(scan(&["accounts"]), lines(acc));
    assert_eq!(scan(&["tags"]), lines(tags), "every duplicate, in order");
    // Reverse, limit.
    let mut rev: Records = acc.iter().rev().take(5).cloned().collect();
    assert_eq!(
        scan(&["accounts", "--reverse", "--limit", "5"]),
        lines(&rev)
    );
    rev = tags.iter().rev().take(7).cloned().collect();
    assert_eq!(scan(&["tags", "--reverse", "--limit", "7"]), lines(&rev));
    // Ranges: [from, to) and [from, to], given in hex.
    let (from, to) = (&acc[100].0, &acc[140].0);
    let args = ["accounts", "--hex", "--from", &hex(from), "--to", &hex(to)];
    assert_eq!(scan(&args), lines(&acc[100..140]));
    let mut incl = args.to_vec();
    incl.push("--include-to");
    assert_eq!(scan(&incl), lines(&acc[100..=140]));
    incl.push("--reverse");
    let r: Records = acc[100..=140].iter().rev().cloned().collect();
    assert_eq!(scan(&incl), lines(&r));
    let mut excl = args.to_vec();
    excl.extend_from_slice(&["--exclude-from", "--reverse"]);
    let r: Records = acc[101..140].iter().rev().cloned().collect();
    assert_eq!(scan(&excl), lines(&r));
    // Prefix: the keys that start with it, nothing else.
    let p = &acc[500].0[..acc[500].0.len() - 1];
    let want: Records = acc
        .iter()
        .filter(|(k, _)| k.starts_with(p))
        .cloned()
        .collect();
    assert!(want.len() > 1);
    assert_eq!(
        scan(&["accounts", "--hex", "--prefix", &hex(p)]),
        lines(&want)
    );
    // Keys only on a DUPSORT database: each key once.
    let mut keys: Vec<&[u8]> = tags.iter().map(|(k, _)| k.as_slice()).collect();
    keys.dedup();
    let out = scan(&["tags", "--keys-only"]);
    let got: Vec<String> = out.lines().map(str::to_owned).collect();
    assert_eq!(got, keys.iter().map(|k| hex(k)).collect::<Vec<_>>());
    // From a rank (a cursor walk on a database without MDB_COUNTED).
    assert_eq!(
        scan(&["accounts", "--from-rank", "1000", "--limit", "3"]),
        lines(&acc[1000..1003])
    );
    // JSON: the same items.
    let v: serde_json::Value = serde_json::from_str(&stdout_at(
        &["scan", "--json", "-s", "accounts", "--limit", "2"],
        &store,
    ))
    .unwrap();
    assert_eq!(v["items"][1]["key_hex"], hex(&acc[1].0));
    assert_eq!(v["items"][1]["value_hex"], hex(&acc[1].1));
    assert_eq!(v["truncated"], true);
}

#[test]
fn scan_from_rank_on_a_counted_database() {
    let Some((_tmp, store, dump)) = fixture_and_dump("v2/counted.mdb", "v2/counted.dump.txt")
    else {
        return;
    };
    for db in ["counted", "counted_dups"] {
        let recs = &dump[db];
        let r = recs.len() / 2;
        let v: serde_json::Value = serde_json::from_str(&stdout_at(
            &[
                "scan",
                "--json",
                "-s",
                db,
                "--from-rank",
                &r.to_string(),
                "--limit",
                "4",
            ],
            &store,
        ))
        .unwrap();
        assert_eq!(v["rank_method"], "counted");
        for (i, item) in v["items"].as_array().unwrap().iter().enumerate() {
            assert_eq!(item["key_hex"], hex(&recs[r + i].0), "{db} rank {}", r + i);
            assert_eq!(
                item["value_hex"],
                hex(&recs[r + i].1),
                "{db} rank {}",
                r + i
            );
        }
    }
}

/// `dlmdb get OPTS STORE KEY`.
fn get(opts: &[&str], store: &Path, key: &str) -> (Option<i32>, Vec<u8>, String) {
    let out = bin()
        .arg("get")
        .args(opts)
        .arg(store)
        .arg(key)
        .output()
        .unwrap();
    (
        out.status.code(),
        out.stdout,
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn get_matches_the_reference_dump() {
    let Some((_tmp, store, dump)) = fixture_and_dump("stock.mdb", "stock.dump.txt") else {
        return;
    };
    for (k, v) in dump["accounts"].iter().step_by(97) {
        let (code, out, err) = get(
            &["-s", "accounts", "--hex", "--format", "hex"],
            &store,
            &hex(k),
        );
        assert_eq!(code, Some(0), "{err}");
        assert_eq!(out, format!("{}\n", hex(v)).into_bytes());
    }
    // Raw bytes of a large (overflow) value.
    let (k, v) = dump["accounts"]
        .iter()
        .max_by_key(|(_, v)| v.len())
        .unwrap();
    assert!(v.len() > 4096);
    let (_, out, _) = get(
        &["-s", "accounts", "--hex", "--format", "raw"],
        &store,
        &hex(k),
    );
    assert_eq!(&out, v);
    // Every value of a DUPSORT key, in order.
    let tags = &dump["tags"];
    let key = &tags[10].0;
    let want: String = tags
        .iter()
        .filter(|(k, _)| k == key)
        .map(|(_, v)| format!("{}\n", hex(v)))
        .collect();
    assert!(want.lines().count() > 1);
    let (_, out, _) = get(
        &["-s", "tags", "--hex", "--format", "hex"],
        &store,
        &hex(key),
    );
    assert_eq!(String::from_utf8(out).unwrap(), want);
    let (code, out, err) = get(&["-s", "tags"], &store, "no such key");
    assert_eq!(code, Some(1));
    assert!(out.is_empty());
    assert_eq!(
        err,
        format!(
            "dlmdb: {}: database \"tags\": key \"no such key\" not found\n",
            store.display()
        )
    );
}

#[test]
fn drop_empties_or_deletes_and_the_store_stays_sound() {
    let Some(_) = fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let store = fixture_dir("stock.mdb", tmp.path(), "s").unwrap();
    let v: serde_json::Value = serde_json::from_str(&stdout_at(
        &["drop", "--json", "--yes", "-s", "tags"],
        &store,
    ))
    .unwrap();
    assert_eq!(v["entries"], 1585);
    assert_eq!(v["deleted"], false);
    assert!(stdout_at(&["stat", "-s", "tags"], &store).contains("  Entries: 0\n"));
    stdout_at(&["drop", "--yes", "--delete", "-s", "seq"], &store);
    assert_eq!(stdout_at(&["dump", "-l"], &store), "accounts\ntags\n");
    let (code, out, err) = run(&["check"], &store);
    assert_eq!(code, Some(0), "{out}{err}");
    // Stock tools read the result.
    if let Ok(o) = std::process::Command::new("mdb_dump")
        .arg("-l")
        .arg(&store)
        .output()
    {
        assert_eq!(String::from_utf8_lossy(&o.stdout), "accounts\ntags\n");
    }
    // The main database holds the names: it is neither deleted nor emptied.
    let (code, _, err) = run(&["drop", "--yes", "--delete"], &store);
    assert_eq!(code, Some(1), "{err}");
    let (code, _, err) = run(&["drop", "--yes"], &store);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("holds named databases"), "{err}");
}

#[test]
fn drop_on_a_terminal_needs_yes() {
    let Some(_) = fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let store = fixture_dir("stock.mdb", tmp.path(), "s").unwrap();
    // `script` runs the command with a pseudo-terminal as standard input.
    let cmd = format!(
        "{} drop -s tags {}",
        env!("CARGO_BIN_EXE_dlmdb"),
        store.display()
    );
    let out = std::process::Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .expect("script(1) from util-linux");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("without --yes"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(stdout_at(&["stat", "-s", "tags"], &store).contains("  Entries: 1585\n"));
}
