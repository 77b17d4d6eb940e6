/*
 * count.c - DLMDB order statistics on MDB_COUNTED databases: totals, range
 * counts and ranks, using the subtree counts stored in P_COUNTED branch
 * nodes (dlmdb-extensions §3.4-3.5, §2.4).  Those counts are brought up to
 * date after writes by countfix.c.
 *
 * A count is a number of entries: every duplicate is one entry.  Inside a
 * leaf, a node contributes 1, or its number of duplicates when it holds a
 * sub-page or a sub-database.
 */
#include "internal.h"

#define DL_COUNT_FLAGS	(MDB_COUNT_LOWER_INCL | MDB_COUNT_UPPER_INCL)

/* Subtree count stored in branch node i of a counted branch page, after
 * checking that the node (and so its count) lies inside the page: a
 * damaged pointer would otherwise read past it. */
int dl_bcount(MDB_env *env, MDB_page *mp, unsigned i, uint64_t *out)
{
	MDB_node *n = NODEPTR(mp, i);
	if (!IS_COUNTED(mp) || dl_node_check(env, mp, n, 0))
		return MDB_CORRUPTED;
	*out = dl_get64((char *)n + NODESZ);
	return 0;
}

/* Entries leaf entry i stands for (format of §3.5). */
int dl_contrib(MDB_env *env, MDB_page *mp, unsigned i, uint64_t *out)
{
	if (IS_LEAF2(mp)) {
		*out = 1;
		return 0;
	}
	MDB_node *n = NODEPTR(mp, i);
	int rc = dl_node_check(env, mp, n, 1);
	if (rc)
		return rc;
	if (!(n->mn_flags & F_DUPDATA)) {
		*out = 1;
		return 0;
	}
	const char *d = (const char *)n + NODESZ + n->mn_ksize + (n->mn_ksize & env->pad);
	if (n->mn_flags & F_SUBDATA) {
		MDB_db rec;
		if (NODEDSZ(n) != sizeof(rec))
			return MDB_CORRUPTED;
		memcpy(&rec, d, sizeof(rec));
		*out = rec.md_entries;
		return 0;
	}
	MDB_page hdr;
	if (NODEDSZ(n) < PAGEHDRSZ)
		return MDB_CORRUPTED;
	memcpy(&hdr, d, PAGEHDRSZ);
	if (MP_LOWER(&hdr) < PAGEHDRSZ)
		return MDB_CORRUPTED;
	*out = NUMKEYS(&hdr);
	return 0;
}

/* Common checks; on success the DB record is current in txn. */
static int dl_counted_db(MDB_txn *txn, MDB_dbi dbi)
{
	int rc;
	if ((rc = dl_dbi_check(txn, dbi, 1)))
		return rc;
	if ((txn->flags & (TXN_ERROR | TXN_FINISHED)) || txn->child)
		return MDB_BAD_TXN;
	if ((txn->dbflags[dbi] & DB_STALE) && (rc = dl_db_load(txn, dbi)))
		return rc;
	if (!(txn->dbs[dbi].md_flags & MDB_COUNTED))
		return MDB_INCOMPATIBLE;
	return dl_txn_err(txn, dl_count_fix(txn, dbi));
}

/*
 * Number of entries whose key sorts before key (plus the entries of key
 * itself when incl and it exists).  Sums the counts left of the search path.
 */
static int dl_before(MDB_txn *txn, MDB_dbi dbi, const MDB_val *key, int incl, uint64_t *out)
{
	MDB_env *env = txn->env;
	MDB_cursor mc;
	int rc, exact;
	uint64_t sum = 0, c;

	dl_cursor_init(&mc, txn, dbi);
	rc = dl_search(&mc, key, DL_PS_KEY);
	if (rc == MDB_NOTFOUND) {
		*out = 0;
		return 0;
	}
	if (rc)
		return rc;
	for (int l = 0; l < mc.top; l++) {
		MDB_page *mp = mc.pg[l];
		if (!IS_COUNTED(mp))
			return MDB_INCOMPATIBLE;
		for (unsigned i = 0; i < mc.ki[l]; i++) {
			if ((rc = dl_bcount(txn->env, mp, i, &c)))
				return rc;
			sum += c;
		}
	}
	MDB_node *n = dl_leaf_search(&mc, key, &exact);
	MDB_page *lp = mc.pg[mc.top];
	unsigned upto = mc.ki[mc.top];
	if (!n && upto < NUMKEYS(lp))
		return MDB_CORRUPTED;
	for (unsigned i = 0; i < upto; i++) {
		if ((rc = dl_contrib(env, lp, i, &c)))
			return rc;
		sum += c;
	}
	if (n && exact && incl) {
		if ((rc = dl_contrib(env, lp, upto, &c)))
			return rc;
		sum += c;
	}
	*out = sum;
	return 0;
}

