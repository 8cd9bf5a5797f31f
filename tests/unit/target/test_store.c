/* SPDX-License-Identifier: MIT */
/*
 * test_store.c - backing stores: the sparse memory store, the sparse-file
 * store and the null store through struct store_ops, persistence of acknowledged data across a
 * close / reopen of a file-backed LUN (plain and thin), asynchronous
 * completion on a worker thread, many commands in flight, and power loss on
 * the file store.
 */
#include "runner.h"
#include "target_internal.h"
#include "tharness.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The contract every store keeps: read what was written, holes read zero. */
static void check_store(struct store *s)
{
	uint8_t *w = malloc(200000), *r = malloc(200000);

	CU_ASSERT_EQUAL(s->size, 1 << 20);
	th_pattern(w, 200000, 7);
	CU_ASSERT_EQUAL(s->ops->write(s, w, 65536 - 512, 200000), 0); /* spans chunks */
	memset(r, 0xff, 200000);
	CU_ASSERT_EQUAL(s->ops->read(s, r, 65536 - 512, 200000), 0);
	CU_ASSERT(memcmp(w, r, 200000) == 0);
	CU_ASSERT_EQUAL(s->ops->read(s, r, 500000, 4096), 0);
	CU_ASSERT_EQUAL(r[0] | r[4095], 0);
	/* discard part of a chunk and a whole chunk */
	CU_ASSERT_EQUAL(s->ops->discard(s, 65536, 65536 + 4096), 0);
	CU_ASSERT_EQUAL(s->ops->read(s, r, 65536 - 512, 200000), 0);
	CU_ASSERT(memcmp(r, w, 512) == 0);
	CU_ASSERT(r[512] == 0 && r[512 + 65536 + 4095] == 0);
	CU_ASSERT(memcmp(r + 512 + 65536 + 4096, w + 512 + 65536 + 4096,
			 200000 - 512 - 65536 - 4096) == 0);
	CU_ASSERT_EQUAL(s->ops->sync(s), 0);
	/* shrink and grow: the cut-off part reads as zeroes */
	CU_ASSERT_EQUAL(s->ops->write(s, w, 90000, 20000), 0);
	CU_ASSERT_EQUAL(s->ops->resize(s, 100000), 0);
	CU_ASSERT_EQUAL(s->size, 100000);
	CU_ASSERT_EQUAL(s->ops->resize(s, 1 << 20), 0);
	CU_ASSERT_EQUAL(s->ops->read(s, r, 90000, 20000), 0);
	CU_ASSERT(memcmp(r, w, 10000) == 0);
	CU_ASSERT_EQUAL(r[10000] | r[15000] | r[19999], 0);
	free(w);
	free(r);
}

/* Memory store: contract, and out-of-range access refused. */
static void test_store_mem_contract(void)
{
	struct store *s;
	uint8_t b[16];

	CU_ASSERT_EQUAL(store_mem_open(1 << 20, &s), 0);
	CU_ASSERT(!s->async);
	check_store(s);
	CU_ASSERT(s->ops->read(s, b, (1 << 20) - 8, 16) < 0);
	CU_ASSERT(s->ops->write(s, b, 1 << 21, 16) < 0);
	s->ops->close(s);
	/* a huge sparse store costs almost nothing */
	CU_ASSERT_EQUAL(store_mem_open(1ull << 44, &s), 0);
	memset(b, 9, sizeof(b));
	CU_ASSERT_EQUAL(s->ops->write(s, b, (1ull << 44) - 16, 16), 0);
	memset(b, 0, sizeof(b));
	CU_ASSERT_EQUAL(s->ops->read(s, b, (1ull << 44) - 16, 16), 0);
	CU_ASSERT_EQUAL(b[15], 9);
	s->ops->close(s);
}

/*
 * Null store: writes are GOOD and dropped, reads clear the caller's buffer,
 * out-of-range access is refused, and a petabyte costs nothing.
 */
