/* A2: prefix-compressed DUPSORT set whose values share a long prefix, so the
 * decoded values of a sub-page total far more than a page (build with ASan). */
#include "../lmdb.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define E(x) do { int rc_ = (x); if (rc_) { printf("%d %s -> %s\n", __LINE__, #x, mdb_strerror(rc_)); exit(1); } } while (0)
int main(void)
{
	MDB_env *env; MDB_txn *txn; MDB_dbi dbi; MDB_cursor *c;
	system("rm -rf /tmp/a2/pd && mkdir -p /tmp/a2/pd");
	E(mdb_env_create(&env)); E(mdb_env_set_maxdbs(env, 4)); E(mdb_env_set_mapsize(env, 64 << 20));
	E(mdb_env_open(env, "/tmp/a2/pd", 0, 0644));
	E(mdb_txn_begin(env, NULL, 0, &txn));
	E(mdb_dbi_open(txn, "d", MDB_CREATE | MDB_DUPSORT | MDB_PREFIX_COMPRESSION, &dbi));
	unsigned char v[480]; memset(v, 'p', sizeof v);
	MDB_val k = { 1, "k" };
	unsigned seen[4000] = {0}, want = 0, x = 12345;
	for (int i = 0; i < 3000; i++) {
		x = x * 1103515245u + 12345u; unsigned r = (x >> 8) % 4000;
		snprintf((char *)v + 470, 10, "%09u", r);
		MDB_val d = { 479, v };
		E(mdb_put(txn, dbi, &k, &d, 0));
		if (!seen[r]) { seen[r] = 1; want++; }
		if (i % 97 == 0) { x = x * 1103515245u + 12345u; unsigned q = (x >> 8) % 4000; snprintf((char *)v + 470, 10, "%09u", q); MDB_val dd = { 479, v }; if (mdb_del(txn, dbi, &k, &dd) == 0) { seen[q] = 0; want--; } }
	}
	E(mdb_txn_commit(txn));
	E(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn)); E(mdb_cursor_open(txn, dbi, &c));
	MDB_val a, b; unsigned n = 0, bad = 0, prev = 0;
	while (mdb_cursor_get(c, &a, &b, n ? MDB_NEXT : MDB_FIRST) == 0) {
		unsigned r = (unsigned)atoi((char *)b.mv_data + 470);
		if (b.mv_size != 479 || memcmp(b.mv_data, v, 470) || !seen[r] || (n && r <= prev)) bad++;
		prev = r; n++;
	}
	printf("%u values (want %u), %u bad\n", n, want, bad);
	return bad || n != want;
}
