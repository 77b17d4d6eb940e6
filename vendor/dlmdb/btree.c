/*
 * btree.c - B+tree search, insertion with splits, deletion with rebalancing.
 *
 * Node layout depends on the environment (env->pad: DLMDB even key padding
 * or stock) and on the page (P_COUNTED branch pages hold a count before the
 * key); see internal.h.  Structural changes (splits, merges) invalidate the
 * cursor's page stack; the operations here re-seek the cursor by key
 * afterwards instead of patching positions, which keeps every path simple.
 */
#include "internal.h"

/* ------------------------------------------------------------------------- */
/* Node helpers                                                              */
/* ------------------------------------------------------------------------- */

static inline unsigned dl_ovpages(MDB_env *env, size_t dsize)
{
	return (unsigned)((PAGEHDRSZ + dsize + env->psize - 1) / env->psize);
}

static inline void dl_node_key(MDB_page *mp, MDB_node *n, MDB_val *k)
{
	k->mv_size = n->mn_ksize;
	k->mv_data = NODEKEY(mp, n);
}

/* Key i of a leaf (ordinary or LEAF2). */
static inline void dl_leaf_key(MDB_page *mp, unsigned i, MDB_val *k)
{
	if (IS_LEAF2(mp)) {
		k->mv_size = mp->mp_pad;
		k->mv_data = (char *)mp + PAGEHDRSZ + (size_t)i * mp->mp_pad;
	} else {
		dl_node_key(mp, NODEPTR(mp, i), k);
	}
}

/*
 * dl_page_get with its common case inlined: a txn without dirty pages of
 * its own or of ancestors (every read txn) reads straight from the map.
 * Same answers as dl_page_get in every case.
 */
static inline int dl_pget(MDB_txn *txn, pgno_t pg, MDB_page **ret)
{
	if (!txn->dirty.count && !txn->parent && pg >= 2 && pg < txn->next_pgno &&
	    pg < txn->fpages) {
		*ret = (MDB_page *)(txn->env->map + (size_t)pg * txn->env->psize);
		return 0;
	}
	return dl_page_get(txn, pg, ret);
}

/* Value of a leaf node; follows overflow runs. */
int dl_node_read(MDB_cursor *mc, MDB_node *n, MDB_val *data)
{
	MDB_txn *txn = mc->txn;
	MDB_env *env = txn->env;
	if (n->mn_flags & F_DUPDATA)
		return MDB_INCOMPATIBLE;	/* duplicate sets: not supported yet */
	if (!(n->mn_flags & F_BIGDATA)) {
		data->mv_size = NODEDSZ(n);
		data->mv_data = dl_leaf_data(env, n);
		return 0;
	}
	pgno_t pg = dl_get64(dl_leaf_data(env, n));
	size_t dsz = NODEDSZ(n);
	char *v = dl_ov_snapshot(txn, env, pg, dsz);
	if (v) {
		data->mv_size = dsz;
		data->mv_data = v;
		return 0;
	}
	MDB_page *omp;
	int rc = dl_page_get_ref(txn, n, pg, &omp);
	if (rc)
		return rc;
	if (!IS_OVERFLOW(omp) || (uint64_t)omp->mp_u.pages * env->psize < PAGEHDRSZ + dsz ||
	    pg + omp->mp_u.pages > txn->next_pgno)
		return MDB_CORRUPTED;
	if (dl_run_past_snapshot(txn, n, pg, omp->mp_u.pages))
		return MDB_CORRUPTED;
	if (dl_in_map(env, omp) && pg + dl_ovpages(env, dsz) > txn->fpages)
		return MDB_PAGE_NOTFOUND;
	data->mv_size = dsz;
	data->mv_data = (char *)omp + PAGEHDRSZ;
	return 0;
}

/* Write a leaf node at dst; returns its (even) size.  dpart NULL: leave the
 * data area for the caller (MDB_RESERVE). */
static size_t dl_leaf_write(MDB_env *env, unsigned char *dst, const MDB_val *key,
	size_t dsize, const void *dpart, size_t dlen, unsigned nflags)
{
	MDB_node *n = (MDB_node *)dst;
	size_t off;
	node_set_dsize(n, dsize);
	n->mn_flags = (uint16_t)nflags;
	n->mn_ksize = (uint16_t)key->mv_size;
	memcpy(dst + NODESZ, key->mv_data, key->mv_size);
	off = NODESZ + key->mv_size;
	if (key->mv_size & env->pad)
		dst[off++] = 0;
	if (dpart && dlen)
		memcpy(dst + off, dpart, dlen);
	off += dlen;
	if (off & 1)
		dst[off++] = 0;
	return off;
}

/* Write a branch node at dst; returns its size. */
static size_t dl_branch_write(unsigned char *dst, const MDB_val *key, pgno_t pg,
	int counted, uint64_t count)
{
	MDB_node *n = (MDB_node *)dst;
	size_t off = NODESZ;
	size_t ks = key ? key->mv_size : 0;
	node_set_pgno(n, pg);
	n->mn_ksize = (uint16_t)ks;
	if (counted) {
		dl_put64(dst + off, count);
		off += 8;
	}
	if (ks)
		memcpy(dst + off, key->mv_data, ks);
	off += ks;
	if (off & 1)
		dst[off++] = 0;
	return off;
}

/* Make room for a node of len bytes at index idx and return its address. */
/*
 * LEAF2 pages (fixed-size duplicates, format doc §7) hold items packed after
 * the header with no pointer array; lower/upper still follow the counting
 * convention lower = 16 + 2n, upper = P - n(K - 2).
 */
static unsigned char *dl_leaf2_open(MDB_page *mp, unsigned idx)
{
	unsigned n = NUMKEYS(mp), k = mp->mp_pad;
	unsigned char *base = (unsigned char *)mp + PAGEHDRSZ;
	memmove(base + (size_t)(idx + 1) * k, base + (size_t)idx * k, (size_t)(n - idx) * k);
	MP_LOWER(mp) = (indx_t)(MP_LOWER(mp) + 2);
	MP_UPPER(mp) = (indx_t)(MP_UPPER(mp) - (k - 2));
	DL_ASSERT_PAGE_SPACE(mp);
	return base + (size_t)idx * k;
}

/* Entry i of a leaf or branch page and the bytes it occupies. */
static inline unsigned char *dl_ent(MDB_page *mp, unsigned i)
{
	if (IS_LEAF2(mp))
		return (unsigned char *)mp + PAGEHDRSZ + (size_t)i * mp->mp_pad;
	return (unsigned char *)NODEPTR(mp, i);
}

/* Bytes an entry costs on a page besides its own size (its pointer). */
static inline size_t dl_ent_ovh(MDB_page *mp)
{
	return IS_LEAF2(mp) ? 0 : sizeof(indx_t);
}

unsigned char *dl_page_open(MDB_page *mp, unsigned idx, size_t len)
{
	unsigned n = NUMKEYS(mp);
	if (IS_LEAF2(mp))
		return dl_leaf2_open(mp, idx);
	if (idx < n)	/* appends (sorted loads) shift nothing */
		memmove(&mp->mp_ptrs[idx + 1], &mp->mp_ptrs[idx], (n - idx) * sizeof(indx_t));
	MP_UPPER(mp) = (indx_t)(MP_UPPER(mp) - len);
	mp->mp_ptrs[idx] = MP_UPPER(mp);
	MP_LOWER(mp) = (indx_t)(MP_LOWER(mp) + sizeof(indx_t));
	DL_ASSERT_PAGE_SPACE(mp);
	DL_ASSERT(dl_ptrs_in_node_area(mp));
	return (unsigned char *)mp + MP_UPPER(mp);
}

static void dl_page_insert_raw(MDB_page *mp, unsigned idx, const void *img, size_t len)
{
	memcpy(dl_page_open(mp, idx, len), img, len);
}

/* Remove node idx of size sz and close the gap in the node area. */
void dl_page_del_raw(MDB_page *mp, unsigned idx, size_t sz)
{
	unsigned n = NUMKEYS(mp);
	if (IS_LEAF2(mp)) {
		unsigned k = mp->mp_pad;
		unsigned char *base = (unsigned char *)mp + PAGEHDRSZ;
		memmove(base + (size_t)idx * k, base + (size_t)(idx + 1) * k,
		    (size_t)(n - idx - 1) * k);
		MP_LOWER(mp) = (indx_t)(MP_LOWER(mp) - 2);
		MP_UPPER(mp) = (indx_t)(MP_UPPER(mp) + (k - 2));
		DL_ASSERT_PAGE_SPACE(mp);
		return;
	}
	indx_t off = mp->mp_ptrs[idx];
	indx_t up = MP_UPPER(mp);
	for (unsigned i = 0, j = 0; i < n; i++) {
		if (i == idx)
			continue;
		indx_t p = mp->mp_ptrs[i];
		if (p < off)
			p = (indx_t)(p + sz);
		mp->mp_ptrs[j++] = p;
	}
	memmove((char *)mp + up + sz, (char *)mp + up, (size_t)(off - up));
	MP_LOWER(mp) = (indx_t)(MP_LOWER(mp) - sizeof(indx_t));
	MP_UPPER(mp) = (indx_t)(up + sz);
	DL_ASSERT_PAGE_SPACE(mp);
	DL_ASSERT(dl_ptrs_in_node_area(mp));
}

void dl_page_init(MDB_env *env, MDB_page *mp, unsigned flags)
{
	mp->mp_flags = (uint16_t)(flags | P_DIRTY);
	mp->mp_pad = 0;
	MP_LOWER(mp) = PAGEHDRSZ;
	MP_UPPER(mp) = (indx_t)env->psize;
}

/* ------------------------------------------------------------------------- */
/* Search                                                                    */
/* ------------------------------------------------------------------------- */

/*
 * Node i of mp for a search probe, or NULL if its header or key would lie
 * outside the page.  Only the key is read while probing, so only the key is
 * bounded here (cheaper than dl_node_check on every probe); the node a
 * search finally settles on gets the full dl_node_check.
 */
static inline MDB_node *dl_probe(MDB_page *mp, unsigned i, size_t psize, size_t koff)
{
	size_t off = mp->mp_ptrs[i];
	if ((off & 1) || off < MP_LOWER(mp) || off + NODESZ > psize)
		return NULL;
	MDB_node *n = (MDB_node *)((char *)mp + off);
	if (off + koff + n->mn_ksize > psize)
		return NULL;
	return n;
}

/*
 * How a search compares the search key with node keys.  The kind is picked
 * once per search from the DB's comparator and the search key:
 *   LEX8  default order (memcmp on the shorter length, then length), 8-byte
 *         search key: an 8-byte node key is one byte-swapped load and one
 *         integer compare;
 *   LEXW  default order, search key of 9 to 40 bytes: the first 8 bytes
 *         of both keys compared the same way, the rest only when they tie,
 *         all inline;
 *   LEXL  the same for longer search keys, except that a tie past 32 more
 *         bytes (duplicate values that share most of their bytes) is
 *         settled by memcmp, which steps 32 bytes at a time;
 *   INT8  MDB_INTEGERKEY (or the free DB's order), native 8-byte search key:
 *         an 8-byte node key is one native compare;
 *   ANY   anything else (shorter default-order keys, 4-byte or unusually
 *         sized integer keys, REVERSEKEY, user comparators): the generic
 *         search, calling the comparator.
 * DL_KC_PF added to a kind other than ANY: the search prefetches
 * (dl_skey_tree).
 */
enum { DL_KC_ANY, DL_KC_LEX8, DL_KC_LEXW, DL_KC_LEXL, DL_KC_INT8, DL_KC_PF = 8 };

typedef struct dl_skey {
	const MDB_val *key;
	MDB_cmp_func *cmp;
	uint64_t word;		/* LEX8/LEXW/LEXL: first 8 key bytes big-endian; INT8: the key */
	int kind;
	int part;		/* LEXW/LEXL: probes bound only the first 8 key bytes */
	int tail;		/* look at each page's last node first (dl_skey_tree) */
} dl_skey;

static inline void dl_skey_init(dl_skey *s, MDB_cmp_func *cmp, const MDB_val *key)
{
	s->key = key;
	s->cmp = cmp;
	s->word = 0;
	s->kind = DL_KC_ANY;
	s->part = 0;
	if (cmp == dl_cmp_lex && key->mv_size >= 8) {
		s->kind = key->mv_size == 8 ? DL_KC_LEX8 :
			key->mv_size > 40 ? DL_KC_LEXL : DL_KC_LEXW;
		s->part = key->mv_size > 8;
		s->word = dl_be64(key->mv_data);
	} else if ((cmp == dl_cmp_int || cmp == dl_cmp_u64) && key->mv_size == 8) {
		s->kind = DL_KC_INT8;
		s->word = dl_get64(key->mv_data);
	}
}

/*
 * Tree pages above which a search prefetches (256 KiB of 4 KiB pages, a
 * quarter of a common per-core L2): a smaller tree stays in the nearest
 * caches, where the prefetches of dl_nsearch_fast would find every node
 * already there and only add their instructions (about a third of a
 * probe's).  A 10K-record tree of 100-byte values (300 pages) misses that
 * L2 often enough that its random gets took a quarter longer without them.
 */
#define DL_PREFETCH_PAGES	64

/*
 * How many probes ahead dl_nsearch_fast prefetches, 1 or 2 (a build
 * option for timing the two against each other on large stores).  1
 * brings in about 1.7x the lines a lookup reads, 2 about 2.3x
 * (callgrind's cache simulation with the prefetches counted as loads,
 * BENCHMARKS.md "Lookups on large stores: lines touched").  2 lets a
 * page's probes wait on memory in groups of three instead of two, and
 * random lookups in stores larger than the caches took about a tenth less
 * time on a loaded machine, but on a quiet one the 1M-entry lookup rows
 * moved within their spread, and it costs a fifth to a quarter more
 * instructions per lookup (BENCHMARKS.md "Deeper prefetching in the key
 * search" and "Full suite with the leaf prefetch burst").
 */
#ifndef DL_PREFETCH_AHEAD
#define DL_PREFETCH_AHEAD 1
#endif

/*
 * Whether a leaf search of a large tree starts by prefetching the nodes
 * its second, third and fourth probes may read (14, from the pointer
 * array: dl_nsearch_fast), 1 or 0 (a build option, for timing).  With the
 * one-ahead prefetches of the loop, a leaf's first four probes then wait
 * on memory once and the next two once more, against three times for
 * six probes without it.  It costs about 80 instructions per lookup,
 * where DL_PREFETCH_AHEAD 2 costs about 370 (BENCHMARKS.md "Deeper
 * prefetching in the key search").
 */
#ifndef DL_PREFETCH_BURST
#define DL_PREFETCH_BURST 1
#endif

/*
 * How many probes ahead the compressed-leaf search prefetches in large
 * trees (dl_pfx_search_lex): 0 never (a build for timing against the
 * others), 1 the two nodes the next probe may read, 2 the four the probe
 * after next may read.  2 by default: it took the least time per lookup
 * and per update on a 1M-entry store (BENCHMARKS.md "Compressed-leaf
 * search: prefetching").
 */
#ifndef DL_PFX_PF
#define DL_PFX_PF 2
#endif

/*
 * How small a range the halving of a large tree's search (pf) leaves to
 * one pass over all of its nodes (dl_nsearch_fast): 0 never, else a
 * range of at most this many nodes (2 to 8).  The pass loads each
 * node's first key word at once, its addresses coming from the pointer
 * array alone, so the last probes' cache misses overlap instead of each
 * waiting for the compare before it; it reads up to this many nodes where
 * the halving would read two or three.  A build option, for timing.
 */
#ifndef DL_SEARCH_TAIL
#define DL_SEARCH_TAIL 4
#endif

/*
 * Whether that pass also serves the LEXW and LEXL kinds, 1 or 0 (a build
 * option, for timing).  Their nodes are larger, so the pass reads more
 * lines than the halving would, and a first word equal to the key's
 * needs the rest of the key: on 64-byte keys it took more time than the
 * halving, on 8-byte ones (LEX8) less (BENCHMARKS.md "Search tail").
 */
#ifndef DL_SEARCH_TAIL_WIDE
#define DL_SEARCH_TAIL_WIDE 0
#endif