static void test_store_null_contract(void)
{
	struct store *s;
	uint8_t b[4096];

	CU_ASSERT_EQUAL(store_null_open(1 << 20, &s), 0);
	CU_ASSERT(!s->async);
	CU_ASSERT_EQUAL(s->size, 1 << 20);
	memset(b, 0x5a, sizeof(b));
	CU_ASSERT_EQUAL(s->ops->write(s, b, 4096, sizeof(b)), 0);
	CU_ASSERT_EQUAL(s->ops->read(s, b, 4096, sizeof(b)), 0);
	CU_ASSERT(b[0] == 0 && b[2048] == 0 && b[4095] == 0);
	CU_ASSERT(s->ops->read(s, b, (1 << 20) - 8, 16) < 0);
	CU_ASSERT(s->ops->write(s, b, 1 << 21, 16) < 0);
	CU_ASSERT(s->ops->discard(s, 1 << 20, 512) < 0);
	CU_ASSERT_EQUAL(s->ops->discard(s, 0, 1 << 20), 0);
	CU_ASSERT_EQUAL(s->ops->sync(s), 0);
	CU_ASSERT_EQUAL(s->ops->resize(s, 1ull << 50), 0);
	CU_ASSERT_EQUAL(s->ops->write(s, b, (1ull << 50) - 4096, 4096), 0);
	CU_ASSERT_EQUAL(s->size, 1ull << 50);
	s->ops->close(s);
}

/* A store against a flat byte array under random writes, discards and resizes. */
static void store_model(struct store *s, uint32_t seed)
{
	enum { SZ = 3 << 20 };
	uint8_t *model = calloc(1, SZ), *buf = malloc(SZ);
	uint64_t size = SZ;
	uint32_t x = seed;

#define RND() (x ^= x << 13, x ^= x >> 17, x ^= x << 5, x)
	for (int op = 0; op < 400; op++) {
		uint64_t off = RND() % size, len = RND() % 200000;
		uint32_t kind = RND() % 8;

		if (len > size - off)
			len = size - off;
		if (kind < 4) {
			th_pattern(buf, len, RND());
			if (kind == 0)
				memset(buf, 0, len); /* zeroes into holes stay holes */
			CU_ASSERT_EQUAL(s->ops->write(s, buf, off, len), 0);
			memcpy(model + off, buf, len);
		} else if (kind < 6) {
			CU_ASSERT_EQUAL(s->ops->discard(s, off, len), 0);
			memset(model + off, 0, len);
		} else if (kind == 6) {
			uint64_t ns = SZ / 2 + RND() % (SZ / 2);

			CU_ASSERT_EQUAL(s->ops->resize(s, ns), 0);
			if (ns < size)
				memset(model + ns, 0, size - ns);
			size = ns;
		} else {
			CU_ASSERT_EQUAL(s->ops->read(s, buf, off, len), 0);
			TH_CHECK(memcmp(buf, model + off, len) == 0,
				 "op %d: read %llu+%llu differs", op, (unsigned long long)off,
				 (unsigned long long)len);
		}
	}
	CU_ASSERT_EQUAL(s->ops->read(s, buf, 0, size), 0);
	CU_ASSERT(memcmp(buf, model, size) == 0);
	free(model);
	free(buf);
}

/* Both stores keep the model's contents. */
static void test_store_model(void)
{
	struct store *s;

	CU_ASSERT_EQUAL(store_mem_open(3 << 20, &s), 0);
	store_model(s, 17);
	s->ops->close(s);
	CU_ASSERT_EQUAL(store_file_open(th_tmpfile(), NULL, 3 << 20, &s), 0);
	store_model(s, 18);
	s->ops->close(s);
}

/* File store: contract, sparse file of the right size. */
static void test_store_file_contract(void)
{
	const char *path = th_tmpfile();
	struct store *s;
	struct stat st;

	CU_ASSERT_EQUAL(store_file_open(path, NULL, 1 << 20, &s), 0);
	CU_ASSERT(s->async);
	CU_ASSERT(stat(path, &st) == 0 && st.st_size == 1 << 20);
	CU_ASSERT(st.st_blocks * 512 < (1 << 20)); /* sparse */
	check_store(s);
	s->ops->close(s);
	CU_ASSERT(store_file_open("/nonexistent-dir/f", NULL, 4096, &s) < 0);
}

/* A file-backed LUN. */
static struct fl_lun *file_lun(const char *path, bool thin, uint32_t bs)
{
	struct fl_lun_config cfg;

	th_file_config(&cfg, path, bs);
	cfg.thin = thin;
	return th_lun(&cfg);
}

