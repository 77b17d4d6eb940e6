/*
 * lock.c - the lock file: reader table, writer mutex, byte-range locks.
 *
 * Protocol (format doc §16.5-16.8): the first opener takes an exclusive
 * fcntl lock on byte 0, initialises the table, then downgrades to a shared
 * lock it keeps for the life of the environment; later openers wait for a
 * shared lock and validate the header.  Readers hold an exclusive fcntl lock
 * on the byte at offset = pid so others can tell live processes from dead
 * ones.  Mutexes are robust and process-shared so a crashed owner is
 * recovered.
 */
#include "internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int dl_fcntl_lock(int fd, int cmd, short type, off_t off, off_t len)
{
	struct flock fl;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = type;
	fl.l_whence = SEEK_SET;
	fl.l_start = off;
	fl.l_len = len;
	for (;;) {
		if (fcntl(fd, cmd, &fl) == 0)
			return 0;
		if (errno != EINTR || cmd == F_SETLK)
			return errno;
	}
}

static int dl_mutex_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;
	int rc = pthread_mutexattr_init(&a);
	if (rc)
		return rc;
	rc = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	if (!rc)
		rc = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	if (!rc)
		rc = pthread_mutex_init(m, &a);
	pthread_mutexattr_destroy(&a);
	return rc;
}

/* Slot cleanup when a thread that used read transactions exits. */
void dl_tls_release(void *p)
{
	dl_reader *r = p;
	if (r) {
		r->r_txnid = TXNID_NONE;
		__atomic_store_n(&r->r_pid, 0, __ATOMIC_RELEASE);
	}
}

/*
 * Point env->lk_* at the fields of lock layout ver (1 or 2) in the mapped
 * header; the writer mutex and the reader slots sit at the same offsets in
 * both.
 */
static void dl_lock_bind(MDB_env *env, unsigned ver)
{
	char *base = (char *)env->lock;
	env->lockver = ver;
	if (ver == 1) {
		env->lk_rmutex = (pthread_mutex_t *)(base + 8);
		env->lk_txnid = (volatile txnid_t *)(base + 48);
		env->lk_numreaders = (volatile uint32_t *)(base + 56);
	} else {
		env->lk_txnid = (volatile txnid_t *)(base + 8);
		env->lk_numreaders = (volatile uint32_t *)(base + 16);
		env->lk_rmutex = (pthread_mutex_t *)(base + 24);
	}
	env->lk_wmutex = &env->lock->mt_wmutex.m;
}

/*
 * Lay out a fresh header of version ver over the mapped table (only while
 * nobody else can use it: the exclusive byte-0 lock is held, or the table
 * is private heap memory).  The slots are cleared too: nobody is reading.
 */
static int dl_lock_format(MDB_env *env, unsigned ver, int shared)
{
	int rc;
	memset(env->lock, 0, DL_LOCK_HDR + (size_t)DL_LOCK_SLOT * env->maxreaders);
	dl_lock_bind(env, ver);
	if (shared) {
		if ((rc = dl_mutex_init(env->lk_rmutex)) || (rc = dl_mutex_init(env->lk_wmutex)))
			return rc;
	} else {
		pthread_mutex_init(env->lk_rmutex, NULL);
		pthread_mutex_init(env->lk_wmutex, NULL);
	}
	env->lock->mt_magic = DL_MAGIC;
	env->lock->mt_format = ver == 1 ? DL_LOCK_FORMAT_V1 : DL_LOCK_FORMAT_V2;
	return 0;
}

/*
 * Layout of a lock file someone else initialised, from its format word;
 * 0 = a word this engine does not know (another architecture or libc,
 * another LMDB branch): sharing it would be a guess.
 */
static unsigned dl_lock_version_of(uint32_t word)
{
	switch (word) {
	case DL_LOCK_FORMAT_V1:
		return 1;
	case DL_LOCK_FORMAT_V2:
	case DL_LOCK_FORMAT_DL0:
		return 2;
	default:
		return 0;
	}
}

