/*
 * powerloss.c - power-loss images rebuilt from a write log.
 *
 *   powerloss --shim PATH [--flags default|nometasync|writemap] [--txns N]
 *             [--images N] [--seed S] [--check-cmd CMD] [--keep DIR]
 *
 * 1. Workload: a child process, run with the plshim.so write log
 *    preloaded, creates a store and commits N transactions (puts with
 *    small and overflow values, deletes, in the main DB and a counted
 *    named DB; every transaction also stores its own number under
 *    "__stamp").  After each commit returns it marks the log, and records
 *    a hash of the whole store's contents for that transaction number.
 * 2. Images: for a random cut point in the log, the image holds every write
 *    up to the last sync before the cut, plus a random subset of the later
 *    writes before the cut, each either whole or torn: a random subset of
 *    its 512-byte sectors.
 * 3. Checks per image: it opens; every database and page walks without an
 *    error; the stamp is at least the last transaction whose commit
 *    returned before the cut (with MDB_NOMETASYNC the last commit may be
 *    lost, as LMDB documents: at least the one before); its contents hash to
 *    what the workload recorded for that stamp.  --check-cmd runs a command
 *    on the image path too (e.g. "dlmdb check"), which must exit 0.
 *
 * --ignore-syncs builds images as if no sync had ever completed: a control
 * run that must report lost commits (it proves the checks can fail).
 *
 * Exit status 0 when every image passed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dlfcn.h>

#include "lmdb.h"

enum { PL_WRITE = 1, PL_SYNC = 2, PL_TRUNC = 3, PL_MARK = 4 };

typedef struct pl_rec {
	uint32_t type, reserved;
	uint64_t off, len;
} pl_rec;

typedef struct rec {
	uint32_t type;
	uint64_t off, len;
	const unsigned char *data;
} rec;

static uint64_t rng;

static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static unsigned rn(unsigned n)
{
	return n ? (unsigned)(rnd() % n) : 0;
}

static void fail(const char *what, int rc)
{
	fprintf(stderr, "powerloss: %s: %s\n", what, mdb_strerror(rc));
	exit(2);
}

#define CHECK(what, expr) do { int rc_ = (expr); if (rc_) fail(what, rc_); } while (0)

/* ------------------------------------------------------------------------- */
/* Store contents                                                            */
/* ------------------------------------------------------------------------- */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001B3ull;
	return h;
}

/* Hash every item of one DB into h; returns an error or 0. */
static int hash_db(MDB_txn *txn, MDB_dbi dbi, uint64_t *h)
{
	MDB_cursor *c;
	MDB_val k, v;
	int rc = mdb_cursor_open(txn, dbi, &c);
	if (rc)
		return rc;
	uint64_t n = 0;
	while ((rc = mdb_cursor_get(c, &k, &v, n ? MDB_NEXT : MDB_FIRST)) == 0) {
		*h = fnv(*h, &k.mv_size, sizeof(k.mv_size));
		*h = fnv(*h, k.mv_data, k.mv_size);
		*h = fnv(*h, &v.mv_size, sizeof(v.mv_size));
		*h = fnv(*h, v.mv_data, v.mv_size);
		n++;
	}
	mdb_cursor_close(c);
	*h = fnv(*h, &n, sizeof(n));
	return rc == MDB_NOTFOUND ? 0 : rc;
}

static int page_count(void *ctx, const MDB_pageinfo *info)
{
	(void)info;
	(*(uint64_t *)ctx)++;
	return 0;
}

/*
 * Read the stamp and hash the contents (the user data: the "cnt" DB's
 * items, and the main DB's items except the "cnt" record, whose page
 * numbers differ between equal stores).  Also walks every page.
 */
