//! Bounds-checked little-endian reads. `None` when the field does not fit.

/// `u16` at `off`.
pub fn u16_at(b: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_le_bytes(
        b.get(off..off.checked_add(2)?)?.try_into().ok()?,
    ))
}

/// `u32` at `off`.
pub fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(off..off.checked_add(4)?)?.try_into().ok()?,
    ))
}

/// `u64` at `off`.
pub fn u64_at(b: &[u8], off: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(off..off.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// `len` bytes at `off`, or an [`OutOfBounds`](crate::FormatError::OutOfBounds) error naming `what`.
pub fn slice<'a>(
    b: &'a [u8],
    off: usize,
    len: usize,
    what: &'static str,
) -> crate::Result<&'a [u8]> {
    off.checked_add(len)
        .and_then(|end| b.get(off..end))
        .ok_or(crate::FormatError::OutOfBounds {
            what,
            offset: off,
            len,
            available: b.len(),
        })
}

/// As [`u16_at`], with an error naming `what`.
pub fn req_u16(b: &[u8], off: usize, what: &'static str) -> crate::Result<u16> {
    let s = slice(b, off, 2, what)?;
    Ok(u16::from_le_bytes([s[0], s[1]]))
}

/// As [`u64_at`], with an error naming `what`.
pub fn req_u64(b: &[u8], off: usize, what: &'static str) -> crate::Result<u64> {
    let s = slice(b, off, 8, what)?;
    Ok(u64::from_le_bytes(s.try_into().expect("8 bytes")))
}

/// A value stored little-endian at a fixed offset of a byte image.
pub trait ReadLe: Sized {
    /// The value at `off`; `None` when it does not fit.
    fn read_le(b: &[u8], off: usize) -> Option<Self>;
}

impl ReadLe for u16 {
    fn read_le(b: &[u8], off: usize) -> Option<u16> {
        u16_at(b, off)
    }
}

impl ReadLe for u32 {
    fn read_le(b: &[u8], off: usize) -> Option<u32> {
        u32_at(b, off)
    }
}

impl ReadLe for u64 {
    fn read_le(b: &[u8], off: usize) -> Option<u64> {
        u64_at(b, off)
    }
}

/// Declares a fixed-layout on-disk structure once: every stored field with
/// its meaning (the doc), its offset constant and offset, and its type.
/// Generates the `pub const` offsets, the struct, and a private
/// `read_fields` that decodes every stored field of a byte image (`None`
/// when one does not fit). Fields under `derived` are computed from the
/// stored ones (which the expressions name) instead of read.
macro_rules! fixed_layout {
    (
        $(#[$sm:meta])*
        pub struct $name:ident {
            $( $(#[$fm:meta])* $f:ident: $t:ty = $off_name:ident @ $off:literal, )*
        }
        $( derived { $( $(#[$dm:meta])* $d:ident: $dt:ty = $init:expr, )* } )?
    ) => {
        $(
            #[doc = concat!(
                "Offset of [`", stringify!($name), "::", stringify!($f),
                "`] (`", stringify!($t), "`)."
            )]
            pub const $off_name: usize = $off;
        )*

        $(#[$sm])*
        pub struct $name {
            $( $(#[$fm])* pub $f: $t, )*
            $($( $(#[$dm])* pub $d: $dt, )*)?
        }

        impl $name {
            fn read_fields(b: &[u8]) -> Option<$name> {
                $( let $f: $t = $crate::bytes::ReadLe::read_le(b, $off_name)?; )*
                $($( let $d: $dt = $init; )*)?
                Some($name { $($f,)* $($($d,)*)? })
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stop_at_the_end() {
        let b = [1u8, 2, 3, 4, 5, 6, 7, 8, 9];
        assert_eq!(u16_at(&b, 0), Some(0x0201));
        assert_eq!(u16_at(&b, 8), None);
        assert_eq!(u32_at(&b, 5), Some(0x0908_0706));
        assert_eq!(u64_at(&b, 1), Some(0x0908_0706_0504_0302));
        assert_eq!(u64_at(&b, 2), None);
        assert_eq!(u16_at(&b, usize::MAX), None);
        assert!(slice(&b, 4, 6, "x").is_err());
        assert_eq!(slice(&b, 4, 5, "x").unwrap(), &[5, 6, 7, 8, 9]);
    }
}