/*
 * Whether the halving of a page search (dl_nsearch_fast) loads, during
 * each probe, the node pointers of both nodes the next probe may read, and
 * picks one with the probe's compare: 2 in every tree, 1 in small trees
 * only (no prefetching, see DL_PREFETCH_PAGES), 0 never (build options,
 * for timing).  Each probe is then one dependent load (the key) after the
 * compare before it instead of two (the pointer, then the key): a random
 * seek of a 1,000-record store took about a tenth less time, a get about
 * 7% less (BENCHMARKS.md "MDB_SET_RANGE on small trees").  In the trees
 * that prefetch (2) it adds about 50 instructions and half a line from
 * memory to a 1M-record lookup with 8-byte keys (none with 64-byte keys),
 * and took a tenth off the lookups of a 10K-record store with 8-byte
 * keys, 2-6% off those of 1M-record stores, and moved the rest within
 * their spread (BENCHMARKS.md "Random lookups on 1M-record stores").
 */
#ifndef DL_SEARCH_PTRNEXT
#define DL_SEARCH_PTRNEXT 2
#endif

/*
 * Whether a key lookup prefetches whole the pages of the levels that
 * outgrow the second-level cache, as soon as the level above gives each
 * page's number (dl_search_sk), 1 or 0 (a build option, for timing): the
 * leaf when the tree's leaves take more than DL_PAGE_PF_L2X times
 * env->l2bytes, and the branch above it too when the branch pages do
 * (nearly all of them are on that level).  Where the system reports no
 * second-level cache, every tree of more than DL_PREFETCH_PAGES pages
 * prefetches its leaves whole, and a tree of three levels or more the
 * branch above them too.  A page's search then waits on memory
 * about once, for all its lines at once, instead of for the pointer
 * array, then the burst's nodes, then the last probes' in turn.  Random
 * gets and seeks of 100K- and 1M-record stores took a tenth to a third
 * less time with the leaves' prefetch, and those of a 10M-record store a
 * sixth to a quarter less with the branches' too.  A tree whose leaves
 * the second level still mostly holds finds those lines close by and only
 * pays the 64 prefetches: 10K records of 100 bytes (1.2 MiB of leaves,
 * 1 MiB of L2) took 3-13% longer with it, 15K (1.7 MiB) about the same,
 * 20K (2.3 MiB) a tenth less; hence twice the second level (BENCHMARKS.md
 * "Key lookups: whole pages prefetched").  It reads a page's 64 lines
 * where the search needs about ten, so a lookup takes 4-8 KiB of memory
 * bandwidth instead of about 1 KiB; pages larger than DL_PAGE_PF_MAX go
 * without.
 */
#ifndef DL_PAGE_PF
#define DL_PAGE_PF 1
#endif
#ifndef DL_PAGE_PF_L2X
#define DL_PAGE_PF_L2X	2
#endif
#define DL_PAGE_PF_MAX	4096

/* The four lines of the 256 bytes at p, and of the 1 KiB at p. */
#define DL_PF_256(p)	(__builtin_prefetch(p), __builtin_prefetch((p) + 64), \
	__builtin_prefetch((p) + 128), __builtin_prefetch((p) + 192))
#define DL_PF_1K(p)	(DL_PF_256(p), DL_PF_256((p) + 256), DL_PF_256((p) + 512), \
	DL_PF_256((p) + 768))

/* Every line of the psize-byte page at p (psize a power of two of at
 * least 512).  A 4 KiB page, the usual size, gets one instruction a line
 * and no loop: a loop of four prefetches a turn cost about 65 more
 * instructions a page, and with two pages a lookup, 1M records and
 * 64-byte keys, took our count past LMDB's (BENCHMARKS.md "Key lookups:
 * whole pages prefetched"). */
static inline __attribute__((always_inline)) void dl_page_prefetch(const char *p,
	size_t psize)
{
	if (psize == 4096) {
		DL_PF_1K(p);
		DL_PF_1K(p + 1024);
		DL_PF_1K(p + 2048);
		DL_PF_1K(p + 3072);
		return;
	}
	for (size_t o = 0; o < psize; o += 256)
		DL_PF_256(p + o);
}

/* -DDL_PREFETCH_AS_LOAD, for measuring only: each prefetch becomes a load
 * whose byte is kept, so a cache simulator that ignores prefetches (as
 * callgrind's does) counts the lines they bring in.  A load can fault on a
 * damaged offset: never in a build that reads untrusted stores. */
#ifdef DL_PREFETCH_AS_LOAD
static volatile char dl_prefetch_sink;
#define DL_PREFETCH(p)	((void)(dl_prefetch_sink ^= *(const char *)(p)))
#else
#define DL_PREFETCH(p)	__builtin_prefetch(p)
#endif

/*
 * Whether a leaf search of a large tree with keys of more than 40 bytes
 * (LEXL) prefetches the value of each probe the key sorts below
 * (dl_nsearch_fast), 1 or 0 (a build option, for timing).
 */
#ifndef DL_VALUE_PREFETCH
#define DL_VALUE_PREFETCH 1
#endif

/*
 * Prepare s for a search of mc's tree: in a large one, the specialised
 * kinds prefetch (DL_KC_PF).  tail: look at each page's last node before
 * halving (dl_nsearch_fast), which pays for searches that place keys (an
 * ascending load's key lies past every page of its path) but not for
 * lookups, where it is one more node, often one more cache line, per page.
 */
static inline void dl_skey_tree(dl_skey *s, const MDB_cursor *mc, int tail)
{
	const MDB_db *db = mc->db;
	s->tail = tail;
	if (s->kind != DL_KC_ANY && db->md_branch_pages + db->md_leaf_pages > DL_PREFETCH_PAGES)
		s->kind |= DL_KC_PF;
}

/* Default order, 8 bytes at a time, then byte by byte: the tails of LEXW
 * probes (keys of 9 to 40 bytes) past their first 8 bytes. */
static inline int dl_lex_words(const unsigned char *a, size_t al, const unsigned char *b,
	size_t bl)
{
	size_t n = al < bl ? al : bl, i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t x = dl_be64(a + i), y = dl_be64(b + i);
		if (x != y)
			return x < y ? -1 : 1;
	}
	for (; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return al < bl ? -1 : al > bl;
}

/* The tails of LEXL probes: memcmp past 32 common bytes, else inline. */
static inline int dl_lex_tail(const unsigned char *a, size_t al, const unsigned char *b,
	size_t bl)
{
	size_t n = al < bl ? al : bl;
	if (n > 32) {
		int r = memcmp(a, b, n);
		if (r)
			return r < 0 ? -1 : 1;
		return al < bl ? -1 : al > bl;
	}
	return dl_lex_words(a, al, b, bl);
}

/*
 * Lower bound among nodes lo..n-1 of a branch page or an uncompressed,
 * unpacked leaf, for the LEX8, LEXW, LEXL and INT8 kinds: *res = the first index
 * whose key is >= the search key (n when none is), *exact = that node's key
 * equals it.  Returns -1, having decided nothing, when a probed node is not
 * what this loop handles (an 8-byte kind meeting a key of another size, a
 * LEXW or LEXL probe meeting a key shorter than 8 bytes, or a node that does not
 * pass the checks below): the caller then runs the generic search, which
 * checks every probe itself and reports damage.
 *
 * The loop halves the range with conditional moves instead of branches
 * (the outcome of each comparison is unpredictable, so a branch would be
 * mispredicted half of the time).  An equal probe ends the search (keys
 * on a page are unique and ordered): that branch is taken once per
 * search at most, so it costs one mispredicted exit, which the equality
 * test costs anyway (compilers make it a branch, and LEXW and LEXL need
 * one for the tie), and a lookup of a stored key reads about one node
 * fewer per leaf.  It calls nothing (but memcmp for a LEXL tie past 40
 * bytes), so its state stays in registers.
 *
 * Damaged pages: a node is read only when its offset is even, at or above
 * the pointer array's end (lower) and leaves room in the page for the node
 * header and 8 key bytes (one compare of off - lower, which wraps when off
 * is below lower); LEXW and LEXL read past the first 8 key bytes only after
 * checking that the whole key ends inside the page.  The
 * caller checks the node the search settles on in full (dl_node_check).
 */
static inline __attribute__((always_inline)) int dl_nsearch_fast(MDB_page *mp,
	const dl_skey *s, int kind, int pf, unsigned lo, size_t psize, unsigned *res, int *exact)
{
	unsigned n = NUMKEYS(mp);
	size_t lower = MP_LOWER(mp), koff = NODEKOFF(mp);
	if (n <= lo) {
		*res = lo;
		*exact = 0;
		return 0;
	}
	if (lower + koff + 8 > psize)
		return -1;
	/* d = off - lower; d <= wmax: the header and 8 key bytes fit. */
	size_t wmax = psize - koff - 8 - lower;
	const unsigned char *kb = (const unsigned char *)mp + lower + koff;
	const unsigned char *ka = s->key->mv_data;
	size_t kal = s->key->mv_size;
	uint64_t w = s->word;
	/*
	 * Ascending loads put each key past the last one of every page on
	 * their path: when asked (s->tail), one look at node n-1 answers
	 * them without the halving loop.  Only a first word strictly above
	 * that node's decides (for LEXW and LEXL a longer key with the same
	 * first word needs the full comparison), and a node the loop's
	 * checks would refuse is left to the loop.
	 */
	if (s->tail) {
		size_t d = (size_t)mp->mp_ptrs[n - 1] - lower;
		if (((d & 1) | (d > wmax)) == 0) {
			size_t ks = ((const MDB_node *)(kb + d - koff))->mn_ksize;
			int wide = kind == DL_KC_LEXW || kind == DL_KC_LEXL;
			if (wide ? ks >= 8 : ks == 8) {
				uint64_t y = dl_get64(kb + d);
				if (kind != DL_KC_INT8)
					y = __builtin_bswap64(y);
				if (w > y) {
					*res = n;
					*exact = 0;
					return 0;
				}
			}
		}
	}
	/* Indexes as size_t: no zero-extension before each use as an
	 * address offset. */
	size_t base = lo, len = n - lo, m;
	unsigned gt;
#if DL_VALUE_PREFETCH
	/* LEXL leaves (lo 0): see the end of the loop. */
	int vleaf = kind == DL_KC_LEXL && pf && lo == 0;
#endif
	/*
	 * Prefetching (large trees only, pf, see DL_PREFETCH_PAGES): the
	 * nodes a later probe may read are fetched early, so their cache
	 * misses overlap the current probe's instead of following it (the
	 * branch-free loop gives the CPU no predicted path to load ahead on).
	 * DL_PREFETCH_AHEAD 1: each probe fetches the two nodes the next
	 * probe may read, one of which it reads.  2: each probe fetches the
	 * four the probe after next may read (the first probe also the next
	 * probe's two), one of which it reads: more overlap, but about twice
	 * the lines the search reads come into the caches.  A prefetch never
	 * faults, so a damaged offset costs nothing here; the pointers read
	 * for it lie in the array the loop bounds.
	 */
#if DL_PREFETCH_BURST
	/*
	 * Leaves of 8 nodes and more: the nodes the second, third and
	 * fourth probes may read, fetched together before the first probe
	 * (DL_PREFETCH_BURST).  Every range a probe halves at one depth has
	 * the same length, so the candidates at depth j are base plus a
	 * sum of the halving offsets a0..a(j-1) plus aj; the largest index,
	 * a0 + a1 + a2 + a3, stays below len.
	 */
	if (pf && lo == 0 && len >= 8) {
		size_t a0 = len >> 1, l1 = len - a0, a1 = l1 >> 1, l2 = l1 - a1;
		size_t a2 = l2 >> 1, a3 = (l2 - a2) >> 1;
		const char *pb = (const char *)mp;
		const indx_t *pp = mp->mp_ptrs + base;
		DL_PREFETCH(pb + pp[a1]);
		DL_PREFETCH(pb + pp[a1 + a0]);
		DL_PREFETCH(pb + pp[a2]);
		DL_PREFETCH(pb + pp[a2 + a0]);
		DL_PREFETCH(pb + pp[a2 + a1]);
		DL_PREFETCH(pb + pp[a2 + a1 + a0]);
		DL_PREFETCH(pb + pp[a3]);
		DL_PREFETCH(pb + pp[a3 + a0]);
		DL_PREFETCH(pb + pp[a3 + a1]);
		DL_PREFETCH(pb + pp[a3 + a1 + a0]);
		DL_PREFETCH(pb + pp[a3 + a2]);
		DL_PREFETCH(pb + pp[a3 + a2 + a0]);
		DL_PREFETCH(pb + pp[a3 + a2 + a1]);
		DL_PREFETCH(pb + pp[a3 + a2 + a1 + a0]);
	}
#endif
#if DL_PREFETCH_AHEAD == 2
	if (pf && len > 3) {
		size_t h = (len - (len >> 1)) >> 1;
		DL_PREFETCH((const char *)mp + mp->mp_ptrs[base + h]);
		DL_PREFETCH((const char *)mp + mp->mp_ptrs[base + (len >> 1) + h]);
	}
#endif
#if DL_SEARCH_TAIL
	/* Set once a LEXW or LEXL pass met a first word equal to the search
	 * key's: the halving then finishes the range. */
	int tied = 0;
#endif
	/* DL_SEARCH_PTRNEXT: dn is the next probe's node offset less lower,
	 * read before the compare that picks it. */
	int pn = DL_SEARCH_PTRNEXT && (!pf || DL_SEARCH_PTRNEXT == 2);
	size_t dn = pn ? (size_t)mp->mp_ptrs[base + (len >> 1)] - lower : 0;
	for (;;) {
#if DL_SEARCH_TAIL
		/*
		 * A range of at most DL_SEARCH_TAIL nodes (pf only): every node
		 * is read, DL_SEARCH_TAIL loads whose addresses need no
		 * compare, the nodes past the range's end replaced by its last
		 * one and left out of the counts.  The answer lies in
		 * base..base+len (the nodes before base sort below the key,
		 * those from base+len on not), so it is base plus the number
		 * of the range's nodes below the key.  Each node gets the
		 * loop's checks (a branch that is not taken but on damage).
		 * An equal first word decides the 8-byte kinds; for
		 * LEXW and LEXL it needs the rest of the key, so the halving
		 * takes that range over.
		 */
		if (pf && len <= DL_SEARCH_TAIL && !tied && (DL_SEARCH_TAIL_WIDE ||
		    kind == DL_KC_LEX8 || kind == DL_KC_INT8)) {
			size_t below = 0, eq = 0, eqi = (size_t)-1;
			for (size_t i = 0; i < DL_SEARCH_TAIL; i++) {
				size_t in = i < len, j = in ? i : len - 1;
				size_t dj = (size_t)mp->mp_ptrs[base + j] - lower;
				if (__builtin_expect(((dj & 1) | (dj > wmax)) != 0, 0))
					return -1;
				size_t kj = ((const MDB_node *)(kb + dj - koff))->mn_ksize;
				int wide = kind == DL_KC_LEXW || kind == DL_KC_LEXL;
				if (__builtin_expect(wide ? kj < 8 : kj != 8, 0))
					return -1;
				uint64_t yj = dl_get64(kb + dj);
				if (kind != DL_KC_INT8)
					yj = __builtin_bswap64(yj);
				below += in & (w > yj);
				eq |= in & (w == yj);
				eqi = (in & (w == yj)) ? i : eqi;
#if DL_VALUE_PREFETCH
				/* As in the loop below: the value of a node the
				 * search key does not sort above. */
				if (vleaf)
					DL_PREFETCH(kb + dj + (kal & ((size_t)(w > yj) - 1)));
#endif
			}
			/* Exact only when the node answered is the equal one
			 * (the last equal one, on a page out of order): never a
			 * match for a key the page does not hold. */
			if (kind == DL_KC_LEX8 || kind == DL_KC_INT8 || !eq) {
				*res = (unsigned)(base + below);
				*exact = eqi == below;
				return 0;
			}
			/* LEXW, LEXL: the first node whose first word is not
			 * below the key's has the key's first word (on a sorted
			 * page).  The rest of the key decides at or below it;
			 * above it, the next nodes may share that word too, and
			 * the halving takes over. */
			if (below < len) {
				size_t t = base + below;
				size_t dt = (size_t)mp->mp_ptrs[t] - lower;
				size_t kt = ((const MDB_node *)(kb + dt - koff))->mn_ksize;
				if (__builtin_expect(dt + kt > wmax + 8, 0))
					return -1;
				int c = kind == DL_KC_LEXL ?
					dl_lex_tail(ka + 8, kal - 8, kb + dt + 8, kt - 8) :
					dl_lex_words(ka + 8, kal - 8, kb + dt + 8, kt - 8);
				if (c <= 0 && dl_be64(kb + dt) == w) {
					*res = (unsigned)t;
					*exact = c == 0;
					return 0;
				}
			}
			tied = 1;
			continue;
		}
#endif
		m = base + (len >> 1);
		size_t l1 = len - (len >> 1);
#if DL_PREFETCH_AHEAD == 2
		if (pf && l1 > 3) {
			size_t h = l1 >> 1, h2 = (l1 - h) >> 1;
			DL_PREFETCH((const char *)mp + mp->mp_ptrs[base + h2]);
			DL_PREFETCH((const char *)mp + mp->mp_ptrs[base + h + h2]);
			DL_PREFETCH((const char *)mp + mp->mp_ptrs[m + h2]);
			DL_PREFETCH((const char *)mp + mp->mp_ptrs[m + h + h2]);
		}
#else
		/* Also when l1 == 1: both indexes are still in the range
		 * and name this probe's node or the next probe's, and a
		 * test of l1 would be one more loop exit for the branch
		 * predictor to miss. */
		if (pf) {
			DL_PREFETCH((const char *)mp + mp->mp_ptrs[base + (l1 >> 1)]);
			DL_PREFETCH((const char *)mp + mp->mp_ptrs[m + (l1 >> 1)]);
		}
#endif
		size_t d, dlo = 0, dhi = 0;
		if (pn) {
			/* The next probe is base + (l1 >> 1) or m + (l1 >> 1),
			 * both below base + len (m + (l1 >> 1) is m itself when
			 * l1 is 1), so inside the pointer array.  Only the offset
			 * picked is checked, below, before its node is read. */
			d = dn;
			dlo = (size_t)mp->mp_ptrs[base + (l1 >> 1)] - lower;
			dhi = (size_t)mp->mp_ptrs[m + (l1 >> 1)] - lower;
		} else {
			d = (size_t)mp->mp_ptrs[m] - lower;
		}
		if (__builtin_expect(((d & 1) | (d > wmax)) != 0, 0))
			return -1;
		size_t ks = ((const MDB_node *)(kb + d - koff))->mn_ksize;
		uint64_t y;
		/* Key bytes are loaded only once the key is known to hold
		 * them: on an inline duplicate sub-page psize does not bound
		 * the bytes after a short key. */
		if (kind == DL_KC_LEXW || kind == DL_KC_LEXL) {
			if (__builtin_expect(ks < 8, 0))
				return -1;
			y = dl_be64(kb + d);
			if (w != y) {
				gt = w > y;
			} else {
				if (__builtin_expect(d + ks > wmax + 8, 0))
					return -1;
				int c = kind == DL_KC_LEXL ?
					dl_lex_tail(ka + 8, kal - 8, kb + d + 8, ks - 8) :
					dl_lex_words(ka + 8, kal - 8, kb + d + 8, ks - 8);
				gt = c > 0;
				if (c == 0) {
					*res = (unsigned)m;
					*exact = 1;
					return 0;
				}
			}
		} else {
			if (__builtin_expect(ks != 8, 0))
				return -1;
			y = dl_get64(kb + d);
			if (kind == DL_KC_LEX8)
				y = __builtin_bswap64(y);
			gt = w > y;
			if (w == y) {
				*res = (unsigned)m;
				*exact = 1;
				return 0;
			}
		}
#if DL_VALUE_PREFETCH
		/*
		 * LEXL leaves: a probe the search key sorts below may be the
		 * node the search settles on, whose value the caller reads.
		 * Past a key of 41 bytes or more the value starts on another
		 * line than the one the probe read, so it is fetched now,
		 * while the later probes run, at the end of a key of the
		 * search key's size (the keys of such stores are mostly of
		 * one size).  Without a branch on the comparison: else the
		 * probe's own node.  That end may lie past the page (a key
		 * of another size, a damaged node): a prefetch never faults,
		 * and a store of keys of the search key's size never places
		 * it there.
		 */
		if (vleaf)
			DL_PREFETCH(kb + d + (kal & ((size_t)gt - 1)));
#endif
		base = gt ? m : base;
		if (pn)
			dn = gt ? dhi : dlo;
		len = l1;
		/*
		 * The range is down to one node, base: the answer is base or
		 * base + 1.  Once base has moved it is a node the key was
		 * found above (base only moves onto such a probe), so the
		 * answer is base + 1 without probing base again; base still
		 * at lo needs its probe, the one just made when m == lo.
		 * The test of l1 is the loop's one exit but for an equal
		 * probe; the 8-byte kinds' pass (pf) always ends the search
		 * before, so they make no test.
		 */
		if (!(DL_SEARCH_TAIL && pf && (kind == DL_KC_LEX8 || kind == DL_KC_INT8)) &&
		    __builtin_expect(l1 == 1, 0) && (base != lo || m == lo))
			break;
	}
	/* A node equal to the search key is always probed before the range
	 * closes on it, so no equal probe means no exact answer. */
	*res = (unsigned)(base + (gt | (base != lo)));
	*exact = 0;
	return 0;
}