/* U - L for the bounds and flags of §2.4.3 (entries, not keys). */
static int dl_range(MDB_txn *txn, MDB_dbi dbi, const MDB_val *low, const MDB_val *high,
	unsigned flags, uint64_t *out)
{
	MDB_db *db = &txn->dbs[dbi];
	MDB_cmp_func *cmp = txn->env->dbxs[dbi].cmp;
	uint64_t u, l = 0;
	int rc;
	*out = 0;
	if (db->md_root == P_INVALID)
		return 0;
	if (low && high) {
		int c = cmp(low, high);
		if (c > 0)
			return 0;
		if (c == 0 && (flags & DL_COUNT_FLAGS) != DL_COUNT_FLAGS)
			return 0;
	}
	if (high) {
		if ((rc = dl_before(txn, dbi, high, (flags & MDB_COUNT_UPPER_INCL) != 0, &u)))
			return rc;
	} else {
		u = db->md_entries;
	}
	if (low && (rc = dl_before(txn, dbi, low, !(flags & MDB_COUNT_LOWER_INCL), &l)))
		return rc;
	*out = u > l ? u - l : 0;
	return 0;
}

int mdb_count_all(MDB_txn *txn, MDB_dbi dbi, unsigned flags, uint64_t *out)
{
	int rc;
	if (!txn || !out)
		return EINVAL;
	if ((rc = dl_dbi_check(txn, dbi, 1)))
		return rc;
	if (flags & ~DL_COUNT_FLAGS)
		return EINVAL;
	if ((txn->dbflags[dbi] & DB_STALE) && (rc = dl_db_load(txn, dbi)))
		return rc;
	if (!(txn->dbs[dbi].md_flags & MDB_COUNTED))
		return MDB_INCOMPATIBLE;
	*out = txn->dbs[dbi].md_entries;
	return 0;
}

int mdb_count_range(MDB_txn *txn, MDB_dbi dbi, const MDB_val *low,
	const MDB_val *high, unsigned flags, uint64_t *out)
{
	int rc;
	if (!txn || !out || (flags & ~DL_COUNT_FLAGS))
		return EINVAL;
	if ((rc = dl_counted_db(txn, dbi)))
		return rc;
	if (txn->dbs[dbi].md_flags & MDB_DUPSORT)
		return MDB_INCOMPATIBLE;
	return dl_txn_err(txn, dl_range(txn, dbi, low, high, flags, out));
}

int mdb_range_count_values(MDB_txn *txn, MDB_dbi dbi, const MDB_val *key_low,
	const MDB_val *key_high, unsigned key_flags, uint64_t *out)
{
	int rc;
	if (!txn || !out)
		return EINVAL;
	if ((rc = dl_dbi_check(txn, dbi, 1)))
		return rc;
	if ((txn->flags & (TXN_ERROR | TXN_FINISHED)) || txn->child)
		return MDB_BAD_TXN;
	if (key_flags & ~DL_COUNT_FLAGS)
		return EINVAL;
	if ((txn->dbflags[dbi] & DB_STALE) && (rc = dl_db_load(txn, dbi)))
		return rc;
	if (!(txn->dbs[dbi].md_flags & MDB_DUPSORT))
		return MDB_INCOMPATIBLE;
	if (!(txn->dbs[dbi].md_flags & MDB_COUNTED))
		return MDB_INCOMPATIBLE;
	if ((rc = dl_count_fix(txn, dbi)))
		return dl_txn_err(txn, rc);
	return dl_txn_err(txn, dl_range(txn, dbi, key_low, key_high, key_flags, out));
}

