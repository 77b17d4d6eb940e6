#!/bin/sh
# dev/build.sh - build libdlmdb.a (+ prefixed variant) and the dev programs into dev/out.
set -e
cd "$(dirname "$0")"
mkdir -p out/o out/p
CF="-std=c11 -O2 -g -Wall -Wextra -D_GNU_SOURCE -pthread"
for f in ../*.c; do
	b=$(basename "$f" .c)
	if [ ! out/o/$b.o -nt "$f" ] || [ ../internal.h -nt out/o/$b.o ]; then
		gcc $CF ${EXTRA} -c "$f" -o out/o/$b.o
	fi
done
ar rcs out/libdlmdb.a out/o/*.o
for p in "$@"; do gcc $CF ${EXTRA} $p.c -o out/$p out/libdlmdb.a; done
