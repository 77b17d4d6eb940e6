/*
 * test_hotpath.c - the engine's fast paths give the same answers as the
 * general ones: the cursor-put "already on the right leaf" shortcut, the
 * in-leaf MDB_NEXT/MDB_PREV step (in-page and overflow values, read and
 * write txns), and overflow pages written without zeroing the whole run
 * first (the slack after the value must still be zero on disk); a damaged
 * overflow run is reported by the fast read paths as by the general ones.
 */
#include "t.h"

#define NK 30000	/* enough 8-byte keys for a 3-level tree */

static void key_of(unsigned i, unsigned char kb[8])
{
	for (int b = 0; b < 8; b++)
		kb[b] = (unsigned char)((uint64_t)i >> (8 * (7 - b)));
}

static size_t vsize_of(unsigned i)
{
	return (i % 97 == 0) ? 5000 + i % 700 : 20 + i % 60;	/* some overflow */
}

static void val_of(unsigned i, unsigned gen, unsigned char *vb, size_t n)
{
	for (size_t j = 0; j < n; j++)
		vb[j] = (unsigned char)(i * 31 + j + gen * 7);
}

/* Walk the whole DB forwards and backwards; compare with have[]/gen[]. */
static void check_all(MDB_env *env, const unsigned char *have, const unsigned *gen, int rdonly)
{
	MDB_txn *txn;
	MDB_cursor *cur;
	MDB_val k, v;
	static unsigned char vb[8192];
	REQUIRE_OK(mdb_txn_begin(env, NULL, rdonly ? MDB_RDONLY : 0, &txn));
	REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
	for (int dir = 0; dir < 2; dir++) {
		int bad = 0, seen = 0, rc;
		int i = dir ? NK - 1 : 0;
		MDB_cursor_op op = dir ? MDB_PREV : MDB_NEXT;
		rc = mdb_cursor_get(cur, &k, &v, dir ? MDB_LAST : MDB_FIRST);
		while (rc == 0) {
			while (i >= 0 && i < NK && !have[i])
				i += dir ? -1 : 1;
			unsigned char kb[8];
			key_of((unsigned)i, kb);
			size_t n = vsize_of((unsigned)i) + (gen[i] & 1) * 3;
			val_of((unsigned)i, gen[i], vb, n);
			if (i < 0 || i >= NK || k.mv_size != 8 || memcmp(k.mv_data, kb, 8) ||
			    v.mv_size != n || memcmp(v.mv_data, vb, n))
				bad++;
			seen++;
			i += dir ? -1 : 1;
			rc = mdb_cursor_get(cur, &k, &v, op);
		}
		CHECK_RC(rc, MDB_NOTFOUND);
		int want = 0;
		for (int j = 0; j < NK; j++)
			want += have[j];
		CHECK_EQ(seen, want);
		CHECK_EQ(bad, 0);
	}
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
}

static int put_one(MDB_cursor *cur, unsigned i, unsigned gen)
{
	static unsigned char vb[8192];
	unsigned char kb[8];
	key_of(i, kb);
	size_t n = vsize_of(i) + (gen & 1) * 3;
	val_of(i, gen, vb, n);
	MDB_val k = { 8, kb }, v = { n, vb };
	int rc = mdb_cursor_put(cur, &k, &v, 0);
	if (rc)
		return rc;
	/* The cursor sits on the item it wrote. */
	if (mdb_cursor_get(cur, &k, &v, MDB_GET_CURRENT) || k.mv_size != 8 ||
	    memcmp(k.mv_data, kb, 8) || v.mv_size != n || memcmp(v.mv_data, vb, n))
		return -1;
	return 0;
}