/*
 * The generic search: the same answer as dl_nsearch_fast for any
 * comparator, a binary search that calls the comparator (the default order
 * inline) on each probe and bounds each probed node with dl_probe first.
 * Returns MDB_CORRUPTED, *res = the node's index, for a node outside the
 * page.
 */
static __attribute__((noinline)) int dl_nsearch_generic(MDB_page *mp, const dl_skey *s, unsigned lo, size_t psize,
	unsigned *res, int *exact)
{
	MDB_cmp_func *cmp = s->cmp;
	const MDB_val *key = s->key;
	int lex = cmp == dl_cmp_lex;
	size_t koff = NODEKOFF(mp);
	int l = (int)lo, h = (int)NUMKEYS(mp) - 1, c = 1;
	unsigned i = lo;
	while (l <= h) {
		int mid = (l + h) >> 1;
		MDB_node *node = dl_probe(mp, (unsigned)mid, psize, koff);
		if (!node) {
			*res = (unsigned)mid;
			return MDB_CORRUPTED;
		}
		const unsigned char *k = (const unsigned char *)node + koff;
		if (lex) {
			c = dl_lex_inline(key->mv_data, key->mv_size, k, node->mn_ksize);
		} else {
			MDB_val v = { node->mn_ksize, (void *)k };
			c = cmp(key, &v);
		}
		if (dl_halve(c, mid, &l, &h, &i))
			break;
	}
	*res = i;
	*exact = c == 0;
	return 0;
}

/*
 * dl_nsearch_fast compiled once per kind, with and without prefetching, and
 * once per page role: _lf for leaves (lo 0), _br for branches (lo 1, node
 * 0's key never compared), each with its own registers.  A constant lo
 * leaves the leaf-only work (the burst, the value prefetch) out of the
 * branch instances without a test on every probe.  Callers pass the lo of
 * the instance they call.
 */
#define DL_NSEARCH_INSTANCE(name, kc, pfv) \
static __attribute__((noinline)) int name##_lf(MDB_page *mp, const dl_skey *s, \
	unsigned lo, size_t psize, unsigned *res, int *exact) \
{ \
	DL_ASSERT(lo == 0); \
	return dl_nsearch_fast(mp, s, kc, pfv, 0, psize, res, exact); \
} \
static __attribute__((noinline)) int name##_br(MDB_page *mp, const dl_skey *s, \
	unsigned lo, size_t psize, unsigned *res, int *exact) \
{ \
	DL_ASSERT(lo == 1); \
	return dl_nsearch_fast(mp, s, kc, pfv, 1, psize, res, exact); \
}

DL_NSEARCH_INSTANCE(dl_nsearch_lex8, DL_KC_LEX8, 0)
DL_NSEARCH_INSTANCE(dl_nsearch_lex8_pf, DL_KC_LEX8, 1)
DL_NSEARCH_INSTANCE(dl_nsearch_lexw, DL_KC_LEXW, 0)
DL_NSEARCH_INSTANCE(dl_nsearch_lexw_pf, DL_KC_LEXW, 1)
DL_NSEARCH_INSTANCE(dl_nsearch_lexl, DL_KC_LEXL, 0)
DL_NSEARCH_INSTANCE(dl_nsearch_lexl_pf, DL_KC_LEXL, 1)
DL_NSEARCH_INSTANCE(dl_nsearch_int8, DL_KC_INT8, 0)
DL_NSEARCH_INSTANCE(dl_nsearch_int8_pf, DL_KC_INT8, 1)

/* Lower bound among the nodes of a plain leaf (see dl_nsearch_fast);
 * MDB_CORRUPTED with *res = the index of a node outside the page.  Inline in
 * its caller, which keeps the arguments for the generic search in its own
 * registers, so the call to the kind's instance needs no frame of its own
 * around it. */
static inline __attribute__((always_inline)) int dl_nsearch_leaf(MDB_page *mp,
	const dl_skey *s, size_t psize, unsigned *res, int *exact)
{
	int rc;
	/* Compare chains with direct calls, the commonest kind first (GCC
	 * made a jump table of one chain over all eight cases). */
	if (s->kind == DL_KC_LEX8) {
		rc = dl_nsearch_lex8_lf(mp, s, 0, psize, res, exact);
	} else if (s->kind == (DL_KC_LEX8 | DL_KC_PF)) {
		rc = dl_nsearch_lex8_pf_lf(mp, s, 0, psize, res, exact);
	} else if (!(s->kind & DL_KC_PF)) {
		switch (s->kind) {
		case DL_KC_LEXW:
			rc = dl_nsearch_lexw_lf(mp, s, 0, psize, res, exact);
			break;
		case DL_KC_INT8:
			rc = dl_nsearch_int8_lf(mp, s, 0, psize, res, exact);
			break;
		default:
			/* LEXL last: a compare chain, not a jump table, for
			 * the common kinds. */
			rc = s->kind == DL_KC_LEXL ?
				dl_nsearch_lexl_lf(mp, s, 0, psize, res, exact) : -1;
		}
	} else {
		switch (s->kind & ~DL_KC_PF) {
		case DL_KC_LEXW:
			rc = dl_nsearch_lexw_pf_lf(mp, s, 0, psize, res, exact);
			break;
		case DL_KC_INT8:
			rc = dl_nsearch_int8_pf_lf(mp, s, 0, psize, res, exact);
			break;
		default:
			rc = dl_nsearch_lexl_pf_lf(mp, s, 0, psize, res, exact);
		}
	}
	if (__builtin_expect(rc < 0, 0))
		rc = dl_nsearch_generic(mp, s, 0, psize, res, exact);
	return rc;
}

/* The instances of dl_nsearch_fast as one pointer, for a lookup that
 * searches several pages with the same key (dl_search_key): for leaves
 * (leaf 1, called with lo 0) the same choice as dl_nsearch_leaf makes, for
 * branches (leaf 0, lo 1) the branch instance of that kind; the generic
 * search itself for DL_KC_ANY (it never returns < 0, so dl_nsearch_via
 * does not call it twice). */
typedef int dl_nsearch_fn(MDB_page *mp, const dl_skey *s, unsigned lo, size_t psize,
	unsigned *res, int *exact);

/* By kind (DL_KC_*, with or without DL_KC_PF), then branch (0) or leaf (1). */
_Static_assert(DL_KC_ANY == 0 && DL_KC_LEX8 == 1 && DL_KC_LEXW == 2 && DL_KC_LEXL == 3 &&
	DL_KC_INT8 == 4 && DL_KC_PF == 8, "dl_nsearch_tab's rows");
#define DL_NSEARCH_GEN	{ dl_nsearch_generic, dl_nsearch_generic }
static dl_nsearch_fn *const dl_nsearch_tab[16][2] = {
	DL_NSEARCH_GEN,
	{ dl_nsearch_lex8_br, dl_nsearch_lex8_lf },
	{ dl_nsearch_lexw_br, dl_nsearch_lexw_lf },
	{ dl_nsearch_lexl_br, dl_nsearch_lexl_lf },
	{ dl_nsearch_int8_br, dl_nsearch_int8_lf },
	DL_NSEARCH_GEN, DL_NSEARCH_GEN, DL_NSEARCH_GEN, DL_NSEARCH_GEN,
	{ dl_nsearch_lex8_pf_br, dl_nsearch_lex8_pf_lf },
	{ dl_nsearch_lexw_pf_br, dl_nsearch_lexw_pf_lf },
	{ dl_nsearch_lexl_pf_br, dl_nsearch_lexl_pf_lf },
	{ dl_nsearch_int8_pf_br, dl_nsearch_int8_pf_lf },
	DL_NSEARCH_GEN, DL_NSEARCH_GEN, DL_NSEARCH_GEN,
};

static inline dl_nsearch_fn *dl_nsearch_pick(int kind, int leaf)
{
	return dl_nsearch_tab[kind & 15][leaf];
}

/* One page's search through the instance fn (dl_nsearch_pick), the
 * generic search when the instance declines the page. */
static inline __attribute__((always_inline)) int dl_nsearch_via(dl_nsearch_fn *fn,
	MDB_page *mp, const dl_skey *s, unsigned lo, size_t psize, unsigned *res, int *exact)
{
	int rc = fn(mp, s, lo, psize, res, exact);
	if (__builtin_expect(rc < 0, 0))
		rc = dl_nsearch_generic(mp, s, lo, psize, res, exact);
	return rc;
}

/*
 * dl_pfx_cmp_lex for a probe the search's straight path does not take: a
 * varint of two or more bytes, a node that extends the trunk or stores
 * fewer than two bytes, a raw-form node, a corrupt one.  Out of line so the
 * straight path keeps its values in registers.
 */
static __attribute__((noinline)) int dl_pfx_probe_other(const MDB_val *key, size_t p,
	const unsigned char *t, size_t tl, const unsigned char *e, size_t l, int *bad)
{
	return dl_pfx_cmp_lex(key, p, t, tl, e, l, bad);
}

/*
 * Binary search of a compressed leaf under the default lexicographic order
 * without decoding (dlmdb-extensions §3.11): p = lcp(key, trunk) once, then
 * each probe compares only past min(p, s).  Same contract as
 * dl_leaf_search; *res = node index reached, *cres = last comparison.
 *
 * The straight path of a probe is the form this engine writes: a one-byte
 * varint s below |T|, at least one suffix byte, and that byte not T[s];
 * everything else (a node that extends the trunk, longer varints, raw and
 * corrupt nodes) goes to dl_pfx_probe_other.  A probed node is bounded by
 * one unsigned compare of off - lower, rotated right by one bit so that an
 * odd difference is huge, against half the span a header can start in (lower
 * is even and a leaf's keys start NODESZ past the header, as
 * dl_page_check requires; a page that breaks either is refused here), and
 * one of its key's end against the page's.
 *
 * Prefetching (pf: a large tree, as for dl_nsearch_fast; DL_PFX_PF probes
 * ahead): before the trunk is read, the trunk's node and the nodes the first
 * DL_PFX_PF probes may read are fetched (the first probe's, then the second
 * probe's two candidates), so their misses overlap instead of each waiting
 * for the one before; each probe then fetches the candidates of the probe
 * DL_PFX_PF steps after it.
 * Indexes are computed without branches; an empty side of a range names a
 * node inside the range instead.  The pointers read for a prefetch are
 * entries 0..n-1 of the array, the same the probes read; a prefetch never
 * faults, so a damaged offset costs nothing there.
 */
