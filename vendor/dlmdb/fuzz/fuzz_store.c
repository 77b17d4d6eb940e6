/*
 * fuzz_store.c - structure-aware corrupted-store fuzzer for the engine.
 *
 * Base stores: every *.mdb under $DLMDB_FIXTURES (and its v2/), plus stores
 * this program builds with the engine (plain with overflow values, counted,
 * prefix-compressed, DUPSORT with sub-pages and sub-databases, DUPFIXED,
 * INTEGERKEY, a free list with records).  Each case takes one base store and
 * damages it where a parser looks: page headers, node headers and pointers,
 * branch children, counted-branch counts, prefix-encoded keys, inline
 * sub-pages, meta pages, database records, truncation, stray bytes.
 *
 * Each mutant is opened read-only and walked (every DB: forward and
 * backward scans, range seeks, duplicate counts and lists, every count and
 * rank function, mdb_page_walk) and copied with compaction to /dev/null
 * (its result code ignored: only a crash counts), then opened read-write,
 * changed (puts that split, overwrites, overflow values, deletes that
 * merge, a drop) and committed; a committed mutant is walked once more.  Every case ends as
 * "ok", an error code, or a crash (signal, sanitizer report, time-out).
 * A write error followed by a successful commit is a failure too: a write
 * must never carry damage it detected into a commit.
 *
 * Cases run in a worker process; when it dies the supervisor records the
 * case as a crash, keeps the mutant, and starts a new worker at the next
 * case.  Case n of seed s is reproducible alone: --seed s --case n.
 *
 *   fuzz_store [--seed S] [--cases N] [--case K] [--emit DIR] [--after DIR] [--keep DIR]
 *              [--clean] [-v]
 *   fuzz_store --bases DIR    write the base stores to DIR and stop
 *
 * --clean runs the same passes on the unchanged base stores: every case
 * must end "ok" (the control that the passes themselves are sound).
 *
 * --emit DIR writes every mutant as DIR/mNNNNNN.mdb and one line per mutant
 * to DIR/verdicts.txt: "mNNNNNN <read-only result> <read-write result> <layout>"
 * (0 = ok, else the engine's error number; layout: the CLI's --layout for
 * the base store), for running tools on them.
 * --after DIR writes, for every mutant that read clean and then committed,
 * the committed image as DIR/aNNNNNN.mdb: with --emit's image of the same
 * case, the store before and after the engine's write.
 * Exit status: 0 when no case crashed, hung or committed after an error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lmdb.h"

#define PAGEHDR		16
#define P_BRANCH	0x01
#define P_LEAF		0x02
#define P_OVERFLOW	0x04
#define P_META		0x08
#define P_LEAF2		0x20
#define P_COUNTED	0x80
#define F_BIGDATA	0x01
#define F_SUBDATA	0x02
#define F_DUPDATA	0x04
#define WALK_LIMIT	20000
#define MAX_DBS		12
#define CASE_SECONDS	20

/* ------------------------------------------------------------------------- */
/* Random numbers: splitmix64, one stream per case                           */
/* ------------------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static unsigned rn(unsigned n)
{
	return n ? (unsigned)(rnd() % n) : 0;
}

/* ------------------------------------------------------------------------- */
/* Base stores                                                               */
/* ------------------------------------------------------------------------- */

typedef struct base {
	char name[64];
	unsigned char *img;
	size_t size;
	unsigned psize;
	unsigned envflags;	/* MDB_FORMAT_DLMDB_V1 for padded version 1 stores */
	const char *layout;	/* the same for the CLI: dlmdb, lmdb (stock v1) or auto (v2) */
} base;

static base bases[64];
static unsigned nbases;
static char workdir[256];

static int die(const char *what, int rc)
{
	fprintf(stderr, "fuzz_store: %s: %s\n", what, mdb_strerror(rc));
	exit(2);
}

#define CHECK(what, expr) do { int rc_ = (expr); if (rc_) die(what, rc_); } while (0)

static int read_file(const char *path, unsigned char **img, size_t *size)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_size <= 0) {
		close(fd);
		return -1;
	}
	*size = (size_t)st.st_size;
	*img = malloc(*size);
	size_t got = 0;
	while (got < *size) {
		ssize_t r = read(fd, *img + got, *size - got);
		if (r <= 0) {
			close(fd);
			free(*img);
			return -1;
		}
		got += (size_t)r;
	}
	close(fd);
	return 0;
}

/* Page size of a store image: the one at which page 1 is a meta page. */
static unsigned image_psize(const unsigned char *img, size_t size)
{
	static const unsigned cands[] = { 4096, 8192, 16384, 32768, 65536, 2048, 1024, 512 };
	for (unsigned i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
		unsigned ps = cands[i];
		if (2 * (size_t)ps > size)
			continue;
		uint16_t f;
		uint32_t magic;
		memcpy(&f, img + ps + 10, 2);
		memcpy(&magic, img + ps + 16, 4);
		if ((f & P_META) && magic == 0xBEEFC0DE)
			return ps;
	}
	return 4096;
}

static void add_base(const char *name, const char *path)
{
	if (nbases >= sizeof(bases) / sizeof(bases[0]))
		return;
	base *b = &bases[nbases];
	if (read_file(path, &b->img, &b->size))
		return;
	snprintf(b->name, sizeof(b->name), "%s", name);
	b->psize = image_psize(b->img, b->size);
	nbases++;
}

static void add_fixture_dir(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	char *names[64];
	unsigned n = 0;
	struct dirent *de;
	while ((de = readdir(d)) && n < 64) {
		size_t l = strlen(de->d_name);
		if (l > 4 && !strcmp(de->d_name + l - 4, ".mdb"))
			names[n++] = strdup(de->d_name);
	}
	closedir(d);
	/* Sorted, so a seed means the same cases on every machine. */
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = i + 1; j < n; j++)
			if (strcmp(names[j], names[i]) < 0) {
				char *t = names[i];
				names[i] = names[j];
				names[j] = t;
			}
	for (unsigned i = 0; i < n; i++) {
		char path[512], name[64];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		snprintf(name, sizeof(name), "%s%s", prefix, names[i]);
		add_base(name, path);
		free(names[i]);
	}
}

static MDB_env *gen_env(const char *path, unsigned fmt)
{
	MDB_env *env;
	unlink(path);
	CHECK("env_create", mdb_env_create(&env));
	CHECK("set_maxdbs", mdb_env_set_maxdbs(env, 16));
	CHECK("set_mapsize", mdb_env_set_mapsize(env, 32u << 20));
	CHECK("env_open", mdb_env_open(env, path, MDB_NOSUBDIR | MDB_NOLOCK | MDB_NOSYNC | fmt, 0644));
	return env;
}

static void gen_put_range(MDB_txn *txn, MDB_dbi dbi, unsigned from, unsigned to,
	unsigned vlen, unsigned flags)
{
	char k[32], v[9000];
	memset(v, 'v', sizeof(v));
	for (unsigned i = from; i < to; i++) {
		MDB_val key = { (size_t)snprintf(k, sizeof(k), "key-%08u-common-tail", i), k };
		unsigned l = vlen ? vlen : 1 + (i * 37) % 200;
		if (!vlen && i % 97 == 0)
			l = 3000 + i % 5000;	/* overflow values */
		MDB_val val = { l, v };
		CHECK("gen put", mdb_put(txn, dbi, &key, &val, flags));
	}
}

