/*
 * env.c - environment handles: create, open (layout detection), close,
 * options, statistics, sync and copy.
 */
#include "internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define DL_DEFAULT_MAPSIZE	1048576u
#define DL_DEFAULT_READERS	126u

#define DL_ENV_FLAGS	(MDB_FIXEDMAP | MDB_NOSUBDIR | MDB_NOSYNC | MDB_RDONLY | \
	MDB_NOMETASYNC | MDB_WRITEMAP | MDB_MAPASYNC | MDB_NOTLS | MDB_NOLOCK | \
	MDB_NORDAHEAD | MDB_NOMEMINIT | MDB_PREVSNAPSHOT | MDB_INMEMORY | \
	MDB_FORMAT_LMDB | MDB_FORMAT_DLMDB_V1 | MDB_LOCK_V1 | MDB_LOCK_V2)
#define DL_CHANGEABLE	(MDB_NOSYNC | MDB_NOMETASYNC | MDB_MAPASYNC | MDB_NOMEMINIT)

int mdb_env_create(MDB_env **ret)
{
	if (!ret)
		return EINVAL;
	MDB_env *env = calloc(1, sizeof(*env));
	if (!env)
		return ENOMEM;
	env->fd = env->mfd = env->lfd = -1;
	env->maxreaders = DL_DEFAULT_READERS;
	env->maxdbs = DL_CORE_DBS;
	env->dirtylimit = DL_DIRTY_LIMIT_DEFAULT;
#ifdef DL_L2_BYTES
	env->l2bytes = DL_L2_BYTES;
#elif defined(_SC_LEVEL2_CACHE_SIZE)
	/* A system that does not report it (0 or -1) gets the prefetches
	 * that depend on it in every tree (lookups: every tree that
	 * prefetches at all): where they are not needed they cost some
	 * instructions, where they are they save waits on memory. */
	long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
	env->l2bytes = l2 > 0 ? (size_t)l2 : 0;
#endif
	env->pid = getpid();
	pthread_mutex_init(&env->wlocal, NULL);
	*ret = env;
	return 0;
}

static int dl_open_paths(const char *path, unsigned flags, char **dpath, char **lpath)
{
	size_t len = strlen(path);
	*dpath = malloc(len + 16);
	*lpath = malloc(len + 16);
	if (!*dpath || !*lpath)
		return ENOMEM;
	if (flags & MDB_NOSUBDIR) {
		snprintf(*dpath, len + 16, "%s", path);
		snprintf(*lpath, len + 16, "%s-lock", path);
	} else {
		snprintf(*dpath, len + 16, "%s/data.mdb", path);
		snprintf(*lpath, len + 16, "%s/lock.mdb", path);
	}
	return 0;
}

/*
 * The map size asked for, raised to cover pages 0..last_pg.  Like stock
 * LMDB it stays as asked otherwise, whole pages or not: only the whole
 * pages below it are used (maxpg rounds down), and the size reported and
 * recorded in the meta page is the one the application set.
 */
static size_t dl_map_size_covering(MDB_env *env, size_t size, pgno_t last_pg)
{
	size_t min = (size_t)(last_pg + 1) * env->psize;
	return size < min ? min : size;
}

/*
 * Lock layout asked for when this process initialises the lock file: the
 * MDB_LOCK_V1/V2 flag, else DLMDB_LOCK_FORMAT, else 0 (the data file's
 * family decides, see dl_lock_family).
 */
static int dl_lock_wanted(unsigned flags, unsigned *ver)
{
	*ver = 0;
	if (flags & MDB_LOCK_V1) {
		*ver = 1;
		return 0;
	}
	if (flags & MDB_LOCK_V2) {
		*ver = 2;
		return 0;
	}
	const char *v = getenv("DLMDB_LOCK_FORMAT");
	if (!v || !*v || !strcmp(v, "auto"))
		return 0;
	if (!strcmp(v, "v1"))
		*ver = 1;
	else if (!strcmp(v, "v2"))
		*ver = 2;
	else
		return EINVAL;
	return 0;
}

/* Lock layout of the data file's family: stock version 1 stores are LMDB
 * 0.9's (the deployed LMDB), DLMDB stores are version 2's. */
