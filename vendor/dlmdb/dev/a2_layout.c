/* A2: misread guard - open each version-1 fixture in both layouts; a file
 * must open only in its own layout (or in both when they read alike). */
#include "../lmdb.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int try_open(const char *src, unsigned flags)
{
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf /tmp/a2/lay && mkdir -p /tmp/a2/lay && cp %s /tmp/a2/lay/d.mdb", src);
	if (system(cmd))
		return -1;
	MDB_env *env;
	mdb_env_create(&env);
	mdb_env_set_maxdbs(env, 64);
	int rc = mdb_env_open(env, "/tmp/a2/lay/d.mdb", flags | MDB_NOSUBDIR | MDB_RDONLY, 0644);
	mdb_env_close(env);
	return rc;
}
int main(int argc, char **argv)
{
	int fails = 0;
	for (int i = 1; i + 1 < argc; i += 2) {
		const char *f = argv[i], *want = argv[i + 1];	/* want: stock|padded|both */
		int s = try_open(f, 0), p = try_open(f, MDB_FORMAT_DLMDB_V1);
		int ok = !strcmp(want, "stock") ? (s == 0 && p == MDB_INCOMPATIBLE) :
			 !strcmp(want, "padded") ? (p == 0 && s == MDB_INCOMPATIBLE) : (s == 0 && p == 0);
		printf("%-6s %-50s stock-open %d padded-open %d (want %s)\n", ok ? "ok" : "FAIL", f, s, p, want);
		fails += !ok;
	}
	return fails != 0;
}