/* Build one generated store; returns its path in out. */
static void gen_store(int kind, char *out, size_t outsz)
{
	static const char *names[] = { "gen-plain", "gen-counted", "gen-prefix", "gen-dupsort",
		"gen-intkey", "gen-freelist", "gen-stock" };
	snprintf(out, outsz, "%s/%s.mdb", workdir, names[kind]);
	MDB_env *env = gen_env(out, kind == 6 ? MDB_FORMAT_LMDB : 0);
	MDB_txn *txn;
	MDB_dbi dbi;
	CHECK("txn", mdb_txn_begin(env, NULL, 0, &txn));
	switch (kind) {
	case 0:	/* plain, with overflow values, in the main DB and a named one */
		CHECK("dbi", mdb_dbi_open(txn, NULL, 0, &dbi));
		gen_put_range(txn, dbi, 0, 400, 0, 0);
		CHECK("dbi", mdb_dbi_open(txn, "kv", MDB_CREATE, &dbi));
		gen_put_range(txn, dbi, 0, 1500, 0, 0);
		break;
	case 1:	/* counted, plain and DUPSORT */
		CHECK("dbi", mdb_dbi_open(txn, "cnt", MDB_CREATE | MDB_COUNTED, &dbi));
		gen_put_range(txn, dbi, 0, 3000, 20, 0);
		CHECK("dbi", mdb_dbi_open(txn, "cntdup", MDB_CREATE | MDB_COUNTED | MDB_DUPSORT, &dbi));
		for (unsigned i = 0; i < 200; i++) {
			char k[16], v[16];
			MDB_val key = { (size_t)snprintf(k, sizeof(k), "k%05u", i), k };
			unsigned nd = i % 10 == 0 ? 700 : 1 + i % 7;
			for (unsigned j = 0; j < nd; j++) {
				MDB_val val = { (size_t)snprintf(v, sizeof(v), "d%07u", j), v };
				CHECK("put", mdb_put(txn, dbi, &key, &val, 0));
			}
		}
		break;
	case 2:	/* prefix-compressed, plain and DUPSORT, one counted */
		CHECK("dbi", mdb_dbi_open(txn, "pfx", MDB_CREATE | MDB_PREFIX_COMPRESSION, &dbi));
		gen_put_range(txn, dbi, 0, 2000, 12, 0);
		CHECK("dbi", mdb_dbi_open(txn, "pfxcnt", MDB_CREATE | MDB_PREFIX_COMPRESSION | MDB_COUNTED, &dbi));
		gen_put_range(txn, dbi, 0, 1500, 0, 0);
		CHECK("dbi", mdb_dbi_open(txn, "pfxdup", MDB_CREATE | MDB_PREFIX_COMPRESSION | MDB_DUPSORT, &dbi));
		for (unsigned i = 0; i < 100; i++) {
			char k[32], v[32];
			MDB_val key = { (size_t)snprintf(k, sizeof(k), "prefix-key-%05u", i), k };
			unsigned nd = i % 9 == 0 ? 500 : 1 + i % 5;
			for (unsigned j = 0; j < nd; j++) {
				MDB_val val = { (size_t)snprintf(v, sizeof(v), "shared-value-%07u", j), v };
				CHECK("put", mdb_put(txn, dbi, &key, &val, 0));
			}
		}
		break;
	case 3:	/* DUPSORT with sub-pages and sub-DBs; DUPFIXED + INTEGERDUP */
		CHECK("dbi", mdb_dbi_open(txn, "dup", MDB_CREATE | MDB_DUPSORT, &dbi));
		for (unsigned i = 0; i < 300; i++) {
			char k[16], v[64];
			MDB_val key = { (size_t)snprintf(k, sizeof(k), "k%05u", i), k };
			unsigned nd = i % 25 == 0 ? 400 : 1 + i % 6;
			for (unsigned j = 0; j < nd; j++) {
				MDB_val val = { (size_t)snprintf(v, sizeof(v), "value-%07u-%u", j, i % 3), v };
				CHECK("put", mdb_put(txn, dbi, &key, &val, 0));
			}
		}
		CHECK("dbi", mdb_dbi_open(txn, "fixed", MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED | MDB_INTEGERDUP, &dbi));
		for (unsigned i = 0; i < 120; i++) {
			char k[16];
			MDB_val key = { (size_t)snprintf(k, sizeof(k), "f%05u", i), k };
			unsigned nd = i % 20 == 0 ? 1500 : 1 + i % 9;
			for (unsigned j = 0; j < nd; j++) {
				uint64_t x = (uint64_t)j * 3 + i;
				MDB_val val = { 8, &x };
				CHECK("put", mdb_put(txn, dbi, &key, &val, 0));
			}
		}
		break;
	case 4:	/* INTEGERKEY, 8- and 4-byte keys */
		CHECK("dbi", mdb_dbi_open(txn, "int64", MDB_CREATE | MDB_INTEGERKEY, &dbi));
		for (uint64_t i = 0; i < 3000; i++) {
			uint64_t k = i * 7919;
			MDB_val key = { 8, &k }, val = { 1 + i % 50, "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz" };
			CHECK("put", mdb_put(txn, dbi, &key, &val, 0));
		}
		CHECK("dbi", mdb_dbi_open(txn, "int32", MDB_CREATE | MDB_INTEGERKEY | MDB_COUNTED, &dbi));
		for (uint32_t i = 0; i < 1500; i++) {
			uint32_t k = i * 31;
			MDB_val key = { 4, &k }, val = { 4, &i };
			CHECK("put", mdb_put(txn, dbi, &key, &val, 0));
		}
		break;
	case 5:	/* several commits with deletes: a free list with records */
	case 6:	/* the same in the stock LMDB format */
		CHECK("dbi", mdb_dbi_open(txn, "kv", MDB_CREATE, &dbi));
		gen_put_range(txn, dbi, 0, 2000, 0, 0);
		for (unsigned round = 0; round < 4; round++) {
			CHECK("commit", mdb_txn_commit(txn));
			CHECK("txn", mdb_txn_begin(env, NULL, 0, &txn));
			for (unsigned i = round; i < 2000; i += 5) {
				char k[32];
				MDB_val key = { (size_t)snprintf(k, sizeof(k), "key-%08u-common-tail", i), k };
				int rc = mdb_del(txn, dbi, &key, NULL);
				if (rc && rc != MDB_NOTFOUND)
					die("del", rc);
			}
		}
		break;
	}
	CHECK("commit", mdb_txn_commit(txn));
	mdb_env_close(env);
}

static void load_bases(void)
{
	const char *fx = getenv("DLMDB_FIXTURES");
	if (fx && *fx) {
		char v2[512];
		add_fixture_dir(fx, "fixture:");
		snprintf(v2, sizeof(v2), "%s/v2", fx);
		add_fixture_dir(v2, "fixture:v2/");
	}
	for (int kind = 0; kind < 7; kind++) {
		char path[512];
		gen_store(kind, path, sizeof(path));
		add_base(strrchr(path, '/') + 1, path);
		unlink(path);
	}
}

/* ------------------------------------------------------------------------- */
/* Mutations                                                                 */
/* ------------------------------------------------------------------------- */

typedef struct mutant {
	unsigned char *img;
	size_t size;
	unsigned psize;
	unsigned envflags;
	const char *layout;
	char what[160];
	size_t wlen;
} mutant;