static int read_state(MDB_env *env, uint64_t *stamp, uint64_t *hash)
{
	MDB_txn *txn;
	MDB_dbi main, cnt;
	int rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
	if (rc)
		return rc;
	*stamp = 0;
	*hash = 0xcbf29ce484222325ull;
	if ((rc = mdb_dbi_open(txn, NULL, 0, &main)))
		goto out;
	rc = mdb_dbi_open(txn, "cnt", 0, &cnt);
	if (rc == MDB_NOTFOUND) {
		rc = 0;	/* nothing committed yet */
		goto out;
	}
	if (rc)
		goto out;
	MDB_val k = { 7, "__stamp" }, v;
	if ((rc = mdb_get(txn, main, &k, &v)))
		goto out;
	if (v.mv_size != 8) {
		rc = MDB_CORRUPTED;
		goto out;
	}
	memcpy(stamp, v.mv_data, 8);
	MDB_cursor *c;
	if ((rc = mdb_cursor_open(txn, main, &c)))
		goto out;
	while ((rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) == 0) {
		if (k.mv_size == 3 && !memcmp(k.mv_data, "cnt", 3))
			continue;
		*hash = fnv(*hash, k.mv_data, k.mv_size);
		*hash = fnv(*hash, v.mv_data, v.mv_size);
	}
	mdb_cursor_close(c);
	if (rc != MDB_NOTFOUND)
		goto out;
	if ((rc = hash_db(txn, cnt, hash)))
		goto out;
	uint64_t total;
	if ((rc = mdb_count_all(txn, cnt, 0, &total)))
		goto out;
	*hash = fnv(*hash, &total, sizeof(total));
	uint64_t pages = 0;
	if ((rc = mdb_page_walk(txn, 0, page_count, &pages)) ||
	    (rc = mdb_page_walk(txn, main, page_count, &pages)) ||
	    (rc = mdb_page_walk(txn, cnt, page_count, &pages)))
		goto out;
out:
	mdb_txn_abort(txn);
	return rc;
}

/* ------------------------------------------------------------------------- */
/* Workload                                                                  */
/* ------------------------------------------------------------------------- */

static unsigned flag_bits(const char *name)
{
	if (!strcmp(name, "default"))
		return 0;
	if (!strcmp(name, "nometasync"))
		return MDB_NOMETASYNC;
	if (!strcmp(name, "writemap"))
		return MDB_WRITEMAP;
	fprintf(stderr, "powerloss: unknown --flags %s\n", name);
	exit(2);
}

static void txn_changes(MDB_txn *txn, MDB_dbi main, MDB_dbi cnt, uint64_t i)
{
	static unsigned char big[12000];
	char kb[32];
	memset(big, (int)('a' + i % 26), sizeof(big));
	MDB_val k = { 7, "__stamp" }, v = { 8, &i };
	CHECK("put stamp", mdb_put(txn, main, &k, &v, 0));
	unsigned nput = i % 10 == 0 ? 300 : 5 + rn(40);
	for (unsigned j = 0; j < nput; j++) {
		MDB_dbi d = rn(2) ? main : cnt;
		k.mv_size = (size_t)snprintf(kb, sizeof(kb), "k%05u", rn(4000));
		k.mv_data = kb;
		v.mv_size = rn(20) == 0 ? 2000 + rn(9000) : 1 + rn(300);
		v.mv_data = big;
		CHECK("put", mdb_put(txn, d, &k, &v, 0));
	}
	unsigned ndel = rn(30);
	for (unsigned j = 0; j < ndel; j++) {
		MDB_dbi d = rn(2) ? main : cnt;
		k.mv_size = (size_t)snprintf(kb, sizeof(kb), "k%05u", rn(4000));
		k.mv_data = kb;
		int rc = mdb_del(txn, d, &k, NULL);
		if (rc && rc != MDB_NOTFOUND)
			fail("del", rc);
	}
}

static int workload(const char *dir, unsigned flags, unsigned ntxn, uint64_t seed)
{
	char path[512], hpath[512];
	snprintf(path, sizeof(path), "%s/data.mdb", dir);
	snprintf(hpath, sizeof(hpath), "%s/hashes.txt", dir);
	void (*mark)(uint64_t) = (void (*)(uint64_t))dlsym(RTLD_DEFAULT, "pl_mark");
	if (!mark) {
		fprintf(stderr, "powerloss: pl_mark not found: run with plshim.so preloaded\n");
		return 2;
	}
	FILE *hf = fopen(hpath, "w");
	if (!hf)
		fail("hashes file", errno);
	MDB_env *env;
	CHECK("env_create", mdb_env_create(&env));
	CHECK("maxdbs", mdb_env_set_maxdbs(env, 4));
	CHECK("mapsize", mdb_env_set_mapsize(env, 64u << 20));
	CHECK("env_open", mdb_env_open(env, path, MDB_NOSUBDIR | flags, 0644));
	rng = seed;
	for (uint64_t i = 1; i <= ntxn; i++) {
		MDB_txn *txn;
		MDB_dbi main, cnt;
		CHECK("txn", mdb_txn_begin(env, NULL, 0, &txn));
		CHECK("dbi", mdb_dbi_open(txn, NULL, 0, &main));
		CHECK("dbi", mdb_dbi_open(txn, "cnt", MDB_CREATE | MDB_COUNTED, &cnt));
		txn_changes(txn, main, cnt, i);
		CHECK("commit", mdb_txn_commit(txn));
		mark(i);
		uint64_t stamp, hash;
		CHECK("read back", read_state(env, &stamp, &hash));
		if (stamp != i)
			fail("stamp read back", MDB_PROBLEM);
		fprintf(hf, "%" PRIu64 " %016" PRIx64 "\n", i, hash);
	}
	fclose(hf);
	mdb_env_close(env);
	return 0;
}

