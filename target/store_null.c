/* SPDX-License-Identifier: MIT */
/*
 * store_null.c - the null backing store: holds nothing.
 *
 * Reads return zeroes, writes, discards and syncs succeed and are dropped.
 * It allocates nothing per block or per command and keeps no state but its
 * size, so a command costs the core, the engine and the frontend and nothing
 * else: it is how the benchmarks measure faultlun without its store
 * (bench/ceiling.sh). Data written is not kept: never a store for a test
 * that reads back what it wrote. Completes inline (async = false).
 */
#include "target_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Checks that [off, off + len) lies inside the store. */
static int null_range(const struct store *s, uint64_t off, uint64_t len)
{
	return off > s->size || len > s->size - off ? -EINVAL : 0;
}

/* Reads zeroes: the buffer is cleared, nothing else is visited. */
static int null_read(struct store *s, void *buf, uint64_t off, uint64_t len)
{
	int rc = null_range(s, off, len);

	if (!rc)
		memset(buf, 0, (size_t)len);
	return rc;
}

/* Drops the data. */
static int null_write(struct store *s, const void *buf, uint64_t off, uint64_t len)
{
	(void)buf;
	return null_range(s, off, len);
}

/* Nothing is held, so nothing is discarded. */
static int null_discard(struct store *s, uint64_t off, uint64_t len)
{
	return null_range(s, off, len);
}

/* Nothing to make durable. */
static int null_sync(struct store *s)
{
	(void)s;
	return 0;
}

/* Takes the new size; nothing is allocated. */
static int null_resize(struct store *s, uint64_t bytes)
{
	s->size = bytes;
	return 0;
}

/* Frees the store. */
static void null_close(struct store *s)
{
	free(s);
}

static const struct store_ops null_ops = {
    .read = null_read,
    .write = null_write,
    .discard = null_discard,
    .sync = null_sync,
    .resize = null_resize,
    .close = null_close,
    .mapped = NULL,
};

/* Opens a null store of `bytes`. */
int store_null_open(uint64_t bytes, struct store **out)
{
	struct store *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->ops = &null_ops;
	s->size = bytes;
	s->async = false;
	*out = s;
	return 0;
}
