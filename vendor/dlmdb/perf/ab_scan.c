/*
 * ab_scan - interleaved wall-clock timing of full scans (MDB_FIRST then
 * MDB_NEXT, or MDB_LAST then MDB_PREV) through several builds of an engine
 * in one process: each LIB is a shared object with the LMDB API (a build
 * of this engine, stock LMDB), loaded with RTLD_LOCAL so that each keeps
 * its own symbols.  Each engine builds its own store (ENTRIES records, key
 * be64(i) padded with zeros to KEYSIZE bytes, 100-byte value whose first
 * byte is i) in DIR/<n>, then every round times PASSES scans on each engine
 * in turn (the order rotated per round) in thread CPU time, and keeps the
 * fastest pass.  The loop reads each key's last byte and each value's
 * first, as `bench peers` seq_read does.  Printed per engine: the fastest
 * pass in ns per record, and the median and quartiles over the rounds of
 * its time relative to the first LIB's in the same round.  Give the first
 * LIB twice (two copies of the file: the loader shares one path) for an
 * A/A control.
 *
 * usage: ab_scan DIR ENTRIES KEYSIZE ROUNDS PASSES BACK LIB...
 * build: cc -O2 perf/ab_scan.c -o ab_scan -ldl (see BENCHMARKS.md for the
 * shared objects)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The API's layout and constants (lmdb.h), without including it: the
 * engines come from the shared objects alone. */
typedef struct { size_t mv_size; void *mv_data; } val_t;
enum { OP_FIRST = 0, OP_LAST = 6, OP_NEXT = 8, OP_PREV = 12 };
enum { F_NOSYNC = 0x10000, F_RDONLY = 0x20000, F_NOLOCK = 0x400000 };
#define MAXLIB 8

typedef int (*cursor_get_fn)(void *, val_t *, val_t *, int);

struct engine {
	void *so;
	cursor_get_fn get;
	void *cur;
};

static int back;

static void *sym(void *so, const char *name)
{
	void *p = dlsym(so, name);
	if (!p) {
		fprintf(stderr, "ab_scan: %s: %s\n", name, dlerror());
		exit(1);
	}
	return p;
}

#define CALL(so, name, type, ...) do { \
	int rc_ = ((type)sym(so, name))(__VA_ARGS__); \
	if (rc_) { \
		fprintf(stderr, "ab_scan: %s: %d\n", name, rc_); \
		exit(1); \
	} \
} while (0)

static double cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

__attribute__((noinline)) static uint64_t scan(struct engine *e, uint64_t *seen)
{
	val_t k, d;
	uint64_t acc = 0, s = 0;
	int rc = e->get(e->cur, &k, &d, back ? OP_LAST : OP_FIRST);
	while (rc == 0) {
		uint64_t kb = ((const unsigned char *)k.mv_data)[k.mv_size - 1],
		    vb = ((const unsigned char *)d.mv_data)[0];
		acc = acc * 31 + (k.mv_size ^ (d.mv_size << 20) ^ (kb << 8) ^ vb);
		s++;
		rc = e->get(e->cur, &k, &d, back ? OP_PREV : OP_NEXT);
	}
	*seen = s;
	return acc;
}

/* Build engine e's store in sub (a write txn, then a read txn and cursor
 * kept for the whole run). */
