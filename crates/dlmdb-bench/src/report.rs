//! The one report shape every suite produces (`--json`), its renderings
//! for CI benchmark tools (`bmf`, `gab`) and the noise rules.
//!
//! A [`Report`] carries `schema_version` (bumped on any incompatible
//! change), tool and engine versions, the git revision of the checkout the
//! binary was built from, machine and load, the suite's options, and rows.
//! A [`Row`] is one metric: a value with its unit and direction, the
//! per-round samples and their spread, optionally a reference side (stock
//! LMDB for peer rows, the naive method for API rows, the uncompressed
//! baseline for compression rows) with the ratio between the two, and
//! optionally a target with its verdict. Deterministic metrics (sizes,
//! pages, depth, entries) are `exact` and have no spread.
//!
//! The JSON Schema of this shape is `crates/dlmdb-bench/report.schema.json`;
//! a test validates every suite's output against it.

use serde::{Deserialize, Serialize};

/// Version of the report shape. Readers refuse other versions.
pub const SCHEMA_VERSION: u32 = 1;

/// A row whose relative spread ((max - min) / median) exceeds this is
/// marked `noisy`.
pub const NOISY_SPREAD: f64 = 0.25;

/// How time was measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Measure {
    /// Wall-clock time (monotonic clock).
    Wall,
    /// Retired user-space instructions of this process (perf_event_open);
    /// values are instructions instead of nanoseconds.
    Instructions,
}

impl Measure {
    /// What the timed regions of this process measure.
    pub fn current() -> Measure {
        if crate::measure::instructions() {
            Measure::Instructions
        } else {
            Measure::Wall
        }
    }

    /// Unit name of a per-operation figure computed in microseconds, and
    /// the factor that turns it into that unit (a millisecond stamp holds a
    /// million instructions, so instructions per op are 1000 times the
    /// microsecond figure).
    pub fn per_us(self) -> (&'static str, f64) {
        match self {
            Measure::Wall => ("us", 1.0),
            Measure::Instructions => ("instr", 1000.0),
        }
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Machine {
    pub nproc: usize,
    pub cpu_model: String,
    pub kernel: String,
    /// `/proc/loadavg` (1, 5, 15 minutes) when the run started and ended.
    pub loadavg_start: String,
    pub loadavg_end: String,
}

impl Machine {
    pub fn now() -> Machine {
        Machine {
            nproc: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(0),
            cpu_model: crate::sysinfo::cpu_model(),
            kernel: crate::sysinfo::kernel(),
            loadavg_start: crate::sysinfo::loadavg(),
            loadavg_end: String::new(),
        }
    }
}

/// Minimum, median and maximum of the samples, and the relative spread
/// `(max - min) / median` as the noise estimate (0 with one sample).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct Spread {
    pub min: f64,
    pub median: f64,
    pub max: f64,
    pub noise: f64,
}

impl Spread {
    pub fn of(samples: &[f64]) -> Option<Spread> {
        let median = crate::extra::median(samples)?;
        let min = samples.iter().copied().fold(f64::INFINITY, f64::min);
        let max = samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let noise = if median > 0.0 {
            (max - min) / median
        } else {
            0.0
        };
        Some(Spread {
            min,
            median,
            max,
            noise,
        })
    }

    /// The spread of `samples` and their median, the value a side of a
    /// row reports (both `None` without samples).
    fn with_median(samples: &[f64]) -> (Option<Spread>, Option<f64>) {
        let spread = Spread::of(samples);
        (spread, spread.map(|s| s.median))
    }
}

/// `a / b` when both figures exist and `b` is positive.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// The other side of a two-sided row.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Reference {
    /// "lmdb", "naive scan", "plain", ...
    pub label: String,
    pub value: Option<f64>,
    pub samples: Vec<f64>,
    pub spread: Option<Spread>,
}

/// Which figure a target bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// `ratio <= bound`
    RatioAtMost,
    /// `speedup >= bound`
    SpeedupAtLeast,
    /// `value <= bound`
    ValueAtMost,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Target {
    pub kind: TargetKind,
    pub bound: f64,
    /// `None` when the figure is missing (an error row).
    pub met: Option<bool>,
}