static void test_cursor_put_orders(void)
{
	MDB_env *env = t_env_open(t_dir, 0, (size_t)256 << 20, 0);
	REQUIRE(env);
	static unsigned char have[NK];
	static unsigned gen[NK];
	MDB_txn *txn;
	MDB_cursor *cur, *other;
	int bad = 0;

	/* Even keys ascending (appends at the right edge). */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
	for (unsigned i = 0; i < NK; i += 2) {
		bad += put_one(cur, i, 0) != 0;
		have[i] = 1;
	}
	OK(mdb_txn_commit(txn));
	CHECK_EQ(bad, 0);
	MDB_stat st;
	OK(mdb_env_stat(env, &st));
	CHECK(st.ms_depth >= 3);
	check_all(env, have, gen, 1);

	/* Odd keys descending (between existing keys, leaf by leaf). */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
	for (int i = NK - 1; i >= 0; i -= 2) {
		int rc = put_one(cur, (unsigned)i, 0);
		if (rc && !bad)
			fprintf(stderr, "first bad put %d -> %d\n", i, rc);
		bad += rc != 0;
		have[i] = 1;
	}
	OK(mdb_txn_commit(txn));
	CHECK_EQ(bad, 0);
	check_all(env, have, gen, 1);

	/* Overwrites (same and other size) in runs, a second cursor writing
	 * elsewhere between them, deletes, and the first/last keys. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
	REQUIRE_OK(mdb_cursor_open(txn, 1, &other));
	uint64_t x = 12345;
	for (int step = 0; step < 20000; step++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		unsigned base = (unsigned)(x >> 33) % NK;
		for (unsigned j = 0; j < 5 && base + j < NK; j++) {
			unsigned i = base + j;
			gen[i] += (x >> 20) & 1 ? 1 : 2;
			bad += put_one(cur, i, gen[i]) != 0;
			have[i] = 1;
		}
		if (step % 7 == 0) {
			unsigned i = (unsigned)(x >> 13) % NK;
			gen[i]++;
			bad += put_one(other, i, gen[i]) != 0;
			have[i] = 1;
		}
		if (step % 11 == 0) {
			unsigned i = (unsigned)(x >> 17) % NK;
			unsigned char kb[8];
			key_of(i, kb);
			MDB_val k = { 8, kb };
			int rc = mdb_del(txn, 1, &k, NULL);
			CHECK(rc == 0 || (rc == MDB_NOTFOUND && !have[i]));
			have[i] = 0;
		}
		if (step % 500 == 0) {
			gen[0]++;
			bad += put_one(cur, 0, gen[0]) != 0;
			have[0] = 1;
			gen[NK - 1]++;
			bad += put_one(cur, NK - 1, gen[NK - 1]) != 0;
			have[NK - 1] = 1;
		}
	}
	CHECK_EQ(bad, 0);
	OK(mdb_txn_commit(txn));
	check_all(env, have, gen, 1);
	check_all(env, have, gen, 0);	/* write txn: the NEXT/PREV step on its pages */
	mdb_env_close(env);
}

/*
 * After a cursor put that splits a leaf, the cursor's whole path is right,
 * not only its item: GET_CURRENT gives the new record and NEXT / PREV its
 * neighbours (which cross to the sibling leaves through the parent).  64-byte
 * keys in a scrambled order split leaves on every side of the new key; the
 * puts run in a few transactions so that some land on copied pages.
 */
#define NS 20000
static void skey_of(unsigned i, unsigned char kb[64])
{
	key_of(i, kb);
	for (int b = 8; b < 64; b++)
		kb[b] = (unsigned char)(i * 7 + b);
}

static void test_cursor_put_split_path(void)
{
	MDB_env *env = t_env_open(t_dir, 0, (size_t)256 << 20, 0);
	REQUIRE(env);
	static unsigned char have[NS];
	unsigned char kb[64], vb[100], nb[64];
	int bad = 0;
	memset(have, 0, sizeof have);
	memset(vb, 'v', sizeof vb);
	for (unsigned t = 0, done = 0; t < 4; t++) {
		MDB_txn *txn;
		MDB_cursor *cur;
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
		for (unsigned n = 0; n < NS / 4; n++, done++) {
			unsigned i = (unsigned)((done * 7919ull) % NS);	/* 7919 is prime */
			skey_of(i, kb);
			vb[0] = (unsigned char)i;
			MDB_val k = { 64, kb }, v = { sizeof vb, vb };
			if (mdb_cursor_put(cur, &k, &v, 0)) {
				bad++;
				continue;
			}
			have[i] = 1;
			int rc = mdb_cursor_get(cur, &k, &v, MDB_GET_CURRENT);
			if (rc || k.mv_size != 64 || memcmp(k.mv_data, kb, 64) ||
			    v.mv_size != sizeof vb || ((unsigned char *)v.mv_data)[0] != (unsigned char)i) {
				bad++;
				continue;
			}
			for (int d = 0; d < 2; d++) {
				int dir = d ^ (int)(i & 1);	/* first move right after the put */
				int j = (int)i + (dir ? -1 : 1);
				while (j >= 0 && j < NS && !have[j])
					j += dir ? -1 : 1;
				rc = mdb_cursor_get(cur, &k, &v, dir ? MDB_PREV : MDB_NEXT);
				if (j < 0 || j >= NS) {
					bad += rc != MDB_NOTFOUND;
				} else {
					skey_of((unsigned)j, nb);
					bad += rc || k.mv_size != 64 || memcmp(k.mv_data, nb, 64);
				}
				/* Back onto the new record for the other direction. */
				k.mv_size = 64;
				k.mv_data = kb;
				bad += mdb_cursor_get(cur, &k, &v, MDB_SET) != 0;
			}
		}
		OK(mdb_txn_commit(txn));
	}
	CHECK_EQ(bad, 0);
	MDB_stat st;
	OK(mdb_env_stat(env, &st));
	CHECK(st.ms_depth >= 3);
	CHECK_EQ(st.ms_entries, (size_t)NS);
	mdb_env_close(env);
}