/*
 * Open and map the lock file.  *excl tells whether this process is alone:
 * then the table gets a provisional header of layout want (2 when the
 * caller has no preference yet) so that an opener waiting for the shared
 * lock always finds a valid header, and dl_lock_setup fixes the layout once
 * the data file's family is known.  Otherwise the header others wrote
 * decides the layout, whatever want says.
 */
int dl_lock_open(MDB_env *env, const char *lpath, mode_t mode, unsigned want, int *excl)
{
	int rc;
	struct stat st;

	*excl = 0;
	env->lfd = open(lpath, O_RDWR | O_CREAT | O_CLOEXEC, mode);
	if (env->lfd < 0) {
		rc = errno;
		if (rc == EROFS && (env->flags & MDB_RDONLY)) {
			env->flags |= MDB_NOLOCK;	/* read-only medium: go without */
			return 0;
		}
		return rc;
	}
	if (dl_fcntl_lock(env->lfd, F_SETLK, F_WRLCK, 0, 1) == 0) {
		*excl = 1;
	} else if ((rc = dl_fcntl_lock(env->lfd, F_SETLKW, F_RDLCK, 0, 1))) {
		return rc;
	}
	if (fstat(env->lfd, &st) < 0)
		return errno;
	size_t want_size = DL_LOCK_HDR + (size_t)DL_LOCK_SLOT * env->maxreaders;
	size_t size = (size_t)st.st_size;
	if (*excl && size < want_size) {
		if (ftruncate(env->lfd, (off_t)want_size) < 0)
			return errno;
		size = want_size;
	}
	if (size < DL_LOCK_HDR + DL_LOCK_SLOT)
		return MDB_INVALID;
	/* A bigger existing table wins over the configured reader count. */
	env->maxreaders = (unsigned)((size - DL_LOCK_HDR) / DL_LOCK_SLOT);
	void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, env->lfd, 0);
	if (m == MAP_FAILED)
		return errno;
	env->lock = m;
	env->locksize = size;
	if (*excl) {
		if ((rc = dl_lock_format(env, want ? want : 2, 1)))
			return rc;
	} else {
		if (env->lock->mt_magic != DL_MAGIC)
			return MDB_INVALID;
		unsigned ver = dl_lock_version_of(env->lock->mt_format);
		if (!ver)
			return MDB_VERSION_MISMATCH;
		dl_lock_bind(env, ver);
		env->lockjoined = 1;
	}
	if ((rc = pthread_key_create(&env->tlskey, dl_tls_release)))
		return rc;
	env->tlskey_ok = 1;
	return 0;
}

/*
 * Exclusive opener, data file read: give the table layout ver (re-laying
 * the provisional header if it differs) and publish the last commit.
 */
int dl_lock_setup(MDB_env *env, unsigned ver, txnid_t last)
{
	int rc;
	if (ver != env->lockver && (rc = dl_lock_format(env, ver, 1)))
		return rc;
	__atomic_store_n(env->lk_txnid, last, __ATOMIC_RELEASE);
	return 0;
}

/* MDB_INMEMORY: a reader table in process memory (layout 2, private mutexes). */
int dl_lock_heap(MDB_env *env)
{
	int rc;
	size_t sz = DL_LOCK_HDR + (size_t)DL_LOCK_SLOT * env->maxreaders;
	env->lock = calloc(1, sz);
	if (!env->lock)
		return ENOMEM;
	env->locksize = 0;	/* heap memory, not a mapping */
	if ((rc = dl_lock_format(env, 2, 0)))
		return rc;
	if ((rc = pthread_key_create(&env->tlskey, dl_tls_release)))
		return rc;
	env->tlskey_ok = 1;
	return 0;
}

int dl_lock_downgrade(MDB_env *env)
{
	return dl_fcntl_lock(env->lfd, F_SETLK, F_RDLCK, 0, 1);
}

