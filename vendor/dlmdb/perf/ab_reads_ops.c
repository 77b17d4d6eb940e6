/* ab_reads_ops.c - compiled with each engine build ab_reads.sh makes: its
 * table of calls (renamed NAME_ab_ops with the build's other symbols). */
#include "lmdb.h"
#include "ab_reads_ops.h"

const struct ab_ops ab_ops = { mdb_env_create, mdb_env_set_mapsize, mdb_env_open,
	mdb_txn_begin, mdb_dbi_open, mdb_get, mdb_cursor_open, mdb_cursor_get, mdb_put,
	mdb_txn_commit };