static int dl_pfx_search_lex(MDB_env *env, MDB_page *mp, const MDB_val *key, unsigned *res,
	int *cres, int pf)
{
	unsigned n = NUMKEYS(mp), i = 0;
	int lo = 0, hi = (int)n - 1, c = 1, bad = 0;
	size_t psize = env->psize, lower = MP_LOWER(mp);
#if DL_PFX_PF
	/* mid of the whole range, and of its halves lo..m0-1 and m0+1..hi. */
	if (pf) {
		int m0 = hi >> 1;
		DL_PREFETCH((const char *)mp + mp->mp_ptrs[0]);
		DL_PREFETCH((const char *)mp + mp->mp_ptrs[m0]);
#if DL_PFX_PF >= 2
		DL_PREFETCH((const char *)mp + mp->mp_ptrs[(m0 - (m0 > 0)) >> 1]);
		DL_PREFETCH((const char *)mp + mp->mp_ptrs[(m0 + hi + (m0 < hi)) >> 1]);
#endif
	}
#else
	(void)pf;
#endif
	if (dl_node_check(env, mp, NODEPTR(mp, 0), 1) || (lower & 1) ||
	    (mp->mp_flags & P_COUNTED))
		return MDB_CORRUPTED;
	MDB_node *n0 = NODEPTR(mp, 0);
	const unsigned char *t = (const unsigned char *)n0 + NODESZ;
	const unsigned char *k = key->mv_data;
	size_t tl = n0->mn_ksize, kl = key->mv_size;
	size_t p = dl_pfx_lcp(k, kl, t, tl);
	/* Node 0's check put lower + NODESZ within the page. */
	size_t span = (psize - NODESZ - lower) >> 1, kend = psize - NODESZ;
	/* A first stored byte from here on is a longer varint (0x80 up) or
	 * s >= |T|: not the straight path. */
	size_t slim = tl < 0x80 ? tl : 0x80;
	/* The answer against the trunk, and against any node sharing more
	 * than p bytes with it (they differ from key where the trunk does). */
	int ctrunk = dl_pfx_cmp_trunk(key, p, t, tl);
	int cfar = p == kl ? -1 : ctrunk;
	while (lo <= hi) {
		int mid = (lo + hi) >> 1;
#if DL_PFX_PF
		if (pf) {
			/* a, b: the next probe, after key < node mid and after
			 * key > node mid (mids of lo..mid-1 and mid+1..hi). */
			int a = (lo + mid - (lo < mid)) >> 1, b = (mid + hi + (mid < hi)) >> 1;
#if DL_PFX_PF >= 2
			/* The probe after: mids of lo..a-1, a+1..mid-1,
			 * mid+1..b-1 and b+1..hi. */
			DL_PREFETCH((const char *)mp + mp->mp_ptrs[(lo + a - (lo < a)) >> 1]);
			DL_PREFETCH((const char *)mp + mp->mp_ptrs[(a + mid) >> 1]);
			DL_PREFETCH((const char *)mp + mp->mp_ptrs[(mid + b) >> 1]);
			DL_PREFETCH((const char *)mp + mp->mp_ptrs[(b + 1 + hi) >> 1]);
#else
			DL_PREFETCH((const char *)mp + mp->mp_ptrs[a]);
			DL_PREFETCH((const char *)mp + mp->mp_ptrs[b]);
#endif
		}
#endif
		if (mid == 0) {
			c = ctrunk;
		} else {
			size_t off = mp->mp_ptrs[mid], d = off - lower;
			if (__builtin_expect(((d >> 1) | (d << (sizeof(d) * 8 - 1))) > span, 0))
				return MDB_CORRUPTED;
			const unsigned char *e = (const unsigned char *)mp + off + NODESZ;
			size_t l = ((const MDB_node *)(e - NODESZ))->mn_ksize, s = 0;
			int other = (l < 2) | (off + l > kend);
			if (__builtin_expect(!other, 1)) {
				s = e[0];
				/* Any readable byte where s decides alone. */
				const unsigned char *ts = s < slim ? t + s : e;
				other = (s >= slim) | (e[1] == *ts);
			}
			if (__builtin_expect(other, 0)) {
				if (off + l > kend)
					return MDB_CORRUPTED;
				c = dl_pfx_probe_other(key, p, t, tl, e, l, &bad);
				if (bad)
					return MDB_CORRUPTED;
			} else if (p < s) {
				c = cfar;
			} else {
				size_t rest = kl - s, sl = l - 1, m = rest < sl ? rest : sl;
				c = dl_pfx_bytes_cmp(k + s, e + 1, m);
				if (!c)
					c = rest < sl ? -1 : rest > sl;
			}
		}
		if (dl_halve(c, mid, &lo, &hi, &i))
			break;
	}
	*res = i;
	*cres = c;
	return 0;
}

static MDB_node *dl_leaf_search_other(MDB_cursor *mc, const dl_skey *s, int *exact);

/*
 * Position mc->ki[top] at the first leaf entry >= key.  Returns the node at
 * that index (NULL if past the end; LEAF2 pages return a non-NULL dummy) and
 * sets *exact.  fn: the page search instance the caller picked
 * (dl_nsearch_pick), NULL for dl_nsearch_leaf's choice.
 */
static inline __attribute__((always_inline)) MDB_node *dl_leaf_search_in(MDB_cursor *mc,
	const dl_skey *s, dl_nsearch_fn *fn, int *exact)
{
	MDB_page *mp = mc->pg[mc->top];
	if (__builtin_expect((mc->flags & C_PREFIX) || IS_LEAF2(mp), 0))
		return dl_leaf_search_other(mc, s, exact);
	/* Plain nodes: the specialised search. */
	MDB_env *env = mc->txn->env;
	unsigned i;
	int c;
	*exact = 0;
	if (fn ? dl_nsearch_via(fn, mp, s, 0, env->psize, &i, &c) :
	    dl_nsearch_leaf(mp, s, env->psize, &i, &c)) {
		/* NULL with ki inside the page: callers report MDB_CORRUPTED. */
		mc->ki[mc->top] = (indx_t)i;
		return NULL;
	}
	mc->ki[mc->top] = (indx_t)i;
	if (i >= NUMKEYS(mp))
		return NULL;
	MDB_node *res = NODEPTR(mp, i);
	if (dl_node_check(env, mp, res, 1))
		return NULL;	/* ki < n: callers report MDB_CORRUPTED */
	*exact = c;
	return res;
}

static MDB_node *dl_leaf_search_sk(MDB_cursor *mc, const dl_skey *s, int *exact)
{
	return dl_leaf_search_in(mc, s, NULL, exact);
}

/* dl_leaf_search_sk on a prefix-compressed leaf or a LEAF2 page. */
static __attribute__((noinline)) MDB_node *dl_leaf_search_other(MDB_cursor *mc,
	const dl_skey *s, int *exact)
{
	MDB_env *env = mc->txn->env;
	MDB_page *mp = mc->pg[mc->top];
	MDB_cmp_func *cmp = mc->dbx->cmp;
	const MDB_val *key = s->key;
	unsigned n = NUMKEYS(mp);
	int lo = 0, hi = (int)n - 1, c = 1;
	unsigned i = 0;
	MDB_val k;
	unsigned char kb[DL_MAXKEY + 1];
	int lex = cmp == dl_cmp_lex, pfx = (mc->flags & C_PREFIX) != 0;
	*exact = 0;
	int leaf2 = IS_LEAF2(mp);
	if (pfx && lex && !leaf2 && n) {
		const MDB_db *db = mc->db;
		int pf = db->md_branch_pages + db->md_leaf_pages > DL_PREFETCH_PAGES;
		if (dl_pfx_search_lex(env, mp, key, &i, &c, pf)) {
			/* NULL with ki inside the page: MDB_CORRUPTED. */
			mc->ki[mc->top] = 0;
			return NULL;
		}
		lo = 1;
		hi = 0;		/* skip the generic loop */
	}
	while (lo <= hi) {
		int mid = (lo + hi) >> 1;
		if (!leaf2 && dl_node_check(env, mp, NODEPTR(mp, mid), 1)) {
			mc->ki[mc->top] = (indx_t)mid;
			return NULL;
		} else if (!pfx)
			dl_leaf_key(mp, (unsigned)mid, &k);
		else if (dl_leaf_keyd(mc, mp, (unsigned)mid, &k, kb)) {
			mc->ki[mc->top] = (indx_t)mid;
			return NULL;	/* undecodable: callers report MDB_CORRUPTED */
		}
		c = lex ? dl_lex(key, &k) : cmp(key, &k);
		if (dl_halve(c, mid, &lo, &hi, &i))
			break;
	}
	mc->ki[mc->top] = (indx_t)i;
	if (i >= n)
		return NULL;
	if (leaf2) {
		*exact = (c == 0);
		return (MDB_node *)mp;
	}
	MDB_node *res = NODEPTR(mp, i);
	if (dl_node_check(env, mp, res, 1))
		return NULL;	/* ki < n: callers report MDB_CORRUPTED */
	*exact = (c == 0);
	return res;
}

MDB_node *dl_leaf_search(MDB_cursor *mc, const MDB_val *key, int *exact)
{
	dl_skey s;
	dl_skey_init(&s, mc->dbx->cmp, key);
	dl_skey_tree(&s, mc, 1);
	return dl_leaf_search_sk(mc, &s, exact);
}

/*
 * The common answer of dl_page_check, cheaply: a branch (counted or not) or
 * a leaf of nodes (not LEAF2) with sane lower/upper.  0 means "ask
 * dl_page_check", which decides LEAF2 pages and reports damage.
 */
static inline int dl_tree_page_ok(const MDB_page *mp, size_t psize)
{
	unsigned f = mp->mp_flags & (P_BRANCH | P_LEAF | P_OVERFLOW | P_META | P_LEAF2 | P_COUNTED);
	unsigned lo = MP_LOWER(mp), up = MP_UPPER(mp);
	return ((f & ~(unsigned)P_COUNTED) == P_BRANCH || f == P_LEAF) && up <= psize &&
		lo <= up && lo >= PAGEHDRSZ && !(lo & 1);
}

/* The child page number of branch node n, whose 8-byte header lies in its
 * page: one load of the header (little-endian host, layout.h) and the low
 * 48 bits, which are NODEPGNO's lo, hi and flags fields. */
static inline pgno_t dl_branch_pgno(const MDB_node *n)
{
	return dl_get64(n) & 0xffffffffffffull;
}

/*
 * Descend from the root.  mode DL_PS_KEY follows the search key s,
 * searching each branch with fn (the branch instance of s's kind,
 * dl_nsearch_pick: picked once, not per page), DL_PS_FIRST/LAST the edges (s and fn NULL); DL_PS_MODIFY
 * makes every page on the path writable.  On success mc->top is the leaf
 * level; the leaf index is left for the caller.
 *
 * Inline, for a mode known where it is used: dl_search_key has its own
 * copy for lookups, which with the leaf search fits one frame;
 * dl_search_mode is the copy for every other use.  A page is read as
 * dl_pget reads it; without DL_PS_MODIFY the txn's dirty pages cannot
 * change during the descent, so dl_pget's test for the map is made once,
 * as a page number limit (one compare of pg - 2 against lim per page; lim
 * 0 sends every page to dl_page_get, which decides them all).
 */
static inline __attribute__((always_inline)) int dl_search_sk(MDB_cursor *mc,
	const dl_skey *s, dl_nsearch_fn *fn, int mode)
{
	MDB_txn *txn = mc->txn;
	MDB_env *env = txn->env;
	int rc, how = mode & 3, modify = mode & DL_PS_MODIFY;
	unsigned level = 0;
	MDB_page *mp = NULL;	/* the page above pg: NULL for the root */

	if ((rc = dl_check_intr(txn)))
		return rc;
	if (txn->dbflags[mc->dbi] & DB_STALE) {
		if ((rc = dl_db_load(txn, mc->dbi)))
			return rc;
	}
	mc->top = -1;
	pgno_t pg = mc->db->md_root;
	if (pg == P_INVALID)
		return MDB_NOTFOUND;
	size_t psize = env->psize;
	char *map = env->map;
	pgno_t lim = 0;
	if (!modify && !txn->dirty.count && !txn->parent)
		lim = dl_txn_map_span(txn);
	/* The first level whose pages dl_page_prefetch fetches whole as soon
	 * as their numbers are known (DL_PAGE_PF), in a key lookup of a large
	 * tree: the leaves', or the branches' above them; none (DL_MAXDEPTH)
	 * otherwise.  Only pages of the map, inside the snapshot: a damaged
	 * depth or page number costs a useless prefetch at most, which never
	 * faults. */
	unsigned pflevel = DL_MAXDEPTH;
	const MDB_db *db = mc->db;
	size_t pfbound = DL_PAGE_PF_L2X * env->l2bytes;
	if (DL_PAGE_PF && how == DL_PS_KEY && lim && psize <= DL_PAGE_PF_MAX &&
	    db->md_branch_pages + db->md_leaf_pages > DL_PREFETCH_PAGES &&
	    (size_t)db->md_leaf_pages * psize > pfbound) {
		pflevel = db->md_depth - 1u;
		if ((size_t)db->md_branch_pages * psize > pfbound && pflevel > 1)
			pflevel--;
	}
	for (;;) {
		if (modify) {
			if ((rc = dl_pget(txn, pg, &mp)))
				return rc;
		} else if (__builtin_expect(pg - 2 < lim, 1)) {
			mp = (MDB_page *)(map + (size_t)pg * psize);
			/* Before the header's load: every line is asked for
			 * at once, and the header's wait covers them all. */
			if (level >= pflevel)
				dl_page_prefetch((const char *)mp, psize);
		} else if ((rc = dl_page_get_ref(txn, mp, pg, &mp))) {
			return rc;
		}
		mc->pg[level] = mp;
		mc->top = (int)level;
		DL_ASSERT(mc->top < DL_MAXDEPTH);
		if (modify) {
			if ((rc = dl_page_touch(mc, (int)level)))
				return rc;
			mp = mc->pg[level];
		}
		if (!dl_tree_page_ok(mp, psize) && (rc = dl_page_check(env, mp)))
			return rc;
		if (!IS_BRANCH(mp))
			break;
		unsigned n = NUMKEYS(mp), idx;
		if (!n)
			return MDB_CORRUPTED;
		if (how == DL_PS_FIRST) {
			idx = 0;
		} else if (how == DL_PS_LAST) {
			idx = n - 1;
		} else {
			/* The child for key: the largest separator <= key
			 * (node 0's key is never compared). */
			unsigned i;
			int exact;
			if ((rc = dl_nsearch_via(fn, mp, s, 1, psize, &i, &exact)))
				return rc;
			idx = exact ? i : i - 1;
		}
		MDB_node *node = NODEPTR(mp, idx);
		/* A key search settles on node 0 or on a node it probed, and
		 * every probe bounds the node as dl_node_check does, but
		 * under LEXW and LEXL only the key's first 8 bytes: there the
		 * key's end is the one bound left to check. */
		if (how != DL_PS_KEY || idx == 0) {
			if ((rc = dl_node_check(env, mp, node, 0)))
				return rc;
		} else if (s->part && (size_t)((char *)node - (char *)mp) + NODEKOFF(mp) +
		    node->mn_ksize > psize) {
			return MDB_CORRUPTED;
		}
		mc->ki[level] = (indx_t)idx;
		if (++level >= DL_MAXDEPTH)
			return MDB_CURSOR_FULL;
		pg = dl_branch_pgno(node);
	}
	if (!IS_LEAF(mp))
		return MDB_CORRUPTED;
	if (level + 1 != mc->db->md_depth)
		return MDB_CORRUPTED;
	return dl_leaf2_check(mc, mp);
}

/* dl_search_sk for any mode, out of line. */
static __attribute__((noinline)) int dl_search_mode(MDB_cursor *mc, const dl_skey *s, int mode)
{
	return dl_search_sk(mc, s, s ? dl_nsearch_pick(s->kind, 0) : NULL, mode);
}

int dl_search(MDB_cursor *mc, const MDB_val *key, int mode)
{
	dl_skey s;
	if ((mode & 3) != DL_PS_KEY)
		return dl_search_mode(mc, NULL, mode);
	dl_skey_init(&s, mc->dbx->cmp, key);
	dl_skey_tree(&s, mc, 1);
	return dl_search_mode(mc, &s, mode);
}

/*
 * dl_search for key, then dl_leaf_search in the leaf reached, sharing the
 * prepared search key.  Returns dl_search's error, or 0 with *node and
 * *exact set as dl_leaf_search sets them.  The lookup of mdb_get
 * (dl_get_value) and the SET ops (dl_cursor_set, dl_cursor_set_plain),
 * inline in each: the descent and the leaf search in the caller's frame,
 * with one page search instance for every branch and one for the leaf.
 */
static inline __attribute__((always_inline)) int dl_search_key(MDB_cursor *mc,
	const MDB_val *key, MDB_node **node, int *exact)
{
	dl_skey s;
	dl_skey_init(&s, mc->dbx->cmp, key);
	dl_skey_tree(&s, mc, 0);
	int rc = dl_search_sk(mc, &s, dl_nsearch_pick(s.kind, 0), DL_PS_KEY);
	if (rc)
		return rc;
	*node = dl_leaf_search_in(mc, &s, dl_nsearch_pick(s.kind, 1), exact);
	return 0;
}

/* MDB_SET, MDB_SET_KEY and MDB_SET_RANGE on a non-DUPSORT cursor (or a
 * DUPSORT one's key part): dl_cursor_set, and dl_cursor_set_plain, each
 * with the lookup inline. */