static void note(mutant *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(mutant *m, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (m->wlen < sizeof(m->what) - 1) {
		int w = vsnprintf(m->what + m->wlen, sizeof(m->what) - m->wlen, fmt, ap);
		if (w > 0)
			m->wlen += (size_t)w;
		if (m->wlen > sizeof(m->what) - 1)
			m->wlen = sizeof(m->what) - 1;
	}
	va_end(ap);
}

static unsigned npages(const mutant *m)
{
	return (unsigned)(m->size / m->psize);
}

static unsigned char *page(const mutant *m, unsigned pg)
{
	return m->img + (size_t)pg * m->psize;
}

static uint16_t get16(const unsigned char *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return v;
}

static void put16(unsigned char *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

static void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* A value that tends to sit on a boundary. */
static uint64_t edgy(uint64_t cur, uint64_t limit)
{
	switch (rn(9)) {
	case 0: return 0;
	case 1: return 1;
	case 2: return cur + 1;
	case 3: return cur - 1;
	case 4: return limit;
	case 5: return limit + 1;
	case 6: return limit ? rnd() % limit : 0;
	case 7: return ~(uint64_t)0;
	default: return cur ^ ((uint64_t)1 << rn(16));
	}
}

/* A page (not a meta page) whose flags match want (0: any). */
static int pick_page(const mutant *m, unsigned want, unsigned avoid)
{
	unsigned n = npages(m);
	if (n < 3)
		return -1;
	for (unsigned tries = 0; tries < 64; tries++) {
		unsigned pg = 2 + rn(n - 2);
		uint16_t f = get16(page(m, pg) + 10);
		if ((!want || (f & want) == want) && !(f & avoid) && !(f & P_META))
			return (int)pg;
	}
	return -1;
}

static unsigned numkeys(const unsigned char *p)
{
	uint16_t lo = get16(p + 12);
	return lo >= PAGEHDR ? (lo - PAGEHDR) / 2u : 0;
}

/* Offset of node i of page p within the page, or -1 when out of range. */
static int node_off(const mutant *m, const unsigned char *p, unsigned i)
{
	if (PAGEHDR + 2 * (size_t)i + 2 > m->psize)
		return -1;
	uint16_t off = get16(p + PAGEHDR + 2 * i);
	if (off + 8u > m->psize || off < PAGEHDR)
		return -1;
	return off;
}

static void mut_page_header(mutant *m)
{
	int pg = pick_page(m, 0, 0);
	if (pg < 0)
		return;
	unsigned char *p = page(m, (unsigned)pg);
	switch (rn(6)) {
	case 0: {
		static const uint16_t fl[] = { P_BRANCH, P_LEAF, P_OVERFLOW, P_META, P_LEAF2,
			P_COUNTED, P_BRANCH | P_LEAF, P_LEAF | P_COUNTED, P_BRANCH | P_LEAF2, 0x40 };
		uint16_t f = get16(p + 10);
		uint16_t nf = rn(2) ? (uint16_t)(f ^ fl[rn(10)]) : fl[rn(10)];
		put16(p + 10, nf);
		note(m, "page %d flags %#x->%#x ", pg, f, nf);
		break;
	}
	case 1: case 2: {
		uint16_t lo = get16(p + 12);
		uint16_t nl = (uint16_t)edgy(lo, m->psize);
		put16(p + 12, nl);
		note(m, "page %d lower %u->%u ", pg, lo, nl);
		break;
	}
	case 3: case 4: {
		uint16_t up = get16(p + 14);
		uint16_t nu = (uint16_t)edgy(up, m->psize);
		put16(p + 14, nu);
		note(m, "page %d upper %u->%u ", pg, up, nu);
		break;
	}
	default: {
		uint16_t pad = get16(p + 8);
		uint16_t np = (uint16_t)edgy(pad, 512);
		put16(p + 8, np);
		note(m, "page %d pad %u->%u ", pg, pad, np);
		break;
	}
	}
}

static void mut_node(mutant *m)
{
	int pg = pick_page(m, rn(2) ? P_LEAF : P_BRANCH, P_LEAF2 | P_OVERFLOW);
	if (pg < 0)
		return;
	unsigned char *p = page(m, (unsigned)pg);
	unsigned n = numkeys(p);
	if (!n || PAGEHDR + 2 * n > m->psize)
		return;
	unsigned i = rn(n);
	if (rn(4) == 0) {
		/* The pointer itself. */
		uint16_t off = get16(p + PAGEHDR + 2 * i), up = get16(p + 14);
		uint16_t no;
		switch (rn(4)) {
		case 0: no = (uint16_t)(up - 2 * (1 + rn(8))); break;
		case 1: no = (uint16_t)(off + 1); break;
		case 2: no = get16(p + PAGEHDR + 2 * rn(n)); break;
		default: no = (uint16_t)edgy(off, m->psize); break;
		}
		put16(p + PAGEHDR + 2 * i, no);
		note(m, "page %d ptr[%u] %u->%u ", pg, i, off, no);
		return;
	}
	int off = node_off(m, p, i);
	if (off < 0)
		return;
	unsigned char *nd = p + off;
	switch (rn(4)) {
	case 0: {
		uint16_t ks = get16(nd + 6), nk = (uint16_t)edgy(ks, m->psize);
		put16(nd + 6, nk);
		note(m, "page %d node %u ksize %u->%u ", pg, i, ks, nk);
		break;
	}
	case 1: {
		uint32_t ds = get16(nd) | (uint32_t)get16(nd + 2) << 16;
		uint32_t nds = (uint32_t)edgy(ds, m->psize);
		put16(nd, (uint16_t)nds);
		put16(nd + 2, (uint16_t)(nds >> 16));
		note(m, "page %d node %u lo/hi %u->%u ", pg, i, ds, nds);
		break;
	}
	case 2: {
		uint16_t f = get16(nd + 4), nf = (uint16_t)(f ^ (1u << rn(3)));
		if (rn(4) == 0)
			nf = (uint16_t)rnd();
		put16(nd + 4, nf);
		note(m, "page %d node %u flags %#x->%#x ", pg, i, f, nf);
		break;
	}
	default: {
		size_t at = (size_t)off + 8 + rn(get16(nd + 6) + 8);
		if (at < m->psize) {
			p[at] ^= (unsigned char)(1 + rn(255));
			note(m, "page %d node %u byte +%zu ", pg, i, at - (size_t)off);
		}
		break;
	}
	}
}

static void mut_branch_child(mutant *m)
{
	int pg = pick_page(m, P_BRANCH, 0);
	if (pg < 0)
		return;
	unsigned char *p = page(m, (unsigned)pg);
	unsigned n = numkeys(p);
	if (!n)
		return;
	unsigned i = rn(n);
	int off = node_off(m, p, i);
	if (off < 0)
		return;
	unsigned char *nd = p + off;
	uint64_t cur = get16(nd) | (uint64_t)get16(nd + 2) << 16 | (uint64_t)get16(nd + 4) << 32;
	uint64_t np;
	switch (rn(5)) {
	case 0: np = (uint64_t)pg; break;			/* a cycle */
	case 1: np = rn(2); break;				/* a meta page */
	case 2: np = npages(m) - 1 + rn(3); break;		/* the end */
	case 3: np = 2 + rn(npages(m) > 2 ? npages(m) - 2 : 1); break;
	default: np = edgy(cur, npages(m)); break;
	}
	put16(nd, (uint16_t)np);
	put16(nd + 2, (uint16_t)(np >> 16));
	put16(nd + 4, (uint16_t)(np >> 32));
	note(m, "page %d child %u %llu->%llu ", pg, i, (unsigned long long)cur,
	    (unsigned long long)np);
}

static void mut_count(mutant *m)
{
	int pg = pick_page(m, P_BRANCH | P_COUNTED, 0);
	if (pg < 0) {
		mut_branch_child(m);
		return;
	}
	unsigned char *p = page(m, (unsigned)pg);
	unsigned n = numkeys(p);
	if (!n)
		return;
	unsigned i = rn(n);
	int off = node_off(m, p, i);
	if (off < 0 || off + 16u > m->psize)
		return;
	uint64_t c = get64(p + off + 8), nc = edgy(c, 1u << 20);
	put64(p + off + 8, nc);
	note(m, "page %d count %u %llu->%llu ", pg, i, (unsigned long long)c,
	    (unsigned long long)nc);
}

/* Leaf node keys after node 0: the varint of a prefix-compressed key. */
static void mut_prefix_key(mutant *m)
{
	int pg = pick_page(m, P_LEAF, P_LEAF2);
	if (pg < 0)
		return;
	unsigned char *p = page(m, (unsigned)pg);
	unsigned n = numkeys(p);
	if (n < 2)
		return;
	unsigned i = 1 + rn(n - 1);
	int off = node_off(m, p, i);
	if (off < 0 || off + 10u > m->psize)
		return;
	unsigned char *k = p + off + 8;
	static const unsigned char pats[][3] = { { 0xff, 0xff, 0x7f }, { 0x80, 0x00, 0 },
		{ 0x7f, 0, 0 }, { 0x81, 0x00, 0 }, { 0x00, 0, 0 }, { 0xff, 0x01, 0 } };
	unsigned which = rn(6);
	unsigned len = which == 0 ? 3 : 2;
	if (off + 8u + len > m->psize)
		return;
	memcpy(k, pats[which], len);
	if (rn(3) == 0)
		put16(p + off + 6, (uint16_t)rn(4));
	note(m, "page %d prefix key %u pattern %u ", pg, i, which);
}

/* An inline sub-page (F_DUPDATA without F_SUBDATA): its header. */
static void mut_subpage(mutant *m)
{
	for (int tries = 0; tries < 16; tries++) {
		int pg = pick_page(m, P_LEAF, P_LEAF2);
		if (pg < 0)
			return;
		unsigned char *p = page(m, (unsigned)pg);
		unsigned n = numkeys(p);
		for (unsigned i = 0; i < n && i < 200; i++) {
			int off = node_off(m, p, i);
			if (off < 0)
				continue;
			unsigned char *nd = p + off;
			if ((get16(nd + 4) & (F_DUPDATA | F_SUBDATA)) != F_DUPDATA)
				continue;
			size_t ks = get16(nd + 6);
			size_t so = (size_t)off + 8 + ks + (ks & 1);
			if (so + PAGEHDR > m->psize)
				continue;
			unsigned char *sp = p + so;
			unsigned field = 8 + 2 * rn(4);	/* pad, flags, lower, upper */
			uint16_t v = get16(sp + field), nv = (uint16_t)edgy(v, 512);
			put16(sp + field, nv);
			note(m, "page %d subpage %u field %u %u->%u ", pg, i, field, v, nv);
			return;
		}
	}
}

static void mut_db_record(unsigned char *rec, mutant *m, const char *where)
{
	static const unsigned offs[] = { 0, 4, 6, 8, 16, 24, 32, 40 };
	unsigned o = offs[rn(8)];
	if (o == 0) {
		uint32_t v;
		memcpy(&v, rec, 4);
		uint32_t nv = (uint32_t)edgy(v, m->psize);
		memcpy(rec, &nv, 4);
		note(m, "%s pad %u->%u ", where, v, nv);
	} else if (o == 4) {
		uint16_t v = get16(rec + 4), nv = (uint16_t)(v ^ (1u << rn(9)));
		put16(rec + 4, nv);
		note(m, "%s flags %#x->%#x ", where, v, nv);
	} else if (o == 6) {
		uint16_t v = get16(rec + 6), nv = (uint16_t)edgy(v, 4);
		put16(rec + 6, nv);
		note(m, "%s depth %u->%u ", where, v, nv);
	} else {
		uint64_t v = get64(rec + o), nv = edgy(v, o == 40 ? npages(m) : 1u << 16);
		put64(rec + o, nv);
		note(m, "%s field@%u %llu->%llu ", where, o, (unsigned long long)v,
		    (unsigned long long)nv);
	}
}

static void mut_meta(mutant *m)
{
	unsigned which = rn(2);
	unsigned char *p = page(m, which);
	switch (rn(6)) {
	case 0: case 1:
		mut_db_record(p + 40 + 48 * rn(2), m, which ? "meta1 db" : "meta0 db");
		break;
	case 2: {
		uint64_t v = get64(p + 136), nv = edgy(v, npages(m));
		put64(p + 136, nv);
		note(m, "meta%u last_pg %llu->%llu ", which, (unsigned long long)v,
		    (unsigned long long)nv);
		break;
	}
	case 3: {
		uint64_t v = get64(p + 144), nv = edgy(v, v + 2);
		put64(p + 144, nv);
		note(m, "meta%u txnid %llu->%llu ", which, (unsigned long long)v,
		    (unsigned long long)nv);
		break;
	}
	case 4: {
		uint64_t v = get64(p + 32), nv = edgy(v, m->size);
		put64(p + 32, nv);
		note(m, "meta%u mapsize %llu->%llu ", which, (unsigned long long)v,
		    (unsigned long long)nv);
		break;
	}
	default: {
		unsigned at = 16 + rn(136);
		p[at] ^= (unsigned char)(1 + rn(255));
		note(m, "meta%u byte %u ", which, at);
		break;
	}
	}
}

/* A named-DB record or a duplicate sub-DB record inside a leaf node. */
static void mut_record(mutant *m)
{
	for (int tries = 0; tries < 32; tries++) {
		int pg = pick_page(m, P_LEAF, P_LEAF2);
		if (pg < 0)
			break;
		unsigned char *p = page(m, (unsigned)pg);
		unsigned n = numkeys(p);
		for (unsigned i = 0; i < n && i < 500; i++) {
			int off = node_off(m, p, i);
			if (off < 0)
				continue;
			unsigned char *nd = p + off;
			if (!(get16(nd + 4) & F_SUBDATA))
				continue;
			size_t ks = get16(nd + 6);
			/* Both layouts: even-padded keys (DLMDB) or not (stock). */
			size_t ro = (size_t)off + 8 + ks + ((ks & 1) && rn(2) ? 1 : 0);
			if (ro + 48 > m->psize)
				continue;
			char where[48];
			snprintf(where, sizeof(where), "page %d record %u", pg, i);
			mut_db_record(p + ro, m, where);
			return;
		}
	}
	mut_meta(m);
}

static void mut_truncate(mutant *m)
{
	size_t old = m->size, ns;
	switch (rn(3)) {
	case 0: ns = (size_t)m->psize * (2 + rn(npages(m) > 2 ? npages(m) - 2 : 1)); break;
	case 1: ns = old - 1 - rn(m->psize); break;
	default: ns = old > 4096 ? old - 4096 * (1 + rn(4)) : old / 2; break;
	}
	if (ns < 512)
		ns = 512;
	if (ns < m->size)
		m->size = ns;
	note(m, "truncate %zu->%zu ", old, m->size);
}

static void mut_bytes(mutant *m)
{
	unsigned k = 1 + rn(8);
	for (unsigned i = 0; i < k; i++) {
		size_t at = (size_t)2 * m->psize + rnd() % (m->size > 2 * (size_t)m->psize ?
		    m->size - 2 * (size_t)m->psize : 1);
		if (at < m->size)
			m->img[at] = (unsigned char)rnd();
	}
	note(m, "%u random bytes ", k);
}

static void mutate(mutant *m)
{
	unsigned k = rn(4) == 0 ? 2 + rn(2) : 1;
	for (unsigned i = 0; i < k; i++) {
		switch (rn(20)) {
		case 0: case 1: case 2: mut_page_header(m); break;
		case 3: case 4: case 5: case 6: mut_node(m); break;
		case 7: case 8: mut_branch_child(m); break;
		case 9: case 10: mut_count(m); break;
		case 11: case 12: mut_prefix_key(m); break;
		case 13: mut_subpage(m); break;
		case 14: mut_meta(m); break;
		case 15: case 16: mut_record(m); break;
		case 17: mut_truncate(m); break;
		default: mut_bytes(m); break;
		}
	}
}

/* ------------------------------------------------------------------------- */
/* Exercising a mutant                                                       */
/* ------------------------------------------------------------------------- */

/* First error seen; MDB_NOTFOUND and friends are answers, not errors. */
static int first_err;
static int verbose;

static int note_rc_at(int rc, int line)
{
	if (rc && rc != MDB_NOTFOUND && rc != MDB_KEYEXIST && !first_err) {
		first_err = rc;
		if (verbose)
			fprintf(stderr, "  line %d: %s\n", line, mdb_strerror(rc));
	}
	return rc;
}
#define note_rc(rc) note_rc_at((rc), __LINE__)

typedef struct keyset {
	unsigned n;
	size_t len[16];
	unsigned char buf[16][64];
} keyset;

static void keep_key(keyset *ks, const MDB_val *k)
{
	if (ks->n >= 16 || !k->mv_size)
		return;
	size_t l = k->mv_size < 64 ? k->mv_size : 64;
	memcpy(ks->buf[ks->n], k->mv_data, l);
	ks->len[ks->n++] = l;
}

static int pagefn(void *ctx, const MDB_pageinfo *info)
{
	(*(unsigned *)ctx)++;
	return *(unsigned *)ctx > 4 * WALK_LIMIT || info->pi_entries > 65536;
}

/* Touch every byte of a returned value, so a wrong pointer faults here. */
static volatile unsigned sink;

static void touch(const MDB_val *v)
{
	const unsigned char *p = v->mv_data;
	unsigned s = 0;
	for (size_t i = 0; i < v->mv_size; i++)
		s += p[i];
	sink += s;
}

static void walk_db(MDB_txn *txn, MDB_dbi dbi, keyset *ks)
{
	unsigned flags = 0;
	MDB_stat st;
	MDB_cursor *c;
	MDB_val k, v;
	int rc;
	note_rc(mdb_dbi_flags(txn, dbi, &flags));
	note_rc(mdb_stat(txn, dbi, &st));
	if (note_rc(mdb_cursor_open(txn, dbi, &c)))
		return;
	unsigned steps = 0;
	for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); !rc && steps < WALK_LIMIT;
	    rc = mdb_cursor_get(c, &k, &v, MDB_NEXT), steps++) {
		touch(&k);
		touch(&v);
		if (steps % 97 == 0)
			keep_key(ks, &k);
		if ((flags & MDB_DUPSORT) && steps % 13 == 0) {
			mdb_size_t cnt;
			note_rc(mdb_cursor_count(c, &cnt));
			const MDB_val *vals;
			if (!note_rc(mdb_cursor_list_dup(c, &vals, &cnt)) && cnt)
				touch(&vals[cnt - 1]);
			if ((flags & MDB_DUPFIXED) &&
			    !note_rc(mdb_cursor_get(c, &k, &v, MDB_GET_MULTIPLE)))
				touch(&v);
		}
	}
	note_rc(rc);
	steps = 0;
	for (rc = mdb_cursor_get(c, &k, &v, MDB_LAST); !rc && steps < 300;
	    rc = mdb_cursor_get(c, &k, &v, MDB_PREV), steps++) {
		touch(&k);
		touch(&v);
		if (steps == 0)
			keep_key(ks, &k);
	}
	note_rc(rc);
	for (unsigned i = 0; i < ks->n; i++) {
		MDB_val q = { ks->len[i], ks->buf[i] };
		if (!note_rc(mdb_cursor_get(c, &q, &v, MDB_SET_RANGE)))
			touch(&v);
		q.mv_size = ks->len[i];
		q.mv_data = ks->buf[i];
		if (!note_rc(mdb_get(txn, dbi, &q, &v)))
			touch(&v);
	}
	if (flags & MDB_COUNTED) {
		uint64_t total = 0, r;
		note_rc(mdb_count_all(txn, dbi, 0, &total));
		uint64_t probes[] = { 0, total / 2, total ? total - 1 : 0, total, total + 7 };
		for (unsigned i = 0; i < 5; i++) {
			if (!note_rc(mdb_get_rank(txn, dbi, probes[i], &k, &v))) {
				touch(&k);
				touch(&v);
			}
			if (!note_rc(mdb_cursor_get_rank(c, probes[i], &k, &v, 0)))
				touch(&k);
		}
		for (unsigned i = 0; i < ks->n; i++) {
			MDB_val lo = { ks->len[i], ks->buf[i] };
			MDB_val hi = { ks->len[ks->n - 1 - i], ks->buf[ks->n - 1 - i] };
			note_rc(mdb_get_key_rank(txn, dbi, &lo, NULL, &r));
			note_rc(mdb_cursor_key_rank(c, &lo, NULL, 0, &r));
			if (!(flags & MDB_DUPSORT))
				note_rc(mdb_count_range(txn, dbi, &lo, &hi, 0, &r));
			note_rc(mdb_range_count_keys(txn, dbi, &lo, &hi, 0, &r));
			if (flags & MDB_DUPSORT)
				note_rc(mdb_range_count_values(txn, dbi, &lo, &hi, 0, &r));
		}
	}
	mdb_cursor_close(c);
	unsigned pages = 0;
	note_rc(mdb_page_walk(txn, dbi, pagefn, &pages));
}

