/* ab_reads_ops.h - the calls ab_reads makes, as one table per engine build. */
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
};
#endif
