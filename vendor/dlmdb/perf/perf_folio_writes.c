/*
 * perf_folio_writes - what a 4 KiB page write costs on a filesystem whose
 * page cache keeps files in large folios, by the size of the writes that
 * first filled the cache.  No engine: it times the kernel under a commit.
 *
 * A 256 MiB file is written in calls of CHUNK_KIB each (the size of a
 * commit's pwritev decides the folio size of pages cached by it), then
 * 100,000 single 4 KiB pwrites land on random pages of it, with an
 * fdatasync after every 2,000 when SYNC is 1.  Printed: ns per page
 * write, the final fdatasync, and the part of a shared map of the file
 * that the kernel maps with 2 MiB entries after one touch of every page
 * (smaps FilePmdMapped: whole 2 MiB folios).
 *
 *   build/perf/perf_folio_writes DIR CHUNK_KIB [SYNC]
 *
 * On ext4 with large folios (Linux 6.18 here), a page write into a 2 MiB
 * folio cost five to eight times one into a 4 KiB folio (BENCHMARKS.md).
 */
#include "perf.h"

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>

#define FILE_BYTES	((size_t)256 << 20)
#define PAGE		4096
#define WRITES		100000

/* FilePmdMapped of the mapping holding `inside`, in KiB; -1 if unknown. */
static long pmd_mapped_kb(const void *inside)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	long kb = -1;
	int here = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		char *dash = strchr(line, '-'), *space = strchr(line, ' ');
		if (dash && space && dash < space && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			here = (uintptr_t)inside >= lo && (uintptr_t)inside < hi;
		else if (here && sscanf(line, "FilePmdMapped: %ld", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s DIR CHUNK_KIB [SYNC]\n", argv[0]);
		return 2;
	}
	size_t chunk = (size_t)atol(argv[2]) << 10;
	int sync = argc > 3 && atoi(argv[3]);
	if (chunk < PAGE || chunk > FILE_BYTES || chunk % PAGE) {
		fprintf(stderr, "CHUNK_KIB: a multiple of 4 up to %zu\n", FILE_BYTES >> 10);
		return 2;
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/folio-writes.tmp", argv[1]);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	char *buf = malloc(chunk);
	if (fd < 0 || !buf) {
		perror(path);
		return 1;
	}
	memset(buf, 1, chunk);
	for (size_t off = 0; off < FILE_BYTES; off += chunk)
		if (pwrite(fd, buf, chunk, (off_t)off) != (ssize_t)chunk) {
			perror("pwrite");
			return 1;
		}
	fdatasync(fd);

	char *map = mmap(NULL, FILE_BYTES, PROT_READ, MAP_SHARED, fd, 0);
	long pmd_kb = -1;
	if (map != MAP_FAILED) {
		volatile char sum = 0;
		for (size_t off = 0; off < FILE_BYTES; off += PAGE)
			sum += map[off];
		pmd_kb = pmd_mapped_kb(map);
		munmap(map, FILE_BYTES);
	}

	char page[PAGE];
	memset(page, 2, sizeof page);
	uint64_t x = 0x9E3779B97F4A7C15ull;
	double t0 = perf_now_ns();
	for (int i = 0; i < WRITES; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		off_t at = (off_t)(x % (FILE_BYTES / PAGE)) * PAGE;
		if (pwrite(fd, page, PAGE, at) != PAGE) {
			perror("pwrite");
			return 1;
		}
		if (sync && i % 2000 == 1999)
			fdatasync(fd);
	}
	double t1 = perf_now_ns();
	fdatasync(fd);
	double t2 = perf_now_ns();
	printf("first written in %zu KiB calls: %.0f ns a 4 KiB write, final fdatasync %.1f ms, "
	    "%ld KiB mapped in 2 MiB entries\n", chunk >> 10, (t1 - t0) / WRITES,
	    (t2 - t1) / 1e6, pmd_kb);
	close(fd);
	unlink(path);
	free(buf);
	return 0;
}
