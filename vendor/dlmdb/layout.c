/*
 * layout.c - node layout of data-version-1 files, decided from evidence.
 *
 * Version 1 is written both by stock LMDB (leaf data right after the key)
 * and by DLMDB before data version 2 (one pad byte after an odd-length
 * key), and the meta page does not say which.  Reading a file in the wrong
 * layout returns wrong values, the worst failure a store can have, so at
 * open a bounded sample of pages is examined for evidence:
 *
 *  - DLMDB-only database flags (MDB_COUNTED, MDB_PREFIX_COMPRESSION) in the
 *    main DB's record or in a catalog record read where both layouts put
 *    it: this engine refuses those flags in stock layout, and stock LMDB
 *    does not know them, so only a padded file carries them;
 *  - branch pages flagged P_COUNTED (a page flag stock LMDB never sets);
 *  - leaves that only one layout parses: the nodes of a leaf tile the area
 *    from `upper` to the end of the page exactly, each node taking
 *    EVEN(8 + key + data) bytes (stock) or EVEN(8 + EVEN(key) + data)
 *    (padded), with data = 8 for an overflow reference; and the data of a
 *    node read where the layout puts it makes sense (overflow page number,
 *    named-DB record, duplicate sub-page header).  Only odd-length keys
 *    tell the two apart.
 *
 * Sampled: the main DB's root and pages below it, and the roots (and pages
 * below) of the named DBs it lists; at most DL_LAYOUT_PAGES pages.
 */
#include "internal.h"

#define DL_LAYOUT_PAGES	64

/*
 * Does the data of node nd (odd-length key), read where layout pad puts it,
 * make sense?  Overflow reference: a page of the file; named-DB record:
 * known flags and a root inside the file; duplicate sub-page: its header.
 */
static int dl_data_sane(MDB_env *env, MDB_page *mp, MDB_node *nd, unsigned pad, pgno_t npages)
{
	size_t at = (size_t)((char *)nd - (char *)mp) + NODESZ + nd->mn_ksize + (nd->mn_ksize & pad);
	unsigned char *dp = (unsigned char *)mp + at;
	if (nd->mn_flags & F_BIGDATA) {
		if (at + sizeof(pgno_t) > env->psize)
			return 0;
		pgno_t pg = dl_get64(dp);
		return pg >= 2 && pg < npages;
	}
	size_t d = NODEDSZ(nd);
	if (at + d > env->psize)
		return 0;
	if (nd->mn_flags & F_SUBDATA) {
		MDB_db rec;
		if (d != sizeof(rec))
			return 0;
		memcpy(&rec, dp, sizeof(rec));
		if ((rec.md_flags & ~DL_PERSISTENT_FLAGS) || rec.md_depth > DL_MAXDEPTH)
			return 0;
		if (rec.md_root == P_INVALID)
			return rec.md_depth == 0 && rec.md_entries == 0;
		return rec.md_depth != 0 && rec.md_root >= 2 && rec.md_root < npages;
	}
	if (nd->mn_flags & F_DUPDATA) {
		MDB_page sp;
		if (d < PAGEHDRSZ)
			return 0;
		memcpy(&sp, dp, PAGEHDRSZ);
		unsigned f = sp.mp_flags & ~(unsigned)(P_DIRTY | P_LEAF2);
		return f == (P_LEAF | P_SUBP) && dl_bounds_ok(&sp, d, (sp.mp_flags & P_LEAF2) ? sp.mp_pad : 0);
	}
	return 1;
}

/*
 * Is leaf page mp consistent with pad (0 = stock, 1 = padded)?  Its nodes
 * must tile the page exactly and the data of odd-key nodes make sense.
 */
static int dl_leaf_ok(MDB_env *env, MDB_page *mp, unsigned pad, pgno_t npages)
{
	unsigned n = NUMKEYS(mp), psize = env->psize;
	size_t sum = 0;
	for (unsigned i = 0; i < n; i++) {
		unsigned off = mp->mp_ptrs[i];
		if (off < MP_UPPER(mp) || off + NODESZ > psize)
			return 0;
		MDB_node *nd = (MDB_node *)((char *)mp + off);
		size_t k = nd->mn_ksize;
		size_t d = (nd->mn_flags & F_BIGDATA) ? sizeof(pgno_t) : NODEDSZ(nd);
		size_t sz = EVEN(NODESZ + k + (k & pad) + d);
		if (off + sz > psize)
			return 0;
		if ((k & 1) && !dl_data_sane(env, mp, nd, pad, npages))
			return 0;
		sum += sz;
	}
	return sum == (size_t)(psize - MP_UPPER(mp));
}