int mdb_range_count_keys(MDB_txn *txn, MDB_dbi dbi, const MDB_val *key_low,
	const MDB_val *key_high, unsigned flags, uint64_t *out)
{
	int rc;
	if (!txn || !out)
		return EINVAL;
	if ((rc = dl_dbi_check(txn, dbi, 1)))
		return rc;
	if ((txn->flags & (TXN_ERROR | TXN_FINISHED)) || txn->child)
		return MDB_BAD_TXN;
	if (flags & ~DL_COUNT_FLAGS)
		return EINVAL;
	if ((rc = dl_counted_db(txn, dbi)))
		return rc;
	if (!(txn->dbs[dbi].md_flags & MDB_DUPSORT))
		return dl_txn_err(txn, dl_range(txn, dbi, key_low, key_high, flags, out));
	/* DUPSORT: distinct keys, walked one by one (as DLMDB does). */
	MDB_cmp_func *cmp = txn->env->dbxs[dbi].cmp;
	*out = 0;
	if (txn->dbs[dbi].md_root == P_INVALID)
		return 0;
	if (key_low && key_high) {
		int c = cmp(key_low, key_high);
		if (c > 0 || (c == 0 && (flags & DL_COUNT_FLAGS) != DL_COUNT_FLAGS))
			return 0;
	}
	MDB_cursor *mc;
	MDB_val k, d;
	uint64_t n = 0;
	if ((rc = mdb_cursor_open(txn, dbi, &mc)))
		return rc;
	if (key_low) {
		k = *key_low;
		rc = mdb_cursor_get(mc, &k, &d, MDB_SET_RANGE);
		if (!rc && !(flags & MDB_COUNT_LOWER_INCL) && !cmp(&k, key_low))
			rc = mdb_cursor_get(mc, &k, &d, MDB_NEXT_NODUP);
	} else {
		rc = mdb_cursor_get(mc, &k, &d, MDB_FIRST);
	}
	while (!rc) {
		if (key_high) {
			int c = cmp(&k, key_high);
			if (c > 0 || (c == 0 && !(flags & MDB_COUNT_UPPER_INCL)))
				break;
		}
		n++;
		rc = mdb_cursor_get(mc, &k, &d, MDB_NEXT_NODUP);
	}
	mdb_cursor_close(mc);
	if (rc && rc != MDB_NOTFOUND)
		return rc;
	*out = n;
	return 0;
}

/* Descend a counted tree to the entry of rank r; mc ends on its leaf. */
int dl_rank_descend(MDB_cursor *mc, uint64_t r, uint64_t *left)
{
	MDB_txn *txn = mc->txn;
	MDB_env *env = txn->env;
	MDB_page *mp;
	int rc;
	if ((rc = dl_check_intr(txn)))
		return rc;
	if ((rc = dl_page_get(txn, mc->db->md_root, &mp)))
		return rc;
	mc->top = 0;
	mc->pg[0] = mp;
	for (;;) {
		if ((rc = dl_page_check(env, mp)))
			return rc;
		unsigned n = NUMKEYS(mp), i;
		if (!n)
			return MDB_CORRUPTED;
		if (IS_LEAF(mp)) {
			uint64_t c = 0;
			if ((rc = dl_leaf2_check(mc, mp)))
				return rc;
			for (i = 0; i < n; i++) {
				if ((rc = dl_contrib(env, mp, i, &c)))
					return rc;
				if (r < c)
					break;
				r -= c;
			}
			if (i == n)	/* the parent's count promised more */
				return MDB_CORRUPTED;
			mc->ki[mc->top] = (indx_t)i;
			*left = r;
			return 0;
		}
		if (!IS_COUNTED(mp))
			return MDB_INCOMPATIBLE;
		for (i = 0; i < n; i++) {
			uint64_t c;
			if ((rc = dl_bcount(env, mp, i, &c)))
				return rc;
			if (r < c)
				break;
			r -= c;
		}
		if (i == n)
			return MDB_CORRUPTED;	/* counts disagree with md_entries */
		mc->ki[mc->top] = (indx_t)i;
		MDB_node *nd = NODEPTR(mp, i);
		if ((rc = dl_node_check(env, mp, nd, 0)))
			return rc;
		if (mc->top + 1 >= DL_MAXDEPTH)
			return MDB_CURSOR_FULL;
		if ((rc = dl_page_get_ref(txn, nd, NODEPGNO(nd), &mp)))
			return rc;
		mc->pg[++mc->top] = mp;
	}
}

