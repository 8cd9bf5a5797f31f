/* SPDX-License-Identifier: MIT */
/*
 * harness.h - helpers for the fault-engine unit tests: build an engine from
 * scenario text, issue READ(10) / WRITE(10) / TEST UNIT READY through
 * fl_engine_submit, and wait for asynchronous completions.
 */
#ifndef FL_FAULTS_TEST_HARNESS_H
#define FL_FAULTS_TEST_HARNESS_H

#include "runner.h"

#include "engine_internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The start of a scenario: the iSCSI front end and one LUN of 1 MiB; rules etc. follow. */
#define ISCSI_1MIB "{\"faultlun\": 1, \"frontends\": [\"iscsi\"], \"luns\": [{\"size\": \"1MiB\"}],"

/* A command with its buffers, owned by the test. */
struct tcmd {
	struct fl_cmd cmd;
	uint8_t buf[8192];
	atomic_int done;
	uint64_t submit_ns, done_ns;
	pthread_t done_thread; /* the thread that completed it */
};

/* Completion: counts and timestamps. */
static void tcmd_done(struct fl_cmd *cmd)
{
	struct tcmd *t = (struct tcmd *)cmd;

	t->done_ns = fl_mono_ns();
	t->done_thread = pthread_self();
	atomic_fetch_add(&t->done, 1);
}

/* Loads scenario text (must be valid) into a new engine with the given seed. */
static inline struct fl_engine *mk_engine(const char *text, uint64_t seed, const char *trace)
{
	struct fl_diags d = {0};
	struct fl_scenario *sc = NULL;
	struct fl_engine_opts o = {
	    .frontend = FL_FE_ISCSI, .seed_set = true, .seed = seed, .trace_path = trace};
	struct fl_engine *e = NULL;

	if (fl_scenario_load_string("test.json", text, 0, &sc, &d)) {
		fl_diags_print(&d, stderr);
		fl_diags_free(&d);
		return NULL;
	}
	if (fl_engine_create(sc, &o, &e))
		e = NULL;
	fl_scenario_free(sc); /* the engine keeps its own reference */
	return e;
}

/* Prepares a 10-byte CDB command. */
static inline void tcmd_init(struct tcmd *t, uint8_t op, uint64_t lba, uint32_t blocks,
			     uint64_t tag, uint64_t nexus)
{
	memset(&t->cmd, 0, sizeof(t->cmd));
	atomic_store(&t->done, 0);
	t->cmd.cdb[0] = op;
	t->cmd.cdb_len = op == 0x00 ? 6 : 10;
	if (op != 0x00) {
		t->cmd.cdb[2] = (uint8_t)(lba >> 24);
		t->cmd.cdb[3] = (uint8_t)(lba >> 16);
		t->cmd.cdb[4] = (uint8_t)(lba >> 8);
		t->cmd.cdb[5] = (uint8_t)lba;
		t->cmd.cdb[7] = (uint8_t)(blocks >> 8);
		t->cmd.cdb[8] = (uint8_t)blocks;
	}
	t->cmd.nexus.id = nexus;
	t->cmd.nexus.initiator = "iqn.2026-12.org.faultlun:test";
	t->cmd.nexus.rel_port_id = 1;
	t->cmd.tag = tag;
	t->cmd.done = tcmd_done;
	if (op == 0x2a) {
		t->cmd.data_out = t->buf;
		t->cmd.data_out_len = blocks * 512;
	} else if (op == 0x28) {
		t->cmd.data_in = t->buf;
		t->cmd.data_in_cap = blocks * 512;
	}
}

/* Submits and returns t. */
static inline struct tcmd *tsubmit(struct fl_engine *e, struct tcmd *t, uint16_t lun)
{
	t->submit_ns = fl_mono_ns();
	fl_engine_submit(e, lun, &t->cmd);
	return t;
}

/* tcmd_init of t with the arguments given, then tsubmit to LUN 0; returns t. */
#define trun(e, t, ...) (tcmd_init(t, __VA_ARGS__), tsubmit(e, t, 0))

/* Waits up to ms for t to complete; returns whether it did. */
static inline bool twait(struct tcmd *t, int ms)
{
	for (int i = 0; i < ms * 10 && !atomic_load(&t->done); i++)
		usleep(100);
	return atomic_load(&t->done) != 0;
}

/* Clears pending unit attentions of a nexus with TEST UNIT READYs; returns how many. */
static inline int clear_ua(struct fl_engine *e, uint64_t nexus)
{
	struct tcmd *t = calloc(1, sizeof(*t));
	int n = 0;

	for (int i = 0; i < 8 && t; i++) {
		tcmd_init(t, 0x00, 0, 0, 999, nexus);
		tsubmit(e, t, 0);
		n++;
		twait(t, 1000);
		if (t->cmd.status == FL_STATUS_GOOD)
			break;
	}
	free(t);
	return n;
}

/* mk_engine of the text with seed 1 and no trace; the test ends here if it is refused. */
static inline struct fl_engine *engine_ok(const char *text)
{
	struct fl_engine *e = mk_engine(text, 1, NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	return e;
}

/* engine_ok with nexus 1's unit attentions cleared. */
static inline struct fl_engine *ready_engine(const char *text)
{
	struct fl_engine *e = engine_ok(text);

	clear_ua(e, 1);
	return e;
}

/* Sense key of a completed command (fixed or descriptor format), or -1. */
static inline int sense_key(const struct fl_cmd *c)
{
	if (c->status != FL_STATUS_CHECK_CONDITION || c->sense_len < 4)
		return -1;
	return (c->sense[0] & 0x7f) >= 0x72 ? c->sense[1] & 0xf : c->sense[2] & 0xf;
}

/* ASC of a completed command, or -1. */
static inline int sense_asc(const struct fl_cmd *c)
{
	if (c->status != FL_STATUS_CHECK_CONDITION || c->sense_len < 4)
		return -1;
	return (c->sense[0] & 0x7f) >= 0x72 ? c->sense[2] : c->sense_len > 12 ? c->sense[12] : -1;
}

/* ASCQ of a completed command, or -1. */
static inline int sense_ascq(const struct fl_cmd *c)
{
	if (c->status != FL_STATUS_CHECK_CONDITION || c->sense_len < 4)
		return -1;
	return (c->sense[0] & 0x7f) >= 0x72 ? c->sense[3] : c->sense_len > 13 ? c->sense[13] : -1;
}

/* INFORMATION field of fixed-format sense (valid bit set), or -1. */
static inline int64_t sense_info(const struct fl_cmd *c)
{
	if (c->sense_len < 18 || (c->sense[0] & 0x7f) != 0x70 || !(c->sense[0] & 0x80))
		return -1;
	return ((int64_t)c->sense[3] << 24) | (c->sense[4] << 16) | (c->sense[5] << 8) |
	       c->sense[6];
}

#endif