/* Data acknowledged with GOOD is there after the LUN is closed and reopened. */
static void test_file_store_persists_across_reopen(void)
{
	const char *path = th_tmpfile();
	uint8_t w[8 * 512], r[8 * 512];
	struct fl_lun *lun = file_lun(path, false, 512);

	th_clear_ua(lun, 1);
	th_pattern(w, sizeof(w), 77);
	CU_ASSERT_EQUAL(th_write(lun, 1, 1000, 8, w), FL_STATUS_GOOD); /* cached, no sync */
	CU_ASSERT_EQUAL(th_write(lun, 1, TH_BLOCKS - 1, 1, w), FL_STATUS_GOOD);
	fl_lun_destroy(lun);
	lun = file_lun(path, false, 512);
	th_clear_ua(lun, 1);
	CU_ASSERT_EQUAL(th_read(lun, 1, 1000, 8, r), FL_STATUS_GOOD);
	CU_ASSERT(memcmp(w, r, sizeof(w)) == 0);
	CU_ASSERT_EQUAL(th_read(lun, 1, TH_BLOCKS - 1, 1, r), FL_STATUS_GOOD);
	CU_ASSERT(memcmp(w, r, 512) == 0);
	CU_ASSERT_EQUAL(th_read(lun, 1, 0, 1, r), FL_STATUS_GOOD);
	CU_ASSERT_EQUAL(r[0] | r[511], 0);
	fl_lun_destroy(lun);
}

/* True when the temporary directory's file system punches holes. */
static bool can_punch_holes(void)
{
	const char *path = th_tmpfile();
	int fd = open(path, O_RDWR | O_CREAT, 0600);
	bool ok;

	if (fd < 0)
		return false;
	ok = ftruncate(fd, 8192) == 0 &&
	     fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096) == 0;
	close(fd);
	return ok;
}

/* UNMAP on a thin file-backed LUN gives the space back to the file system. */
static void test_file_store_unmap_punches_holes(void)
{
	const char *path = th_tmpfile();
	struct fl_lun *lun = file_lun(path, true, 4096);
	uint8_t *w = malloc(256 * 4096), cdb[16], param[24] = {0, 22, 0, 16};
	struct stat before, after;
	struct fl_cmd res;

	th_clear_ua(lun, 1);
	th_pattern(w, 256 * 4096, 5);
	th_cdb16(cdb, 0x8a, 0x08, 0, 256); /* 1 MiB, FUA */
	th_run(lun, 1, cdb, 16, w, 256 * 4096, NULL, 0, &res);
	TH_EXPECT_GOOD(&res, "WRITE(16) of 1 MiB");
	CU_ASSERT_EQUAL(stat(path, &before), 0);
	param[8 + 10] = 1; /* UNMAP LBA 0, 256 blocks */
	th_cdb10(cdb, 0x42, 0, 0, 24);
	th_run(lun, 1, cdb, 10, param, 24, NULL, 0, &res);
	TH_EXPECT_GOOD(&res, "UNMAP 1 MiB");
	CU_ASSERT_EQUAL(stat(path, &after), 0);
	if (can_punch_holes())
		TH_CHECK(after.st_blocks + 1024 <= before.st_blocks, "file blocks %lld -> %lld",
			 (long long)before.st_blocks, (long long)after.st_blocks);
	else
		fprintf(stderr, "note: no hole punching in $TMPDIR; zeroes written instead\n");
	CU_ASSERT_EQUAL(th_read(lun, 1, 0, 1, w), FL_STATUS_GOOD);
	CU_ASSERT_EQUAL(w[0] | w[4095], 0);
	free(w);
	fl_lun_destroy(lun);
}

/* A thin file-backed LUN finds its mapped blocks again after reopening. */
static void test_file_store_thin_map_after_reopen(void)
{
	const char *path = th_tmpfile();
	uint8_t w[4 * 4096], cdb[16], param[24] = {0, 22, 0, 16};
	struct fl_lun_info info;
	struct fl_lun *lun = file_lun(path, true, 4096);
	struct fl_cmd res;

	th_clear_ua(lun, 1);
	th_pattern(w, sizeof(w), 78);
	CU_ASSERT_EQUAL(th_write(lun, 1, 10, 4, w), FL_STATUS_GOOD);
	CU_ASSERT_EQUAL(th_write(lun, 1, 100, 2, w), FL_STATUS_GOOD);
	param[8 + 7] = 11; /* UNMAP LBA 11, 1 block */
	param[8 + 11] = 1;
	th_cdb10(cdb, 0x42, 0, 0, 24);
	th_run(lun, 1, cdb, 10, param, 24, NULL, 0, &res);
	TH_EXPECT_GOOD(&res, "UNMAP on the file store");
	fl_lun_get_info(lun, &info);
	CU_ASSERT_EQUAL(info.mapped_blocks, 5);
	fl_lun_destroy(lun);
	lun = file_lun(path, true, 4096);
	fl_lun_get_info(lun, &info);
	/* file systems without SEEK_DATA report everything or nothing as data */
	TH_CHECK(info.mapped_blocks == 5 || info.mapped_blocks == 0 ||
		     info.mapped_blocks == info.num_blocks,
		 "mapped after reopen: %llu", (unsigned long long)info.mapped_blocks);
	if (info.mapped_blocks == 5) {
		th_clear_ua(lun, 1);
		uint8_t st[8 + 16 * 3];

		th_cdb16(cdb, 0x9e, 0x12, 10, 8 + 16 * 3);
		th_run(lun, 1, cdb, 16, NULL, 0, st, sizeof(st), &res);
		CU_ASSERT(fl_get_be32(st + 16) == 1 && st[20] == 0);
		CU_ASSERT(fl_get_be64(st + 24) == 11 && fl_get_be32(st + 32) == 1 && st[36] == 1);
	}
	fl_lun_destroy(lun);
}

