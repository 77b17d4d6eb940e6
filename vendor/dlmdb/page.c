/*
 * page.c - page access for transactions: the dirty-page table of a write
 * transaction, recycled page buffers, allocation, freeing and copy-on-write.
 */
#include "internal.h"

#include <sys/mman.h>

/* ------------------------------------------------------------------------- */
/* Dirty table: open addressing keyed by pgno, linear probing, backward-shift */
/* deletion so lookups never see tombstones.                                 */
/* ------------------------------------------------------------------------- */

static inline size_t dl_hash(pgno_t pg, size_t mask)
{
	return (size_t)((pg * 0x9E3779B97F4A7C15ull) >> 29) & mask;
}

/* Slot holding pgno, or the empty slot where the probe ended. */
static inline size_t dl_dirty_slot(const dl_dirty *d, pgno_t pgno)
{
	size_t i = dl_hash(pgno, d->mask);
	while (d->tab[i] && d->ents[d->tab[i] - 1].pgno != pgno)
		i = (i + 1) & d->mask;
	return i;
}

MDB_page *dl_dirty_find(dl_dirty *d, pgno_t pgno, unsigned *npages)
{
	if (!d->count)
		return NULL;
	size_t i = dl_dirty_slot(d, pgno);
	if (!d->tab[i])
		return NULL;
	dl_dent *e = &d->ents[d->tab[i] - 1];
	if (npages)
		*npages = e->npages;
	return e->page;
}

static int dl_dirty_rehash(dl_dirty *d, size_t ncap)
{
	uint32_t *nt = calloc(ncap, sizeof(uint32_t));
	if (!nt)
		return ENOMEM;
	free(d->tab);
	d->tab = nt;
	d->mask = ncap - 1;
	for (size_t k = 0; k < d->count; k++) {
		size_t i = dl_hash(d->ents[k].pgno, d->mask);
		while (d->tab[i])
			i = (i + 1) & d->mask;
		d->tab[i] = (uint32_t)(k + 1);
	}
	return 0;
}

int dl_dirty_add(dl_dirty *d, pgno_t pgno, MDB_page *mp, unsigned npages)
{
	int rc;
	if (d->count == d->cap) {
		size_t ncap = d->cap ? d->cap * 2 : 256;
		dl_dent *ne = realloc(d->ents, ncap * sizeof(dl_dent));
		if (!ne)
			return ENOMEM;
		d->ents = ne;
		d->cap = ncap;
	}
	if (!d->tab || (d->count + 1) * 2 > d->mask + 1) {
		if ((rc = dl_dirty_rehash(d, d->tab ? (d->mask + 1) * 2 : 512)))
			return rc;
	}
	dl_dent *e = &d->ents[d->count];
	e->pgno = pgno;
	e->page = mp;
	e->npages = npages;
	e->stamp = ++d->clock;
	size_t i = dl_hash(pgno, d->mask);
	while (d->tab[i])
		i = (i + 1) & d->mask;
	d->tab[i] = (uint32_t)(++d->count);
	return 0;
}

int dl_dirty_del(dl_dirty *d, pgno_t pgno)
{
	if (!d->count)
		return MDB_NOTFOUND;
	size_t i = dl_dirty_slot(d, pgno);
	if (!d->tab[i])
		return MDB_NOTFOUND;
	size_t idx = d->tab[i] - 1;
	/* Backward-shift deletion keeps probe chains unbroken. */
	size_t j = i;
	for (;;) {
		j = (j + 1) & d->mask;
		if (!d->tab[j])
			break;
		size_t h = dl_hash(d->ents[d->tab[j] - 1].pgno, d->mask);
		if ((i <= j) ? (h <= i || h > j) : (h <= i && h > j)) {
			d->tab[i] = d->tab[j];
			i = j;
		}
	}
	d->tab[i] = 0;
	/* Keep the entry array dense: move the last entry into the hole. */
	size_t last = d->count - 1;
	if (idx != last) {
		d->ents[idx] = d->ents[last];
		size_t s = dl_dirty_slot(d, d->ents[idx].pgno);
		d->tab[s] = (uint32_t)(idx + 1);
	}
	d->count--;
	return 0;
}

/* Put mp under pgno, returning the page it replaces (NULL if none). */
MDB_page *dl_dirty_swap(dl_dirty *d, pgno_t pgno, MDB_page *mp, unsigned npages, unsigned *oldn)
{
	if (d->count) {
		size_t i = dl_dirty_slot(d, pgno);
		if (d->tab[i]) {
			dl_dent *e = &d->ents[d->tab[i] - 1];
			MDB_page *old = e->page;
			*oldn = e->npages;
			e->page = mp;
			e->npages = npages;
			e->stamp = ++d->clock;
			return old;
		}
	}
	if (dl_dirty_add(d, pgno, mp, npages))
		return (MDB_page *)-1;
	return NULL;
}

/* Return every buffer to the pool and empty the table (keeps its memory). */
void dl_dirty_free(MDB_env *env, dl_dirty *d)
{
	if (!d->tab)
		return;
	for (size_t k = 0; k < d->count; k++)
		dl_buf_put(env, d->ents[k].page, d->ents[k].npages);
	if (d->count * 8 < d->mask + 1) {
		/* Few entries in a big table: clear just their slots.  The probe
		 * must not stop at slots already cleared. */
		for (size_t k = 0; k < d->count; k++) {
			size_t i = dl_hash(d->ents[k].pgno, d->mask);
			while (d->tab[i] != k + 1)
				i = (i + 1) & d->mask;
			d->tab[i] = 0;
		}
	} else {
		memset(d->tab, 0, (d->mask + 1) * sizeof(uint32_t));
	}
	d->count = 0;
	/* Let go of what a huge txn blew up, so idle memory stays bounded. */
	if (d->mask + 1 > 65536) {
		free(d->tab);
		d->tab = NULL;
		d->mask = 0;
		free(d->ents);
		d->ents = NULL;
		d->cap = 0;
	}
}

static int dl_dent_cmp(const void *a, const void *b)
{
	pgno_t x = ((const dl_dent *)a)->pgno, y = ((const dl_dent *)b)->pgno;
	return x < y ? -1 : x > y;
}

/*
 * dst[0..n) = src[0..n) in ascending page-number order (the arrays must not
 * overlap).  A radix sort runs on 64-bit keys holding an entry's page
 * number above its index; qsort remains for page numbers too large for
 * those keys and for a failed allocation.
 */
void dl_dents_by_pgno(const dl_dent *src, size_t n, dl_dent *dst)
{
	unsigned ib = 0;
	while (ib < 64 && ((size_t)1 << ib) < n)
		ib++;
	pgno_t high = 0;
	for (size_t k = 0; k < n; k++)
		high |= src[k].pgno;
	uint64_t *keys = NULL;
	if (n < 2 || ib >= 64 || (high >> (64 - ib)) ||
	    !(keys = malloc(2 * n * sizeof(uint64_t)))) {
		memcpy(dst, src, n * sizeof(*dst));
		if (n > 1)
			qsort(dst, n, sizeof(*dst), dl_dent_cmp);
		return;
	}
	for (size_t k = 0; k < n; k++)
		keys[k] = (src[k].pgno << ib) | k;
	dl_sort_u64(keys, keys + n, n);
	uint64_t mask = ((uint64_t)1 << ib) - 1;
	for (size_t k = 0; k < n; k++)
		dst[k] = src[keys[k] & mask];
	free(keys);
}

