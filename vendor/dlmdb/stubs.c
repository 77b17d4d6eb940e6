/*
 * stubs.c - DLMDB extension entry points whose full behaviour arrives in
 * later work (order statistics, duplicate listing, profiling).  They answer
 * the cases that are already decidable and refuse the rest with an error,
 * never with a guess.
 */
#define MDB_PROFILE_RANGE 1
#include "internal.h"

#define DL_COUNT_FLAGS	(MDB_COUNT_LOWER_INCL | MDB_COUNT_UPPER_INCL)

/* Common entry checks; returns 0 when the DB is counted and usable. */
static int dl_counted_check(MDB_txn *txn, MDB_dbi dbi)
{
	int rc;
	if (!txn)
		return EINVAL;
	if ((rc = dl_dbi_check(txn, dbi, 1)))
		return rc;
	if (txn->flags & (TXN_ERROR | TXN_FINISHED))
		return MDB_BAD_TXN;
	if ((txn->dbflags[dbi] & DB_STALE) && (rc = dl_db_load(txn, dbi)))
		return rc;
	if (!(txn->dbs[dbi].md_flags & MDB_COUNTED))
		return MDB_INCOMPATIBLE;
	return 0;
}

int mdb_count_all(MDB_txn *txn, MDB_dbi dbi, unsigned flags, uint64_t *out)
{
	int rc;
	if (!out || (flags & ~DL_COUNT_FLAGS))
		return EINVAL;
	if ((rc = dl_counted_check(txn, dbi)))
		return rc;
	*out = txn->dbs[dbi].md_entries;
	return 0;
}

int mdb_count_range(MDB_txn *txn, MDB_dbi dbi, const MDB_val *low,
	const MDB_val *high, unsigned flags, uint64_t *out)
{
	int rc;
	(void)low;
	(void)high;
	if (!out || (flags & ~DL_COUNT_FLAGS))
		return EINVAL;
	if ((rc = dl_counted_check(txn, dbi)))
		return rc;
	return ENOTSUP;
}

int mdb_range_count_keys(MDB_txn *txn, MDB_dbi dbi, const MDB_val *key_low,
	const MDB_val *key_high, unsigned flags, uint64_t *out)
{
	int rc;
	(void)key_low;
	(void)key_high;
	if (!out || (flags & ~DL_COUNT_FLAGS))
		return EINVAL;
	if ((rc = dl_counted_check(txn, dbi)))
		return rc;
	return ENOTSUP;
}

int mdb_range_count_values(MDB_txn *txn, MDB_dbi dbi, const MDB_val *key_low,
	const MDB_val *key_high, unsigned key_flags, uint64_t *out)
{
	int rc;
	(void)key_low;
	(void)key_high;
	if (!out || (key_flags & ~DL_COUNT_FLAGS))
		return EINVAL;
	if ((rc = dl_counted_check(txn, dbi)))
		return rc;
	if (!(txn->dbs[dbi].md_flags & MDB_DUPSORT))
		return MDB_INCOMPATIBLE;
	return ENOTSUP;
}

int mdb_cursor_get_rank(MDB_cursor *cursor, uint64_t rank, MDB_val *key,
	MDB_val *data, unsigned flags)
{
	int rc;
	(void)rank;
	(void)key;
	(void)data;
	if (!cursor || flags)
		return EINVAL;
	if ((rc = dl_counted_check(cursor->txn, cursor->dbi)))
		return rc;
	return ENOTSUP;
}

int mdb_get_rank(MDB_txn *txn, MDB_dbi dbi, uint64_t rank, MDB_val *key, MDB_val *data)
{
	int rc;
	(void)rank;
	(void)key;
	(void)data;
	if ((rc = dl_counted_check(txn, dbi)))
		return rc;
	return ENOTSUP;
}

int mdb_cursor_key_rank(MDB_cursor *cursor, const MDB_val *key, const MDB_val *data,
	unsigned flags, uint64_t *rank)
{
	int rc;
	(void)key;
	(void)data;
	if (!cursor || !rank || flags)
		return EINVAL;
	if ((rc = dl_counted_check(cursor->txn, cursor->dbi)))
		return rc;
	return ENOTSUP;
}

int mdb_get_key_rank(MDB_txn *txn, MDB_dbi dbi, const MDB_val *key,
	const MDB_val *data, uint64_t *rank)
{
	int rc;
	(void)key;
	(void)data;
	if (!rank)
		return EINVAL;
	if ((rc = dl_counted_check(txn, dbi)))
		return rc;
	return ENOTSUP;
}


/* Profiling counters: dlmdb keeps none, so snapshots are all zero. */
void mdb_profile_reset(void)
{
}

void mdb_profile_snapshot(MDB_profile_stats *out)
{
	if (out)
		memset(out, 0, sizeof(*out));
}
