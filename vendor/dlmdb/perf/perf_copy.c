/*
 * perf_copy - wall-clock time of mdb_env_copy2(MDB_CP_COMPACT) of an
 * existing store, ROUNDS times in one process, each into OUTDIR (its
 * data.mdb removed before every round, and after the last unless KEEP is
 * 1).  The source is opened read-only once, so the rounds time the copy
 * alone: no open, no layout detection.  Point OUTDIR at tmpfs (/dev/shm)
 * to take the disk out, or at a disk file system to include it.  OUTDIR
 * /dev/null copies with mdb_env_copyfd2 into /dev/null, which leaves the
 * walk alone: no file is written.
 *
 * usage: perf_copy SRCDIR OUTDIR [ROUNDS] [KEEP]
 * prints each round's milliseconds, then the minimum and the median.
 */
#include "perf.h"
#include <fcntl.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s SRCDIR OUTDIR [ROUNDS] [KEEP]\n", argv[0]);
		return 2;
	}
	int rounds = argc > 3 ? atoi(argv[3]) : 5;
	int keep = argc > 4 ? atoi(argv[4]) : 0;
	if (rounds < 1)
		rounds = 1;
	char out[4096];
	int null = !strcmp(argv[2], "/dev/null");
	snprintf(out, sizeof out, "%s/data.mdb", argv[2]);
	if (!null && mkdir(argv[2], 0755) && errno != EEXIST) {
		perror(argv[2]);
		return 1;
	}
	MDB_env *env;
	PERF_CHECK(mdb_env_create(&env));
	PERF_CHECK(mdb_env_set_maxdbs(env, 64));
	PERF_CHECK(mdb_env_open(env, argv[1], MDB_RDONLY, 0644));
	double *ms = malloc(sizeof(double) * (size_t)rounds);
	if (!ms)
		return 1;
	for (int r = 0; r < rounds; r++) {
		double t0;
		if (null) {
			int fd = open("/dev/null", O_WRONLY);
			if (fd < 0) {
				perror("/dev/null");
				return 1;
			}
			t0 = perf_now_ns();
			PERF_CHECK(mdb_env_copyfd2(env, fd, MDB_CP_COMPACT));
			ms[r] = (perf_now_ns() - t0) / 1e6;
			close(fd);
		} else {
			unlink(out);
			t0 = perf_now_ns();
			PERF_CHECK(mdb_env_copy2(env, argv[2], MDB_CP_COMPACT));
			ms[r] = (perf_now_ns() - t0) / 1e6;
		}
		printf("round %d: %.2f ms\n", r + 1, ms[r]);
	}
	if (!keep && !null)
		unlink(out);
	qsort(ms, (size_t)rounds, sizeof(double), cmp_double);
	printf("min %.2f ms  median %.2f ms\n", ms[0], ms[rounds / 2]);
	free(ms);
	mdb_env_close(env);
	return 0;
}
