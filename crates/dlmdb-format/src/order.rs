//! The stock key and duplicate orderings, chosen by database flags. Custom
//! comparators are not recorded in the file.

use crate::record::DbFlags;
use std::cmp::Ordering;

/// One of the stock comparators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Bytewise over the common length, shorter first.
    Lexical,
    /// Bytes compared from the end backwards, shorter first.
    Reverse,
    /// Native (little-endian) unsigned integers of 4 or 8 bytes.
    Integer,
}

impl Order {
    /// Key order: REVERSE_KEY wins over INTEGER_KEY.
    pub fn for_keys(flags: DbFlags) -> Order {
        Order::first_set(
            flags,
            [
                (DbFlags::REVERSE_KEY, Order::Reverse),
                (DbFlags::INTEGER_KEY, Order::Integer),
            ],
        )
    }

    /// Duplicate order of a DUPSORT database: INTEGER_DUP wins over REVERSE_DUP.
    pub fn for_dups(flags: DbFlags) -> Order {
        Order::first_set(
            flags,
            [
                (DbFlags::INTEGER_DUP, Order::Integer),
                (DbFlags::REVERSE_DUP, Order::Reverse),
            ],
        )
    }

    /// The order of the first of `choices` whose flag is set; lexical when
    /// none is.
    fn first_set(flags: DbFlags, choices: [(DbFlags, Order); 2]) -> Order {
        choices
            .into_iter()
            .find(|(f, _)| flags.contains(*f))
            .map_or(Order::Lexical, |(_, o)| o)
    }

    /// Compare two items. Integer items of unequal or unusual size have no
    /// defined order; they are compared by length, then bytes from the most
    /// significant end, which is at least a total order.
    pub fn cmp(self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            Order::Lexical => a.cmp(b),
            Order::Reverse => a.iter().rev().cmp(b.iter().rev()),
            Order::Integer => a
                .len()
                .cmp(&b.len())
                .then_with(|| a.iter().rev().cmp(b.iter().rev())),
        }
    }

    /// Whether `item` has a size this order is defined for.
    pub fn size_ok(self, item: &[u8]) -> bool {
        self != Order::Integer || item.len() == 4 || item.len() == 8
    }
}

/// A 4- or 8-byte native unsigned integer item as a number.
pub fn integer_value(item: &[u8]) -> Option<u64> {
    match item.len() {
        4 => Some(u64::from(u32::from_le_bytes(item.try_into().ok()?))),
        8 => Some(u64::from_le_bytes(item.try_into().ok()?)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders() {
        let i = Order::for_keys(DbFlags::INTEGER_KEY);
        assert_eq!(
            i.cmp(&256u32.to_le_bytes(), &255u32.to_le_bytes()),
            Ordering::Greater
        );
        assert_eq!(
            Order::for_keys(DbFlags::REVERSE_KEY | DbFlags::INTEGER_KEY),
            Order::Reverse
        );
        assert_eq!(Order::Reverse.cmp(b"ba", b"ab"), Ordering::Less);
        assert_eq!(Order::Reverse.cmp(b"a", b"ba"), Ordering::Less);
        assert_eq!(Order::Lexical.cmp(b"a", b"ab"), Ordering::Less);
        assert_eq!(
            Order::for_dups(DbFlags::INTEGER_DUP | DbFlags::REVERSE_DUP),
            Order::Integer
        );
        assert_eq!(integer_value(&7u32.to_le_bytes()), Some(7));
        assert_eq!(integer_value(&[1, 2, 3]), None);
        assert!(!Order::Integer.size_ok(b"abc"));
    }
}