/* Slack after an overflow value is zero in the file (no MDB_NOMEMINIT). */
static void test_overflow_slack_zeroed(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	MDB_txn *txn;
	static unsigned char vb[9000];
	memset(vb, 0xAB, sizeof vb);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	unsigned char kb[8];
	key_of(1, kb);
	MDB_val k = { 8, kb }, v = { 5000, vb };
	OK(mdb_put(txn, 1, &k, &v, 0));
	key_of(2, kb);
	v.mv_size = 6000;
	OK(mdb_put(txn, 1, &k, &v, MDB_RESERVE));
	memset(v.mv_data, 0xAB, 100);	/* the rest of the reserved area stays unwritten */
	OK(mdb_txn_commit(txn));
	MDB_stat st;
	OK(mdb_env_stat(env, &st));
	unsigned psize = st.ms_psize;
	mdb_env_close(env);

	FILE *f = fopen(t_path("data.mdb"), "rb");
	REQUIRE(f);
	unsigned char *pg = malloc(2 * (size_t)psize);
	REQUIRE(pg);
	int runs = 0, dirty = 0;
	long off = 0;
	for (;;) {
		if (fseek(f, off, SEEK_SET) || fread(pg, 1, psize, f) != psize)
			break;
		uint16_t flags;
		memcpy(&flags, pg + 10, 2);
		if (flags & 0x04) {
			uint32_t np;
			memcpy(&np, pg + 12, 4);
			if (np == 2 && fread(pg + psize, 1, psize, f) == psize) {
				runs++;
				/* value bytes 0xAB first, then zeros to the run's end */
				size_t end = 16;
				while (end < 2 * (size_t)psize && pg[end] == 0xAB)
					end++;
				CHECK(end == 16 + 5000 || end == 16 + 100);
				for (size_t j = end; j < 2 * (size_t)psize; j++)
					dirty += pg[j] != 0;
			}
		}
		off += psize;
	}
	fclose(f);
	free(pg);
	CHECK_EQ(runs, 2);
	CHECK_EQ(dirty, 0);
}

/*
 * The NEXT/PREV step onto overflow values in every kind of txn: a read
 * txn (also reset and renewed on the same snapshot, and on a later one
 * whose new runs lie past the first one's last page), a write txn before
 * and after it has dirty pages (a run rewritten, new runs), and a nested
 * txn with runs of its own and of its parent, on pages freed by earlier
 * txns (so the map holds other bytes there).  Every third key has an
 * overflow value (4,000-13,000 bytes, its size changing with each
 * rewrite); each value is compared byte by byte, and mdb_get agrees.
 */
#define OVN 300

static size_t ov_size(unsigned i, unsigned gen)
{
	return i % 3 ? 40 + i % 50 : 4000 + (i * 37 + gen * 1000) % 9000;
}

static int ov_put(MDB_txn *txn, unsigned i, unsigned gen)
{
	static unsigned char vb[13000];
	unsigned char kb[8];
	key_of(i, kb);
	size_t n = ov_size(i, gen);
	val_of(i, gen, vb, n);
	MDB_val k = { 8, kb }, v = { n, vb };
	return mdb_put(txn, 1, &k, &v, 0);
}