/* ------------------------------------------------------------------------- */
/* Page buffers                                                              */
/* ------------------------------------------------------------------------- */

/*
 * Single-page buffers come from slabs: anonymous maps of DL_SLAB_BYTES,
 * aligned to their size (so a buffer's slab is its address rounded down).
 * Slab memory arrives zeroed from the kernel, so a fresh buffer needs no
 * memset.  Buffers are DL_SLAB_GAP bytes apart: were they page-aligned,
 * every page header (read on each visit) would fall in the same few sets
 * of each cache and evict the others.  Slabs are not marked for
 * transparent huge pages: the kernel zeroing 2 MiB at a time cost a
 * 12M-put ascending txn more system time than the fewer TLB misses saved
 * (BENCHMARKS.md, "One write transaction larger than the dirty limit").
 *
 * Slabs only pay once an env holds many buffers: the first DL_SLAB_AFTER
 * come from malloc, which hands a process's freed memory back to the next
 * env without page faults, where a fresh slab faults in (and zeroes) every
 * page.  Small transactions never reach slabs.
 *
 * Like LMDB, every single-page buffer a txn used is kept (in env->pagepool)
 * until the env closes: re-faulting fresh memory on each commit costs far
 * more than holding it.
 */
#define DL_SLAB_BYTES	((size_t)2 << 20)
#define DL_SLAB_GAP	64
#define DL_SLAB_AFTER	8192

/* Under AddressSanitizer each buffer is its own malloc, so an access past
 * a page's end is still caught. */
#if defined(__SANITIZE_ADDRESS__)
#define DL_SLABS	0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DL_SLABS	0
#endif
#endif
#ifndef DL_SLABS
#define DL_SLABS	1
#endif

static int dl_slab_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
	return x < y ? -1 : x > y;
}

/* Whether buffer mp was cut from one of the env's slabs (sorted). */
static int dl_in_slab(const MDB_env *env, const MDB_page *mp)
{
	void *base = (void *)((uintptr_t)mp & ~(uintptr_t)(DL_SLAB_BYTES - 1));
	return env->nslabs &&
	    bsearch(&base, env->slabs, env->nslabs, sizeof(void *), dl_slab_cmp) != NULL;
}

static void dl_ov_retire(MDB_env *env);

void dl_buf_release(MDB_env *env)
{
	if (env->nslabs)
		qsort(env->slabs, env->nslabs, sizeof(void *), dl_slab_cmp);
	while (env->pagepool) {
		MDB_page *p = env->pagepool;
		memcpy(&env->pagepool, p, sizeof(MDB_page *));
		if (!dl_in_slab(env, p))
			free(p);
	}
	for (size_t i = 0; i < env->nslabs; i++)
		munmap(env->slabs[i], DL_SLAB_BYTES);
	if (env->ovbase)
		dl_ov_retire(env);
	free(env->ovfree);
	env->ovbase = NULL;
	env->ovfree = NULL;
	env->ovlen = env->ovused = env->ovtouched = env->ovheap = 0;
	env->ovpeak = env->ovkeep = 0;
	free(env->slabs);
	env->slabs = NULL;
	env->nslabs = env->slabcap = 0;
	env->slabnext = NULL;
	env->slableft = 0;
	env->pagepool = NULL;
	env->npool = 0;
	env->nbufs = 0;
}

static MDB_page *dl_slab_take(MDB_env *env)
{
	size_t ps = env->psize;
	if (env->slableft < ps) {
		if (env->nslabs == env->slabcap) {
			size_t nc = env->slabcap ? env->slabcap * 2 : 16;
			void **ns = realloc(env->slabs, nc * sizeof(*ns));
			if (!ns)
				return NULL;
			env->slabs = ns;
			env->slabcap = nc;
		}
		/* Map one slab more than needed and trim, for the alignment. */
		size_t len = 2 * DL_SLAB_BYTES;
		char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		size_t head = (DL_SLAB_BYTES - (uintptr_t)m % DL_SLAB_BYTES) % DL_SLAB_BYTES;
		if (head)
			munmap(m, head);
		munmap(m + head + DL_SLAB_BYTES, DL_SLAB_BYTES - head);
		m += head;
		env->slabs[env->nslabs++] = m;
		env->slabnext = m;
		env->slableft = DL_SLAB_BYTES;
	}
	MDB_page *mp = (MDB_page *)env->slabnext;
	size_t step = ps + DL_SLAB_GAP;
	env->slabnext += step;
	env->slableft = env->slableft > step ? env->slableft - step : 0;
	return mp;
}

/*
 * Overflow runs of a big write txn are cut from one reserved anonymous
 * region instead of malloc.  Each malloc'd run is fresh memory the kernel
 * faults in page by page, and the commit's free() hands it back (glibc
 * trims the heap top), so every txn of large values faulted all its runs
 * in again; the region is marked for transparent huge pages, so one fault
 * maps 2 MiB.  An env reserves a new region only once a txn holds
 * DL_OV_AFTER bytes of runs from malloc, as zeroing a whole huge page for
 * a few values would cost more than it saves; a region a closed env left
 * waiting (already faulted in) is taken at the first run.  Released runs
 * are reused by page count (runs longer than DL_OV_MAXPAGES stay on
 * malloc), and the region is rewound when the top txn ends, keeping as
 * much faulted in as recent txns used (dl_ov_trim).  Without huge pages
 * (DL_OV_HUGE=0, or the kernel's THP off) the region faults like malloc'd
 * memory.
 */
#ifndef DL_OVARENA
#if UINTPTR_MAX > 0xffffffffu && DL_SLABS
#define DL_OVARENA	1
#else
#define DL_OVARENA	0
#endif
#endif
#ifndef DL_OV_HUGE
#define DL_OV_HUGE	1
#endif
#define DL_OV_RESERVE	((size_t)1 << 30)
#define DL_OV_ALIGN	((size_t)2 << 20)
#define DL_OV_AFTER	((size_t)2 << 20)
#ifndef DL_OV_KEEP_MAX
#define DL_OV_KEEP_MAX	((size_t)32 << 20)
#endif
#define DL_OV_MAXPAGES	32

static int dl_in_ov(const MDB_env *env, const MDB_page *mp)
{
	return env->ovbase && (const char *)mp >= env->ovbase &&
	    (const char *)mp < env->ovbase + env->ovlen;
}

/*
 * A closed env's region, with its first dl_ov_spare_touched bytes still
 * faulted in, waits here for the next env that needs one, as an allocator
 * keeps freed memory for the next request: without it every env (each row
 * of a benchmark, each open of a short-lived env) zeroed and faulted its
 * region afresh.  At most one region waits, with at most DL_OV_KEEP_MAX
 * bytes faulted in; the process's exit unmaps it, dl_ov_spare_drop sooner.
 * The slot is one pointer, taken and filled by atomic exchanges, so no
 * lock is ever held (a fork at any moment leaves nothing locked); while a
 * region waits, its first word says how much of it is faulted in.
 * -DDL_OV_SPARE=0 unmaps every region when its env closes.
 */
