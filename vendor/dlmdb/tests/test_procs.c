/* Several processes on one environment (lmdb-api.md §3.1-3.3, §8;
 * lmdb-format.md §16): writer exclusion, snapshots kept for readers of other
 * processes, recovery after a killed writer or reader, MDB_MAP_RESIZED.
 * Each child opens its own MDB_env (never one inherited through fork). */
#include "t.h"

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Child-side helpers report failure through the exit status. */
static MDB_env *child_open(size_t mapsize)
{
	MDB_env *env;
	if (mdb_env_create(&env))
		_exit(10);
	if (mapsize && mdb_env_set_mapsize(env, mapsize))
		_exit(11);
	if (mdb_env_open(env, t_dir, 0, 0644))
		_exit(12);
	return env;
}

/*
 * Fork a writer: the child opens the store with a map of `mapsize` and
 * commits `commits` transactions (0: until it is killed), each putting a
 * `vsize`-byte value under "<prefix><n, 8 digits>", n counting modulo
 * `keys`.  It exits 0 when done, 20 on an error.
 */
static pid_t fork_writer(size_t mapsize, const char *prefix, unsigned keys, unsigned commits,
    size_t vsize, unsigned txnflags)
{
	static char val[100000];
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	alarm(60);
	MDB_env *e = child_open(mapsize);
	memset(val, 'v', vsize);
	for (unsigned i = 0; !commits || i < commits; i++) {
		MDB_txn *t;
		MDB_dbi dbi;
		char kb[32];
		snprintf(kb, sizeof kb, "%s%08u", prefix, i % keys);
		MDB_val k = t_val(kb), v = t_mem(val, vsize);
		if (mdb_txn_begin(e, NULL, txnflags, &t) || mdb_dbi_open(t, NULL, 0, &dbi) ||
		    mdb_put(t, dbi, &k, &v, 0) || mdb_txn_commit(t))
			_exit(20);
	}
	mdb_env_close(e);
	_exit(0);
}

static void say(int fd, char c)
{
	if (write(fd, &c, 1) != 1)
		_exit(13);
}

static int hear(int fd)
{
	char c;
	return read(fd, &c, 1) == 1 ? c : -1;
}

static int child_status(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

static void test_writer_exclusion(void)
{
	int p[2];
	REQUIRE(pipe(p) == 0);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		alarm(20);
		close(p[0]);
		MDB_env *env = child_open(0);
		MDB_txn *txn;
		MDB_dbi dbi;
		if (mdb_txn_begin(env, NULL, 0, &txn) || mdb_dbi_open(txn, NULL, 0, &dbi))
			_exit(20);
		say(p[1], 'w'); /* holding the writer lock now */
		sleep_ms(400);
		MDB_val k = t_val("from-child"), v = t_val("1");
		if (mdb_put(txn, dbi, &k, &v, 0) || mdb_txn_commit(txn))
			_exit(21);
		mdb_env_close(env);
		_exit(0);
	}
	close(p[1]);
	CHECK_EQ(hear(p[0]), 'w');
	/* (t_env_open itself runs an empty write txn, so it may be what waits) */
	double t0 = now();
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	MDB_txn *txn;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn)); /* must wait for the child */
	double waited = now() - t0;
	if (waited < 0.2)
		T_FAIL("second writer did not wait (%.3fs)", waited);
	MDB_val k = t_val("from-child"), v;
	OK(mdb_get(txn, 1, &k, &v));
	mdb_txn_abort(txn);
	CHECK_EQ(child_status(pid), 0);
	close(p[0]);
	mdb_env_close(env);
}

