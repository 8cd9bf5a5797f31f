/* SPDX-License-Identifier: MIT */
/*
 * import_data.c - `faultlun import --keep-data`: the medium as the capture
 * shows it. The data of every GOOD read goes into one image file per LUN
 * (next to the scenario, its file store), at its blocks, unless the capture
 * wrote those blocks before (then the image cannot know what was there
 * first: the replay's own writes put it there); the first read of a block
 * wins, and a later read of it with other data and no write between is
 * counted (another initiator the capture does not hold). A read whose
 * blocks were all known this way is marked for --verify, which compares the
 * replay's data with the image's. Bounded: IMP_MAX_KEEP_RUNS runs of blocks
 * known and written per LUN (past them nothing more is kept on that LUN),
 * each Data-In segment at most IMP_MAX_DSL bytes.
 */
#include "import_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A LUN's image path: "PREFIX.lunN.img" (prefix: the scenario's path without .json). */
void imp_data_path(const char *prefix, int lun, char *buf, size_t len)
{
	snprintf(buf, len, "%s.lun%d.img", prefix, lun);
}

/* Index of the first run of s that ends after x (s->n when none). */
static unsigned runs_find(const struct imp_runs *s, uint64_t x)
{
	unsigned lo = 0, hi = s->n;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (s->r[mid].end <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Whether block x is in s; *until is where that stops being so (the end of
 * its run, or the start of the next run, or `limit`).
 */
static bool runs_at(const struct imp_runs *s, uint64_t x, uint64_t limit, uint64_t *until)
{
	unsigned i = runs_find(s, x);

	if (i < s->n && s->r[i].start <= x) {
		*until = s->r[i].end < limit ? s->r[i].end : limit;
		return true;
	}
	*until = i < s->n && s->r[i].start < limit ? s->r[i].start : limit;
	return false;
}

/* Adds [start, end) to s; false when s is full (nothing added). */
static bool runs_add(struct imp_runs *s, uint64_t start, uint64_t end)
{
	unsigned i = runs_find(s, start > 0 ? start - 1 : 0), j = i;

	/* runs i..j-1 touch or overlap [start, end): merged into one */
	while (j < s->n && s->r[j].start <= end)
		j++;
	if (i < j) {
		if (s->r[i].start < start)
			start = s->r[i].start;
		if (s->r[j - 1].end > end)
			end = s->r[j - 1].end;
		s->r[i].start = start;
		s->r[i].end = end;
		memmove(&s->r[i + 1], &s->r[j], (s->n - j) * sizeof(s->r[0]));
		s->n -= j - i - 1;
		return true;
	}
	if (s->n == IMP_MAX_KEEP_RUNS)
		return false;
	memmove(&s->r[i + 1], &s->r[i], (s->n - i) * sizeof(s->r[0]));
	s->r[i].start = start;
	s->r[i].end = end;
	s->n++;
	return true;
}

/* LUN m->lun's keeping state, made on first use; NULL when it cannot be had. */
static struct imp_keep *lun_keep(struct fl_import *im, int lun)
{
	struct imp_lun *l = &im->luns[lun];

	if (!l->keep) {
		l->keep = calloc(1, sizeof(*l->keep));
		if (!l->keep)
			return NULL;
		l->keep->fd = -1;
	}
	return l->keep;
}

/* The blocks a command covers, when it is one the image follows; false otherwise. */
static bool cmd_blocks(const struct fl_import *im, const struct imp_cmd *m, struct fl_cdb_info *ci)
{
	return im->o.keep_data && m->lun >= 0 && m->lun <= 255 && !fl_cdb_decode(m->cdb, 16, ci) &&
	       ci->has_lba;
}

void imp_data_command(struct fl_import *im, struct imp_cmd *m)
{
	struct fl_cdb_info ci;
	struct imp_keep *k;

	if (!im->o.keep_data || m->lun < 0 || m->lun > 255 || fl_cdb_decode(m->cdb, 16, &ci))
		return;
	if (ci.cls == FL_CLASS_UNMAP) {
		/* its ranges are in the parameter list: the LUN's reads are no longer compared */
		if ((k = lun_keep(im, m->lun)))
			k->unmapped = true;
		return;
	}
	if (!ci.has_lba || !(k = lun_keep(im, m->lun)))
		return;
	if (ci.cls == FL_CLASS_WRITE) {
		if (!runs_add(&k->written, ci.lba, ci.lba + (ci.nblocks ? ci.nblocks : 1)))
			k->full = true;
	} else if (ci.cls == FL_CLASS_READ && ci.data_in && ci.nblocks) {
		m->keep = !k->full && !k->unmapped;
		m->data_cmp = m->keep;
	}
}

/* Opens LUN lun's image (created, emptied) on first use; its fd or -1. */
static int image_fd(struct fl_import *im, int lun, struct imp_keep *k)
{
	char path[4096];

	if (k->fd >= 0 || k->open_failed)
		return k->fd;
	imp_data_path(im->o.image_fs, lun, path, sizeof(path));
	k->fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (k->fd < 0) {
		k->open_failed = true;
		fprintf(stderr, "faultlun import: %s: %s\n", path, strerror(errno));
	}
	return k->fd;
}

/* Whether n bytes at off of fd are p's. */
static bool same_bytes(int fd, uint64_t off, const uint8_t *p, uint32_t n)
{
	uint8_t buf[65536];

	while (n) {
		uint32_t c = n < sizeof(buf) ? n : (uint32_t)sizeof(buf);
		if (pread(fd, buf, c, (off_t)off) != (ssize_t)c || memcmp(buf, p, c))
			return false;
		off += c;
		p += c;
		n -= c;
	}
	return true;
}

uint64_t imp_fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

void imp_data_in(struct fl_import *im, struct imp_cmd *m, uint32_t offset, const uint8_t *p,
		 uint32_t n, bool whole)
{
	struct fl_cdb_info ci;
	struct imp_keep *k;
	uint32_t bs;
	int fd;

	if (!m->keep || !cmd_blocks(im, m, &ci) || !(k = lun_keep(im, m->lun)))
		return;
	/* what --verify compares the replay's data with: the capture's, in order */
	if (!m->dnext && !offset)
		m->dhash = FL_FNV_START;
	if (whole && offset == m->dnext) {
		m->dhash = imp_fnv1a(m->dhash, p, n);
		m->dnext += n;
	} else {
		m->data_cmp = false;
	}
	bs = im->luns[m->lun].have_cap ? im->luns[m->lun].block_size : 0;
	if (!whole || !bs || offset % bs || n % bs ||
	    (uint64_t)offset + n > (uint64_t)ci.nblocks * bs || k->full || k->unmapped ||
	    (fd = image_fd(im, m->lun, k)) < 0) {
		m->data_cmp = false; /* a piece the image cannot place: the read is not compared */
		if (!bs)
			k->no_capacity++;
		return;
	}
	uint64_t b = ci.lba + offset / bs, end = b + n / bs;
	while (b < end) {
		uint64_t until, until2;
		const uint8_t *q = p + (b - ci.lba - offset / bs) * bs;
		if (runs_at(&k->written, b, end, &until)) {
			m->data_cmp = false; /* written in the capture before: not known */
		} else if (runs_at(&k->known, b, until, &until2)) {
			until = until2;
			if (!same_bytes(fd, b * bs, q, (uint32_t)((until - b) * bs))) {
				m->data_cmp = false;
				k->inconsistent++;
			}
		} else {
			until = until2;
			if (pwrite(fd, q, (size_t)((until - b) * bs), (off_t)(b * bs)) !=
				(ssize_t)((until - b) * bs) ||
			    !runs_add(&k->known, b, until)) {
				k->full = true;
				m->data_cmp = false;
				return;
			}
			if (!k->first_frame)
				k->first_frame = m->frame;
			k->blocks += until - b;
		}
		b = until;
	}
}

void imp_data_finish(struct fl_import *im)
{
	for (int n = 0; n < 256; n++) {
		struct imp_lun *l = &im->luns[n];
		if (l->keep && l->keep->fd >= 0 && l->have_cap &&
		    ftruncate(l->keep->fd, (off_t)(l->blocks * l->block_size)) < 0)
			l->keep->full = true;
	}
}

bool imp_data_read(const struct fl_import *im, int lun, uint64_t off, uint8_t *buf, uint32_t n)
{
	const struct imp_keep *k = lun >= 0 && lun <= 255 ? im->luns[lun].keep : NULL;

	return k && k->fd >= 0 && pread(k->fd, buf, n, (off_t)off) == (ssize_t)n;
}

int imp_data_copy(const struct fl_import *im, int lun, const char *to)
{
	const struct imp_keep *k = lun >= 0 && lun <= 255 ? im->luns[lun].keep : NULL;
	uint8_t buf[65536];
	struct stat st;
	int out, r = 0;

	if (!k || k->fd < 0 || fstat(k->fd, &st) < 0)
		return -ENOENT;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0)
		return -errno;
	if (ftruncate(out, st.st_size) < 0)
		r = -errno;
	/* the data runs only: the copy stays as sparse as the image */
	for (off_t at = 0; !r && at < st.st_size;) {
		off_t data = lseek(k->fd, at, SEEK_DATA), hole;
		if (data < 0)
			break;
		hole = lseek(k->fd, data, SEEK_HOLE);
		if (hole < 0)
			hole = st.st_size;
		for (at = data; !r && at < hole;) {
			size_t c =
			    hole - at < (off_t)sizeof(buf) ? (size_t)(hole - at) : sizeof(buf);
			ssize_t g = pread(k->fd, buf, c, at);
			if (g <= 0 || pwrite(out, buf, (size_t)g, at) != g)
				r = -EIO;
			at += g > 0 ? g : 0;
		}
	}
	if (close(out) < 0 && !r)
		r = -errno;
	return r;
}

void imp_data_free(struct fl_import *im)
{
	for (int n = 0; n < 256; n++) {
		struct imp_keep *k = im->luns[n].keep;
		if (k && k->fd >= 0)
			close(k->fd);
		free(k);
		im->luns[n].keep = NULL;
	}
}