#ifndef DL_OV_SPARE
#define DL_OV_SPARE	1
#endif
static char *dl_ov_spare;

/*
 * Hand back what the region holds past what the next txn is likely to use,
 * the way an allocator's heap keeps memory a program keeps reusing: the
 * most the last top txn used or half of what was kept before, whichever is
 * larger, so a run of txns of one size faults nothing after the first and
 * one big txn's memory halves with each smaller txn after it (decay: a top
 * txn ended; not when the env closes, whose region may serve the next env).
 * At most DL_OV_KEEP_MAX stays faulted in (an idle env or the waiting
 * region holds no more); a txn using more faults the rest in.  The kept
 * part ends on a huge-page boundary: a partly released huge page is split
 * into small pages, and its released part then faults back one small page
 * at a time.
 */
static void dl_ov_trim(MDB_env *env, int decay)
{
	size_t keep = env->ovkeep;
	if (decay)
		keep /= 2;
	if (env->ovpeak > keep)
		keep = env->ovpeak;
	keep = (keep + DL_OV_ALIGN - 1) / DL_OV_ALIGN * DL_OV_ALIGN;
	if (keep > DL_OV_KEEP_MAX)
		keep = DL_OV_KEEP_MAX;
	env->ovkeep = keep;
	env->ovpeak = 0;
	if (env->ovtouched <= keep)
		return;
	size_t end = (env->ovtouched + DL_OV_ALIGN - 1) / DL_OV_ALIGN * DL_OV_ALIGN;
	if (end > env->ovlen)
		end = env->ovlen;
	madvise(env->ovbase + keep, end - keep, MADV_DONTNEED);
	env->ovtouched = keep;
}

/* Take the waiting region, if any, with the bytes of it faulted in. */
static char *dl_ov_spare_take(size_t *touched)
{
	*touched = 0;
	/* Most calls find none: a plain load, no exchange, then. */
	if (!DL_OV_SPARE || !__atomic_load_n(&dl_ov_spare, __ATOMIC_RELAXED))
		return NULL;
	char *m = __atomic_exchange_n(&dl_ov_spare, NULL, __ATOMIC_ACQUIRE);
	if (m)
		memcpy(touched, m, sizeof(*touched));
	return m;
}

/* Leave region m, its first touched bytes faulted in, waiting; unmap it
 * when another already waits or nothing of it is faulted in (writing its
 * first word would then fault a page for nothing). */
static void dl_ov_retire_region(char *m, size_t touched)
{
	char *none = NULL;
	if (DL_OV_SPARE && touched >= sizeof(touched)) {
		memcpy(m, &touched, sizeof(touched));
		if (__atomic_compare_exchange_n(&dl_ov_spare, &none, m, 0, __ATOMIC_RELEASE,
		    __ATOMIC_RELAXED))
			return;
	}
	munmap(m, DL_OV_RESERVE);
}

/* The env closes: leave its region waiting (no txn can still use its runs),
 * or unmap it when another region already waits. */
static void dl_ov_retire(MDB_env *env)
{
	dl_ov_trim(env, 0);
	dl_ov_retire_region(env->ovbase, env->ovtouched);
}

/* Unmap the waiting region (measurements compare envs with and without). */
void dl_ov_spare_drop(void)
{
	size_t touched;
	char *m = dl_ov_spare_take(&touched);
	if (m)
		munmap(m, DL_OV_RESERVE);
}

/* Give env a region: the waiting one, or (when fresh) a new one. */
static int dl_ov_reserve(MDB_env *env, int fresh)
{
	size_t touched;
	char *spare = dl_ov_spare_take(&touched);
	if (!spare && !fresh)
		return -1;
	MDB_page **fl = calloc(DL_OV_MAXPAGES + 1, sizeof(*fl));
	if (!fl) {
		if (spare)
			dl_ov_retire_region(spare, touched);
		return -1;
	}
	if (spare) {
		env->ovbase = spare;
		env->ovlen = DL_OV_RESERVE;
		env->ovused = env->ovpeak = 0;
		env->ovtouched = env->ovkeep = touched;
		env->ovfree = fl;
		return 0;
	}
	size_t len = DL_OV_RESERVE + DL_OV_ALIGN;
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED) {
		free(fl);
		env->ovnomap = 1;
		return -1;
	}
	size_t head = (DL_OV_ALIGN - (uintptr_t)m % DL_OV_ALIGN) % DL_OV_ALIGN;
	if (head)
		munmap(m, head);
	munmap(m + head + DL_OV_RESERVE, DL_OV_ALIGN - head);
	m += head;
#if DL_OV_HUGE && defined(MADV_HUGEPAGE)
	madvise(m, DL_OV_RESERVE, MADV_HUGEPAGE);
#endif
	env->ovbase = m;
	env->ovlen = DL_OV_RESERVE;
	env->ovused = env->ovtouched = env->ovpeak = env->ovkeep = 0;
	env->ovfree = fl;
	return 0;
}

static MDB_page *dl_ov_take(MDB_env *env, unsigned npages, size_t sz)
{
	if (!env->ovbase && (env->ovnomap ||
	    dl_ov_reserve(env, env->ovheap >= DL_OV_AFTER)))
		return NULL;
	MDB_page *mp = env->ovfree[npages];
	if (mp) {
		memcpy(&env->ovfree[npages], mp, sizeof(MDB_page *));
		return mp;
	}
	if (env->ovlen - env->ovused < sz)
		return NULL;
	mp = (MDB_page *)(env->ovbase + env->ovused);
	env->ovused += sz;
	if (env->ovused > env->ovpeak) {
		env->ovpeak = env->ovused;
		if (env->ovused > env->ovtouched)
			env->ovtouched = env->ovused;
	}
	return mp;
}

static void dl_ov_give(MDB_env *env, MDB_page *mp, unsigned npages, size_t sz)
{
	if ((char *)mp + sz == env->ovbase + env->ovused) {
		env->ovused -= sz;
	} else {
		memcpy(mp, &env->ovfree[npages], sizeof(MDB_page *));
		env->ovfree[npages] = mp;
	}
}

/* The top write txn ended: every run it held is back, so rewind. */
void dl_ov_rewind(MDB_env *env)
{
	env->ovheap = 0;
	if (!env->ovbase)
		return;
	env->ovused = 0;
	memset(env->ovfree, 0, (DL_OV_MAXPAGES + 1) * sizeof(*env->ovfree));
	dl_ov_trim(env, 1);
}