static unsigned dl_lock_family(MDB_env *env)
{
	return (env->version == DL_VERSION_LMDB && !env->pad) ? 1 : 2;
}

/*
 * Format of a data file this open creates when the caller's flags name
 * none: DLMDB version 2 unless the library was built with
 * -DDLMDB_DEFAULT_FORMAT_LMDB, and the environment variable
 * DLMDB_CREATE_FORMAT ("lmdb" or "dlmdb") overrides either (lmdb.h).
 * Sets *stock to 1 for stock LMDB format; EINVAL for any other value of the
 * variable, so a misspelt setting is not silently ignored.
 */
static int dl_create_format(unsigned flags, int *stock)
{
#ifdef DLMDB_DEFAULT_FORMAT_LMDB
	*stock = 1;
#else
	*stock = 0;
#endif
	const char *v = getenv("DLMDB_CREATE_FORMAT");
	if (v && *v) {
		if (!strcmp(v, "lmdb"))
			*stock = 1;
		else if (!strcmp(v, "dlmdb"))
			*stock = 0;
		else
			return EINVAL;
	}
	if (flags & MDB_FORMAT_DLMDB_V1)
		*stock = 0;
	if (flags & MDB_FORMAT_LMDB)
		*stock = 1;
	return 0;
}

/*
 * A new store created with MDB_FIXEDMAP records its map address in both meta
 * pages (mm_address, never rewritten by commits), as stock LMDB does; later
 * opens with MDB_FIXEDMAP map there.
 */
static int dl_meta_set_address(MDB_env *env)
{
	uint64_t addr = (uint64_t)(uintptr_t)env->map;
	int rc;
	for (int i = 0; i < 2; i++) {
		off_t off = (off_t)((size_t)i * env->psize + PAGEHDRSZ + 8);
		if ((rc = dl_pwrite_all(env->fd, &addr, sizeof addr, off)))
			return rc;
	}
	env->fixaddr = env->map;
	return 0;
}

/* A new data file: page size, format and the two metas written; m0, m1
 * describe it as dl_meta_read_file would have. */
static int dl_env_new_file(MDB_env *env, unsigned flags, MDB_meta *m0, MDB_meta *m1)
{
	int rc, stock;
	if (flags & MDB_RDONLY)
		return ENOENT;
	long ps = sysconf(_SC_PAGESIZE);
	if (ps < 4096)
		ps = 4096;
	if (ps > 32768)
		ps = 32768;
	env->psize = (unsigned)ps;
	if ((rc = dl_create_format(flags, &stock)))
		return rc;
	env->version = (stock || (flags & MDB_FORMAT_DLMDB_V1)) ?
		DL_VERSION_LMDB : DL_VERSION_DLMDB;
	env->freeflags = (uint16_t)(P_META | (flags & (MDB_FIXEDMAP | MDB_NOSUBDIR)));
	env->mapsize = dl_map_size_covering(env, env->usermapsize ? env->usermapsize :
		DL_DEFAULT_MAPSIZE, 1);
	if ((rc = dl_meta_create(env)))
		return rc;
	m0->mm_last_pg = 1;
	m0->mm_mapsize = env->mapsize;
	*m1 = *m0;
	return 0;
}

/* Node layout: decided once here (version 1 files: from evidence in the
 * file once it is mapped, dl_layout_decide). */
static int dl_env_pick_layout(MDB_env *env, unsigned flags, int isnew)
{
	if (env->version == DL_VERSION_DLMDB) {
		if (flags & MDB_FORMAT_LMDB)
			return MDB_INCOMPATIBLE;
		env->pad = 1;
		env->layoutwhy = isnew ? MDB_LAYOUT_NEW : MDB_LAYOUT_VERSION2;
	} else {
		env->pad = (flags & MDB_FORMAT_DLMDB_V1) ? 1 : 0;
		env->layoutwhy = isnew ? MDB_LAYOUT_NEW : MDB_LAYOUT_TOLD;
	}
	return 0;
}

/* The map size: the caller's, else the current meta's, else the default,
 * covering the snapshot's last page. */
