/* ab_reads_ops.h - the calls ab_reads and perf_floor make, as one table per engine build. */
#ifndef AB_READS_OPS_H
#define AB_READS_OPS_H
struct ab_ops {
	int (*env_create)(MDB_env **);
	int (*env_set_mapsize)(MDB_env *, size_t);
	int (*env_open)(MDB_env *, const char *, unsigned, mdb_mode_t);
	int (*txn_begin)(MDB_env *, MDB_txn *, unsigned, MDB_txn **);
	int (*dbi_open)(MDB_txn *, const char *, unsigned, MDB_dbi *);
	int (*get)(MDB_txn *, MDB_dbi, MDB_val *, MDB_val *);
	int (*cursor_open)(MDB_txn *, MDB_dbi, MDB_cursor **);
	int (*cursor_get)(MDB_cursor *, MDB_val *, MDB_val *, MDB_cursor_op);
	int (*put)(MDB_txn *, MDB_dbi, MDB_val *, MDB_val *, unsigned);
	int (*txn_commit)(MDB_txn *);
};
#endif
