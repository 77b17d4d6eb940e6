/*
 * meta.c - the two meta pages: validation at open, creation of a new file,
 * picking the current snapshot, and the commit-point write.
 */
#include "internal.h"

#include <sys/stat.h>
#include <unistd.h>

#define META_BYTES	(PAGEHDRSZ + sizeof(MDB_meta))	/* 152 */

/*
 * Check one meta page image (its first 152 bytes).  The DLMDB layouts put the
 * magic at byte 16, right after a 16-byte page header; LMDB's mdb.master3
 * line uses a 24-byte header, so a "version 2" file with the magic elsewhere
 * is not ours and must not be read as DLMDB.
 */
/*
 * An LMDB meta page with a 24-byte page header (page number, 8-byte txnid,
 * then pad, flags, lower, upper): flags at byte 18, magic at 24, version at
 * 28.  LMDB 1.x stores (data format 3) and the mdb.master3 line use it.
 * Returns the data version found there, or 0 if none.  The caller answers
 * MDB_VERSION_MISMATCH for data format 3 (another version of LMDB's format,
 * never a misread); a version 2 meta in this layout (mdb.master3) stays
 * MDB_INVALID, as dlmdb-extensions.md N.2 has it.
 */
static uint32_t dl_meta_version_wide(const unsigned char *raw)
{
	uint16_t pflags;
	uint32_t magic, version;
	memcpy(&pflags, raw + 18, 2);
	memcpy(&magic, raw + 24, 4);
	memcpy(&version, raw + 28, 4);
	return (pflags & P_META) && magic == DL_MAGIC ? version : 0;
}

static int dl_meta_check(const unsigned char *raw)
{
	uint16_t pflags;
	MDB_meta m;

	memcpy(&pflags, raw + 10, 2);
	memcpy(&m, raw + PAGEHDRSZ, sizeof(m));
	if (!(pflags & P_META) || m.mm_magic != DL_MAGIC)
		return dl_meta_version_wide(raw) == 3 ? MDB_VERSION_MISMATCH : MDB_INVALID;
	if (m.mm_version != DL_VERSION_LMDB && m.mm_version != DL_VERSION_DLMDB)
		return MDB_VERSION_MISMATCH;
	return 0;
}


static int dl_psize_ok(uint32_t ps)
{
	return ps >= 512 && ps <= 32768 && (ps & (ps - 1)) == 0;
}

/* Structural sanity of the meta we are about to use. */
static int dl_meta_sane(const MDB_meta *m, uint64_t filepages)
{
	if (m->mm_last_pg < 1)
		return MDB_INVALID;
	for (int i = 0; i < DL_CORE_DBS; i++) {
		const MDB_db *db = &m->mm_dbs[i];
		if (db->md_root == P_INVALID) {
			if (db->md_depth)
				return MDB_INVALID;
			continue;
		}
		if (db->md_root < 2 || db->md_root > m->mm_last_pg ||
		    db->md_root >= filepages || !db->md_depth ||
		    db->md_depth > DL_MAXDEPTH)
			return MDB_INVALID;
	}
	return 0;
}

/*
 * One reading of both meta pages into raw0/raw1 and the file's size in
 * *size, taken after the metas: a commit writes its pages before its meta,
 * so a file sized after its newest meta was read covers that meta's pages.
 */
static int dl_meta_read_raw(MDB_env *env, unsigned char *raw0, unsigned char *raw1,
    off_t *size)
{
	struct stat st;
	int rc;

	if ((rc = dl_pread_all(env->fd, raw0, META_BYTES, 0)))
		return rc == ENODATA ? MDB_INVALID : rc;
	if ((rc = dl_meta_check(raw0)))
		return rc;
	uint32_t ps = ((const MDB_meta *)(raw0 + PAGEHDRSZ))->mm_dbs[DL_FREE_DBI].md_pad;
	if (!dl_psize_ok(ps))
		return MDB_INVALID;
	if ((rc = dl_pread_all(env->fd, raw1, META_BYTES, ps)))
		return rc == ENODATA ? MDB_INVALID : rc;
	if (fstat(env->fd, &st) < 0)
		return errno;
	*size = st.st_size;
	return 0;
}

/* Check one reading of the metas (dl_meta_read_raw) and keep them. */
static int dl_meta_accept(MDB_env *env, const unsigned char *raw0, const unsigned char *raw1,
    off_t size, MDB_meta *m0, MDB_meta *m1)
{
	int rc;

	memcpy(m0, raw0 + PAGEHDRSZ, sizeof(*m0));
	uint32_t ps = m0->mm_dbs[DL_FREE_DBI].md_pad;
	if ((uint64_t)size < 2ull * ps)
		return MDB_INVALID;
	if ((rc = dl_meta_check(raw1)))
		return rc;
	memcpy(m1, raw1 + PAGEHDRSZ, sizeof(*m1));
	if (m1->mm_version != m0->mm_version || m1->mm_dbs[DL_FREE_DBI].md_pad != ps)
		return MDB_INVALID;
	const MDB_meta *cur = m1->mm_txnid > m0->mm_txnid ? m1 : m0;
	if ((rc = dl_meta_sane(cur, (uint64_t)size / ps)))
		return rc;
	env->psize = ps;
	env->version = m0->mm_version;
	env->freeflags = cur->mm_dbs[DL_FREE_DBI].md_flags;
	return 0;
}

/* Readings of the metas that fail their checks while the bytes keep
 * changing (another process committing) before the failure is believed. */
#define DL_META_REREADS	100

