/*
 * libfuzz_store.c - the corrupted-store fuzzer as a libFuzzer target
 * (clang -fsanitize=fuzzer,address,undefined; `make libfuzz`).
 *
 * It shares fuzz_store.c's mutation engine and passes: an input is a whole
 * store image.  The custom mutator damages it where a parser looks (page
 * headers, node headers and pointers, branch children, counted-branch
 * counts, prefix-encoded keys, sub-pages, metas, DB records, truncation,
 * stray bytes); an input that is not a store (the empty input libFuzzer
 * starts from, or one its own cross-over produced) is first replaced by one
 * of the base stores (the fixtures under $DLMDB_FIXTURES and the stores
 * fuzz_store.c generates: counted, prefix, DUPSORT with sub-DBs, DUPFIXED,
 * INTEGERKEY, free-list records, stock format).  Coverage of the engine
 * (built with -fsanitize=fuzzer-no-link) decides which mutants are kept.
 *
 * Each input is written to a file, opened read-only and walked (every DB,
 * every count and rank function, the page walk), then opened read-write,
 * changed and committed, and a committed store is walked again, exactly as
 * in fuzz_store.c.  A sanitizer report or a signal is a crash; a commit
 * that succeeds after the write reported damage aborts (a finding too).
 * Version 1 stores are read with the engine's layout decision (no format
 * flag), as an application that does not name the layout would.
 */
#define FUZZ_STORE_NO_MAIN
#pragma clang diagnostic ignored "-Wunused-function"
#include "fuzz_store.c"

#include <stddef.h>

static char case_path[512];

/* Once per process: the base stores and a work directory. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(workdir, sizeof(workdir), "%s/libfuzz_store.XXXXXX", tmp);
	if (!mkdtemp(workdir))
		die("mkdtemp", errno);
	load_bases();
	if (!nbases)
		die("no base stores", EINVAL);
	snprintf(case_path, sizeof(case_path), "%s/case.mdb", workdir);
	return 0;
}

/* Whether data looks like a store image: page 1 a meta page. */
static int is_store(const uint8_t *data, size_t size)
{
	unsigned ps = image_psize(data, size);
	if (2 * (size_t)ps > size)
		return 0;
	uint32_t magic;
	memcpy(&magic, data + ps + 16, 4);
	return magic == 0xBEEFC0DE;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
	rng_state = (uint64_t)seed * 0x9E3779B97F4A7C15ull ^ size;
	rnd();
	if (!is_store(data, size) || rn(16) == 0) {
		/* Start over from a base store that fits. */
		unsigned first = rn(nbases);
		const base *b = NULL;
		for (unsigned i = 0; i < nbases && !b; i++)
			if (bases[(first + i) % nbases].size <= max_size)
				b = &bases[(first + i) % nbases];
		if (!b)
			return 0;
		memcpy(data, b->img, b->size);
		size = b->size;
	}
	mutant m;
	m.img = data;
	m.size = size;
	m.psize = image_psize(data, size);
	m.envflags = 0;
	m.layout = "auto";
	m.wlen = 0;
	m.what[0] = 0;
	mutate(&m);
	return m.size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1024)
		return 0;
	/* The write pass draws keys and sizes from the generator: derive it
	 * from the input so a crash reproduces from its file alone. */
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < size; i += 61)
		h = (h ^ data[i]) * 0x100000001B3ull;
	rng_state = h ^ size;
	mutant m = { (unsigned char *)data, size, 0, 0, "auto", "", 0 };
	if (write_image(case_path, &m))
		die("write image", errno);
	case_envflags = 0;
	read_pass(case_path);
	int committed, bad;
	write_pass(case_path, &committed, &bad);
	if (bad) {
		fprintf(stderr, "libfuzz_store: a commit succeeded after the write reported damage\n");
		abort();
	}
	if (committed)
		read_pass(case_path);
	return 0;
}