typedef struct dl_probe {
	MDB_env	*env;
	pgno_t	npages;		/* pages readable in the file */
	unsigned seen;		/* pages examined */
	unsigned odd;		/* leaves holding an odd-length key */
	unsigned bad[2];	/* leaves breaking the invariant, per pad value */
	unsigned dlflags;	/* DB records carrying DLMDB-only flags */
	unsigned counted;	/* P_COUNTED branch pages */
} dl_probe;

static MDB_page *dl_probe_page(dl_probe *p, pgno_t pg)
{
	if (pg < 2 || pg >= p->npages || p->seen >= DL_LAYOUT_PAGES)
		return NULL;
	MDB_page *mp = (MDB_page *)(p->env->map + pg * p->env->psize);
	if (dl_page_check(p->env, mp))
		return NULL;
	p->seen++;
	if (IS_BRANCH(mp) && IS_COUNTED(mp))
		p->counted++;
	return mp;
}

static void dl_probe_leaf(dl_probe *p, MDB_page *mp)
{
	unsigned n = NUMKEYS(mp), odd = 0;
	for (unsigned i = 0; i < n; i++) {
		unsigned off = mp->mp_ptrs[i];
		if (off + NODESZ > p->env->psize)
			return;
		odd |= ((MDB_node *)((char *)mp + off))->mn_ksize & 1;
	}
	if (!odd)
		return;		/* both layouts read it alike */
	p->odd++;
	p->bad[0] += !dl_leaf_ok(p->env, mp, 0, p->npages);
	p->bad[1] += !dl_leaf_ok(p->env, mp, 1, p->npages);
}

/*
 * Probe the tree page mp (flags f) and, for a branch, a few of its children
 * down to the leaves (the first ones, then spread over the page).
 */
static void dl_probe_tree(dl_probe *p, MDB_page *mp, unsigned f, int catalog, int depth);

static void dl_probe_catalog(dl_probe *p, MDB_page *mp);

static void dl_probe_tree(dl_probe *p, MDB_page *mp, unsigned f, int catalog, int depth)
{
	if (IS_LEAF(mp)) {
		if (!IS_LEAF2(mp) && !(f & MDB_PREFIX_COMPRESSION))
			dl_probe_leaf(p, mp);
		if (catalog && !IS_LEAF2(mp))
			dl_probe_catalog(p, mp);
		return;
	}
	if (!IS_BRANCH(mp) || depth >= 4)
		return;
	unsigned n = NUMKEYS(mp), step = n > 8 ? n / 8 : 1;
	for (unsigned i = 0; i < n && p->seen < DL_LAYOUT_PAGES; i += step) {
		unsigned off = mp->mp_ptrs[i];
		if (off + NODESZ > p->env->psize)
			return;
		MDB_page *c = dl_probe_page(p, NODEPGNO((MDB_node *)((char *)mp + off)));
		if (c)
			dl_probe_tree(p, c, f, catalog, depth + 1);
	}
}

/*
 * Root pages of the named DBs listed on catalog leaf mp.  A record is only
 * read when the node tiles identically in both layouts up to it, i.e. it
 * is read where both layouts put it: the record's own key decides.
 */
static void dl_probe_catalog(dl_probe *p, MDB_page *mp)
{
	unsigned n = NUMKEYS(mp);
	for (unsigned i = 0; i < n && p->seen < DL_LAYOUT_PAGES; i++) {
		unsigned off = mp->mp_ptrs[i];
		if (off + NODESZ > p->env->psize)
			return;
		MDB_node *nd = (MDB_node *)((char *)mp + off);
		if ((nd->mn_flags & (F_SUBDATA | F_DUPDATA)) != F_SUBDATA ||
		    NODEDSZ(nd) != sizeof(MDB_db))
			continue;
		size_t at = off + NODESZ + nd->mn_ksize + (nd->mn_ksize & p->env->pad);
		if (at + sizeof(MDB_db) > p->env->psize)
			continue;
		MDB_db rec;
		memcpy(&rec, (char *)mp + at, sizeof(rec));
		if (rec.md_flags & ~DL_PERSISTENT_FLAGS)
			continue;
		/* An even-length name puts the record at the same place in both
		 * layouts, so its flags are evidence whatever env->pad says. */
		if (!(nd->mn_ksize & 1) && (rec.md_flags & (MDB_COUNTED | MDB_PREFIX_COMPRESSION)))
			p->dlflags++;
		if (rec.md_root == P_INVALID)
			continue;
		MDB_page *r = dl_probe_page(p, rec.md_root);
		if (r)
			dl_probe_tree(p, r, rec.md_flags, 0, 1);
	}
}