struct async_probe {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned done;
	pthread_t submitter;
	bool on_other_thread;
	bool all_good;
};

/* Completion of the async probe commands. */
static void probe_done(struct fl_cmd *cmd)
{
	struct async_probe *p = cmd->priv;

	pthread_mutex_lock(&p->lock);
	p->done++;
	if (pthread_equal(pthread_self(), p->submitter))
		p->on_other_thread = false;
	if (cmd->status != FL_STATUS_GOOD)
		p->all_good = false;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

/* File store: done() comes from a worker; many commands in flight at once. */
static void test_file_store_async_completion_from_worker(void)
{
	enum { N = 64 };
	const char *path = th_tmpfile();
	struct fl_lun *lun = file_lun(path, false, 512);
	struct fl_cmd *cmds = calloc(N, sizeof(*cmds));
	uint8_t *data = malloc(N * 512), *r = malloc(N * 512);
	struct async_probe p = {.on_other_thread = true, .all_good = true};

	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.cond, NULL);
	p.submitter = pthread_self();
	th_clear_ua(lun, 1);
	th_pattern(data, N * 512, 99);
	for (int i = 0; i < N; i++) {
		th_cdb10(cmds[i].cdb, 0x2a, 0, 2000 + i, 1);
		cmds[i].cdb_len = 10;
		cmds[i].nexus.id = 1;
		cmds[i].data_out = data + i * 512;
		cmds[i].data_out_len = 512;
		cmds[i].done = probe_done;
		cmds[i].priv = &p;
		fl_lun_submit(lun, &cmds[i]);
	}
	pthread_mutex_lock(&p.lock);
	while (p.done < N) {
		struct timespec t;

		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_sec += 10;
		if (pthread_cond_timedwait(&p.cond, &p.lock, &t))
			break;
	}
	pthread_mutex_unlock(&p.lock);
	CU_ASSERT_EQUAL(p.done, N);
	CU_ASSERT(p.on_other_thread);
	CU_ASSERT(p.all_good);
	CU_ASSERT_EQUAL(th_read(lun, 1, 2000, N, r), FL_STATUS_GOOD);
	CU_ASSERT(memcmp(data, r, N * 512) == 0);
	CU_ASSERT(th_last_done_thread() != (unsigned long)pthread_self());
	/* fl_lun_destroy waits for queued commands: submit, then destroy at once */
	p.done = 0;
	for (int i = 0; i < N; i++)
		fl_lun_submit(lun, &cmds[i]);
	fl_lun_destroy(lun);
	CU_ASSERT_EQUAL(p.done, N);
	pthread_mutex_destroy(&p.lock);
	pthread_cond_destroy(&p.cond);
	free(cmds);
	free(data);
	free(r);
}

/* Memory store: done() runs inline, before fl_lun_submit returns. */
static void test_mem_store_completes_inline(void)
{
	struct fl_lun *lun = th_lun(NULL);
	struct async_probe p = {.on_other_thread = true, .all_good = true};
	struct fl_cmd cmd;

	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.cond, NULL);
	p.submitter = pthread_self();
	memset(&cmd, 0, sizeof(cmd));
	cmd.cdb_len = 6;
	cmd.nexus.id = 1;
	cmd.done = probe_done;
	cmd.priv = &p;
	fl_lun_submit(lun, &cmd);
	CU_ASSERT_EQUAL(p.done, 1);
	CU_ASSERT(!p.on_other_thread);
	pthread_mutex_destroy(&p.lock);
	pthread_cond_destroy(&p.cond);
	fl_lun_destroy(lun);
}

