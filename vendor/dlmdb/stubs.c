/*
 * stubs.c - DLMDB's optional range-read profiling API.
 */
#define MDB_PROFILE_RANGE 1
#include "internal.h"

/* Profiling counters: dlmdb keeps none, so snapshots are all zero. */
void mdb_profile_reset(void)
{
}

void mdb_profile_snapshot(MDB_profile_stats *out)
{
	if (out)
		memset(out, 0, sizeof(*out));
}