impl Target {
    pub fn describe(&self) -> String {
        match self.kind {
            TargetKind::RatioAtMost => format!("ratio <= {}", self.bound),
            TargetKind::SpeedupAtLeast => format!("speedup >= {}x", self.bound),
            TargetKind::ValueAtMost => format!("value <= {}", self.bound),
        }
    }
}

/// One metric.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Row {
    /// Unique within the report, `/`-separated, e.g. `prefix/insert`.
    pub name: String,
    /// `ns/op`, `us/op`, `ms`, `bytes`, `pages`, `count`, `x`, ...
    pub unit: String,
    /// The median of `samples` (or the single measured value); `None` when
    /// the row failed (see `error`).
    pub value: Option<f64>,
    pub lower_is_better: bool,
    /// A deterministic metric: compared exactly, no spread.
    pub exact: bool,
    /// Per-round values, in round order.
    pub samples: Vec<f64>,
    pub spread: Option<Spread>,
    /// The spread of this row (or of its reference) is wider than
    /// [`NOISY_SPREAD`], or the best rounds and the medians disagree on the
    /// target's verdict: the conclusion is not supported by this run.
    pub noisy: bool,
    pub reference: Option<Reference>,
    /// `value / reference.value`.
    pub ratio: Option<f64>,
    /// Ratio of the best rounds (`min / min`).
    pub ratio_min: Option<f64>,
    /// `reference.value / value` (how many times faster than the reference).
    pub speedup: Option<f64>,
    pub target: Option<Target>,
    pub error: Option<String>,
    pub note: Option<String>,
}

impl Row {
    /// A row of these figures alone: no reference, target, note or error.
    fn bare(
        name: String,
        unit: &str,
        value: Option<f64>,
        exact: bool,
        lower_is_better: bool,
        samples: Vec<f64>,
        spread: Option<Spread>,
    ) -> Row {
        Row {
            name,
            unit: unit.into(),
            value,
            lower_is_better,
            exact,
            samples,
            spread,
            noisy: false,
            reference: None,
            ratio: None,
            ratio_min: None,
            speedup: None,
            target: None,
            error: None,
            note: None,
        }
    }

    /// A measured row from per-round samples (value = median).
    pub fn measured(
        name: impl Into<String>,
        unit: &str,
        lower_is_better: bool,
        samples: Vec<f64>,
    ) -> Row {
        let (spread, value) = Spread::with_median(&samples);
        Row::bare(
            name.into(),
            unit,
            value,
            false,
            lower_is_better,
            samples,
            spread,
        )
        .settle()
    }

    /// A deterministic metric (sizes, counts).
    pub fn exact(name: impl Into<String>, unit: &str, value: f64) -> Row {
        Row::bare(
            name.into(),
            unit,
            Some(value),
            true,
            true,
            vec![value],
            None,
        )
    }

    /// A failed row.
    pub fn failed(name: impl Into<String>, unit: &str, error: String) -> Row {
        let mut r = Row::measured(name, unit, true, Vec::new());
        r.error = Some(error);
        r
    }

    pub fn with_reference(mut self, label: &str, samples: Vec<f64>) -> Row {
        let (spread, value) = Spread::with_median(&samples);
        self.reference = Some(Reference {
            label: label.into(),
            value,
            samples,
            spread,
        });
        self.settle()
    }

