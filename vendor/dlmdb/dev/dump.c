/* dev/dump.c - minimal mdb_dump -a clone on our engine, for fixture checks.
 * usage: dump <file> [v1|lmdb]   (NOSUBDIR, read-only) */
#include "../lmdb.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void hex(const MDB_val *v)
{
	const unsigned char *p = v->mv_data;
	putchar(' ');
	for (size_t i = 0; i < v->mv_size; i++)
		printf("%02x", p[i]);
	putchar('\n');
}

static int dumpdb(MDB_env *env, MDB_txn *txn, const char *name, MDB_dbi dbi)
{
	MDB_envinfo info;
	MDB_stat st;
	unsigned flags;
	MDB_cursor *c;
	MDB_val k, d;
	int rc;
	mdb_env_info(env, &info);
	mdb_stat(txn, dbi, &st);
	mdb_dbi_flags(txn, dbi, &flags);
	printf("VERSION=3\nformat=bytevalue\n");
	if (name)
		printf("database=%s\n", name);
	printf("type=btree\nmapsize=%zu\nmaxreaders=%u\ndb_pagesize=%u\n",
	    (size_t)info.me_mapsize, info.me_maxreaders, st.ms_psize);
	if (flags & MDB_REVERSEKEY) printf("reversekey=1\n");
	if (flags & MDB_DUPSORT) printf("duplicates=1\n");
	if (flags & MDB_INTEGERKEY) printf("integerkey=1\n");
	if (flags & MDB_DUPFIXED) printf("dupfixed=1\n");
	if (flags & MDB_INTEGERDUP) printf("integerdup=1\n");
	if (flags & MDB_REVERSEDUP) printf("reversedup=1\n");
	printf("HEADER=END\n");
	if ((rc = mdb_cursor_open(txn, dbi, &c)))
		return rc;
	while ((rc = mdb_cursor_get(c, &k, &d, MDB_NEXT)) == 0) {
		hex(&k);
		hex(&d);
	}
	mdb_cursor_close(c);
	printf("DATA=END\n");
	return rc == MDB_NOTFOUND ? 0 : rc;
}

int main(int argc, char **argv)
{
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi dbi;
	MDB_cursor *c;
	MDB_val k, d;
	unsigned fl = MDB_NOSUBDIR | MDB_RDONLY;
	int rc, all = 1;
	if (argc < 2)
		return 2;
	if (argc > 2 && !strcmp(argv[2], "v1"))
		fl |= MDB_FORMAT_DLMDB_V1;
	if (argc > 3 && !strcmp(argv[3], "main"))
		all = 0;
	mdb_env_create(&env);
	mdb_env_set_maxdbs(env, 64);
	if ((rc = mdb_env_open(env, argv[1], fl, 0644))) {
		fprintf(stderr, "open: %s\n", mdb_strerror(rc));
		return 1;
	}
	if ((rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn))) {
		fprintf(stderr, "begin: %s\n", mdb_strerror(rc));
		return 1;
	}
	if (!all) {
		rc = dumpdb(env, txn, NULL, 1);
		if (rc) fprintf(stderr, "dump main: %s\n", mdb_strerror(rc));
		return rc != 0;
	}
	mdb_cursor_open(txn, 1, &c);
	int named = 0;
	while ((rc = mdb_cursor_get(c, &k, &d, MDB_NEXT)) == 0) {
		char name[600];
		memcpy(name, k.mv_data, k.mv_size);
		name[k.mv_size] = 0;
		if (memchr(k.mv_data, 0, k.mv_size))
			continue;
		int r2 = mdb_dbi_open(txn, name, 0, &dbi);
		if (r2) {
			fprintf(stderr, "dbi_open %s: %s\n", name, mdb_strerror(r2));
			continue;
		}
		named++;
		r2 = dumpdb(env, txn, name, dbi);
		if (r2)
			fprintf(stderr, "dump %s: %s\n", name, mdb_strerror(r2));
	}
	mdb_cursor_close(c);
	if (!named)
		dumpdb(env, txn, NULL, 1);
	mdb_txn_abort(txn);
	mdb_env_close(env);
	return 0;
}