static int dl_env_map_size(MDB_env *env, const MDB_meta *cur)
{
	size_t want = env->usermapsize ? env->usermapsize : cur->mm_mapsize;
	if (!want)
		want = DL_DEFAULT_MAPSIZE;
	if (want > SIZE_MAX - env->psize)
		return EINVAL;	/* past any address space: not mappable */
	env->mapsize = dl_map_size_covering(env, want, cur->mm_last_pg);
	return 0;
}

/* The first process to open the store: set up the lock file from the
 * newer meta, then share it. */
static int dl_env_lock_first(MDB_env *env, unsigned lockwant)
{
	MDB_meta *a = METADATA((MDB_page *)env->map);
	MDB_meta *b = METADATA((MDB_page *)(env->map + env->psize));
	txnid_t last = b->mm_txnid > a->mm_txnid ? b->mm_txnid : a->mm_txnid;
	int rc = dl_lock_setup(env, lockwant ? lockwant : dl_lock_family(env), last);
	return rc ? rc : dl_lock_downgrade(env);
}

/* The handle table, with the free list and the main DB set up. */
static int dl_env_core_dbs(MDB_env *env)
{
	env->dbxs = calloc(env->maxdbs, sizeof(dl_dbx));
	if (!env->dbxs)
		return ENOMEM;
	env->dbxs[DL_FREE_DBI].cmp = dl_cmp_u64;
	env->dbxs[DL_FREE_DBI].valid = 1;
	unsigned mf = dl_meta_current(env)->mm_dbs[DL_MAIN_DBI].md_flags;
	env->dbxs[DL_MAIN_DBI].flags = mf;
	env->dbxs[DL_MAIN_DBI].cmp = dl_default_cmp(mf);
	env->dbxs[DL_MAIN_DBI].dcmp = dl_default_dcmp(mf);
	env->dbxs[DL_MAIN_DBI].valid = 1;
	env->numdbs = DL_CORE_DBS;
	return 0;
}

static int dl_env_open0(MDB_env *env, const char *path, unsigned flags, mdb_mode_t mode)
{
	char *dpath = NULL, *lpath = NULL;
	int rc, excl = 0, isnew = 0;
	unsigned lockwant = 0;
	MDB_meta m0, m1;
	memset(&m0, 0, sizeof(m0));	/* a new file fills only a few fields */

	if ((rc = dl_lock_wanted(flags, &lockwant)))
		goto out;
	if ((rc = dl_open_paths(path, flags, &dpath, &lpath)))
		goto out;
	env->path = strdup(path);
	if (!env->path) {
		rc = ENOMEM;
		goto out;
	}
	if (!(flags & MDB_NOLOCK)) {
		/* The lock file is created with the data file's mode. */
		if ((rc = dl_lock_open(env, lpath, mode, lockwant, &excl)))
			goto out;
	}
	if (flags & MDB_RDONLY)
		env->fd = open(dpath, O_RDONLY | O_CLOEXEC);
	else
		env->fd = open(dpath, O_RDWR | O_CREAT, mode);
	if (env->fd < 0) {
		rc = errno;
		goto out;
	}
	if ((rc = dl_meta_read_file(env, &m0, &m1, &isnew)))
		goto out;
	if (isnew && (rc = dl_env_new_file(env, flags, &m0, &m1)))
		goto out;
	if ((rc = dl_env_pick_layout(env, flags, isnew)))
		goto out;
	if ((rc = dl_env_map_size(env, m1.mm_txnid > m0.mm_txnid ? &m1 : &m0)))
		goto out;
	env->nodemax = (((env->psize - PAGEHDRSZ) / 2) & ~1u) - 2;
	env->maxfree1pg = (env->psize - PAGEHDRSZ) / 8 - 1;
	if (!(flags & MDB_RDONLY)) {
		env->mfd = open(dpath, O_WRONLY | O_DSYNC | O_CLOEXEC);
		if (env->mfd < 0) {
			rc = errno;
			goto out;
		}
	}
	/* MDB_FIXEDMAP: map where the file says (dl_map answers EBUSY if
	 * that address is taken); a store that recorded none maps anywhere. */
	if (flags & MDB_FIXEDMAP) {
		MDB_meta *cur = m1.mm_txnid > m0.mm_txnid ? &m1 : &m0;
		env->fixaddr = (void *)(uintptr_t)cur->mm_address;
	}
	if ((rc = dl_map(env, env->mapsize)))
		goto out;
	/* Version 1: the file's evidence decides the layout, or refuses the one
	 * the caller named.  (While the lock is not set up the header txnid is
	 * 0 or another process's: dl_meta_current then takes the newer meta.) */
	if (env->version == DL_VERSION_LMDB && !isnew &&
	    (rc = dl_layout_decide(env, !!(flags & (MDB_FORMAT_LMDB | MDB_FORMAT_DLMDB_V1)),
		&env->layoutwhy)))
		goto out;
	if (isnew && (flags & MDB_FIXEDMAP) && (rc = dl_meta_set_address(env)))
		goto out;
	if (env->lock && excl && (rc = dl_env_lock_first(env, lockwant)))
		goto out;
	if ((rc = dl_env_core_dbs(env)))
		goto out;
	dl_env_steplim(env);
	env->opened = 1;
out:
	free(dpath);
	free(lpath);
	return rc;
}

