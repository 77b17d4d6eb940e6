//! Small shared pieces: hex and printable encodings of the dump format,
//! key orderings per database flags, and store opening for writers.

pub use dlmdb::unsupported_format_note;

/// Two lowercase hex digits for every byte value, so encoding is one table
/// lookup per byte (dump speed matters on big stores).
static HEX_PAIRS: [[u8; 2]; 256] = {
    let digits = b"0123456789abcdef";
    let mut t = [[0u8; 2]; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = [digits[i >> 4], digits[i & 15]];
        i += 1;
    }
    t
};

/// Value of an ASCII hex digit, 0xff for anything else.
static HEX_VAL: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// Append `bytes` as lowercase hex.
pub fn hex_encode_into(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() * 2);
    for &b in bytes {
        out.extend_from_slice(&HEX_PAIRS[b as usize]);
    }
}

/// Lowercase hex string.
pub fn hex(bytes: &[u8]) -> String {
    let mut v = Vec::with_capacity(bytes.len() * 2);
    hex_encode_into(&mut v, bytes);
    String::from_utf8(v).expect("hex is ASCII")
}

/// Append `bytes` in the dump's printable form: 0x20..=0x7e as themselves
/// except `\` doubled, everything else `\hh`. (Debian's 0.9.24 tool does not
/// double backslashes; the 1.0 line and DLMDB do, and only that form can be
/// read back unambiguously.)
pub fn print_encode_into(out: &mut Vec<u8>, bytes: &[u8]) {
    print_encode_into_with(out, bytes, true)
}

/// As [`print_encode_into`]; `double_backslash = false` writes `\` as is,
/// like Debian's `mdb_dump` 0.9.24 (ambiguous when read back).
pub fn print_encode_into_with(out: &mut Vec<u8>, bytes: &[u8], double_backslash: bool) {
    for &b in bytes {
        if b == b'\\' && double_backslash {
            out.extend_from_slice(b"\\\\");
        } else if (0x20..=0x7e).contains(&b) {
            out.push(b);
        } else {
            out.push(b'\\');
            out.extend_from_slice(&HEX_PAIRS[b as usize]);
        }
    }
}

/// Printable form as a string.
pub fn printable(bytes: &[u8]) -> String {
    let mut v = Vec::with_capacity(bytes.len());
    print_encode_into(&mut v, bytes);
    String::from_utf8(v).expect("printable form is ASCII")
}

/// Why a record line could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    OddLength(usize),
    BadHexDigit { column: usize, byte: u8 },
    BadEscape { column: usize },
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::OddLength(n) => write!(f, "odd number of hex digits ({n})"),
            DecodeError::BadHexDigit { column, byte } => {
                write!(
                    f,
                    "invalid hex digit {:?} at column {column}",
                    *byte as char
                )
            }
            DecodeError::BadEscape { column } => write!(
                f,
                "invalid escape at column {column} (expected \\\\ or \\ and two hex digits)"
            ),
        }
    }
}

/// Decode hex digits (either case) into `out`. `col0` is the column of
/// `text[0]` in the input line (1-based), for messages.
pub fn hex_decode_into(out: &mut Vec<u8>, text: &[u8], col0: usize) -> Result<(), DecodeError> {
    if !text.len().is_multiple_of(2) {
        // Report a bad digit first if there is one: it is the likelier cause.
        if let Some(i) = text.iter().position(|&b| HEX_VAL[b as usize] == 0xff) {
            return Err(DecodeError::BadHexDigit {
                column: col0 + i,
                byte: text[i],
            });
        }
        return Err(DecodeError::OddLength(text.len()));
    }
    out.reserve(text.len() / 2);
    for (i, pair) in text.chunks_exact(2).enumerate() {
        let (h, l) = (HEX_VAL[pair[0] as usize], HEX_VAL[pair[1] as usize]);
        if h == 0xff || l == 0xff {
            let off = if h == 0xff { 0 } else { 1 };
            return Err(DecodeError::BadHexDigit {
                column: col0 + 2 * i + off,
                byte: pair[off],
            });
        }
        out.push(h << 4 | l);
    }
    Ok(())
}