    pub fn with_target(mut self, kind: TargetKind, bound: f64) -> Row {
        self.target = Some(Target {
            kind,
            bound,
            met: None,
        });
        self.settle()
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Row {
        let n: String = note.into();
        if !n.is_empty() {
            self.note = Some(n);
        }
        self
    }

    pub fn with_error(mut self, e: Option<String>) -> Row {
        if e.is_some() {
            self.error = e;
        }
        self.settle()
    }

    /// Add the samples of the same row from another round of the suite.
    /// Exact rows must carry the same value.
    pub fn absorb(&mut self, other: &Row) -> Result<(), String> {
        if self.exact {
            if self.value != other.value {
                return Err(format!(
                    "{}: exact metric differs between rounds ({:?} vs {:?})",
                    self.name, self.value, other.value
                ));
            }
            return Ok(());
        }
        if self.error.is_none() {
            self.error = other.error.clone();
        }
        self.samples.extend_from_slice(&other.samples);
        (self.spread, self.value) = Spread::with_median(&self.samples);
        if let (Some(a), Some(b)) = (self.reference.as_mut(), other.reference.as_ref()) {
            a.samples.extend_from_slice(&b.samples);
            (a.spread, a.value) = Spread::with_median(&a.samples);
        }
        *self = std::mem::replace(self, Row::exact("", "", 0.0)).settle();
        Ok(())
    }

    /// Recompute the derived fields (ratios, verdict, noisy).
    fn settle(mut self) -> Row {
        if self.error.is_some() {
            self.value = None;
        }
        let refv = self.reference.as_ref().and_then(|r| r.value);
        let (v, r) = (self.value, refv);
        self.ratio = ratio(v, r);
        self.speedup = ratio(r, v);
        let mins = (
            self.spread.map(|s| s.min),
            self.reference
                .as_ref()
                .and_then(|r| r.spread)
                .map(|s| s.min),
        );
        self.ratio_min = ratio(v.and(mins.0), r.and(mins.1));
        let verdict = |ratio: Option<f64>, value: Option<f64>, t: &Target| -> Option<bool> {
            match t.kind {
                TargetKind::RatioAtMost => ratio.map(|x| x <= t.bound),
                TargetKind::SpeedupAtLeast => ratio.map(|x| x > 0.0 && 1.0 / x >= t.bound),
                TargetKind::ValueAtMost => value.map(|x| x <= t.bound),
            }
        };
        let mut disagree = false;
        if let Some(t) = &self.target {
            let met = verdict(self.ratio, self.value, t);
            let best = verdict(self.ratio_min, self.spread.map(|s| s.min), t);
            disagree = met.is_some() && best.is_some() && met != best;
            self.target = Some(Target { met, ..t.clone() });
        }
        let wide = |s: Option<Spread>| s.is_some_and(|s| s.noise > NOISY_SPREAD);
        self.noisy = !self.exact
            && (wide(self.spread)
                || wide(self.reference.as_ref().and_then(|r| r.spread))
                || disagree);
        self
    }
}

/// The report of one suite run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Report {
    pub schema_version: u32,
    /// `peers`, `dups`, `txns`, `count`, `sample`, `compress`, `dup-iter`.
    pub suite: String,
    /// Version of this tool (the `dlmdb` crates).
    pub tool_version: String,
    /// `mdb_version()` of our engine.
    pub engine_version: String,
    /// `mdb_version()` of stock LMDB when a row compares with it.
    pub peer_version: Option<String>,
    /// `git describe`-style revision of the checkout the binary was built
    /// from (`-dirty` when it had changes), if built from a checkout.
    pub git_revision: Option<String>,
    /// "release" or "debug" (debug numbers are meaningless).
    pub build_profile: String,
    pub machine: Machine,
    pub measure: Measure,
    pub quick: bool,
    pub rounds: usize,
    /// The suite's options as given (suite-specific keys).
    pub options: serde_json::Value,
    pub elapsed_secs: f64,
    pub rows: Vec<Row>,
}