static inline __attribute__((always_inline)) int dl_cursor_set_in(MDB_cursor *mc,
	MDB_val *key, MDB_val *data, MDB_cursor_op op)
{
	int rc, exact;
	if (!key)
		return EINVAL;
	if (!key->mv_size)
		return MDB_BAD_VALSIZE;
	dl_pos_clear_place(mc);
	MDB_node *node;
	rc = dl_search_key(mc, key, &node, &exact);
	if (rc) {
		if (rc == MDB_NOTFOUND)
			dl_pos_unset(mc);
		return rc;
	}
	dl_pos_land(mc);
	if (!node) {
		if (mc->ki[mc->top] < NUMKEYS(mc->pg[mc->top]))
			return MDB_CORRUPTED;
		if (op != MDB_SET_RANGE) {
			dl_pos_to_past_end(mc);
			return MDB_NOTFOUND;
		}
		rc = dl_cursor_next_leaf(mc);
		if (rc == MDB_NOTFOUND) {
			dl_pos_to_past_end(mc);
			return MDB_NOTFOUND;
		}
		if (rc)
			return rc;
		exact = 0;
	}
	if (!exact && op != MDB_SET_RANGE)
		return MDB_NOTFOUND;
	MDB_page *mp = mc->pg[mc->top];
	if (node && !IS_LEAF2(mp) && !(mc->flags & C_PREFIX)) {
		/* dl_leaf_search already bounds-checked this node: skip the
		 * second check dl_cursor_current would make. */
		if (op != MDB_SET) {
			key->mv_size = node->mn_ksize;
			key->mv_data = NODEKEY(mp, node);
		}
		if (!data)
			return 0;
		if (!(node->mn_flags & (F_BIGDATA | F_DUPDATA))) {
			data->mv_size = NODEDSZ(node);
			data->mv_data = (char *)node + NODESZ + node->mn_ksize +
				(node->mn_ksize & mc->txn->env->pad);
			return 0;
		}
		char *v = (node->mn_flags & F_DUPDATA) ? NULL : dl_big_value(mc->txn,
			mc->txn->env, node, (const char *)mp + mc->txn->env->psize);
		if (v) {
			data->mv_size = NODEDSZ(node);
			data->mv_data = v;
			return 0;
		}
		return dl_node_read(mc, node, data);
	}
	return dl_cursor_current(mc, op == MDB_SET ? NULL : key, data);
}

int dl_cursor_set(MDB_cursor *mc, MDB_val *key, MDB_val *data, MDB_cursor_op op)
{
	return dl_cursor_set_in(mc, key, data, op);
}

/* The SET ops on a plain DB whose txn and record dl_cursor_get_set found
 * in the usual state: dl_plain_get's work for them (the end mark ends; a
 * failure other than MDB_NOTFOUND is the txn's, dl_txn_err). */
int dl_cursor_set_plain(MDB_cursor *mc, MDB_val *key, MDB_val *data, MDB_cursor_op op)
{
	dl_pos_mark_after_last(mc, 0);
	int rc = dl_cursor_set_in(mc, key, data, op);
	if (__builtin_expect(rc && rc != MDB_NOTFOUND, 0))
		return dl_txn_err(mc->txn, rc);
	return rc;
}

/* mdb_get's answer from a leaf node whose value is not in the page (an
 * overflow value the snapshot test does not settle, or duplicates): the
 * lookup cursor is completed first, for the readers that take it. */
static __attribute__((noinline)) int dl_get_far(MDB_cursor *mc, MDB_node *node, MDB_val *data)
{
	dl_cursor_init_rest(mc);
	int rc = (node->mn_flags & F_DUPDATA) ? dl_dup_first_item(mc, node, data) :
		dl_node_read(mc, node, data);
	return rc ? dl_txn_err(mc->txn, rc) : 0;
}

/*
 * mdb_get once its checks passed: the lookup, on a cursor of which only
 * the part the lookup reads is set up (dl_get_far adds the rest), and the
 * value.
 */
int dl_get_value(MDB_txn *txn, MDB_dbi dbi, const MDB_val *key, MDB_val *data)
{
	MDB_cursor mc;
	MDB_node *node;
	int rc, exact;
	char *v;
	dl_cursor_init_lookup(&mc, txn, dbi);
	rc = dl_search_key(&mc, key, &node, &exact);
	if (rc)
		return rc == MDB_NOTFOUND ? rc : dl_txn_err(txn, rc);
	if (!node || !exact) {
		if (!node && mc.ki[mc.top] < NUMKEYS(mc.pg[mc.top]))
			return dl_txn_err(txn, MDB_CORRUPTED);
		return MDB_NOTFOUND;
	}
	MDB_page *mp = mc.pg[mc.top];
	MDB_env *env = txn->env;
	if (IS_LEAF2(mp)) {
		data->mv_size = 0;
		data->mv_data = NULL;
		return 0;
	}
	if (!(node->mn_flags & (F_DUPDATA | F_BIGDATA))) {
		/* In-page value (the leaf search checked the node's bounds). */
		data->mv_size = NODEDSZ(node);
		data->mv_data = (char *)node + NODESZ + node->mn_ksize +
			(node->mn_ksize & env->pad);
		return 0;
	}
	if (!(node->mn_flags & F_DUPDATA) &&
	    (v = dl_big_value(txn, env, node, (const char *)mp + env->psize))) {
		data->mv_size = NODEDSZ(node);
		data->mv_data = v;
		return 0;
	}
	return dl_get_far(&mc, node, data);
}

int dl_search_edge(MDB_cursor *mc, int last)
{
	int rc = dl_search(mc, NULL, last ? DL_PS_LAST : DL_PS_FIRST);
	if (rc)
		return rc;
	MDB_page *mp = mc->pg[mc->top];
	unsigned n = NUMKEYS(mp);
	if (!n)
		return MDB_CORRUPTED;
	mc->ki[mc->top] = (indx_t)(last ? n - 1 : 0);
	return 0;
}

int dl_search_lowest(MDB_cursor *mc)
{
	return dl_search_edge(mc, 0);
}

/*
 * Make every page on the cursor's path writable.  recount: the write that
 * follows may change a count (dlmdb-extensions §3.6), so a COUNTED DB is
 * marked for dl_count_fix; 0 for a write that moves no entry, whose copied
 * pages keep their exact counts.
 */
int dl_cursor_touch_counts(MDB_cursor *mc, int recount)
{
	MDB_txn *txn = mc->txn;
	unsigned f = DB_DIRTY;
	int rc;
	if (recount && (mc->db->md_flags & MDB_COUNTED))
		f |= DB_CNTSTALE;
	uintptr_t map = (uintptr_t)txn->env->map;
	if (txn->parent || !map) {
		for (int i = 0; i <= mc->top; i++)
			if ((rc = dl_page_touch(mc, i)))
				return rc;
	} else {
		/* A top-level txn owns every page outside the map (its dirty
		 * buffers): most levels of a put's path after the first, and
		 * answered here without the call (one unsigned compare: a
		 * page below the map wraps past its size).  The map stays put
		 * during a txn. */
		size_t span = txn->env->mapsize;
		for (int i = 0; i <= mc->top; i++)
			if ((uintptr_t)mc->pg[i] - map < span && (rc = dl_page_touch(mc, i)))
				return rc;
	}
	/* One store of the DB's flags (a byte store would make the compiler
	 * load mc's fields again after it). */
	txn->dbflags[mc->dbi] |= (unsigned char)f;
	txn->flags |= TXN_DIRTY;
	return 0;
}

/* ------------------------------------------------------------------------- */
/* Splits                                                                    */
/* ------------------------------------------------------------------------- */

typedef struct dl_sent {
	const unsigned char *p;
	size_t len;
} dl_sent;

static int dl_split_insert(MDB_cursor *mc, int level, unsigned idx,
	const unsigned char *img, size_t ilen);

/* Add a (key, child) separator to the parent of the page at level. */
int dl_parent_add(MDB_cursor *mc, int level, pgno_t left, const MDB_val *sep,
	pgno_t right)
{
	MDB_txn *txn = mc->txn;
	MDB_db *db = mc->db;
	unsigned char img[NODESZ + 8 + DL_MAXKEY + 2];
	int counted = (db->md_flags & MDB_COUNTED) != 0;
	int rc;

	DL_ASSERT_LEVEL(mc, level);
	if (sep->mv_size > DL_MAXKEY + 1)
		return MDB_BAD_VALSIZE;
	size_t len = dl_branch_write(img, sep, right, counted, 0);
	if (level == 0) {
		/* Root split: a new root with two children. */
		MDB_page *root;
		unsigned char n0[NODESZ + 8 + 2];
		if ((rc = dl_page_alloc(mc, 1, &root)))
			return rc;
		dl_page_init(txn->env, root, P_BRANCH | (counted ? P_COUNTED : 0));
		size_t l0 = dl_branch_write(n0, NULL, left, counted, 0);
		dl_page_insert_raw(root, 0, n0, l0);
		dl_page_insert_raw(root, 1, img, len);
		db->md_root = root->mp_pgno;
		db->md_depth++;
		db->md_branch_pages++;
		return 0;
	}
	MDB_page *parent = mc->pg[level - 1];
	unsigned pidx = mc->ki[level - 1] + 1u;
	if (SIZELEFT(parent) >= len + sizeof(indx_t)) {
		dl_page_insert_raw(parent, pidx, img, len);
		return 0;
	}
	return dl_split_insert(mc, level - 1, pidx, img, len);
}

/* The entries of the page being split (a copy, tp) in order, with the new
 * node image at idx; returns their total size, ovh per entry included. */
static size_t dl_split_gather(MDB_env *env, MDB_page *tp, unsigned idx,
	const unsigned char *img, size_t ilen, dl_sent *e, unsigned total, size_t ovh)
{
	size_t sum = 0;
	for (unsigned i = 0; i < total; i++) {
		if (i == idx) {
			e[i].p = img;
			e[i].len = ilen;
		} else {
			unsigned j = i < idx ? i : i - 1;
			e[i].p = dl_ent(tp, j);
			e[i].len = IS_LEAF2(tp) ? tp->mp_pad :
				dl_node_size(env, tp, (MDB_node *)e[i].p);
		}
		sum += e[i].len + ovh;
	}
	return sum;
}

/* How many of the total entries of page mp (n old ones and a new one at
 * idx) should stay on the left, before checking that both halves fit. */
static unsigned dl_split_first_guess(MDB_cursor *mc, MDB_page *mp, const dl_sent *e,
	unsigned idx, size_t sum, size_t ovh)
{
	unsigned n = NUMKEYS(mp), total = n + 1, s;
	int branch = IS_BRANCH(mp);
	if (IS_LEAF2(mp)) {
		/* Fixed-size duplicates: GET_MULTIPLE and NEXT/PREV_MULTIPLE
		 * hand these pages out whole, so they must be split exactly
		 * where LMDB splits them: an APPENDDUP insert starts a new page
		 * of its own; any other insert divides the old items at
		 * (n + 1) / 2, the new one joining the side it sorts into. */
		unsigned half = (n + 1) / 2;
		return (mc->flags & C_APPENDING) ? n : (idx < half ? half + 1 : half);
	}
	/* Appending at the end keeps the left page full (sequential loads);
	 * otherwise split by bytes, or by count when the entries are few and
	 * large. */
	if (idx == n && !branch)
		return n;
	if (idx == n && branch && n >= 2)
		return n - 1;
	if (!branch && total < mc->txn->env->psize >> 7) {
		/* Few, large entries (as LMDB judges them: fewer than one per
		 * 128 bytes): split at the middle entry.  Entries this large are
		 * often duplicate sub-pages that keep growing; a split by bytes
		 * tends to leave one big entry alone on a page that no later key
		 * joins, while halves by count keep room on both sides. */
		return total / 2;
	}
	size_t acc = 0;
	for (s = 0; s < total; s++) {
		if (acc + e[s].len + ovh > sum / 2)
			break;
		acc += e[s].len + ovh;
	}
	return s;
}

/* The split point: *s entries stay left, both halves fitting a page (a
 * branch page keeps at least two entries per side, the right one's first
 * without its key).  MDB_PAGE_FULL when too few entries to split. */
static int dl_split_point(MDB_cursor *mc, MDB_page *mp, const dl_sent *e, unsigned idx,
	size_t sum, size_t ovh, unsigned *sp)
{
	unsigned total = NUMKEYS(mp) + 1, i;
	int branch = IS_BRANCH(mp);
	size_t room = mc->txn->env->psize - PAGEHDRSZ;
	size_t key0 = branch ? EVEN(NODEKOFF(mp)) : 0;	/* size of a keyless branch node */
	unsigned smin = branch ? 2 : 1, smax = branch ? total - 2 : total - 1;
	if (total < 2 * smin)
		return MDB_PAGE_FULL;
	unsigned s = dl_split_first_guess(mc, mp, e, idx, sum, ovh);
	if (s < smin)
		s = smin;
	if (s > smax)
		s = smax;
	/* Adjust until both halves fit. */
	for (int tries = 0; tries < (int)total; tries++) {
		size_t l = 0, r = 0;
		for (i = 0; i < s; i++)
			l += e[i].len + ovh;
		for (i = s; i < total; i++)
			r += (branch && i == s ? key0 : e[i].len) + ovh;
		if (l > room && s > smin)
			s--;
		else if (r > room && s < smax)
			s++;
		else
			break;
	}
	*sp = s;
	return 0;
}

/* Separator = first key of the right half, copied into buf (the entries'
 * copy of the page is reused). */
static int dl_split_sep(MDB_page *mp, const dl_sent *first, unsigned char *buf, size_t bufsz,
	MDB_val *sep)
{
	const MDB_node *sn = (const MDB_node *)first->p;
	sep->mv_size = IS_LEAF2(mp) ? mp->mp_pad : sn->mn_ksize;
	if (sep->mv_size > bufsz)
		return MDB_BAD_VALSIZE;
	size_t ko = IS_LEAF2(mp) ? 0 : IS_BRANCH(mp) ? NODEKOFF(mp) : NODESZ;
	memcpy(buf, first->p + ko, sep->mv_size);
	sep->mv_data = buf;
	return 0;
}

/* Place entries e[from, to) after the last entry of node page p (not
 * LEAF2), each just below the previous one: what dl_page_insert_raw at the
 * end does, without its per-entry pointer shift and checks. */
static void dl_fill_nodes(MDB_page *p, const dl_sent *e, unsigned from, unsigned to)
{
	unsigned k = NUMKEYS(p);
	indx_t up = MP_UPPER(p);
	for (unsigned i = from; i < to; i++) {
		up = (indx_t)(up - e[i].len);
		p->mp_ptrs[k++] = up;
		memcpy((char *)p + up, e[i].p, e[i].len);
	}
	MP_UPPER(p) = up;
	MP_LOWER(p) = (indx_t)(PAGEHDRSZ + k * sizeof(indx_t));
	DL_ASSERT_PAGE_SPACE(p);
	DL_ASSERT(dl_ptrs_in_node_area(p));
}

/* Rebuild mp with entries [0, s) and the new page rp with [s, total); the
 * right page of a branch split starts with a keyless node.  rp is filled
 * first: entries [s, total) may still lie in mp. */
static void dl_split_fill(MDB_env *env, MDB_page *mp, MDB_page *rp, const dl_sent *e,
	unsigned s, unsigned total)
{
	unsigned pflags = mp->mp_flags & (P_BRANCH | P_LEAF | P_LEAF2 | P_COUNTED);
	uint16_t pad = IS_LEAF2(mp) ? mp->mp_pad : 0;
	unsigned i;
	dl_page_init(env, rp, pflags);
	rp->mp_pad = pad;
	if (pflags & P_LEAF2) {
		for (i = s; i < total; i++)
			dl_page_insert_raw(rp, i - s, e[i].p, e[i].len);
	} else if (pflags & P_BRANCH) {
		unsigned char k0[NODESZ + 8 + 2];
		const MDB_node *sn = (const MDB_node *)e[s].p;
		int counted = (pflags & P_COUNTED) != 0;
		uint64_t cnt = counted ? dl_get64(e[s].p + NODESZ) : 0;
		size_t l0 = dl_branch_write(k0, NULL, NODEPGNO(sn), counted, cnt);
		dl_page_insert_raw(rp, 0, k0, l0);
		dl_fill_nodes(rp, e, s + 1, total);
	} else {
		dl_fill_nodes(rp, e, s, total);
	}
	dl_page_init(env, mp, pflags);
	mp->mp_pad = pad;
	if (pflags & P_LEAF2) {
		for (i = 0; i < s; i++)
			dl_page_insert_raw(mp, i, e[i].p, e[i].len);
	} else {
		dl_fill_nodes(mp, e, 0, s);
	}
}

/*
 * Whether a leaf split can leave mp as it is: the new entry goes alone to
 * the right page (an insert past the last key that keeps the left page
 * full) and mp's n entries already lie where dl_split_fill would put them,
 * entry 0 at the page's end and each next one just below.  Rebuilding
 * such a page would write every byte back unchanged.  Sorted loads split
 * this way on every leaf.
 */