static void test_reader_snapshot_across_processes(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 32u << 20, 0);
	REQUIRE(env);
	MDB_txn *txn;
	REQUIRE_OK(mdb_txn_begin(env, NULL, 0, &txn));
	static char val[300];
	memset(val, 'o', sizeof val);
	for (int i = 0; i < 2000; i++) {
		char kb[16];
		snprintf(kb, sizeof kb, "%05d", i);
		MDB_val k = t_val(kb), v = t_mem(val, sizeof val);
		OK(mdb_put(txn, 1, &k, &v, 0));
	}
	REQUIRE_OK(mdb_txn_commit(txn));
	MDB_txn *rd;
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &rd));

	/* Another process rewrites everything many times; it must not reuse
	 * the pages of our snapshot. */
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		alarm(30);
		MDB_env *e = child_open(0);
		static char nv[300];
		for (int round = 0; round < 30; round++) {
			MDB_txn *t;
			MDB_dbi dbi;
			if (mdb_txn_begin(e, NULL, 0, &t) || mdb_dbi_open(t, NULL, 0, &dbi))
				_exit(20);
			memset(nv, 'a' + round % 26, sizeof nv);
			for (int i = 0; i < 2000; i++) {
				char kb[16];
				snprintf(kb, sizeof kb, "%05d", i);
				MDB_val k = t_val(kb), v = t_mem(nv, sizeof nv);
				if (round % 7 == 6 && i % 2 == 0) {
					if (mdb_del(t, dbi, &k, NULL))
						_exit(21);
				} else if (mdb_put(t, dbi, &k, &v, 0)) {
					_exit(22);
				}
			}
			if (mdb_txn_commit(t))
				_exit(23);
		}
		mdb_env_close(e);
		_exit(0);
	}
	CHECK_EQ(child_status(pid), 0);
	MDB_cursor *cur;
	REQUIRE_OK(mdb_cursor_open(rd, 1, &cur));
	MDB_val k, v;
	int n = 0, bad = 0, rc;
	while ((rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) == 0) {
		if (v.mv_size != sizeof val || memcmp(v.mv_data, val, sizeof val))
			bad++;
		n++;
	}
	CHECK_RC(rc, MDB_NOTFOUND);
	CHECK_EQ(n, 2000);
	CHECK_EQ(bad, 0);
	mdb_cursor_close(cur);
	CHECK_EQ(mdb_txn_id(rd), 1);
	mdb_txn_reset(rd);
	OK(mdb_txn_renew(rd));
	CHECK_EQ(mdb_txn_id(rd), 31);
	k = t_val("00001");
	OK(mdb_get(rd, 1, &k, &v));
	CHECK(v.mv_size == 300 && ((char *)v.mv_data)[0] == 'a' + 29 % 26);
	mdb_txn_abort(rd);
	mdb_env_close(env);
}

static void test_killed_writer(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	OK(t_put1(env, 1, "before", "1"));
	int p[2];
	REQUIRE(pipe(p) == 0);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		alarm(20);
		close(p[0]);
		MDB_env *e = child_open(0);
		MDB_txn *t;
		MDB_dbi dbi;
		if (mdb_txn_begin(e, NULL, 0, &t) || mdb_dbi_open(t, NULL, 0, &dbi))
			_exit(20);
		MDB_val k = t_val("never"), v = t_val("committed");
		if (mdb_put(t, dbi, &k, &v, 0))
			_exit(21);
		say(p[1], 'w');
		pause(); /* killed here, holding the writer lock */
		_exit(22);
	}
	close(p[1]);
	CHECK_EQ(hear(p[0]), 'w');
	kill(pid, SIGKILL);
	CHECK_EQ(child_status(pid), 128 + SIGKILL);
	close(p[0]);
	/* The writer lock must be recovered, not deadlock (alarm catches that). */
	MDB_txn *txn;
	int rc = mdb_txn_begin(env, NULL, 0, &txn);
	CHECK_RC(rc, 0);
	if (rc == 0) {
		MDB_val k = t_val("after"), v = t_val("2");
		OK(mdb_put(txn, 1, &k, &v, 0));
		OK(mdb_txn_commit(txn));
	}
	CHECK(t_get_is(env, 1, "before", "1"));
	CHECK(t_get_is(env, 1, "never", NULL));
	CHECK(t_get_is(env, 1, "after", "2"));
	mdb_env_close(env);
}

