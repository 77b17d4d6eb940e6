/* a5_listchk.c - list_dup == FIRST_DUP/NEXT_DUP walk, random DBs of every dup flavour. */
#include "../lmdb.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define E(x) do { int rc_ = (x); if (rc_) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, mdb_strerror(rc_)); exit(1);} } while (0)
static unsigned long long s = 12345;
static unsigned rnd(unsigned n) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (unsigned)(s % n); }
int main(void)
{
	unsigned flavours[] = { 0, MDB_PREFIX_COMPRESSION, MDB_COUNTED | MDB_PREFIX_COMPRESSION, MDB_COUNTED,
		MDB_DUPFIXED, MDB_DUPFIXED | MDB_INTEGERDUP, MDB_REVERSEDUP, MDB_REVERSEDUP | MDB_PREFIX_COMPRESSION };
	unsigned long checked = 0;
	for (unsigned fi = 0; fi < sizeof flavours / sizeof *flavours; fi++) for (int wr = 0; wr < 2; wr++) {
		unsigned fl = flavours[fi];
		MDB_env *env; MDB_txn *t; MDB_dbi dbi; MDB_cursor *c;
		char dir[] = "/dev/shm/a5kXXXXXX";
		if (!mkdtemp(dir)) return 1;
		E(mdb_env_create(&env)); E(mdb_env_set_maxdbs(env, 4)); E(mdb_env_set_mapsize(env, 256u << 20));
		E(mdb_env_open(env, dir, MDB_NOLOCK, 0644));
		E(mdb_txn_begin(env, NULL, 0, &t)); E(mdb_dbi_open(t, "d", MDB_CREATE | MDB_DUPSORT | fl, &dbi));
		for (int i = 0; i < 3000; i++) {
			char kb[32], vb[600]; unsigned k = rnd(300), vl;
			snprintf(kb, sizeof kb, "key%05u", k);
			if (fl & MDB_DUPFIXED) { vl = 8; unsigned long long x = rnd(1u << 20) * 7919ull; memcpy(vb, &x, 8); }
			else { int n = snprintf(vb, sizeof vb, "%s-%05u-", k % 3 ? "common-prefix-abcdef" : "z", rnd(k % 5 == 0 ? 5000 : 40));
				vl = (unsigned)n + rnd(k % 7 == 0 ? 200 : 12); for (unsigned j = (unsigned)n; j < vl; j++) vb[j] = (char)('a' + j % 26); }
			MDB_val kv = { strlen(kb), kb }, dv = { vl, vb };
			E(mdb_put(t, dbi, &kv, &dv, 0));
		}
		if (!wr) { E(mdb_txn_commit(t)); E(mdb_txn_begin(env, NULL, MDB_RDONLY, &t)); }
		E(mdb_cursor_open(t, dbi, &c));
		MDB_val k, v; int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST);
		while (!rc) {
			const MDB_val *vals; mdb_size_t n, cnt;
			E(mdb_cursor_count(c, &cnt));
			int lr = mdb_cursor_list_dup(c, &vals, &n);
			if (lr == MDB_NOTFOUND) { if (cnt != 1) { fprintf(stderr, "notfound with %lu\n", (unsigned long)cnt); return 1; } }
			else {
				E(lr);
				if (n != cnt) { fprintf(stderr, "n %lu cnt %lu\n", (unsigned long)n, (unsigned long)cnt); return 1; }
				/* copy the list: walking moves the cursor within the key (allowed to keep it) */
				MDB_val *cp = malloc(n * sizeof *cp);
				for (mdb_size_t j = 0; j < n; j++) { cp[j].mv_size = vals[j].mv_size; cp[j].mv_data = malloc(vals[j].mv_size + 1); memcpy(cp[j].mv_data, vals[j].mv_data, vals[j].mv_size); }
				mdb_size_t j = 0; int r2 = mdb_cursor_get(c, &k, &v, MDB_FIRST_DUP);
				while (!r2) {
					if (j >= n || v.mv_size != cp[j].mv_size || memcmp(v.mv_data, cp[j].mv_data, v.mv_size)) { fprintf(stderr, "fl %x mismatch at %lu\n", fl, (unsigned long)j); return 1; }
					j++; r2 = mdb_cursor_get(c, &k, &v, MDB_NEXT_DUP);
				}
				if (r2 != MDB_NOTFOUND || j != n) { fprintf(stderr, "walk %d j %lu n %lu\n", r2, (unsigned long)j, (unsigned long)n); return 1; }
				for (j = 0; j < n; j++) free(cp[j].mv_data);
				free(cp); checked += n;
			}
			rc = mdb_cursor_get(c, &k, &v, MDB_NEXT_NODUP);
		}
		if (rc != MDB_NOTFOUND) E(rc);
		mdb_cursor_close(c); mdb_txn_abort(t); mdb_env_close(env);
		char cmd[100]; snprintf(cmd, sizeof cmd, "rm -rf %s", dir); if (system(cmd)) return 1;
	}
	printf("ok, %lu values checked\n", checked);
	return 0;
}