static int dl_split_keeps_left(MDB_env *env, MDB_page *mp, const dl_sent *e,
	unsigned idx, unsigned s)
{
	unsigned n = NUMKEYS(mp);
	if (!IS_LEAF(mp) || IS_LEAF2(mp) || idx != n || s != n)
		return 0;
	size_t up = env->psize;
	for (unsigned i = 0; i < n; i++) {
		up -= e[i].len;
		if (mp->mp_ptrs[i] != up)
			return 0;
	}
	return MP_UPPER(mp) == up;
}

/*
 * Insert node image img at index idx of the (writable) page at mc->pg[level]
 * which has no room for it: split the page in two and add a separator to
 * the parent, splitting upwards as needed.  *right (if right): the new
 * right page.
 */
static int dl_split_insert_at(MDB_cursor *mc, int level, unsigned idx,
	const unsigned char *img, size_t ilen, MDB_page **right)
{
	MDB_txn *txn = mc->txn;
	MDB_env *env = txn->env;
	MDB_page *mp = mc->pg[level], *rp;
	size_t ps = env->psize;
	unsigned total = NUMKEYS(mp) + 1, s;
	int branch = IS_BRANCH(mp);
	size_t ovh = dl_ent_ovh(mp);
	unsigned char sepbuf[DL_MAXKEY + 2];
	MDB_val sep;
	int rc;

	DL_ASSERT_LEVEL(mc, level);
	DL_ASSERT(dl_stack_ok(mc));
	unsigned char *tmp = malloc(ps);
	dl_sent *e = malloc(total * sizeof(dl_sent));
	if (!tmp || !e) {
		free(tmp);
		free(e);
		return ENOMEM;
	}
	/* The entries are read in place to choose the split.  Only those
	 * that stay left are copied out (to tmp, packed) before mp is rebuilt
	 * from them; the right page is filled from mp before that. */
	size_t sum = dl_split_gather(env, mp, idx, img, ilen, e, total, ovh);
	if (!(rc = dl_split_point(mc, mp, e, idx, sum, ovh, &s)) &&
	    !(rc = dl_split_sep(mp, &e[s], sepbuf, sizeof(sepbuf), &sep))) {
		int keep = dl_split_keeps_left(env, mp, e, idx, s);
		if (!keep) {
			size_t off = 0;
			for (unsigned i = 0; i < s; i++) {
				if (i == idx)
					continue;
				memcpy(tmp + off, e[i].p, e[i].len);
				e[i].p = tmp + off;
				off += e[i].len;
			}
		}
		if (!(rc = dl_page_alloc(mc, 1, &rp))) {
			if (keep) {
				/* As dl_split_fill would leave mp: same entries,
				 * header flags and pad reset. */
				mp->mp_flags = (uint16_t)((mp->mp_flags & (P_BRANCH | P_LEAF |
				    P_LEAF2 | P_COUNTED)) | P_DIRTY);
				mp->mp_pad = 0;
				dl_page_init(env, rp, mp->mp_flags & ~(unsigned)P_DIRTY);
				dl_fill_nodes(rp, e, s, total);
			} else {
				dl_split_fill(env, mp, rp, e, s, total);
			}
		}
	}
	free(e);
	free(tmp);
	if (rc)
		return rc;
	if (branch)
		mc->db->md_branch_pages++;
	else
		mc->db->md_leaf_pages++;
	if (right)
		*right = rp;
	return dl_parent_add(mc, level, mp->mp_pgno, &sep, rp->mp_pgno);
}

static int dl_split_insert(MDB_cursor *mc, int level, unsigned idx,
	const unsigned char *img, size_t ilen)
{
	return dl_split_insert_at(mc, level, idx, img, ilen, NULL);
}

/* ------------------------------------------------------------------------- */
/* Insert / replace                                                          */
/* ------------------------------------------------------------------------- */


/* Reposition mc on key (after a structural change). */
int dl_reseek_key(MDB_cursor *mc, const MDB_val *key)
{
	int exact, rc = dl_search(mc, key, DL_PS_KEY);
	if (rc)
		return rc;
	dl_leaf_search(mc, key, &exact);
	mc->flags &= ~C_RESEEK;
	dl_pos_land(mc);
	return 0;
}

/*
 * Insert a new leaf node for key/data at mc's leaf index.  Large values go
 * to an overflow run.  On return mc is positioned on the new node and, for
 * MDB_RESERVE, data->mv_data points at the value's space.
 */
static int dl_leaf_add(MDB_cursor *mc, const MDB_val *key, MDB_val *data, unsigned flags)
{
	unsigned subflag = ((flags & DL_PUT_SUBDATA) ? F_SUBDATA : 0) |
		((flags & DL_PUT_DUPDATA) ? F_DUPDATA : 0);
	MDB_txn *txn = mc->txn;
	MDB_env *env = txn->env;
	DL_ASSERT_LEVEL(mc, mc->top);
	MDB_page *mp = mc->pg[mc->top];
	unsigned idx = mc->ki[mc->top];
	int rc;

	if (IS_LEAF2(mp)) {
		/* Fixed-size duplicate: the item is the whole entry. */
		if (key->mv_size != mp->mp_pad)
			return MDB_BAD_VALSIZE;
		if (SIZELEFT(mp) >= mp->mp_pad) {
			memcpy(dl_leaf2_open(mp, idx), key->mv_data, key->mv_size);
			dl_pos_land(mc);
			return 0;
		}
		if ((rc = dl_split_insert(mc, mc->top, idx, key->mv_data, key->mv_size)))
			return rc;
		return dl_reseek_key(mc, key);
	}
	size_t ks = key->mv_size, ds = data->mv_size;
	size_t kpart = NODESZ + ks + (ks & env->pad);
	unsigned nflags = 0;
	MDB_page *omp = NULL;
	int reserve = (flags & MDB_RESERVE) != 0;
	const void *dpart = reserve ? NULL : data->mv_data;
	size_t dlen = ds;
	pgno_t opg;

	if (kpart + ds > env->nodemax) {
		unsigned np = dl_ovpages(env, ds);
		if ((rc = dl_page_alloc(mc, np, &omp)))
			return rc;
		omp->mp_flags = P_OVERFLOW | P_DIRTY;
		omp->mp_u.pages = np;
		/* dl_buf_get left the run uninitialised: zero what the value does
		 * not cover (all of it for MDB_RESERVE), unless MDB_NOMEMINIT.
		 * A longer run owes its slack to the write instead (its length
		 * < psize <= 32 KiB fits mp_pad).  A one-page run is zeroed
		 * here: its buffer goes back to the page pool, and a tree page
		 * made from it keeps its bytes in the gap between lower and
		 * upper, which reaches the file. */
		if (!reserve && ds)
			memcpy((char *)omp + PAGEHDRSZ, data->mv_data, ds);
		if (!(env->flags & MDB_NOMEMINIT)) {
			size_t from = PAGEHDRSZ + (reserve ? 0 : ds), run = (size_t)np * env->psize;
			if (np > 1) {
				memset((char *)omp + from, 0, PAGEHDRSZ + ds - from);
				omp->mp_pad = (uint16_t)(run - PAGEHDRSZ - ds);
			} else {
				memset((char *)omp + from, 0, run - from);
			}
		}
		mc->db->md_overflow_pages += np;
		opg = omp->mp_pgno;
		nflags = F_BIGDATA;
		dpart = &opg;
		dlen = sizeof(pgno_t);
	}
	nflags |= subflag;
	if (mc->flags & C_PREFIX)
		return dl_pfx_add(mc, key, ds, nflags, dpart, dlen, reserve ? data : NULL, omp);
	size_t nsz = EVEN(kpart + dlen);
	if (SIZELEFT(mp) >= nsz + sizeof(indx_t)) {
		unsigned char *dst = dl_page_open(mp, idx, nsz);
		dl_leaf_write(env, dst, key, ds, dpart, dlen, nflags);
		if (reserve)
			data->mv_data = omp ? (void *)((char *)omp + PAGEHDRSZ) : (void *)(dst + kpart);
		dl_pos_land(mc);
		return 0;
	}
	unsigned char *img = malloc(nsz);
	if (!img)
		return ENOMEM;
	dl_leaf_write(env, img, key, ds, dpart, dlen, nflags);
	int top = mc->top;
	uint16_t depth = mc->db->md_depth;
	unsigned pn = top > 0 ? NUMKEYS(mc->pg[top - 1]) : 0;
	MDB_page *rp;
	rc = dl_split_insert_at(mc, top, idx, img, nsz, &rp);
	free(img);
	if (rc)
		return rc;
	if ((flags & DL_PUT_NOPOS) && !reserve) {
		/* The split left the cursor's path stale and nobody reads it. */
		mc->top = -1;
		dl_pos_unset(mc);
		return 0;
	}
	if (top > 0 && mc->db->md_depth == depth && NUMKEYS(mc->pg[top - 1]) == pn + 1) {
		/* The parent took the separator without splitting, so the path
		 * above is unchanged: the new node is entry idx of the left
		 * page, which kept s entries, or entry idx - s of the right
		 * one, the parent's next child.  Where a search for the key
		 * would land. */
		unsigned s = NUMKEYS(mp);
		if (idx >= s) {
			mc->pg[top] = rp;
			mc->ki[top] = (indx_t)(idx - s);
			mc->ki[top - 1]++;
		} else {
			mc->ki[top] = (indx_t)idx;
		}
		mc->flags &= ~C_RESEEK;
		dl_pos_land(mc);
	} else if ((rc = dl_reseek_key(mc, key))) {
		return rc;
	}
	if (reserve) {
		MDB_node *n = NODEPTR(mc->pg[mc->top], mc->ki[mc->top]);
		data->mv_data = omp ? (void *)((char *)omp + PAGEHDRSZ) : dl_leaf_data(env, n);
	}
	return 0;
}

/* Free the overflow run a node points at. */
static int dl_ov_free(MDB_cursor *mc, MDB_node *n)
{
	MDB_txn *txn = mc->txn;
	pgno_t pg = dl_get64(dl_leaf_data(txn->env, n));
	MDB_page *omp;
	int rc = dl_page_get_ref(txn, n, pg, &omp);
	if (rc)
		return rc;
	if (!IS_OVERFLOW(omp))
		return MDB_CORRUPTED;
	unsigned np = omp->mp_u.pages;
	if (!np || pg + np > txn->next_pgno || dl_run_past_snapshot(txn, n, pg, np))
		return MDB_CORRUPTED;
	mc->db->md_overflow_pages -= np;
	return dl_page_free(txn, pg, np);
}


/*
 * Cursor put shortcut: a positioned user cursor usually already sits on the
 * leaf the new key belongs to (sorted loads, updates near the last one).
 * The key belongs to the current leaf when it lies between the leaf's first
 * and last keys, or beyond them on the leftmost / rightmost leaf of the
 * tree.  Then only that leaf is searched, and the cursor's path (valid:
 * any change by another cursor would have set C_RESEEK) is reused.
 * Returns 1 when positioned (node/exact set as by dl_leaf_search), 0 to do
 * the full descent.
 */
static int dl_put_here(MDB_cursor *mc, const MDB_val *key, MDB_node **node, int *exact)
{
	if (!dl_pos_on_item(mc) || (mc->flags & (C_RESEEK | C_UNTRACKED)) ||
	    mc->top < 0 || (unsigned)mc->top + 1 != mc->db->md_depth ||
	    mc->pg[0]->mp_pgno != mc->db->md_root)
		return 0;
	MDB_page *mp = mc->pg[mc->top];
	unsigned n = NUMKEYS(mp);
	if (!IS_LEAF(mp) || IS_LEAF2(mp) || n == 0)
		return 0;
	MDB_cmp_func *cmp = mc->dbx->cmp;
	MDB_env *env = mc->txn->env;
	unsigned char kb[DL_MAXKEY + 1];
	MDB_val k;
	int c;
	/* Sorted loads append: try the last key first.  Beyond it, or before
	 * the first key, the answer is known without a search. */
	if (dl_node_check(env, mp, NODEPTR(mp, n - 1), 1) ||
	    dl_leaf_keyd(mc, mp, n - 1, &k, kb))
		return 0;
	c = dl_cmp_fast(cmp, key, &k);
	if (c >= 0) {
		if (c > 0)
			for (int l = 0; l < mc->top; l++)
				if ((unsigned)mc->ki[l] + 1 != NUMKEYS(mc->pg[l]))
					return 0;
		mc->ki[mc->top] = (indx_t)(c > 0 ? n : n - 1);
		*exact = c == 0;
		*node = c > 0 ? NULL : NODEPTR(mp, n - 1);
		return 1;
	}
	if (dl_node_check(env, mp, NODEPTR(mp, 0), 1) ||
	    dl_leaf_keyd(mc, mp, 0, &k, kb))
		return 0;
	c = dl_cmp_fast(cmp, key, &k);
	if (c <= 0) {
		if (c < 0)
			for (int l = 0; l < mc->top; l++)
				if (mc->ki[l] != 0)
					return 0;
		mc->ki[mc->top] = 0;
		*exact = c == 0;
		*node = NODEPTR(mp, 0);
		return 1;
	}
	*node = dl_leaf_search(mc, key, exact);
	return 1;
}

/*
 * Where a put of key goes (flags as dl_cursor_put0): MDB_CURRENT the
 * cursor's item, an empty tree nowhere yet, MDB_APPEND past the last key
 * (which key must exceed), else a search.  *exact: key is stored, at mc.
 */
static inline __attribute__((always_inline)) int dl_put_locate(MDB_cursor *mc,
	MDB_val *key, unsigned flags, MDB_node **node, int *exact)
{
	int rc;
	*exact = 0;
	if (flags & MDB_CURRENT) {
		if (!dl_pos_is_set(mc) || dl_pos_is_past_end(mc) || mc->top < 0)
			return EINVAL;
		if (mc->ki[mc->top] >= NUMKEYS(mc->pg[mc->top]))
			return MDB_NOTFOUND;
		*exact = 1;
	} else if (mc->db->md_root == P_INVALID) {
		return 0;
	} else if (flags & MDB_APPEND) {
		if ((rc = dl_search_edge(mc, 1)))
			return rc;
		MDB_val last;
		unsigned char lb[DL_MAXKEY + 1];
		if ((rc = dl_leaf_keyd(mc, mc->pg[mc->top], mc->ki[mc->top], &last, lb)))
			return rc;
		if (mc->dbx->cmp(key, &last) <= 0)
			return MDB_KEYEXIST;
		mc->ki[mc->top]++;
	} else {
		if (!dl_put_here(mc, key, node, exact)) {
			/* One prepared search key for the descent and the leaf. */
			dl_skey s;
			dl_skey_init(&s, mc->dbx->cmp, key);
			dl_skey_tree(&s, mc, 1);
			if ((rc = dl_search_mode(mc, &s, DL_PS_KEY)))
				return rc;
			*node = dl_leaf_search_sk(mc, &s, exact);
		}
		if (!*node && mc->ki[mc->top] < NUMKEYS(mc->pg[mc->top]))
			return MDB_CORRUPTED;
	}
	return 0;
}

/* The stored node a put would overwrite: it must be of the kind the put
 * writes (plain value or named-DB record, never duplicates); NOOVERWRITE
 * refuses with the stored value in data and the cursor on it. */
static int dl_put_check_existing(MDB_cursor *mc, MDB_val *data, unsigned flags)
{
	MDB_node *node = NODEPTR(mc->pg[mc->top], mc->ki[mc->top]);
	int rc;
	if ((rc = dl_node_check(mc->txn->env, mc->pg[mc->top], node, 1)))
		return rc;
	if (node->mn_flags & F_DUPDATA)
		return MDB_INCOMPATIBLE;
	if (!(node->mn_flags & F_SUBDATA) != !(flags & DL_PUT_SUBDATA))
		return MDB_INCOMPATIBLE;
	if (flags & MDB_NOOVERWRITE) {
		/* The cursor is left on the existing item. */
		dl_pos_land(mc);
		if ((rc = dl_node_read(mc, node, data)))
			return rc;
		return MDB_KEYEXIST;
	}
	return 0;
}

/* First put into an empty tree: a root leaf, with mc on it. */
static int dl_put_new_root(MDB_cursor *mc)
{
	MDB_txn *txn = mc->txn;
	MDB_db *db = mc->db;
	MDB_page *mp;
	int rc;
	if ((rc = dl_page_alloc(mc, 1, &mp)))
		return rc;
	dl_page_init(txn->env, mp, P_LEAF);
	db->md_root = mp->mp_pgno;
	db->md_depth = 1;
	db->md_leaf_pages = 1;
	mc->pg[0] = mp;
	mc->top = 0;
	mc->ki[0] = 0;
	txn->dbflags[mc->dbi] |= DB_DIRTY;
	txn->flags |= TXN_DIRTY;
	return 0;
}