/// Decode the printable form (`\\` and `\hh` escapes) into `out`.
pub fn print_decode_into(out: &mut Vec<u8>, text: &[u8], col0: usize) -> Result<(), DecodeError> {
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if b != b'\\' {
            out.push(b);
            i += 1;
            continue;
        }
        if text.get(i + 1) == Some(&b'\\') {
            out.push(b'\\');
            i += 2;
            continue;
        }
        match (text.get(i + 1), text.get(i + 2)) {
            (Some(&h), Some(&l)) if HEX_VAL[h as usize] != 0xff && HEX_VAL[l as usize] != 0xff => {
                out.push(HEX_VAL[h as usize] << 4 | HEX_VAL[l as usize]);
                i += 3;
            }
            _ => return Err(DecodeError::BadEscape { column: col0 + i }),
        }
    }
    Ok(())
}

/// The stock orderings live with the rest of the format (`db_flags` turns
/// the raw `md_flags` the commands read into the crate's flag type).
pub use dlmdb_format::Order;

/// The persisted database flags as the format crate's type.
pub fn db_flags(raw: u32) -> dlmdb_format::DbFlags {
    dlmdb_format::DbFlags::from_bits_truncate(raw as u16)
}

/// How `get` and `scan` write keys and values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// The dump's printable form: bytes 0x20-0x7e as themselves, `\\` and `\hh`.
    Text,
    /// Lowercase hex.
    Hex,
    /// The bytes as stored (get only; unsafe for binary data on a terminal).
    Raw,
}

/// Append `bytes` in `format`.
pub fn encode_into(out: &mut Vec<u8>, bytes: &[u8], format: OutputFormat) {
    match format {
        OutputFormat::Text => print_encode_into(out, bytes),
        OutputFormat::Hex => hex_encode_into(out, bytes),
        OutputFormat::Raw => out.extend_from_slice(bytes),
    }
}

/// A key or value given on the command line: hex digits with `hex`, else
/// the argument's bytes as they are.
pub fn arg_bytes(s: &str, hex: bool) -> Result<Vec<u8>, DecodeError> {
    let mut v = Vec::new();
    if hex {
        hex_decode_into(&mut v, s.as_bytes(), 1)?;
    } else {
        v.extend_from_slice(s.as_bytes());
    }
    Ok(v)
}

/// [`arg_bytes`], a bad hex argument being a usage error.
pub fn parse_arg(s: &str, hex: bool) -> anyhow::Result<Vec<u8>> {
    arg_bytes(s, hex)
        .map_err(|e| crate::error::fail(crate::error::Kind::Usage, format!("argument {s:?}: {e}")))
}

/// The store and database a command reads (`PATH`, `-s NAME`).
#[derive(clap::Args)]
pub struct DbArgs {
    /// Environment directory or data file.
    pub path: std::path::PathBuf,
    /// Named database (default: the main database).
    #[arg(short = 's', long = "subdb", value_name = "NAME")]
    pub subdb: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    type Decode = fn(&mut Vec<u8>, &[u8], usize) -> Result<(), DecodeError>;

    /// Every byte value comes back from `decode` as `encode` wrote it.
    fn every_byte_round_trips(encode: fn(&mut Vec<u8>, &[u8]), decode: Decode) {
        let all: Vec<u8> = (0..=255).collect();
        let mut enc = Vec::new();
        encode(&mut enc, &all);
        let mut dec = Vec::new();
        decode(&mut dec, &enc, 2).unwrap();
        assert_eq!(dec, all);
    }

    #[test]
    fn hex_round_trip() {
        every_byte_round_trips(hex_encode_into, hex_decode_into);
        let mut up = Vec::new();
        hex_decode_into(&mut up, b"ABcd", 2).unwrap();
        assert_eq!(up, [0xab, 0xcd]);
        assert_eq!(
            hex_decode_into(&mut up, b"abc", 2),
            Err(DecodeError::OddLength(3))
        );
        assert_eq!(
            hex_decode_into(&mut up, b"zz", 2),
            Err(DecodeError::BadHexDigit {
                column: 2,
                byte: b'z'
            })
        );
    }

    #[test]
    fn print_round_trip() {
        every_byte_round_trips(print_encode_into, print_decode_into);
        let mut dec = Vec::new();
        assert_eq!(printable(b"a\\b\n"), "a\\\\b\\0a");
        assert!(print_decode_into(&mut dec, b"\\x1", 2).is_err());
    }

    #[test]
    fn raw_flags_choose_the_order() {
        assert_eq!(Order::for_keys(db_flags(0x0a)), Order::Reverse);
        assert_eq!(Order::for_keys(db_flags(0x08)), Order::Integer);
        assert_eq!(Order::for_dups(db_flags(0x60)), Order::Integer);
    }
}
