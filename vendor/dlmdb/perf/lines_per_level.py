#!/usr/bin/env python3
"""
lines_per_level.py - cache lines a random lookup touches on each tree level,
for our key search and for LMDB's, replayed on a real store of 8-byte
big-endian keys be64(2i) (the stores perf_reads builds).

    perf_reads DIR N ...                       # leaves DIR/data.mdb
    python3 perf/lines_per_level.py DIR/data.mdb ENGINE [LOOKUPS]

ENGINE is "lmdb" (LMDB's binary search: stops on an equal key, no
prefetching) or "ours" followed by options joined with "-":
  tail      look at each page's last node first (put searches do)
  ahead1    prefetch the next probe's two candidate nodes
  ahead2    prefetch the four candidates of the probe after next
  exit      stop on an equal key (our large-tree searches)
  answers   halve the n - lo + 1 possible answers (probe base + half - 1)
            instead of the nodes (a variant of the loop, not btree.c's)
and "seek" (lmdb-seek, ours-...-seek) looks up absent keys be64(2i - 1).
Prints, per level from the root, the lines the search reads (header,
pointer array, node headers and the first 8 key bytes, the landing node,
for a leaf the value's first byte) and in brackets the lines only
prefetched.  A model of the two algorithms, not a trace: it follows the
search loops of btree.c and of LMDB's node search step by step.
"""
import mmap
import random
import struct
import sys

PS = 4096


def main():
    path, engine = sys.argv[1], sys.argv[2]
    nlook = int(sys.argv[3]) if len(sys.argv) > 3 else 20000
    opts = set(engine.split('-'))
    f = open(path, 'rb')
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)

    def meta(p):  # (txnid, root, entries) of the main DB in meta page p
        b = p * PS
        return (struct.unpack_from('<Q', m, b + 144)[0],
                struct.unpack_from('<Q', m, b + 128)[0],
                struct.unpack_from('<Q', m, b + 120)[0])
    _, root, entries = max(meta(0), meta(1))

    def hdr(pg):
        flags, lower = struct.unpack_from('<HH', m, pg * PS + 10)
        return flags, (lower - 16) >> 1

    def ptr(pg, i):
        return struct.unpack_from('<H', m, pg * PS + 16 + 2 * i)[0]

    def key(pg, off):
        ks = struct.unpack_from('<H', m, pg * PS + off + 6)[0]
        return bytes(m[pg * PS + off + 8:pg * PS + off + 8 + ks])

    def lines(a, n):
        return set(range(a >> 6, ((a + n - 1) >> 6) + 1))

    def ours(pg, k, lo, rd, pf):
        n = hdr(pg)[1]
        rd.add(0)

        def probe_ptr(i, into):
            rd.update(lines(16 + 2 * i, 2))
            into.update(lines(ptr(pg, i) + 6, 10))
        if n <= lo:
            return lo, False
        if 'tail' in opts:
            probe_ptr(n - 1, rd)
            if k > key(pg, ptr(pg, n - 1)):
                return n, False
        if 'answers' in opts:
            base, cnt = lo, n - lo + 1
            while cnt > 1:
                half = cnt >> 1
                mid = base + half - 1
                c1 = cnt - half
                h1 = c1 >> 1
                if 'ahead1' in opts and c1 > 1:
                    for j in (base + h1 - 1, mid + h1):
                        probe_ptr(j, pf)
                probe_ptr(mid, rd)
                y = key(pg, ptr(pg, mid))
                if k == y and 'exit' in opts:
                    return mid, True
                if k > y:
                    base = mid + 1
                cnt = c1
            return base, base < n and key(pg, ptr(pg, base)) == k
        base, ln, eq = lo, n - lo, None
        if 'ahead2' in opts and ln > 3:
            h = (ln - (ln >> 1)) >> 1
            for j in (base + h, base + (ln >> 1) + h):
                probe_ptr(j, pf)
        while True:
            mid = base + (ln >> 1)
            l1 = ln - (ln >> 1)
            if 'ahead2' in opts and l1 > 3:
                h = l1 >> 1
                h2 = (l1 - h) >> 1
                for j in (base + h2, base + h + h2, mid + h2, mid + h + h2):
                    probe_ptr(j, pf)
            if 'ahead1' in opts and l1 > 1:
                for j in (base + (l1 >> 1), mid + (l1 >> 1)):
                    probe_ptr(j, pf)
            probe_ptr(mid, rd)
            y = key(pg, ptr(pg, mid))
            gt = k > y
            if k == y:
                eq = mid
                if 'exit' in opts:
                    return mid, True
            if ln == 1:
                break
            base = mid if gt else base
            ln -= ln >> 1
        r = base + gt
        return r, eq == r

    def lmdb(pg, k, lo, rd, pf):
        n = hdr(pg)[1]
        rd.add(0)
        low, high, i, c = lo, n - 1, lo, 1
        while low <= high:
            i = (low + high) >> 1
            rd.update(lines(16 + 2 * i, 2))
            rd.update(lines(ptr(pg, i) + 4, 12))
            y = key(pg, ptr(pg, i))
            c = (k > y) - (k < y)
            if c == 0:
                break
            if c > 0:
                low = i + 1
            else:
                high = i - 1
        if c > 0:
            i += 1
        return i, c == 0

    search = lmdb if 'lmdb' in opts else ours
    seek = 'seek' in opts
    random.seed(1)
    tot, ptot = {}, {}
    for _ in range(nlook):
        j = random.randrange(1 if seek else 0, entries)
        k = struct.pack('>Q', 2 * j - (1 if seek else 0))
        pg, lvl = root, 0
        while True:
            flags, _ = hdr(pg)
            rd, pf = set(), set()
            if flags & 1:  # branch: the child at the last separator <= k
                i, ex = search(pg, k, 1, rd, pf)
                idx = i if ex else i - 1
                o = ptr(pg, idx)
                rd.update(lines(16 + 2 * idx, 2))
                rd.update(lines(o, 6))
                child = int.from_bytes(m[pg * PS + o:pg * PS + o + 6], 'little')
            else:
                i, ex = search(pg, k, 0, rd, pf)
                if not (ex or seek):
                    sys.exit('key %d not found' % j)
                rd.update(lines(ptr(pg, i), 17))
            tot[lvl] = tot.get(lvl, 0) + len(rd)
            ptot[lvl] = ptot.get(lvl, 0) + len(pf - rd)
            if not flags & 1:
                break
            pg, lvl = child, lvl + 1
    print('%-24s' % engine, ' '.join('L%d %5.2f [%5.2f]' % (lv, tot[lv] / nlook,
          ptot[lv] / nlook) for lv in sorted(tot)),
          ' total %5.2f [%5.2f]' % (sum(tot.values()) / nlook, sum(ptot.values()) / nlook))


main()
