/*
 * perf_cold - what a cold random lookup costs in exact counts rather than
 * time, ours against stock (the cold rows of `bench peers --scale`):
 * the store (record i: key be64(2i), a 100-byte value, loaded in key order
 * with MDB_APPEND) is built once in DIR; then for each lookup count K the
 * data file's cached pages are dropped with posix_fadvise(DONTNEED), the
 * environment is opened read-only, and K random gets (or MDB_SET_RANGE
 * seeks to the absent key just below a record) run in one read txn.
 * Reported per K: minor and major page faults of open, txn begin and the
 * lookups (getrusage), bytes the kernel read from disk for the lookups
 * (/proc/self/io read_bytes), and the data file pages resident afterwards
 * (mincore), with the number of resident runs (about one per disk read).
 * The lookup positions are the same for both engines.  The last column,
 * microseconds per lookup, is only meaningful on a quiet machine.  Needs a real disk
 * (a memory filesystem cannot drop pages); the store is left in DIR.
 *
 * usage: perf_cold DIR ENTRIES K[,K...] [get|seek] [build]
 */
#include "perf.h"
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

static void make_key(uint64_t v, unsigned char *k)
{
	for (int b = 0; b < 8; b++)
		k[b] = (unsigned char)(v >> (8 * (7 - b)));
}

static size_t map_size(uint64_t n)
{
	/* The bench's map size, so both programs reserve the same range. */
	return (size_t)(n * 200 + (256ull << 20));
}

static void build(const char *dir, uint64_t n)
{
	perf_fresh_env_dir(dir);
	MDB_env *env;
	MDB_txn *txn = NULL;
	MDB_dbi dbi;
	unsigned char kb[8], vb[100];
	PERF_CHECK(mdb_env_create(&env));
	PERF_CHECK(mdb_env_set_mapsize(env, map_size(n)));
	PERF_CHECK(mdb_env_open(env, dir, MDB_NOSYNC, 0644));
	for (uint64_t i = 0; i < n; i++) {
		if (!txn) {
			PERF_CHECK(mdb_txn_begin(env, NULL, 0, &txn));
			PERF_CHECK(mdb_dbi_open(txn, NULL, 0, &dbi));
		}
		make_key(2 * i, kb);
		for (unsigned b = 0; b < sizeof vb; b++)
			vb[b] = (unsigned char)(i + b);
		MDB_val k = { 8, kb }, v = { sizeof vb, vb };
		PERF_CHECK(mdb_put(txn, dbi, &k, &v, MDB_APPEND));
		if ((i + 1) % 100000 == 0 || i + 1 == n) {
			PERF_CHECK(mdb_txn_commit(txn));
			txn = NULL;
		}
	}
	PERF_CHECK(mdb_env_sync(env, 1));
	mdb_env_close(env);
}

/* Resident pages of the file at path, and how many runs they form. */
static void resident(const char *path, size_t *pages, size_t *res, size_t *runs,
	int *meta)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st)) {
		perror(path);
		exit(1);
	}
	size_t ps = (size_t)sysconf(_SC_PAGESIZE), len = (size_t)st.st_size;
	void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	unsigned char *vec = malloc(len / ps + 1);
	if (m == MAP_FAILED || !vec || mincore(m, len, vec)) {
		perror("mincore");
		exit(1);
	}
	*pages = len / ps;
	*res = *runs = 0;
	for (size_t i = 0; i < *pages; i++) {
		if (vec[i] & 1) {
			++*res;
			if (!i || !(vec[i - 1] & 1))
				++*runs;
		}
	}
	*meta = (vec[0] & 1) + (vec[1] & 1);
	munmap(m, len);
	free(vec);
	close(fd);
}

static void drop(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	fdatasync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
}

static long long io_read_bytes(void)
{
	FILE *f = fopen("/proc/self/io", "r");
	char line[128];
	long long v = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "read_bytes: %lld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

static void faults(long *mn, long *mj)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	*mn = ru.ru_minflt;
	*mj = ru.ru_majflt;
}