/* Power loss on the file store restores the file's previous contents. */
static void test_file_store_power_loss(void)
{
	const char *path = th_tmpfile();
	struct fl_lun *lun = file_lun(path, false, 512);
	uint8_t a[2 * 512], b[2 * 512], r[2 * 512];

	th_clear_ua(lun, 1);
	th_pattern(a, sizeof(a), 1);
	th_pattern(b, sizeof(b), 2);
	CU_ASSERT_EQUAL(th_write(lun, 1, 30, 2, a), FL_STATUS_GOOD);
	TH_SYNC_CACHE(lun, 1, 30, 2, "SYNCHRONIZE CACHE(10) on the file store");
	CU_ASSERT_EQUAL(th_write(lun, 1, 30, 2, b), FL_STATUS_GOOD);
	CU_ASSERT_EQUAL(fl_lun_power_loss(lun, NULL, NULL), 2);
	fl_lun_destroy(lun);
	lun = file_lun(path, false, 512);
	th_clear_ua(lun, 1);
	CU_ASSERT_EQUAL(th_read(lun, 1, 30, 2, r), FL_STATUS_GOOD);
	CU_ASSERT(memcmp(r, a, sizeof(a)) == 0);
	fl_lun_destroy(lun);
}

/* The sparse table against a plain array of indexes: set, get, next, clear. */
static void test_sparse_table(void)
{
	static const uint64_t idx[] = {
	    0, 1, 511, 512, 262143, 262144, 1ull << 36, (1ull << 47) - 1, SPARSE_MAX_INDEX};
	enum { N = sizeof(idx) / sizeof(idx[0]) };
	struct sparse_tab t = {0};
	uint64_t i;

	CU_ASSERT_PTR_NULL(sparse_get(&t, 5));
	i = 0;
	CU_ASSERT_PTR_NULL(sparse_next(&t, &i, UINT64_MAX));
	for (size_t k = 0; k < N; k++)
		CU_ASSERT_EQUAL(sparse_set(&t, idx[k], (void *)(uintptr_t)(k + 1)), 0);
	CU_ASSERT_EQUAL(sparse_set(&t, SPARSE_MAX_INDEX + 1, (void *)1), -ERANGE);
	for (size_t k = 0; k < N; k++)
		CU_ASSERT_EQUAL((uintptr_t)sparse_get(&t, idx[k]), k + 1);
	CU_ASSERT_PTR_NULL(sparse_get(&t, 2));
	CU_ASSERT_PTR_NULL(sparse_get(&t, (1ull << 36) + 1));
	/* next visits the items in order, and only them */
	i = 0;
	for (size_t k = 0; k < N; k++, i++) {
		CU_ASSERT_EQUAL((uintptr_t)sparse_next(&t, &i, UINT64_MAX), k + 1);
		CU_ASSERT_EQUAL(i, idx[k]);
	}
	CU_ASSERT_PTR_NULL(sparse_next(&t, &i, UINT64_MAX));
	i = 513;
	CU_ASSERT_PTR_NULL(sparse_next(&t, &i, 262143)); /* end is exclusive */
	/* nine items a tree of at most 6 levels apart: a few dozen nodes, not gigabytes */
	CU_ASSERT(sparse_nodes(&t) < 40);
	sparse_clear(&t, 512, (1ull << 36) + 1, NULL, NULL);
	CU_ASSERT_PTR_NOT_NULL(sparse_get(&t, 511));
	CU_ASSERT_PTR_NULL(sparse_get(&t, 512));
	CU_ASSERT_PTR_NULL(sparse_get(&t, 262144));
	CU_ASSERT_PTR_NULL(sparse_get(&t, 1ull << 36));
	CU_ASSERT_PTR_NOT_NULL(sparse_get(&t, (1ull << 47) - 1));
	sparse_clear(&t, 0, UINT64_MAX, NULL, NULL);
	CU_ASSERT_EQUAL(sparse_nodes(&t), 0);
	CU_ASSERT_PTR_NULL(t.root);
}

/* VmRSS of this process in KiB (0 when /proc is not there). */
static uint64_t vm_rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	uint64_t kib = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %" SCNu64, &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* Seconds since an earlier mono_s() reading. */
static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Growing a memory LUN (plain, then thin) to 4096 TiB and shrinking it back
 * costs what its written blocks cost, and the shrink returns at once; the data
 * below the old end stays, the block written past it is gone.
 */