MDB_page *dl_buf_get(MDB_env *env, unsigned npages)
{
	MDB_page *mp;
	if (npages == 1) {
		if (env->pagepool) {
			mp = env->pagepool;
			memcpy(&env->pagepool, mp, sizeof(MDB_page *));
			env->npool--;
			return mp;
		}
		if (DL_SLABS && env->psize <= DL_SLAB_BYTES && env->nbufs >= DL_SLAB_AFTER)
			return dl_slab_take(env);
		env->nbufs++;
	}
	/* Multi-page runs are overflow pages: their writer copies the value in
	 * and zeroes only the slack after it (zeroing the whole run first cost
	 * more than the copy itself). */
	size_t sz = (size_t)env->psize * npages;
	if (npages > 1) {
		if (DL_OVARENA && npages <= DL_OV_MAXPAGES &&
		    (mp = dl_ov_take(env, npages, sz)))
			return mp;
		if ((mp = malloc(sz)))
			env->ovheap += sz;
		return mp;
	}
	mp = malloc(sz);
	if (mp && !(env->flags & MDB_NOMEMINIT))
		memset(mp, 0, sz);
	return mp;
}

void dl_buf_put(MDB_env *env, MDB_page *mp, unsigned npages)
{
	if (npages == 1) {
		memcpy(mp, &env->pagepool, sizeof(MDB_page *));
		env->pagepool = mp;
		env->npool++;
	} else if (dl_in_ov(env, mp)) {
		dl_ov_give(env, mp, npages, (size_t)env->psize * npages);
	} else {
		env->ovheap -= (size_t)env->psize * npages;
		free(mp);
	}
}

/* ------------------------------------------------------------------------- */
/* Access                                                                    */
/* ------------------------------------------------------------------------- */

/*
 * Page pgno as txn sees it.  snaplink: the number was read out of a page
 * of the snapshot, so a page this txn or an ancestor holds (dirty or
 * spilled) is damage (see dl_page_get_ref): MDB_CORRUPTED.
 */
static inline __attribute__((always_inline)) int dl_page_find(MDB_txn *txn, pgno_t pgno,
	MDB_page **ret, int snaplink)
{
	if (pgno < 2 || pgno >= txn->next_pgno)
		return MDB_PAGE_NOTFOUND;
	dl_dirty *d = &txn->dirty;
	if (d->count) {
		size_t i = dl_dirty_slot(d, pgno);
		if (d->tab[i]) {
			if (snaplink)
				return MDB_CORRUPTED;
			/* A use: the page moves to the back of the spill order. */
			dl_dent *e = &d->ents[d->tab[i] - 1];
			e->stamp = ++d->clock;
			*ret = e->page;
			return 0;
		}
	}
	/* Nested txn: pages the ancestors changed shadow the map. */
	if (txn->parent && snaplink) {
		if (dl_ancestor_holds(txn, pgno))
			return MDB_CORRUPTED;
	} else if (txn->parent) {
		for (MDB_txn *p = txn->parent; p; p = p->parent) {
			MDB_page *mp = dl_dirty_find(&p->dirty, pgno, NULL);
			if (mp) {
				*ret = mp;
				return 0;
			}
		}
	}
	if (pgno >= txn->fpages)
		return MDB_PAGE_NOTFOUND;	/* beyond the end of the file */
	if (txn->spilled.count && snaplink) {
		if (dl_spilled_has(&txn->spilled, pgno))
			return MDB_CORRUPTED;
	} else if (txn->spilled.count) {
		/* A page this txn spilled comes back into its dirty table by
		 * pread, so its file pages are not mapped in (spill.c). */
		MDB_page *mp = NULL;
		int rc = dl_spilled_load(txn, pgno, &mp);
		if (rc)
			return dl_txn_err(txn, rc);
		if (mp) {
			*ret = mp;
			return 0;
		}
	}
	*ret = (MDB_page *)(txn->env->map + (size_t)pgno * txn->env->psize);
	return 0;
}

int dl_page_get(MDB_txn *txn, pgno_t pgno, MDB_page **ret)
{
	return dl_page_find(txn, pgno, ret, 0);
}

/* dl_page_get_ref (internal.h) for from in the map. */
int dl_page_get_mapped_ref(MDB_txn *txn, const void *from, pgno_t pgno, MDB_page **ret)
{
	if (!dl_in_snapshot_page(txn, from))
		return dl_page_get(txn, pgno, ret);
	if (pgno >= txn->snap_pages)
		return MDB_PAGE_NOTFOUND;
	return dl_page_find(txn, pgno, ret, 1);
}

/* dl_in_snapshot_page for p in the map: not a page this txn or an
 * ancestor spilled. */
int dl_mapped_not_spilled(const MDB_txn *txn, const void *p)
{
	const MDB_env *env = txn->env;
	pgno_t pg = (pgno_t)((size_t)((const char *)p - env->map) / env->psize);
	for (const MDB_txn *t = txn; t; t = t->parent)
		if (t->spilled.count && dl_spilled_has(&t->spilled, pg))
			return 0;
	return 1;
}

/*
 * A LEAF2 page (packed fixed-size duplicates) reached by cursor mc's
 * descent: only the sub-tree of a DUPFIXED duplicate set has them (every
 * other leaf is read as nodes, and the plain scan step relies on that);
 * its item size mp_pad must be non-zero, agree with the sub-database
 * record's item size when that is known, and its items must fit in the
 * page, or the items handed out would run past the page.
 */
int dl_leaf2_page_check(const MDB_cursor *mc, MDB_page *mp)
{
	const MDB_db *db = mc->db;
	size_t k = mp->mp_pad;
	if (!dl_cursor_subtree(mc) || !(db->md_flags & MDB_DUPFIXED) || !k ||
	    (db->md_pad && k != db->md_pad) || !dl_bounds_ok(mp, mc->txn->env->psize, k))
		return MDB_CORRUPTED;
	return 0;
}

/* Errors that leave the transaction unusable. */
int dl_txn_err(MDB_txn *txn, int rc)
{
	switch (rc) {
	case 0:
	case MDB_NOTFOUND:
	case MDB_KEYEXIST:
	case MDB_BAD_VALSIZE:
	case EINVAL:
	case EACCES:
	case MDB_INCOMPATIBLE:
		break;
	default:
		if (!(txn->flags & TXN_RDONLY)) {
			txn->flags |= TXN_ERROR;
			if (!txn->lasterr)
				txn->lasterr = rc;
		}
	}
	return rc;
}

/* Mark the txn failed whatever the error (e.g. mdb_del on a DB record). */
int dl_txn_fail(MDB_txn *txn, int rc)
{
	if (!(txn->flags & TXN_RDONLY)) {
		txn->flags |= TXN_ERROR;
		if (!txn->lasterr)
			txn->lasterr = rc;
	}
	return rc;
}

static void dl_wchecked_drop(MDB_env *env, pgno_t pg, unsigned num);

/* Remove a run of num consecutive pages from the reusable pool, if present. */
static pgno_t dl_pool_take(dl_idl *pool, unsigned num)
{
	size_t n = pool->n;
	if (!n)
		return P_INVALID;
	if (num == 1) {
		/* Smallest page first keeps the file compact. */
		return pool->ids[--pool->n];
	}
	/* ids are descending: a run of num pages is ids[i] .. ids[i+num-1]
	 * with ids[i] - ids[i+num-1] == num - 1. */
	if (n < num)
		return P_INVALID;
	for (size_t lo = n - 1; ; lo--) {
		size_t hi = lo + 1 - num;
		if (pool->ids[hi] - pool->ids[lo] == num - 1) {
			pgno_t pg = pool->ids[lo];
			memmove(pool->ids + hi, pool->ids + lo + 1,
			    (n - lo - 1) * sizeof(pgno_t));
			pool->n -= num;
			return pg;
		}
		if (lo == num - 1)
			break;
	}
	return P_INVALID;
}

