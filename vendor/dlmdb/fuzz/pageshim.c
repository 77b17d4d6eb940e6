/*
 * pageshim.c - LD_PRELOAD shim that reports another system page size.
 *
 * LMDB-family engines give a new store the system's page size (stock LMDB
 * caps it at 32 KiB) and take an existing store's from its meta page, so a
 * store made on a 16 KiB-page machine (Apple silicon) or a 64 KiB one (some
 * ARM64 Linux kernels) has bigger pages than one made here.  With
 * DLMDB_SHIM_PAGE_SIZE=N in the environment, sysconf(_SC_PAGESIZE) and
 * getpagesize() answer N, and a program under this shim, stock LMDB's tools
 * included, makes such stores on this machine.  The real page size still
 * rules the kernel: N must be a multiple of it, which every size that
 * matters here (16384, 32768, 65536) is on a 4 KiB-page machine.
 *
 *   DLMDB_SHIM_PAGE_SIZE=16384 LD_PRELOAD=build/release/fuzz/pageshim.so mdb_load ...
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

static long shim_page_size(void)
{
	const char *v = getenv("DLMDB_SHIM_PAGE_SIZE");
	long n = v ? atol(v) : 0;
	return n > 0 ? n : 0;
}

long sysconf(int name)
{
	static long (*real)(int);
	long n;
	if (name == _SC_PAGESIZE && (n = shim_page_size()))
		return n;
	if (!real)
		real = (long (*)(int))dlsym(RTLD_NEXT, "sysconf");
	return real(name);
}

int getpagesize(void)
{
	long n = shim_page_size();
	return n ? (int)n : (int)sysconf(_SC_PAGESIZE);
}
