/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_driver.c - run a libFuzzer-style target without libFuzzer
 *
 * Usage: fuzz_<target> [-n ITERATIONS] [-s SEED] [DIR|FILE ...]
 * Replays every seed file (default: the target's corpus directories, files
 * ending in .xml), then ITERATIONS inputs made from the seeds by a fixed
 * series of mutations (bit flips, byte insertion/deletion, truncation,
 * splicing, XML tokens), so that `make check` runs the target reproducibly
 * under whatever sanitizers the build has.  Exit 0 when nothing crashed.
 */
#include "config.h"

#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_str.h"
#include "gb_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_INPUT (256u << 10)

struct seed {
	char *data;
	size_t len;
};

static struct seed *seeds;
static size_t n_seeds, cap_seeds;

static int add_seed(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	size_t len = strlen(path);
	char *data = NULL;
	size_t dlen = 0;

	(void)st;
	(void)ftw;
	if (type != FTW_F || len < 4 || strcmp(path + len - 4, ".xml") != 0)
		return 0;
	if (gb_file_read(path, MAX_INPUT, &data, &dlen, NULL) != GB_E_OK)
		return 0;
	if (n_seeds == cap_seeds) {
		size_t ncap = cap_seeds ? cap_seeds * 2 : 64;
		struct seed *nv = realloc(seeds, ncap * sizeof(*nv));

		if (!nv) {
			free(data);
			return 1;
		}
		seeds = nv;
		cap_seeds = ncap;
	}
	seeds[n_seeds].data = data;
	seeds[n_seeds].len = dlen;
	n_seeds++;
	return 0;
}

/* xorshift64*: reproducible, seedable, good enough to pick mutations. */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64_C(2685821657736338717);
}

static size_t below(size_t n)
{
	return n ? (size_t)(rnd() % n) : 0;
}

static void mutate(struct gb_buf *b)
{
	static const char *const tokens[] = {
		"<", ">", "</", "/>", "<item>", "</item>", "<instancesSet>",
		"<instanceId>i-1</instanceId>", "<nextToken>x</nextToken>",
		"&amp;", "&#0;", "&#x10FFFF;", "&undefined;", "<![CDATA[", "]]>",
		"<!DOCTYPE r [<!ENTITY a \"b\">]>", "<?xml version=\"1.0\"?>",
		"xmlns=\"urn:x\"", "xmlns:e=\"urn:e\"", "e:", "<Code>", "</Code>",
		"<Errors><Error>", "\xff\xfe", "\xc3", "\0",
	};
	size_t pos = below(b->len + 1);

	switch (below(6)) {
	case 0:	/* flip a bit */
		if (b->len)
			b->data[below(b->len)] ^= (char)(1u << below(8));
		break;
	case 1: {	/* insert a token */
		const char *t = tokens[below(GB_ARRAY_LEN(tokens))];
		size_t tl = strlen(t) ? strlen(t) : 1;
		struct gb_buf nb = GB_BUF_INIT;

		gb_buf_append(&nb, b->data, pos);
		gb_buf_append(&nb, t, tl);
		gb_buf_append(&nb, b->data + pos, b->len - pos);
		gb_buf_free(b);
		*b = nb;
		break;
	}
	case 2:	/* delete a run */
		if (b->len) {
			size_t n = below(b->len - pos + 1);

			if (n > 64)
				n = 64;
			memmove(b->data + pos, b->data + pos + n, b->len - pos - n);
			b->len -= n;
			b->data[b->len] = '\0';
		}
		break;
	case 3:	/* truncate */
		b->len = pos;
		if (b->data)
			b->data[b->len] = '\0';
		break;
	case 4: {	/* splice in a piece of another seed */
		const struct seed *s = &seeds[below(n_seeds)];
		size_t from = below(s->len + 1);
		size_t n = below(s->len - from + 1);
		struct gb_buf nb = GB_BUF_INIT;

		gb_buf_append(&nb, b->data, pos);
		gb_buf_append(&nb, s->data + from, n);
		gb_buf_append(&nb, b->data + pos, b->len - pos);
		gb_buf_free(b);
		*b = nb;
		break;
	}
	default:	/* duplicate a run (nesting, repeated items) */
		if (b->len && b->len < MAX_INPUT / 2) {
			size_t n = below(b->len - pos + 1);
			struct gb_buf nb = GB_BUF_INIT;

			gb_buf_append(&nb, b->data, pos + n);
			gb_buf_append(&nb, b->data + pos, n);
			gb_buf_append(&nb, b->data + pos + n, b->len - pos - n);
			gb_buf_free(b);
			*b = nb;
		}
		break;
	}
}

int main(int argc, char **argv)
{
	long iterations = 3000, seed = 20260214;
	size_t n_dirs = 0;
	const char *dirs[16];
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			if (gb_parse_long(argv[++i], 0, 100000000, &iterations))
				return 2;
		} else if (!strcmp(argv[i], "-s") && i + 1 < argc) {
			if (gb_parse_long(argv[++i], 1, INT64_MAX, &seed))
				return 2;
		} else if (n_dirs < GB_ARRAY_LEN(dirs)) {
			dirs[n_dirs++] = argv[i];
		}
	}
	if (n_dirs == 0) {
		dirs[n_dirs++] = GB_TOP_SRCDIR "/tests/data/ec2";
		dirs[n_dirs++] = GB_TOP_SRCDIR "/tests/fuzz/corpus/ec2_xml";
	}
	for (size_t d = 0; d < n_dirs; d++)
		nftw(dirs[d], add_seed, 16, FTW_PHYS);
	if (n_seeds == 0) {
		fprintf(stderr, "fuzz driver: no seed files (*.xml) found\n");
		return 1;
	}
	LLVMFuzzerInitialize(&argc, &argv);
	for (size_t s = 0; s < n_seeds; s++)
		LLVMFuzzerTestOneInput((const uint8_t *)seeds[s].data, seeds[s].len);
	rng_state = (uint64_t)seed;
	for (long it = 0; it < iterations; it++) {
		const struct seed *s = &seeds[below(n_seeds)];
		struct gb_buf b = GB_BUF_INIT;
		size_t rounds = 1 + below(4);

		gb_buf_append(&b, s->data, s->len);
		for (size_t r = 0; r < rounds; r++)
			mutate(&b);
		if (gb_buf_failed(&b))
			return 1;
		LLVMFuzzerTestOneInput((const uint8_t *)(b.data ? b.data : ""), b.len);
		gb_buf_free(&b);
	}
	printf("fuzz driver: %zu seeds and %ld mutated inputs (seed %ld), no crash\n",
	       n_seeds, iterations, seed);
	for (size_t s = 0; s < n_seeds; s++)
		free(seeds[s].data);
	free(seeds);
	return 0;
}
