#!/bin/sh
# dev/a2_check.sh - regression checks for the helper-A2 fixes (run from anywhere).
#   a2_nest    parent cursors during a nested txn behave exactly like stock LMDB
#              (compared line by line with the same program linked to liblmdb)
#   a2_cur     MDB_CURRENT on a one-item duplicate set keeps it a duplicate set
#   a2_layout  version-1 misread guard: every fixture opens only in its own layout
#   a2_pfx     random-order puts into a PREFIX_COMPRESSION|COUNTED DB stay sorted
#   a2_pfxdup  prefix-compressed duplicates sharing a long prefix (built with ASan)
set -e
cd "$(dirname "$0")"
FX=${FIXTURES:-../../../../shared/fixtures}
./build.sh a2_cur a2_layout a2_pfx >/dev/null
gcc -O1 -I.. a2_nest.c -o out/a2_nest out/libdlmdb.a -lpthread
mkdir -p /tmp/a2
fail=0
if [ -f /usr/include/lmdb.h ]; then
	gcc -O1 -I/usr/include a2_nest.c -o out/a2_nest_stock -llmdb
	for m in "" c; do
		./out/a2_nest /tmp/a2/no $m > /tmp/a2/o.txt; ./out/a2_nest_stock /tmp/a2/ns $m > /tmp/a2/s.txt
		if cmp -s /tmp/a2/o.txt /tmp/a2/s.txt; then echo "ok   a2_nest ${m:-abort}"; else echo "FAIL a2_nest ${m:-abort}"; diff /tmp/a2/o.txt /tmp/a2/s.txt; fail=1; fi
	done
else
	echo "skip a2_nest (no liblmdb-dev)"
fi
./out/a2_cur | grep -q "key size 0" && echo "ok   a2_cur" || { echo "FAIL a2_cur"; fail=1; }
if [ -d "$FX" ]; then
	./out/a2_layout $FX/counted.mdb padded $FX/dupsort.mdb padded $FX/dupsort.stock.mdb stock \
		$FX/layout_dlmdb.mdb padded $FX/layout_stock.mdb stock $FX/main_only.mdb both \
		$FX/plain.mdb padded $FX/plain.stock.mdb stock $FX/prefix.mdb padded $FX/stock.mdb stock \
		>/tmp/a2/layout.txt && echo "ok   a2_layout" || { echo "FAIL a2_layout"; cat /tmp/a2/layout.txt; fail=1; }
	python3 - "$FX/prefix.dump.txt" <<'PY'
import struct, random, sys
L = open(sys.argv[1]).read().split('\n')
i = L.index('database=prefix_counted')
while L[i] != 'HEADER=END': i += 1
i += 1; recs = []
while L[i] != 'DATA=END':
    recs.append((bytes.fromhex(L[i].strip()), bytes.fromhex(L[i+1].strip()))); i += 2
random.seed(5); random.shuffle(recs)
with open('/tmp/a2/pc.bin', 'wb') as f:
    for k, v in recs: f.write(struct.pack('<HH', len(k), len(v)) + k + v)
PY
	./out/a2_pfx /tmp/a2/pc.bin >/tmp/a2/pfx.txt && echo "ok   a2_pfx" || { echo "FAIL a2_pfx"; cat /tmp/a2/pfx.txt; fail=1; }
else
	echo "skip a2_layout, a2_pfx (no fixtures at $FX)"
fi
gcc -std=c11 -O1 -g -D_GNU_SOURCE -pthread -fsanitize=address,undefined -I.. a2_pfxdup.c ../*.c -o out/a2_pfxdup_asan
ASAN_OPTIONS=detect_leaks=0 ./out/a2_pfxdup_asan >/tmp/a2/pd.txt 2>&1 && echo "ok   a2_pfxdup" || { echo "FAIL a2_pfxdup"; tail -20 /tmp/a2/pd.txt; fail=1; }
exit $fail