void dl_lock_close(MDB_env *env)
{
	if (env->tlskey_ok) {
		pthread_key_delete(env->tlskey);
		env->tlskey_ok = 0;
	}
	if (env->lock) {
		/* Release every slot this process still holds (none when the
		 * header was refused before its layout was known). */
		unsigned n = env->lk_numreaders ? *env->lk_numreaders : 0;
		for (unsigned i = 0; i < n && i < env->maxreaders; i++) {
			dl_reader *r = &env->lock->mt_readers[i];
			if (r->r_pid == (uint32_t)env->pid) {
				r->r_txnid = TXNID_NONE;
				r->r_pid = 0;
			}
		}
		if (env->locksize)
			munmap(env->lock, env->locksize);
		else
			free(env->lock);	/* in-memory env: heap table */
		env->lock = NULL;
	}
	if (env->lfd >= 0) {
		close(env->lfd);	/* also drops our fcntl locks */
		env->lfd = -1;
	}
}

static int dl_rmutex_lock(MDB_env *env)
{
	int rc = pthread_mutex_lock(env->lk_rmutex);
	if (rc == EOWNERDEAD) {
		pthread_mutex_consistent(env->lk_rmutex);
		rc = 0;
	}
	return rc;
}

/* Claim a free slot in the reader table. */
static int dl_slot_claim(MDB_env *env, dl_reader **ret)
{
	dl_lockhdr *lk = env->lock;
	int rc;

	/* Two threads may both take the (idempotent) fcntl lock: harmless. */
	if (!__atomic_load_n(&env->pidlocked, __ATOMIC_ACQUIRE) && env->lfd >= 0) {
		rc = dl_fcntl_lock(env->lfd, F_SETLK, F_WRLCK, (off_t)env->pid, 1);
		if (rc)
			return rc;
		__atomic_store_n(&env->pidlocked, 1, __ATOMIC_RELEASE);
	}
	if ((rc = dl_rmutex_lock(env)))
		return rc;
	unsigned n = *env->lk_numreaders, i;
	for (i = 0; i < n; i++)
		if (lk->mt_readers[i].r_pid == 0)
			break;
	if (i == env->maxreaders) {
		pthread_mutex_unlock(env->lk_rmutex);
		return MDB_READERS_FULL;
	}
	dl_reader *r = &lk->mt_readers[i];
	r->r_pid = 0;
	r->r_txnid = TXNID_NONE;
	r->r_tid = (uint64_t)pthread_self();
	if (i == n)
		__atomic_store_n(env->lk_numreaders, n + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&r->r_pid, (uint32_t)env->pid, __ATOMIC_RELEASE);
	pthread_mutex_unlock(env->lk_rmutex);
	*ret = r;
	return 0;
}

static int dl_reader_check0(MDB_env *env, int *dead);

/*
 * Pin the current snapshot in a reader slot of its own (for reading pages
 * outside a transaction while other processes may write: the slot keeps
 * their writers from reusing the snapshot's pages).  *t = its txnid.
 * Without a lock table nothing is pinned (*slot = NULL).
 */
int dl_snapshot_pin(MDB_env *env, dl_reader **slot, txnid_t *t)
{
	*slot = NULL;
	*t = 0;
	if (!env->lock)
		return 0;
	int rc = dl_slot_claim(env, slot);
	if (rc)
		return rc;
	txnid_t id;
	do {
		id = __atomic_load_n(env->lk_txnid, __ATOMIC_ACQUIRE);
		(void)__atomic_exchange_n(&(*slot)->r_txnid, id, __ATOMIC_SEQ_CST);
	} while (id != __atomic_load_n(env->lk_txnid, __ATOMIC_SEQ_CST));
	*t = id;
	return 0;
}

void dl_snapshot_unpin(dl_reader *slot)
{
	if (slot) {
		__atomic_store_n(&slot->r_txnid, TXNID_NONE, __ATOMIC_RELEASE);
		__atomic_store_n(&slot->r_pid, 0, __ATOMIC_RELEASE);
	}
}

/* Largest txnid of the two meta pages in the map. */
static txnid_t dl_meta_maxid(MDB_env *env)
{
	MDB_meta *m0 = METADATA((MDB_page *)env->map);
	MDB_meta *m1 = METADATA((MDB_page *)(env->map + env->psize));
	txnid_t a = __atomic_load_n(&m0->mm_txnid, __ATOMIC_ACQUIRE);
	txnid_t b = __atomic_load_n(&m1->mm_txnid, __ATOMIC_ACQUIRE);
	return a > b ? a : b;
}