int dl_page_alloc(MDB_cursor *mc, unsigned num, MDB_page **ret)
{
	MDB_txn *txn = mc->txn;
	MDB_env *env = txn->env;
	pgno_t pgno = P_INVALID;
	int rc;

	if (num == 1 && txn->loose.n) {
		pgno = txn->loose.ids[--txn->loose.n];
	} else {
		for (;;) {
			pgno = dl_pool_take(&txn->pool, num);
			if (pgno != P_INVALID)
				break;
			if (txn->fl_done || (txn->flags & TXN_SAVING))
				break;
			int got = 0;
			if ((rc = dl_fl_load_more(txn, &got)))
				return dl_txn_err(txn, rc);
			if (!got)
				break;
		}
		if (pgno == P_INVALID) {
			/* Never hand out the map's very last page (format doc §8). */
			if (txn->next_pgno + num > env->maxpg - 1)
				return dl_txn_err(txn, MDB_MAP_FULL);
			pgno = txn->next_pgno;
			txn->next_pgno += num;
		}
	}
	dl_wchecked_drop(env, pgno, num);
	MDB_page *mp = dl_buf_get(env, num);
	if (!mp)
		return dl_txn_err(txn, ENOMEM);
	mp->mp_pgno = pgno;
	mp->mp_pad = 0;
	mp->mp_flags = P_DIRTY;
	if ((rc = dl_dirty_add(&txn->dirty, pgno, mp, num))) {
		dl_buf_put(env, mp, num);
		return dl_txn_err(txn, rc);
	}
	txn->flags |= TXN_DIRTY;
	*ret = mp;
	return 0;
}

/*
 * Release pages.  Pages allocated by this txn are reusable at once (loose),
 * whether still in memory or already spilled; pages of the snapshot are
 * recorded as freed by this txn.
 */
int dl_page_free(MDB_txn *txn, pgno_t pgno, unsigned num)
{
	unsigned dn;
	int rc;
	MDB_page *mp = dl_dirty_find(&txn->dirty, pgno, &dn);
	txn->flags |= TXN_DIRTY;
	if (txn->parent && dl_ancestor_holds(txn, pgno)) {
		/* Still the ancestor's page: hand it back when this txn commits. */
		if (mp) {
			dl_dirty_del(&txn->dirty, pgno);
			dl_buf_put(txn->env, mp, dn);
		}
		/* Record the run's first page; its length is in the ancestor's
		 * dirty table, or in the run's header in the map if spilled. */
		return dl_idl_push(&txn->ploose, pgno);
	}
	if (mp) {
		dl_dirty_del(&txn->dirty, pgno);
		dl_buf_put(txn->env, mp, dn);
	} else if (txn->spilled.count && dl_spilled_has(&txn->spilled, pgno)) {
		/* Written early, never committed: as free as a dirty page. */
		dl_spilled_del(&txn->spilled, pgno);
	} else {
		if ((rc = dl_idl_reserve(&txn->freed, num)))
			return rc;
		for (unsigned i = 0; i < num; i++)
			txn->freed.ids[txn->freed.n++] = pgno + i;
		if (num > 1)
			txn->freed_run = 1;
		return 0;
	}
	if ((rc = dl_idl_reserve(&txn->loose, num)))
		return rc;
	for (unsigned i = num; i-- > 0; )
		txn->loose.ids[txn->loose.n++] = pgno + i;
	return 0;
}

static inline int dl_is_dirty(MDB_env *env, MDB_page *mp)
{
	return !dl_in_map(env, mp);
}

/* May txn modify mp in place?  Only its own dirty copy, not an ancestor's. */
int dl_page_owned(MDB_txn *txn, MDB_page *mp)
{
	if (!dl_is_dirty(txn->env, mp))
		return 0;
	if (!txn->parent)
		return 1;
	return dl_dirty_find(&txn->dirty, mp->mp_pgno, NULL) == mp;
}

/* ------------------------------------------------------------------------- */
/* Validation of a page a write transaction is about to change               */
/* ------------------------------------------------------------------------- */
/*
 * The read path checks each node it visits.  The write path moves whole
 * node areas (inserts shift pointers, deletes close gaps, splits and merges
 * copy every node, sizes come from the node headers), so it needs more: a
 * page is checked in full once, when a write transaction first copies it
 * from the map (dl_page_touch).  Pages this transaction built itself, or an
 * ancestor already copied, passed this check or were written by the engine,
 * so the cost is paid once per page per transaction.
 *
 * A valid node area: every pointer is even and at or above upper, every
 * node lies inside the page (or sub-page), and no two nodes share a byte.
 * Nodes are found in address order with a bitmap of 2-byte units, which
 * proves them disjoint without sorting.
 */

/* Bytes node n occupies, rounded to even; kind selects the layout. */
enum { DL_WK_BRANCH, DL_WK_LEAF, DL_WK_DUP };

static size_t dl_wnode_size(MDB_env *env, MDB_page *mp, MDB_node *n, int kind)
{
	size_t ks = n->mn_ksize;
	if (kind == DL_WK_BRANCH)
		return EVEN(NODEKOFF(mp) + ks);
	size_t d = (kind == DL_WK_LEAF && (n->mn_flags & F_BIGDATA)) ? sizeof(pgno_t) : NODEDSZ(n);
	return EVEN(NODESZ + ks + (ks & env->pad) + d);
}

static int dl_wsubpage_ok(MDB_env *env, MDB_page *sp, size_t sz);
static int dl_wchildren_ok(MDB_page *mp, pgno_t bound);

/*
 * Page number pg, stored in a map page a write is about to change, can be
 * a page of the snapshot: bound is the snapshot's page count (snap_pages).
 * A number at or above it would name a page the write txn allocates for
 * something else, which it then trusts as its own.
 */
static inline int dl_wref_ok(pgno_t pg, pgno_t bound)
{
	return pg >= 2 && pg < bound;
}

/* The leaf node's flags, the page numbers it stores (an overflow run, a
 * database record's root), and, for an inline duplicate set, its
 * sub-page.  The node lies in its page. */
static int dl_wleaf_node_ok(MDB_env *env, MDB_node *n, pgno_t bound)
{
	unsigned f = n->mn_flags;
	char *d = (char *)n + NODESZ + n->mn_ksize + (n->mn_ksize & env->pad);
	if (f & ~(unsigned)(F_BIGDATA | F_SUBDATA | F_DUPDATA))
		return 0;
	if ((f & F_BIGDATA) && (f & (F_SUBDATA | F_DUPDATA)))
		return 0;
	if (f & F_BIGDATA)
		return dl_wref_ok(dl_get64(d), bound);
	if (f & F_SUBDATA) {
		MDB_db rec;
		if (NODEDSZ(n) != sizeof(MDB_db))
			return 0;
		memcpy(&rec, d, sizeof(rec));
		return rec.md_root == P_INVALID || dl_wref_ok(rec.md_root, bound);
	}
	if (f & F_DUPDATA)
		return dl_wsubpage_ok(env, (MDB_page *)d, NODEDSZ(n));
	return 1;
}

