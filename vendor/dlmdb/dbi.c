/*
 * dbi.c - database handles: named databases stored as F_SUBDATA records in
 * the main DB (format doc §11), per-handle comparators, stat, drop.
 *
 * The per-DB comparators and flags live in one place, env->dbxs[dbi]; a
 * transaction holds its own copy of each DB record in txn->dbs[dbi].
 */
#include "internal.h"

/* Validate a handle for txn; adopts handles opened after txn began. */
int dl_dbi_check(MDB_txn *txn, MDB_dbi dbi, int user)
{
	MDB_env *env = txn->env;
	DL_ASSERT(txn->numdbs >= DL_CORE_DBS && txn->numdbs <= env->numdbs);
	if (dbi >= env->maxdbs)
		return EINVAL;
	if (user && dbi == DL_FREE_DBI)
		return EINVAL;
	if (dbi < txn->numdbs) {
		unsigned char f = txn->dbflags[dbi];
		if (f & DB_VALID) {
			if (dbi >= DL_CORE_DBS && txn->dbseq[dbi] != env->dbxs[dbi].seq)
				return MDB_BAD_DBI;
			return 0;
		}
		if (f & DB_DELETED)
			return EINVAL;
	}
	if (dbi < env->numdbs && env->dbxs[dbi].valid) {
		dl_txn_dbs_grow(txn, dbi + 1);
		txn->dbflags[dbi] = DB_VALID | DB_USRVALID | DB_STALE;
		txn->dbseq[dbi] = env->dbxs[dbi].seq;
		return 0;
	}
	return EINVAL;
}

static int dl_flags_usable(MDB_env *env, unsigned f)
{
	if (f & ~DL_PERSISTENT_FLAGS)
		return 0;
	if (!env->pad && (f & (MDB_COUNTED | MDB_PREFIX_COMPRESSION)))
		return 0;
	return 1;
}

/* Find the record of a named DB in the main DB.  *rec receives it. */
static int dl_find_record(MDB_txn *txn, const char *name, size_t len, MDB_db *rec)
{
	MDB_cursor mc;
	MDB_val key = { len, (void *)name }, data;
	int rc, exact;
	dl_cursor_init(&mc, txn, DL_MAIN_DBI);
	if ((rc = dl_search(&mc, &key, DL_PS_KEY)))
		return rc;
	MDB_node *node = dl_leaf_search(&mc, &key, &exact);
	if (!node || !exact)
		return MDB_NOTFOUND;
	if ((node->mn_flags & (F_SUBDATA | F_DUPDATA)) != F_SUBDATA)
		return MDB_INCOMPATIBLE;
	if ((rc = dl_node_read(&mc, node, &data)))
		return rc;
	if (data.mv_size != sizeof(MDB_db))
		return MDB_INCOMPATIBLE;
	memcpy(rec, data.mv_data, sizeof(MDB_db));
	/* Records reach the main DB only at commit (dl_dbs_flush), so every
	 * record read here is the snapshot's, or one created empty in this
	 * txn: its root is a page of the snapshot, below its page count and
	 * not one this txn holds (reused: free in the snapshot). */
	if (rec->md_root != P_INVALID && (rec->md_root < 2 || rec->md_root >= txn->snap_pages ||
	    (!(txn->flags & TXN_RDONLY) && dl_txn_holds(txn, rec->md_root))))
		return MDB_CORRUPTED;
	return 0;
}

/* Load a named DB's record into the txn (lazily, on first use). */
int dl_db_load(MDB_txn *txn, MDB_dbi dbi)
{
	MDB_env *env = txn->env;
	dl_dbx *x = &env->dbxs[dbi];
	MDB_db rec;
	int rc;
	if (!x->valid || !x->name)
		return MDB_BAD_DBI;
	rc = dl_find_record(txn, x->name, x->namelen, &rec);
	if (rc == MDB_NOTFOUND)
		return MDB_BAD_DBI;
	if (rc)
		return rc;
	if (rec.md_flags != x->flags)
		return MDB_INCOMPATIBLE;
	txn->dbs[dbi] = rec;
	txn->dbflags[dbi] &= ~DB_STALE;
	if (!dl_flags_usable(env, rec.md_flags))
		txn->dbflags[dbi] |= DB_INCOMPAT;
	return 0;
}

