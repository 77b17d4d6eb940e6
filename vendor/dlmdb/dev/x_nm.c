/* NEXT_MULTIPLE after a cursor put into a DUPFIXED sub-page following MDB_LAST */
#include "lmdb.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#define CK(x) do { int r_ = (x); if (r_) { printf("%s: %s\n", #x, mdb_strerror(r_)); } } while (0)
int main(int argc, char **argv) {
	MDB_env *env; MDB_txn *txn; MDB_dbi dbi; MDB_cursor *c;
	system("rm -rf /tmp/xnm && mkdir -p /tmp/xnm");
	CK(mdb_env_create(&env)); mdb_env_set_maxdbs(env, 4);
	CK(mdb_env_open(env, "/tmp/xnm", argc > 1 ? 0 : 0, 0644));
	CK(mdb_txn_begin(env, NULL, 0, &txn));
	CK(mdb_dbi_open(txn, "fix", MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED, &dbi));
	MDB_val k, d; uint32_t v;
	k.mv_data = "d"; k.mv_size = 1;
	uint32_t items[] = {0, 4, 8, 9, 0x6f, 0xc1, 0xdb};
	for (int i = 0; i < 7; i++) { v = htonl(items[i]); d.mv_data = &v; d.mv_size = 4; CK(mdb_put(txn, dbi, &k, &d, 0)); }
	for (int i = 0; i < 187; i++) { v = htonl(1000 + i); d.mv_data = &v; d.mv_size = 4; CK(mdb_put(txn, dbi, &k, &d, 0)); }
	k.mv_data = "zzz"; k.mv_size = 3; v = htonl(5); d.mv_data = &v; d.mv_size = 4; CK(mdb_put(txn, dbi, &k, &d, 0));
	CK(mdb_cursor_open(txn, dbi, &c));
	CK(mdb_cursor_get(c, &k, &d, MDB_LAST));
	k.mv_data = "d"; k.mv_size = 1; v = htonl(0xb); d.mv_data = &v; d.mv_size = 4;
	CK(mdb_cursor_put(c, &k, &d, 0));
	int rc = mdb_cursor_get(c, &k, &d, MDB_NEXT_MULTIPLE);
	printf("NEXT_MULTIPLE rc=%d size=%zu\n", rc, rc ? 0 : d.mv_size);
	mdb_txn_abort(txn); mdb_env_close(env);
	return 0;
}