int mdb_cursor_get_rank(MDB_cursor *mc, uint64_t rank, MDB_val *key, MDB_val *data,
	unsigned flags)
{
	int rc;
	if (!mc || flags)
		return EINVAL;
	MDB_txn *txn = mc->txn;
	if ((txn->dbflags[mc->dbi] & DB_STALE) && (rc = dl_db_load(txn, mc->dbi)))
		return rc;
	if (!(mc->db->md_flags & MDB_COUNTED))
		return MDB_INCOMPATIBLE;
	if ((txn->flags & (TXN_ERROR | TXN_FINISHED)) || txn->child)
		return MDB_BAD_TXN;
	if ((rc = dl_count_fix(txn, mc->dbi)))
		return dl_txn_err(txn, rc);
	if (mc->db->md_root == P_INVALID || rank >= mc->db->md_entries)
		return MDB_NOTFOUND;
	MDB_cursor tmp = *mc;
	uint64_t left;
	if ((rc = dl_rank_descend(&tmp, rank, &left)))
		return dl_txn_err(txn, rc);
	/* Commit the position, then pick the duplicate by its index. */
	memcpy(mc->pg, tmp.pg, sizeof(mc->pg));
	memcpy(mc->ki, tmp.ki, sizeof(mc->ki));
	mc->top = tmp.top;
	mc->flags &= ~C_RESEEK;
	dl_pos_land_fresh(mc);
	if (mc->db->md_flags & MDB_DUPSORT) {
		if ((rc = dl_dup_rank(mc, left)))
			return dl_txn_err(txn, rc);
		return mdb_cursor_get(mc, key, data, MDB_GET_CURRENT);
	}
	return mdb_cursor_get(mc, key, data, MDB_GET_CURRENT);
}

int mdb_get_rank(MDB_txn *txn, MDB_dbi dbi, uint64_t rank, MDB_val *key, MDB_val *data)
{
	MDB_cursor *mc;
	int rc;
	if (!txn)
		return EINVAL;
	if ((rc = dl_dbi_check(txn, dbi, 1)))
		return rc;
	if ((txn->flags & (TXN_ERROR | TXN_FINISHED)) || txn->child)
		return MDB_BAD_TXN;
	/* A cursor of the txn (freed with it) keeps returned duplicates valid. */
	if ((rc = mdb_cursor_open(txn, dbi, &mc)))
		return rc;
	rc = mdb_cursor_get_rank(mc, rank, key, data, 0);
	if (!rc) {
		/* A prefix-compressed key (or item) is decoded into the cursor,
		 * which goes away: keep a copy in the txn, valid until the next
		 * mdb_get_rank (dlmdb-extensions §7). */
		MDB_val *v[2] = { key, data };
		for (int i = 0; i < 2; i++) {
			const char *p = v[i] ? v[i]->mv_data : NULL;
			if (!p || v[i]->mv_size > DL_MAXKEY + 1)
				continue;
			if ((p >= (const char *)mc && p < (const char *)(mc + 1)) ||
			    dl_dup_owns(mc, p)) {
				if (!txn->rankbuf &&
				    !(txn->rankbuf = malloc(2 * (DL_MAXKEY + 1)))) {
					rc = ENOMEM;
					break;
				}
				unsigned char *dst = txn->rankbuf + i * (DL_MAXKEY + 1);
				memmove(dst, p, v[i]->mv_size);
				v[i]->mv_data = dst;
			}
		}
	}
	mdb_cursor_close(mc);
	return rc;
}

static int dl_key_rank(MDB_txn *txn, MDB_dbi dbi, const MDB_val *key, const MDB_val *data,
	uint64_t *rank)
{
	MDB_cursor *mc;
	MDB_val k = *key, d;
	uint64_t before;
	int rc;
	if ((rc = dl_counted_db(txn, dbi)))
		return rc;
	if ((rc = mdb_cursor_open(txn, dbi, &mc)))
		return rc;
	int dup = (txn->dbs[dbi].md_flags & MDB_DUPSORT) != 0;
	if (dup && data) {
		d = *data;
		rc = mdb_cursor_get(mc, &k, &d, MDB_GET_BOTH);
	} else {
		rc = mdb_cursor_get(mc, &k, &d, MDB_SET);
		if (!rc && !dup && data && (d.mv_size != data->mv_size ||
		    memcmp(d.mv_data, data->mv_data, d.mv_size)))
			rc = MDB_NOTFOUND;
	}
	uint64_t within = 0;
	if (!rc && dup && data)
		rc = dl_dup_index(mc, &within);
	mdb_cursor_close(mc);
	if (rc)
		return rc;
	if ((rc = dl_before(txn, dbi, key, 0, &before)))
		return dl_txn_err(txn, rc);
	*rank = before + within;
	return 0;
}

int mdb_cursor_key_rank(MDB_cursor *mc, const MDB_val *key, const MDB_val *data,
	unsigned flags, uint64_t *rank)
{
	if (!mc || !key || !rank || flags)
		return EINVAL;
	return dl_key_rank(mc->txn, mc->dbi, key, data, rank);
}

int mdb_get_key_rank(MDB_txn *txn, MDB_dbi dbi, const MDB_val *key,
	const MDB_val *data, uint64_t *rank)
{
	if (!txn || !key || !rank)
		return EINVAL;
	return dl_key_rank(txn, dbi, key, data, rank);
}
