/* SPDX-License-Identifier: MIT */
/*
 * store_file.c - sparse-file backing store.
 *
 * pread/pwrite on a regular file that is created if missing and grown (never
 * shrunk on open) to the LUN's size, or on a block device the operator names.
 * A path from a scenario (a file anyone may have written) is opened beneath
 * the scenario's directory: no absolute path, no "..", no symbolic link in
 * any component (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, or a walk of
 * openat(O_NOFOLLOW) calls where the kernel has no openat2), and only a
 * regular file; a FIFO, device or socket is refused before it is opened.
 * Discard punches holes; sync is fdatasync, reached by SYNCHRONIZE CACHE, FUA
 * writes and writes with the write cache off (SBC-3 r36 4.15). Data the core
 * acknowledged with GOOD is in the file when it is reopened. Calls block, so
 * a LUN on this store executes commands on its worker threads (async = true).
 */
#include "fl_log.h"
#include "target_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

/* Set by tests: open scenario paths by the openat(O_NOFOLLOW) walk, as without openat2. */
bool store_file_no_openat2;

/* What kind of file st is, for messages. */
static const char *file_kind(const struct stat *st)
{
	switch (st->st_mode & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFDIR:
		return "a directory";
	case S_IFBLK:
		return "a block device";
	case S_IFCHR:
		return "a character device";
	case S_IFIFO:
		return "a FIFO";
	case S_IFSOCK:
		return "a socket";
	default:
		return "not a regular file";
	}
}

/*
 * openat() of path beneath dfd by components: "." and empty ones skipped, ".."
 * refused (-EXDEV), every directory opened with O_NOFOLLOW | O_DIRECTORY and
 * the last component with O_NOFOLLOW (a symbolic link anywhere: -ELOOP).
 * Returns the descriptor or -errno.
 */
static int walk_beneath(int dfd, const char *path, int flags, mode_t mode)
{
	char comp[256];
	int cur = dfd, fd;

	if (*path == '/')
		return -EXDEV;
	for (const char *p = path;;) {
		size_t n;
		const char *next;

		p += strspn(p, "/");
		n = strcspn(p, "/");
		next = p + n;
		next += strspn(next, "/");
		if (n >= sizeof(comp)) {
			fd = -ENAMETOOLONG;
			break;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		if (n == 2 && comp[0] == '.' && comp[1] == '.') {
			fd = -EXDEV;
			break;
		}
		if (*next == '\0') {
			/* the last component (a trailing "." or "/" names a directory) */
			if (n == 0 || (n == 1 && comp[0] == '.') || p[n] == '/')
				fd = -EISDIR;
			else if ((fd = openat(cur, comp, flags | O_NOFOLLOW, mode)) < 0)
				fd = -errno;
			break;
		}
		if (n == 1 && comp[0] == '.') {
			p = next;
			continue;
		}
		fd = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			struct stat st;

			fd = -errno;
			if (fd == -ENOTDIR && fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISLNK(st.st_mode))
				fd = -ELOOP;
			break;
		}
		if (cur != dfd)
			close(cur);
		cur = fd;
		p = next;
	}
	if (cur != dfd)
		close(cur);
	return fd;
}

/*
 * Opens path beneath the directory dfd, following no symbolic link and never
 * leaving it: openat2 where the kernel has it, else walk_beneath. -errno.
 */
