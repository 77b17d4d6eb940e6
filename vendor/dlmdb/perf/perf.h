/*
 * perf.h - shared bits of the instruction-count programs in perf/: each
 * program runs one workload against whichever lmdb.h it was compiled with
 * (ours, or Debian's liblmdb with -DSTOCK_LMDB), so callgrind can count the
 * instructions both engines spend on the same calls.
 */
#ifndef DLMDB_PERF_H
#define DLMDB_PERF_H

#include "lmdb.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PERF_CHECK(expr) do { \
	int perf_rc_ = (expr); \
	if (perf_rc_) { \
		fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr, \
		    mdb_strerror(perf_rc_)); \
		exit(1); \
	} \
} while (0)

static inline double perf_now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

/* Make dir an empty environment directory: create it if needed and remove
 * only the two files an environment keeps there, never anything else. */
static inline void perf_fresh_env_dir(const char *dir)
{
	char path[4096];
	if (mkdir(dir, 0755) && errno != EEXIST) {
		perror(dir);
		exit(1);
	}
	snprintf(path, sizeof path, "%s/data.mdb", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/lock.mdb", dir);
	unlink(path);
}

/* SplitMix64: the programs' random numbers and shuffles. */
static inline uint64_t perf_splitmix(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* 0..n-1 in a Fisher-Yates order drawn from the top with perf_splitmix
 * seeded by seed (the Rust bench driver's shuffle); malloc'd. */
static inline uint64_t *perf_shuffled(uint64_t n, uint64_t seed)
{
	uint64_t *p = malloc((n ? n : 1) * sizeof *p);
	if (!p)
		exit(1);
	for (uint64_t i = 0; i < n; i++)
		p[i] = i;
	for (uint64_t i = n ? n - 1 : 0; i > 0; i--) {
		uint64_t j = perf_splitmix(&seed) % (i + 1), t = p[i];
		p[i] = p[j];
		p[j] = t;
	}
	return p;
}

#endif