typedef struct dbset {
	unsigned n;
	MDB_dbi dbi[MAX_DBS];
	char name[MAX_DBS][64];
} dbset;

/* The main DB's keys that open as named DBs. */
static void find_dbs(MDB_txn *txn, dbset *ds)
{
	MDB_dbi main;
	MDB_cursor *c;
	MDB_val k, v;
	int rc;
	ds->n = 0;
	if (note_rc(mdb_dbi_open(txn, NULL, 0, &main)))
		return;
	ds->dbi[ds->n] = main;
	ds->name[ds->n++][0] = 0;
	if (note_rc(mdb_cursor_open(txn, main, &c)))
		return;
	unsigned steps = 0;
	for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); !rc && steps < WALK_LIMIT && ds->n < MAX_DBS;
	    rc = mdb_cursor_get(c, &k, &v, MDB_NEXT), steps++) {
		if (!k.mv_size || k.mv_size > 63 || memchr(k.mv_data, 0, k.mv_size) || v.mv_size != 48)
			continue;
		char name[64];
		memcpy(name, k.mv_data, k.mv_size);
		name[k.mv_size] = 0;
		MDB_dbi d;
		if (mdb_dbi_open(txn, name, 0, &d) == 0) {
			ds->dbi[ds->n] = d;
			snprintf(ds->name[ds->n++], 64, "%s", name);
		}
	}
	note_rc(rc);
	mdb_cursor_close(c);
}

