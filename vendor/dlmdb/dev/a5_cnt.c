/* a5_cnt.c - count_bench-like insert: 100K shuffled keys, one txn, PREFIX (+COUNTED). */
#include "../lmdb.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define E(x) do { int rc_ = (x); if (rc_) { fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, mdb_strerror(rc_)); exit(1);} } while (0)
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv)
{
	int counted = argc > 1 && atoi(argv[1]);
	int N = argc > 2 ? atoi(argv[2]) : 100000;
	int *ord = malloc(N * sizeof(int));
	unsigned long long s = 88172645463325252ull;
	for (int i = 0; i < N; i++) ord[i] = i;
	for (int i = N - 1; i > 0; i--) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; int j = (int)(s % (unsigned long long)(i + 1)); int t = ord[i]; ord[i] = ord[j]; ord[j] = t; }
	MDB_env *env; MDB_txn *t; MDB_dbi dbi;
	char dir[] = "/dev/shm/a5cXXXXXX";
	if (!mkdtemp(dir)) return 1;
	E(mdb_env_create(&env)); E(mdb_env_set_maxdbs(env, 4)); E(mdb_env_set_mapsize(env, 1u << 30));
	E(mdb_env_open(env, dir, MDB_NOLOCK, 0644));
	E(mdb_txn_begin(env, NULL, 0, &t));
	E(mdb_dbi_open(t, "bench", MDB_CREATE | MDB_PREFIX_COMPRESSION | (counted ? MDB_COUNTED : 0), &dbi));
	double t0 = now();
	for (int i = 0; i < N; i++) {
		char kb[16], vb[16];
		snprintf(kb, sizeof kb, "k%06d", ord[i]); snprintf(vb, sizeof vb, "v%06d", ord[i]);
		MDB_val k = { strlen(kb), kb }, v = { strlen(vb), vb };
		E(mdb_put(t, dbi, &k, &v, 0));
	}
	E(mdb_txn_commit(t));
	printf("%s: %.1f ns/entry\n", counted ? "counted" : "plain", (now() - t0) * 1e9 / N);
	mdb_env_close(env);
	char cmd[100]; snprintf(cmd, sizeof cmd, "rm -rf %s", dir); if (system(cmd)) return 1;
	return 0;
}