/*
 * MDB_INMEMORY (DLMDB): no files.  The map is anonymous memory holding the
 * two meta pages and every page; commits copy pages into it.  Unless
 * MDB_NOLOCK, the reader table lives in process memory.
 */
static int dl_env_open_mem(MDB_env *env)
{
	long ps = sysconf(_SC_PAGESIZE);
	int rc;
	if (ps < 4096)
		ps = 4096;
	if (ps > 32768)
		ps = 32768;
	env->psize = (unsigned)ps;
	env->version = DL_VERSION_DLMDB;
	env->pad = 1;
	env->freeflags = P_META;
	env->mapsize = dl_map_size_covering(env, env->usermapsize ? env->usermapsize :
		DL_DEFAULT_MAPSIZE, 1);
	env->nodemax = (((env->psize - PAGEHDRSZ) / 2) & ~1u) - 2;
	env->maxfree1pg = (env->psize - PAGEHDRSZ) / 8 - 1;
	env->path = strdup("");
	if (!env->path)
		return ENOMEM;
	if ((rc = dl_map(env, env->mapsize)))
		return rc;
	for (int i = 0; i < 2; i++) {
		MDB_page *p = (MDB_page *)(env->map + (size_t)i * env->psize);
		MDB_meta *m = METADATA(p);
		p->mp_pgno = (pgno_t)i;
		p->mp_flags = P_META;
		m->mm_magic = DL_MAGIC;
		m->mm_version = env->version;
		m->mm_mapsize = env->mapsize;
		m->mm_dbs[DL_FREE_DBI].md_pad = env->psize;
		m->mm_dbs[DL_FREE_DBI].md_flags = env->freeflags;
		m->mm_dbs[DL_FREE_DBI].md_root = P_INVALID;
		m->mm_dbs[DL_MAIN_DBI].md_root = P_INVALID;
		m->mm_last_pg = 1;
	}
	env->layoutwhy = MDB_LAYOUT_NEW;
	if (!(env->flags & MDB_NOLOCK) && (rc = dl_lock_heap(env)))
		return rc;
	env->dbxs = calloc(env->maxdbs, sizeof(dl_dbx));
	if (!env->dbxs)
		return ENOMEM;
	env->dbxs[DL_FREE_DBI].cmp = dl_cmp_u64;
	env->dbxs[DL_FREE_DBI].valid = 1;
	env->dbxs[DL_MAIN_DBI].cmp = dl_cmp_lex;
	env->dbxs[DL_MAIN_DBI].valid = 1;
	env->numdbs = DL_CORE_DBS;
	dl_env_steplim(env);
	env->opened = 1;
	return 0;
}