/*
 * Read and validate both meta pages of an existing file.  *isnew is set for
 * an empty file (the caller then creates the metas).  Another process may
 * be committing: a meta read while it is rewritten can mix old and new
 * fields.  A reading that fails its checks is taken again; the failure
 * stands once two readings in a row are the same bytes and size (a damaged
 * file reads the same every time).
 */
int dl_meta_read_file(MDB_env *env, MDB_meta *m0, MDB_meta *m1, int *isnew)
{
	unsigned char raw[2][2][META_BYTES];
	off_t size[2] = { -1, -1 };
	struct stat st;
	int rc = 0;

	memset(raw, 0, sizeof raw);

	*isnew = 0;
	if (fstat(env->fd, &st) < 0)
		return errno;
	if (st.st_size == 0) {
		*isnew = 1;
		return 0;
	}
	if ((size_t)st.st_size < META_BYTES)
		return MDB_INVALID;
	for (int i = 0; i < DL_META_REREADS; i++) {
		unsigned char (*now)[META_BYTES] = raw[i & 1], (*before)[META_BYTES] = raw[!(i & 1)];
		rc = dl_meta_read_raw(env, now[0], now[1], &size[i & 1]);
		if (!rc)
			rc = dl_meta_accept(env, now[0], now[1], size[i & 1], m0, m1);
		if (rc >= 0)	/* accepted, or the system failed: no rereading */
			return rc;
		if (i && size[0] == size[1] && !memcmp(now, before, sizeof raw[0]))
			return rc;
	}
	return rc;
}

/* Write the two meta pages of a brand-new data file (format doc §10.4). */
int dl_meta_create(MDB_env *env)
{
	size_t ps = env->psize;
	unsigned char *buf = calloc(2, ps);
	if (!buf)
		return ENOMEM;
	for (int i = 0; i < 2; i++) {
		MDB_page *p = (MDB_page *)(buf + i * ps);
		MDB_meta *m = METADATA(p);
		p->mp_pgno = (pgno_t)i;
		p->mp_flags = P_META;
		m->mm_magic = DL_MAGIC;
		m->mm_version = env->version;
		m->mm_mapsize = env->mapsize;
		m->mm_dbs[DL_FREE_DBI].md_pad = (uint32_t)ps;
		m->mm_dbs[DL_FREE_DBI].md_flags = env->freeflags;
		m->mm_dbs[DL_FREE_DBI].md_root = P_INVALID;
		m->mm_dbs[DL_MAIN_DBI].md_root = P_INVALID;
		m->mm_last_pg = 1;
		m->mm_txnid = 0;
	}
	int rc = dl_pwrite_all(env->fd, buf, 2 * ps, 0);
	free(buf);
	return rc;
}

/*
 * Whether meta m sits in the page its txn id's commit wrote: page txnid & 1
 * (a new file's two metas both hold txn id 0).  A commit writes the page
 * its snapshot is not in; a newest meta in the other page (a changed txn
 * id) would have the next commit overwrite the only meta holding the
 * snapshot, and carry the stale meta's fields (its map size) forward.
 */
int dl_meta_in_its_page(const MDB_env *env, const MDB_meta *m)
{
	unsigned page = (const char *)m >= env->map + env->psize;
	return m->mm_txnid == 0 || (m->mm_txnid & 1) == page;
}

/* The newest committed meta (larger txnid; ties go to page 0). */
MDB_meta *dl_meta_current(MDB_env *env)
{
	MDB_meta *m0 = METADATA((MDB_page *)env->map);
	MDB_meta *m1 = METADATA((MDB_page *)(env->map + env->psize));
	if (env->lock) {
		txnid_t t = __atomic_load_n(env->lk_txnid, __ATOMIC_ACQUIRE);
		MDB_meta *m = (t & 1) ? m1 : m0;
		if (m->mm_txnid == t)
			return m;
	}
	return m1->mm_txnid > m0->mm_txnid ? m1 : m0;
}

/*
 * Commit point: rewrite bytes 32..151 of meta page (txnid & 1).  Goes through
 * the O_DSYNC descriptor unless the txn's sync mode says otherwise.
 */
int dl_meta_write(MDB_txn *txn)
{
	MDB_env *env = txn->env;
	unsigned char buf[META_WRITE_LEN];
	MDB_meta *other = METADATA((MDB_page *)(env->map + ((txn->txnid & 1) ? 0 : env->psize)));
	uint64_t mapsize = env->mapsize > other->mm_mapsize ? env->mapsize : other->mm_mapsize;
	pgno_t last = txn->next_pgno - 1;
	txnid_t id = txn->txnid;

	memcpy(buf, &mapsize, 8);
	memcpy(buf + 8, &txn->dbs[DL_FREE_DBI], sizeof(MDB_db));
	memcpy(buf + 56, &txn->dbs[DL_MAIN_DBI], sizeof(MDB_db));
	memcpy(buf + 104, &last, 8);
	memcpy(buf + 112, &id, 8);
	if (env->flags & MDB_INMEMORY) {
		memcpy(env->map + (txn->txnid & 1) * env->psize + META_WRITE_OFF, buf, sizeof(buf));
		return 0;
	}
	int nosync = (env->flags & (MDB_NOSYNC | MDB_NOMETASYNC)) ||
		(txn->flags & (TXN_NOSYNC | TXN_NOMETASYNC));
	int fd = (nosync || env->mfd < 0) ? env->fd : env->mfd;
	off_t off = (off_t)((txn->txnid & 1) * env->psize + META_WRITE_OFF);
	return dl_pwrite_all(fd, buf, sizeof(buf), off);
}