/* ------------------------------------------------------------------------- */
/* Images                                                                    */
/* ------------------------------------------------------------------------- */

static rec *recs;
static size_t nrecs;
static unsigned char *logbuf;

static void load_log(const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		fail("open log", errno);
	size_t size = (size_t)st.st_size, got = 0;
	logbuf = malloc(size ? size : 1);
	while (got < size) {
		ssize_t r = read(fd, logbuf + got, size - got);
		if (r <= 0)
			fail("read log", errno);
		got += (size_t)r;
	}
	close(fd);
	size_t cap = 1024, off = 0;
	recs = malloc(cap * sizeof(rec));
	while (off + sizeof(pl_rec) <= size) {
		pl_rec h;
		memcpy(&h, logbuf + off, sizeof(h));
		off += sizeof(h);
		if (nrecs == cap)
			recs = realloc(recs, (cap *= 2) * sizeof(rec));
		rec *r = &recs[nrecs++];
		r->type = h.type;
		r->off = h.off;
		r->len = h.type == PL_WRITE ? h.len : 0;
		r->data = logbuf + off;
		off += r->len;
		if (off > size)
			fail("truncated log", MDB_CORRUPTED);
	}
}

static void apply(unsigned char **img, size_t *size, size_t *cap, uint64_t off,
	const unsigned char *data, size_t len)
{
	if (off + len > *cap) {
		size_t nc = *cap ? *cap : 1 << 20;
		while (nc < off + len)
			nc *= 2;
		*img = realloc(*img, nc);
		memset(*img + *cap, 0, nc - *cap);
		*cap = nc;
	}
	memcpy(*img + off, data, len);
	if (off + len > *size)
		*size = off + len;
}

/*
 * The image a power cut just before record cut leaves: records up to the
 * last sync before the cut applied, later writes each dropped, kept whole
 * or torn.  *last_mark: the last commit marked before the cut.
 */
static int ignore_syncs;	/* --ignore-syncs: the control that must fail */

static void build_image(size_t cut, unsigned char **img, size_t *size, size_t *fsize,
	uint64_t *last_mark, unsigned *torn)
{
	size_t cap = 0, sync = 0;
	*img = NULL;
	*size = 0;
	*fsize = 0;
	*last_mark = 0;
	*torn = 0;
	for (size_t i = 0; i < cut; i++) {
		if (recs[i].type == PL_SYNC && !ignore_syncs)
			sync = i + 1;
		if (recs[i].type == PL_MARK)
			*last_mark = recs[i].off;
	}
	for (size_t i = 0; i < cut; i++) {
		const rec *r = &recs[i];
		int durable = i < sync;
		if (r->type == PL_TRUNC) {
			/* Growth reads back as zeros (the image file is extended
			 * sparsely when written); the engine never shrinks it. */
			if (r->off > *fsize)
				*fsize = r->off;
			continue;
		}
		if (r->type != PL_WRITE)
			continue;
		if (durable) {
			apply(img, size, &cap, r->off, r->data, r->len);
			continue;
		}
		switch (rn(3)) {
		case 0:
			break;	/* lost */
		case 1:
			apply(img, size, &cap, r->off, r->data, r->len);
			break;
		default:
			/* Torn: each 512-byte sector (of the disk) independently. */
			(*torn)++;
			for (uint64_t s = r->off & ~(uint64_t)511; s < r->off + r->len; s += 512) {
				uint64_t a = s < r->off ? r->off : s, b = s + 512;
				if (b > r->off + r->len)
					b = r->off + r->len;
				if (rn(2))
					apply(img, size, &cap, a, r->data + (a - r->off), b - a);
			}
			break;
		}
	}
}

typedef struct hashes {
	size_t n;
	uint64_t *h;	/* h[i] = hash after commit i */
} hashes;

