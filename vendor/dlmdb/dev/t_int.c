#include "../lmdb.h"
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
	(void)argc;
	MDB_env *env; MDB_txn *txn; MDB_dbi dbi; MDB_cursor *c, *c2; MDB_val k, d;
	mdb_env_create(&env); mdb_env_set_maxdbs(env, 8);
	if (mdb_env_open(env, argv[1], MDB_RDONLY | MDB_NOSUBDIR, 0644)) return 1;
	mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
	if (mdb_dbi_open(txn, argv[2], 0, &dbi)) return 2;
	mdb_cursor_open(txn, dbi, &c); mdb_cursor_open(txn, dbi, &c2);
	int n = 0, bad = 0;
	while (mdb_cursor_get(c, &k, &d, MDB_NEXT_NODUP) == 0) {
		MDB_val kk = k, dd;
		int rc = mdb_cursor_get(c2, &kk, &dd, MDB_SET_KEY);
		n++;
		if (rc) { if (bad++ < 5) { printf("miss rc=%d key=", rc); for (size_t i = 0; i < k.mv_size; i++) printf("%02x", ((unsigned char *)k.mv_data)[i]); printf("\n"); } }
		rc = mdb_get(txn, dbi, &kk, &dd);
		if (rc) printf("get miss\n");
	}
	printf("%d keys, %d misses\n", n, bad);
	return 0;
}