__attribute__((noinline)) static void lookups(MDB_txn *txn, MDB_cursor *cur, MDB_dbi dbi,
	uint64_t n, uint64_t k, int seek)
{
	uint64_t s = 0xc01d;
	unsigned char kb[8];
	for (uint64_t j = 0; j < k; j++) {
		uint64_t i = perf_splitmix(&s) % n;
		MDB_val key = { 8, kb }, d;
		if (seek && i) {
			make_key(2 * i - 1, kb);
			PERF_CHECK(mdb_cursor_get(cur, &key, &d, MDB_SET_RANGE));
		} else {
			make_key(2 * i, kb);
			PERF_CHECK(mdb_get(txn, dbi, &key, &d));
		}
		if (d.mv_size != 100 || ((unsigned char *)d.mv_data)[0] != (unsigned char)i) {
			fprintf(stderr, "perf_cold: wrong value for record %llu\n",
			    (unsigned long long)i);
			exit(1);
		}
	}
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s DIR ENTRIES K[,K...] [get|seek] [build]\n", argv[0]);
		return 2;
	}
	const char *dir = argv[1];
	uint64_t n = strtoull(argv[2], NULL, 10);
	int seek = argc > 4 && !strcmp(argv[4], "seek");
	char data[4096];
	snprintf(data, sizeof data, "%s/data.mdb", dir);
	if ((argc > 5 && !strcmp(argv[5], "build")) || access(data, R_OK))
		build(dir, n);
	printf("%-6s %-4s %8s | %6s %6s | %6s %6s | %8s %8s %10s | %9s %9s %7s %4s %7s\n",
	    "engine", "op", "K", "openMn", "openMj", "txnMn", "txnMj", "minflt", "majflt",
	    "readKB", "resident", "of", "runs", "meta", "us/op");
	for (char *p = argv[3]; *p;) {
		uint64_t k = strtoull(p, &p, 10);
		if (*p == ',')
			p++;
		drop(data);
		size_t pages, res, runs;
		int meta;
		resident(data, &pages, &res, &runs, &meta);
		if (res > pages / 50) {
			fprintf(stderr, "perf_cold: %zu of %zu pages stayed cached\n", res, pages);
			return 1;
		}
		long m0, j0, m1, j1, m2, j2, m3, j3;
		MDB_env *env;
		MDB_txn *txn;
		MDB_cursor *cur;
		MDB_dbi dbi;
		faults(&m0, &j0);
		PERF_CHECK(mdb_env_create(&env));
		PERF_CHECK(mdb_env_set_mapsize(env, map_size(n)));
		PERF_CHECK(mdb_env_open(env, dir, MDB_RDONLY, 0644));
		faults(&m1, &j1);
		PERF_CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
		PERF_CHECK(mdb_dbi_open(txn, NULL, 0, &dbi));
		PERF_CHECK(mdb_cursor_open(txn, dbi, &cur));
		faults(&m2, &j2);
		long long r0 = io_read_bytes();
		double t0 = perf_now_ns();
		lookups(txn, cur, dbi, n, k, seek);
		double t1 = perf_now_ns();
		long long r1 = io_read_bytes();
		faults(&m3, &j3);
		resident(data, &pages, &res, &runs, &meta);
		mdb_cursor_close(cur);
		mdb_txn_abort(txn);
		mdb_env_close(env);
#ifdef STOCK_LMDB
		const char *eng = "stock";
#else
		const char *eng = "ours";
#endif
		printf("%-6s %-4s %8llu | %6ld %6ld | %6ld %6ld | %8ld %8ld %10lld | %9zu %9zu %7zu %4d %7.1f\n",
		    eng, seek ? "seek" : "get", (unsigned long long)k, m1 - m0, j1 - j0, m2 - m1,
		    j2 - j1, m3 - m2, j3 - j2, (r1 - r0) / 1024, res, pages, runs, meta,
		    (t1 - t0) / 1e3 / (double)(k ? k : 1));
	}
	return 0;
}
