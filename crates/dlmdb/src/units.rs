//! Figures for people: byte counts in binary units, as the command-line
//! tool and the terminal viewer both print them.

/// `8589934592` -> `8.0 GiB`: binary units, one decimal above bytes.
pub fn human_bytes(bytes: u64) -> String {
    if bytes < 1024 {
        // Whole bytes carry no decimal.
        return format!("{bytes} B");
    }
    humansize::format_size(bytes, humansize::BINARY.decimal_places(1).decimal_zeroes(1))
}

#[cfg(test)]
mod tests {
    use super::human_bytes;

    #[test]
    fn binary_units_with_one_decimal() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1024), "1.0 KiB");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(8 << 30), "8.0 GiB");
        assert_eq!(human_bytes((1 << 20) - 1), "1024.0 KiB");
        assert_eq!(human_bytes(3 << 40), "3.0 TiB");
        assert_eq!(human_bytes(u64::MAX), "16.0 EiB");
    }
}