/* Format flag of the store under test (see base.envflags), and the CLI's
 * --layout value for it. */
static unsigned case_envflags;
static const char *case_layout = "auto";

static int env_open(const char *path, unsigned flags, MDB_env **ret)
{
	flags |= case_envflags;
	MDB_env *env;
	int rc = mdb_env_create(&env);
	if (rc)
		return rc;
	mdb_env_set_maxdbs(env, 16);
	if (!(flags & MDB_RDONLY))
		mdb_env_set_mapsize(env, 64u << 20);
	rc = mdb_env_open(env, path, flags | MDB_NOSUBDIR | MDB_NOLOCK | MDB_NOSYNC, 0644);
	if (rc) {
		mdb_env_close(env);
		return rc;
	}
	*ret = env;
	return 0;
}

/* Read-only pass over every DB; returns the first error (0: clean). */
/*
 * A compacting copy of the mutant to /dev/null: it walks every page with
 * checks of its own and writes through a second thread, so it must end in
 * a result code like every read.  Its code is not noted: the copy checks
 * more than the reads (page counters, key order across pages), so a store
 * that reads clean may still be refused here.
 */
static void compact_copy(MDB_env *env)
{
	static int devnull = -1;
	if (devnull < 0 && (devnull = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0)
		return;
	(void)mdb_env_copyfd2(env, devnull, MDB_CP_COMPACT);
}

static int read_pass(const char *path)
{
	MDB_env *env;
	MDB_txn *txn;
	first_err = 0;
	int rc = env_open(path, MDB_RDONLY, &env);
	if (rc)
		return rc;
	if (!(rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn))) {
		dbset ds;
		find_dbs(txn, &ds);
		for (unsigned i = 0; i < ds.n; i++) {
			keyset ks = { 0 };
			walk_db(txn, ds.dbi[i], &ks);
		}
		unsigned pages = 0;
		note_rc(mdb_page_walk(txn, 0, pagefn, &pages));
		mdb_txn_abort(txn);
	} else {
		note_rc(rc);
	}
	compact_copy(env);
	mdb_env_close(env);
	return first_err;
}

