/*
 * os.c - file I/O and memory mapping.
 */
#include "internal.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

int dl_pread_all(int fd, void *buf, size_t len, off_t off)
{
	char *p = buf;
	while (len) {
		ssize_t r = pread(fd, p, len, off);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (r == 0)
			return ENODATA;	/* short file: caller decides */
		p += r;
		len -= (size_t)r;
		off += r;
	}
	return 0;
}

int dl_pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	const char *p = buf;
	while (len) {
		ssize_t r = pwrite(fd, p, len, off);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (r == 0)
			return EIO;
		p += r;
		len -= (size_t)r;
		off += r;
	}
	return 0;
}

/* Write iov[0..cnt) contiguously at off, resuming after partial writes. */
static int dl_writev_all(int fd, struct iovec *iov, int cnt, off_t off)
{
	while (cnt > 0) {
		ssize_t r = pwritev(fd, iov, cnt, off);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (r == 0)
			return EIO;
		off += r;
		while (cnt > 0 && (size_t)r >= iov->iov_len) {
			r -= (ssize_t)iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt > 0 && r) {
			iov->iov_base = (char *)iov->iov_base + r;
			iov->iov_len -= (size_t)r;
		}
	}
	return 0;
}

#define DL_IOV_MAX	128
#define DL_WRITE_MAX	((size_t)1 << 30)

/* Source of the zeros owed at the end of overflow runs (dl_ov_zerotail):
 * never written, so its pages stay the kernel's shared zero page. */
static char dl_zeros[32768];

/*
 * Write dirty pages (sorted by pgno) to their places in the file, joining
 * runs of adjacent pages into one pwritev, an overflow run's owed zeros
 * as one more piece.  P_DIRTY is cleared first: it must never reach the
 * file on a real page; so is the count of owed zeros, kept in mp_pad.
 */
int dl_write_pages(MDB_env *env, dl_dent *ents, size_t n)
{
	size_t ps = env->psize;
	if (env->flags & MDB_INMEMORY) {
		/* The anonymous map is the store: copy pages into place. */
		for (size_t i = 0; i < n; i++) {
			MDB_page *mp = ents[i].page;
			size_t len = (size_t)ents[i].npages * ps, tail = dl_ov_zerotail(mp, len);
			char *dst = env->map + ents[i].pgno * ps;
			mp->mp_flags &= (uint16_t)~(P_DIRTY | P_LOOSE | P_KEEP);
			if (tail)
				mp->mp_pad = 0;
			memcpy(dst, mp, len - tail);
			memset(dst + len - tail, 0, tail);
		}
		return 0;
	}
	struct iovec iov[DL_IOV_MAX];
	int cnt = 0, rc;
	off_t start = 0;
	size_t bytes = 0;
	pgno_t next = P_INVALID;

	for (size_t i = 0; i < n; i++) {
		MDB_page *mp = ents[i].page;
		size_t len = (size_t)ents[i].npages * ps, tail = dl_ov_zerotail(mp, len);
		mp->mp_flags &= (uint16_t)~(P_DIRTY | P_LOOSE | P_KEEP);
		if (tail)
			mp->mp_pad = 0;
		if (cnt && (ents[i].pgno != next || cnt + 2 > DL_IOV_MAX ||
		    bytes + len > DL_WRITE_MAX)) {
			if ((rc = dl_writev_all(env->fd, iov, cnt, start)))
				return rc;
			cnt = 0;
		}
		if (!cnt) {
			start = (off_t)(ents[i].pgno * ps);
			bytes = 0;
		}
		iov[cnt].iov_base = mp;
		iov[cnt].iov_len = len - tail;
		cnt++;
		if (tail) {
			iov[cnt].iov_base = dl_zeros;
			iov[cnt].iov_len = tail;
			cnt++;
		}
		bytes += len;
		next = ents[i].pgno + ents[i].npages;
	}
	if (cnt)
		return dl_writev_all(env->fd, iov, cnt, start);
	return 0;
}

/*
 * Current length of the data file in pages.  Reading a mapped page beyond
 * the end of the file raises SIGBUS, so page access is bounded by this (a
 * damaged or truncated file then gives an error instead of a crash).
 */
pgno_t dl_file_pages(MDB_env *env)
{
	struct stat st;
	if (env->flags & MDB_INMEMORY)
	{
		dl_fpages_set(env, env->maxpg);
		return env->maxpg;
	}
	if (fstat(env->fd, &st) < 0)
		return dl_fpages_get(env);
	pgno_t n = (pgno_t)st.st_size / env->psize;
	dl_fpages_set(env, n);
	return n;
}

int dl_map(MDB_env *env, size_t size)
{
	int prot = PROT_READ;
	if (env->flags & MDB_INMEMORY) {
		void *am = mmap(NULL, size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (am == MAP_FAILED)
			return errno;
		env->map = am;
		env->mapsize = size;
		env->maxpg = size / env->psize;
		dl_fpages_set(env, env->maxpg);
		return 0;
	}
	if ((env->flags & MDB_WRITEMAP) && !(env->flags & MDB_RDONLY)) {
		prot |= PROT_WRITE;
		/* A writable shared map needs the file to cover it. */
		off_t cur = lseek(env->fd, 0, SEEK_END);
		if (cur >= 0 && (size_t)cur < size && ftruncate(env->fd, (off_t)size) < 0)
			return errno;
	}
	/* MDB_FIXEDMAP: the recorded address is only a hint to mmap (forcing
	 * it could unmap whatever lives there); another address is EBUSY, as
	 * in stock LMDB. */
	void *m = mmap(env->fixaddr, size, prot, MAP_SHARED, env->fd, 0);
	if (m == MAP_FAILED)
		return errno;
	if (env->fixaddr && m != env->fixaddr) {
		munmap(m, size);
		return EBUSY;
	}
	if (env->flags & MDB_NORDAHEAD)
		madvise(m, size, MADV_RANDOM);
	env->map = m;
	env->mapsize = size;
	env->maxpg = size / env->psize;
	dl_file_pages(env);
	return 0;
}

void dl_unmap(MDB_env *env)
{
	if (env->map) {
		munmap(env->map, env->mapsize);
		env->map = NULL;
	}
}
