/* dev/check.c - structural tree checker for debugging (not part of the lib). */
#include "../internal.h"
#include <stdio.h>

static int chk_page(MDB_txn *txn, MDB_dbi dbi, pgno_t pg, int depth, int maxdepth,
	const MDB_val *lo, const MDB_val *hi, uint64_t *entries)
{
	MDB_env *env = txn->env;
	MDB_page *mp;
	MDB_cmp_func *cmp = env->dbxs[dbi].cmp;
	if (dl_page_get(txn, pg, &mp)) { fprintf(stderr, "CHK: page %lu not found\n", (unsigned long)pg); return 1; }
	if (dl_page_check(env, mp)) { fprintf(stderr, "CHK: page %lu bad lower/upper\n", (unsigned long)pg); return 1; }
	unsigned n = NUMKEYS(mp);
	if (IS_BRANCH(mp)) {
		if (n < 2) { fprintf(stderr, "CHK: branch %lu has %u keys (depth %d)\n", (unsigned long)pg, n, depth); return 1; }
		for (unsigned i = 0; i < n; i++) {
			MDB_node *nd = NODEPTR(mp, i);
			MDB_val k = { nd->mn_ksize, NODEKEY(mp, nd) };
			MDB_val nk;
			const MDB_val *clo = i ? &k : lo, *chi = hi;
			if (i + 1 < n) { MDB_node *nn = NODEPTR(mp, i + 1); nk.mv_size = nn->mn_ksize; nk.mv_data = NODEKEY(mp, nn); chi = &nk; }
			if (i && lo && cmp(&k, lo) < 0) { fprintf(stderr, "CHK: branch %lu sep %u below bound\n", (unsigned long)pg, i); return 1; }
			if (i && hi && cmp(&k, hi) >= 0) { fprintf(stderr, "CHK: branch %lu sep %u above bound\n", (unsigned long)pg, i); return 1; }
			if (chk_page(txn, dbi, NODEPGNO(nd), depth + 1, maxdepth, clo, chi, entries)) { fprintf(stderr, "  via branch %lu idx %u\n", (unsigned long)pg, i); return 1; }
		}
		return 0;
	}
	if (!IS_LEAF(mp)) { fprintf(stderr, "CHK: page %lu neither\n", (unsigned long)pg); return 1; }
	if (depth + 1 != maxdepth) { fprintf(stderr, "CHK: leaf %lu at depth %d, want %d\n", (unsigned long)pg, depth + 1, maxdepth); return 1; }
	if (!n) { fprintf(stderr, "CHK: empty leaf %lu\n", (unsigned long)pg); return 1; }
	MDB_val prev = { 0, NULL };
	for (unsigned i = 0; i < n; i++) {
		MDB_val k;
		if (IS_LEAF2(mp)) { k.mv_size = mp->mp_pad; k.mv_data = (char *)mp + 16 + i * mp->mp_pad; }
		else { MDB_node *nd = NODEPTR(mp, i); k.mv_size = nd->mn_ksize; k.mv_data = NODEKEY(mp, nd); }
		if (i && cmp(&prev, &k) >= 0) { fprintf(stderr, "CHK: leaf %lu keys out of order at %u\n", (unsigned long)pg, i); return 1; }
		if (lo && cmp(&k, lo) < 0) { fprintf(stderr, "CHK: leaf %lu key %u below separator\n", (unsigned long)pg, i); return 1; }
		if (hi && cmp(&k, hi) >= 0) { fprintf(stderr, "CHK: leaf %lu key %u not below next separator\n", (unsigned long)pg, i); return 1; }
		prev = k;
	}
	*entries += n;
	return 0;
}

int dl_debug_check(MDB_txn *txn, MDB_dbi dbi);
static char prevsum[256];
static void summary(MDB_txn *txn, MDB_dbi dbi, char *out)
{
	MDB_db *db = &txn->dbs[dbi];
	MDB_page *mp = NULL;
	int n = -1;
	if (db->md_root != P_INVALID && !dl_page_get(txn, db->md_root, &mp)) n = (int)NUMKEYS(mp);
	sprintf(out, "depth %u root %lu nroot %d entries %lu branch %lu leaf %lu", db->md_depth, (unsigned long)db->md_root, n, (unsigned long)db->md_entries, (unsigned long)db->md_branch_pages, (unsigned long)db->md_leaf_pages);
}
int dl_debug_check(MDB_txn *txn, MDB_dbi dbi)
{
	if (txn->dbflags[dbi] & DB_STALE) dl_db_load(txn, dbi);
	MDB_db *db = &txn->dbs[dbi];
	if (db->md_root == P_INVALID) return 0;
	uint64_t e = 0;
	int rc = chk_page(txn, dbi, db->md_root, 0, db->md_depth, NULL, NULL, &e);
	if (!rc && !(db->md_flags & MDB_DUPSORT) && e != db->md_entries) { fprintf(stderr, "CHK: entries %lu != %lu\n", (unsigned long)e, (unsigned long)db->md_entries); rc = 1; }
	if (rc) { char now[256]; summary(txn, dbi, now); fprintf(stderr, "CHK before: %s\nCHK now:    %s\n", prevsum, now); }
	summary(txn, dbi, prevsum);
	return rc;
}