/* Keys 0..n-1, forwards and backwards, and each by mdb_get. */
static void ov_scan_check(MDB_txn *txn, const unsigned *gen, unsigned n)
{
	static unsigned char vb[13000];
	MDB_cursor *cur;
	MDB_val k, v;
	REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
	for (int dir = 0; dir < 2; dir++) {
		unsigned seen = 0, bad = 0;
		int rc = mdb_cursor_get(cur, &k, &v, dir ? MDB_LAST : MDB_FIRST);
		for (; !rc; rc = mdb_cursor_get(cur, &k, &v, dir ? MDB_PREV : MDB_NEXT)) {
			unsigned i = dir ? n - 1 - seen : seen;
			unsigned char kb[8];
			key_of(i, kb);
			size_t want = ov_size(i, gen[i]);
			val_of(i, gen[i], vb, want);
			if (seen >= n || k.mv_size != 8 || memcmp(k.mv_data, kb, 8) ||
			    v.mv_size != want || memcmp(v.mv_data, vb, want))
				bad++;
			seen++;
		}
		CHECK_RC(rc, MDB_NOTFOUND);
		CHECK_EQ(seen, n);
		CHECK_EQ(bad, 0u);
	}
	mdb_cursor_close(cur);
	unsigned bad = 0;
	for (unsigned i = 0; i < n; i++) {
		unsigned char kb[8];
		key_of(i, kb);
		k.mv_size = 8;
		k.mv_data = kb;
		size_t want = ov_size(i, gen[i]);
		val_of(i, gen[i], vb, want);
		if (mdb_get(txn, 1, &k, &v) || v.mv_size != want || memcmp(v.mv_data, vb, want))
			bad++;
	}
	CHECK_EQ(bad, 0u);
}

/* Scan-check txn, rewrite every step-th key from first and add 60 keys
 * after the last, and scan-check it again; returns the failed puts. */
static int ov_rewrite_check(MDB_txn *txn, unsigned *gen, unsigned *n, unsigned first,
	unsigned step)
{
	int bad = 0;
	ov_scan_check(txn, gen, *n);
	for (unsigned i = first; i < *n; i += step)
		bad += ov_put(txn, i, ++gen[i]) != 0;
	for (unsigned i = *n; i < *n + 60; i++)
		bad += ov_put(txn, i, 0) != 0;
	*n += 60;
	ov_scan_check(txn, gen, *n);
	return bad;
}

static void test_overflow_step_txn_kinds(void)
{
	MDB_env *env = t_env_open(t_dir, 0, (size_t)64 << 20, 0);
	REQUIRE(env);
	static unsigned gen[OVN + 200];
	MDB_txn *txn, *rd, *child;
	unsigned n = OVN;
	int bad = 0;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (unsigned i = 0; i < n; i++)
		bad += ov_put(txn, i, 0) != 0;
	OK(mdb_txn_commit(txn));
	/* Every run rewritten twice: the pages of the first ones are free
	 * again, and the write txns below take their new runs from them
	 * (below the snapshot's last page, with other bytes in the map). */
	for (int round = 0; round < 2; round++) {
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		for (unsigned i = 0; i < n; i += 3)
			bad += ov_put(txn, i, ++gen[i]) != 0;
		OK(mdb_txn_commit(txn));
	}
	CHECK_EQ(bad, 0);

	/* A read txn, then the same handle renewed on the same snapshot. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rd));
	ov_scan_check(rd, gen, n);
	mdb_txn_reset(rd);
	REQUIRE_OK(mdb_txn_renew(rd));
	ov_scan_check(rd, gen, n);
	mdb_txn_reset(rd);

	/* A write txn: first on snapshot pages only, then with dirty ones. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	bad += ov_rewrite_check(txn, gen, &n, 0, 6);
	OK(mdb_txn_commit(txn));

	/* A nested txn over a parent with dirty runs of its own. */
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (unsigned i = 3; i < n; i += 12)
		bad += ov_put(txn, i, ++gen[i]) != 0;
	REQUIRE_OK(mdb_txn_begin(env, txn, 0, &child));
	bad += ov_rewrite_check(child, gen, &n, 6, 12);
	OK(mdb_txn_commit(child));
	ov_scan_check(txn, gen, n);
	OK(mdb_txn_commit(txn));
	CHECK_EQ(bad, 0);

	/* The reset read txn renewed on the latest snapshot: its runs past
	 * the first snapshot's pages read like the others; and a new one. */
	REQUIRE_OK(mdb_txn_renew(rd));
	ov_scan_check(rd, gen, n);
	mdb_txn_abort(rd);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rd));
	ov_scan_check(rd, gen, n);
	mdb_txn_abort(rd);
	mdb_env_close(env);
}

