/*
 * misc.c - version, error strings, stock comparators and page-number lists.
 */
#include "internal.h"

#include <stdio.h>

char *mdb_version(int *major, int *minor, int *patch)
{
	if (major)
		*major = MDB_VERSION_MAJOR;
	if (minor)
		*minor = MDB_VERSION_MINOR;
	if (patch)
		*patch = MDB_VERSION_PATCH;
	return (char *)MDB_VERSION_STRING;
}

/* Indexed by (code - MDB_KEYEXIST); each text starts with the constant's name
 * because callers (and the stock tools' output) rely on that prefix. */
static const char *const dl_errstr[] = {
	"MDB_KEYEXIST: Key/data pair already exists",
	"MDB_NOTFOUND: No matching key/data pair found",
	"MDB_PAGE_NOTFOUND: Requested page not found",
	"MDB_CORRUPTED: Located page was wrong type",
	"MDB_PANIC: Update of meta page failed or environment had fatal error",
	"MDB_VERSION_MISMATCH: Database environment version mismatch",
	"MDB_INVALID: File is not an LMDB file",
	"MDB_MAP_FULL: Environment mapsize limit reached",
	"MDB_DBS_FULL: Environment maxdbs limit reached",
	"MDB_READERS_FULL: Environment maxreaders limit reached",
	"MDB_TLS_FULL: Thread-local storage keys full - too many environments open",
	"MDB_TXN_FULL: Transaction has too many dirty pages - transaction too big",
	"MDB_CURSOR_FULL: Internal error - cursor stack limit reached",
	"MDB_PAGE_FULL: Internal error - page has no more space",
	"MDB_MAP_RESIZED: Database contents grew beyond environment mapsize",
	"MDB_INCOMPATIBLE: Operation and DB incompatible, or DB flags changed",
	"MDB_BAD_RSLOT: Invalid reuse of reader locktable slot",
	"MDB_BAD_TXN: Transaction must abort, has a child, or is invalid",
	"MDB_BAD_VALSIZE: Unsupported size of key/DB name/data, or wrong DUPFIXED size",
	"MDB_BAD_DBI: The specified DBI handle was closed/changed unexpectedly",
	"MDB_PROBLEM: Unexpected problem - txn should abort",
	"MDB_DBIS_BUSY: Other database handles are open; close them first",
};

char *mdb_strerror(int err)
{
	if (err == 0)
		return (char *)"Successful return: 0";
	if (err >= MDB_KEYEXIST && err <= MDB_LAST_ERRCODE)
		return (char *)dl_errstr[err - MDB_KEYEXIST];
	if (err < 0)
		return (char *)"Invalid error code";
	return strerror(err);
}

/* ------------------------------------------------------------------------- */
/* Comparators (format doc §13).  Keys inside pages are only 2-byte aligned, */
/* so integers are loaded with memcpy.                                       */
/* ------------------------------------------------------------------------- */

int dl_cmp_lex(const MDB_val *a, const MDB_val *b)
{
	size_t n = a->mv_size < b->mv_size ? a->mv_size : b->mv_size;
	int r = n ? memcmp(a->mv_data, b->mv_data, n) : 0;
	if (r)
		return r;
	return a->mv_size < b->mv_size ? -1 : a->mv_size > b->mv_size;
}

int dl_cmp_rev(const MDB_val *a, const MDB_val *b)
{
	const unsigned char *pa = (const unsigned char *)a->mv_data + a->mv_size;
	const unsigned char *pb = (const unsigned char *)b->mv_data + b->mv_size;
	size_t n = a->mv_size < b->mv_size ? a->mv_size : b->mv_size;
	while (n--) {
		int d = (int)*--pa - (int)*--pb;
		if (d)
			return d;
	}
	return a->mv_size < b->mv_size ? -1 : a->mv_size > b->mv_size;
}

/* Native unsigned int or size_t; the size of a decides (mixing is undefined). */
int dl_cmp_int(const MDB_val *a, const MDB_val *b)
{
	if (a->mv_size == sizeof(uint64_t) && b->mv_size == sizeof(uint64_t)) {
		uint64_t x, y;
		memcpy(&x, a->mv_data, 8);
		memcpy(&y, b->mv_data, 8);
		return x < y ? -1 : x > y;
	}
	if (a->mv_size == sizeof(unsigned) && b->mv_size == sizeof(unsigned)) {
		unsigned x, y;
		memcpy(&x, a->mv_data, 4);
		memcpy(&y, b->mv_data, 4);
		return x < y ? -1 : x > y;
	}
	/* Sizes differ or are unusual: order little-endian numbers from the
	 * most significant byte, which is what reverse byte order gives. */
	return dl_cmp_rev(a, b);
}

