//! `dlmdb bench compare BASE NEW`: the regression gate.
//!
//! Rows are matched by name. For a measured row the change is
//! `new / base - 1` (lower-is-better rows; `base / new - 1` otherwise), so
//! a positive change is a slowdown. The row regresses only when the change
//! exceeds both its threshold (`--max-regression`, or the first matching
//! `--row-threshold`) and the measured noise of the two runs, which is the
//! sum of their relative spreads `(max - min) / median` (0 for a
//! single-sample row). An exact metric (sizes, pages, depth, entries)
//! regresses on any change. A row of BASE missing from NEW, or a row that
//! failed in NEW, is a regression too.

use serde::Serialize;

use crate::report::{Report, Row};

/// How one row compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Within threshold or noise.
    Same,
    /// Faster/smaller beyond threshold and noise.
    Improved,
    /// Slower/larger beyond threshold and noise.
    Regressed,
    /// An exact metric changed.
    ExactChanged,
    /// In BASE, not in NEW.
    Missing,
    /// Failed (error) in NEW.
    Failed,
    /// Only in NEW.
    New,
}

impl Status {
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            Status::Regressed | Status::ExactChanged | Status::Missing | Status::Failed
        )
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct RowDiff {
    pub name: String,
    pub unit: String,
    pub exact: bool,
    pub base: Option<f64>,
    pub new: Option<f64>,
    /// Positive = worse (see the module doc).
    pub change: Option<f64>,
    /// Sum of the two runs' relative spreads.
    pub noise: f64,
    pub threshold: f64,
    pub status: Status,
}

#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub suite: String,
    pub base_revision: Option<String>,
    pub new_revision: Option<String>,
    pub max_regression: f64,
    pub rows: Vec<RowDiff>,
    pub regressions: usize,
}

/// `--max-regression` and `--row-threshold` values: a percentage, `10%`
/// or `10` (both mean 10 percent).
pub fn parse_percent(s: &str) -> Result<f64, String> {
    let t = s.trim().trim_end_matches('%');
    let v: f64 = t
        .parse()
        .map_err(|_| format!("'{s}' is not a percentage (like 10%)"))?;
    if !(0.0..=10_000.0).contains(&v) {
        return Err(format!("'{s}' is out of range"));
    }
    Ok(v / 100.0)
}

/// `PATTERN=PERCENT`: rows whose name contains PATTERN use that threshold.
pub fn parse_override(s: &str) -> Result<(String, f64), String> {
    let (p, v) = s
        .rsplit_once('=')
        .ok_or_else(|| format!("'{s}' is not PATTERN=PERCENT"))?;
    if p.is_empty() {
        return Err(format!("'{s}': empty pattern"));
    }
    Ok((p.to_ascii_lowercase(), parse_percent(v)?))
}

fn noise(r: &Row) -> f64 {
    if r.samples.len() > 1 {
        r.spread.map_or(0.0, |s| s.noise)
    } else {
        0.0
    }
}

fn diff(b: &Row, n: &Row, threshold: f64) -> RowDiff {
    let noise = noise(b) + noise(n);
    let mut d = RowDiff {
        name: b.name.clone(),
        unit: n.unit.clone(),
        exact: b.exact || n.exact,
        base: b.value,
        new: n.value,
        change: None,
        noise,
        threshold,
        status: Status::Same,
    };
    let (Some(bv), Some(nv)) = (b.value, n.value) else {
        d.status = if n.error.is_some() || n.value.is_none() {
            Status::Failed
        } else {
            Status::Same
        };
        return d;
    };
    let change = if b.lower_is_better {
        if bv > 0.0 {
            nv / bv - 1.0
        } else if nv > 0.0 {
            f64::INFINITY
        } else {
            0.0
        }
    } else if nv > 0.0 {
        bv / nv - 1.0
    } else if bv > 0.0 {
        f64::INFINITY
    } else {
        0.0
    };
    d.change = Some(change);
    d.status = if d.exact {
        if bv == nv {
            Status::Same
        } else {
            Status::ExactChanged
        }
    } else if change > threshold && change > noise {
        Status::Regressed
    } else if -change > threshold && -change > noise {
        Status::Improved
    } else {
        Status::Same
    };
    d
}