/* mdb_dbi_open of the main DB (name NULL): flags not yet set are added
 * where that is safe (a write txn, an empty DB for COUNTED/PREFIX). */
static int dl_dbi_open_main(MDB_txn *txn, unsigned pflags, MDB_dbi *dbi)
{
	MDB_env *env = txn->env;
	MDB_db *m = &txn->dbs[DL_MAIN_DBI];
	unsigned add = pflags & ~m->md_flags;
	if (add) {
		if (!env->pad && (add & (MDB_COUNTED | MDB_PREFIX_COMPRESSION)))
			return MDB_INCOMPATIBLE;
		/* Adding COUNTED or PREFIX to a populated DB would misread the
		 * existing pages: refuse (safe deviation from DLMDB). */
		if ((add & (MDB_COUNTED | MDB_PREFIX_COMPRESSION)) && m->md_root != P_INVALID)
			return MDB_INCOMPATIBLE;
		if (!(txn->flags & TXN_RDONLY)) {
			m->md_flags |= (uint16_t)add;
			/* The open cursors on it (all on the txn's list in a
			 * write txn, a parent's included while a child runs)
			 * leave the plain scan step (dl_cursor_sync_dupsort). */
			if (add & MDB_DUPSORT)
				for (MDB_cursor *c = txn->cursors[DL_MAIN_DBI]; c; c = c->next)
					c->flags |= C_DUPSORT;
			txn->flags |= TXN_DIRTY;
			dl_dbx *x = &env->dbxs[DL_MAIN_DBI];
			x->flags = m->md_flags;
			x->cmp = dl_default_cmp(x->flags);
			x->dcmp = dl_default_dcmp(x->flags);
			if (!dl_flags_usable(env, m->md_flags))
				txn->dbflags[DL_MAIN_DBI] |= DB_INCOMPAT;
		}
	}
	*dbi = DL_MAIN_DBI;
	return 0;
}

/*
 * Look name up among the env's handles.  *open: it is open (and usable in
 * txn) as *dbi.  Otherwise *slot is where a new handle goes: a free slot, or
 * (*reuse) the handle of the same name dropped earlier in this txn.
 */
static int dl_dbi_find_slot(MDB_txn *txn, const char *name, size_t len, MDB_dbi *dbi,
	int *open, MDB_dbi *slot, int *reuse)
{
	MDB_env *env = txn->env;
	int rc;
	*open = 0;
	*slot = 0;
	*reuse = 0;
	for (MDB_dbi i = DL_CORE_DBS; i < env->numdbs; i++) {
		dl_dbx *x = &env->dbxs[i];
		if (!x->valid) {
			if (!*slot)
				*slot = i;
			continue;
		}
		if (x->namelen == len && !memcmp(x->name, name, len)) {
			if (i < txn->numdbs && (txn->dbflags[i] & DB_DELETED)) {
				/* Dropped with del=1 earlier in this txn: LMDB frees
				 * the handle at once, so opening the name again gives
				 * a fresh handle (here: the same slot, reset by
				 * dl_dbi_install). */
				*slot = i;
				*reuse = 1;
				return 0;
			}
			if ((rc = dl_dbi_check(txn, i, 1)))
				return rc;
			*dbi = i;
			*open = 1;
			return 0;
		}
	}
	if (!*slot) {
		if (env->numdbs >= env->maxdbs)
			return MDB_DBS_FULL;
		*slot = env->numdbs;
	}
	return 0;
}

/* The record of named DB name in the main DB, created (empty, with pflags)
 * when absent and flags has MDB_CREATE; *created tells which. */
