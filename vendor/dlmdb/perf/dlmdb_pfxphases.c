/* dlmdb_pfxphases - compress_bench-like workload in C (dlmdb-extensions §5.3
 * shapes: key = 'p' x P + 16 hex digits, COUNTED main DB, random-order insert,
 * updates, deletes + reinserts, random reads, range scans), plain vs prefix,
 * non-dup and -D dups.  Prints us/op per phase and prefix/plain ratios.
 * usage: pfx_bench DIR [entries] [dups] [rounds] [modes: 1 plain, 2 prefix, 3 both] */
#include "perf.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#ifdef CG
/* -DCG: callgrind counts each timed region separately (a dump per phase). */
#include <valgrind/callgrind.h>
#define PH_BEGIN() CALLGRIND_ZERO_STATS
#define PH_END(name) CALLGRIND_DUMP_STATS_AT(name)
#else
#define PH_BEGIN() ((void)0)
#define PH_END(name) ((void)0)
#endif
#define CHECK(x) do { int r_ = (x); if (r_) { fprintf(stderr, "%d %s\n", __LINE__, mdb_strerror(r_)); exit(1); } } while (0)
#define VS 64
#define PL 16
static uint64_t sm(uint64_t *s) { uint64_t z = (*s += 0x9E3779B97F4A7C15ull); z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull; z = (z ^ (z >> 27)) * 0x94D049BB133111EBull; return z ^ (z >> 31); }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
static size_t mkkey(char *b, uint64_t ki) { memset(b, 'p', PL); return PL + (size_t)sprintf(b + PL, "%016llx", (unsigned long long)ki); }
static void mkval(unsigned char *v, uint64_t idx, uint64_t n, unsigned ver, unsigned D)
{
	if (D > 1) { memset(v, (int)((idx / D) & 0xff), VS); v[VS - 2] = (unsigned char)ver; v[VS - 1] = (unsigned char)(idx % D); }
	else for (int i = 0; i < VS; i++) v[i] = (unsigned char)(idx + ver * n + i);
}
static uint32_t *perm(uint64_t n, uint64_t seed) { uint32_t *p = malloc(n * 4); for (uint64_t i = 0; i < n; i++) p[i] = (uint32_t)i; uint64_t s = seed; for (uint64_t i = n - 1; i > 0; i--) { uint64_t j = sm(&s) % (i + 1); uint32_t t = p[i]; p[i] = p[j]; p[j] = t; } return p; }
enum { INS, UPD, DEL, REINS, READ, SCAN, NPH };
static const char *phn[NPH] = { "insert", "update", "delete", "reinsert", "read(warm)", "scan(warm)" };
static void run(const char *dir, uint64_t n, unsigned D, int pfx, double *us, size_t *fsz, size_t *leaves)
{
	perf_fresh_env_dir(dir);
	MDB_env *env; MDB_txn *txn; MDB_dbi dbi; MDB_cursor *c;
	unsigned fl = MDB_CREATE | MDB_COUNTED | (pfx ? MDB_PREFIX_COMPRESSION : 0) | (D > 1 ? MDB_DUPSORT : 0);
	CHECK(mdb_env_create(&env)); CHECK(mdb_env_set_mapsize(env, 4ul << 30));
	CHECK(mdb_env_open(env, dir, MDB_NOLOCK, 0644));
	CHECK(mdb_txn_begin(env, NULL, 0, &txn)); CHECK(mdb_dbi_open(txn, NULL, fl, &dbi)); CHECK(mdb_txn_commit(txn));
	char kb[64]; unsigned char vb[VS]; MDB_val k, v;
	unsigned char *ver = calloc(n, 1);
	uint64_t U = n / 2, X = n / 2, R = n / 2, s;
	uint32_t *p = perm(n, 0xC6BC279692B5CC83ull);
	CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	PH_BEGIN(); double t0 = now();
	for (uint64_t i = 0; i < n; i++) { uint64_t idx = p[i]; k.mv_size = mkkey(kb, D > 1 ? idx / D : idx); k.mv_data = kb; mkval(vb, idx, n, 0, D); v.mv_size = VS; v.mv_data = vb; CHECK(mdb_put(txn, dbi, &k, &v, 0)); }
	us[INS] = (now() - t0) * 1e3 / n; PH_END("insert"); CHECK(mdb_txn_commit(txn));
	CHECK(mdb_txn_begin(env, NULL, 0, &txn)); CHECK(mdb_cursor_open(txn, dbi, &c)); s = 0xD1B54A32D192ED03ull;
	PH_BEGIN(); t0 = now();
	for (uint64_t i = 0; i < U; i++) {
		uint64_t idx = sm(&s) % n; k.mv_size = mkkey(kb, D > 1 ? idx / D : idx); k.mv_data = kb;
		if (D > 1) { mkval(vb, idx, n, ver[idx], D); v.mv_size = VS; v.mv_data = vb; CHECK(mdb_cursor_get(c, &k, &v, MDB_GET_BOTH)); CHECK(mdb_cursor_del(c, 0)); ver[idx]++; }
		mkval(vb, idx, n, D > 1 ? ver[idx] : 1, D); v.mv_size = VS; v.mv_data = vb; CHECK(mdb_put(txn, dbi, &k, &v, 0));
	}
	us[UPD] = (now() - t0) * 1e3 / U; PH_END("update"); mdb_cursor_close(c); CHECK(mdb_txn_commit(txn));
	free(p); p = perm(n, 0x9E3779B97F4A7C15ull);
	CHECK(mdb_txn_begin(env, NULL, 0, &txn)); PH_BEGIN(); t0 = now();
	for (uint64_t i = 0; i < X; i++) { uint64_t idx = p[i]; k.mv_size = mkkey(kb, D > 1 ? idx / D : idx); k.mv_data = kb; mkval(vb, idx, n, D > 1 ? ver[idx] : 1, D); v.mv_size = VS; v.mv_data = vb; CHECK(mdb_del(txn, dbi, &k, D > 1 ? &v : NULL)); ver[idx] = 0; }
	us[DEL] = (now() - t0) * 1e3 / X; PH_END("delete"); CHECK(mdb_txn_commit(txn));
	CHECK(mdb_txn_begin(env, NULL, 0, &txn)); PH_BEGIN(); t0 = now();
	for (uint64_t i = 0; i < X; i++) { uint64_t idx = p[i]; k.mv_size = mkkey(kb, D > 1 ? idx / D : idx); k.mv_data = kb; mkval(vb, idx, n, 0, D); v.mv_size = VS; v.mv_data = vb; CHECK(mdb_put(txn, dbi, &k, &v, 0)); }
	us[REINS] = (now() - t0) * 1e3 / X; PH_END("reinsert"); CHECK(mdb_txn_commit(txn));
	CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn)); CHECK(mdb_cursor_open(txn, dbi, &c));
	for (int pass = 0; pass < 2; pass++) {
		s = 1; PH_BEGIN(); t0 = now();
		for (uint64_t i = 0; i < R; i++) {
			uint64_t idx = sm(&s) % n; k.mv_size = mkkey(kb, D > 1 ? idx / D : idx); k.mv_data = kb;
			if (D > 1) { mkval(vb, idx, n, ver[idx], D); v.mv_size = VS; v.mv_data = vb; CHECK(mdb_cursor_get(c, &k, &v, MDB_GET_BOTH)); }
			else CHECK(mdb_get(txn, dbi, &k, &v));
		}
		us[READ] = (now() - t0) * 1e3 / R; PH_END("read");
	}
	uint64_t items = 0;
	for (int pass = 0; pass < 2; pass++) {
		s = 0xA24BAED4963EE407ull; items = 0; PH_BEGIN(); t0 = now();
		for (int r = 0; r < 1000; r++) {
			uint64_t idx = sm(&s) % n; k.mv_size = mkkey(kb, D > 1 ? idx / D : idx); k.mv_data = kb;
			if (mdb_cursor_get(c, &k, &v, MDB_SET_RANGE)) continue;
			items++;
			for (int j = 1; j < 256 && !mdb_cursor_get(c, &k, &v, MDB_NEXT); j++) items++;
		}
		us[SCAN] = (now() - t0) * 1e3 / (items ? items : 1); PH_END("scan");
	}
	MDB_stat st; CHECK(mdb_stat(txn, dbi, &st)); *leaves = st.ms_leaf_pages;
	mdb_cursor_close(c); mdb_txn_abort(txn); mdb_env_close(env);
	char path[512]; struct stat sb; snprintf(path, sizeof path, "%s/data.mdb", dir); stat(path, &sb); *fsz = (size_t)sb.st_size;
	free(p); free(ver);
}
int main(int argc, char **argv)
{
	const char *dir = argv[1];
	uint64_t n = argc > 2 ? strtoull(argv[2], 0, 10) : 200000;
	unsigned D = argc > 3 ? (unsigned)atoi(argv[3]) : 1;
	int rounds = argc > 4 ? atoi(argv[4]) : 3;
	int modes = argc > 5 ? atoi(argv[5]) : 3;
	double us[2][NPH], best[2][NPH]; size_t fsz[2], lv[2];
	for (int m = 0; m < 2; m++) for (int i = 0; i < NPH; i++) best[m][i] = 1e30;
	for (int r = 0; r < rounds; r++)
		for (int m = 0; m < 2; m++) if (modes & (1 << m)) { run(dir, n, D, m, us[m], &fsz[m], &lv[m]); for (int i = 0; i < NPH; i++) if (us[m][i] < best[m][i]) best[m][i] = us[m][i]; }
	printf("n=%llu D=%u rounds=%d (best of rounds, us/op)\n", (unsigned long long)n, D, rounds);
	for (int i = 0; i < NPH; i++) printf("%-11s plain %8.3f prefix %8.3f ratio %.3f\n", phn[i], best[0][i], best[1][i], best[1][i] / best[0][i]);
	printf("data       plain %zu prefix %zu ratio %.3f; leaves %zu / %zu\n", fsz[0], fsz[1], (double)fsz[1] / fsz[0], lv[0], lv[1]);
	return 0;
}