/* Errors after which a write transaction must refuse to commit. */
static int fails_txn(int rc)
{
	switch (rc) {
	case MDB_CORRUPTED: case MDB_PAGE_NOTFOUND: case MDB_PANIC: case MDB_PROBLEM:
	case MDB_CURSOR_FULL: case MDB_PAGE_FULL: case MDB_MAP_FULL: case MDB_BAD_TXN:
	case ENOMEM: case EIO:
		return 1;
	default:
		return 0;
	}
}

/* A key like the DB's own keys: same size for integer keys. */
static MDB_val make_key(unsigned flags, const keyset *ks, unsigned char *buf, unsigned i)
{
	MDB_val k;
	if (flags & MDB_INTEGERKEY) {
		size_t sz = ks->n ? ks->len[0] : 8;
		if (sz != 4 && sz != 8)
			sz = 8;
		uint64_t x = rnd();
		memcpy(buf, &x, sz);
		k.mv_size = sz;
	} else {
		k.mv_size = (size_t)snprintf((char *)buf, 64, "fz-%03u-%016llx", i,
		    (unsigned long long)rnd());
		if (ks->n && rn(2)) {
			/* Near an existing key: shares its prefix. */
			size_t l = ks->len[rn(ks->n)];
			memcpy(buf, ks->buf[rn(ks->n)], l < 40 ? l : 40);
		}
	}
	k.mv_data = buf;
	return k;
}

/* Write pass: changes in every DB, then commit.  Returns the first error
 * or the commit's result; *committed tells whether the commit succeeded. */
static int write_pass(const char *path, int *committed, int *bad_commit)
{
	MDB_env *env;
	MDB_txn *txn;
	int rc;
	*committed = 0;
	*bad_commit = 0;
	first_err = 0;
	if ((rc = env_open(path, 0, &env)))
		return rc;
	if ((rc = mdb_txn_begin(env, NULL, 0, &txn))) {
		mdb_env_close(env);
		return rc;
	}
	dbset ds;
	find_dbs(txn, &ds);
	static unsigned char big[12000];
	memset(big, 'B', sizeof(big));
	for (unsigned d = 0; d < ds.n && !first_err; d++) {
		MDB_dbi dbi = ds.dbi[d];
		unsigned flags = 0;
		keyset ks = { 0 };
		if (note_rc(mdb_dbi_flags(txn, dbi, &flags)))
			break;
		/* Existing keys to overwrite and delete. */
		MDB_cursor *c;
		MDB_val k, v;
		if (note_rc(mdb_cursor_open(txn, dbi, &c)))
			break;
		unsigned steps = 0;
		size_t vfixed = 0;
		for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); !rc && steps < 2000;
		    rc = mdb_cursor_get(c, &k, &v, MDB_NEXT), steps++) {
			if (steps % 41 == 0)
				keep_key(&ks, &k);
			vfixed = v.mv_size;
		}
		note_rc(rc);
		if (first_err) {
			mdb_cursor_close(c);
			break;
		}
		int named_main = d == 0 && ds.n > 1;	/* main DB holding records */
		unsigned char kb[64], vb[64];
		/* Inserts: enough to split pages. */
		unsigned nins = 20 + rn(120);
		for (unsigned i = 0; i < nins && !first_err && !named_main; i++) {
			MDB_val key = make_key(flags, &ks, kb, i), val;
			if (flags & MDB_DUPFIXED) {
				size_t vs = vfixed ? vfixed : 8;
				if (vs > sizeof(vb))
					vs = 8;
				uint64_t x = rnd();
				memset(vb, 0, sizeof(vb));
				memcpy(vb, &x, vs < 8 ? vs : 8);
				val.mv_size = vs;
				val.mv_data = vb;
			} else if (flags & MDB_DUPSORT) {
				val.mv_size = (size_t)snprintf((char *)vb, sizeof(vb), "dv-%llx",
				    (unsigned long long)rnd());
				val.mv_data = vb;
				if (ks.n && rn(2)) {
					key.mv_size = ks.len[rn(ks.n)];
					key.mv_data = ks.buf[rn(ks.n)];
					key.mv_size = key.mv_size;
				}
			} else {
				val.mv_size = rn(10) == 0 ? 3000 + rn(8000) : 1 + rn(300);
				val.mv_data = big;
			}
			if (ks.n && !(flags & MDB_INTEGERKEY) && key.mv_data == ks.buf[0])
				key.mv_size = ks.len[0];
			rc = mdb_put(txn, dbi, &key, &val, 0);
			if (rc != MDB_BAD_VALSIZE)
				note_rc(rc);
		}
		/* Overwrites with another size, then deletes by key. */
		for (unsigned i = 0; i < ks.n && !first_err && !named_main; i++) {
			MDB_val key = { ks.len[i], ks.buf[i] };
			/* vfixed comes from the damaged store: it may exceed big. */
			int fixed = (flags & MDB_DUPFIXED) && vfixed <= sizeof(big);
			MDB_val val = { fixed ? vfixed : 1 + rn(5000), big };
			if (!(flags & MDB_DUPSORT) || (flags & MDB_DUPFIXED) == 0) {
				rc = mdb_put(txn, dbi, &key, &val, 0);
				if (rc != MDB_BAD_VALSIZE)
					note_rc(rc);
			}
			if (i % 2 == 0)
				note_rc(mdb_del(txn, dbi, &key, NULL));
		}
		/* A run of cursor deletes from the front: merges, rebalancing. */
		unsigned ndel = named_main ? 0 : 10 + rn(200);
		if (!first_err && ndel && !note_rc(mdb_cursor_get(c, &k, &v, MDB_FIRST))) {
			for (unsigned i = 0; i < ndel && !first_err; i++) {
				if (note_rc(mdb_cursor_del(c, rn(3) == 0 ? MDB_NODUPDATA : 0)))
					break;
				/* After deleting the last item the cursor is past
				 * the end: GET_CURRENT answers EINVAL, as LMDB's. */
				rc = mdb_cursor_get(c, &k, &v, MDB_GET_CURRENT);
				if (rc == EINVAL)
					break;
				if (rc == MDB_NOTFOUND)
					rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
				if (note_rc(rc))
					break;
			}
		}
		mdb_cursor_close(c);
		/* The reads again, in the txn that now holds dirty pages: its
		 * links into the snapshot are bounded by the snapshot, and its
		 * lookups go through its own pages first. */
		if (!first_err)
			walk_db(txn, dbi, &ks);
		if (!first_err && d > 0 && rn(12) == 0)
			note_rc(mdb_drop(txn, dbi, 0));
	}
	int err = first_err;
	rc = mdb_txn_commit(txn);
	if (!rc) {
		*committed = 1;
		if (fails_txn(err))
			*bad_commit = 1;	/* damage detected, yet committed */
	}
	mdb_env_close(env);
	return err ? err : rc;
}