/*
 * Check the node area of a page or sub-page of sz bytes (lower/upper
 * already bounded by dl_bounds_ok).  kind: DL_WK_BRANCH, DL_WK_LEAF
 * (data parts, node flags, stored page numbers below bound) or DL_WK_DUP
 * (the key-only nodes of a sub-page).
 */
static int dl_wnodes_ok(MDB_env *env, MDB_page *mp, size_t sz, int kind, pgno_t bound)
{
	uint64_t map[(65536 / 2) / 64];
	unsigned n = NUMKEYS(mp), up = MP_UPPER(mp);
	size_t words = (sz / 2 + 63) / 64;
	if (sz > 65536)
		return 0;
	memset(map, 0, words * sizeof(uint64_t));
	for (unsigned i = 0; i < n; i++) {
		unsigned off = mp->mp_ptrs[i];
		if ((off & 1) || off < up || off + NODESZ > sz)
			return 0;
		uint64_t bit = (uint64_t)1 << ((off / 2) & 63);
		if (map[off / 128] & bit)
			return 0;	/* two pointers to one node */
		map[off / 128] |= bit;
	}
	/* Walk the nodes in address order: each must end before the next. */
	size_t end = up;
	for (size_t w = up / 128; w < words; w++) {
		uint64_t m = map[w];
		while (m) {
			size_t off = w * 128 + 2 * (size_t)__builtin_ctzll(m);
			m &= m - 1;
			if (off < end)
				return 0;
			MDB_node *nd = (MDB_node *)((char *)mp + off);
			end = off + dl_wnode_size(env, mp, nd, kind);
			if (end > sz)
				return 0;
			if (kind == DL_WK_LEAF && !dl_wleaf_node_ok(env, nd, bound))
				return 0;
		}
	}
	return 1;
}

/* An inline duplicate set: a leaf sub-page of sz bytes (format doc §8.2). */
static int dl_wsubpage_ok(MDB_env *env, MDB_page *sp, size_t sz)
{
	if (sz < PAGEHDRSZ || sz > env->psize)
		return 0;
	if ((sp->mp_flags & (P_BRANCH | P_LEAF | P_OVERFLOW | P_META | P_COUNTED)) != P_LEAF)
		return 0;
	if (IS_LEAF2(sp)) {
		if (!sp->mp_pad)
			return 0;
		return dl_bounds_ok(sp, sz, sp->mp_pad);
	}
	/* A sub-page's nodes store no page numbers: no bound. */
	return dl_bounds_ok(sp, sz, 0) && dl_wnodes_ok(env, sp, sz, DL_WK_DUP, 0);
}

/*
 * Full check of page mp of the tree of database db before it is changed.
 * Role flags: a branch page (P_COUNTED exactly when the DB is counted) or a
 * leaf page (P_LEAF2 only in DUPFIXED sub-databases (subdb: db is a
 * duplicate sub-database), never P_COUNTED).  LEAF2 pages must follow the
 * lower/upper counting convention exactly, since deletes and inserts adjust
 * both by the item size.  Then lower/upper and the node area, and a
 * branch's children are distinct (dl_wchildren_ok); every page number the
 * page stores lies below bound, the snapshot's page count (dl_wref_ok).
 * nodes_known_good: the node area was checked before (the role checks,
 * which depend on db, are made every time; they cost O(1)).  A store's
 * page count only grows, so a page checked against an earlier snapshot's
 * bound passes a later one's.
 * Returns 0, MDB_INCOMPATIBLE (a counted DB with an uncounted branch page,
 * dlmdb-extensions §2.4.1: writing it would mix node layouts) or
 * MDB_CORRUPTED.
 */
static int dl_page_wcheck(MDB_env *env, const MDB_db *db, int subdb, MDB_page *mp,
	int nodes_known_good, pgno_t bound)
{
	size_t ps = env->psize;
	unsigned role = mp->mp_flags & (P_BRANCH | P_LEAF | P_OVERFLOW | P_META | P_LEAF2 |
		P_SUBP | P_COUNTED);
	int counted = (db->md_flags & MDB_COUNTED) != 0;
	if (role == P_BRANCH || role == (P_BRANCH | P_COUNTED)) {
		if (!NUMKEYS(mp) || (MP_UPPER(mp) & 1) || !dl_bounds_ok(mp, ps, 1))
			return MDB_CORRUPTED;
		if (counted != IS_COUNTED(mp))
			return counted ? MDB_INCOMPATIBLE : MDB_CORRUPTED;
		if (nodes_known_good)
			return 0;
		return dl_wnodes_ok(env, mp, ps, DL_WK_BRANCH, bound) ?
			dl_wchildren_ok(mp, bound) : MDB_CORRUPTED;
	}
	/* Node pages keep upper even (nodes are even-sized); an odd upper
	 * would place the next inserted node at an odd offset. */
	if (role == P_LEAF && (MP_UPPER(mp) & 1))
		return MDB_CORRUPTED;
	if (role == P_LEAF)
		return dl_bounds_ok(mp, ps, 1) &&
			(nodes_known_good || dl_wnodes_ok(env, mp, ps, DL_WK_LEAF, bound)) ?
			0 : MDB_CORRUPTED;
	if (role == (P_LEAF | P_LEAF2)) {
		size_t k = mp->mp_pad;
		if (!k || !subdb || !(db->md_flags & MDB_DUPFIXED) || !dl_bounds_ok(mp, ps, k))
			return MDB_CORRUPTED;
		/* lower = 16 + 2n and upper = psize - n(k - 2), as LMDB keeps them. */
		return MP_UPPER(mp) + (size_t)NUMKEYS(mp) * (k - 2) == ps ? 0 : MDB_CORRUPTED;
	}
	return MDB_CORRUPTED;
}

/*
 * The children of branch page mp (node area already checked) are distinct,
 * none is mp itself, and all lie below bound (dl_wref_ok).  A page reached
 * through two links of one branch would be copied (and freed) once per
 * link by a write, and one link would keep pointing at a freed page.
 */
static int dl_wchildren_ok(MDB_page *mp, pgno_t bound)
{
	pgno_t local[2 * 256], *kids = local;
	unsigned n = NUMKEYS(mp);
	int ok;
	DL_ASSERT(n > 0);	/* the caller refuses an empty branch */
	if (n > sizeof(local) / sizeof(local[0]) / 2 &&
	    !(kids = malloc(2 * (size_t)n * sizeof(pgno_t))))
		return ENOMEM;
	for (unsigned i = 0; i < n; i++)
		kids[i] = NODEPGNO(NODEPTR(mp, i));
	dl_sort_u64(kids, kids + n, n);
	/* Sorted: the smallest and largest bound them all. */
	ok = dl_wref_ok(kids[0], bound) && dl_wref_ok(kids[n - 1], bound);
	for (unsigned i = 0; i < n && ok; i++)
		if ((i && kids[i] == kids[i - 1]) || kids[i] == mp->mp_pgno)
			ok = 0;
	if (kids != local)
		free(kids);
	return ok ? 0 : MDB_CORRUPTED;
}