/* FREE_DBI keys: always 8-byte unsigned. */
int dl_cmp_u64(const MDB_val *a, const MDB_val *b)
{
	return dl_cmp_int(a, b);
}

MDB_cmp_func *dl_default_cmp(unsigned flags)
{
	if (flags & MDB_REVERSEKEY)
		return dl_cmp_rev;
	if (flags & MDB_INTEGERKEY)
		return dl_cmp_int;
	return dl_cmp_lex;
}

MDB_cmp_func *dl_default_dcmp(unsigned flags)
{
	if (!(flags & MDB_DUPSORT))
		return NULL;
	if (flags & MDB_INTEGERDUP)
		return dl_cmp_int;
	if (flags & MDB_REVERSEDUP)
		return dl_cmp_rev;
	return dl_cmp_lex;
}

/* ------------------------------------------------------------------------- */
/* Page-number lists                                                         */
/* ------------------------------------------------------------------------- */

int dl_idl_reserve(dl_idl *l, size_t extra)
{
	if (l->n + extra <= l->cap)
		return 0;
	size_t cap = l->cap ? l->cap : 64;
	while (cap < l->n + extra)
		cap *= 2;
	pgno_t *ids = realloc(l->ids, cap * sizeof(pgno_t));
	if (!ids)
		return ENOMEM;
	l->ids = ids;
	l->cap = cap;
	return 0;
}

int dl_idl_push(dl_idl *l, pgno_t id)
{
	if (l->n == l->cap) {
		int rc = dl_idl_reserve(l, 1);
		if (rc)
			return rc;
	}
	l->ids[l->n++] = id;
	return 0;
}

/*
 * Sort a[0..n) ascending, using tmp[0..n) as scratch.  Short arrays get an
 * insertion sort; longer ones a radix sort on bytes from the least
 * significant up, which skips every byte position where all keys agree
 * (page numbers of one store share their high bytes): a few linear passes
 * where a comparison sort through a function pointer ran n log n calls.
 */
void dl_sort_u64(uint64_t *a, uint64_t *tmp, size_t n)
{
	size_t i = 1;
	while (i < n && a[i - 1] <= a[i])
		i++;
	if (i >= n)
		return;
	if (n <= 32) {
		for (; i < n; i++) {
			uint64_t v = a[i];
			size_t j = i;
			for (; j && a[j - 1] > v; j--)
				a[j] = a[j - 1];
			a[j] = v;
		}
		return;
	}
	uint64_t any = 0, all = ~(uint64_t)0;
	for (i = 0; i < n; i++) {
		any |= a[i];
		all &= a[i];
	}
	uint64_t differ = any ^ all;
	uint64_t *src = a, *dst = tmp;
	for (unsigned sh = 0; sh < 64; sh += 8) {
		if (!((differ >> sh) & 0xff))
			continue;
		size_t pos[256] = { 0 };
		for (i = 0; i < n; i++)
			pos[(src[i] >> sh) & 0xff]++;
		for (size_t b = 0, sum = 0; b < 256; b++) {
			size_t c = pos[b];
			pos[b] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[pos[(src[i] >> sh) & 0xff]++] = src[i];
		uint64_t *t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(uint64_t));
}

static int dl_cmp_desc(const void *a, const void *b)
{
	pgno_t x = *(const pgno_t *)a, y = *(const pgno_t *)b;
	return x > y ? -1 : x < y;
}

void dl_idl_sort_desc(dl_idl *l)
{
	size_t n = l->n, i = 1;
	pgno_t *ids = l->ids;
	while (i < n && ids[i - 1] >= ids[i])
		i++;
	if (i >= n)
		return;	/* already in order: the common case of a re-sort */
	uint64_t *tmp = malloc(n * sizeof(uint64_t));
	if (!tmp) {
		qsort(ids, n, sizeof(pgno_t), dl_cmp_desc);
		return;
	}
	dl_sort_u64(ids, tmp, n);
	free(tmp);
	for (size_t lo = 0, hi = n - 1; lo < hi; lo++, hi--) {
		pgno_t t = ids[lo];
		ids[lo] = ids[hi];
		ids[hi] = t;
	}
}

void dl_idl_free(dl_idl *l)
{
	free(l->ids);
	l->ids = NULL;
	l->n = l->cap = 0;
}