/* ------------------------------------------------------------------------- */
/* Cases, worker and supervisor                                              */
/* ------------------------------------------------------------------------- */

enum { CASE_OK, CASE_ERR, CASE_CRASH, CASE_BADCOMMIT };

typedef struct shared {
	volatile uint64_t current;	/* case the worker is running */
	volatile uint64_t done;		/* cases finished */
	volatile uint64_t ok, errs, badcommit, committed, post_err;
	volatile uint64_t by_err[64];	/* count per error (index: err - MDB_KEYEXIST, or 63) */
	volatile uint64_t ro_err, rw_err;
	volatile uint64_t worsened;	/* read clean before, errors after our commit */
} shared;

static shared *sh;
static uint64_t seed = 1;
static const char *emit_dir;
static const char *after_dir;	/* --after: committed images of clean-reading mutants */
static int clean;	/* --clean: base stores unchanged, every case must be ok */

/* Tally slot of an error: LMDB's codes by offset from MDB_KEYEXIST, errno
 * values from 40 on. */
static unsigned err_slot(int rc)
{
	if (rc >= MDB_KEYEXIST && rc < MDB_KEYEXIST + 40)
		return (unsigned)(rc - MDB_KEYEXIST);
	if (rc > 0 && rc < 23)
		return 40 + (unsigned)rc;
	return 63;
}

static int slot_err(unsigned i)
{
	return i < 40 ? MDB_KEYEXIST + (int)i : (int)i - 40;
}

static const char *err_name(int rc)
{
	switch (rc) {
	case MDB_KEYEXIST: return "MDB_KEYEXIST";
	case MDB_NOTFOUND: return "MDB_NOTFOUND";
	case MDB_PAGE_NOTFOUND: return "MDB_PAGE_NOTFOUND";
	case MDB_CORRUPTED: return "MDB_CORRUPTED";
	case MDB_PANIC: return "MDB_PANIC";
	case MDB_VERSION_MISMATCH: return "MDB_VERSION_MISMATCH";
	case MDB_INVALID: return "MDB_INVALID";
	case MDB_MAP_FULL: return "MDB_MAP_FULL";
	case MDB_CURSOR_FULL: return "MDB_CURSOR_FULL";
	case MDB_PAGE_FULL: return "MDB_PAGE_FULL";
	case MDB_MAP_RESIZED: return "MDB_MAP_RESIZED";
	case MDB_INCOMPATIBLE: return "MDB_INCOMPATIBLE";
	case MDB_BAD_TXN: return "MDB_BAD_TXN";
	case MDB_BAD_VALSIZE: return "MDB_BAD_VALSIZE";
	case MDB_PROBLEM: return "MDB_PROBLEM";
	case EINVAL: return "EINVAL";
	case ENOMEM: return "ENOMEM";
	case EIO: return "EIO";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	default: return NULL;
	}
}

static void build_case(uint64_t n, mutant *m)
{
	rng_state = seed * 0x100000001B3ull ^ (n * 0x9E3779B97F4A7C15ull);
	rnd();
	const base *b = &bases[n % nbases];
	m->img = malloc(b->size);
	memcpy(m->img, b->img, b->size);
	m->size = b->size;
	m->psize = b->psize;
	m->envflags = b->envflags;
	m->layout = b->layout;
	m->wlen = 0;
	m->what[0] = 0;
	note(m, "%s: ", b->name);
	if (!clean)
		mutate(m);
}

static int write_image(const char *path, const mutant *m)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	size_t off = 0;
	while (off < m->size) {
		ssize_t w = write(fd, m->img + off, m->size - off);
		if (w <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)w;
	}
	close(fd);
	return 0;
}

static void copy_file(const char *from, const char *to)
{
	mutant m;
	if (read_file(from, &m.img, &m.size))
		return;
	write_image(to, &m);
	free(m.img);
}

static int run_case(uint64_t n)
{
	mutant m;
	char path[512];
	build_case(n, &m);
	snprintf(path, sizeof(path), "%s/case.mdb", workdir);
	if (write_image(path, &m))
		die("write image", errno);
	free(m.img);
	case_envflags = m.envflags;
	case_layout = m.layout;
	if (verbose)
		fprintf(stderr, "case %llu: %s\n", (unsigned long long)n, m.what);
	int ro = read_pass(path);
	int committed, bad;
	int rw = write_pass(path, &committed, &bad);
	int post = 0;
	if (committed && after_dir && !ro) {
		char out[512];
		snprintf(out, sizeof(out), "%s/a%06llu.mdb", after_dir, (unsigned long long)n);
		copy_file(path, out);
	}
	if (committed)
		post = read_pass(path);
	if (ro)
		sh->ro_err++;
	if (rw)
		sh->rw_err++;
	if (post)
		sh->post_err++;
	if (post && !ro) {
		/* The read-only pass found nothing, yet the committed store
		 * reads with errors: the damage only the writer could see. */
		sh->worsened++;
		if (verbose || getenv("FUZZ_SHOW_WORSENED"))
			fprintf(stderr, "WORSENED case %llu (%s): %s\n", (unsigned long long)n,
			    mdb_strerror(post), m.what);
	}
	if (committed)
		sh->committed++;
	if (verbose)
		fprintf(stderr, "  result: read-only %d, read-write %d, committed %d, after commit %d\n",
		    ro, rw, committed, post);
	int res = bad ? CASE_BADCOMMIT : (ro || rw) ? CASE_ERR : CASE_OK;
	if (res == CASE_BADCOMMIT) {
		sh->badcommit++;
		fprintf(stderr, "COMMIT AFTER ERROR case %llu (%s): %s\n", (unsigned long long)n,
		    mdb_strerror(rw), m.what);
	} else if (res == CASE_ERR) {
		sh->errs++;
		sh->by_err[err_slot(ro ? ro : rw)]++;
	} else {
		sh->ok++;
	}
	if (emit_dir) {
		char out[512];
		snprintf(out, sizeof(out), "%s/verdicts.txt", emit_dir);
		FILE *f = fopen(out, "a");
		if (f) {
			fprintf(f, "m%06llu %d %d %s\n", (unsigned long long)n, ro, rw, case_layout);
			fclose(f);
		}
	}
	return res;
}

/*
 * A version 1 store is either stock LMDB's or DLMDB's padded layout, which
 * the file does not tell apart: the engine decides from a sample of the
 * file.  The layout it decides for the unchanged store is pinned for every
 * mutant of it (MDB_FORMAT_LMDB or MDB_FORMAT_DLMDB_V1, the CLI's --layout
 * lmdb or dlmdb), as an application that knows its store would open it: a
 * mutant or a written mutant whose damage sways the sample the other way
 * would otherwise be read in the wrong layout, which measures the layout
 * guess, not the reading and writing of a damaged store.  When the guess
 * fails on the unchanged store, the padded layout is tried.
 */