#ifndef STOCK_LMDB
/*
 * An overflow run whose header is damaged (not an overflow page, too short
 * for its value, no pages at all, or running past the last page in use;
 * stock LMDB does not read it) is reported by every read that reaches its
 * value (mdb_get, MDB_SET, and the NEXT and PREV steps onto it), while its
 * neighbours still read.  Five keys with 6000-byte values; key i's value is filled with byte
 * 0x10 * (i + 1), which tells which key a run in the file belongs to.
 */
static void overflow_damage_case(int how)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	MDB_txn *txn;
	static unsigned char vb[6000];
	unsigned char kb[8];
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (unsigned i = 0; i < 5; i++) {
		key_of(i, kb);
		memset(vb, 0x10 * (i + 1), sizeof vb);
		MDB_val k = { 8, kb }, v = { sizeof vb, vb };
		OK(mdb_put(txn, 1, &k, &v, 0));
	}
	OK(mdb_txn_commit(txn));
	MDB_stat st;
	OK(mdb_env_stat(env, &st));
	unsigned psize = st.ms_psize;
	mdb_env_close(env);

	/* Find key 2's run and damage its header. */
	FILE *f = fopen(t_path("data.mdb"), "r+b");
	REQUIRE(f);
	unsigned char hdr[17];
	long off = 0, found = -1;
	while (found < 0 && !fseek(f, off, SEEK_SET) && fread(hdr, 1, sizeof hdr, f) == sizeof hdr) {
		uint16_t flags;
		uint32_t np;
		memcpy(&flags, hdr + 10, 2);
		memcpy(&np, hdr + 12, 4);
		if ((flags & 0x04) && hdr[16] == 0x30)
			found = off;
		off += (long)psize * ((flags & 0x04) && np ? np : 1);
	}
	REQUIRE(found >= 0);
	if (how == 0) {
		uint16_t flags = 0x02;	/* a leaf page's flags */
		memcpy(hdr + 10, &flags, 2);
	} else {
		uint32_t np = how == 1 ? 1 : how == 2 ? 1000000 : 0;
		memcpy(hdr + 12, &np, 4);
	}
	REQUIRE(!fseek(f, found, SEEK_SET) && fwrite(hdr, 1, sizeof hdr, f) == sizeof hdr);
	fclose(f);

	env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	MDB_cursor *cur;
	MDB_val k = { 8, kb }, v;
	for (int op = 0; op < 4; op++) {
		REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
		REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
		int rc;
		key_of(2, kb);
		k.mv_size = 8;
		k.mv_data = kb;
		if (op == 0) {
			rc = mdb_get(txn, 1, &k, &v);
		} else if (op == 1) {
			rc = mdb_cursor_get(cur, &k, &v, MDB_SET);
		} else {
			/* From key 1 (key 3) onto key 2: the scan step. */
			key_of(op == 2 ? 1 : 3, kb);
			OK(mdb_cursor_get(cur, &k, &v, MDB_SET_KEY));
			CHECK(v.mv_size == sizeof vb && ((unsigned char *)v.mv_data)[0] ==
			    (op == 2 ? 0x20 : 0x40));
			rc = mdb_cursor_get(cur, &k, &v, op == 2 ? MDB_NEXT : MDB_PREV);
		}
		CHECK_RC(rc, MDB_CORRUPTED);
		mdb_cursor_close(cur);
		mdb_txn_abort(txn);
	}
	mdb_env_close(env);
}

static void test_overflow_damage_not_overflow(void) { overflow_damage_case(0); }
static void test_overflow_damage_run_too_short(void) { overflow_damage_case(1); }
static void test_overflow_damage_run_past_end(void) { overflow_damage_case(2); }
static void test_overflow_damage_run_empty(void) { overflow_damage_case(3); }

/*
 * A value inside its leaf whose size runs past the page's end (damage:
 * the node's data size field) is reported by the NEXT and PREV steps onto
 * it, by MDB_SET and by mdb_get, never returned as bytes beyond the page.
 * The scan step moves the cursor before it bounds the value, so this also
 * checks that the report still comes from that step.
 */