/// The revision recorded at build time (see build.rs).
pub fn git_revision() -> Option<String> {
    option_env!("DLMDB_GIT_REVISION")
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// "release" or "debug": the Rust build profile of this binary (the C
/// engine is built at -O0 in a debug build too).
pub fn build_profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

impl Report {
    /// A report skeleton: versions, machine, build facts; rows empty.
    pub fn new(suite: &str, measure: Measure, quick: bool, rounds: usize) -> Report {
        Report {
            schema_version: SCHEMA_VERSION,
            suite: suite.into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            engine_version: {
                use crate::extra::Eng;
                crate::extra::OursE::version()
            },
            peer_version: None,
            git_revision: git_revision(),
            build_profile: build_profile().into(),
            machine: Machine::now(),
            measure,
            quick,
            rounds,
            options: serde_json::json!({}),
            elapsed_secs: 0.0,
            rows: Vec::new(),
        }
    }

    /// The skeleton of a report on `rounds` rounds of a suite that runs
    /// each round with the same `options`: the current measure, the
    /// options as given, and stock LMDB's version when a row compares with
    /// it (`peer`).
    pub fn of_rounds(
        suite: &str,
        rounds: usize,
        options: &impl Serialize,
        peer: bool,
    ) -> Result<Report, serde_json::Error> {
        let mut rep = Report::new(suite, Measure::current(), false, rounds);
        if peer {
            rep = rep.with_peer();
        }
        rep.options = serde_json::to_value(options)?;
        Ok(rep)
    }

    /// Record the end of the run (load, elapsed time).
    pub fn finish(&mut self, started: std::time::Instant) {
        self.machine.loadavg_end = crate::sysinfo::loadavg();
        self.elapsed_secs = started.elapsed().as_secs_f64();
    }

    pub fn with_peer(mut self) -> Report {
        use crate::extra::Eng;
        self.peer_version = Some(crate::extra::LmdbE::version());
        self
    }

    pub fn noisy_rows(&self) -> usize {
        self.rows.iter().filter(|r| r.noisy).count()
    }

    /// Fold another round of the same suite into this report (samples of
    /// rows with the same name are concatenated).
    pub fn absorb(&mut self, other: &Report) -> Result<(), String> {
        for o in &other.rows {
            match self.rows.iter_mut().find(|r| r.name == o.name) {
                Some(r) => r.absorb(o)?,
                None => self.rows.push(o.clone()),
            }
        }
        self.rounds += other.rounds;
        self.elapsed_secs += other.elapsed_secs;
        self.machine.loadavg_end = other.machine.loadavg_end.clone();
        Ok(())
    }

    /// Rows whose target is missed (or that failed).
    pub fn missed(&self) -> Vec<&Row> {
        self.rows
            .iter()
            .filter(|r| {
                r.error.is_some() || r.target.as_ref().is_some_and(|t| t.met == Some(false))
            })
            .collect()
    }

    /// The warning line printed (to stderr) when rows are noisy.
    pub fn noise_warning(&self) -> Option<String> {
        let n = self.noisy_rows();
        (n > 0).then(|| {
            format!(
                "warning: {n} of {} rows are noisy (samples spread over more than {:.0}% of the median, or best and median rounds disagree on a target); load {} -> {}; use more --rounds, --min-time, a quieter machine, or --measure instructions",
                self.rows.len(),
                NOISY_SPREAD * 100.0,
                self.machine.loadavg_start,
                self.machine.loadavg_end
            )
        })
    }

    /// Parse and check the schema version (a different version is an error).
    pub fn from_json(text: &str) -> Result<Report, String> {
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        match v.get("schema_version").and_then(|x| x.as_u64()) {
            Some(n) if n == SCHEMA_VERSION as u64 => {}
            Some(n) => {
                return Err(format!(
                    "schema_version {n} is not supported (this tool reads version {SCHEMA_VERSION})"
                ))
            }
            None => return Err("no schema_version: not a dlmdb bench report".into()),
        }
        serde_json::from_value(v).map_err(|e| format!("not a valid report: {e}"))
    }

    /// Keep only rows matching `filter` (comma-separated, case-insensitive
    /// substrings). Errors when nothing matches.
    pub fn apply_filter(&mut self, filter: &str) -> Result<(), String> {
        let pats: Vec<String> = filter
            .split(',')
            .map(|s| s.trim().to_ascii_lowercase())
            .filter(|s| !s.is_empty())
            .collect();
        if pats.is_empty() {
            return Err("empty --filter".into());
        }
        self.rows
            .retain(|r| pats.iter().any(|p| r.name.to_ascii_lowercase().contains(p)));
        if self.rows.is_empty() {
            return Err(format!(
                "--filter {filter:?} matches no row of suite {}",
                self.suite
            ));
        }
        Ok(())
    }
}

// ---------------------------------------------------------------- text

fn num(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(x) if x.abs() >= 1e5 || x == x.trunc() => format!("{x:.0}"),
        Some(x) if x.abs() >= 100.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.3}"),
    }
}