/*
 * New value for the overflow node under mc (path touched): written into its
 * run when this txn owns the run and it is big enough (0), else the run is
 * freed (1: the caller replaces the node).
 */
static int dl_put_overflow_value(MDB_cursor *mc, MDB_node *node, MDB_val *data, unsigned flags)
{
	MDB_txn *txn = mc->txn;
	MDB_env *env = txn->env;
	size_t ds = data->mv_size;
	pgno_t pg = dl_get64(dl_leaf_data(env, node));
	MDB_page *omp;
	int rc;
	if ((rc = dl_page_get_ref(txn, node, pg, &omp)))
		return rc;
	if (!IS_OVERFLOW(omp))
		return MDB_CORRUPTED;
	size_t kpart = NODESZ + node->mn_ksize + (node->mn_ksize & env->pad);
	if (dl_page_owned(txn, omp) && kpart + ds > env->nodemax &&
	    (uint64_t)omp->mp_u.pages * env->psize >= PAGEHDRSZ + ds) {
		node_set_dsize(node, ds);
		dl_ov_zerotail_cut(omp, (size_t)omp->mp_u.pages * env->psize, PAGEHDRSZ + ds);
		if (flags & MDB_RESERVE)
			data->mv_data = (char *)omp + PAGEHDRSZ;
		else if (ds)
			memmove((char *)omp + PAGEHDRSZ, data->mv_data, ds);
		dl_pos_land(mc);
		return 0;
	}
	if ((rc = dl_ov_free(mc, node)))
		return rc;
	return 1;
}

/* Whether the stored value under mc is a node value (not in overflow
 * pages) of data's size: dl_put_overwrite then writes it in place, and no
 * node moves or count changes. */
static inline int dl_put_same_size(MDB_cursor *mc, const MDB_val *data)
{
	MDB_node *node = NODEPTR(mc->pg[mc->top], mc->ki[mc->top]);
	return !(node->mn_flags & F_BIGDATA) && NODEDSZ(node) == data->mv_size;
}

/* New value for the stored key under mc (path touched): in place when the
 * size is unchanged (or its own overflow run has room), else the node is
 * replaced. */
static int dl_put_overwrite(MDB_cursor *mc, MDB_val *key, MDB_val *data, unsigned flags)
{
	MDB_env *env = mc->txn->env;
	MDB_page *mp = mc->pg[mc->top];
	unsigned idx = mc->ki[mc->top];
	MDB_node *node = NODEPTR(mp, idx);
	size_t ds = data->mv_size;
	int rc;
	if (node->mn_flags & F_BIGDATA) {
		/* Reuse a run this txn already owns if it is big enough. */
		if ((rc = dl_put_overflow_value(mc, node, data, flags)) != 1)
			return rc;
	} else if (NODEDSZ(node) == ds) {
		void *dst = dl_leaf_data(env, node);
		if (flags & MDB_RESERVE)
			data->mv_data = dst;
		else if (ds)
			memmove(dst, data->mv_data, ds);
		dl_pos_land(mc);
		return 0;
	}
	/* Size changed: drop the old node, insert the new one in its place.
	 * The key may live in the node being removed: copy it first. */
	unsigned char kb[DL_MAXKEY + 1];
	MDB_val k2;
	if (key->mv_size > sizeof(kb))
		return MDB_BAD_VALSIZE;
	memcpy(kb, key->mv_data, key->mv_size);
	k2.mv_size = key->mv_size;
	k2.mv_data = kb;
	if ((mc->flags & C_PREFIX) && !IS_LEAF2(mp)) {
		if ((rc = dl_pfx_del(mc, mp, idx)))
			return rc;
	} else {
		dl_page_del_raw(mp, idx, dl_node_size(env, mp, node));
	}
	return dl_leaf_add(mc, &k2, data, flags);
}

/*
 * Put for non-DUPSORT databases.  flags: MDB_NOOVERWRITE, MDB_RESERVE,
 * MDB_APPEND, MDB_CURRENT.
 */
int dl_cursor_put0(MDB_cursor *mc, MDB_val *key, MDB_val *data, unsigned flags)
{
	MDB_txn *txn = mc->txn;
	MDB_db *db = mc->db;
	MDB_node *node = NULL;
	int rc, exact;

	if (txn->dbflags[mc->dbi] & DB_STALE) {
		if ((rc = dl_db_load(txn, mc->dbi)))
			return rc;
	}
	if ((rc = dl_put_locate(mc, key, flags, &node, &exact)))
		return rc;
	if (exact && (rc = dl_put_check_existing(mc, data, flags)))
		return rc;

	/* From here on the tree changes. */
	dl_cursors_save(mc);
	if (db->md_root == P_INVALID) {
		if ((rc = dl_put_new_root(mc)))
			return rc;
	} else if ((rc = dl_cursor_touch_counts(mc, !exact || !dl_put_same_size(mc, data)))) {
		return rc;
	}
	DL_ASSERT(dl_stack_ok(mc));
	if (exact)
		return dl_put_overwrite(mc, key, data, flags);
	if ((rc = dl_leaf_add(mc, key, data, flags)))
		return rc;
	db->md_entries++;
	return 0;
}

/*
 * Insert a new entry at mc's current (searched) position: make the path
 * writable, add the entry, count it.  For callers that already searched.
 */
int dl_cursor_insert(MDB_cursor *mc, MDB_val *key, MDB_val *data)
{
	int rc = dl_cursor_touch(mc);
	if (rc)
		return rc;
	if ((rc = dl_leaf_add(mc, key, data, 0)))
		return rc;
	mc->db->md_entries++;
	return 0;
}

/*
 * Replace the node under the (touched) cursor with a new node for key and
 * data; flags may carry DL_PUT_DUPDATA / DL_PUT_SUBDATA.  Used to rewrite a
 * key's duplicate set.  The cursor ends on the new node.
 */
int dl_node_replace(MDB_cursor *mc, const MDB_val *key, MDB_val *data, unsigned flags)
{
	MDB_env *env = mc->txn->env;
	MDB_page *mp = mc->pg[mc->top];
	unsigned idx = mc->ki[mc->top];
	MDB_node *node = NODEPTR(mp, idx);
	unsigned char kb[DL_MAXKEY + 1];
	MDB_val k2;
	int rc;
	if (key->mv_size > sizeof(kb))
		return MDB_BAD_VALSIZE;
	memcpy(kb, key->mv_data, key->mv_size);
	k2.mv_size = key->mv_size;
	k2.mv_data = kb;
	if ((node->mn_flags & F_BIGDATA) && (rc = dl_ov_free(mc, node)))
		return rc;
	if ((mc->flags & C_PREFIX) && !IS_LEAF2(mp)) {
		if ((rc = dl_pfx_del(mc, mp, idx)))
			return rc;
	} else {
		dl_page_del_raw(mp, idx, dl_node_size(env, mp, node));
	}
	return dl_leaf_add(mc, &k2, data, flags);
}

/* ------------------------------------------------------------------------- */
/* Delete and rebalance                                                      */
/* ------------------------------------------------------------------------- */

/* Copy-on-write child idx of the (writable) page at plevel. */
static int dl_touch_child(MDB_cursor *mc, int plevel, unsigned idx, MDB_page **ret)
{
	MDB_txn *txn = mc->txn;
	MDB_page *parent = mc->pg[plevel], *mp;
	MDB_node *node = NODEPTR(parent, idx);
	int rc;
	if ((rc = dl_page_get_ref(txn, node, NODEPGNO(node), &mp)))
		return rc;
	if ((rc = dl_page_check(txn->env, mp)))
		return rc;
	/* Borrow the slot below plevel to run the ordinary touch. */
	int savetop = mc->top;
	MDB_page *savepg = mc->pg[plevel + 1];
	indx_t saveki = mc->ki[plevel];
	mc->ki[plevel] = (indx_t)idx;
	mc->pg[plevel + 1] = mp;
	rc = dl_page_touch(mc, plevel + 1);
	*ret = mc->pg[plevel + 1];
	mc->pg[plevel + 1] = savepg;
	mc->ki[plevel] = saveki;
	mc->top = savetop;
	return rc;
}

/* Replace the separator key of node idx on the page at level. */
int dl_update_key(MDB_cursor *mc, int level, unsigned idx, const MDB_val *key,
	int *split)
{
	MDB_page *mp = mc->pg[level];
	MDB_node *node = NODEPTR(mp, idx);
	unsigned char img[NODESZ + 8 + DL_MAXKEY + 2];
	int counted = IS_COUNTED(mp);
	uint64_t cnt = counted ? dl_get64((char *)node + NODESZ) : 0;
	size_t osz = dl_node_size(mc->txn->env, mp, node);
	size_t len = dl_branch_write(img, key, NODEPGNO(node), counted, cnt);
	if (len <= osz || SIZELEFT(mp) >= len - osz) {
		dl_page_del_raw(mp, idx, osz);
		dl_page_insert_raw(mp, idx, img, len);
		return 0;
	}
	dl_page_del_raw(mp, idx, osz);
	*split = 1;
	return dl_split_insert(mc, level, idx, img, len);
}

/* Bytes used by nodes + pointers on a page. */
static inline size_t dl_page_used(MDB_env *env, MDB_page *mp)
{
	return env->psize - PAGEHDRSZ - SIZELEFT(mp);
}

/* Key of branch node i, with node 0 standing for the parent's separator. */
static void dl_branch_key(MDB_page *mp, unsigned i, MDB_val *k)
{
	dl_node_key(mp, NODEPTR(mp, i), k);
}

/*
 * Merge page src (child sidx of the parent at plevel) into dst (child
 * sidx - 1): append src's nodes to dst, then drop src and its separator.
 */
static int dl_merge(MDB_cursor *mc, int plevel, MDB_page *dst, MDB_page *src, unsigned sidx)
{
	MDB_env *env = mc->txn->env;
	MDB_page *parent = mc->pg[plevel];
	unsigned n = NUMKEYS(src), base = NUMKEYS(dst);
	int rc;
	for (unsigned i = 0; i < n; i++) {
		MDB_node *nd = IS_LEAF2(src) ? NULL : NODEPTR(src, i);
		if (IS_BRANCH(src) && i == 0) {
			unsigned char img[NODESZ + 8 + DL_MAXKEY + 2];
			MDB_val sep;
			dl_branch_key(parent, sidx, &sep);
			uint64_t cnt = IS_COUNTED(src) ? dl_get64((char *)nd + NODESZ) : 0;
			size_t len = dl_branch_write(img, &sep, NODEPGNO(nd), IS_COUNTED(src), cnt);
			dl_page_insert_raw(dst, base + i, img, len);
		} else if (IS_LEAF2(src)) {
			dl_page_insert_raw(dst, base + i, dl_ent(src, i), src->mp_pad);
		} else {
			dl_page_insert_raw(dst, base + i, nd, dl_node_size(env, src, nd));
		}
	}
	if (IS_BRANCH(src))
		mc->db->md_branch_pages--;
	else
		mc->db->md_leaf_pages--;
	if ((rc = dl_page_free(mc->txn, src->mp_pgno, 1)))
		return rc;
	dl_page_del_raw(parent, sidx, dl_node_size(env, parent, NODEPTR(parent, sidx)));
	return 0;
}

/* Size src's node i would need on dst when moved (branch node 0 gains the key). */
static size_t dl_moved_size(MDB_env *env, MDB_page *parent, unsigned sepidx,
	MDB_page *src, unsigned i, int gains_sep)
{
	if (IS_LEAF2(src))
		return src->mp_pad;
	MDB_node *nd = NODEPTR(src, i);
	if (IS_BRANCH(src) && gains_sep) {
		MDB_node *pn = NODEPTR(parent, sepidx);
		return EVEN(NODEKOFF(src) + pn->mn_ksize);
	}
	return dl_node_size(env, src, nd);
}

/*
 * Move sib's first node to the end of mp, where sib is mp's right neighbour
 * and parent node sepidx separates them (a branch node moved gains that
 * separator as its key; sib's next node becomes its keyless node 0).
 * Returns 1 with *nk (stored in kb) the key that now separates mp from sib,
 * or 0, nothing moved, when sib has fewer than two nodes or mp lacks room.
 */
static int dl_move_first(MDB_env *env, MDB_page *parent, unsigned sepidx,
	MDB_page *mp, MDB_page *sib, MDB_val *nk, unsigned char *kb)
{
	unsigned char img[NODESZ + 8 + DL_MAXKEY + 2];
	int counted = IS_COUNTED(mp);
	MDB_val sep;
	if (NUMKEYS(sib) < 2)
		return 0;
	size_t need = dl_moved_size(env, parent, sepidx, sib, 0, 1) + dl_ent_ovh(mp);
	if (SIZELEFT(mp) < need)
		return 0;
	MDB_node *nd = IS_LEAF2(sib) ? NULL : NODEPTR(sib, 0);
	if (IS_BRANCH(mp)) {
		dl_branch_key(parent, sepidx, &sep);
		uint64_t cnt = counted ? dl_get64((char *)nd + NODESZ) : 0;
		size_t len = dl_branch_write(img, &sep, NODEPGNO(nd), counted, cnt);
		dl_page_insert_raw(mp, NUMKEYS(mp), img, len);
		/* sib's node 1 becomes its keyless node 0; its key goes up. */
		MDB_node *n1 = NODEPTR(sib, 1);
		dl_node_key(sib, n1, nk);
		memcpy(kb, nk->mv_data, nk->mv_size);
		nk->mv_data = kb;
		pgno_t p1 = NODEPGNO(n1);
		uint64_t c1 = counted ? dl_get64((char *)n1 + NODESZ) : 0;
		dl_page_del_raw(sib, 0, dl_node_size(env, sib, nd));
		dl_page_del_raw(sib, 0, dl_node_size(env, sib, NODEPTR(sib, 0)));
		len = dl_branch_write(img, NULL, p1, counted, c1);
		dl_page_insert_raw(sib, 0, img, len);
	} else {
		dl_page_insert_raw(mp, NUMKEYS(mp), dl_ent(sib, 0), dl_node_size(env, sib, nd));
		dl_page_del_raw(sib, 0, dl_node_size(env, sib, nd));
		dl_leaf_key(sib, 0, nk);
		memcpy(kb, nk->mv_data, nk->mv_size);
		nk->mv_data = kb;
	}
	return 1;
}

/*
 * Move sib's last node to the front of mp, where sib is mp's left neighbour
 * and parent node sepidx separates them (on branch pages mp's old node 0
 * takes that separator as its key and the moved node becomes mp's keyless
 * node 0).  Returns 1 with *nk (stored in kb) the key that now separates sib
 * from mp, or 0, nothing moved, when sib has fewer than two nodes or mp
 * lacks room.
 */
static int dl_move_last(MDB_env *env, MDB_page *parent, unsigned sepidx,
	MDB_page *mp, MDB_page *sib, MDB_val *nk, unsigned char *kb)
{
	unsigned char img[NODESZ + 8 + DL_MAXKEY + 2];
	int counted = IS_COUNTED(mp);
	unsigned ln = NUMKEYS(sib);
	if (ln < 2)
		return 0;
	MDB_node *nd = IS_LEAF2(sib) ? NULL : NODEPTR(sib, ln - 1);
	if (IS_BRANCH(mp)) {
		MDB_val oldsep;
		unsigned char ob[DL_MAXKEY + 2];
		dl_branch_key(parent, sepidx, &oldsep);
		size_t need = EVEN(NODEKOFF(mp) + oldsep.mv_size) + EVEN(NODEKOFF(mp)) +
			2 * sizeof(indx_t);
		if (SIZELEFT(mp) < need)
			return 0;
		memcpy(ob, oldsep.mv_data, oldsep.mv_size);
		oldsep.mv_data = ob;
		dl_node_key(sib, nd, nk);
		memcpy(kb, nk->mv_data, nk->mv_size);
		nk->mv_data = kb;
		pgno_t mp_pg = NODEPGNO(nd);
		uint64_t mcnt = counted ? dl_get64((char *)nd + NODESZ) : 0;
		MDB_node *n0 = NODEPTR(mp, 0);
		pgno_t p0 = NODEPGNO(n0);
		uint64_t c0 = counted ? dl_get64((char *)n0 + NODESZ) : 0;
		dl_page_del_raw(mp, 0, dl_node_size(env, mp, n0));
		size_t len = dl_branch_write(img, &oldsep, p0, counted, c0);
		dl_page_insert_raw(mp, 0, img, len);
		len = dl_branch_write(img, NULL, mp_pg, counted, mcnt);
		dl_page_insert_raw(mp, 0, img, len);
		dl_page_del_raw(sib, ln - 1, dl_node_size(env, sib, nd));
	} else {
		size_t sz = dl_node_size(env, sib, nd);
		if (SIZELEFT(mp) < sz + dl_ent_ovh(mp))
			return 0;
		dl_page_insert_raw(mp, 0, dl_ent(sib, ln - 1), sz);
		dl_page_del_raw(sib, ln - 1, sz);
		dl_leaf_key(mp, 0, nk);
		memcpy(kb, nk->mv_data, nk->mv_size);
		nk->mv_data = kb;
	}
	return 1;
}