static void load_hashes(const char *dir, hashes *hs)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/hashes.txt", dir);
	FILE *f = fopen(path, "r");
	if (!f)
		fail("hashes", errno);
	uint64_t i, h;
	hs->n = 0;
	hs->h = NULL;
	while (fscanf(f, "%" SCNu64 " %" SCNx64, &i, &h) == 2) {
		if (i >= hs->n) {
			hs->h = realloc(hs->h, (i + 1) * sizeof(uint64_t));
			for (size_t j = hs->n; j <= i; j++)
				hs->h[j] = 0;
			hs->n = i + 1;
		}
		hs->h[i] = h;
	}
	fclose(f);
}

static int write_file(const char *path, const unsigned char *img, size_t size, size_t fsize)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return errno;
	size_t off = 0;
	while (off < size) {
		ssize_t w = write(fd, img + off, size - off);
		if (w <= 0) {
			close(fd);
			return errno;
		}
		off += (size_t)w;
	}
	if (fsize > size && ftruncate(fd, (off_t)fsize) < 0) {
		close(fd);
		return errno;
	}
	close(fd);
	return 0;
}

/* Check one image; returns 0 when it holds what it must. */
static int check_image(const char *path, unsigned flags, uint64_t last_mark, const hashes *hs,
	const char *check_cmd, char *why, size_t whylen)
{
	MDB_env *env;
	uint64_t need = last_mark;
	if ((flags & MDB_NOMETASYNC) && need)
		need--;	/* the last commit's meta may not be on disk yet */
	int rc = mdb_env_create(&env);
	if (rc)
		fail("env_create", rc);
	mdb_env_set_maxdbs(env, 4);
	rc = mdb_env_open(env, path, MDB_NOSUBDIR | MDB_RDONLY | MDB_NOLOCK, 0644);
	if (rc) {
		mdb_env_close(env);
		if (!need)
			return 0;	/* nothing committed: an unreadable file is allowed */
		snprintf(why, whylen, "open: %s", mdb_strerror(rc));
		return 1;
	}
	uint64_t stamp, hash;
	rc = read_state(env, &stamp, &hash);
	mdb_env_close(env);
	if (rc) {
		snprintf(why, whylen, "read: %s", mdb_strerror(rc));
		return 1;
	}
	if (stamp < need) {
		snprintf(why, whylen, "lost commits: stamp %" PRIu64 ", commit %" PRIu64
		    " had returned", stamp, last_mark);
		return 1;
	}
	if (stamp && (stamp >= hs->n || hs->h[stamp] != hash)) {
		snprintf(why, whylen, "contents of txn %" PRIu64 " differ", stamp);
		return 1;
	}
	if (check_cmd && need) {
		char cmd[2048];
		snprintf(cmd, sizeof(cmd), "%s '%s' >/dev/null 2>&1", check_cmd, path);
		int st = system(cmd);
		if (st != 0) {
			snprintf(why, whylen, "check command exit status %d", st);
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *shim = NULL, *flagname = "default", *check_cmd = NULL, *keep = NULL;
	unsigned ntxn = 60, nimages = 300;
	uint64_t seed = 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--shim") && i + 1 < argc)
			shim = argv[++i];
		else if (!strcmp(argv[i], "--flags") && i + 1 < argc)
			flagname = argv[++i];
		else if (!strcmp(argv[i], "--txns") && i + 1 < argc)
			ntxn = (unsigned)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--images") && i + 1 < argc)
			nimages = (unsigned)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--check-cmd") && i + 1 < argc)
			check_cmd = argv[++i];
		else if (!strcmp(argv[i], "--keep") && i + 1 < argc)
			keep = argv[++i];
		else if (!strcmp(argv[i], "--ignore-syncs"))
			ignore_syncs = 1;
		else if (!strcmp(argv[i], "--workload") && i + 1 < argc) {
			/* Internal: the child that runs under the shim. */
			const char *dir = argv[++i];
			return workload(dir, flag_bits(flagname), ntxn, seed);
		} else {
			fprintf(stderr, "usage: %s --shim PATH [--flags default|nometasync|writemap] "
			    "[--txns N] [--images N] [--seed S] [--check-cmd CMD] [--keep DIR] [--ignore-syncs]\n", argv[0]);
			return 2;
		}
	}
	unsigned flags = flag_bits(flagname);
	if (!shim) {
		fprintf(stderr, "powerloss: --shim PATH required\n");
		return 2;
	}
	const char *tmp = getenv("TMPDIR");
	char dir[512], target[600], logp[600];
	snprintf(dir, sizeof(dir), "%s/powerloss.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		fail("mkdtemp", errno);
	char *rdir = realpath(dir, NULL);
	snprintf(target, sizeof(target), "%s/data.mdb", rdir);
	snprintf(logp, sizeof(logp), "%s/log", rdir);

	/* 1. The workload, under the write log. */
	pid_t pid = fork();
	if (pid < 0)
		fail("fork", errno);
	if (pid == 0) {
		char sbuf[32], tbuf[32];
		snprintf(sbuf, sizeof(sbuf), "%" PRIu64, seed);
		snprintf(tbuf, sizeof(tbuf), "%u", ntxn);
		/* Libraries already preloaded (fuzz/pageshim.c: stores of other
		 * page sizes) stay, after the write log. */
		const char *pre = getenv("LD_PRELOAD");
		char *both = NULL;
		if (pre && *pre && asprintf(&both, "%s:%s", shim, pre) < 0)
			_exit(127);
		setenv("LD_PRELOAD", both ? both : shim, 1);
		setenv("PL_TARGET", target, 1);
		setenv("PL_LOG", logp, 1);
		execl("/proc/self/exe", argv[0], "--flags", flagname, "--txns", tbuf, "--seed", sbuf,
		    "--workload", rdir, (char *)NULL);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "powerloss: workload failed (status %d)\n", st);
		return 1;
	}

	/* 2-3. Images at random cut points. */
	load_log(logp);
	hashes hs;
	load_hashes(rdir, &hs);
	size_t nw = 0, ns = 0, nm = 0;
	for (size_t i = 0; i < nrecs; i++) {
		nw += recs[i].type == PL_WRITE;
		ns += recs[i].type == PL_SYNC;
		nm += recs[i].type == PL_MARK;
	}
	if (!nw || !ns || nm != ntxn) {
		fprintf(stderr, "powerloss: log has %zu writes, %zu syncs, %zu commits (want %u): "
		    "is the shim intercepting the engine's writes?\n", nw, ns, nm, ntxn);
		return 1;
	}
	rng = seed * 7919 + flags;
	char ipath[600];
	snprintf(ipath, sizeof(ipath), "%s/image.mdb", rdir);
	unsigned bad = 0, torn_total = 0, unreadable_ok = 0;
	for (unsigned n = 0; n < nimages; n++) {
		size_t cut = 1 + rn((unsigned)nrecs);
		unsigned char *img;
		size_t size, fsize;
		uint64_t last_mark;
		unsigned torn;
		build_image(cut, &img, &size, &fsize, &last_mark, &torn);
		torn_total += torn;
		int rc = write_file(ipath, img, size, fsize);
		if (rc)
			fail("write image", rc);
		char why[256] = "";
		if (check_image(ipath, flags, last_mark, &hs, check_cmd, why, sizeof(why))) {
			bad++;
			fprintf(stderr, "powerloss: image %u (cut at record %zu of %zu, last commit %"
			    PRIu64 "): %s\n", n, cut, nrecs, last_mark, why);
			if (keep) {
				char out[700];
				mkdir(keep, 0755);
				snprintf(out, sizeof(out), "%s/powerloss-%s-%" PRIu64 "-%u.mdb", keep,
				    flagname, seed, n);
				write_file(out, img, size, fsize);
			}
		} else if (!last_mark) {
			unreadable_ok++;
		}
		free(img);
	}
	/* The page size of the workload's store: 16 KiB or 32 KiB under
	 * fuzz/pageshim.c. */
	unsigned psize = 0;
	MDB_env *penv;
	MDB_stat pst;
	if (!mdb_env_create(&penv)) {
		if (!mdb_env_open(penv, target, MDB_NOSUBDIR | MDB_RDONLY | MDB_NOLOCK, 0644) &&
		    !mdb_env_stat(penv, &pst))
			psize = pst.ms_psize;
		mdb_env_close(penv);
	}
	printf("powerloss: flags %s, seed %" PRIu64 ": %u txns, page size %u, log %zu writes "
	    "%zu syncs; %u images (%u torn writes, %u cut before the first commit): %u failed\n",
	    flagname, seed, ntxn, psize, nw, ns, nimages, torn_total, unreadable_ok, bad);
	unlink(ipath);
	unlink(target);
	unlink(logp);
	char hp[600], lk[700];
	snprintf(hp, sizeof(hp), "%s/hashes.txt", rdir);
	unlink(hp);
	snprintf(lk, sizeof(lk), "%s-lock", target);
	unlink(lk);
	rmdir(rdir);
	free(rdir);
	return bad ? 1 : 0;
}