/* Key of entry i of a checked tree page: a branch separator (node 0's is
 * not used) or a leaf key (prefix-decoded into buf when compressed). */
static inline int dl_wkey(MDB_cursor *mc, MDB_page *mp, unsigned i, MDB_val *k,
	unsigned char *buf)
{
	if (IS_BRANCH(mp)) {
		MDB_node *n = NODEPTR(mp, i);
		k->mv_size = n->mn_ksize;
		k->mv_data = NODEKEY(mp, n);
		return 0;
	}
	return dl_leaf_keyd(mc, mp, i, k, buf);
}

/*
 * Page mp, about to be copied, was reached through node ki of its parent
 * (the writable page one level up): its keys must lie inside the range the
 * parent's separators give that child, [separator ki, separator ki + 1).
 * A link to a page of another subtree, another database, an ancestor or a
 * stale page of the free list fails here before the write moves anything.
 * Two comparisons: the page's first and last keys (a branch's node 0 has
 * no key of its own, so its first key is node 1's).
 */
static int dl_wrange_ok(MDB_cursor *mc, int level, MDB_page *mp)
{
	MDB_page *parent = mc->pg[level - 1];
	unsigned pi = mc->ki[level - 1], pn = NUMKEYS(parent);
	unsigned n = NUMKEYS(mp), first = IS_BRANCH(mp) ? 1 : 0;
	unsigned char fb[DL_MAXKEY + 1], lb[DL_MAXKEY + 1];
	MDB_val fk, lk, sep;
	MDB_cmp_func *cmp = mc->dbx->cmp;
	int lex = cmp == dl_cmp_lex, rc;
	if (n <= first || pi >= pn)
		return 0;
	if ((rc = dl_wkey(mc, mp, first, &fk, fb)) || (rc = dl_wkey(mc, mp, n - 1, &lk, lb)))
		return rc;
	if (pi > 0) {
		dl_wkey(mc, parent, pi, &sep, NULL);
		if ((lex ? dl_lex(&fk, &sep) : cmp(&fk, &sep)) < 0)
			return MDB_CORRUPTED;
	}
	if (pi + 1 < pn) {
		dl_wkey(mc, parent, pi + 1, &sep, NULL);
		if ((lex ? dl_lex(&lk, &sep) : cmp(&lk, &sep)) >= 0)
			return MDB_CORRUPTED;
	}
	return 0;
}

/*
 * Cache of map pages whose node area is known good, so the branch pages
 * every write txn copies again are not checked again each time.  A
 * committed page never changes in place: its content changes only when a
 * writer allocates its number again.  Entries come from pages that passed
 * the check and from the pages this process's own commits wrote (built by
 * the engine from checked pages); this process's allocations drop their
 * numbers.  A write txn that finds another process committed since (the
 * snapshot it starts from is not the one the cache was kept for) empties
 * the cache.  Direct-mapped by page number; 2^18 slots cover a store of a
 * gigabyte (4 KiB pages) with few collisions, since the multiplicative hash
 * spreads consecutive page numbers evenly: at 16K slots, random puts into
 * a million-entry store checked nearly every leaf they copied in full.
 * A smaller store gets eight slots per page (at least 2^10): the table is
 * made at an env's first commit or check, and zeroing 2 MiB there cost an
 * env that writes one small txn more than the rest of its commit but the
 * write itself.  A write txn that finds the store grown past half the
 * slots moves the entries to a table sized for it again (up to 2^18): the
 * table keeps at least two slots per page, and what it knew moves along.
 *
 * A slot holds (pgno << 16) | tag, tag = env->wchecked_tag (1..65535).
 * Emptying the cache moves to the next tag, which no slot holds yet, so a
 * writer alternating with another process does not clear the table per
 * txn; only when the tag wraps are the slots zeroed.  Page numbers of 2^48
 * and above are never cached.
 */
#define DL_WCHECKED_BITS	18
#define DL_WCHECKED_MINBITS	10
#define DL_WCHECKED_TAGS	0xffffu

static inline size_t dl_wchecked_slot(const MDB_env *env, pgno_t pg)
{
	return (size_t)((pg * 0x9E3779B97F4A7C15ull) >> (64 - env->wchecked_bits));
}

static inline uint64_t dl_wchecked_entry(const MDB_env *env, pgno_t pg)
{
	return (pg << 16) | env->wchecked_tag;
}

static inline int dl_wchecked_has(const MDB_env *env, pgno_t pg)
{
	return env->wchecked && !(pg >> 48) &&
	    env->wchecked[dl_wchecked_slot(env, pg)] == dl_wchecked_entry(env, pg);
}

/* log2 of the slots for a store of pages pages. */
static unsigned dl_wchecked_fit(pgno_t pages)
{
	unsigned bits = DL_WCHECKED_MINBITS;
	while (bits < DL_WCHECKED_BITS && ((pgno_t)1 << bits) < pages * 8)
		bits++;
	return bits;
}

/* Move the entries to a table of 2^bits slots (if one can be had). */
static void dl_wchecked_regrow(MDB_env *env, unsigned bits)
{
	uint64_t *nt = calloc((size_t)1 << bits, sizeof(uint64_t));
	if (!nt)
		return;
	uint64_t *old = env->wchecked;
	size_t n = (size_t)1 << env->wchecked_bits;
	env->wchecked = nt;
	env->wchecked_bits = bits;
	for (size_t i = 0; i < n; i++)
		if (old[i] && (old[i] & 0xffff) == env->wchecked_tag)
			nt[dl_wchecked_slot(env, old[i] >> 16)] = old[i];
	free(old);
}

/* At the start of a write txn on snapshot, whose store has pages pages:
 * forget everything if another process has committed since the cache was
 * filled; move to a larger table when the store has outgrown this one. */
void dl_wchecked_begin(MDB_env *env, txnid_t snapshot, pgno_t pages)
{
	if (env->wchecked && env->wchecked_txnid != snapshot &&
	    ++env->wchecked_tag > DL_WCHECKED_TAGS) {
		memset(env->wchecked, 0, ((size_t)1 << env->wchecked_bits) * sizeof(uint64_t));
		env->wchecked_tag = 1;
	}
	env->wchecked_txnid = snapshot;
	if (env->wchecked && env->wchecked_bits < DL_WCHECKED_BITS &&
	    pages > ((pgno_t)1 << env->wchecked_bits) / 2 &&
	    dl_wchecked_fit(pages) > env->wchecked_bits)
		dl_wchecked_regrow(env, dl_wchecked_fit(pages));
}

/* Whether the cache exists, allocating it on first use for a store of
 * pages pages (without it, pages are checked every time). */
static int dl_wchecked_ready(MDB_env *env, pgno_t pages)
{
	if (!env->wchecked) {
		unsigned bits = dl_wchecked_fit(pages);
		if (!(env->wchecked = calloc((size_t)1 << bits, sizeof(uint64_t))))
			return 0;
		env->wchecked_bits = bits;
		env->wchecked_tag = 1;
	}
	return 1;
}

