#!/bin/sh
# ab_reads.sh - build ab_reads: several builds of an engine in one program,
# for timing random gets and seeks of the builds against each other in one
# process (see ab_reads.c).  Each SPEC is NAME:SRC[:CFLAGS]: SRC is a
# directory of engine sources (vendor/dlmdb of some revision; CFLAGS are
# added, e.g. -DDL_PREFETCH_BURST=0) or a stock LMDB source directory
# (libraries/liblmdb, with mdb.c and midl.c).  Every build is compiled the
# way cargo compiles it (-O3 -DNDEBUG -fno-strict-aliasing) and its global
# symbols get the prefix NAME_, so the builds can share a program.
#
#   perf/ab_reads.sh /tmp/ab base:/tmp/base/vendor/dlmdb new:vendor/dlmdb \
#       aa:/tmp/base/vendor/dlmdb
#   /tmp/ab/ab_reads /dev/shm/s8 1000000 8 300 4000
#
# AB_PROG=perf_floor builds perf_floor.c the same way instead of ab_reads.c.
set -e
PROG=${AB_PROG:-ab_reads}
[ $# -ge 2 ] || { echo "usage: $0 OUTDIR NAME:SRC[:CFLAGS]..." >&2; exit 2; }
OUT=$1; shift
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
CF="-std=gnu11 -D_GNU_SOURCE -pthread -O3 -DNDEBUG -fno-strict-aliasing -w"
DECL=""; LIST=""; NAMES=""; OBJS=""
for spec in "$@"; do
	name=${spec%%:*}; rest=${spec#*:}; src=${rest%%:*}; flags=""
	[ "$rest" != "$src" ] && flags=${rest#*:}
	d="$OUT/o_$name"; rm -rf "$d"; mkdir -p "$d"
	if [ -f "$src/mdb.c" ]; then files="$src/mdb.c $src/midl.c"; else files=$(ls "$src"/*.c); fi
	for c in $files "$HERE/ab_reads_ops.c"; do
		cc $CF $flags -I"$src" -I"$HERE" -c "$c" -o "$d/$(basename "$c" .c).o"
	done
	ld -r -o "$d/all.o" "$d"/*.o
	nm -g --defined-only "$d/all.o" | awk -v n="$name" '{print $3, n "_" $3}' > "$d/syms"
	objcopy --redefine-syms="$d/syms" "$d/all.o" "$OUT/$name.o"
	DECL="$DECL extern const struct ab_ops ${name}_ab_ops;"
	LIST="$LIST &${name}_ab_ops,"; NAMES="$NAMES \"$name\","; OBJS="$OBJS $OUT/$name.o"
done
cc -O2 -std=gnu11 -D_GNU_SOURCE -I"$HERE/.." -I"$HERE" "-DAB_DECLS=$DECL" "-DAB_LIST=$LIST" \
	"-DAB_NAMES=$NAMES" "$HERE/$PROG.c" $OBJS -o "$OUT/$PROG" -pthread
echo "$OUT/$PROG"