static void test_killed_reader(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 0, 0);
	REQUIRE(env);
	OK(t_put1(env, 1, "k", "v"));
	int p[2];
	REQUIRE(pipe(p) == 0);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		alarm(20);
		close(p[0]);
		MDB_env *e = child_open(0);
		MDB_txn *t;
		if (mdb_txn_begin(e, NULL, MDB_RDONLY, &t))
			_exit(20);
		say(p[1], 'r');
		pause();
		_exit(22);
	}
	close(p[1]);
	CHECK_EQ(hear(p[0]), 'r');
	kill(pid, SIGKILL);
	CHECK_EQ(child_status(pid), 128 + SIGKILL);
	close(p[0]);
	int dead = -1;
	OK(mdb_reader_check(env, &dead));
	CHECK_EQ(dead, 1);
	OK(mdb_reader_check(env, &dead));
	CHECK_EQ(dead, 0);
	mdb_env_close(env);
}

static void test_map_resized_by_other_process(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 1u << 20, 0);
	REQUIRE(env);
	OK(t_put1(env, 1, "small", "1"));
	pid_t pid = fork_writer(16u << 20, "big", 30, 30, 100000, 0);
	REQUIRE(pid >= 0);
	CHECK_EQ(child_status(pid), 0);
	MDB_txn *txn;
	CHECK_RC(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), MDB_MAP_RESIZED);
	OK(mdb_env_set_mapsize(env, 0));
	MDB_envinfo info;
	OK(mdb_env_info(env, &info));
	CHECK_EQ(info.me_mapsize, 16u << 20);
	REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
	MDB_val k = t_val("big00000029"), v;
	OK(mdb_get(txn, 1, &k, &v));
	CHECK_EQ(v.mv_size, 100000);
	mdb_txn_abort(txn);
	mdb_env_close(env);
}

/* Opening a store while another process commits into it: each commit
 * grows the file and then writes its meta, so an open that sized the file
 * before reading the metas, or read a meta half written, saw a newest meta
 * pointing past the end and refused the store as MDB_INVALID. */
