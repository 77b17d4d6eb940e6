/* A2: random-order puts into a PREFIX_COMPRESSION|COUNTED DB (records from a
 * file: u16 klen, u16 vlen, key, value), then check the walk is sorted and
 * complete. */
#include "../lmdb.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#define E(x) do { int rc_ = (x); if (rc_) { printf("%d %s -> %s\n", __LINE__, #x, mdb_strerror(rc_)); exit(1); } } while (0)
int main(int argc, char **argv)
{
	FILE *f = fopen(argv[1], "rb"); static unsigned char buf[1 << 22]; size_t n = fread(buf, 1, sizeof buf, f); fclose(f);
	unsigned chunk = argc > 2 ? (unsigned)atoi(argv[2]) : 700;
	MDB_env *env; MDB_txn *txn; MDB_dbi dbi; MDB_cursor *c;
	system("rm -rf /tmp/a2/pfx && mkdir -p /tmp/a2/pfx");
	E(mdb_env_create(&env)); E(mdb_env_set_maxdbs(env, 4)); E(mdb_env_set_mapsize(env, 64 << 20));
	E(mdb_env_open(env, "/tmp/a2/pfx", 0, 0644));
	size_t off = 0; unsigned cnt = 0, total = 0;
	E(mdb_txn_begin(env, NULL, 0, &txn));
	E(mdb_dbi_open(txn, "p", MDB_CREATE | MDB_PREFIX_COMPRESSION | MDB_COUNTED, &dbi));
	while (off + 4 <= n) {
		uint16_t kl, vl; memcpy(&kl, buf + off, 2); memcpy(&vl, buf + off + 2, 2);
		MDB_val k = { kl, buf + off + 4 }, v = { vl, buf + off + 4 + kl };
		off += 4u + kl + vl;
		E(mdb_put(txn, dbi, &k, &v, 0)); total++;
		/* verify order after each put (slow but finds the first bad put) */
		if (argc > 3) {
			E(mdb_cursor_open(txn, dbi, &c)); MDB_val a, b, pk; unsigned char pb[600]; int first = 1, m = 0;
			while (mdb_cursor_get(c, &a, &b, first ? MDB_FIRST : MDB_NEXT) == 0) {
				if (!first) { size_t l = pk.mv_size < a.mv_size ? pk.mv_size : a.mv_size; int r = memcmp(pk.mv_data, a.mv_data, l); if (r > 0 || (r == 0 && pk.mv_size >= a.mv_size)) { printf("order broken after put #%u at item %d\n prev %.*s\n  cur %.*s\n  put %.*s\n", total, m, (int)pk.mv_size, (char*)pk.mv_data, (int)a.mv_size, (char*)a.mv_data, (int)k.mv_size, (char*)k.mv_data); exit(1); } }
				memcpy(pb, a.mv_data, a.mv_size); pk.mv_data = pb; pk.mv_size = a.mv_size; first = 0; m++;
			}
			if ((unsigned)m != total) { printf("count %d want %u after put #%u\n", m, total, total); exit(1); }
			mdb_cursor_close(c);
		}
		if (++cnt == chunk) { cnt = 0; E(mdb_txn_commit(txn)); E(mdb_txn_begin(env, NULL, 0, &txn)); }
	}
	E(mdb_txn_commit(txn));
	E(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn)); E(mdb_cursor_open(txn, dbi, &c));
	MDB_val a, b, pk = {0, NULL}; unsigned char pb[600]; int m = 0, bad = 0;
	while (mdb_cursor_get(c, &a, &b, m ? MDB_NEXT : MDB_FIRST) == 0) {
		if (m) { size_t l = pk.mv_size < a.mv_size ? pk.mv_size : a.mv_size; int r = memcmp(pk.mv_data, a.mv_data, l); if (r > 0 || (r == 0 && pk.mv_size >= a.mv_size)) { if (!bad) printf("order broken at item %d\n", m); bad++; } }
		memcpy(pb, a.mv_data, a.mv_size); pk.mv_data = pb; pk.mv_size = a.mv_size; m++;
	}
	printf("%d items (put %u), %d order breaks\n", m, total, bad);
	return bad != 0 || (unsigned)m != total;
}
