#include "../lmdb.h"
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
	(void)argc;
	MDB_env *env; MDB_txn *txn; MDB_dbi dbi; MDB_cursor *c; MDB_val k, d;
	mdb_env_create(&env); mdb_env_set_maxdbs(env, 8);
	if (mdb_env_open(env, argv[1], MDB_RDONLY | MDB_NOSUBDIR | (argc > 3 ? MDB_FORMAT_DLMDB_V1 : 0), 0644)) return 1;
	mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
	if (mdb_dbi_open(txn, argv[2], 0, &dbi)) return 2;
	mdb_cursor_open(txn, dbi, &c);
	long keys = 0, vals = 0, single = 0, bad = 0;
	while (mdb_cursor_get(c, &k, &d, MDB_NEXT_NODUP) == 0) {
		const MDB_val *l; size_t n; int rc = mdb_cursor_list_dup(c, &l, &n);
		keys++;
		if (rc == MDB_NOTFOUND) { single++; vals++; continue; }
		if (rc) { printf("list rc %d\n", rc); return 3; }
		size_t cnt; mdb_cursor_count(c, &cnt);
		if (cnt != n) bad++;
		/* compare with iteration */
		MDB_val k2, d2; size_t i = 0;
		int r2 = mdb_cursor_get(c, &k2, &d2, MDB_FIRST_DUP);
		while (r2 == 0) { if (i >= n || d2.mv_size != l[i].mv_size || memcmp(d2.mv_data, l[i].mv_data, d2.mv_size)) bad++; i++; r2 = mdb_cursor_get(c, &k2, &d2, MDB_NEXT_DUP); }
		if (i != n) bad++;
		vals += n;
	}
	printf("%s: %ld keys (%ld single), %ld values, %ld mismatches\n", argv[2], keys, single, vals, bad);
	return bad != 0;
}