/*
 * Called holding the writer mutex just reported "owner dead".  The dead
 * writer may have written its meta page but not yet published the txnid
 * in the header, so the header cannot be trusted: the meta with the larger
 * txnid is the last commit (format doc §16.7).
 */
static void dl_wmutex_recover(MDB_env *env)
{
	__atomic_store_n(env->lk_txnid, dl_meta_maxid(env), __ATOMIC_RELEASE);
	dl_reader_check0(env, NULL);
	pthread_mutex_consistent(env->lk_wmutex);
}

/*
 * A reader finding a meta page newer than the published txnid sees either
 * a commit about to publish it, or a writer that died in between.  In the
 * second case the commit is durable and the next writer will build on it,
 * so readers must see it now: recover the mutex here (trylock only tells
 * "owner dead" for a dead owner; a live writer answers EBUSY).
 */
void dl_writer_dead_check(MDB_env *env)
{
	if (dl_meta_maxid(env) <= __atomic_load_n(env->lk_txnid, __ATOMIC_ACQUIRE))
		return;
	int rc = pthread_mutex_trylock(env->lk_wmutex);
	if (rc == EOWNERDEAD)
		dl_wmutex_recover(env);
	if (rc == EOWNERDEAD || rc == 0)
		pthread_mutex_unlock(env->lk_wmutex);
}

/*
 * Find the reader slot for a read txn that has none yet (its thread's slot,
 * or with MDB_NOTLS a slot of its own).  dl_reader_acquire (internal.h)
 * then publishes the snapshot in it.
 */
int dl_reader_slot(MDB_txn *txn)
{
	MDB_env *env = txn->env;
	dl_reader *r;
	int rc;

	if (env->flags & MDB_NOTLS) {
		if ((rc = dl_slot_claim(env, &r)))
			return rc;
		txn->flags |= TXN_HASSLOT;
	} else {
		r = pthread_getspecific(env->tlskey);
		if (r) {
			if (r->r_pid != (uint32_t)env->pid)
				return MDB_BAD_RSLOT;
			if (r->r_txnid != TXNID_NONE)
				return MDB_BAD_RSLOT;
		} else {
			if ((rc = dl_slot_claim(env, &r)))
				return rc;
			if ((rc = pthread_setspecific(env->tlskey, r))) {
				r->r_pid = 0;
				return rc;
			}
		}
	}
	txn->slot = r;
	return 0;
}

void dl_reader_release_txn(MDB_txn *txn)
{
	dl_reader *r = txn->slot;
	if (!r)
		return;
	__atomic_store_n(&r->r_txnid, TXNID_NONE, __ATOMIC_RELEASE);
	if (txn->flags & TXN_HASSLOT) {
		__atomic_store_n(&r->r_pid, 0, __ATOMIC_RELEASE);
		txn->slot = NULL;
		txn->flags &= ~TXN_HASSLOT;
	} else if (!(txn->env->flags & MDB_NOTLS)) {
		/* The slot stays with the thread. */
		txn->slot = NULL;
	}
}

/* Smallest snapshot id any live reader uses, capped at limit. */
txnid_t dl_oldest_reader(MDB_env *env, txnid_t limit)
{
	txnid_t oldest = limit;
	if (!env->lock)
		return oldest;
	/* Writer half of the handshake in dl_reader_acquire (internal.h): order the
	 * earlier seq_cst store of the header txnid before the slot loads below. */
#if !defined(__SANITIZE_THREAD__)
	/* (TSan rejects fences; every access here is atomic for it anyway.) */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
	unsigned n = __atomic_load_n(env->lk_numreaders, __ATOMIC_ACQUIRE);
	for (unsigned i = 0; i < n && i < env->maxreaders; i++) {
		dl_reader *r = &env->lock->mt_readers[i];
		if (__atomic_load_n(&r->r_pid, __ATOMIC_ACQUIRE)) {
			txnid_t t = __atomic_load_n(&r->r_txnid, __ATOMIC_ACQUIRE);
			if (t < oldest)
				oldest = t;
		}
	}
	return oldest;
}

