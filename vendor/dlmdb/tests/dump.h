/* dump.h - compare an environment with mdb_dump output (shared by tests). */
#ifndef DLMDB_TEST_DUMP_H
#define DLMDB_TEST_DUMP_H
#include <ctype.h>

#include "t.h"

static T_UNUSED int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Decode one record line (without the leading space and newline) in place.
 * Returns the decoded length or -1. */
static T_UNUSED long decode_line(char *s, size_t n, int printable)
{
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		if (!printable) {
			if (i + 1 >= n)
				return -1;
			int a = hexval(s[i]), b = hexval(s[i + 1]);
			if (a < 0 || b < 0)
				return -1;
			s[o++] = (char)(a * 16 + b);
			i += 2;
		} else if (s[i] == '\\') {
			if (i + 1 < n && s[i + 1] == '\\') {
				s[o++] = '\\';
				i += 2;
			} else {
				if (i + 2 >= n)
					return -1;
				int a = hexval(s[i + 1]), b = hexval(s[i + 2]);
				if (a < 0 || b < 0)
					return -1;
				s[o++] = (char)(a * 16 + b);
				i += 3;
			}
		} else {
			s[o++] = s[i++];
		}
	}
	return (long)o;
}

/* Lenient mode ("no misread" checks): a database the engine refuses with an
 * error (at open or while reading) is counted in dump_refused instead of
 * failing; but any data it does return must be exactly the dump's. */
static int dump_lenient, dump_refused;

/* An error code that means "refused", not "wrong data". */
static T_UNUSED int dump_is_refusal(int rc)
{
	return dump_lenient && rc != 0 && rc != MDB_NOTFOUND;
}

/* Compare every database in an mdb_dump output file (bytevalue or print
 * format, one or several databases) with the environment, item by item in
 * cursor order.  `only` (if non-NULL) restricts the check to that database
 * name; `skip` skips one.  Returns the number of databases compared. */
static T_UNUSED int compare_dump_path(MDB_env *env, const char *dump, const char *only,
				      const char *skip)
{
	const char *dump_name = strrchr(dump, '/') ? strrchr(dump, '/') + 1 : dump;
	FILE *f = fopen(dump, "r");
	if (!f) {
		T_FAIL("open %s", dump);
		return 0;
	}
	char *line = NULL, *key = NULL;
	size_t cap = 0;
	ssize_t len;
	long keylen = 0;
	char dbname[512] = "";
	int printable = 0, in_data = 0, have_key = 0, compared = 0, active = 0, bad = 0;
	size_t items = 0;
	MDB_txn *txn = NULL;
	MDB_cursor *cur = NULL;
	while ((len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = 0;
		if (!in_data) {
			if (strncmp(line, "VERSION=", 8) == 0) {
				dbname[0] = 0;
				printable = 0;
			} else if (strncmp(line, "format=print", 12) == 0) {
				printable = 1;
			} else if (strncmp(line, "database=", 9) == 0) {
				snprintf(dbname, sizeof dbname, "%s", line + 9);
			} else if (strcmp(line, "HEADER=END") == 0) {
				in_data = 1;
				have_key = 0;
				items = 0;
				bad = 0;
				active = (!only || strcmp(only, dbname) == 0) &&
					 (!skip || strcmp(skip, dbname) != 0);
				if (!active)
					continue;
				MDB_dbi dbi;
				int rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn);
				if (rc == 0)
					rc = mdb_dbi_open(txn, dbname[0] ? dbname : NULL, 0, &dbi);
				if (rc == 0)
					rc = mdb_cursor_open(txn, dbi, &cur);
				if (rc == 0)
					rc = mdb_cursor_get(cur, NULL, NULL, MDB_FIRST);
				if (rc != 0 && rc != MDB_NOTFOUND) {
					if (dump_is_refusal(rc)) {
						dump_refused++;
						fprintf(stderr, "  note: %s db '%s' refused: %s\n",
							dump_name, dbname, mdb_strerror(rc));
					} else
						T_FAIL("%s: open db '%s': %d (%s)", dump_name, dbname,
						       rc, mdb_strerror(rc));
					active = 0;
					mdb_cursor_close(cur);
					cur = NULL;
					mdb_txn_abort(txn);
					txn = NULL;
				}
			}
			continue;
		}
		if (strcmp(line, "DATA=END") == 0) {
			in_data = 0;
			if (!active)
				continue;
			/* the database must have nothing more */
			if (!bad && items > 0) {
				MDB_val k, v;
				int rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
				if (dump_is_refusal(rc))
					dump_refused++;
				else if (rc != MDB_NOTFOUND)
					T_FAIL("%s db '%s': extra items after %zu (rc %d)", dump_name,
					       dbname, items, rc);
			}
			if (!bad && items == 0) {
				MDB_val k, v;
				int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST);
				if (dump_is_refusal(rc))
					dump_refused++;
				else if (rc != MDB_NOTFOUND)
					T_FAIL("%s db '%s': should be empty (rc %d)", dump_name, dbname, rc);
			}
			mdb_cursor_close(cur);
			cur = NULL;
			mdb_txn_abort(txn);
			txn = NULL;
			compared++;
			continue;
		}
		if (!active || bad || line[0] != ' ')
			continue;
		long n = decode_line(line + 1, (size_t)len - 1, printable);
		if (n < 0) {
			T_FAIL("%s: bad record line", dump_name);
			bad = 1;
			continue;
		}
		if (!have_key) {
			free(key);
			key = malloc((size_t)n + 1);
			memcpy(key, line + 1, (size_t)n);
			keylen = n;
			have_key = 1;
			continue;
		}
		have_key = 0;
		MDB_val k, v;
		int rc = mdb_cursor_get(cur, &k, &v, items == 0 ? MDB_FIRST : MDB_NEXT);
		if (dump_is_refusal(rc)) {
			dump_refused++;
			fprintf(stderr, "  note: %s db '%s' refused at item %zu: %s\n", dump_name,
				dbname, items, mdb_strerror(rc));
			bad = 1;
		} else if (rc != 0) {
			T_FAIL("%s db '%s': item %zu: cursor says %d (%s)", dump_name, dbname, items,
			       rc, mdb_strerror(rc));
			bad = 1;
		} else if (k.mv_size != (size_t)keylen || memcmp(k.mv_data, key, (size_t)keylen)) {
			T_FAIL("%s db '%s': item %zu: key differs (got %zu bytes, want %ld)",
			       dump_name, dbname, items, k.mv_size, keylen);
			bad = 1;
		} else if (v.mv_size != (size_t)n || (n && memcmp(v.mv_data, line + 1, (size_t)n))) {
			T_FAIL("%s db '%s': item %zu (key %.*s): value differs (got %zu bytes, want %ld)",
			       dump_name, dbname, items, (int)(keylen > 30 ? 30 : keylen), key,
			       v.mv_size, n);
			bad = 1;
		}
		items++;
	}
	if (cur)
		mdb_cursor_close(cur);
	if (txn)
		mdb_txn_abort(txn);
	free(line);
	free(key);
	fclose(f);
	return compared;
}

#endif
