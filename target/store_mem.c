/* SPDX-License-Identifier: MIT */
/*
 * store_mem.c - sparse in-memory backing store.
 *
 * Data lives in 64 KiB chunks found through a two-level table (a directory
 * of leaves of MEM_LEAF_CHUNKS chunk pointers), allocated on first non-zero
 * write; unwritten and discarded ranges read as zeroes, so a multi-terabyte
 * LUN costs only what was written. The LUN lock serialises all calls; the
 * store completes inline (async = false).
 */
#include "target_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MEM_CHUNK_SHIFT 16
#define MEM_CHUNK (1u << MEM_CHUNK_SHIFT)
#define MEM_LEAF_SHIFT 9
#define MEM_LEAF_CHUNKS (1u << MEM_LEAF_SHIFT)

struct mem_store {
	struct store s;
	uint8_t ***dir; /* dir[leaf][chunk] -> MEM_CHUNK bytes or NULL */
	size_t ndir;
};

/* Number of directory entries needed for `bytes`. */
static size_t dir_entries(uint64_t bytes)
{
	uint64_t chunks = (bytes + MEM_CHUNK - 1) >> MEM_CHUNK_SHIFT;

	return (size_t)((chunks + MEM_LEAF_CHUNKS - 1) >> MEM_LEAF_SHIFT);
}

/* Returns the slot of chunk `c`; allocates the leaf when `create`. */
static uint8_t **chunk_slot(struct mem_store *m, uint64_t c, bool create)
{
	size_t leaf = (size_t)(c >> MEM_LEAF_SHIFT);

	if (leaf >= m->ndir)
		return NULL;
	if (!m->dir[leaf]) {
		if (!create)
			return NULL;
		m->dir[leaf] = calloc(MEM_LEAF_CHUNKS, sizeof(uint8_t *));
		if (!m->dir[leaf])
			return NULL;
	}
	return &m->dir[leaf][c & (MEM_LEAF_CHUNKS - 1)];
}

/* True when len bytes are all zero. */
static bool all_zero(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* What mem_walk does to each piece of a range. */
enum mem_op {
	MEM_READ,    /* copy out; holes read as zeroes */
	MEM_WRITE,   /* copy in; zero data into a hole stays a hole */
	MEM_DISCARD, /* zero; chunks covered entirely are freed */
};

/*
 * The one chunk walk of the store: splits [off, off + len) at chunk
 * boundaries and applies `op` to each piece. `out` is the read buffer,
 * `in_p` the write data (each NULL when op does not use it).
 */
static int mem_walk(struct store *s, enum mem_op op, uint8_t *out, const uint8_t *in_p,
		    uint64_t off, uint64_t len)
{
	struct mem_store *m = (struct mem_store *)s;

	if (off > s->size || len > s->size - off)
		return -EINVAL;
	while (len) {
		uint64_t c = off >> MEM_CHUNK_SHIFT;
		size_t in = off & (MEM_CHUNK - 1);
		size_t n = MEM_CHUNK - in < len ? MEM_CHUNK - in : (size_t)len;
		uint8_t **slot = chunk_slot(m, c, false);
		bool held = slot && *slot;

		switch (op) {
		case MEM_READ:
			if (held)
				memcpy(out, *slot + in, n);
			else
				memset(out, 0, n);
			out += n;
			break;
		case MEM_WRITE:
			if (!held && !all_zero(in_p, n)) {
				slot = chunk_slot(m, c, true);
				if (!slot)
					return -ENOMEM;
				*slot = calloc(1, MEM_CHUNK);
				if (!*slot)
					return -ENOMEM;
				held = true;
			}
			if (held)
				memcpy(*slot + in, in_p, n);
			in_p += n;
			break;
		case MEM_DISCARD:
			if (held && n == MEM_CHUNK) {
				free(*slot);
				*slot = NULL;
			} else if (held) {
				memset(*slot + in, 0, n);
			}
			break;
		}
		off += n;
		len -= n;
	}
	return 0;
}

/* Reads len bytes at off; holes read as zeroes. */
static int mem_read(struct store *s, void *buf, uint64_t off, uint64_t len)
{
	return mem_walk(s, MEM_READ, buf, NULL, off, len);
}

/* Writes len bytes at off; zero data into a hole stays a hole. */
static int mem_write(struct store *s, const void *buf, uint64_t off, uint64_t len)
{
	return mem_walk(s, MEM_WRITE, NULL, buf, off, len);
}

/* Zeroes a range, freeing chunks it covers entirely. */
static int mem_discard(struct store *s, uint64_t off, uint64_t len)
{
	return mem_walk(s, MEM_DISCARD, NULL, NULL, off, len);
}

/* Memory is as durable as it gets. */
static int mem_sync(struct store *s)
{
	(void)s;
	return 0;
}

/* Frees every chunk of leaves [from, to). */
static void free_leaves(struct mem_store *m, size_t from, size_t to)
{
	for (size_t l = from; l < to; l++) {
		if (!m->dir[l])
			continue;
		for (size_t c = 0; c < MEM_LEAF_CHUNKS; c++)
			free(m->dir[l][c]);
		free(m->dir[l]);
		m->dir[l] = NULL;
	}
}

/* Grows or shrinks; the tail beyond a shrink is forgotten. */
static int mem_resize(struct store *s, uint64_t bytes)
{
	struct mem_store *m = (struct mem_store *)s;
	size_t nd = dir_entries(bytes);

	if (bytes < s->size) {
		/* zero the partial tail so that growing again reads zeroes */
		mem_discard(s, bytes, s->size - bytes);
		free_leaves(m, nd, m->ndir);
	}
	if (nd != m->ndir) {
		uint8_t ***d = realloc(m->dir, (nd ? nd : 1) * sizeof(*d));

		if (!d)
			return -ENOMEM;
		for (size_t l = m->ndir; l < nd; l++)
			d[l] = NULL;
		m->dir = d;
		m->ndir = nd;
	}
	s->size = bytes;
	return 0;
}

/* Frees everything. */
static void mem_close(struct store *s)
{
	struct mem_store *m = (struct mem_store *)s;

	free_leaves(m, 0, m->ndir);
	free(m->dir);
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

/* Opens an empty (all-zero) memory store of `bytes`. */
int store_mem_open(uint64_t bytes, struct store **out)
{
	struct mem_store *m = calloc(1, sizeof(*m));

	*out = NULL;
	if (!m)
		return -ENOMEM;
	m->s.ops = &mem_ops;
	m->ndir = dir_entries(bytes);
	m->dir = calloc(m->ndir ? m->ndir : 1, sizeof(*m->dir));
	if (!m->dir) {
		free(m);
		return -ENOMEM;
	}
	m->s.size = bytes;
	m->s.async = false;
	*out = &m->s;
	return 0;
}
