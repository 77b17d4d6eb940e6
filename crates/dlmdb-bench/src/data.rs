//! Deterministic keys, values and access orders.
//!
//! Everything is generated up front (untimed) into flat buffers, so a timed
//! loop only slices memory and calls the engine. Both engines see exactly the
//! same bytes in exactly the same order.
//!
//! Key scheme: the record with index `i` has id `2*i`; its key is the id as an
//! 8-byte big-endian integer followed by `key_size - 8` pseudo-random filler
//! bytes derived from the id. Big-endian first means memcmp order == id order,
//! so "sequential" really is ascending key order. Odd ids are never stored:
//! `SET_RANGE` seeks use the key of id `2*i - 1`, which is absent and lands on
//! record `i` (for 64-byte keys the seek key differs from the stored one in
//! the first 8 bytes, so the engine really takes the inexact path).

/// One SplitMix64 step: advance `state` and return the next output.
#[inline]
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// SplitMix64: tiny, fast, good enough to scramble orders and fill bytes.
#[derive(Clone)]
pub struct SplitMix(u64);

impl SplitMix {
    pub fn new(seed: u64) -> Self {
        SplitMix(seed)
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        splitmix64(&mut self.0)
    }

    /// Uniform in `0..n` (n > 0); the modulo bias is irrelevant here.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// Fill `out` with the 8-byte big-endian `id` then filler derived from `id`.
pub fn fill_record_bytes(id: u64, salt: u64, out: &mut [u8]) {
    let head = id.to_be_bytes();
    let n = out.len().min(8);
    out[..n].copy_from_slice(&head[..n]);
    let mut rng = SplitMix::new(id ^ salt);
    for chunk in out[n..].chunks_mut(8) {
        let w = rng.next_u64().to_le_bytes();
        chunk.copy_from_slice(&w[..chunk.len()]);
    }
}

const KEY_SALT: u64 = 0x6B65_795F_6669_6C6C;
const VAL_SALT: u64 = 0x7661_6C5F_6669_6C6C;

/// A fixed-stride table of byte strings.
pub struct Table {
    buf: Vec<u8>,
    stride: usize,
}

impl Table {
    #[inline(always)]
    pub fn get(&self, i: usize) -> &[u8] {
        &self.buf[i * self.stride..(i + 1) * self.stride]
    }

    pub fn len(&self) -> usize {
        self.buf.len().checked_div(self.stride).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// All inputs for one (entries, key_size, value_size) configuration.
pub struct Dataset {
    pub entries: usize,
    pub key_size: usize,
    pub value_size: usize,
    /// Stored keys, in ascending order (index i has id 2*i).
    pub keys: Table,
    /// Values, index-aligned with `keys`.
    pub values: Table,
    /// Seek keys: `seek_keys[i]` is the smallest key >= which is record `i`.
    pub seek_keys: Table,
    /// A random permutation of `0..entries` (insert / lookup order).
    pub perm: Vec<u32>,
}

impl Dataset {
    pub fn new(entries: usize, key_size: usize, value_size: usize, seed: u64) -> Dataset {
        assert!(key_size >= 8, "keys carry an 8-byte id");
        let mut keys = vec![0u8; entries * key_size];
        let mut seek = vec![0u8; entries * key_size];
        let mut values = vec![0u8; entries * value_size];
        for i in 0..entries {
            let id = 2 * i as u64;
            fill_record_bytes(id, KEY_SALT, &mut keys[i * key_size..(i + 1) * key_size]);
            let seek_id = id.saturating_sub(1);
            fill_record_bytes(
                seek_id,
                KEY_SALT,
                &mut seek[i * key_size..(i + 1) * key_size],
            );
            fill_record_bytes(
                id,
                VAL_SALT,
                &mut values[i * value_size..(i + 1) * value_size],
            );
        }
        let mut perm: Vec<u32> = (0..entries as u32).collect();
        let mut rng = SplitMix::new(seed);
        for i in (1..perm.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            perm.swap(i, j);
        }
        Dataset {
            entries,
            key_size,
            value_size,
            keys: Table {
                buf: keys,
                stride: key_size,
            },
            values: Table {
                buf: values,
                stride: value_size,
            },
            seek_keys: Table {
                buf: seek,
                stride: key_size,
            },
            perm,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_sorted_and_seeks_land_on_their_record() {
        for ks in [8, 64] {
            let d = Dataset::new(1000, ks, 16, 7);
            for i in 1..d.entries {
                assert!(d.keys.get(i - 1) < d.keys.get(i));
                assert!(d.keys.get(i - 1) < d.seek_keys.get(i));
                assert!(d.seek_keys.get(i) <= d.keys.get(i));
            }
            assert_eq!(d.seek_keys.get(0), d.keys.get(0));
        }
    }

    #[test]
    fn perm_is_a_permutation() {
        let d = Dataset::new(5000, 8, 8, 1);
        let mut p = d.perm.clone();
        p.sort_unstable();
        assert!(p.iter().enumerate().all(|(i, &v)| v as usize == i));
        assert_ne!(d.perm[..10], p[..10]);
    }
}
