/* dev/mt.c - threads: one writer committing, several readers checking that
 * each snapshot is internally consistent (sum of values == txn counter). */
#include "../lmdb.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#define CHECK(x) do { int _r = (x); if (_r) { fprintf(stderr, "%s:%d %s -> %s\n", __FILE__, __LINE__, #x, mdb_strerror(_r)); exit(1); } } while (0)
static MDB_env *env; static MDB_dbi dbi; static volatile int stop; static long reads;
#define NK 2000
static void *reader(void *a)
{
	(void)a; long n = 0;
	while (!stop) {
		MDB_txn *txn; MDB_cursor *c; MDB_val k, d;
		CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
		uint64_t id = mdb_txn_id(txn), sum = 0, cnt = 0;
		CHECK(mdb_cursor_open(txn, dbi, &c));
		while (mdb_cursor_get(c, &k, &d, MDB_NEXT) == 0) { uint64_t v; memcpy(&v, d.mv_data, 8); sum += v; cnt++; if (d.mv_size > 8) { unsigned char *p = d.mv_data; for (size_t i = 8; i < d.mv_size; i++) if (p[i] != (unsigned char)v) { fprintf(stderr, "torn value\n"); exit(1); } } }
		mdb_cursor_close(c);
		if (cnt && sum != id * (id + 1) / 2) { fprintf(stderr, "inconsistent snapshot id %lu sum %lu\n", (unsigned long)id, (unsigned long)sum); exit(1); }
		mdb_txn_abort(txn); n++;
	}
	__atomic_add_fetch(&reads, n, __ATOMIC_RELAXED);
	return NULL;
}
int main(int argc, char **argv)
{
	(void)argc; pthread_t th[6]; static unsigned char vb[3000];
	CHECK(mdb_env_create(&env)); CHECK(mdb_env_set_mapsize(env, 1ul << 30)); CHECK(mdb_env_set_maxreaders(env, 16));
	CHECK(mdb_env_open(env, argv[1], MDB_NOSYNC, 0644));
	MDB_txn *txn; CHECK(mdb_txn_begin(env, NULL, 0, &txn)); CHECK(mdb_dbi_open(txn, NULL, 0, &dbi)); CHECK(mdb_txn_commit(txn));
	int nr = argc > 2 ? atoi(argv[2]) : 6; for (int i = 0; i < nr; i++) pthread_create(&th[i], NULL, reader, NULL);
	/* txn t adds value t to a random key (values sum to 1+2+..+t) */
	uint64_t vals[NK]; memset(vals, 0, sizeof vals);
	for (uint64_t t = 1; t <= 3000; t++) {
		CHECK(mdb_txn_begin(env, NULL, 0, &txn));
		int key = (int)((t * 2654435761u) % NK); char kb[16]; sprintf(kb, "k%05d", key);
		vals[key] += t;
		size_t len = 8 + (t % 7 == 0 ? 2500 : t % 50);
		memcpy(vb, &vals[key], 8); memset(vb + 8, (unsigned char)vals[key], len - 8);
		MDB_val k = { strlen(kb), kb }, d = { len, vb };
		CHECK(mdb_put(txn, dbi, &k, &d, 0));
		if (t % 5 == 0) { int k2 = (int)((t * 40503u) % NK); char kb2[16]; sprintf(kb2, "z%05d", k2); MDB_val kk = { strlen(kb2), kb2 }, dd = { 8, "\0\0\0\0\0\0\0\0" }; uint64_t zero = 0; memcpy(vb, &zero, 8); dd.mv_data = vb; mdb_put(txn, dbi, &kk, &dd, 0); }
		CHECK(mdb_txn_commit(txn));
		if (mdb_txn_id(NULL)) break;
	}
	stop = 1;
	for (int i = 0; i < nr; i++) pthread_join(th[i], NULL);
	MDB_envinfo info; mdb_env_info(env, &info);
	printf("mt ok: %ld reader txns, last_pg %zu\n", reads, (size_t)info.me_last_pgno);
	mdb_env_close(env);
	return 0;
}
