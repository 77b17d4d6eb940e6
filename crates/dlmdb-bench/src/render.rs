//! Text and Markdown renderings of a [`PeersReport`].

use std::fmt::Write;

use crate::{PeersReport, PeersRow};

fn ns(v: Option<f64>) -> String {
    match v {
        Some(x) if x >= 100.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.1}"),
        None => "-".into(),
    }
}

/// A ratio with two decimals, `-` when there is none.
pub(crate) fn ratio(v: Option<f64>) -> String {
    v.map(|r| format!("{r:.2}")).unwrap_or_else(|| "-".into())
}

/// One aligned line (used for progress output too).
pub(crate) fn row_line(r: &PeersRow) -> String {
    let mut s = format!(
        "{:<26} {:>10} {:>10} {:>6} {:>6}",
        r.name,
        ns(r.ours_ns_per_op),
        ns(r.lmdb_ns_per_op),
        ratio(r.ratio),
        ratio(r.ratio_min)
    );
    if let Some(e) = &r.error {
        let _ = write!(s, "  ERROR: {e}");
    }
    s
}

fn header_facts(rep: &PeersReport) -> Vec<String> {
    let mut v = vec![
        format!("ours: {}   lmdb: {}", rep.ours_version, rep.lmdb_version),
        format!(
            "{} rounds per engine (A/B alternating, median shown), {} puts per write txn, env flags {:#x}{}, dir {} ({})",
            rep.rounds,
            rep.batch_size,
            rep.env_flags,
            if rep.ours_extra_flags != 0 { format!(" (+{:#x} for ours)", rep.ours_extra_flags) } else { String::new() },
            rep.dir,
            rep.dir_fs
        ),
        format!(
            "machine: {} cpus, {}, kernel {}, load {} -> {}, {:.1}s",
            rep.machine.nproc, rep.machine.cpu_model, rep.machine.kernel, rep.machine.loadavg_start,
            rep.machine.loadavg_end, rep.elapsed_secs
        ),
    ];
    if rep.ours_is_lmdb {
        v.push("NOTE: built without the dlmdb engine; \"ours\" is stock LMDB (self-test)".into());
    }
    if rep.build_profile != "release" {
        v.push(format!(
            "WARNING: {} build; numbers are not meaningful (use --release)",
            rep.build_profile
        ));
    }
    v
}

/// Plain aligned table for terminals.
pub fn render_text(rep: &PeersReport) -> String {
    let mut s = String::new();
    for l in header_facts(rep) {
        let _ = writeln!(s, "{l}");
    }
    let _ = writeln!(
        s,
        "{:<26} {:>10} {:>10} {:>6} {:>6}",
        "row (ns/op, median)", "ours", "lmdb", "ratio", "r(min)"
    );
    for r in &rep.rows {
        let _ = writeln!(s, "{}", row_line(r));
    }
    s
}

/// GitHub-flavoured Markdown table (what BENCHMARKS.md embeds).
pub fn render_markdown(rep: &PeersReport) -> String {
    let mut s = String::new();
    for l in header_facts(rep) {
        let _ = writeln!(s, "- {l}");
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "| row | ours ns/op | LMDB ns/op | ours/LMDB | ratio of best rounds |"
    );
    let _ = writeln!(s, "|---|---:|---:|---:|---:|");
    for r in &rep.rows {
        let mut ratio_cell = ratio(r.ratio);
        if let Some(e) = &r.error {
            ratio_cell = format!("error: {}", e.replace('|', "/"));
        }
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} |",
            r.name,
            ns(r.ours_ns_per_op),
            ns(r.lmdb_ns_per_op),
            ratio_cell,
            ratio(r.ratio_min)
        );
    }
    s
}