static int dl_dbi_record(MDB_txn *txn, const char *name, size_t len, unsigned flags,
	unsigned pflags, MDB_db *rec, int *created)
{
	int rc;
	*created = 0;
	if (len > DL_MAXKEY) {
		if (!(flags & MDB_CREATE))
			return MDB_NOTFOUND;
		return MDB_BAD_VALSIZE;
	}
	rc = dl_find_record(txn, name, len, rec);
	if (rc == MDB_NOTFOUND) {
		if (!(flags & MDB_CREATE))
			return MDB_NOTFOUND;
		if (txn->flags & TXN_RDONLY)
			return EACCES;
		if (!dl_flags_usable(txn->env, pflags))
			return MDB_INCOMPATIBLE;
		memset(rec, 0, sizeof(*rec));
		rec->md_flags = (uint16_t)pflags;
		rec->md_root = P_INVALID;
		MDB_cursor mc;
		MDB_val key = { len, (void *)name }, data = { sizeof(*rec), rec };
		dl_cursor_init(&mc, txn, DL_MAIN_DBI);
		/* The put counts the new record in the main DB's entries. */
		rc = dl_cursor_put0(&mc, &key, &data, DL_PUT_SUBDATA | MDB_NOOVERWRITE);
		if (rc)
			return dl_txn_err(txn, rc);
		*created = 1;
	} else if (rc) {
		return rc == MDB_INCOMPATIBLE ? rc : dl_txn_err(txn, rc);
	}
	if (rec->md_flags & ~DL_PERSISTENT_FLAGS)
		return MDB_INCOMPATIBLE;
	return 0;
}

/* Set handle slot up for named DB name with record rec, in the env and in
 * txn (where it is new). */
static int dl_dbi_install(MDB_txn *txn, MDB_dbi slot, int reuse, const char *name, size_t len,
	const MDB_db *rec, int created)
{
	MDB_env *env = txn->env;
	char *copy = malloc(len + 1);
	if (!copy)
		return ENOMEM;
	memcpy(copy, name, len + 1);
	dl_dbx *x = &env->dbxs[slot];
	if (reuse)
		free(x->name);
	x->name = copy;
	x->namelen = len;
	x->flags = rec->md_flags;
	x->cmp = dl_default_cmp(rec->md_flags);
	x->dcmp = dl_default_dcmp(rec->md_flags);
	x->rel = NULL;
	x->relctx = NULL;
	x->seq++;
	x->valid = 1;
	env->dbgen++;
	if (slot >= env->numdbs)
		env->numdbs = slot + 1;
	dl_txn_dbs_grow(txn, slot + 1);
	txn->dbs[slot] = *rec;
	txn->dbseq[slot] = x->seq;
	if (!reuse)
		txn->cursors[slot] = NULL;	/* a reused slot keeps its (unpositioned) cursors */
	txn->dbflags[slot] = DB_VALID | DB_USRVALID | DB_NEW | (created ? DB_DIRTY : 0);
	txn->flags |= TXN_NEWDBI;
	if (!dl_flags_usable(env, rec->md_flags))
		txn->dbflags[slot] |= DB_INCOMPAT;
	return 0;
}

int mdb_dbi_open(MDB_txn *txn, const char *name, unsigned flags, MDB_dbi *dbi)
{
	MDB_env *env;
	int rc;
	const unsigned valid = DL_PERSISTENT_FLAGS | MDB_CREATE;

	if (!txn || !dbi || (flags & ~valid))
		return EINVAL;
	if ((txn->flags & (TXN_ERROR | TXN_FINISHED)) || txn->child)
		return MDB_BAD_TXN;
	env = txn->env;
	if ((rc = dl_check_intr(txn)))
		return rc;
	unsigned pflags = flags & DL_PERSISTENT_FLAGS;

	if (!name)
		return dl_dbi_open_main(txn, pflags, dbi);
	if (env->maxdbs <= DL_CORE_DBS)
		return MDB_DBS_FULL;
	size_t len = strlen(name);
	if (!len)
		return MDB_BAD_VALSIZE;
	MDB_dbi slot;
	int open, reuse;
	if ((rc = dl_dbi_find_slot(txn, name, len, dbi, &open, &slot, &reuse)) || open)
		return rc;
	unsigned mflags = txn->dbs[DL_MAIN_DBI].md_flags;
	if (mflags & (MDB_DUPSORT | MDB_INTEGERKEY))
		return (flags & MDB_CREATE) ? MDB_INCOMPATIBLE : MDB_NOTFOUND;
	if (txn->dbflags[DL_MAIN_DBI] & DB_INCOMPAT)
		return MDB_INCOMPATIBLE;
	MDB_db rec;
	int created;
	if ((rc = dl_dbi_record(txn, name, len, flags, pflags, &rec, &created)))
		return rc;
	if ((rc = dl_dbi_install(txn, slot, reuse, name, len, &rec, created)))
		return rc;
	*dbi = slot;
	return 0;
}

