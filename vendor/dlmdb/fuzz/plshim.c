/*
 * plshim.c - LD_PRELOAD write log for power-loss tests.
 *
 * Records, in order, every write to one file (the data file named by
 * $PL_TARGET, an absolute path) and every sync of it, into the log file
 * $PL_LOG.  powerloss.c rebuilds disk images from the log as a power cut
 * at any point would have left them.  Intercepted: pwrite, pwrite64,
 * pwritev, pwritev64, write, fdatasync, fsync, ftruncate, ftruncate64.
 * A write through a descriptor opened with O_DSYNC or O_SYNC is durable
 * when it returns: it is logged as a write followed by a sync.  The program
 * under test marks points in the log (a commit returned) with pl_mark(),
 * found through dlsym(RTLD_DEFAULT, "pl_mark").
 *
 * Log record: u32 type, u32 reserved, u64 offset, u64 length, then
 * length bytes of data for PL_WRITE.  PL_TRUNC carries the new size in
 * offset; PL_MARK carries the caller's value in offset.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum { PL_WRITE = 1, PL_SYNC = 2, PL_TRUNC = 3, PL_MARK = 4 };

typedef struct pl_rec {
	uint32_t type, reserved;
	uint64_t off, len;
} pl_rec;

static pthread_mutex_t pl_lock = PTHREAD_MUTEX_INITIALIZER;
static int pl_fd = -2;

static void pl_raw_write(const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		long r = syscall(SYS_write, pl_fd, p, len);
		if (r <= 0)
			abort();	/* a lost record would make every image wrong */
		p += r;
		len -= (size_t)r;
	}
}

static int pl_log_open(void)
{
	if (pl_fd == -2) {
		const char *log = getenv("PL_LOG");
		pl_fd = log ? (int)syscall(SYS_openat, AT_FDCWD, log,
		    O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
	}
	return pl_fd >= 0;
}

/* Is fd the data file under test? */
static int pl_is_target(int fd)
{
	const char *t = getenv("PL_TARGET");
	char link[64], path[4096];
	if (!t || fd < 0)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return 0;
	path[n] = 0;
	return strcmp(path, t) == 0;
}

/* One record: its header, then the first len bytes of iov[0..cnt) (all of
 * them when the pieces hold fewer), however many pieces that takes. */
static void pl_record(uint32_t type, uint64_t off, const struct iovec *iov, int cnt, size_t len)
{
	pl_rec r = { type, 0, off, 0 };
	for (int i = 0; i < cnt && r.len < len; i++)
		r.len += iov[i].iov_len < len - r.len ? iov[i].iov_len : len - r.len;
	pl_raw_write(&r, sizeof(r));
	size_t left = r.len;
	for (int i = 0; i < cnt && left; i++) {
		size_t l = iov[i].iov_len < left ? iov[i].iov_len : left;
		pl_raw_write(iov[i].iov_base, l);
		left -= l;
	}
}

/* Log a completed write of n bytes at off (and a sync for O_DSYNC fds). */
static void pl_log_write(int fd, const struct iovec *iov, int cnt, uint64_t off, ssize_t n)
{
	if (n <= 0 || !pl_is_target(fd))
		return;
	pthread_mutex_lock(&pl_lock);
	if (pl_log_open()) {
		/* Only the n bytes that were written. */
		pl_record(PL_WRITE, off, iov, cnt, (size_t)n);
		int fl = fcntl(fd, F_GETFL);
		if (fl >= 0 && (fl & (O_DSYNC | O_SYNC)))
			pl_record(PL_SYNC, 0, NULL, 0, 0);
	}
	pthread_mutex_unlock(&pl_lock);
}

static void pl_log_simple(int fd, uint32_t type, uint64_t off)
{
	if (!pl_is_target(fd))
		return;
	pthread_mutex_lock(&pl_lock);
	if (pl_log_open())
		pl_record(type, off, NULL, 0, 0);
	pthread_mutex_unlock(&pl_lock);
}

void pl_mark(uint64_t value)
{
	pthread_mutex_lock(&pl_lock);
	if (pl_log_open())
		pl_record(PL_MARK, value, NULL, 0, 0);
	pthread_mutex_unlock(&pl_lock);
}

typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*pwritev_fn)(int, const struct iovec *, int, off_t);
typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef int (*sync_fn)(int);
typedef int (*trunc_fn)(int, off_t);

/* The next definition of name (libc's), looked up once. */
#define REAL(name, type) \
	static type real_##name; \
	if (!real_##name) \
		real_##name = (type)dlsym(RTLD_NEXT, #name)

ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
	REAL(pwrite, pwrite_fn);
	ssize_t n = real_pwrite(fd, buf, len, off);
	struct iovec v = { (void *)buf, len };
	pl_log_write(fd, &v, 1, (uint64_t)off, n);
	return n;
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off)
{
	REAL(pwrite64, pwrite_fn);
	ssize_t n = real_pwrite64(fd, buf, len, off);
	struct iovec v = { (void *)buf, len };
	pl_log_write(fd, &v, 1, (uint64_t)off, n);
	return n;
}

ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
	REAL(pwritev, pwritev_fn);
	ssize_t n = real_pwritev(fd, iov, cnt, off);
	pl_log_write(fd, iov, cnt, (uint64_t)off, n);
	return n;
}

ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off_t off)
{
	REAL(pwritev64, pwritev_fn);
	ssize_t n = real_pwritev64(fd, iov, cnt, off);
	pl_log_write(fd, iov, cnt, (uint64_t)off, n);
	return n;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	REAL(write, write_fn);
	off_t pos = pl_is_target(fd) ? lseek(fd, 0, SEEK_CUR) : 0;
	ssize_t n = real_write(fd, buf, len);
	struct iovec v = { (void *)buf, len };
	if (pos >= 0)
		pl_log_write(fd, &v, 1, (uint64_t)pos, n);
	return n;
}

int fdatasync(int fd)
{
	REAL(fdatasync, sync_fn);
	int rc = real_fdatasync(fd);
	if (!rc)
		pl_log_simple(fd, PL_SYNC, 0);
	return rc;
}

int fsync(int fd)
{
	REAL(fsync, sync_fn);
	int rc = real_fsync(fd);
	if (!rc)
		pl_log_simple(fd, PL_SYNC, 0);
	return rc;
}

int ftruncate(int fd, off_t size)
{
	REAL(ftruncate, trunc_fn);
	int rc = real_ftruncate(fd, size);
	if (!rc)
		pl_log_simple(fd, PL_TRUNC, (uint64_t)size);
	return rc;
}

int ftruncate64(int fd, off_t size)
{
	REAL(ftruncate64, trunc_fn);
	int rc = real_ftruncate64(fd, size);
	if (!rc)
		pl_log_simple(fd, PL_TRUNC, (uint64_t)size);
	return rc;
}