/* Record pg as checked (the cache exists). */
static inline void dl_wchecked_put(MDB_env *env, pgno_t pg)
{
	if (!(pg >> 48))
		env->wchecked[dl_wchecked_slot(env, pg)] = dl_wchecked_entry(env, pg);
}

/* Pages pg .. pg + num - 1 are about to get new contents. */
static void dl_wchecked_drop(MDB_env *env, pgno_t pg, unsigned num)
{
	if (!env->wchecked)
		return;
	for (unsigned i = 0; i < num; i++)
		if (dl_wchecked_has(env, pg + i))
			env->wchecked[dl_wchecked_slot(env, pg + i)] = 0;
}

/* After txn's commit reached the disk: the single pages it wrote are
 * known good. */
void dl_wchecked_committed(MDB_txn *txn)
{
	MDB_env *env = txn->env;
	env->wchecked_txnid = txn->txnid;
	if (!dl_wchecked_ready(env, txn->next_pgno))
		return;
	for (size_t k = 0; k < txn->dirty.count; k++)
		if (txn->dirty.ents[k].npages == 1 && !IS_OVERFLOW(txn->dirty.ents[k].page))
			dl_wchecked_put(env, txn->dirty.ents[k].pgno);
}

/*
 * The keys of checked page mp ascend strictly in the cursor's order (a
 * branch from node 1: node 0 has no key).  A write searches the page by
 * binary search and inserts where the search lands, so on a page out of
 * order it would place keys wrongly and could store one key twice.
 */
static int dl_worder_ok(MDB_cursor *mc, MDB_page *mp)
{
	unsigned n = NUMKEYS(mp), i = IS_BRANCH(mp) ? 1 : 0;
	unsigned char b0[DL_MAXKEY + 1], b1[DL_MAXKEY + 1];
	unsigned char *cur = b0, *prev = b1, *t;
	MDB_val k, p;
	MDB_cmp_func *cmp = mc->dbx->cmp;
	int rc;
	if (i >= n)
		return 0;
	if ((rc = dl_wkey(mc, mp, i, &p, prev)))
		return rc;
	for (i++; i < n; i++) {
		if ((rc = dl_wkey(mc, mp, i, &k, cur)))
			return rc;
		if (cmp(&p, &k) >= 0)
			return MDB_CORRUPTED;
		p = k;
		t = prev;
		prev = cur;
		cur = t;
	}
	return 0;
}

/* dl_page_wcheck of a map page reached by cursor mc, with the node area
 * (and key order) from the cache if known. */
static int dl_page_wcheck_map(MDB_cursor *mc, int subdb, MDB_page *mp)
{
	MDB_env *env = mc->txn->env;
	pgno_t pg = mp->mp_pgno;
	int known = dl_wchecked_has(env, pg);
	int rc = dl_page_wcheck(env, mc->db, subdb, mp, known, mc->txn->snap_pages);
	if (!rc && !known)
		rc = dl_worder_ok(mc, mp);
	if (!rc && !known && dl_wchecked_ready(env, mc->txn->next_pgno))
		dl_wchecked_put(env, pg);
	return rc;
}

/*
 * Give txn its own in-memory copy of page pgno (content mp) under the same
 * number, at cursor level level: for a page an ancestor holds (dirty or
 * spilled: an abort must leave the ancestor's version untouched) and for
 * reloading a page this txn spilled.  The content was written by the engine
 * in this txn or an ancestor, so it is not checked again.
 */
static int dl_page_shadow(MDB_cursor *mc, int level, MDB_page *mp, pgno_t pgno)
{
	MDB_txn *txn = mc->txn;
	MDB_env *env = txn->env;
	MDB_page *np;
	int rc;
	if (!(np = dl_buf_get(env, 1)))
		return dl_txn_err(txn, ENOMEM);
	memcpy(np, mp, env->psize);
	np->mp_flags |= P_DIRTY;
	if ((rc = dl_dirty_add(&txn->dirty, pgno, np, 1))) {
		dl_buf_put(env, np, 1);
		return dl_txn_err(txn, rc);
	}
	mc->pg[level] = np;
	txn->dbflags[mc->dbi] |= DB_DIRTY;
	txn->flags |= TXN_DIRTY;
	return 0;
}

/*
 * Copy-on-write the page at mc->pg[level]; the levels above must already be
 * writable.  Only the used parts of the page are copied, after the page
 * passed dl_page_wcheck: a damaged page fails the transaction here, before
 * any of its nodes is moved.  A page this txn spilled comes back under its
 * own number (it is already this txn's allocation).
 */
int dl_page_touch(MDB_cursor *mc, int level)
{
	MDB_txn *txn = mc->txn;
	MDB_env *env = txn->env;
	MDB_page *mp = mc->pg[level], *np;
	int rc;

	if (dl_page_owned(txn, mp))
		return 0;
	if (dl_is_dirty(env, mp)) {
		/* Nested txn: an ancestor's dirty page.  Shadow it under the same
		 * number so an abort leaves the ancestor's copy untouched. */
		return dl_page_shadow(mc, level, mp, mp->mp_pgno);
	}
	/* The page number read from the map must be the page's own: the cache
	 * is keyed by it.  (Compared by multiplying, once bounded: a division
	 * costs tens of cycles per copied page.) */
	if (mp->mp_pgno >= env->maxpg || env->map + mp->mp_pgno * env->psize != (char *)mp)
		return dl_txn_fail(txn, MDB_CORRUPTED);
	if (txn->spilled.count && dl_spilled_has(&txn->spilled, mp->mp_pgno)) {
		pgno_t pg = mp->mp_pgno;
		if ((rc = dl_page_shadow(mc, level, mp, pg)))
			return rc;
		dl_spilled_del(&txn->spilled, pg);
		return 0;
	}
	if (txn->parent && dl_ancestor_holds(txn, mp->mp_pgno))
		return dl_page_shadow(mc, level, mp, mp->mp_pgno);	/* spilled by an ancestor */
	if ((rc = dl_page_wcheck_map(mc, dl_cursor_subtree(mc), mp)))
		return dl_txn_fail(txn, rc);
	if (level > 0 && (rc = dl_wrange_ok(mc, level, mp)))
		return dl_txn_fail(txn, rc);
	if ((rc = dl_page_alloc(mc, 1, &np)))
		return rc;
	pgno_t old = mp->mp_pgno, pg = np->mp_pgno;
	unsigned lower = MP_LOWER(mp), upper = MP_UPPER(mp);
	if (IS_LEAF2(mp)) {
		memcpy(np, mp, env->psize);
	} else {
		memcpy(np, mp, lower);
		memcpy((char *)np + upper, (char *)mp + upper, env->psize - upper);
	}
	np->mp_pgno = pg;
	np->mp_flags |= P_DIRTY;
	if ((rc = dl_page_free(txn, old, 1)))
		return dl_txn_err(txn, rc);
	mc->pg[level] = np;
	if (level == 0) {
		mc->db->md_root = pg;
	} else {
		MDB_page *parent = mc->pg[level - 1];
		node_set_pgno(NODEPTR(parent, mc->ki[level - 1]), pg);
	}
	txn->dbflags[mc->dbi] |= DB_DIRTY;
	return 0;
}