/* Sample the snapshot of meta m (env->pad says where catalog records of
 * odd names are read). */
static void dl_probe_run(MDB_env *env, MDB_meta *m, dl_probe *p)
{
	MDB_db *main = &m->mm_dbs[DL_MAIN_DBI];
	memset(p, 0, sizeof(*p));
	p->env = env;
	p->npages = dl_file_pages(env);
	if (p->npages > m->mm_last_pg + 1)
		p->npages = m->mm_last_pg + 1;
	if (main->md_flags & (MDB_COUNTED | MDB_PREFIX_COMPRESSION))
		p->dlflags++;
	if (main->md_root == P_INVALID)
		return;
	int catalog = !(main->md_flags & (MDB_DUPSORT | MDB_INTEGERKEY));
	MDB_page *root = dl_probe_page(p, main->md_root);
	if (root)
		dl_probe_tree(p, root, main->md_flags, catalog, 0);
}

/*
 * Decide the node layout of an existing version-1 file (env->pad holds the
 * caller's choice on entry: 1 when MDB_FORMAT_DLMDB_V1 was given).  told:
 * the caller named a layout (MDB_FORMAT_LMDB or MDB_FORMAT_DLMDB_V1); then
 * evidence can only refuse it (MDB_INCOMPATIBLE), never change it.
 * Untold: evidence of padding wins, then evidence of stock leaves, and a
 * file without evidence either way (no odd-length key anywhere sampled,
 * no DLMDB flags) opens as stock, so stock LMDB keeps reading what this
 * engine writes into it.  Contradicting evidence is MDB_INCOMPATIBLE.
 */
static int dl_layout_decide0(MDB_env *env, MDB_meta *m, int told, unsigned *why)
{
	dl_probe p;
	dl_probe_run(env, m, &p);
	int padded = p.dlflags || p.counted || (p.bad[0] && !p.bad[1]);
	int stock = p.bad[1] && !p.bad[0];
	if (padded && stock)
		return MDB_INCOMPATIBLE;
	if (told) {
		if (env->pad ? stock : padded)
			return MDB_INCOMPATIBLE;
		*why = MDB_LAYOUT_TOLD;
		return 0;
	}
	if (padded) {
		env->pad = 1;
		*why = p.dlflags ? MDB_LAYOUT_DBFLAGS : p.counted ? MDB_LAYOUT_COUNTED :
			MDB_LAYOUT_LEAVES;
		if (!p.dlflags && !p.counted)
			return 0;
		/* Named-DB records under odd names were read at the stock place:
		 * sample again in the layout now known, for the leaves below them. */
		dl_probe_run(env, m, &p);
		return (p.bad[1] && !p.bad[0]) ? MDB_INCOMPATIBLE : 0;
	}
	env->pad = 0;
	*why = stock ? MDB_LAYOUT_LEAVES : MDB_LAYOUT_NO_EVIDENCE;
	return 0;
}

/*
 * The sampled snapshot is pinned in a reader slot while other processes
 * hold the environment (their writers could otherwise reuse its pages
 * under the probe); an exclusive opener samples the newest meta.
 */
int dl_layout_decide(MDB_env *env, int told, unsigned *why)
{
	dl_reader *slot = NULL;
	txnid_t t = 0;
	MDB_meta *m;
	int rc;
	if (env->lock && env->lockjoined) {
		if ((rc = dl_snapshot_pin(env, &slot, &t)))
			return rc;
		m = METADATA((MDB_page *)(env->map + (t & 1) * env->psize));
		if (m->mm_txnid != t)
			m = dl_meta_current(env);
	} else {
		MDB_meta *m0 = METADATA((MDB_page *)env->map);
		MDB_meta *m1 = METADATA((MDB_page *)(env->map + env->psize));
		m = m1->mm_txnid > m0->mm_txnid ? m1 : m0;
	}
	rc = dl_layout_decide0(env, m, told, why);
	dl_snapshot_unpin(slot);
	return rc;
}
