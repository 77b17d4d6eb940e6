/*
 * perf_scan - wall-clock time of a full MDB_FIRST/MDB_NEXT scan, the loop of
 * `bench peers` seq_read (it reads each key's last byte and each value's
 * first), repeated PASSES times, each pass in a read txn of its own.  A
 * pass over a small store lasts microseconds, so on a loaded machine most
 * passes run without being descheduled: the minimum and the low percentiles
 * of the per-pass times stay steady where a mean over seconds would not.
 *
 * Record i has the 8-byte key be64(i) and a VALSIZE-byte value whose first
 * byte is i; the store is loaded in one txn, in key order.  ALL 1 makes the
 * loop read every line of each value too; FLUSH_MB > 0 writes that many MiB
 * of a scratch buffer (untimed) before each pass, so the pass starts with
 * cold caches.
 *
 * usage: perf_scan DIR [ENTRIES] [PASSES] [VALSIZE] [ALL] [FLUSH_MB]
 * prints the minimum, 10th percentile and median ns per record.
 */
#include "perf.h"
#include <stdint.h>
#include <string.h>

static int touch_all;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

__attribute__((noinline)) static uint64_t scan_pass(MDB_cursor *cur, uint64_t *seen)
{
	MDB_val k, d;
	uint64_t acc = 0, s = 0;
	int rc = mdb_cursor_get(cur, &k, &d, MDB_FIRST);
	while (rc == 0) {
		const unsigned char *v = d.mv_data;
		uint64_t kb = ((const unsigned char *)k.mv_data)[k.mv_size - 1], vb = v[0];
		if (touch_all)
			for (size_t o = 64; o < d.mv_size; o += 64)
				vb += v[o];
		acc = acc * 31 + (k.mv_size ^ (d.mv_size << 20) ^ (kb << 8) ^ vb);
		s++;
		rc = mdb_cursor_get(cur, &k, &d, MDB_NEXT);
	}
	if (rc != MDB_NOTFOUND)
		PERF_CHECK(rc);
	*seen = s;
	return acc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR [ENTRIES] [PASSES] [VALSIZE] [ALL] [FLUSH_MB]\n",
		    argv[0]);
		return 2;
	}
	uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000;
	int passes = argc > 3 ? atoi(argv[3]) : 1000;
	unsigned vsize = argc > 4 ? (unsigned)atoi(argv[4]) : 8192;
	touch_all = argc > 5 && atoi(argv[5]);
	size_t flush = argc > 6 ? (size_t)strtoull(argv[6], NULL, 10) << 20 : 0;
	if (n < 1 || passes < 1 || vsize < 1 || vsize > (1u << 20)) {
		fprintf(stderr, "perf_scan: ENTRIES >= 1, PASSES >= 1, VALSIZE 1..1048576\n");
		return 2;
	}
	perf_fresh_env_dir(argv[1]);
	MDB_env *env;
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_dbi dbi;
	PERF_CHECK(mdb_env_create(&env));
	PERF_CHECK(mdb_env_set_mapsize(env, 8ul << 30));
	PERF_CHECK(mdb_env_open(env, argv[1], MDB_NOSYNC, 0644));
	unsigned char kb[8], *vb = calloc(1, vsize);
	double *t = malloc((size_t)passes * sizeof *t);
	volatile unsigned char *scratch = flush ? calloc(1, flush) : NULL;
	if (!vb || !t || (flush && !scratch))
		return 1;
	PERF_CHECK(mdb_txn_begin(env, NULL, 0, &txn));
	PERF_CHECK(mdb_dbi_open(txn, NULL, 0, &dbi));
	for (uint64_t i = 0; i < n; i++) {
		for (int b = 0; b < 8; b++)
			kb[b] = (unsigned char)(i >> (8 * (7 - b)));
		vb[0] = (unsigned char)i;
		MDB_val k = { 8, kb }, v = { vsize, vb };
		PERF_CHECK(mdb_put(txn, dbi, &k, &v, 0));
	}
	PERF_CHECK(mdb_txn_commit(txn));
	uint64_t sum = 0;
	for (int p = 0; p < passes; p++) {
		for (size_t o = 0; o < flush; o += 64)
			scratch[o]++;
		PERF_CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
		PERF_CHECK(mdb_cursor_open(txn, dbi, &cur));
		uint64_t seen;
		double t0 = perf_now_ns();
		sum += scan_pass(cur, &seen);
		t[p] = (perf_now_ns() - t0) / (double)n;
		if (seen != n) {
			fprintf(stderr, "perf_scan: %llu records, expected %llu\n",
			    (unsigned long long)seen, (unsigned long long)n);
			return 1;
		}
		mdb_cursor_close(cur);
		mdb_txn_abort(txn);
	}
	qsort(t, (size_t)passes, sizeof *t, cmp_double);
	printf("min %.2f p10 %.2f median %.2f ns/record (%llu x %u B, %d passes, sum %llx)\n",
	    t[0], t[passes / 10], t[passes / 2], (unsigned long long)n, vsize, passes,
	    (unsigned long long)sum);
	mdb_env_close(env);
	free(vb);
	free(t);
	return 0;
}