/*
 * Move one node from sibling sib into mp (the underfull page at level) and
 * put the key that now divides them into the parent.
 * right: sib is the right neighbour (its first node moves to mp's end);
 * otherwise sib is the left neighbour (its last node moves to mp's front).
 */
static int dl_move_node(MDB_cursor *mc, int level, MDB_page *mp, MDB_page *sib,
	int right, int *split)
{
	MDB_env *env = mc->txn->env;
	int plevel = level - 1;
	MDB_page *parent = mc->pg[plevel];
	unsigned sepidx = mc->ki[plevel] + (right ? 1 : 0);
	unsigned char kb[DL_MAXKEY + 2];
	MDB_val nk;
	int moved = right ? dl_move_first(env, parent, sepidx, mp, sib, &nk, kb) :
		dl_move_last(env, parent, sepidx, mp, sib, &nk, kb);
	if (!moved)
		return 0;
	return dl_update_key(mc, plevel, sepidx, &nk, split);
}


/*
 * The root after a delete below it: an empty root empties the tree; a
 * branch root with one child hands the root to that child, again while the
 * new root is such a branch.
 */
static int dl_rebalance_root(MDB_cursor *mc, int *changed)
{
	MDB_txn *txn = mc->txn;
	MDB_db *db = mc->db;
	MDB_page *mp = mc->pg[0];
	int rc;
	if (NUMKEYS(mp) == 0) {
		if ((rc = dl_page_free(txn, mp->mp_pgno, 1)))
			return rc;
		db->md_root = P_INVALID;
		db->md_depth = 0;
		db->md_leaf_pages = 0;
		db->md_branch_pages = 0;
		mc->top = -1;
		*changed = 1;
		if (db == &txn->dbs[mc->dbi])
			dl_cursors_unposition(txn, mc->dbi, mc);
		return 0;
	}
	while (IS_BRANCH(mp) && NUMKEYS(mp) == 1) {
		pgno_t child = NODEPGNO(NODEPTR(mp, 0));
		if ((rc = dl_page_free(txn, mp->mp_pgno, 1)))
			return rc;
		db->md_root = child;
		db->md_depth--;
		db->md_branch_pages--;
		*changed = 1;
		for (int i = 0; i < mc->top; i++) {
			mc->pg[i] = mc->pg[i + 1];
			mc->ki[i] = mc->ki[i + 1];
		}
		mc->top--;
		/* Read the new root by number: the stack may hold pages a
		 * merge freed. */
		if ((rc = dl_page_get(txn, db->md_root, &mp)))
			return rc;
		mc->pg[0] = mp;
	}
	return 0;
}

/*
 * The page at level (below the root) after a node left it: nothing when it
 * is full enough, else a merge with a neighbour (*up: its parent lost a
 * node and is checked next) or a node moved from the neighbour.
 */
static int dl_rebalance_level(MDB_cursor *mc, int level, int *changed, int *up)
{
	MDB_env *env = mc->txn->env;
	size_t thresh = (env->psize - PAGEHDRSZ) / 4;
	MDB_page *mp = mc->pg[level];
	unsigned n = NUMKEYS(mp), minkeys = IS_BRANCH(mp) ? 2 : 1;
	int rc;
	if (n >= minkeys && dl_page_used(env, mp) >= thresh)
		return 0;
	int plevel = level - 1;
	MDB_page *parent = mc->pg[plevel];
	unsigned pi = mc->ki[plevel], pn = NUMKEYS(parent);
	if (pn < 2) {
		*up = 1;
		return 0;
	}
	MDB_page *sib;
	int right = (pi == 0);
	unsigned sidx = right ? pi + 1 : pi - 1;
	if ((rc = dl_touch_child(mc, plevel, sidx, &sib)))
		return rc;
	if ((IS_BRANCH(sib) != 0) != (IS_BRANCH(mp) != 0))
		return MDB_CORRUPTED;
	/* Merge when everything fits on one page. */
	MDB_page *L = right ? mp : sib, *R = right ? sib : mp;
	unsigned ridx = right ? pi + 1 : pi;
	if ((mc->flags & C_PREFIX) && IS_LEAF(mp) && !IS_LEAF2(mp)) {
		int merged = 0, split = 0;
		if ((rc = dl_pfx_rebalance(mc, plevel, L, R, ridx, mp, &merged, &split)))
			return rc;
		*changed = 1;
		*up = merged && !split;
		return 0;
	}
	size_t extra = 0;
	if (IS_BRANCH(R))
		extra = dl_moved_size(env, parent, ridx, R, 0, 1) -
			dl_node_size(env, R, NODEPTR(R, 0));
	/* Fixed-size duplicate pages are handed out whole by the *_MULTIPLE
	 * ops, so they follow LMDB's rule exactly: borrow one item from a
	 * neighbour that is itself at least a quarter full, otherwise merge.
	 * Other pages merge whenever the two fit. */
	int fits = dl_page_used(env, L) + dl_page_used(env, R) + extra <=
		env->psize - PAGEHDRSZ;
	if (IS_LEAF2(mp) && dl_page_used(env, sib) >= thresh && NUMKEYS(sib) > minkeys)
		fits = 0;
	int split = 0;
	rc = fits ? dl_merge(mc, plevel, L, R, ridx) :
		dl_move_node(mc, level, mp, sib, right, &split);
	if (rc)
		return rc;
	*changed = 1;
	*up = fits;
	return 0;
}

/*
 * Restore the tree invariants after a node was removed from the leaf at
 * mc->top, level by level up to the root (dl_rebalance_level,
 * dl_rebalance_root).  *changed reports a structural change.
 */
static int dl_rebalance(MDB_cursor *mc, int *changed)
{
	for (int level = mc->top; level > 0; level--) {
		int up = 0, rc = dl_rebalance_level(mc, level, changed, &up);
		if (rc || !up)
			return rc;
	}
	return dl_rebalance_root(mc, changed);
}

/*
 * Other cursors on the item being deleted must end up on the item that
 * follows it (LMDB's "just deleted" state), even if keys are inserted in
 * between before they are used again: record the following key now.
 */
static void dl_cursors_on_deleted(MDB_cursor *mc)
{
	MDB_txn *txn = mc->txn;
	MDB_page *mp = mc->pg[mc->top];
	MDB_val dk;
	MDB_cursor *c;
	unsigned char dkb[DL_MAXKEY + 1], nkb[DL_MAXKEY + 1];
	/* Only a cursor that saved its key can be on the item: without one
	 * the key is not even decoded. */
	for (c = txn->cursors[mc->dbi]; c; c = c->next)
		if (c != mc && (c->flags & C_RESEEK))
			break;
	if (!c)
		return;
	if (dl_leaf_keyd(mc, mp, mc->ki[mc->top], &dk, dkb))
		return;
	int any = 0;
	for (c = txn->cursors[mc->dbi]; c; c = c->next)
		if (c != mc && (c->flags & C_RESEEK) && c->keylen == dk.mv_size &&
		    !memcmp(c->keybuf, dk.mv_data, dk.mv_size))
			any = 1;
	if (!any)
		return;
	/* Find the following key with a scratch copy of the cursor. */
	MDB_cursor tmp = *mc;
	MDB_val nk = { 0, NULL };
	int have = 0;
	if ((unsigned)tmp.ki[tmp.top] + 1 < NUMKEYS(mp)) {
		tmp.ki[tmp.top]++;
		have = 1;
	} else if (dl_cursor_next_leaf(&tmp) == 0) {
		have = 1;
	}
	if (have) {
		MDB_page *np = tmp.pg[tmp.top];
		if (dl_leaf_keyd(&tmp, np, tmp.ki[tmp.top], &nk, nkb))
			have = 0;
		if (nk.mv_size > DL_MAXKEY + 1)
			have = 0;
	}
	for (c = txn->cursors[mc->dbi]; c; c = c->next) {
		if (c == mc || !(c->flags & C_RESEEK) || c->keylen != dk.mv_size ||
		    memcmp(c->keybuf, dk.mv_data, dk.mv_size))
			continue;
		dl_pos_item_vanished(c);
		if (have) {
			memcpy(c->keybuf, nk.mv_data, nk.mv_size);
			c->keylen = nk.mv_size ? (unsigned)nk.mv_size : ~0u;
		} else {
			c->keylen = 0;	/* nothing follows: past the end */
		}
	}
}

/*
 * After the leaf node under mc was removed and the tree rebalanced
 * (changed: pages merged or moved nodes, so the cursor's stack is stale):
 * put mc on the item that follows the deleted one, found again by the key
 * kept in mc->keybuf, or past the end of the last leaf when none follows,
 * or unpositioned when the tree is now empty.
 */
static int dl_del_reposition(MDB_cursor *mc, int changed)
{
	int rc;
	if (mc->db->md_root == P_INVALID) {
		/* An empty tree holds no entries; a record still counting some
		 * was damaged.  (A DUPSORT main cursor, mc->xcursor set, takes
		 * the key's other duplicates off the count afterwards.) */
		if (mc->db->md_entries && !mc->xcursor)
			return MDB_CORRUPTED;
		/* Empty tree: every cursor on it is unpositioned. */
		mc->top = -1;
		dl_pos_unset(mc);
		return 0;
	}
	if (changed) {
		MDB_val k = { mc->keylen, mc->keybuf };
		int exact;
		if ((rc = dl_search(mc, &k, DL_PS_KEY)))
			return rc;
		dl_leaf_search(mc, &k, &exact);
		dl_pos_reseated(mc, 0, 1);
	}
	/* Past the end of this leaf: step to the next leaf's first item. */
	if (mc->ki[mc->top] >= NUMKEYS(mc->pg[mc->top])) {
		rc = dl_cursor_next_leaf(mc);
		if (rc == MDB_NOTFOUND) {
			/* Deleted the last item: stay past the end of the last leaf. */
			if ((rc = dl_search_edge(mc, 1)))
				return rc;
			mc->ki[mc->top] = (indx_t)NUMKEYS(mc->pg[mc->top]);
			dl_pos_reseated(mc, 0, 1);
			return 0;
		}
		if (rc)
			return rc;
		dl_pos_reseated(mc, 0, 1);
	}
	return 0;
}

/*
 * Delete the leaf node under the cursor (non-DUPSORT).  Afterwards the
 * cursor is on the following item in the "just deleted" state.
 */
int dl_cursor_del0(MDB_cursor *mc)
{
	MDB_txn *txn = mc->txn;
	MDB_env *env = txn->env;
	MDB_page *mp = mc->pg[mc->top];
	unsigned idx = mc->ki[mc->top];
	int rc, changed = 0;

	if (idx >= NUMKEYS(mp))
		return MDB_NOTFOUND;
	/* The record counts the item being deleted: a count of zero is a
	 * damaged record, and decrementing it would wrap. */
	if (!mc->db->md_entries)
		return MDB_CORRUPTED;
	MDB_node *node = NULL;
	if (!IS_LEAF2(mp)) {
		node = NODEPTR(mp, idx);
		if ((rc = dl_node_check(env, mp, node, 1)))
			return rc;
	}
	dl_cursors_save(mc);
	dl_cursors_on_deleted(mc);
	if ((rc = dl_cursor_touch(mc)))
		return rc;
	mp = mc->pg[mc->top];
	/* Keep the key so the cursor can find its place after a rebalance. */
	{
		MDB_val dk;
		/* A decoded key lands in keybuf itself. */
		if ((rc = dl_leaf_keyd(mc, mp, idx, &dk, mc->keybuf)))
			return rc;
		mc->keylen = (unsigned)dk.mv_size;
		if (dk.mv_data != mc->keybuf)
			memcpy(mc->keybuf, dk.mv_data, dk.mv_size);
	}
	if (!IS_LEAF2(mp)) {
		node = NODEPTR(mp, idx);
		if ((node->mn_flags & F_BIGDATA) && (rc = dl_ov_free(mc, node)))
			return rc;
	}
	if ((mc->flags & C_PREFIX) && !IS_LEAF2(mp)) {
		if ((rc = dl_pfx_del(mc, mp, idx)))
			return rc;
	} else {
		dl_page_del_raw(mp, idx, dl_node_size(env, mp, node));
	}
	mc->db->md_entries--;
	if ((rc = dl_rebalance(mc, &changed)))
		return rc;
	dl_pos_to_deleted(mc);
	return dl_del_reposition(mc, changed);
}

/* ------------------------------------------------------------------------- */
/* Drop                                                                      */
/* ------------------------------------------------------------------------- */

/* Free page pg, named at from (NULL: the tree's record), and the pages
 * under it.  Every number comes from a page this txn reads, so a damaged
 * one past the snapshot is refused before it can free a page this txn
 * allocated for something else. */
static int dl_drop_page(MDB_cursor *mc, const void *from, pgno_t pg, int depth)
{
	MDB_txn *txn = mc->txn;
	MDB_page *mp;
	int rc;
	if (depth >= DL_MAXDEPTH)
		return MDB_CURSOR_FULL;
	if ((rc = dl_page_get_ref(txn, from, pg, &mp)))
		return rc;
	if ((rc = dl_page_check(txn->env, mp)))
		return rc;
	unsigned n = NUMKEYS(mp);
	if (IS_BRANCH(mp)) {
		for (unsigned i = 0; i < n; i++) {
			MDB_node *nd = NODEPTR(mp, i);
			if ((rc = dl_node_check(txn->env, mp, nd, 0)))
				return rc;
			pgno_t child = NODEPGNO(nd);
			if ((rc = dl_drop_page(mc, nd, child, depth + 1)))
				return rc;
		}
	} else if (IS_LEAF(mp) && !IS_LEAF2(mp)) {
		for (unsigned i = 0; i < n; i++) {
			MDB_node *nd = NODEPTR(mp, i);
			if ((rc = dl_node_check(txn->env, mp, nd, 1)))
				return rc;
			if ((nd->mn_flags & F_BIGDATA) && (rc = dl_ov_free(mc, nd)))
				return rc;
			if ((nd->mn_flags & (F_SUBDATA | F_DUPDATA)) == (F_SUBDATA | F_DUPDATA)) {
				/* A key's duplicate sub-database goes too. */
				MDB_db rec;
				if (NODEDSZ(nd) != sizeof(rec))
					return MDB_CORRUPTED;
				memcpy(&rec, (char *)nd + NODESZ + nd->mn_ksize +
				    (nd->mn_ksize & txn->env->pad), sizeof(rec));
				if (rec.md_root != P_INVALID &&
				    (rc = dl_drop_page(mc, nd, rec.md_root, depth + 1)))
					return rc;
			}
			if ((nd->mn_flags & (F_SUBDATA | F_DUPDATA)) == F_SUBDATA &&
			    mc->dbi == DL_MAIN_DBI) {
				/* Emptying the main DB also frees the named DBs'
				 * trees, so no page leaks (DLMDB v2 behaviour). */
				MDB_db rec;
				if (NODEDSZ(nd) != sizeof(rec))
					return MDB_CORRUPTED;
				memcpy(&rec, (char *)nd + NODESZ + nd->mn_ksize +
				    (nd->mn_ksize & txn->env->pad), sizeof(rec));
				if (rec.md_root != P_INVALID &&
				    (rc = dl_drop_page(mc, nd, rec.md_root, depth + 1)))
					return rc;
			}
		}
	} else if (!IS_LEAF(mp)) {
		return MDB_CORRUPTED;
	}
	return dl_page_free(txn, pg, 1);
}

/* Free every page of the cursor's tree and reset its record. */
int dl_drop_tree(MDB_cursor *mc)
{
	MDB_db *db = mc->db;
	int rc;
	if (db->md_root != P_INVALID) {
		dl_cursors_save(mc);
		if ((rc = dl_drop_page(mc, NULL, db->md_root, 0)))
			return rc;
	}
	db->md_root = P_INVALID;
	db->md_depth = 0;
	db->md_branch_pages = db->md_leaf_pages = db->md_overflow_pages = 0;
	db->md_entries = 0;
	mc->txn->dbflags[mc->dbi] |= DB_DIRTY;
	mc->txn->flags |= TXN_DIRTY;
	mc->top = -1;
	dl_pos_unset(mc);
	return 0;
}
