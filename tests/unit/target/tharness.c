/* SPDX-License-Identifier: MIT */
/*
 * tharness.c - shared helpers of the logical-unit core's unit tests
 * (see tharness.h).
 */
#include "tharness.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A command in flight plus what th_run needs to wait for it. */
struct th_slot {
	struct fl_cmd cmd;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int done_calls;
	uint8_t *out_copy;
};

static unsigned long last_done_thread;

/* Completion callback: records the thread and wakes th_run. */
static void th_done(struct fl_cmd *cmd)
{
	struct th_slot *s = cmd->priv;

	pthread_mutex_lock(&s->lock);
	s->done_calls++;
	__atomic_store_n(&last_done_thread, (unsigned long)pthread_self(), __ATOMIC_SEQ_CST);
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

/* Thread id of the last done() call. */
unsigned long th_last_done_thread(void)
{
	return __atomic_load_n(&last_done_thread, __ATOMIC_SEQ_CST);
}

/* Fills cfg with the default test LUN. */
void th_config(struct fl_lun_config *cfg)
{
	fl_lun_config_default(cfg);
	cfg->num_blocks = TH_BLOCKS;
	cfg->block_size = TH_BS;
}

void th_file_config(struct fl_lun_config *cfg, const char *path, uint32_t bs)
{
	th_config(cfg);
	cfg->store = FL_STORE_FILE;
	cfg->store_path = path;
	if (bs) {
		cfg->block_size = bs;
		cfg->num_blocks = (uint64_t)TH_BLOCKS * TH_BS / bs;
	}
}

/* Creates a LUN; a failure fails the test. */
struct fl_lun *th_lun(const struct fl_lun_config *cfg)
{
	struct fl_lun_config def;
	struct fl_lun *lun = NULL;
	int rc;

	if (!cfg) {
		th_config(&def);
		cfg = &def;
	}
	rc = fl_lun_create(cfg, &lun);
	TH_CHECK(rc == 0 && lun, "fl_lun_create: %d", rc);
	return lun;
}

/* Submits through `submit` and waits for done(). */
static int run(struct fl_lun *lun, struct fl_target *tgt, uint16_t lun_id, uint64_t nexus,
	       const uint8_t *cdb, size_t cdb_len, const void *out, uint32_t out_len, void *in,
	       uint32_t in_cap, struct fl_cmd *res)
{
	static _Thread_local char names[64][40];
	struct th_slot *s = calloc(1, sizeof(*s));
	struct timespec deadline;
	int rc = 0;

	if (!s) {
		CU_FAIL("out of memory");
		return -1;
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	memcpy(s->cmd.cdb, cdb, cdb_len > FL_CDB_MAX ? FL_CDB_MAX : cdb_len);
	s->cmd.cdb_len = (uint8_t)cdb_len;
	s->cmd.nexus.id = nexus;
	snprintf(names[nexus % 64], sizeof(names[0]), "iqn.test:%llu", (unsigned long long)nexus);
	s->cmd.nexus.initiator = names[nexus % 64];
	s->cmd.nexus.rel_port_id = 1;
	s->cmd.tag = nexus;
	s->cmd.data_out = out;
	s->cmd.data_out_len = out_len;
	s->cmd.data_in = in;
	s->cmd.data_in_cap = in_cap;
	s->cmd.done = th_done;
	s->cmd.priv = s;
	if (tgt)
		fl_target_submit(tgt, lun_id, &s->cmd);
	else
		fl_lun_submit(lun, &s->cmd);
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 10;
	pthread_mutex_lock(&s->lock);
	while (s->done_calls == 0 && rc == 0)
		rc = pthread_cond_timedwait(&s->cond, &s->lock, &deadline);
	pthread_mutex_unlock(&s->lock);
	if (rc) {
		CU_FAIL("done() not called within 10 s");
		return -1; /* the core still owns s: leak it */
	}
	*res = s->cmd;
	pthread_mutex_lock(&s->lock);
	rc = s->done_calls == 1 ? 0 : -1;
	pthread_mutex_unlock(&s->lock);
	TH_CHECK(rc == 0, "done() called %d times", s->done_calls);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->cond);
	free(s);
	return rc;
}

/* Runs one command on a LUN. */
int th_run(struct fl_lun *lun, uint64_t nexus, const uint8_t *cdb, size_t cdb_len, const void *out,
	   uint32_t out_len, void *in, uint32_t in_cap, struct fl_cmd *res)
{
	return run(lun, NULL, 0, nexus, cdb, cdb_len, out, out_len, in, in_cap, res);
}

/* Runs one command through a target. */
int th_run_target(struct fl_target *tgt, uint16_t lun_id, uint64_t nexus, const uint8_t *cdb,
		  size_t cdb_len, const void *out, uint32_t out_len, void *in, uint32_t in_cap,
		  struct fl_cmd *res)
{
	return run(NULL, tgt, lun_id, nexus, cdb, cdb_len, out, out_len, in, in_cap, res);
}

/* Parses fixed (70h/71h) or descriptor (72h/73h) sense data. */
void th_parse_sense(const uint8_t *sense, size_t len, struct th_sense *s)
{
	const uint8_t *sks = NULL;

	memset(s, 0, sizeof(*s));
	s->sks_bit = -1;
	if (len < 8)
		return;
	switch (sense[0] & 0x7f) {
	case 0x70:
	case 0x71:
		if (len < 14)
			return;
		s->valid = true;
		s->key = sense[2] & 0x0f;
		s->asc = sense[12];
		s->ascq = sense[13];
		s->info_valid = sense[0] & 0x80;
		s->info = fl_get_be32(sense + 3);
		if (len >= 18 && (sense[15] & 0x80))
			sks = sense + 15;
		break;
	case 0x72:
	case 0x73:
		s->valid = true;
		s->descriptor = true;
		s->key = sense[1] & 0x0f;
		s->asc = sense[2];
		s->ascq = sense[3];
		for (size_t off = 8; off + 2 <= len && off < 8u + sense[7];) {
			const uint8_t *d = sense + off;

			if (off + 2 + d[1] > len)
				break;
			if (d[0] == 0x00 && d[1] == 0x0a) {
				s->info_valid = d[2] & 0x80;
				s->info = fl_get_be64(d + 4);
			} else if (d[0] == 0x02 && d[1] == 0x06 && (d[4] & 0x80)) {
				sks = d + 4;
			}
			off += 2 + d[1];
		}
		break;
	default:
		return;
	}
	if (sks) {
		s->sks_valid = true;
		s->sks_cd = sks[0] & 0x40;
		s->sks_bit = (sks[0] & 0x08) ? (sks[0] & 7) : -1;
		s->sks_field = (uint16_t)(sks[1] << 8 | sks[2]);
	}
}

/* A formatted CUnit assertion. */
void th_check_at(bool ok, const char *file, unsigned line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (ok) {
		CU_assertImplementation(CU_TRUE, line, "ok", file, "", CU_FALSE);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	CU_assertImplementation(CU_FALSE, line, msg, file, "", CU_FALSE);
}

/* Checks status and sense of a completed command. */
void th_expect_at(const struct fl_cmd *res, uint8_t status, uint8_t key, uint8_t asc, uint8_t ascq,
		  const char *what, const char *file, unsigned line)
{
	struct th_sense s;

	th_parse_sense(res->sense, res->sense_len, &s);
	if (res->status != status) {
		th_check_at(false, file, line, "%s: status %02xh, want %02xh (sense %x/%02x/%02x)",
			    what, res->status, status, s.key, s.asc, s.ascq);
		return;
	}
	if (status != FL_STATUS_CHECK_CONDITION) {
		th_check_at(res->sense_len == 0, file, line, "%s: sense data with status %02xh",
			    what, status);
		return;
	}
	th_check_at(s.valid && s.key == key && s.asc == asc && s.ascq == ascq, file, line,
		    "%s: sense %x/%02x/%02x, want %x/%02x/%02x", what, s.key, s.asc, s.ascq, key,
		    asc, ascq);
}

/* Sends TEST UNIT READY until GOOD. */
void th_clear_ua(struct fl_lun *lun, uint64_t nexus)
{
	uint8_t cdb[6] = {0};
	struct fl_cmd res;

	for (int i = 0; i < 32; i++) {
		if (th_run(lun, nexus, cdb, 6, NULL, 0, NULL, 0, &res))
			return;
		if (res.status == FL_STATUS_GOOD)
			return;
		if (res.status != FL_STATUS_CHECK_CONDITION || (res.sense[2] & 0x0f) != 6) {
			struct th_sense s;

			th_parse_sense(res.sense, res.sense_len, &s);
			if (s.key != FL_KEY_UNIT_ATTENTION) {
				th_check_at(
				    false, __FILE__, __LINE__,
				    "TUR while clearing UAs: status %02xh sense %x/%02x/%02x",
				    res.status, s.key, s.asc, s.ascq);
				return;
			}
		}
	}
	CU_FAIL("unit attentions never cleared");
}

/* Runs and checks a table of cases. */
void th_run_cases(struct fl_lun *lun, uint64_t nexus, const struct th_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct th_case *c = &cases[i];
		uint8_t *out = NULL, *in = NULL;
		struct fl_cmd res;

		if (c->out_len) {
			out = malloc(c->out_len);
			memset(out, 0xa5, c->out_len);
		}
		if (c->in_cap)
			in = calloc(1, c->in_cap);
		if (th_run(lun, nexus, c->cdb, c->cdb_len, out, c->out_len, in, c->in_cap, &res) ==
		    0)
			th_expect_at(&res, c->status, c->key, c->asc, c->ascq, c->what, __FILE__,
				     __LINE__);
		free(out);
		free(in);
	}
}

/* Stores big-endian values. */
static void put_be(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

/* READ(6)/WRITE(6)-style CDB. */
size_t th_cdb6(uint8_t *cdb, uint8_t op, uint32_t lba, uint8_t len)
{
	memset(cdb, 0, 6);
	cdb[0] = op;
	put_be(cdb + 1, lba & 0x1fffff, 3);
	cdb[4] = len;
	return 6;
}

/* A CDB of `size` bytes: opcode, byte 1, the LBA in bytes 2.. (lba_bytes long), the transfer
 * length of len_bytes at len_at; the rest zero. Returns size. */
static size_t cdb_put(uint8_t *cdb, size_t size, uint8_t op, uint8_t b1, uint64_t lba,
		      int lba_bytes, uint32_t len, int len_at, int len_bytes)
{
	memset(cdb, 0, size);
	cdb[0] = op;
	cdb[1] = b1;
	put_be(cdb + 2, lba, lba_bytes);
	put_be(cdb + len_at, len, len_bytes);
	return size;
}

/* 10-byte CDB with LBA in 2-5 and length in 7-8. */
size_t th_cdb10(uint8_t *cdb, uint8_t op, uint8_t b1, uint32_t lba, uint16_t len)
{
	return cdb_put(cdb, 10, op, b1, lba, 4, len, 7, 2);
}

/* 12-byte CDB with LBA in 2-5 and length in 6-9. */
size_t th_cdb12(uint8_t *cdb, uint8_t op, uint8_t b1, uint32_t lba, uint32_t len)
{
	return cdb_put(cdb, 12, op, b1, lba, 4, len, 6, 4);
}

/* 16-byte CDB with LBA in 2-9 and length in 10-13. */
size_t th_cdb16(uint8_t *cdb, uint8_t op, uint8_t b1, uint64_t lba, uint32_t len)
{
	return cdb_put(cdb, 16, op, b1, lba, 8, len, 10, 4);
}

/* SYNCHRONIZE CACHE(10) of n blocks at lba through nexus, which must end GOOD. */
void th_sync_cache_at(struct fl_lun *lun, uint64_t nexus, uint32_t lba, uint16_t n,
		      const char *what, const char *file, unsigned line)
{
	uint8_t cdb[10];
	struct fl_cmd res;

	th_cdb10(cdb, 0x35, 0, lba, n);
	th_run(lun, nexus, cdb, 10, NULL, 0, NULL, 0, &res);
	th_expect_at(&res, FL_STATUS_GOOD, 0, 0, 0, what, file, line);
}

/* The test LUN with the sense format asked for. */
struct fl_lun *th_lun_sense(bool d_sense)
{
	struct fl_lun_config cfg;

	th_config(&cfg);
	cfg.d_sense = d_sense;
	return th_lun(&cfg);
}

/* TUR through a port until GOOD or a non-UA answer (at most 32); returns the last answer. */
struct fl_cmd th_settle(struct fl_lun *lun, uint64_t nexus, uint16_t port)
{
	static const uint8_t tur[6] = {0};
	struct fl_cmd res;
	int i = 0;

	do
		res = th_via(lun, nexus, port, tur, 6, NULL, 0, NULL, 0);
	while (res.status == FL_STATUS_CHECK_CONDITION && (res.sense[2] & 0x0f) == 6 && ++i < 32);
	return res;
}

/* READ(10) of block 0 through a port. */
struct fl_cmd th_read1(struct fl_lun *lun, uint64_t nexus, uint16_t port)
{
	static const uint8_t rd[10] = {0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0};
	static uint8_t buf[TH_BS];

	return th_via(lun, nexus, port, rd, 10, NULL, 0, buf, sizeof(buf));
}

/* A failover personality's LUN: its own identity, port 1 in group 1 (the owner) and port 2
 * in group 2, both active/optimized, no ALUA reported. */
struct fl_lun *th_personality_lun(const char *personality)
{
	struct fl_lun_config cfg;

	th_config(&cfg);
	cfg.vendor = cfg.product = cfg.revision = NULL;
	th_two_ports(&cfg, FL_ALUA_ACTIVE_OPTIMIZED, FL_ALUA_ACTIVE_OPTIMIZED);
	cfg.alua_implicit = false;
	cfg.alua_explicit = false;
	cfg.personality.name = personality;
	cfg.personality.owner_tpg = 1;
	return th_lun(&cfg);
}

/* Checks that the LUN reports an owner and that it is port `want`. */
void th_expect_owner_at(struct fl_lun *lun, uint16_t want, const char *file, unsigned line)
{
	uint16_t owner = 0;
	int rc = fl_lun_owner(lun, &owner);

	th_check_at(rc == 0, file, line, "fl_lun_owner: %d", rc);
	th_check_at(owner == want, file, line, "owner %u, want %u", owner, want);
}

/* WRITE(16) of n blocks. */
uint8_t th_write(struct fl_lun *lun, uint64_t nexus, uint64_t lba, uint32_t n, const void *buf)
{
	struct fl_lun_info info;
	uint8_t cdb[16];
	struct fl_cmd res;

	fl_lun_get_info(lun, &info);
	th_cdb16(cdb, 0x8a, 0, lba, n);
	if (th_run(lun, nexus, cdb, 16, buf, n * info.block_size, NULL, 0, &res))
		return 0xff;
	return res.status;
}

/* READ(16) of n blocks. */
uint8_t th_read(struct fl_lun *lun, uint64_t nexus, uint64_t lba, uint32_t n, void *buf)
{
	struct fl_lun_info info;
	uint8_t cdb[16];
	struct fl_cmd res;

	fl_lun_get_info(lun, &info);
	th_cdb16(cdb, 0x88, 0, lba, n);
	if (th_run(lun, nexus, cdb, 16, NULL, 0, buf, n * info.block_size, &res))
		return 0xff;
	return res.status;
}

/* Fills buf with a seed-dependent pattern. */
void th_pattern(void *buf, size_t len, uint32_t seed)
{
	uint8_t *p = buf;
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

static char tmp_paths[16][64];
static unsigned ntmp;

/* Removes the temporary files at exit. */
static void tmp_cleanup(void)
{
	for (unsigned i = 0; i < ntmp; i++)
		unlink(tmp_paths[i]);
}

/* A fresh temporary file path, removed at exit. */
const char *th_tmpfile(void)
{
	const char *dir = getenv("TMPDIR");
	char *p;
	int fd;

	if (ntmp == 16) {
		CU_FAIL("too many temporary files");
		return "/nonexistent/faultlun-test";
	}
	p = tmp_paths[ntmp];
	snprintf(p, sizeof(tmp_paths[0]), "%s/fl-unit-XXXXXX",
		 dir && strlen(dir) < 40 ? dir : "/tmp");
	fd = mkstemp(p);
	if (fd < 0) {
		CU_FAIL("mkstemp failed");
		return "/nonexistent/faultlun-test";
	}
	close(fd);
	unlink(p); /* the store creates it */
	if (ntmp++ == 0)
		atexit(tmp_cleanup);
	return p;
}

/* Completion callback of th_via: counts the calls. */
static void via_done(struct fl_cmd *cmd)
{
	(*(int *)cmd->priv)++;
}

/* See tharness.h. */
struct fl_cmd th_via(struct fl_lun *lun, uint64_t nexus, uint16_t port, const uint8_t *cdb,
		     size_t len, const void *out, uint32_t out_len, uint8_t *in, uint32_t cap)
{
	int calls = 0;
	struct fl_cmd cmd = {
	    .cdb_len = (uint8_t)len,
	    .nexus = {.id = nexus, .initiator = "iqn.test:via", .rel_port_id = port},
	    .data_out = out,
	    .data_out_len = out_len,
	    .data_in = in,
	    .data_in_cap = cap,
	    .done = via_done,
	    .priv = &calls,
	};

	memcpy(cmd.cdb, cdb, len);
	fl_lun_submit(lun, &cmd);
	CU_ASSERT_EQUAL(calls, 1);
	cmd.priv = NULL;
	return cmd;
}

/* See tharness.h. */
void th_two_ports(struct fl_lun_config *cfg, enum fl_alua_state state1,
		  enum fl_alua_state state2)
{
	cfg->tpg_id = 1;
	cfg->nports = 2;
	cfg->ports[0] = (struct fl_port_config){1, 1};
	cfg->ports[1] = (struct fl_port_config){2, 2};
	cfg->ntpgs = 2;
	cfg->tpgs[0] = (struct fl_tpg_config){1, state1};
	cfg->tpgs[1] = (struct fl_tpg_config){2, state2};
}
