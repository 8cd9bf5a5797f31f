/* SPDX-License-Identifier: MIT */
/*
 * store_file.c - sparse-file backing store.
 *
 * pread/pwrite on a regular file that is created if missing and grown (never
 * shrunk on open) to the LUN's size; discard punches holes; sync is
 * fdatasync, reached by SYNCHRONIZE CACHE, FUA writes and writes with the
 * write cache off (SBC-3 r36 4.15). Data the core acknowledged with GOOD is
 * in the file when it is reopened. Calls block, so a LUN on this store
 * executes commands on its worker threads (async = true).
 */
#include "fl_log.h"
#include "target_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct file_store {
	struct store s;
	int fd;
};

/* Reads len bytes at off, zero-filling past the end of the file. */
static int file_read(struct store *s, void *buf, uint64_t off, uint64_t len)
{
	struct file_store *f = (struct file_store *)s;
	uint8_t *p = buf;

	while (len) {
		size_t n = len > (1u << 30) ? (1u << 30) : (size_t)len;
		ssize_t r = pread(f->fd, p, n, (off_t)off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0) {
			memset(p, 0, (size_t)len);
			return 0;
		}
		p += r;
		off += (uint64_t)r;
		len -= (uint64_t)r;
	}
	return 0;
}

/* Writes len bytes at off. */
static int file_write(struct store *s, const void *buf, uint64_t off, uint64_t len)
{
	struct file_store *f = (struct file_store *)s;
	const uint8_t *p = buf;

	while (len) {
		size_t n = len > (1u << 30) ? (1u << 30) : (size_t)len;
		ssize_t r = pwrite(f->fd, p, n, (off_t)off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += r;
		off += (uint64_t)r;
		len -= (uint64_t)r;
	}
	return 0;
}

/* Punches a hole; writes zeroes where the file system cannot. */
static int file_discard(struct store *s, uint64_t off, uint64_t len)
{
	struct file_store *f = (struct file_store *)s;
	static const uint8_t zero[65536];

	if (len == 0)
		return 0;
	if (fallocate(f->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len) ==
	    0)
		return 0;
	if (errno != EOPNOTSUPP && errno != ENOSYS)
		return -errno;
	while (len) {
		uint64_t n = len < sizeof(zero) ? len : sizeof(zero);
		int rc = file_write(s, zero, off, n);

		if (rc)
			return rc;
		off += n;
		len -= n;
	}
	return 0;
}

/* Makes written data durable. */
static int file_sync(struct store *s)
{
	struct file_store *f = (struct file_store *)s;

	if (fdatasync(f->fd) < 0)
		return -errno;
	return 0;
}

/* Sets the file's size. */
static int file_resize(struct store *s, uint64_t bytes)
{
	struct file_store *f = (struct file_store *)s;

	if (ftruncate(f->fd, (off_t)bytes) < 0)
		return -errno;
	s->size = bytes;
	return 0;
}

/* Closes the file. */
static void file_close(struct store *s)
{
	struct file_store *f = (struct file_store *)s;

	close(f->fd);
	free(f);
}

/* Marks the blocks holding data (SEEK_DATA / SEEK_HOLE) as mapped. */
static int file_mapped(struct store *s, struct thin_map *t, unsigned block_shift)
{
	struct file_store *f = (struct file_store *)s;
	off_t pos = 0, end = (off_t)s->size;

	while (pos < end) {
		off_t data = lseek(f->fd, pos, SEEK_DATA);
		off_t hole;

		if (data < 0)
			break; /* ENXIO: no more data (or no SEEK_DATA: nothing known) */
		hole = lseek(f->fd, data, SEEK_HOLE);
		if (hole < 0 || hole > end)
			hole = end;
		thin_map_range(t, (uint64_t)data >> block_shift,
			       (((uint64_t)hole + (1u << block_shift) - 1) >> block_shift) -
				   ((uint64_t)data >> block_shift));
		pos = hole;
	}
	return 0;
}

static const struct store_ops file_ops = {
    .read = file_read,
    .write = file_write,
    .discard = file_discard,
    .sync = file_sync,
    .resize = file_resize,
    .close = file_close,
    .mapped = file_mapped,
};

/* Opens (creating if missing) a sparse file of at least `bytes`. */
int store_file_open(const char *path, uint64_t bytes, struct store **out)
{
	struct file_store *f;
	struct stat st;
	int rc;

	*out = NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (f->fd < 0) {
		rc = -errno;
		fl_log(FL_LOG_ERR, "cannot open %s: %s\n", path, strerror(errno));
		free(f);
		return rc;
	}
	if (fstat(f->fd, &st) < 0 || (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))) {
		rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		fl_log(FL_LOG_ERR, "%s is not a regular file\n", path);
		goto fail;
	}
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size < bytes &&
	    ftruncate(f->fd, (off_t)bytes) < 0) {
		rc = -errno;
		fl_log(FL_LOG_ERR, "cannot size %s: %s\n", path, strerror(errno));
		goto fail;
	}
	f->s.ops = &file_ops;
	f->s.size = bytes;
	f->s.async = true;
	*out = &f->s;
	return 0;
fail:
	close(f->fd);
	free(f);
	return rc;
}