static void test_open_while_another_process_commits(void)
{
	/* 20,000 keys of one overflow page each: room for all of them. */
	const size_t mapsize = 256u << 20;
	MDB_env *env = t_env_open(t_dir, 0, mapsize, 0);
	REQUIRE(env);
	OK(t_put1(env, 1, "first", "1"));
	mdb_env_close(env);
	pid_t pid = fork_writer(mapsize, "k", 20000, 0, 3000, MDB_NOSYNC);
	REQUIRE(pid >= 0);
	int refused = 0, first_rc = 0;
	for (int i = 0; i < 400; i++) {
		int rc;
		MDB_env *e = t_env_open_rc(t_dir, MDB_RDONLY, mapsize, 0, &rc);
		if (e)
			mdb_env_close(e);
		else if (!refused++)
			first_rc = rc;
	}
	/* The writer must still be committing, or the opens raced nothing. */
	CHECK_EQ(waitpid(pid, NULL, WNOHANG), 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (refused)
		fprintf(stderr, "  %d of 400 opens refused, the first with %s\n", refused,
		    mdb_strerror(first_rc));
	CHECK_EQ(refused, 0);
}

/* A writer process is SIGKILLed at random moments while committing; after
 * each kill the environment must open and hold exactly the state of one
 * committed transaction (the last acknowledged one or the one after it). */
#define KK 200
static void kill_writer_state(int c, int *want)
{
	for (int j = 0; j < KK; j++)
		want[j] = 0;
	for (int i = 1; i <= c; i++)
		for (int m = 0; m < 50; m++)
			want[(i * 7 + m * 3) % KK] = i;
}

static void test_kill_during_commits(void)
{
	MDB_env *env = t_env_open(t_dir, 0, 64u << 20, 0);
	REQUIRE(env);
	mdb_env_close(env);
	int base = 0;
	for (int round = 0; round < 6 && t_failures == 0; round++) {
		int p[2];
		REQUIRE(pipe(p) == 0);
		pid_t pid = fork();
		REQUIRE(pid >= 0);
		if (pid == 0) {
			alarm(20);
			close(p[0]);
			MDB_env *e = child_open(0);
			char vb[600];
			for (int i = base + 1;; i++) {
				MDB_txn *t;
				MDB_dbi dbi;
				if (mdb_txn_begin(e, NULL, 0, &t) || mdb_dbi_open(t, NULL, 0, &dbi))
					_exit(20);
				for (int m = 0; m < 50; m++) {
					char kb[16];
					int j = (i * 7 + m * 3) % KK;
					snprintf(kb, sizeof kb, "k%03d", j);
					int len = snprintf(vb, sizeof vb, "%d", i);
					memset(vb + len, '.', (size_t)((i + j) % 500));
					MDB_val k = t_val(kb), v = t_mem(vb, (size_t)len + (size_t)((i + j) % 500));
					if (mdb_put(t, dbi, &k, &v, 0))
						_exit(21);
				}
				MDB_val k = t_val("counter"), v = t_mem(&i, sizeof i);
				if (mdb_put(t, dbi, &k, &v, 0) || mdb_txn_commit(t))
					_exit(22);
				if (write(p[1], &i, sizeof i) != sizeof i)
					_exit(23);
			}
		}
		close(p[1]);
		int last = base, x;
		/* let it run a little, then kill it mid-flight */
		sleep_ms(20 + round * 15);
		kill(pid, SIGKILL);
		while (read(p[0], &x, sizeof x) == sizeof x)
			last = x;
		close(p[0]);
		CHECK_EQ(child_status(pid), 128 + SIGKILL);

		env = t_env_open(t_dir, 0, 0, 0);
		REQUIRE(env);
		MDB_txn *txn;
		REQUIRE_OK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
		MDB_val k = t_val("counter"), v;
		int c = base;
		if (mdb_get(txn, 1, &k, &v) == 0 && v.mv_size == sizeof c)
			memcpy(&c, v.mv_data, sizeof c);
		if (c != last && c != last + 1)
			T_FAIL("round %d: counter %d, last acknowledged commit %d", round, c, last);
		int want[KK], bad = 0;
		kill_writer_state(c, want);
		for (int j = 0; j < KK; j++) {
			char kb[16];
			snprintf(kb, sizeof kb, "k%03d", j);
			k = t_val(kb);
			int rc = mdb_get(txn, 1, &k, &v);
			int got = 0;
			if (rc == 0) { /* values are not NUL-terminated */
				char num[16];
				size_t n = v.mv_size < 15 ? v.mv_size : 15;
				memcpy(num, v.mv_data, n);
				num[n] = 0;
				got = atoi(num);
			}
			size_t wl = want[j] ? (size_t)snprintf(NULL, 0, "%d", want[j]) +
						  (size_t)((want[j] + j) % 500) : 0;
			if (want[j] ? (rc != 0 || got != want[j] || v.mv_size != wl)
				    : rc != MDB_NOTFOUND)
				bad++;
		}
		if (bad)
			T_FAIL("round %d: %d keys differ from the state of commit %d", round, bad, c);
		mdb_txn_abort(txn);
		mdb_env_close(env);
		base = c;
	}
	fprintf(stderr, "  %d commits survived the kills\n", base);
}

int main(void)
{
	RUN(test_writer_exclusion);
	RUN(test_reader_snapshot_across_processes);
	RUN(test_killed_writer);
	RUN(test_killed_reader);
	RUN(test_map_resized_by_other_process);
	RUN(test_open_while_another_process_commits);
	RUN(test_kill_during_commits);
	T_DONE();
}