static void test_value_past_leaf_end(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	MDB_txn *txn;
	unsigned char kb[8], vb[100];
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (unsigned i = 0; i < 5; i++) {
		key_of(i, kb);
		memset(vb, 0x10 * (i + 1), sizeof vb);
		MDB_val k = { 8, kb }, v = { sizeof vb, vb };
		OK(mdb_put(txn, 1, &k, &v, 0));
	}
	OK(mdb_txn_commit(txn));
	MDB_stat st;
	OK(mdb_env_stat(env, &st));
	unsigned psize = st.ms_psize;
	mdb_env_close(env);

	/* The one leaf holds the five keys; give key 2's node a data size
	 * of 60000 (bytes 0-1 low half, 2-3 high half of the node). */
	FILE *f = fopen(t_path("data.mdb"), "r+b");
	REQUIRE(f);
	unsigned char *pg = malloc(psize);
	REQUIRE(pg);
	long at = -1;
	for (long off = 2L * psize; at < 0 && !fseek(f, off, SEEK_SET) &&
	     fread(pg, 1, psize, f) == psize; off += psize) {
		uint16_t flags, lower;
		memcpy(&flags, pg + 10, 2);
		memcpy(&lower, pg + 12, 2);
		if (flags == 0x02 && lower == 16 + 2 * 5)
			at = off;
	}
	uint16_t nofs = 0;
	if (at >= 0)
		memcpy(&nofs, pg + 16 + 2 * 2, 2);
	free(pg);
	if (at < 0 || !nofs) {
		fclose(f);
		REQUIRE(at >= 0 && nofs);
	}
	unsigned char dsz[4] = { 0x60, 0xea, 0x00, 0x00 };	/* 60000 */
	REQUIRE(!fseek(f, at + nofs, SEEK_SET) && fwrite(dsz, 1, 4, f) == 4);
	fclose(f);

	env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	MDB_cursor *cur;
	MDB_val k = { 8, kb }, v;
	for (int op = 0; op < 4; op++) {
		REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
		REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
		int rc;
		key_of(2, kb);
		k.mv_size = 8;
		k.mv_data = kb;
		if (op == 0) {
			rc = mdb_get(txn, 1, &k, &v);
		} else if (op == 1) {
			rc = mdb_cursor_get(cur, &k, &v, MDB_SET);
		} else {
			key_of(op == 2 ? 1 : 3, kb);
			OK(mdb_cursor_get(cur, &k, &v, MDB_SET_KEY));
			CHECK(v.mv_size == sizeof vb && ((unsigned char *)v.mv_data)[0] ==
			    (op == 2 ? 0x20 : 0x40));
			rc = mdb_cursor_get(cur, &k, &v, op == 2 ? MDB_NEXT : MDB_PREV);
		}
		CHECK_RC(rc, MDB_CORRUPTED);
		mdb_cursor_close(cur);
		mdb_txn_abort(txn);
	}
	mdb_env_close(env);
}

/*
 * The in-leaf step reads the interrupt flag through the page-size limit
 * it bounds nodes with: raised, the next MDB_NEXT or MDB_PREV inside a
 * leaf fails with EINTR and fails its txn (read and write txns); cleared,
 * steps work again.  A flag raised before the env opens holds too.  A
 * NULL cursor gives EINVAL for both steps.
 */
static void test_step_interrupt(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_cursor *cur;
	unsigned char kb[8], vb[40];
	memset(vb, 'v', sizeof vb);
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	for (unsigned i = 0; i < 2000; i++) {
		key_of(i, kb);
		MDB_val k = { 8, kb }, v = { sizeof vb, vb };
		OK(mdb_put(txn, 1, &k, &v, 0));
	}
	OK(mdb_txn_commit(txn));
	MDB_val k, v;
	CHECK_RC(mdb_cursor_get(NULL, &k, &v, MDB_NEXT), EINVAL);
	CHECK_RC(mdb_cursor_get(NULL, &k, &v, MDB_PREV), EINVAL);
	for (int c = 0; c < 4; c++) {
		int rdonly = c & 1, back = c >> 1;
		REQUIRE_OK(mdb_txn_begin(env, NULL, rdonly ? MDB_RDONLY : 0, &txn));
		REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
		/* Entry 1000 and its neighbours share a leaf or not; either
		 * way the step must see the flag. */
		key_of(1000, kb);
		k.mv_size = 8;
		k.mv_data = kb;
		OK(mdb_cursor_get(cur, &k, &v, MDB_SET_KEY));
		/* Raised and cleared again: the steps run as before. */
		OK(mdb_env_set_interrupt(env, 1));
		OK(mdb_env_set_interrupt(env, 0));
		OK(mdb_cursor_get(cur, &k, &v, back ? MDB_PREV : MDB_NEXT));
		key_of(back ? 999 : 1001, kb);
		CHECK(k.mv_size == 8 && !memcmp(k.mv_data, kb, 8));
		OK(mdb_env_set_interrupt(env, 1));
		CHECK_RC(mdb_cursor_get(cur, &k, &v, back ? MDB_PREV : MDB_NEXT), EINTR);
		OK(mdb_env_set_interrupt(env, 0));
		/* The txn failed with the interrupted step. */
		CHECK(mdb_cursor_get(cur, &k, &v, back ? MDB_PREV : MDB_NEXT) != 0);
		mdb_cursor_close(cur);
		mdb_txn_abort(txn);
	}
	mdb_env_close(env);

	/* Raised before the env opens: the first step of a scan fails. */
	MDB_env *e2;
	REQUIRE_OK(mdb_env_create(&e2));
	OK(mdb_env_set_interrupt(e2, 1));
	REQUIRE_OK(mdb_env_open(e2, t_dir, 0, 0644));
	REQUIRE_OK(mdb_txn_begin(e2, NULL, MDB_RDONLY, &txn));
	REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
	CHECK_RC(mdb_cursor_get(cur, &k, &v, MDB_FIRST), EINTR);
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	OK(mdb_env_set_interrupt(e2, 0));
	REQUIRE_OK(mdb_txn_begin(e2, NULL, MDB_RDONLY, &txn));
	REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
	unsigned n = 0;
	for (int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); !rc;
	     rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))
		n++;
	CHECK_EQ(n, 2000u);
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	mdb_env_close(e2);
}

