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

#endif
