/* Walk FREE_DBI in a read txn (the records `dlmdb stat -f` prints). */
#include "lmdb.h"
#include <stdio.h>
int main(int argc, char **argv) {
	MDB_env *env; MDB_txn *txn; MDB_cursor *c; MDB_val k, d; int rc;
	mdb_env_create(&env);
	if ((rc = mdb_env_open(env, argv[1], MDB_RDONLY, 0644))) { printf("open %s\n", mdb_strerror(rc)); return 1; }
	mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
	if ((rc = mdb_cursor_open(txn, 0, &c))) { printf("cursor %s\n", mdb_strerror(rc)); return 1; }
	while ((rc = mdb_cursor_get(c, &k, &d, MDB_NEXT)) == 0)
		printf("rec txn %zu size %zu\n", (size_t)*(unsigned long *)k.mv_data, d.mv_size);
	printf("end: %s\n", mdb_strerror(rc));
	(void)argc;
	return 0;
}