static void setup(struct engine *e, const char *sub, uint64_t n, unsigned ks)
{
	typedef int (*create_fn)(void **);
	typedef int (*mapsize_fn)(void *, size_t);
	typedef int (*open_fn)(void *, const char *, unsigned, int);
	typedef int (*begin_fn)(void *, void *, unsigned, void **);
	typedef int (*dbi_fn)(void *, const char *, unsigned, unsigned *);
	typedef int (*put_fn)(void *, unsigned, val_t *, val_t *, unsigned);
	typedef int (*commit_fn)(void *);
	typedef int (*copen_fn)(void *, unsigned, void **);
	void *env, *txn;
	unsigned dbi;
	unsigned char kb[512] = { 0 }, vb[100] = { 0 };
	char path[4200];
	snprintf(path, sizeof path, "%s/data.mdb", sub);
	unlink(path);
	snprintf(path, sizeof path, "%s/lock.mdb", sub);
	unlink(path);
	CALL(e->so, "mdb_env_create", create_fn, &env);
	CALL(e->so, "mdb_env_set_mapsize", mapsize_fn, env, (size_t)1 << 30);
	CALL(e->so, "mdb_env_open", open_fn, env, sub, F_NOLOCK | F_NOSYNC, 0644);
	CALL(e->so, "mdb_txn_begin", begin_fn, env, NULL, 0, &txn);
	CALL(e->so, "mdb_dbi_open", dbi_fn, txn, NULL, 0, &dbi);
	for (uint64_t i = 0; i < n; i++) {
		for (int b = 0; b < 8; b++)
			kb[b] = (unsigned char)(i >> (8 * (7 - b)));
		vb[0] = (unsigned char)i;
		val_t k = { ks, kb }, v = { sizeof vb, vb };
		CALL(e->so, "mdb_put", put_fn, txn, dbi, &k, &v, 0);
	}
	CALL(e->so, "mdb_txn_commit", commit_fn, txn);
	CALL(e->so, "mdb_txn_begin", begin_fn, env, NULL, F_RDONLY, &txn);
	CALL(e->so, "mdb_cursor_open", copen_fn, txn, dbi, &e->cur);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 8 || argc - 7 > MAXLIB) {
		fprintf(stderr, "usage: %s DIR ENTRIES KEYSIZE ROUNDS PASSES BACK LIB... "
		    "(at most %d)\n", argv[0], MAXLIB);
		return 2;
	}
	const char *dir = argv[1];
	uint64_t n = strtoull(argv[2], NULL, 10);
	unsigned ks = (unsigned)atoi(argv[3]);
	int rounds = atoi(argv[4]), passes = atoi(argv[5]), ne = argc - 7;
	back = atoi(argv[6]);
	if (n < 1 || ks < 8 || ks > 511 || rounds < 1 || passes < 1) {
		fprintf(stderr, "ab_scan: ENTRIES >= 1, KEYSIZE 8..511, ROUNDS, PASSES >= 1\n");
		return 2;
	}
	struct engine e[MAXLIB];
	mkdir(dir, 0755);
	for (int i = 0; i < ne; i++) {
		e[i].so = dlopen(argv[7 + i], RTLD_NOW | RTLD_LOCAL);
		if (!e[i].so) {
			fprintf(stderr, "ab_scan: %s\n", dlerror());
			return 1;
		}
		e[i].get = (cursor_get_fn)sym(e[i].so, "mdb_cursor_get");
		char sub[4096];
		snprintf(sub, sizeof sub, "%s/%d", dir, i);
		mkdir(sub, 0755);
		setup(&e[i], sub, n, ks);
	}
	double *ratio = malloc(sizeof(double) * (size_t)rounds * (size_t)ne), best[MAXLIB];
	if (!ratio)
		return 1;
	uint64_t sum = 0;
	for (int i = 0; i < ne; i++)
		best[i] = 1e30;
	for (int r = 0; r < rounds; r++) {
		double t[MAXLIB];
		for (int q = 0; q < ne; q++) {
			int i = (q + r) % ne;
			double m = 1e30;
			for (int p = 0; p < passes; p++) {
				uint64_t seen;
				double t0 = cpu_ns();
				sum += scan(&e[i], &seen);
				double dt = cpu_ns() - t0;
				if (seen != n) {
					fprintf(stderr, "ab_scan: %s: %llu records, expected %llu\n",
					    argv[7 + i], (unsigned long long)seen, (unsigned long long)n);
					return 1;
				}
				if (dt < m)
					m = dt;
			}
			t[i] = m / (double)n;
			if (t[i] < best[i])
				best[i] = t[i];
		}
		for (int i = 0; i < ne; i++)
			ratio[i * rounds + r] = t[i] / t[0];
	}
	for (int i = 0; i < ne; i++) {
		double *x = ratio + i * rounds;
		qsort(x, (size_t)rounds, sizeof *x, cmp_double);
		printf("%-40s best %.2f ns/record, to the first: median %.3f [%.3f-%.3f]\n",
		    argv[7 + i], best[i], x[rounds / 2], x[rounds / 4], x[3 * rounds / 4]);
	}
	fprintf(stderr, "checksum %llx\n", (unsigned long long)sum);
	free(ratio);
	return 0;
}