/// Compare two reports. Errors (usage/schema level): different suites or
/// measures.
pub fn compare(
    base: &Report,
    new: &Report,
    max_regression: f64,
    overrides: &[(String, f64)],
) -> Result<Comparison, String> {
    if base.suite != new.suite {
        return Err(format!(
            "reports are of different suites ({} vs {})",
            base.suite, new.suite
        ));
    }
    if base.measure != new.measure {
        return Err(format!(
            "reports measure different things ({:?} vs {:?})",
            base.measure, new.measure
        ));
    }
    let threshold_of = |name: &str| {
        let l = name.to_ascii_lowercase();
        overrides
            .iter()
            .find(|(p, _)| l.contains(p.as_str()))
            .map_or(max_regression, |(_, t)| *t)
    };
    let mut rows = Vec::new();
    for b in &base.rows {
        let t = threshold_of(&b.name);
        match new.rows.iter().find(|n| n.name == b.name) {
            Some(n) => rows.push(diff(b, n, t)),
            None => rows.push(RowDiff {
                name: b.name.clone(),
                unit: b.unit.clone(),
                exact: b.exact,
                base: b.value,
                new: None,
                change: None,
                noise: noise(b),
                threshold: t,
                status: Status::Missing,
            }),
        }
    }
    for n in &new.rows {
        if !base.rows.iter().any(|b| b.name == n.name) {
            rows.push(RowDiff {
                name: n.name.clone(),
                unit: n.unit.clone(),
                exact: n.exact,
                base: None,
                new: n.value,
                change: None,
                noise: noise(n),
                threshold: threshold_of(&n.name),
                status: Status::New,
            });
        }
    }
    let regressions = rows.iter().filter(|r| r.status.is_failure()).count();
    Ok(Comparison {
        suite: base.suite.clone(),
        base_revision: base.git_revision.clone(),
        new_revision: new.git_revision.clone(),
        max_regression,
        rows,
        regressions,
    })
}

fn num(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(x) if x == x.trunc() && x.abs() < 1e15 => format!("{x:.0}"),
        Some(x) => format!("{x:.3}"),
    }
}

/// The differences as an aligned table.
pub fn render_comparison(c: &Comparison) -> String {
    let mut s = format!(
        "suite {}: {} -> {}, threshold {:.0}% (and beyond noise)\n",
        c.suite,
        c.base_revision.as_deref().unwrap_or("?"),
        c.new_revision.as_deref().unwrap_or("?"),
        c.max_regression * 100.0
    );
    s.push_str(&format!(
        "{:<40} {:>14} {:>14} {:>9} {:>7} {:>6}  {}\n",
        "row", "base", "new", "change", "noise", "limit", "status"
    ));
    for r in &c.rows {
        s.push_str(&format!(
            "{:<40} {:>14} {:>14} {:>9} {:>7} {:>6}  {}\n",
            r.name,
            num(r.base),
            num(r.new),
            r.change
                .map_or("-".into(), |x| format!("{:+.1}%", x * 100.0)),
            if r.exact {
                "exact".to_string()
            } else {
                format!("{:.0}%", r.noise * 100.0)
            },
            format!("{:.0}%", r.threshold * 100.0),
            match r.status {
                Status::Same => "ok",
                Status::Improved => "improved",
                Status::Regressed => "REGRESSED",
                Status::ExactChanged => "CHANGED (exact)",
                Status::Missing => "MISSING in new",
                Status::Failed => "FAILED in new",
                Status::New => "new row",
            }
        ));
    }
    s.push_str(&format!("{} regression(s)\n", c.regressions));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Measure, Report, Row};

    fn rep(rows: Vec<Row>) -> Report {
        let mut r = Report::new("peers", Measure::Wall, true, 3);
        r.rows = rows;
        r
    }

    #[test]
    fn percentages() {
        assert_eq!(parse_percent("10%"), Ok(0.1));
        assert_eq!(parse_percent("25"), Ok(0.25));
        assert!(parse_percent("x").is_err());
        assert_eq!(parse_override("rand_get=5%"), Ok(("rand_get".into(), 0.05)));
        assert!(parse_override("5%").is_err());
    }

    #[test]
    fn rules() {
        let base = rep(vec![
            Row::measured("narrow", "ns/op", true, vec![100.0, 101.0, 99.0]),
            Row::measured("wide", "ns/op", true, vec![100.0, 200.0, 60.0]),
            Row::exact("size", "bytes", 4096.0),
            Row::measured("gone", "ns/op", true, vec![1.0]),
        ]);
        let new = rep(vec![
            Row::measured("narrow", "ns/op", true, vec![300.0, 301.0, 299.0]),
            Row::measured("wide", "ns/op", true, vec![150.0, 250.0, 90.0]),
            Row::exact("size", "bytes", 4096.0),
        ]);
        let c = compare(&base, &new, 0.10, &[]).unwrap();
        let st: Vec<Status> = c.rows.iter().map(|r| r.status).collect();
        assert_eq!(
            st,
            [
                Status::Regressed,
                Status::Same,
                Status::Same,
                Status::Missing
            ]
        );
        assert_eq!(c.regressions, 2);
        // A per-row threshold above the change lets it pass.
        let c = compare(&base, &new, 0.10, &[("narrow".into(), 5.0)]).unwrap();
        assert_eq!(c.rows[0].status, Status::Same);
    }
}