static void dl_dbi_free_slot(MDB_env *env, MDB_dbi dbi)
{
	dl_dbx *x = &env->dbxs[dbi];
	free(x->name);
	x->name = NULL;
	x->namelen = 0;
	x->valid = 0;
	x->seq++;
	env->dbgen++;
}

/* Txn end: handles opened by an aborted txn go away; deletions of a
 * committed one take effect. */
void dl_dbi_txn_end(MDB_txn *txn, int committed)
{
	MDB_env *env = txn->env;
	for (unsigned i = DL_CORE_DBS; i < txn->numdbs && i < env->maxdbs; i++) {
		unsigned char f = txn->dbflags[i];
		if (!committed && (f & DB_NEW) && env->dbxs[i].valid &&
		    txn->dbseq[i] == env->dbxs[i].seq)
			dl_dbi_free_slot(env, i);
		else if (committed && (f & DB_DELETED) && env->dbxs[i].valid &&
		    txn->dbseq[i] == env->dbxs[i].seq)
			dl_dbi_free_slot(env, i);
		txn->dbflags[i] = 0;
	}
}

/* Commit step 1: store the records of changed named DBs in the main DB. */
int dl_dbs_flush(MDB_txn *txn)
{
	MDB_env *env = txn->env;
	int rc;
	for (unsigned i = DL_CORE_DBS; i < txn->numdbs && i < env->maxdbs; i++) {
		if ((txn->dbflags[i] & (DB_DIRTY | DB_DELETED | DB_VALID)) != (DB_DIRTY | DB_VALID))
			continue;
		dl_dbx *x = &env->dbxs[i];
		if (!x->valid || txn->dbseq[i] != x->seq)
			continue;
		MDB_cursor mc;
		MDB_val key = { x->namelen, x->name }, data = { sizeof(MDB_db), &txn->dbs[i] };
		dl_cursor_init(&mc, txn, DL_MAIN_DBI);
		if ((rc = dl_cursor_put0(&mc, &key, &data, DL_PUT_SUBDATA)))
			return rc;
		txn->dbflags[i] &= ~DB_DIRTY;
	}
	return 0;
}

void mdb_dbi_close(MDB_env *env, MDB_dbi dbi)
{
	if (!env || dbi < DL_CORE_DBS || dbi >= env->numdbs)
		return;
	if (!env->dbxs[dbi].valid)
		return;
	dl_dbi_free_slot(env, dbi);
}

int mdb_stat(MDB_txn *txn, MDB_dbi dbi, MDB_stat *st)
{
	int rc;
	if (!txn || !st)
		return EINVAL;
	if ((rc = dl_dbi_check(txn, dbi, 0)))
		return rc;
	if (txn->flags & (TXN_ERROR | TXN_FINISHED))
		return MDB_BAD_TXN;
	if ((txn->dbflags[dbi] & DB_STALE) && (rc = dl_db_load(txn, dbi)))
		return rc;
	MDB_db *db = &txn->dbs[dbi];
	st->ms_psize = txn->env->psize;
	st->ms_depth = db->md_depth;
	st->ms_branch_pages = db->md_branch_pages;
	st->ms_leaf_pages = db->md_leaf_pages;
	st->ms_overflow_pages = db->md_overflow_pages;
	st->ms_entries = db->md_entries;
	return 0;
}

int mdb_dbi_flags(MDB_txn *txn, MDB_dbi dbi, unsigned *flags)
{
	int rc;
	if (!txn || !flags)
		return EINVAL;
	if ((rc = dl_dbi_check(txn, dbi, 1)))
		return rc;
	if ((txn->dbflags[dbi] & DB_STALE) && (rc = dl_db_load(txn, dbi)))
		return rc;
	*flags = txn->dbs[dbi].md_flags & DL_PERSISTENT_FLAGS;
	return 0;
}

