/* a5_listdup.c - dup_iter_bench-like: list_dup vs NEXT_DUP loop; txn reset/renew; ro begin/abort. */
#include "../lmdb.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define E(x) do { int rc_ = (x); if (rc_) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, mdb_strerror(rc_)); exit(1);} } while (0)
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv)
{
	unsigned extra = argc > 1 ? (unsigned)atoi(argv[1]) : (MDB_COUNTED | MDB_PREFIX_COMPRESSION);
	const char *what = argc > 2 ? argv[2] : "all";
	MDB_env *env; MDB_txn *t; MDB_dbi dbi; MDB_cursor *c;
	char dir[] = "/dev/shm/a5XXXXXX";
	if (!mkdtemp(dir)) return 1;
	E(mdb_env_create(&env)); E(mdb_env_set_maxdbs(env, 4)); E(mdb_env_set_mapsize(env, 512u << 20));
	E(mdb_env_open(env, dir, MDB_NOSYNC | MDB_NOMETASYNC | (strcmp(what, "txn") ? MDB_NOLOCK : 0), 0644));
	E(mdb_txn_begin(env, NULL, 0, &t)); E(mdb_dbi_open(t, "bench", MDB_CREATE | MDB_DUPSORT | extra, &dbi)); E(mdb_txn_commit(t));
	int NK = 20000, ND = 20, total = strcmp(what, "txn") ? NK * ND : 2000;
	for (int i = 0; i < total;) {
		E(mdb_txn_begin(env, NULL, 0, &t));
		int end = i + 4096 < total ? i + 4096 : total;
		for (; i < end; i++) {
			char kb[32], vb[64];
			snprintf(kb, sizeof kb, "%020d", i / ND);
			snprintf(vb, sizeof vb, "%016d-value-%04d", i / ND, i % ND);
			MDB_val k = { 20, kb }, v = { strlen(vb), vb };
			E(mdb_put(t, dbi, &k, &v, 0));
		}
		E(mdb_txn_commit(t));
	}
	int runs = 5;
	for (int round = 0; round < 3; round++) {
	 for (int mode = 0; mode < 2; mode++) {
		if (strcmp(what, "all") && strcmp(what, mode ? "loop" : "list")) continue;
		double t0 = now(); unsigned long sum = 0, nv = 0;
		for (int r = 0; r < runs; r++) {
			E(mdb_txn_begin(env, NULL, MDB_RDONLY, &t)); E(mdb_cursor_open(t, dbi, &c));
			MDB_val k, v; int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST);
			while (!rc) {
				if (mode == 0) {
					const MDB_val *vals; mdb_size_t n;
#ifndef STOCK
					E(mdb_cursor_list_dup(c, &vals, &n));
#else
					vals = NULL; n = 0; (void)vals;
#endif
					if (n != (mdb_size_t)ND) { fprintf(stderr, "n=%lu\n", (unsigned long)n); return 1; }
					for (mdb_size_t j = 0; j < n; j++) { sum += ((unsigned char *)vals[j].mv_data)[0] + vals[j].mv_size + ((unsigned char *)vals[j].mv_data)[vals[j].mv_size - 1]; nv++; }
				} else {
					int r2 = mdb_cursor_get(c, &k, &v, MDB_FIRST_DUP);
					while (!r2) { sum += ((unsigned char *)v.mv_data)[0] + v.mv_size + ((unsigned char *)v.mv_data)[v.mv_size - 1]; nv++; r2 = mdb_cursor_get(c, &k, &v, MDB_NEXT_DUP); }
				}
				rc = mdb_cursor_get(c, &k, &v, MDB_NEXT_NODUP);
			}
			mdb_cursor_close(c); mdb_txn_abort(t);
		}
		double dt = now() - t0;
		printf("%s: %.2f ns/value sum=%lu nv=%lu\n", mode ? "loop" : "list", dt * 1e9 / nv, sum, nv);
	 }
	}
	if (!strcmp(what, "all") || !strcmp(what, "txn")) {
		int N = argc > 3 ? atoi(argv[3]) : 2000000;
		E(mdb_txn_begin(env, NULL, MDB_RDONLY, &t));
		double t0 = now();
		for (int i = 0; i < N; i++) { mdb_txn_reset(t); E(mdb_txn_renew(t)); }
		printf("reset_renew: %.2f ns\n", (now() - t0) * 1e9 / N);
		mdb_txn_abort(t);
		if (getenv("A5_RRONLY")) N = 0;
		t0 = now();
		for (int i = 0; i < N; i++) { E(mdb_txn_begin(env, NULL, MDB_RDONLY, &t)); mdb_txn_abort(t); }
		if (N) printf("begin_abort: %.2f ns\n", (now() - t0) * 1e9 / N);
	}
	mdb_env_close(env);
	char cmd[100]; snprintf(cmd, sizeof cmd, "rm -rf %s", dir); if (system(cmd)) return 1;
	return 0;
}