int mdb_env_open(MDB_env *env, const char *path, unsigned flags, mdb_mode_t mode)
{
	if (!env || env->opened || env->path)
		return EINVAL;
	if (!path && !((flags | env->flags) & MDB_INMEMORY))
		return EINVAL;
	flags |= env->flags;
	if (flags & ~DL_ENV_FLAGS)
		return EINVAL;
	if ((flags & MDB_FORMAT_LMDB) && (flags & MDB_FORMAT_DLMDB_V1))
		return EINVAL;
	if ((flags & MDB_LOCK_V1) && (flags & MDB_LOCK_V2))
		return EINVAL;
	if ((flags & MDB_INMEMORY) && (flags & (MDB_RDONLY | MDB_FIXEDMAP | MDB_PREVSNAPSHOT)))
		return EINVAL;
	if (flags & MDB_PREVSNAPSHOT)
		return EINVAL;	/* not supported yet */
	const char *dlim = getenv("DLMDB_DIRTY_LIMIT");
	if (dlim && *dlim && dl_dirty_limit_parse(dlim, &env->dirtylimit))
		return EINVAL;
	if (flags & MDB_INMEMORY) {
		flags |= MDB_WRITEMAP | MDB_NOSYNC | MDB_NOMETASYNC;
		flags &= ~(MDB_FORMAT_LMDB | MDB_FORMAT_DLMDB_V1 | MDB_LOCK_V1 | MDB_LOCK_V2);
		env->flags = flags;
		int rc = dl_env_open_mem(env);
		if (rc) {
			dl_unmap(env);
			free(env->lock);
			env->lock = NULL;
			if (!env->path)
				env->path = strdup("");
		}
		return rc;
	}
	if (flags & MDB_RDONLY)
		flags &= ~MDB_WRITEMAP;
	env->flags = flags;
	int rc = dl_env_open0(env, path, flags, mode);
	if (rc) {
		/* Leave the handle closed-but-freeable, as LMDB does. */
		dl_unmap(env);
		dl_lock_close(env);
		if (env->fd >= 0)
			close(env->fd);
		if (env->mfd >= 0)
			close(env->mfd);
		env->fd = env->mfd = -1;
		if (!env->path)
			env->path = strdup("");
	}
	return rc;
}

void mdb_env_close(MDB_env *env)
{
	if (!env)
		return;
	if (env->wtxn_cache)
		dl_txn_release(env->wtxn_cache);
	if (env->dbxs) {
		/* Only slots below numdbs were ever used: reading all maxdbs
		 * entries would fault in the whole table (megabytes, for the
		 * handle counts tools ask for). */
		for (MDB_dbi i = 0; i < env->numdbs; i++)
			free(env->dbxs[i].name);
		free(env->dbxs);
	}
	free(env->wchecked);
	env->wchecked = NULL;
	dl_buf_release(env);
	dl_unmap(env);
	dl_lock_close(env);
	if (env->mfd >= 0)
		close(env->mfd);
	if (env->fd >= 0)
		close(env->fd);
	pthread_mutex_destroy(&env->wlocal);
	free(env->path);
	free(env);
}

int mdb_env_set_flags(MDB_env *env, unsigned flags, int onoff)
{
	if (!env || (flags & ~DL_CHANGEABLE))
		return EINVAL;
	if (onoff)
		env->flags |= flags;
	else
		env->flags &= ~flags;
	return 0;
}

int mdb_env_get_flags(MDB_env *env, unsigned *flags)
{
	if (!env || !flags)
		return EINVAL;
	*flags = env->flags & DL_ENV_FLAGS;
	return 0;
}

int mdb_env_get_path(MDB_env *env, const char **path)
{
	if (!env || !path)
		return EINVAL;
	*path = env->opened ? env->path : NULL;
	return 0;
}

int mdb_env_get_fd(MDB_env *env, mdb_filehandle_t *fd)
{
	if (!env || !fd)
		return EINVAL;
	*fd = env->fd;
	return 0;
}

int mdb_env_set_mapsize(MDB_env *env, mdb_size_t size)
{
	if (!env)
		return EINVAL;
	if (!env->opened) {
		env->usermapsize = size;
		return 0;
	}
	if (env->txn)
		return EINVAL;
	MDB_meta *m = dl_meta_current(env);
	if (!size)
		size = m->mm_mapsize;
	if (size > SIZE_MAX - env->psize)
		return EINVAL;
	size = dl_map_size_covering(env, size, m->mm_last_pg);
	if (size == env->mapsize)
		return 0;
	if (env->flags & MDB_INMEMORY) {
		/* The data lives only in the map: move it, don't drop it. */
		void *m = mremap(env->map, env->mapsize, size, MREMAP_MAYMOVE);
		if (m == MAP_FAILED)
			return errno;
		env->map = m;
		env->mapsize = size;
		env->maxpg = size / env->psize;
		dl_fpages_set(env, env->maxpg);
		env->usermapsize = size;
		return 0;
	}
	dl_unmap(env);
	int rc = dl_map(env, size);
	if (rc) {
		/* Try to get the old map back so the env stays usable. */
		if (dl_map(env, env->mapsize) == 0)
			return rc;
		env->failed = 1;
		return rc;
	}
	env->usermapsize = size;
	return 0;
}