int mdb_drop(MDB_txn *txn, MDB_dbi dbi, int del)
{
	MDB_env *env;
	MDB_cursor mc;
	int rc;
	if (!txn)
		return EINVAL;
	if (del != 0 && del != 1)
		return EINVAL;
	if ((rc = dl_dbi_check(txn, dbi, 1)))
		return rc;
	if (txn->flags & TXN_RDONLY)
		return EACCES;
	if (txn->flags & (TXN_ERROR | TXN_FINISHED))
		return MDB_BAD_TXN;
	env = txn->env;
	if ((txn->dbflags[dbi] & DB_STALE) && (rc = dl_db_load(txn, dbi)))
		return rc;
	if (txn->dbflags[dbi] & DB_INCOMPAT)
		return MDB_INCOMPATIBLE;
	if (dbi == DL_MAIN_DBI && !(txn->dbs[dbi].md_flags & (MDB_DUPSORT | MDB_INTEGERKEY))) {
		/* Emptying the main DB deletes the named DBs too (DLMDB v2), so
		 * no other handle may be open. */
		for (MDB_dbi i = DL_CORE_DBS; i < env->numdbs; i++)
			if (env->dbxs[i].valid &&
			    !(i < txn->numdbs && (txn->dbflags[i] & DB_DELETED)))
				return MDB_DBIS_BUSY;
	}
	dl_cursor_init(&mc, txn, dbi);
	if ((rc = dl_drop_tree(&mc)))
		return dl_txn_err(txn, rc);
	dl_cursors_unposition(txn, dbi, NULL);
	if (del && dbi >= DL_CORE_DBS) {
		dl_dbx *x = &env->dbxs[dbi];
		MDB_val key = { x->namelen, x->name };
		int exact;
		dl_cursor_init(&mc, txn, DL_MAIN_DBI);
		rc = dl_search(&mc, &key, DL_PS_KEY);
		if (rc == 0 && dl_leaf_search(&mc, &key, &exact) && exact)
			rc = dl_cursor_del0(&mc);
		else if (rc == 0 || rc == MDB_NOTFOUND)
			rc = 0;
		if (rc)
			return dl_txn_err(txn, rc);
		txn->dbflags[dbi] = (unsigned char)((txn->dbflags[dbi] | DB_DELETED) &
			~(DB_DIRTY | DB_VALID));
		if (txn->dbflags[dbi] & DB_NEW) {
			/* Created and deleted in this txn: nothing to keep. */
		}
	}
	txn->flags |= TXN_DIRTY;
	return 0;
}

int mdb_set_compare(MDB_txn *txn, MDB_dbi dbi, MDB_cmp_func *cmp)
{
	if (!txn || dl_dbi_check(txn, dbi, 1))
		return EINVAL;
	txn->env->dbxs[dbi].cmp = cmp ? cmp : dl_default_cmp(txn->env->dbxs[dbi].flags);
	return 0;
}

int mdb_set_dupsort(MDB_txn *txn, MDB_dbi dbi, MDB_cmp_func *cmp)
{
	if (!txn || dl_dbi_check(txn, dbi, 1))
		return EINVAL;
	txn->env->dbxs[dbi].dcmp = cmp ? cmp : dl_default_dcmp(txn->env->dbxs[dbi].flags);
	return 0;
}

int mdb_set_relfunc(MDB_txn *txn, MDB_dbi dbi, MDB_rel_func *rel)
{
	if (!txn || dl_dbi_check(txn, dbi, 1))
		return EINVAL;
	txn->env->dbxs[dbi].rel = rel;
	return 0;
}

int mdb_set_relctx(MDB_txn *txn, MDB_dbi dbi, void *ctx)
{
	if (!txn || dl_dbi_check(txn, dbi, 1))
		return EINVAL;
	txn->env->dbxs[dbi].relctx = ctx;
	return 0;
}

int mdb_cmp(MDB_txn *txn, MDB_dbi dbi, const MDB_val *a, const MDB_val *b)
{
	return txn->env->dbxs[dbi].cmp(a, b);
}

int mdb_dcmp(MDB_txn *txn, MDB_dbi dbi, const MDB_val *a, const MDB_val *b)
{
	MDB_cmp_func *f = txn->env->dbxs[dbi].dcmp;
	if (!f)
		return EINVAL;
	/* INTEGERDUP with 8-byte items compares as 8-byte integers. */
	return f(a, b);
}