static void test_resize_huge_costs_used_blocks(void)
{
	const uint64_t huge = (4096ull << 40) / 512; /* 4096 TiB in 512-byte blocks */
	uint8_t w[512], r[512];

	th_pattern(w, sizeof(w), 3);
	for (int thin = 0; thin < 2; thin++) {
		struct fl_lun_config cfg;
		struct fl_lun *lun;
		struct fl_lun_info info;
		uint64_t rss0, rss1, rss2;
		double t0, grow_s, shrink_s;

		th_config(&cfg);
		cfg.thin = thin;
		lun = th_lun(&cfg);
		th_clear_ua(lun, 1);
		CU_ASSERT_EQUAL(th_write(lun, 1, 5, 1, w), FL_STATUS_GOOD);
		rss0 = vm_rss_kib();
		t0 = mono_s();
		CU_ASSERT_EQUAL_FATAL(fl_lun_resize(lun, huge), 0);
		grow_s = mono_s() - t0;
		th_clear_ua(lun, 1);
		CU_ASSERT_EQUAL(th_write(lun, 1, huge - 1, 1, w), FL_STATUS_GOOD);
		CU_ASSERT_EQUAL(th_read(lun, 1, huge - 1, 1, r), FL_STATUS_GOOD);
		CU_ASSERT(memcmp(w, r, 512) == 0);
		rss1 = vm_rss_kib();
		t0 = mono_s();
		CU_ASSERT_EQUAL(fl_lun_resize(lun, TH_BLOCKS), 0);
		shrink_s = mono_s() - t0;
		rss2 = vm_rss_kib();
		th_clear_ua(lun, 1);
		CU_ASSERT_EQUAL(th_read(lun, 1, 5, 1, r), FL_STATUS_GOOD);
		CU_ASSERT(memcmp(w, r, 512) == 0);
		fl_lun_get_info(lun, &info);
		CU_ASSERT_EQUAL(info.num_blocks, TH_BLOCKS);
		/* growing again: the block once written at the end reads as zeroes */
		CU_ASSERT_EQUAL(fl_lun_resize(lun, huge), 0);
		th_clear_ua(lun, 1);
		CU_ASSERT_EQUAL(th_read(lun, 1, huge - 1, 1, r), FL_STATUS_GOOD);
		CU_ASSERT_EQUAL(r[0] | r[511], 0);
		printf("\n  %s memory LUN, 16 MiB -> 4096 TiB -> 16 MiB: VmRSS %" PRIu64
		       " KiB before, %" PRIu64
		       " KiB at 4096 TiB with its last block written, %" PRIu64
		       " KiB after; grow %.6f s, shrink %.6f s\n",
		       thin ? "thin" : "plain", rss0, rss1, rss2, grow_s, shrink_s);
		TH_CHECK(rss1 < rss0 + 16 * 1024, "VmRSS grew by %" PRIu64 " KiB", rss1 - rss0);
		TH_CHECK(shrink_s < 1.0, "the shrink took %.3f s", shrink_s);
		/* sizes the core cannot take are refused and change nothing */
		CU_ASSERT_EQUAL(fl_lun_resize(lun, 0), -EINVAL);
		CU_ASSERT_EQUAL(fl_lun_resize(lun, FL_LUN_MAX_BLOCKS + 1), -EINVAL);
		CU_ASSERT_EQUAL(fl_lun_resize(lun, UINT64_MAX), -EINVAL);
		fl_lun_get_info(lun, &info);
		CU_ASSERT_EQUAL(info.num_blocks, huge);
		fl_lun_destroy(lun);
	}
}

FL_TESTS(store_tests,
	 FL_TEST(test_store_mem_contract),
	 FL_TEST(test_store_file_contract),
	 FL_TEST(test_store_null_contract),
	 FL_TEST(test_store_model),
	 FL_TEST(test_file_store_persists_across_reopen),
	 FL_TEST(test_file_store_thin_map_after_reopen),
	 FL_TEST(test_file_store_unmap_punches_holes),
	 FL_TEST(test_file_store_async_completion_from_worker),
	 FL_TEST(test_mem_store_completes_inline),
	 FL_TEST(test_file_store_power_loss),
	 FL_TEST(test_sparse_table),
	 FL_TEST(test_resize_huge_costs_used_blocks));

FL_SUITES(FL_SUITE("store", NULL, NULL, store_tests));