int dl_wlock(MDB_env *env)
{
	if (!env->lock)
		return pthread_mutex_lock(&env->wlocal);
	int rc = pthread_mutex_lock(env->lk_wmutex);
	if (rc == EOWNERDEAD) {
		dl_wmutex_recover(env);
		rc = 0;
	}
	/*
	 * Holding the lock while this env still has a write txn open means the
	 * thread running that txn died (a live one would still hold the lock):
	 * its half-done state lives on in this env, so (as with LMDB) the env
	 * is unusable from now on.  Its txn is dropped, which releases the
	 * lock recovered above, so other processes carry on.  (A dead writer
	 * of another process leaves no such state here: recovery is enough.)
	 */
	if (!rc && env->txn) {
		env->failed = 1;
		dl_wtxn_orphan_abort(env);
		return MDB_PANIC;
	}
	return rc;
}

void dl_wunlock(MDB_env *env)
{
	if (!env->lock)
		pthread_mutex_unlock(&env->wlocal);
	else
		pthread_mutex_unlock(env->lk_wmutex);
}

/* Is the process that owns pid still around?  Its pid byte lock tells. */
static int dl_pid_alive(MDB_env *env, uint32_t pid)
{
	struct flock fl;
	memset(&fl, 0, sizeof(fl));
	fl.l_type = F_WRLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = pid;
	fl.l_len = 1;
	if (fcntl(env->lfd, F_GETLK, &fl) < 0)
		return 1;	/* cannot tell: assume alive */
	return fl.l_type != F_UNLCK;
}

static int dl_reader_check0(MDB_env *env, int *dead)
{
	int count = 0;
	unsigned n = *env->lk_numreaders;
	for (unsigned i = 0; i < n && i < env->maxreaders; i++) {
		uint32_t pid = env->lock->mt_readers[i].r_pid;
		if (!pid || pid == (uint32_t)env->pid || env->lfd < 0)
			continue;
		if (dl_pid_alive(env, pid))
			continue;
		if (dl_rmutex_lock(env) == 0) {
			for (unsigned j = i; j < n; j++) {
				if (env->lock->mt_readers[j].r_pid == pid) {
					env->lock->mt_readers[j].r_txnid = TXNID_NONE;
					env->lock->mt_readers[j].r_pid = 0;
					count++;
				}
			}
			pthread_mutex_unlock(env->lk_rmutex);
		}
	}
	if (dead)
		*dead = count;
	return 0;
}

int mdb_reader_check(MDB_env *env, int *dead)
{
	if (!env)
		return EINVAL;
	if (dead)
		*dead = 0;
	if (!env->lock)
		return 0;
	return dl_reader_check0(env, dead);
}

int mdb_reader_list(MDB_env *env, MDB_msg_func *func, void *ctx)
{
	char buf[64];
	int rc = 0, first = 1;

	if (!env || !func)
		return -1;
	if (!env->lock)
		return func("(no reader locks)\n", ctx);
	unsigned n = *env->lk_numreaders;
	for (unsigned i = 0; i < n && i < env->maxreaders; i++) {
		dl_reader *r = &env->lock->mt_readers[i];
		if (!r->r_pid)
			continue;
		if (first) {
			first = 0;
			rc = func("    pid     thread     txnid\n", ctx);
			if (rc < 0)
				return rc;
		}
		txnid_t t = r->r_txnid;
		if (t == TXNID_NONE)
			snprintf(buf, sizeof(buf), "%10d %" PRIx64 " -\n",
			    (int)r->r_pid, (uint64_t)r->r_tid);
		else
			snprintf(buf, sizeof(buf), "%10d %" PRIx64 " %" PRIu64 "\n",
			    (int)r->r_pid, (uint64_t)r->r_tid, (uint64_t)t);
		rc = func(buf, ctx);
		if (rc < 0)
			return rc;
	}
	if (first)
		rc = func("(no active readers)\n", ctx);
	return rc;
}
