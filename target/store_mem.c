/* SPDX-License-Identifier: MIT */
/*
 * store_mem.c - sparse in-memory backing store.
 *
 * Data lives in 64 KiB chunks kept in a sparse table (sparse.c) by chunk
 * number, allocated on first non-zero write; unwritten and discarded ranges
 * read as zeroes. Neither the capacity nor a resize costs memory: a
 * multi-petabyte LUN costs only what was written, and discarding or cutting
 * off a range visits only the chunks it holds. The LUN lock serialises all
 * calls; the store completes inline (async = false).
 */
#include "target_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MEM_CHUNK_SHIFT 16
#define MEM_CHUNK (1u << MEM_CHUNK_SHIFT)

struct mem_store {
	struct store s;
	struct sparse_tab chunks; /* chunk number -> MEM_CHUNK bytes */
};

/* True when len bytes are all zero. */
static bool all_zero(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* Frees one chunk (a sparse_clear callback). */
static void chunk_free(void *chunk, void *arg)
{
	(void)arg;
	free(chunk);
}

/*
 * Zeroes [off, off + len): chunks covered entirely are freed, the partial
 * ones at either end zeroed; only the chunks held are visited.
 */
static void mem_zero_range(struct mem_store *m, uint64_t off, uint64_t len)
{
	uint64_t first = off >> MEM_CHUNK_SHIFT, last = (off + len - 1) >> MEM_CHUNK_SHIFT;
	uint64_t whole_lo = (off + MEM_CHUNK - 1) >> MEM_CHUNK_SHIFT;
	uint64_t whole_hi = (off + len) >> MEM_CHUNK_SHIFT; /* [whole_lo, whole_hi) */
	uint8_t *c;

	if (len == 0)
		return;
	if (whole_lo < whole_hi)
		sparse_clear(&m->chunks, whole_lo, whole_hi, chunk_free, NULL);
	if ((c = sparse_get(&m->chunks, first)) && (first < whole_lo || first >= whole_hi)) {
		size_t in = off & (MEM_CHUNK - 1);
		size_t n = first == last ? (size_t)len : MEM_CHUNK - in;

		memset(c + in, 0, n);
	}
	if (last != first && last >= whole_hi && (c = sparse_get(&m->chunks, last)))
		memset(c, 0, (size_t)((off + len) & (MEM_CHUNK - 1)));
}

/*
 * The chunk walk of reads and writes: splits [off, off + len) at chunk
 * boundaries and copies each piece out (`out`; holes read as zeroes) or in
 * (`in_p`; zero data into a hole stays a hole).
 */
static int mem_walk(struct store *s, uint8_t *out, const uint8_t *in_p, uint64_t off, uint64_t len)
{
	struct mem_store *m = (struct mem_store *)s;

	if (off > s->size || len > s->size - off)
		return -EINVAL;
	while (len) {
		uint64_t c = off >> MEM_CHUNK_SHIFT;
		size_t in = off & (MEM_CHUNK - 1);
		size_t n = MEM_CHUNK - in < len ? MEM_CHUNK - in : (size_t)len;
		uint8_t *chunk = sparse_get(&m->chunks, c);

		if (out) {
			if (chunk)
				memcpy(out, chunk + in, n);
			else
				memset(out, 0, n);
			out += n;
		} else {
			if (!chunk && !all_zero(in_p, n)) {
				chunk = calloc(1, MEM_CHUNK);
				if (!chunk)
					return -ENOMEM;
				if (sparse_set(&m->chunks, c, chunk)) {
					free(chunk);
					return -ENOMEM;
				}
			}
			if (chunk)
				memcpy(chunk + in, in_p, n);
			in_p += n;
		}
		off += n;
		len -= n;
	}
	return 0;
}

/* Reads len bytes at off; holes read as zeroes. */
static int mem_read(struct store *s, void *buf, uint64_t off, uint64_t len)
{
	return mem_walk(s, buf, NULL, off, len);
}

/* Writes len bytes at off; zero data into a hole stays a hole. */
static int mem_write(struct store *s, const void *buf, uint64_t off, uint64_t len)
{
	return mem_walk(s, NULL, buf, off, len);
}

/* Zeroes a range, freeing chunks it covers entirely. */
static int mem_discard(struct store *s, uint64_t off, uint64_t len)
{
	if (off > s->size || len > s->size - off)
		return -EINVAL;
	mem_zero_range((struct mem_store *)s, off, len);
	return 0;
}

/* Memory is as durable as it gets. */
static int mem_sync(struct store *s)
{
	(void)s;
	return 0;
}

/*
 * Grows or shrinks. Growing allocates nothing; a shrink zeroes and frees the
 * tail's chunks (so that growing again reads zeroes), visiting only those held.
 */
static int mem_resize(struct store *s, uint64_t bytes)
{
	if (bytes < s->size)
		mem_zero_range((struct mem_store *)s, bytes, s->size - bytes);
	s->size = bytes;
	return 0;
}

/* Frees everything. */
static void mem_close(struct store *s)
{
	struct mem_store *m = (struct mem_store *)s;

	sparse_clear(&m->chunks, 0, UINT64_MAX, chunk_free, NULL);
	free(m);
}

static const struct store_ops mem_ops = {
    .read = mem_read,
    .write = mem_write,
    .discard = mem_discard,
    .sync = mem_sync,
    .resize = mem_resize,
    .close = mem_close,
    .mapped = NULL,
};

/* Opens an empty (all-zero) memory store of `bytes`; it allocates nothing more. */
int store_mem_open(uint64_t bytes, struct store **out)
{
	struct mem_store *m = calloc(1, sizeof(*m));

	*out = NULL;
	if (!m)
		return -ENOMEM;
	m->s.ops = &mem_ops;
	m->s.size = bytes;
	m->s.async = false;
	*out = &m->s;
	return 0;
}