/// One aligned line per row: value, reference, ratio, spread, verdict.
pub fn row_line(r: &Row) -> String {
    let mut s = format!("{:<40} {:>12} {:<6}", r.name, num(r.value), r.unit);
    if let Some(rf) = &r.reference {
        s.push_str(&format!(" {}={:>12}", rf.label, num(rf.value)));
        s.push_str(&format!(
            " ratio={}",
            r.ratio.map_or("-".into(), |x| format!("{x:.3}"))
        ));
    }
    if let Some(sp) = r.spread {
        if r.samples.len() > 1 {
            s.push_str(&format!(" spread={:.0}%", sp.noise * 100.0));
        }
    }
    if let Some(t) = &r.target {
        match t.met {
            Some(true) => s.push_str(&format!(" ok ({})", t.describe())),
            Some(false) => s.push_str(&format!(" MISSED ({})", t.describe())),
            None => {}
        }
    }
    if r.noisy {
        s.push_str(" NOISY");
    }
    if let Some(e) = &r.error {
        s.push_str(&format!(" ERROR: {e}"));
    }
    if let Some(n) = &r.note {
        s.push_str(&format!("  [{n}]"));
    }
    s
}

/// Header lines: versions, revision, machine, load.
pub fn header(rep: &Report) -> String {
    format!(
        "suite {} (schema {}), dlmdb {} engine {}{}{}, {} build, measure {}, {} round(s){}\nmachine: {} cpus, {}, kernel {}, load {} -> {}, {:.1}s\n",
        rep.suite,
        rep.schema_version,
        rep.tool_version,
        rep.engine_version,
        rep.peer_version.as_deref().map(|p| format!(" vs {p}")).unwrap_or_default(),
        rep.git_revision.as_deref().map(|g| format!(", git {g}")).unwrap_or_default(),
        rep.build_profile,
        match rep.measure {
            Measure::Wall => "wall",
            Measure::Instructions => "instructions",
        },
        rep.rounds,
        if rep.quick { ", quick sizes" } else { "" },
        rep.machine.nproc,
        rep.machine.cpu_model,
        rep.machine.kernel,
        rep.machine.loadavg_start,
        rep.machine.loadavg_end,
        rep.elapsed_secs
    )
}

pub fn render_rows_text(rep: &Report) -> String {
    let mut s = header(rep);
    for r in &rep.rows {
        s.push_str(&row_line(r));
        s.push('\n');
    }
    s
}

pub fn render_rows_markdown(rep: &Report) -> String {
    let mut s = format!("{}\n", header(rep).replace('\n', "  \n"));
    s.push_str("| row | value | unit | reference | ref value | ratio | best-round ratio | spread | target | notes |\n");
    s.push_str("|---|---:|---|---|---:|---:|---:|---:|---|---|\n");
    for r in &rep.rows {
        let rf = r.reference.as_ref();
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.name,
            num(r.value),
            r.unit,
            rf.map_or("", |x| x.label.as_str()),
            num(rf.and_then(|x| x.value)),
            r.ratio.map_or("-".into(), |x| format!("{x:.3}")),
            r.ratio_min.map_or("-".into(), |x| format!("{x:.3}")),
            r.spread
                .filter(|_| r.samples.len() > 1)
                .map_or("-".into(), |x| format!("{:.0}%", x.noise * 100.0)),
            r.target.as_ref().map_or(String::new(), |t| format!(
                "{} {}",
                match t.met {
                    Some(true) => "ok",
                    Some(false) => "MISSED",
                    None => "-",
                },
                t.describe()
            )),
            [
                r.noisy.then(|| "noisy".to_string()),
                r.error.as_ref().map(|e| format!("ERROR: {e}")),
                r.note.clone()
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("; ")
        ));
    }
    s
}

// ---------------------------------------------------------------- CI formats

/// Bencher Metric Format: `{ "<row>": { "<measure>": { value, lower_value,
/// upper_value } } }`. The measure key is the row's unit made slug-like
/// (`ns/op` -> `ns_per_op`); a row with a reference adds a `ratio` measure.
pub fn render_bmf(rep: &Report) -> serde_json::Value {
    let mut top = serde_json::Map::new();
    for r in &rep.rows {
        let Some(v) = r.value else { continue };
        let mut m = serde_json::Map::new();
        let mut one = serde_json::Map::new();
        one.insert("value".into(), v.into());
        if let Some(sp) = r.spread.filter(|_| r.samples.len() > 1) {
            one.insert("lower_value".into(), sp.min.into());
            one.insert("upper_value".into(), sp.max.into());
        }
        m.insert(unit_slug(&r.unit), one.into());
        if let Some(x) = r.ratio {
            m.insert("ratio".into(), serde_json::json!({ "value": x }));
        }
        top.insert(r.name.clone(), m.into());
    }
    top.into()
}