int mdb_env_set_maxreaders(MDB_env *env, unsigned readers)
{
	if (!env || !readers || env->opened)
		return EINVAL;
	env->maxreaders = readers;
	return 0;
}

int mdb_env_get_maxreaders(MDB_env *env, unsigned *readers)
{
	if (!env || !readers)
		return EINVAL;
	*readers = env->maxreaders;
	return 0;
}

int mdb_env_set_maxdbs(MDB_env *env, MDB_dbi dbs)
{
	if (!env || env->opened)
		return EINVAL;
	if (dbs > 32767)
		return EINVAL;
	env->maxdbs = dbs + DL_CORE_DBS;
	return 0;
}

int mdb_env_get_layout(MDB_env *env, MDB_envlayout *out)
{
	if (!env || !out || !env->opened)
		return EINVAL;
	out->ml_version = env->version;
	out->ml_padded = env->pad;
	out->ml_reason = env->layoutwhy;
	out->ml_lockver = env->lock ? env->lockver : 0;
	out->ml_lockjoined = (unsigned)env->lockjoined;
	return 0;
}

int mdb_env_get_map(MDB_env *env, void **addr, size_t *size)
{
	if (!env || !addr || !size || !env->map)
		return EINVAL;
	*addr = env->map;
	*size = env->mapsize;
	return 0;
}

int mdb_env_get_maxkeysize(MDB_env *env)
{
	(void)env;
	return DL_MAXKEY;
}

int mdb_env_set_userctx(MDB_env *env, void *ctx)
{
	if (!env)
		return EINVAL;
	env->userctx = ctx;
	return 0;
}

void *mdb_env_get_userctx(MDB_env *env)
{
	return env ? env->userctx : NULL;
}

int mdb_env_set_assert(MDB_env *env, MDB_assert_func *func)
{
	if (!env)
		return EINVAL;
	env->assertfn = func;
	return 0;
}

int mdb_env_set_interrupt(MDB_env *env, int onoff)
{
	if (!env)
		return EINVAL;
	env->interrupted = onoff ? 1 : 0;
	dl_env_steplim(env);
	return 0;
}

int mdb_env_stat(MDB_env *env, MDB_stat *st)
{
	if (!env || !st || !env->opened)
		return EINVAL;
	MDB_meta *m = dl_meta_current(env);
	MDB_db *db = &m->mm_dbs[DL_MAIN_DBI];
	st->ms_psize = env->psize;
	st->ms_depth = db->md_depth;
	st->ms_branch_pages = db->md_branch_pages;
	st->ms_leaf_pages = db->md_leaf_pages;
	st->ms_overflow_pages = db->md_overflow_pages;
	st->ms_entries = db->md_entries;
	return 0;
}

int mdb_env_info(MDB_env *env, MDB_envinfo *info)
{
	if (!env || !info || !env->opened)
		return EINVAL;
	MDB_meta *m = dl_meta_current(env);
	info->me_mapaddr = (void *)(uintptr_t)m->mm_address;
	info->me_mapsize = env->mapsize;
	info->me_last_pgno = m->mm_last_pg;
	info->me_last_txnid = m->mm_txnid;
	info->me_maxreaders = env->maxreaders;
	info->me_numreaders = env->lock ? *env->lk_numreaders : 0;
	return 0;
}

int mdb_env_sync(MDB_env *env, int force)
{
	if (!env || !env->opened)
		return EINVAL;
	if (env->flags & MDB_RDONLY)
		return EACCES;
	if (!force && (env->flags & MDB_NOSYNC))
		return 0;
	if (env->flags & MDB_INMEMORY)
		return 0;
	if (fdatasync(env->fd) < 0)
		return errno;
	return 0;
}
