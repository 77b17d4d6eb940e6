//! Parser for the recorded `mdb_stat -a -e -f` reports (lmdb-api.md §9.3).

/// The five statistic lines of one tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TreeStat {
    pub depth: u64,
    pub branch_pages: u64,
    pub leaf_pages: u64,
    pub overflow_pages: u64,
    pub entries: u64,
}

impl TreeStat {
    /// The same five numbers as a fixture's recorded facts hold them (an
    /// object with fields `depth`, `branch_pages`, `leaf_pages`,
    /// `overflow_pages` and `entries`).
    pub fn from_json(v: &serde_json::Value) -> TreeStat {
        let n = |field: &str| {
            v[field]
                .as_u64()
                .unwrap_or_else(|| panic!("no number {field:?} in recorded stat {v}"))
        };
        TreeStat {
            depth: n("depth"),
            branch_pages: n("branch_pages"),
            leaf_pages: n("leaf_pages"),
            overflow_pages: n("overflow_pages"),
            entries: n("entries"),
        }
    }
}

/// The two engines' statistics of one tree (the safe crate's and the raw
/// driver's), as the five numbers the reports show.
macro_rules! tree_stat_from {
    ($($t:ty),+) => {$(
        impl From<$t> for TreeStat {
            fn from(s: $t) -> TreeStat {
                TreeStat {
                    depth: s.depth.into(),
                    branch_pages: s.branch_pages,
                    leaf_pages: s.leaf_pages,
                    overflow_pages: s.overflow_pages,
                    entries: s.entries,
                }
            }
        }
    )+};
}

tree_stat_from!(dlmdb::Stat, dlmdb_kit::DbStat);

/// A whole `mdb_stat -a -e -f` report.
#[derive(Debug, Clone, Default)]
pub struct StatReport {
    pub map_size: u64,
    pub page_size: u64,
    pub pages_used: u64,
    pub last_txnid: u64,
    pub freelist: TreeStat,
    pub free_pages: u64,
    /// ("" for the main DB, else the name) in report order.
    pub dbs: Vec<(String, TreeStat)>,
}

impl StatReport {
    pub fn db(&self, name: &str) -> Option<&TreeStat> {
        self.dbs.iter().find(|(n, _)| n == name).map(|(_, s)| s)
    }
}

fn num(v: &str) -> u64 {
    v.trim()
        .parse()
        .unwrap_or_else(|_| panic!("not a number in stat report: {v:?}"))
}

pub fn parse_stat(text: &str) -> StatReport {
    let mut r = StatReport::default();
    // Which tree the indented statistic lines currently belong to.
    let mut cur: Option<TreeStat> = None;
    let mut cur_name: Option<String> = None;
    let mut in_freelist = false;
    let flush =
        |r: &mut StatReport, name: &mut Option<String>, st: &mut Option<TreeStat>, fl: bool| {
            if let Some(s) = st.take() {
                if fl {
                    r.freelist = s;
                } else if let Some(n) = name.take() {
                    r.dbs.push((n, s));
                }
            }
        };
    for line in text.lines() {
        if !line.starts_with(' ') {
            flush(&mut r, &mut cur_name, &mut cur, in_freelist);
            in_freelist = false;
            if line == "Freelist Status" {
                in_freelist = true;
                cur = Some(TreeStat::default());
            } else if line == "Status of Main DB" {
                cur_name = Some(String::new());
                cur = Some(TreeStat::default());
            } else if let Some(n) = line.strip_prefix("Status of ") {
                cur_name = Some(n.to_string());
                cur = Some(TreeStat::default());
            }
            continue;
        }
        let Some((k, v)) = line.trim().split_once(':') else {
            continue;
        };
        match (k, cur.as_mut()) {
            ("Map size", _) => r.map_size = num(v),
            ("Page size", _) => r.page_size = num(v),
            ("Number of pages used", _) => r.pages_used = num(v),
            ("Last transaction ID", _) => r.last_txnid = num(v),
            ("Free pages", _) => r.free_pages = num(v),
            ("Tree depth", Some(s)) => s.depth = num(v),
            ("Branch pages", Some(s)) => s.branch_pages = num(v),
            ("Leaf pages", Some(s)) => s.leaf_pages = num(v),
            ("Overflow pages", Some(s)) => s.overflow_pages = num(v),
            ("Entries", Some(s)) => s.entries = num(v),
            _ => {}
        }
    }
    flush(&mut r, &mut cur_name, &mut cur, in_freelist);
    r
}
