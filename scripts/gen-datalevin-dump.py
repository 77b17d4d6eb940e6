#!/usr/bin/env python3
"""Write a sorted mdb_dump-format (bytevalue) dump of Datalevin-like records.

Each record has a 75-byte key: the big-endian u64 entity (i / 5), the
big-endian u32 attribute (i % 5), and a 63-byte value part that shares a long
prefix ("person/name/string-value-" and a 20-digit number, padded with '.');
the value is the big-endian u64 i. Keys come out in ascending order, so
`dlmdb load` takes its append path.

usage: gen-datalevin-dump.py OUT [--records N] [--prefix-compression]
"""
import argparse
import struct


def record(i):
    value_part = ("person/name/string-value-%020d" % (i * 7919 % 1000003)).encode()
    key = struct.pack(">QI", i // 5, i % 5) + value_part.ljust(63, b".")
    return key, struct.pack(">Q", i)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--prefix-compression", action="store_true",
                        help="mark the database prefix-compressed in the header")
    args = parser.parse_args()
    with open(args.out, "w") as out:
        out.write("VERSION=3\nformat=bytevalue\ntype=btree\n")
        if args.prefix_compression:
            out.write("prefix_compression=1\n")
        out.write("HEADER=END\n")
        for i in range(args.records):
            key, value = record(i)
            out.write(" %s\n %s\n" % (key.hex(), value.hex()))
        out.write("DATA=END\n")


if __name__ == "__main__":
    main()