/* The cursor's item is key k with value v (both one byte). */
static int at_item(MDB_val *k, MDB_val *v, char kc, char vc)
{
	return k->mv_size == 1 && ((char *)k->mv_data)[0] == kc && v->mv_size == 1 &&
	    ((char *)v->mv_data)[0] == vc;
}

/*
 * The main DB made DUPSORT (mdb_dbi_open with no name) in a write txn
 * while a cursor on it stands on an item: its next MDB_NEXT takes the
 * DUPSORT path, the next duplicate of its key, not the plain step's next
 * key.  In the cursor's own txn, and in a nested txn over it (the child
 * committed; aborted: the cursor is back on b and steps plainly again).
 */
static void test_step_dupsort_added(void)
{
	for (int c = 0; c < 3; c++) {
		MDB_env *env = t_env_open(t_dir, 0, 0, 0);
		REQUIRE(env);
		MDB_txn *txn, *child = NULL, *t;
		MDB_cursor *cur;
		MDB_val k, v;
		REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
		for (char i = 'a'; i <= 'e'; i++) {
			MDB_val pk = { 1, &i }, pv = { 1, "5" };
			OK(mdb_put(txn, 1, &pk, &pv, 0));
		}
		REQUIRE_OK(mdb_cursor_open(txn, 1, &cur));
		OK(mdb_cursor_get(cur, &k, &v, MDB_FIRST));
		OK(mdb_cursor_get(cur, &k, &v, MDB_NEXT));
		CHECK(at_item(&k, &v, 'b', '5'));
		t = txn;
		if (c) {
			REQUIRE_OK(mdb_txn_begin(env, txn, 0, &child));
			t = child;
			/* Steps in the child: the cursor is on the plain path. */
			OK(mdb_cursor_get(cur, &k, &v, MDB_NEXT));
			OK(mdb_cursor_get(cur, &k, &v, MDB_PREV));
			CHECK(at_item(&k, &v, 'b', '5'));
		}
		MDB_dbi dbi;
		OK(mdb_dbi_open(t, NULL, MDB_DUPSORT, &dbi));
		CHECK_EQ(dbi, 1u);
		MDB_val pk = { 1, "b" }, pv = { 1, "3" };
		/* The put leaves the cursor on (b, 3); no other op before the
		 * step (any general one would bring the cursor's flags up to
		 * date on its own). */
		OK(mdb_cursor_put(cur, &pk, &pv, 0));
		OK(mdb_cursor_get(cur, &k, &v, MDB_NEXT));
		CHECK(at_item(&k, &v, 'b', '5'));
		OK(mdb_cursor_get(cur, &k, &v, MDB_NEXT));
		CHECK(at_item(&k, &v, 'c', '5'));
		if (c == 1) {
			OK(mdb_txn_commit(child));
			OK(mdb_cursor_get(cur, &k, &v, MDB_PREV));
			CHECK(at_item(&k, &v, 'b', '5'));
			OK(mdb_cursor_get(cur, &k, &v, MDB_PREV));
			CHECK(at_item(&k, &v, 'b', '3'));
		} else if (c == 2) {
			/* Back to before the child: plain, on b. */
			mdb_txn_abort(child);
			OK(mdb_cursor_get(cur, &k, &v, MDB_NEXT));
			CHECK(at_item(&k, &v, 'c', '5'));
			OK(mdb_cursor_get(cur, &k, &v, MDB_PREV));
			CHECK(at_item(&k, &v, 'b', '5'));
			OK(mdb_cursor_get(cur, &k, &v, MDB_PREV));
			CHECK(at_item(&k, &v, 'a', '5'));
		}
		mdb_cursor_close(cur);
		mdb_txn_abort(txn);
		mdb_env_close(env);
	}
}