static int open_beneath(int dfd, const char *path, int flags, mode_t mode)
{
	struct open_how how = {
	    .flags = (uint64_t)(flags | O_NOFOLLOW),
	    .mode = (flags & O_CREAT) ? mode : 0,
	    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	if (!store_file_no_openat2) {
		fd = syscall(SYS_openat2, dfd, path, &how, sizeof(how));
		if (fd >= 0)
			return (int)fd;
		/* ENOSYS: no openat2 (before Linux 5.6); EPERM: a filter that denies it */
		if (errno != ENOSYS && errno != EPERM)
			return -errno;
	}
	return walk_beneath(dfd, path, flags, mode);
}

/* Logs why a scenario's store path was refused (rc from open_beneath). */
static void log_beneath_refusal(const char *dir, const char *path, int rc)
{
	const char *why;

	switch (rc) {
	case -ELOOP:
		why =
		    "a component is a symbolic link, which a scenario's store path may not follow";
		break;
	case -EXDEV:
		why = "it leads out of the scenario's directory (an absolute path or '..')";
		break;
	default:
		why = strerror(-rc);
		break;
	}
	fl_log(FL_LOG_ERR,
	       "cannot open the scenario's store \"%s\" beneath %s: %s; an operator names any "
	       "other file or a block device with `serve --store file:PATH`\n",
	       path, dir, why);
}

/*
 * Opens a scenario's store path beneath dir: only a regular file, created if
 * missing. The file is looked at through an O_PATH descriptor first, so a
 * device or FIFO is never opened. Returns the descriptor or -errno, logged.
 */
static int open_scenario_store(const char *dir, const char *path)
{
	int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int fd = -1, rc;
	struct stat st;

	if (dfd < 0) {
		rc = -errno;
		fl_log(FL_LOG_ERR, "cannot open the scenario's directory %s: %s\n", dir,
		       strerror(errno));
		return rc;
	}
	rc = open_beneath(dfd, path, O_PATH | O_CLOEXEC, 0);
	if (rc >= 0 && fstat(rc, &st) == 0 && S_ISLNK(st.st_mode)) {
		/* O_PATH | O_NOFOLLOW opens a last component that is a link itself */
		close(rc);
		rc = -ELOOP;
	}
	if (rc >= 0) {
		if (fstat(rc, &st) == 0 && !S_ISREG(st.st_mode)) {
			fl_log(FL_LOG_ERR,
			       "the scenario's store \"%s\" beneath %s is %s; a scenario's store "
			       "must be a regular file (an operator names a block device with "
			       "`serve --store file:PATH`)\n",
			       path, dir, file_kind(&st));
			close(rc);
			rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
			goto out;
		}
		close(rc);
	} else if (rc != -ENOENT) {
		log_beneath_refusal(dir, path, rc);
		goto out;
	}
	fd = open_beneath(dfd, path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0600);
	if (fd < 0) {
		rc = fd;
		log_beneath_refusal(dir, path, rc);
		goto out;
	}
	rc = fd;
out:
	close(dfd);
	return rc;
}

/*
 * Opens (creating if missing) a sparse file of at least `bytes`. With dir,
 * path is a scenario's and is opened beneath dir (see the top of the file);
 * without, it is the operator's: any path, a regular file or a block device.
 */
int store_file_open(const char *path, const char *dir, uint64_t bytes, struct store **out)
{
	struct file_store *f;
	struct stat st;
	int rc;

	*out = NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	if (dir) {
		f->fd = open_scenario_store(dir, path);
		if (f->fd < 0) {
			rc = f->fd;
			free(f);
			return rc;
		}
	} else {
		f->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0600);
		if (f->fd < 0) {
			rc = -errno;
			fl_log(FL_LOG_ERR, "cannot open %s: %s\n", path, strerror(errno));
			free(f);
			return rc;
		}
	}
	if (fstat(f->fd, &st) < 0) {
		rc = -errno;
		fl_log(FL_LOG_ERR, "cannot stat %s: %s\n", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode) && (dir || !S_ISBLK(st.st_mode))) {
		rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		fl_log(FL_LOG_ERR, "store %s is %s, not a regular file%s\n", path, file_kind(&st),
		       dir ? "" : " or a block device");
		goto fail;
	}
	/* O_NONBLOCK only kept the open itself from waiting */
	if (fcntl(f->fd, F_SETFL, fcntl(f->fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		rc = -errno;
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
