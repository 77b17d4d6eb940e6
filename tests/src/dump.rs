//! The `mdb_dump` text format (lmdb-api.md §9.1): a parser for the recorded
//! fixture dumps (bytevalue and printable forms) and a renderer that produces
//! the exact text stock `mdb_dump -a` should print for a model.

/// One database block of a dump.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DumpDb {
    /// `database=` value; `None` for the main database.
    pub name: Option<Vec<u8>>,
    /// Header lines between `VERSION=3` and `HEADER=END`, as (name, value).
    pub header: Vec<(String, String)>,
    /// Key/data pairs in dump order.
    pub records: Vec<(Vec<u8>, Vec<u8>)>,
}

impl DumpDb {
    pub fn header_value(&self, name: &str) -> Option<&str> {
        self.header
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Database flags implied by the header flag lines (stock flag bits only).
    pub fn flags(&self) -> u32 {
        FLAG_NAMES
            .iter()
            .filter(|(_, n)| self.header_value(n).is_some())
            .fold(0, |acc, (bit, _)| acc | bit)
    }

    pub fn is_dupsort(&self) -> bool {
        self.flags() & 0x04 != 0
    }

    pub fn name_str(&self) -> String {
        self.name
            .as_ref()
            .map_or(String::new(), |n| String::from_utf8_lossy(n).into_owned())
    }
}

/// Flag lines in the order `mdb_dump` writes them.
pub const FLAG_NAMES: [(u32, &str); 6] = [
    (0x02, "reversekey"),
    (0x04, "dupsort"),
    (0x08, "integerkey"),
    (0x10, "dupfixed"),
    (0x20, "integerdup"),
    (0x40, "reversedup"),
];

fn decode_hex(line: &str) -> Result<Vec<u8>, String> {
    hex::decode(line).map_err(|e| format!("bad hex record {line:?}: {e}"))
}

/// Decode a `format=print` record (1.0-line escaping: `\\` is a backslash,
/// `\hh` a byte). Debian 0.9.24 does not double backslashes; the printable
/// fixture dumps here contain none, so that ambiguity never arises.
fn decode_print(line: &str) -> Result<Vec<u8>, String> {
    let b = line.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            if i + 1 < b.len() && b[i + 1] == b'\\' {
                out.push(b'\\');
                i += 2;
            } else {
                let h = line
                    .get(i + 1..i + 3)
                    .ok_or_else(|| format!("short escape in {line:?}"))?;
                let v = u8::from_str_radix(h, 16).map_err(|_| format!("bad escape in {line:?}"))?;
                out.push(v);
                i += 3;
            }
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(out)
}

/// Parse a complete dump text (one or more blocks).
pub fn parse_dump(text: &str) -> Result<Vec<DumpDb>, String> {
    let mut dbs = Vec::new();
    let mut lines = text.split_terminator('\n').peekable();
    while let Some(first) = lines.next() {
        if first.is_empty() {
            continue;
        }
        if first != "VERSION=3" {
            return Err(format!("expected VERSION=3, got {first:?}"));
        }
        let mut header = Vec::new();
        let mut name = None;
        loop {
            let l = lines.next().ok_or("dump ends inside a header")?;
            if l == "HEADER=END" {
                break;
            }
            let (k, v) = l
                .split_once('=')
                .ok_or_else(|| format!("bad header line {l:?}"))?;
            if k == "database" {
                name = Some(v.as_bytes().to_vec());
            }
            header.push((k.to_string(), v.to_string()));
        }
        let printable = header.iter().any(|(k, v)| k == "format" && v == "print");
        let mut records = Vec::new();
        loop {
            let k = lines.next().ok_or("dump ends inside data")?;
            if k == "DATA=END" {
                break;
            }
            let d = lines.next().ok_or("key line without data line")?;
            let (Some(k), Some(d)) = (k.strip_prefix(' '), d.strip_prefix(' ')) else {
                return Err(format!("record lines must start with a space: {k:?}"));
            };
            let dec = if printable { decode_print } else { decode_hex };
            records.push((dec(k)?, dec(d)?));
        }
        dbs.push(DumpDb {
            name,
            header,
            records,
        });
    }
    Ok(dbs)
}

/// What the dump header of one database must say.
#[derive(Debug, Clone)]
pub struct DumpHeader<'a> {
    pub name: Option<&'a [u8]>,
    pub mapsize: u64,
    pub maxreaders: u32,
    pub flags: u32,
    pub pagesize: u32,
}

/// Render one database in `mdb_dump` bytevalue format, exactly as the stock
/// tool writes it.
pub fn render_bytevalue<'a, I>(h: &DumpHeader<'_>, records: I) -> String
where
    I: IntoIterator<Item = (&'a [u8], &'a [u8])>,
{
    let mut s = String::from("VERSION=3\nformat=bytevalue\n");
    if let Some(n) = h.name {
        s.push_str("database=");
        s.push_str(&String::from_utf8_lossy(n));
        s.push('\n');
    }
    s.push_str(&format!(
        "type=btree\nmapsize={}\nmaxreaders={}\n",
        h.mapsize, h.maxreaders
    ));
    if h.flags & 0x04 != 0 {
        s.push_str("duplicates=1\n");
    }
    for (bit, n) in FLAG_NAMES {
        if h.flags & bit != 0 {
            s.push_str(n);
            s.push_str("=1\n");
        }
    }
    s.push_str(&format!("db_pagesize={}\nHEADER=END\n", h.pagesize));
    for (k, d) in records {
        s.push(' ');
        s.push_str(&hex::encode(k));
        s.push_str("\n ");
        s.push_str(&hex::encode(d));
        s.push('\n');
    }
    s.push_str("DATA=END\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn print_decoding() {
        assert_eq!(decode_print(r"a\\b\00c").unwrap(), b"a\\b\x00c");
        assert_eq!(decode_print(r"\ff").unwrap(), vec![0xff]);
    }

    #[test]
    fn round_trip() {
        let h = DumpHeader {
            name: Some(b"x"),
            mapsize: 1 << 20,
            maxreaders: 126,
            flags: 0x0a,
            pagesize: 4096,
        };
        let recs: Vec<(&[u8], &[u8])> = vec![(b"k", b""), (b"\x00\x01", b"zz")];
        let text = render_bytevalue(&h, recs.iter().copied());
        let dbs = parse_dump(&text).unwrap();
        assert_eq!(dbs.len(), 1);
        assert_eq!(dbs[0].flags(), 0x0a);
        assert_eq!(dbs[0].records[1], (vec![0, 1], b"zz".to_vec()));
        assert!(text.contains("reversekey=1\nintegerkey=1\ndb_pagesize=4096\n"));
    }
}