/*
 * Cursors opened on named DBs before their records are loaded (a fresh
 * read txn) scan them right: a plain one (the scan step takes over once
 * the record is known) and a DUPSORT one (every duplicate, in order),
 * both ways.
 */
static void test_step_named_stale(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 4);
	REQUIRE(env);
	MDB_txn *txn;
	MDB_dbi plain, dups;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	OK(mdb_dbi_open(txn, "plain", MDB_CREATE, &plain));
	OK(mdb_dbi_open(txn, "dups", MDB_CREATE | MDB_DUPSORT, &dups));
	unsigned char kb[8], vb[8];
	for (unsigned i = 0; i < 600; i++) {
		key_of(i, kb);
		MDB_val k = { 8, kb }, v = { 8, vb };
		key_of(i * 7, vb);
		OK(mdb_put(txn, plain, &k, &v, 0));
		for (unsigned d = 0; d < 2; d++) {
			key_of(i * 2 + d, vb);
			OK(mdb_put(txn, dups, &k, &v, 0));
		}
	}
	OK(mdb_txn_commit(txn));
	for (int back = 0; back < 2; back++) {
		REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
		MDB_cursor *cp, *cd;
		REQUIRE_OK(mdb_cursor_open(txn, plain, &cp));
		REQUIRE_OK(mdb_cursor_open(txn, dups, &cd));
		MDB_val k, v;
		unsigned n = 0, bad = 0;
		int rc;
		for (rc = mdb_cursor_get(cp, &k, &v, back ? MDB_LAST : MDB_FIRST); !rc;
		     rc = mdb_cursor_get(cp, &k, &v, back ? MDB_PREV : MDB_NEXT), n++) {
			unsigned i = back ? 599 - n : n;
			key_of(i, kb);
			key_of(i * 7, vb);
			bad += k.mv_size != 8 || memcmp(k.mv_data, kb, 8) || v.mv_size != 8 ||
			    memcmp(v.mv_data, vb, 8);
		}
		CHECK_RC(rc, MDB_NOTFOUND);
		CHECK_EQ(n, 600u);
		n = 0;
		for (rc = mdb_cursor_get(cd, &k, &v, back ? MDB_LAST : MDB_FIRST); !rc;
		     rc = mdb_cursor_get(cd, &k, &v, back ? MDB_PREV : MDB_NEXT), n++) {
			unsigned j = back ? 1199 - n : n;
			key_of(j / 2, kb);
			key_of(j, vb);
			bad += k.mv_size != 8 || memcmp(k.mv_data, kb, 8) || v.mv_size != 8 ||
			    memcmp(v.mv_data, vb, 8);
		}
		CHECK_RC(rc, MDB_NOTFOUND);
		CHECK_EQ(n, 1200u);
		CHECK_EQ(bad, 0u);
		mdb_cursor_close(cp);
		mdb_cursor_close(cd);
		mdb_txn_abort(txn);
	}
	mdb_env_close(env);
}
#endif

int main(void)
{
	RUN(test_cursor_put_orders);
	RUN(test_cursor_put_split_path);
	RUN(test_overflow_slack_zeroed);
	RUN(test_overflow_step_txn_kinds);
#ifndef STOCK_LMDB
	RUN(test_overflow_damage_not_overflow);
	RUN(test_overflow_damage_run_too_short);
	RUN(test_overflow_damage_run_past_end);
	RUN(test_overflow_damage_run_empty);
	RUN(test_value_past_leaf_end);
	RUN(test_step_interrupt);
	RUN(test_step_dupsort_added);
	RUN(test_step_named_stale);
#endif
	T_DONE();
}