fn unit_slug(u: &str) -> String {
    u.replace('/', "_per_")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// github-action-benchmark's custom tools: an array of `{ name, unit, value,
/// range, extra }`. `customSmallerIsBetter` takes the lower-is-better rows,
/// `customBiggerIsBetter` the others; `which` selects.
pub fn render_gab(rep: &Report, bigger_is_better: bool) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = rep
        .rows
        .iter()
        .filter(|r| r.lower_is_better != bigger_is_better)
        .filter_map(|r| {
            let v = r.value?;
            let mut o = serde_json::json!({ "name": r.name, "unit": r.unit, "value": v });
            if let Some(sp) = r.spread.filter(|_| r.samples.len() > 1) {
                o["range"] = format!("{} - {}", sp.min, sp.max).into();
            }
            let mut extra = Vec::new();
            if let (Some(rf), Some(x)) = (&r.reference, r.ratio) {
                extra.push(format!("ratio vs {} {x:.3}", rf.label));
            }
            if r.noisy {
                extra.push("noisy".into());
            }
            if !extra.is_empty() {
                o["extra"] = extra.join("; ").into();
            }
            Some(o)
        })
        .collect();
    rows.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_and_noise() {
        let s = Spread::of(&[10.0, 12.0, 11.0]).unwrap();
        assert_eq!((s.min, s.median, s.max), (10.0, 11.0, 12.0));
        assert!((s.noise - 2.0 / 11.0).abs() < 1e-12);
        let r = Row::measured("a", "ns/op", true, vec![10.0, 30.0, 11.0]);
        assert!(r.noisy);
        let r = Row::measured("a", "ns/op", true, vec![10.0, 10.5, 11.0]);
        assert!(!r.noisy);
    }

    #[test]
    fn reference_ratio_and_target() {
        let r = Row::measured("a", "ns/op", true, vec![10.0, 10.0, 10.0])
            .with_reference("lmdb", vec![20.0, 20.0, 20.0])
            .with_target(TargetKind::RatioAtMost, 1.25);
        assert_eq!(r.ratio, Some(0.5));
        assert_eq!(r.speedup, Some(2.0));
        assert_eq!(r.target.as_ref().unwrap().met, Some(true));
        let r = r.with_target(TargetKind::SpeedupAtLeast, 3.0);
        assert_eq!(r.target.as_ref().unwrap().met, Some(false));
    }

    #[test]
    fn absorb_joins_the_samples_of_both_sides() {
        let mut a =
            Row::measured("a", "ns/op", true, vec![10.0]).with_reference("lmdb", vec![20.0]);
        let b = Row::measured("a", "ns/op", true, vec![30.0, 12.0])
            .with_reference("lmdb", vec![24.0, 22.0]);
        a.absorb(&b).unwrap();
        assert_eq!(a.samples, vec![10.0, 30.0, 12.0]);
        assert_eq!(a.value, Some(12.0));
        assert_eq!(a.spread.map(|s| (s.min, s.max)), Some((10.0, 30.0)));
        let r = a.reference.as_ref().unwrap();
        assert_eq!((r.value, r.samples.len()), (Some(22.0), 3));
        assert_eq!(a.ratio, Some(12.0 / 22.0));
        assert_eq!(a.ratio_min, Some(10.0 / 20.0));
    }

    #[test]
    fn schema_version_is_checked() {
        let mut rep = Report::new("peers", Measure::Wall, true, 1);
        rep.rows.push(Row::exact("x/size", "bytes", 4096.0));
        let j = serde_json::to_string(&rep).unwrap();
        assert_eq!(Report::from_json(&j).unwrap(), rep);
        let bad = j.replace("\"schema_version\":1", "\"schema_version\":99");
        assert!(Report::from_json(&bad).unwrap_err().contains("99"));
    }

    #[test]
    fn unknown_filter_is_an_error() {
        let mut rep = Report::new("peers", Measure::Wall, true, 1);
        rep.rows.push(Row::exact("a/b", "bytes", 1.0));
        assert!(rep.clone().apply_filter("zzz").is_err());
        assert!(rep.apply_filter("A/").is_ok());
    }
}