static void choose_formats(void)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/base.mdb", workdir);
	for (unsigned i = 0; i < nbases; i++) {
		mutant m = { bases[i].img, bases[i].size, bases[i].psize, 0, "auto", "", 0 };
		uint32_t version;
		memcpy(&version, bases[i].img + 20, 4);
		bases[i].layout = "auto";
		bases[i].envflags = 0;
		if (version != 1)
			continue;
		if (write_image(path, &m))
			die("write image", errno);
		case_envflags = 0;
		if (read_pass(path) == 0) {
			MDB_env *env;
			MDB_envlayout lay;
			if (env_open(path, MDB_RDONLY, &env) == 0) {
				if (mdb_env_get_layout(env, &lay) == 0) {
					bases[i].envflags = lay.ml_padded ? MDB_FORMAT_DLMDB_V1 :
					    MDB_FORMAT_LMDB;
					bases[i].layout = lay.ml_padded ? "dlmdb" : "lmdb";
				}
				mdb_env_close(env);
			}
		} else {
			case_envflags = MDB_FORMAT_DLMDB_V1;
			if (read_pass(path) == 0) {
				bases[i].envflags = MDB_FORMAT_DLMDB_V1;
				bases[i].layout = "dlmdb";
			}
		}
	}
	case_envflags = 0;
	unlink(path);
}

static void worker(uint64_t from, uint64_t to)
{
	for (uint64_t n = from; n < to; n++) {
		sh->current = n;
		if (emit_dir) {
			/* The mutant as it was before the engine touched it. */
			mutant m;
			char out[512];
			build_case(n, &m);
			snprintf(out, sizeof(out), "%s/m%06llu.mdb", emit_dir, (unsigned long long)n);
			write_image(out, &m);
			free(m.img);
		}
		alarm(CASE_SECONDS);
		run_case(n);
		alarm(0);
		sh->done = n + 1;
	}
	_exit(0);
}

/* Write every base store to dir as NN-name.mdb (a seed corpus for the
 * libFuzzer target, fuzz/libfuzz_store.c). */
static void write_bases(const char *dir)
{
	mkdir(dir, 0755);
	for (unsigned i = 0; i < nbases; i++) {
		char out[512], name[64];
		memcpy(name, bases[i].name, sizeof(name));
		name[sizeof(name) - 1] = 0;
		for (char *c = name; *c; c++)
			if (*c == '/' || *c == ':')
				*c = '-';
		snprintf(out, sizeof(out), "%s/%02u-%s", dir, i, name);
		mutant m = { bases[i].img, bases[i].size, bases[i].psize, 0, "auto", "", 0 };
		if (write_image(out, &m))
			die("write base", errno);
	}
}

#ifndef FUZZ_STORE_NO_MAIN
int main(int argc, char **argv)
{
	const char *bases_dir = NULL;
	uint64_t cases = 1000, only = UINT64_MAX;
	const char *keep = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--cases") && i + 1 < argc)
			cases = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--case") && i + 1 < argc)
			only = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--emit") && i + 1 < argc)
			emit_dir = argv[++i];
		else if (!strcmp(argv[i], "--bases") && i + 1 < argc)
			bases_dir = argv[++i];
		else if (!strcmp(argv[i], "--after") && i + 1 < argc)
			after_dir = argv[++i];
		else if (!strcmp(argv[i], "--keep") && i + 1 < argc)
			keep = argv[++i];
		else if (!strcmp(argv[i], "--clean"))
			clean = 1;
		else if (!strcmp(argv[i], "-v"))
			verbose = 1;
		else {
			fprintf(stderr, "usage: %s [--seed S] [--cases N] [--case K] [--emit DIR] "
			    "[--after DIR] [--keep DIR] [--clean] [-v] | --bases DIR\n", argv[0]);
			return 2;
		}
	}
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(workdir, sizeof(workdir), "%s/fuzz_store.XXXXXX", tmp);
	if (!mkdtemp(workdir))
		die("mkdtemp", errno);
	if (emit_dir)
		mkdir(emit_dir, 0755);
	if (keep)
		mkdir(keep, 0755);
	if (after_dir)
		mkdir(after_dir, 0755);
	load_bases();
	if (!nbases)
		die("no base stores", EINVAL);
	if (bases_dir) {
		write_bases(bases_dir);
		rmdir(workdir);
		return 0;
	}
	choose_formats();
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		die("mmap", errno);
	memset((void *)sh, 0, sizeof(*sh));

	uint64_t from = 0, to = cases;
	if (only != UINT64_MAX) {
		from = only;
		to = only + 1;
		verbose = 1;
	}
	uint64_t crashes = 0, next = from;
	fprintf(stderr, "fuzz_store: seed %llu, cases %llu..%llu, %u base stores\n",
	    (unsigned long long)seed, (unsigned long long)from, (unsigned long long)to, nbases);
	while (next < to) {
		sh->done = next;
		fflush(NULL);
		pid_t pid = fork();
		if (pid < 0)
			die("fork", errno);
		if (pid == 0)
			worker(next, to);
		int st;
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && sh->done == to)
			break;
		uint64_t bad = sh->current;
		crashes++;
		mutant m;
		build_case(bad, &m);
		fprintf(stderr, "CRASH case %llu (%s %d): %s\n", (unsigned long long)bad,
		    WIFSIGNALED(st) ? "signal" : "exit", WIFSIGNALED(st) ? WTERMSIG(st) :
		    WEXITSTATUS(st), m.what);
		if (keep) {
			char out[512];
			snprintf(out, sizeof(out), "%s/crash-%llu-%llu.mdb", keep,
			    (unsigned long long)seed, (unsigned long long)bad);
			write_image(out, &m);
		}
		free(m.img);
		next = bad + 1;
	}
	char path[512];
	snprintf(path, sizeof(path), "%s/case.mdb", workdir);
	unlink(path);
	rmdir(workdir);
	uint64_t total = to - from;
	printf("fuzz_store: seed %llu: %llu cases: %llu ok, %llu clean errors, %llu crashes, "
	    "%llu commits after an error\n", (unsigned long long)seed, (unsigned long long)total,
	    (unsigned long long)sh->ok, (unsigned long long)sh->errs, (unsigned long long)crashes,
	    (unsigned long long)sh->badcommit);
	printf("fuzz_store: read-only pass errors %llu, write pass errors %llu, commits %llu, "
	    "errors reading a committed mutant %llu (%llu of them read clean before the "
	    "commit)\n", (unsigned long long)sh->ro_err,
	    (unsigned long long)sh->rw_err, (unsigned long long)sh->committed,
	    (unsigned long long)sh->post_err, (unsigned long long)sh->worsened);
	printf("fuzz_store: errors:");
	for (unsigned i = 0; i < 64; i++)
		if (sh->by_err[i])
		{
			const char *name = i == 63 ? "other" : err_name(slot_err(i));
			if (name)
				printf(" %s=%llu", name, (unsigned long long)sh->by_err[i]);
			else
				printf(" %d=%llu", slot_err(i), (unsigned long long)sh->by_err[i]);
		}
	printf("\n");
	if (clean && sh->ok != total)
		return 1;
	return crashes || sh->badcommit ? 1 : 0;
}
#endif /* FUZZ_STORE_NO_MAIN */
