/* SPDX-License-Identifier: MIT */
/*
 * test_engine.c - the fault engine's pass-through path: the LBA index against
 * a brute-force oracle, rule matching against an oracle on random rule sets,
 * every action at rate 0, rate 1, a probabilistic rate (tolerance band), a
 * triggered (nth) and a stateful case, determinism by seed, "until":
 * "written" healing, state transitions, delay accuracy, thousands of holds,
 * the trace, and fl_engine_replace.
 */
#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>

/* ---- the interval index against brute force ---- */

/* Collects hits of lba_tree_query. */
static void hit_add(uint32_t rule, void *ctx)
{
	fl_collect_add(ctx, rule);
}

static int u64cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Random interval sets and random queries: the tree finds exactly what a scan finds. */
static void test_lba_tree_oracle(void)
{
	struct fl_prng g;
	static struct lba_ival iv[2000];
	static struct fl_collect got, want;

	fl_prng_seed(&g, 42, 0);
	for (int round = 0; round < 60; round++) {
		size_t n = (size_t)(fl_prng_next(&g) % (round < 10 ? 8 : 2000));
		uint64_t space = round % 3 == 0 ? 100 : 1000000;
		struct lba_tree t;

		for (size_t i = 0; i < n; i++) {
			uint64_t lo = fl_prng_next(&g) % space, len = fl_prng_next(&g) % (space / 10 + 1);

			iv[i] = (struct lba_ival){.lo = lo,
						  .hi = i % 17 == 0 ? UINT64_MAX : lo + len,
						  .rule = (uint32_t)i};
		}
		CU_ASSERT_EQUAL_FATAL(lba_tree_build(&t, iv, n), 0);
		for (int q = 0; q < 200; q++) {
			uint64_t lo = fl_prng_next(&g) % (space + 10), hi = lo + fl_prng_next(&g) % 64;

			got.n = want.n = 0;
			lba_tree_query(&t, lo, hi, hit_add, &got);
			for (size_t i = 0; i < n; i++)
				if (iv[i].lo <= hi && iv[i].hi >= lo)
					fl_collect_add(&want, i);
			qsort(got.v, got.n, sizeof(got.v[0]), u64cmp);
			CU_ASSERT_EQUAL(got.n, want.n);
			if (got.n == want.n)
				CU_ASSERT_EQUAL(memcmp(got.v, want.v, got.n * sizeof(got.v[0])), 0);
		}
		lba_tree_free(&t);
	}
}

/* ---- rule matching against an oracle ---- */

struct orule {
	unsigned cls_mask; /* 0 = any */
	int opcode;	   /* -1 = none */
	int lba;	   /* 0 any, 1 range, 2 crosses_end */
	uint64_t first, last;
	int lun; /* -1 = any */
};

/* The class the core gives the opcodes this test uses. */
static int class_of(uint8_t op)
{
	struct fl_cdb_info ci;
	uint8_t cdb[16] = {op};

	if (fl_cdb_decode(cdb, op == 0 ? 6 : 10, &ci))
		return FL_CLASS_OTHER;
	return ci.cls;
}

/* Random rule sets on two LUNs; each command's injection is the oracle's first match. */
static void test_match_oracle(void)
{
	static const uint8_t ops[] = {0x28, 0x2a, 0x00, 0x35};
	static const uint64_t nblocks[2] = {10000, 20000};
	struct fl_prng g;

	fl_prng_seed(&g, 7, 0);
	for (int round = 0; round < 6; round++) {
		size_t nr = round == 0 ? 1 : round * 120;
		struct orule * or = calloc(nr, sizeof(* or));
		json_t *root = json_pack("{s:i, s:[s], s:[{s:i, s:s}, {s:i, s:s}]}", "faultlun", 1,
					 "frontends", "iscsi", "luns", "lun", 0, "size",
					 "10000blocks", "lun", 1, "size", "20000blocks");
		json_t *rules = json_array();
		struct fl_engine *e;
		char *text;

		for (size_t i = 0; i < nr; i++) {
			struct orule *o = & or [i];
			json_t *m = json_object(), *a = json_object();
			char sense[64];
			uint64_t x = fl_prng_next(&g);

			o->opcode = -1;
			o->lun = x % 5 == 0 ? (int)(x / 5 % 2) : -1;
			if (x % 11 == 0) {
				o->opcode = ops[(x >> 8) % 2];
				json_object_set_new(m, "opcode", json_integer(o->opcode));
			} else if (x % 3) {
				json_t *cl = json_array();

				for (int c = 1; c <= 6; c++)
					if ((x >> (10 + c)) & 1) {
						o->cls_mask |= 1u << c;
						json_array_append_new(
						    cl, json_string(sc_class_names[c]));
					}
				if (json_array_size(cl))
					json_object_set_new(m, "class", cl);
				else
					json_decref(cl);
			}
			o->lba = (int)((x >> 20) % 10 < 4 ? 0 : (x >> 20) % 10 < 9 ? 1 : 2);
			if (o->lba == 1) {
				o->first = (x >> 24) % 20000;
				o->last = o->first + (x >> 40) % 300;
				json_object_set_new(m, "lba",
						    json_pack("{s:I, s:I}", "first",
							      (json_int_t)o->first, "last",
							      (json_int_t)o->last));
				/* tur/inquiry + lba is refused by the loader; keep it valid */
				o->cls_mask &= ~((1u << FL_CLASS_TUR) | (1u << FL_CLASS_INQUIRY));
				if (json_object_get(m, "class")) {
					json_t *cl = json_array();

					for (int c = 1; c <= 6; c++)
						if (o->cls_mask & (1u << c))
							json_array_append_new(
							    cl, json_string(sc_class_names[c]));
					if (!json_array_size(cl)) {
						o->cls_mask = 1u << FL_CLASS_READ;
						json_array_append_new(cl, json_string("read"));
					}
					json_object_set_new(m, "class", cl);
				}
				if (o->lun >= 0 && o->first >= nblocks[o->lun])
					o->first = o->last = nblocks[o->lun] - 1;
				if (o->lun < 0 && o->first >= 20000)
					o->first = o->last = 19999;
				json_object_set_new(m, "lba",
						    json_pack("{s:I, s:I}", "first",
							      (json_int_t)o->first, "last",
							      (json_int_t)o->last));
			} else if (o->lba == 2) {
				o->cls_mask &= ~((1u << FL_CLASS_TUR) | (1u << FL_CLASS_INQUIRY));
				json_object_set_new(m, "lba", json_pack("{s:b}", "crosses_end", 1));
				if (json_object_get(m, "class")) {
					o->cls_mask = 1u << FL_CLASS_WRITE;
					json_object_set_new(m, "class", json_pack("[s]", "write"));
				}
			}
			if (o->lun >= 0)
				json_object_set_new(m, "lun", json_integer(o->lun));
			snprintf(sense, sizeof(sense), "MEDIUM_ERROR/0x%02zx/0x%02zx",
				 0x80 + (i >> 8), i & 0xff);
			json_object_set_new(a, "sense", json_string(sense));
			json_array_append_new(rules,
					      json_pack("{s:o, s:o}", "match", m, "action", a));
		}
		json_object_set_new(root, "rules", rules);
		text = json_dumps(root, 0);
		e = engine_ok(text);
		clear_ua(e, 1);
		{
			struct tcmd *t = calloc(1, sizeof(*t));

			tcmd_init(t, 0x00, 0, 0, 1, 1);
			tsubmit(e, t, 1);
			free(t);
		}
		clear_ua(e, 1);
		for (int q = 0; q < 3000; q++) {
			struct tcmd *t = calloc(1, sizeof(*t));
			uint64_t x = fl_prng_next(&g);
			uint8_t op = ops[x % 4];
			uint16_t lun = (uint16_t)((x >> 4) % 2);
			uint64_t lba = (x >> 8) % 21000;
			uint32_t n = 1 + (uint32_t)((x >> 40) % 16);
			struct fl_cdb_info ci;
			long want = -1;

			tcmd_init(t, op, lba, n, (uint64_t)q, 1);
			fl_cdb_decode(t->cmd.cdb, t->cmd.cdb_len, &ci);
			for (size_t i = 0; i < nr && want < 0; i++) {
				const struct orule *o = & or [i];
				uint64_t hi = ci.lba + (ci.nblocks ? ci.nblocks - 1 : 0);

				if (o->lun >= 0 && o->lun != lun)
					continue;
				if (o->opcode >= 0
					? o->opcode != op
					: o->cls_mask && !(o->cls_mask & (1u << class_of(op))))
					continue;
				if (o->lba == 1 &&
				    (!ci.has_lba || ci.lba > o->last || hi < o->first))
					continue;
				if (o->lba == 2 && (!ci.has_lba || hi < nblocks[lun]))
					continue;
				want = (long)i;
			}
			tsubmit(e, t, lun);
			CU_ASSERT_TRUE(twait(t, 1000));
			if (want >= 0) {
				CU_ASSERT_EQUAL(sense_key(&t->cmd), 3);
				CU_ASSERT_EQUAL(sense_asc(&t->cmd), 0x80 + (want >> 8));
				CU_ASSERT_EQUAL(sense_ascq(&t->cmd), want & 0xff);
			} else {
				CU_ASSERT_TRUE(sense_key(&t->cmd) != 3 ||
					       sense_asc(&t->cmd) < 0x80);
			}
			free(t);
		}
		fl_engine_destroy(e);
		free(text);
		json_decref(root);
		free(or);
	}
}

/* ---- every action at rate 0, 1, p, triggered and stateful ---- */

enum kind {
	K_SENSE,
	K_STATUS,
	K_DELAY,
	K_HOLD,
	K_DROP,
	K_DROP_RESP,
	K_SHORT,
	K_CORRUPT,
	K_COUNTER
};

struct act_case {
	const char *name;
	const char *action;
	enum kind kind;
};

static const struct act_case act_cases[] = {
    {"sense", "{\"sense\": \"MEDIUM_ERROR/UNRECOVERED_READ_ERROR\", \"info\": \"lba\"}", K_SENSE},
    {"status", "{\"status\": \"busy\"}", K_STATUS},
    {"delay", "{\"delay_ms\": 1}", K_DELAY},
    {"delay_dist", "{\"delay_ms\": {\"dist\": \"uniform\", \"min\": 0.5, \"max\": 1.5}}", K_DELAY},
    {"hold", "{\"hold\": \"until_release\"}", K_HOLD},
    {"drop", "{\"drop\": true}", K_DROP},
    {"drop_response", "{\"drop_response\": true}", K_DROP_RESP},
    {"late_write", "{\"late_write\": {\"after_ms\": 60000}}", K_HOLD},
    {"short", "{\"short\": {\"blocks\": 2}}", K_SHORT},
    {"corrupt", "{\"corrupt\": {\"bytes\": 1}}", K_CORRUPT},
    {"ua", "{\"ua\": \"2A/09\"}", K_COUNTER},
    {"power_loss", "{\"power_loss\": true}", K_COUNTER},
    {"resize", "{\"resize\": \"64MiB\"}", K_COUNTER},
    {"alua", "{\"alua\": \"active_non_optimized\"}", K_COUNTER},
    {"set_state", "{\"set_state\": \"b\"}", K_COUNTER},
    {"sense_delayed", "{\"sense\": \"NOT_READY/BECOMING_READY\", \"delay_ms\": 1}", K_SENSE},
};

/* Whether the command shows the action's effect (for kinds with a visible one). */
static bool affected(enum kind k, struct tcmd *t, bool done_at_once)
{
	switch (k) {
	case K_SENSE:
		return sense_key(&t->cmd) == 3 || sense_key(&t->cmd) == 2;
	case K_STATUS:
		return t->cmd.status == FL_STATUS_BUSY;
	case K_DELAY:
		/* a delayed command completes on the timer thread, never inline */
		return twait(t, 2000) && !pthread_equal(t->done_thread, pthread_self());
	case K_HOLD:
		return !done_at_once;
	case K_DROP:
		return t->cmd.no_response && t->cmd.data_in_len == 0;
	case K_DROP_RESP:
		return t->cmd.no_response && t->cmd.status == FL_STATUS_GOOD;
	case K_SHORT:
		return t->cmd.data_in_len == 1024 && t->cmd.residual == 3072;
	case K_CORRUPT:
		for (int i = 0; i < 4096; i++)
			if (t->buf[i])
				return true;
		return false;
	default:
		return false;
	}
}

/* Runs n READ(10)s through a rule with `match`; returns which were injected. */
static size_t run_case(const struct act_case *c, const char *match, const char *extra, size_t n,
		       uint64_t seed, bool *inj)
{
	char text[2048];
	struct tcmd *t = calloc(n, sizeof(*t));
	struct fl_engine *e;
	struct fl_engine_counters before, after;
	size_t count = 0;

	snprintf(
	    text, sizeof(text),
	    "{\"faultlun\": 1, \"frontends\": [\"iscsi\"], \"luns\": [{\"size\": \"32MiB\"}],"
	    " \"states\": [\"a\", \"b\"], %s \"rules\": [{\"id\": \"x\", %s \"match\": {\"class\": "
	    "\"read\" %s}, \"action\": %s}]}",
	    extra ? extra
		  : "\"transitions\": [{\"from\": \"b\", \"to\": \"a\", \"on\": {\"commands\": 1}},"
		    " {\"from\": \"a\", \"to\": \"b\", \"on\": {\"tmf\": \"clear_aca\"}}],",
	    extra && strstr(extra, "storm") ? "\"states\": [\"b\"]," : "", match, c->action);
	e = mk_engine(text, seed, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	clear_ua(e, 1);
	for (size_t i = 0; i < n; i++) {
		bool at_once, vis;

		fl_engine_get_counters(e, &before);
		tcmd_init(&t[i], 0x28, (i * 8) % 60000, 8, i, 1);
		tsubmit(e, &t[i], 0);
		at_once = atomic_load(&t[i].done) != 0;
		fl_engine_get_counters(e, &after);
		inj[i] = after.injected > before.injected;
		count += inj[i];
		if (c->kind == K_COUNTER)
			continue;
		if (c->kind == K_SENSE && !at_once)
			twait(&t[i], 2000);
		vis = affected(c->kind, &t[i], at_once);
		if (vis != inj[i])
			fprintf(stderr, "\n%s: command %zu injected=%d visible=%d status=%#x\n",
				c->name, i, inj[i], vis, t[i].cmd.status);
		CU_ASSERT_EQUAL(vis, inj[i]);
	}
	if (c->kind == K_HOLD)
		CU_ASSERT_EQUAL(engine_release(e, true, 0, -1), count);
	for (size_t i = 0; i < n; i++)
		CU_ASSERT_TRUE(twait(&t[i], 2000));
	fl_engine_destroy(e);
	free(t);
	return count;
}

/* Rate 0: nothing; rate 1: everything. */
static void test_actions_rate_0_and_1(void)
{
	static bool inj[300];

	for (size_t k = 0; k < sizeof(act_cases) / sizeof(act_cases[0]); k++) {
		CU_ASSERT_EQUAL(run_case(&act_cases[k], ", \"probability\": 0", NULL, 300, 1, inj),
				0);
		CU_ASSERT_EQUAL(run_case(&act_cases[k], ", \"probability\": 1", NULL, 300, 1, inj),
				300);
		CU_ASSERT_EQUAL(run_case(&act_cases[k], "", NULL, 50, 1, inj), 50);
	}
}

/* A probabilistic rate lands within 5 sigma of n*p. */
static void test_actions_probabilistic(void)
{
	static bool inj[2000];
	const double p = 0.25, n = 2000, sigma = sqrt(n * p * (1 - p));

	for (size_t k = 0; k < sizeof(act_cases) / sizeof(act_cases[0]); k++) {
		size_t got =
		    run_case(&act_cases[k], ", \"probability\": 0.25", NULL, 2000, 1000 + k, inj);

		if (fabs((double)got - n * p) > 5 * sigma)
			fprintf(stderr, "\n%s: %zu of 2000 at p=0.25\n", act_cases[k].name, got);
		CU_ASSERT_TRUE(fabs((double)got - n * p) <= 5 * sigma);
	}
}

/* Triggered: nth, every, after + times hit exactly the commands they name. */
static void test_actions_triggered(void)
{
	static bool inj[60];

	for (size_t k = 0; k < sizeof(act_cases) / sizeof(act_cases[0]); k++) {
		CU_ASSERT_EQUAL(run_case(&act_cases[k], ", \"nth\": 7", NULL, 60, 1, inj), 1);
		CU_ASSERT_TRUE(inj[6]);
		CU_ASSERT_EQUAL(run_case(&act_cases[k], ", \"every\": 10", NULL, 60, 1, inj), 6);
		CU_ASSERT_TRUE(inj[9] && inj[19] && !inj[10]);
		CU_ASSERT_EQUAL(
		    run_case(&act_cases[k], ", \"after\": 5, \"times\": 3", NULL, 60, 1, inj), 3);
		CU_ASSERT_TRUE(!inj[4] && inj[5] && inj[6] && inj[7] && !inj[8]);
	}
}

/* Stateful: a rule scoped to state "storm", entered after 10 commands, 3 times. */
static void test_actions_stateful(void)
{
	static bool inj[40];
	static const char *const tr = "\"transitions\": [{\"from\": \"calm\", \"to\": \"storm\", "
				      "\"on\": {\"commands\": 10}}],";
	char extra[512];

	for (size_t k = 0; k < sizeof(act_cases) / sizeof(act_cases[0]); k++) {
		struct act_case c = act_cases[k];

		/* set_state moves the machine itself: its stateful case is test_state_machine */
		if (!strcmp(c.name, "set_state"))
			continue;
		/* states are [calm, storm]: the run_case template names a, b; override */
		snprintf(extra, sizeof(extra), "%s", tr);
		{
			char text[2048];
			struct tcmd *t = calloc(40, sizeof(*t));
			struct fl_engine *e;
			size_t count = 0;

			snprintf(
			    text, sizeof(text),
			    "{\"faultlun\": 1, \"frontends\": [\"iscsi\"], \"luns\": [{\"size\": "
			    "\"32MiB\"}], \"states\": [\"calm\", \"storm\", \"b\"], %s \"rules\": "
			    "[{\"id\": \"x\", \"states\": [\"storm\"], \"match\": {\"class\": "
			    "\"read\", \"times\": 3}, \"action\": %s}, {\"id\": \"never\", "
			    "\"states\": [\"calm\"], \"match\": {\"class\": \"tur\", \"nth\": "
			    "1000},"
			    " \"action\": {\"set_state\": \"b\"}}]}",
			    extra, c.action);
			int calm;

			e = mk_engine(text, 3, NULL);
			CU_ASSERT_PTR_NOT_NULL_FATAL(e);
			/* clear_ua's TURs count as commands of state calm */
			calm = 10 - clear_ua(e, 1);
			for (size_t i = 0; i < 40; i++) {
				struct fl_engine_counters b, a;

				fl_engine_get_counters(e, &b);
				tcmd_init(&t[i], 0x28, i * 8, 8, i, 1);
				tsubmit(e, &t[i], 0);
				fl_engine_get_counters(e, &a);
				inj[i] = a.injected > b.injected;
				count += inj[i];
			}
			CU_ASSERT_EQUAL(count, 3);
			/* the reads after the tenth command of calm are injected, three times */
			if (!(!inj[calm - 1] && inj[calm] && inj[calm + 1] && inj[calm + 2] &&
			      !inj[calm + 3]))
				fprintf(stderr, "\nstateful %s: calm=%d count=%zu\n", c.name, calm,
					count);
			CU_ASSERT_TRUE(!inj[calm - 1] && inj[calm] && inj[calm + 1] &&
				       inj[calm + 2] && !inj[calm + 3]);
			engine_release(e, true, 0, -1);
			for (size_t i = 0; i < 40; i++)
				twait(&t[i], 2000);
			fl_engine_destroy(e);
			free(t);
		}
	}
}

/* ---- determinism ---- */

/* Same seed, same commands: same injections; another seed: others. */
static void test_determinism_by_seed(void)
{
	static bool a[1000], b[1000], c[1000];
	const struct act_case *sense = &act_cases[0];

	run_case(sense, ", \"probability\": 0.5", NULL, 1000, 12345, a);
	run_case(sense, ", \"probability\": 0.5", NULL, 1000, 12345, b);
	run_case(sense, ", \"probability\": 0.5", NULL, 1000, 54321, c);
	CU_ASSERT_EQUAL(memcmp(a, b, sizeof(a)), 0);
	CU_ASSERT_NOT_EQUAL(memcmp(a, c, sizeof(a)), 0);
}

/* ---- specific behaviours ---- */

/* "until": "written": the bad range fails with INFORMATION = LBA until rewritten. */
static void test_until_written(void)
{
	struct fl_engine *e = ready_engine(
	    ISCSI_1MIB
	    " \"rules\": [{\"id\": \"bad\", \"match\": {\"class\": \"read\", \"lba\": {\"first\": "
	    "100,"
	    " \"last\": 103}}, \"action\": {\"sense\": \"MEDIUM_ERROR/UNRECOVERED_READ_ERROR\","
	    " \"info\": \"lba\"}, \"until\": \"written\"}]}");
	struct tcmd *t = calloc(1, sizeof(*t));

	trun(e, t, 0x28, 96, 8, 1, 1);
	CU_ASSERT_EQUAL(sense_key(&t->cmd), 3);
	CU_ASSERT_EQUAL(sense_asc(&t->cmd), 0x11);
	CU_ASSERT_EQUAL(sense_info(&t->cmd), 100);
	/* rewrite 100..101: the first bad LBA is now 102 */
	trun(e, t, 0x2a, 100, 2, 2, 1);
	CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_GOOD);
	trun(e, t, 0x28, 96, 8, 3, 1);
	CU_ASSERT_EQUAL(sense_info(&t->cmd), 102);
	trun(e, t, 0x28, 100, 2, 4, 1);
	CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_GOOD);
	/* a write the rule itself fails does not heal: reads only are matched here */
	trun(e, t, 0x2a, 102, 2, 5, 1);
	trun(e, t, 0x28, 96, 8, 6, 1);
	CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_GOOD);
	fl_engine_destroy(e);
	free(t);
}

/* service_action: GET LBA STATUS fails, READ CAPACITY (16) (the same opcode) does not. */
static void test_service_action(void)
{
	struct fl_engine *e = ready_engine(
	    ISCSI_1MIB " \"rules\": [{\"id\": \"gls\", \"match\": {\"opcode\": \"0x9e\","
		       " \"service_action\": 18}, \"action\": {\"sense\": \"MEDIUM_ERROR/11/00\"}}]}");
	struct tcmd *t = calloc(1, sizeof(*t));

	for (int sa = 0x10; sa <= 0x12; sa += 2) {
		tcmd_init(t, 0x9e, 0, 0, (uint64_t)sa, 1);
		memset(t->cmd.cdb, 0, sizeof(t->cmd.cdb));
		t->cmd.cdb[0] = 0x9e;
		t->cmd.cdb[1] = (uint8_t)sa;
		t->cmd.cdb[13] = 32; /* allocation length */
		t->cmd.cdb_len = 16;
		t->cmd.data_in = t->buf;
		t->cmd.data_in_cap = 32;
		tsubmit(e, t, 0);
		CU_ASSERT_TRUE(twait(t, 2000));
		if (sa == 0x10) {
			CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_GOOD);
		} else {
			CU_ASSERT_EQUAL(sense_asc(&t->cmd), 0x11);
		}
	}
	fl_engine_destroy(e);
	free(t);
}

/* Transitions: commands, after_ms, write_beyond; the state scopes rules. */
static void test_state_machine(void)
{
	struct fl_engine *e = engine_ok(
	    ISCSI_1MIB
	    " \"states\": [\"s0\", \"s1\", \"s2\", \"s3\"],"
	    " \"transitions\": [{\"from\": \"s0\", \"to\": \"s1\", \"on\": {\"commands\": 3}},"
	    "  {\"from\": \"s1\", \"to\": \"s2\", \"on\": {\"after_ms\": 30}},"
	    "  {\"from\": \"s2\", \"to\": \"s3\", \"on\": {\"write_beyond\": 1000}}],"
	    " \"rules\": [{\"states\": [\"s3\"], \"match\": {\"class\": \"write\"},"
	    "  \"action\": {\"sense\": \"DATA_PROTECT/SPACE_ALLOCATION_FAILED_WRITE_PROTECT\"}}]}");
	struct tcmd *t = calloc(1, sizeof(*t));
	uint64_t t0;

	CU_ASSERT_STRING_EQUAL(fl_engine_state(e), "s0");
	clear_ua(e, 1);
	for (int i = 0; i < 2; i++) {
		trun(e, t, 0x00, 0, 0, 1, 1);
	}
	CU_ASSERT_STRING_EQUAL(fl_engine_state(e), "s1");
	t0 = fl_mono_ns();
	while (strcmp(fl_engine_state(e), "s2") && fl_mono_ns() - t0 < 2000000000ull)
		usleep(200);
	CU_ASSERT_STRING_EQUAL(fl_engine_state(e), "s2");
	CU_ASSERT_TRUE(fl_mono_ns() - t0 >= 25000000ull);
	trun(e, t, 0x2a, 10, 8, 2, 1);
	CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_GOOD);
	CU_ASSERT_STRING_EQUAL(fl_engine_state(e), "s2");
	/* the write that crosses the threshold already meets state s3 */
	trun(e, t, 0x2a, 996, 8, 3, 1);
	CU_ASSERT_STRING_EQUAL(fl_engine_state(e), "s3");
	CU_ASSERT_EQUAL(sense_key(&t->cmd), 7);
	CU_ASSERT_EQUAL(sense_asc(&t->cmd), 0x27);
	CU_ASSERT_EQUAL(sense_ascq(&t->cmd), 0x07);
	fl_engine_destroy(e);
	free(t);
}

/* Delays complete on time: median lateness well under a millisecond. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_delay_accuracy(void)
{
	enum { N = 200 };
	struct fl_engine *e = ready_engine(
	    ISCSI_1MIB
	    " \"rules\": [{\"match\": {\"class\": \"read\"}, \"action\": {\"delay_ms\": 2}}]}");
	struct tcmd *t = calloc(N, sizeof(*t));
	int64_t late[N];

	/* a loaded machine (parallel tests) may delay a wake-up: the best of 3 runs counts */
	for (int attempt = 0; attempt < 3; attempt++) {
		for (int i = 0; i < N; i++) {
			tcmd_init(&t[i], 0x28, 0, 1, i, 1);
			tsubmit(e, &t[i], 0);
			CU_ASSERT_TRUE_FATAL(twait(&t[i], 1000));
			late[i] = (int64_t)(t[i].done_ns - t[i].submit_ns) - 2000000;
			CU_ASSERT_TRUE(late[i] >= 0);
		}
		qsort(late, N, sizeof(late[0]), cmp_i64);
		fprintf(stderr,
			"\ndelay 2 ms: lateness median %" PRId64 " us, p90 %" PRId64 " us\n",
			late[N / 2] / 1000, late[N * 9 / 10] / 1000);
		if (late[N / 2] < 500000)
			break;
	}
	CU_ASSERT_TRUE(late[N / 2] < 500000);
	fl_engine_destroy(e);
	free(t);
}

/* A sense action on reads or writes of LBA 100, and whether the command still executes. */
static const struct {
	const char *klass, *sense;
	int key;
	bool executes;
} sense_exec_cases[] = {
    {"read", "RECOVERED_ERROR/RECOVERED_DATA_WITH_RETRIES", 0x1, true},
    {"read", "COMPLETED/00/00", 0xf, true},
    {"read", "MEDIUM_ERROR/UNRECOVERED_READ_ERROR", 0x3, false},
    {"write", "RECOVERED_ERROR/WRITE_ERROR_RECOVERED_WITH_AUTO_REALLOCATION", 0x1, true},
    {"write", "MEDIUM_ERROR/11/00", 0x3, false},
};

/*
 * RECOVERED ERROR and COMPLETED report on a command that succeeded: it runs
 * and moves all its data, then answers CHECK CONDITION with the sense. Other
 * keys end it without running it (a read returns no data, a write changes nothing).
 */
static void test_sense_after_exec(void)
{
	for (size_t i = 0; i < sizeof(sense_exec_cases) / sizeof(sense_exec_cases[0]); i++) {
		char text[1024];
		bool rd = !strcmp(sense_exec_cases[i].klass, "read");
		struct tcmd *t = calloc(1, sizeof(*t));

		snprintf(text, sizeof(text),
			 "{\"faultlun\": 1, \"frontends\": [\"iscsi\"], \"luns\": [{\"size\": "
			 "\"1MiB\"}], \"rules\": [{\"match\": {\"class\": \"%s\", \"lba\": "
			 "{\"first\": 100, \"last\": 100}}, \"action\": {\"sense\": \"%s\"}}]}",
			 sense_exec_cases[i].klass, sense_exec_cases[i].sense);
		struct fl_engine *e = mk_engine(text, 1, NULL);
		CU_ASSERT_PTR_NOT_NULL_FATAL(e);
		CU_ASSERT_PTR_NOT_NULL_FATAL(t);
		clear_ua(e, 1);
		/* LBA 100 holds 0x5a (written unmatched when the rule is a read rule) */
		tcmd_init(t, 0x2a, 100, 1, 1, 1);
		memset(t->buf, 0x5a, 512);
		tsubmit(e, t, 0);
		CU_ASSERT_TRUE_FATAL(twait(t, 1000));
		if (rd) {
			CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_GOOD);
		} else {
			CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_CHECK_CONDITION);
			CU_ASSERT_EQUAL(sense_key(&t->cmd), sense_exec_cases[i].key);
		}
		/* the read: through the rule when it is a read rule */
		trun(e, t, 0x28, 100, 1, 2, 1);
		CU_ASSERT_TRUE_FATAL(twait(t, 1000));
		bool has = t->cmd.data_in_len == 512 && t->buf[0] == 0x5a && t->buf[511] == 0x5a;
		if (rd) {
			CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_CHECK_CONDITION);
			CU_ASSERT_EQUAL(sense_key(&t->cmd), sense_exec_cases[i].key);
			CU_ASSERT_EQUAL(has, sense_exec_cases[i].executes);
			if (!sense_exec_cases[i].executes)
				CU_ASSERT_EQUAL(t->cmd.data_in_len, 0);
		} else {
			CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_GOOD);
			CU_ASSERT_EQUAL(has, sense_exec_cases[i].executes);
		}
		fl_engine_destroy(e);
		free(t);
	}
}

/* Counts kicks of an adopting loop. */
static void count_kick(void *arg)
{
	atomic_fetch_add((atomic_int *)arg, 1);
}

/*
 * A loop that adopts the timers fires delays itself, on its own thread: the
 * engine's thread no longer does; the loop is kicked when an earlier deadline
 * appears; one adopter at a time; after release the engine's thread is back.
 */
static void test_timers_adopted(void)
{
	/* LBA 2 waits 500 ms: not yet due however slow the machine is; the rest 3 ms */
	struct fl_engine *e = engine_ok(
	    ISCSI_1MIB
	    " \"rules\": [{\"match\": {\"class\": \"read\", \"lba\": {\"first\": 2, \"last\": 2}},"
	    " \"action\": {\"delay_ms\": 500}},"
	    " {\"match\": {\"class\": \"read\"}, \"action\": {\"delay_ms\": 3}}]}");
	struct tcmd *t = calloc(2, sizeof(*t));
	atomic_int kicks = 0;
	unsigned fired = 99;

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	clear_ua(e, 1);
	CU_ASSERT_EQUAL(fl_engine_timers_adopt(e, count_kick, &kicks), 0);
	CU_ASSERT_EQUAL(fl_engine_timers_adopt(e, count_kick, &kicks), -EBUSY);
	CU_ASSERT_EQUAL(fl_engine_timers_run(e, &fired), UINT64_MAX);
	CU_ASSERT_EQUAL(fired, 0);
	tcmd_init(&t[0], 0x28, 0, 1, 1, 1);
	tsubmit(e, &t[0], 0);
	CU_ASSERT_EQUAL(atomic_load(&kicks), 1);
	/* nobody else fires it: still pending well after its deadline */
	usleep(20000);
	CU_ASSERT_EQUAL(atomic_load(&t[0].done), 0);
	uint64_t next = fl_engine_timers_run(e, &fired);
	CU_ASSERT_EQUAL(fired, 1);
	CU_ASSERT_EQUAL(next, UINT64_MAX);
	CU_ASSERT_EQUAL(atomic_load(&t[0].done), 1);
	CU_ASSERT_TRUE(pthread_equal(t[0].done_thread, pthread_self()));
	CU_ASSERT_EQUAL(t[0].cmd.status, FL_STATUS_GOOD);
	/* a deadline not yet due is reported, not fired */
	tcmd_init(&t[1], 0x28, 2, 1, 2, 1);
	tsubmit(e, &t[1], 0);
	uint64_t submitted = fl_mono_ns(); /* the engine read its clock between the two */
	next = fl_engine_timers_run(e, &fired);
	CU_ASSERT_EQUAL(fired, 0);
	CU_ASSERT_TRUE(next >= t[1].submit_ns + 500000000 && next <= submitted + 500000000);
	/* handed back: the engine's own thread fires it */
	CU_ASSERT_EQUAL(fl_engine_timers_release(e), 0);
	CU_ASSERT_TRUE(twait(&t[1], 1000));
	CU_ASSERT_FALSE(pthread_equal(t[1].done_thread, pthread_self()));
	CU_ASSERT_EQUAL(t[1].cmd.status, FL_STATUS_GOOD);
	fl_engine_destroy(e);
	free(t);
}

/* Counts completions of plain commands. */
static void count_done(struct fl_cmd *cmd)
{
	atomic_fetch_add((atomic_int *)cmd->priv, 1);
}

/* Thousands of holds; a hold costs one small record; releasing runs them all. */
static void test_many_holds(void)
{
	enum { N = 5000 };
	struct fl_engine *e = ready_engine(
	    ISCSI_1MIB
	    " \"rules\": [{\"match\": {\"class\": \"read\"}, \"action\": {\"hold\": "
	    "\"forever\"}}]}");
	struct fl_cmd *c = calloc(N, sizeof(*c));
	struct fl_engine_counters k;
	static atomic_int ndone;

	atomic_store(&ndone, 0);
	for (int i = 0; i < N; i++) {
		c[i].cdb[0] = 0x28;
		c[i].cdb[8] = 0; /* zero blocks: nothing to transfer */
		c[i].cdb_len = 10;
		c[i].nexus.id = 1;
		c[i].tag = (uint64_t)i;
	}
	for (int i = 0; i < N; i++) {
		c[i].done = count_done;
		c[i].priv = &ndone;
		fl_engine_submit(e, 0, &c[i]);
	}
	fl_engine_get_counters(e, &k);
	CU_ASSERT_EQUAL(k.held, N);
	CU_ASSERT_EQUAL(atomic_load(&ndone), 0);
	CU_ASSERT_EQUAL(e->npending, N);
	CU_ASSERT_TRUE(sizeof(struct pend) <= 256);
	CU_ASSERT_EQUAL(engine_release(e, false, 17, -1), 1);
	CU_ASSERT_EQUAL(atomic_load(&ndone), 1);
	CU_ASSERT_EQUAL(c[17].status, FL_STATUS_GOOD);
	fl_engine_destroy(e); /* the rest complete as aborted */
	CU_ASSERT_EQUAL(atomic_load(&ndone), N);
	CU_ASSERT_TRUE(c[18].aborted && c[18].no_response);
	free(c);
}

/* The trace: a first line with the seed, one line per injection naming the rule. */
static void test_trace(void)
{
	char path[] = "/tmp/faultlun-trace-XXXXXX", line[4096];
	int fd = mkstemp(path);
	struct fl_engine *e;
	struct tcmd *t = calloc(1, sizeof(*t));
	FILE *f;
	int n = 0, injects = 0;

	CU_ASSERT_TRUE_FATAL(fd >= 0);
	close(fd);
	e = mk_engine(
	    ISCSI_1MIB
	    " \"rules\": [{\"id\": \"every-2nd\", \"match\": {\"class\": \"read\", \"every\": 2},"
	    " \"action\": {\"status\": \"task_set_full\"}}]}",
	    987654321, path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	clear_ua(e, 1);
	for (int i = 0; i < 6; i++) {
		trun(e, t, 0x28, 40 + i, 1, 100 + i, 1);
	}
	fl_engine_destroy(e);
	f = fopen(path, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	while (fgets(line, sizeof(line), f)) {
		json_error_t err;
		json_t *o = json_loads(line, 0, &err);

		CU_ASSERT_PTR_NOT_NULL_FATAL(o);
		CU_ASSERT_TRUE(json_is_integer(json_object_get(o, "t_us")));
		if (n == 0) {
			CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "event")),
					       "start");
			CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "seed")), 987654321);
		}
		if (!strcmp(json_string_value(json_object_get(o, "event")), "inject")) {
			injects++;
			CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "rule")),
					       "every-2nd");
			CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "action")),
					       "status");
			CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "opcode")),
					       "0x28");
			CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "lun")), 0);
			CU_ASSERT_EQUAL(json_integer_value(json_object_get(o, "lba")),
					40 + 2 * injects - 1);
			CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "initiator")),
					       "iqn.2026-12.org.faultlun:test");
		}
		json_decref(o);
		n++;
	}
	CU_ASSERT_EQUAL(injects, 3);
	fclose(f);
	unlink(path);
	free(t);
}

/* Replace is atomic: new rules apply at once, held commands stay held, state restarts. */
static void test_replace(void)
{
	struct fl_engine *e = ready_engine(
	    ISCSI_1MIB
	    " \"states\": [\"x\", \"y\"], \"transitions\": [{\"to\": \"y\", \"on\": {\"commands\": "
	    "2}}],"
	    " \"rules\": [{\"id\": \"h\", \"match\": {\"class\": \"read\", \"nth\": 1},"
	    " \"action\": {\"hold\": \"until_release\"}}]}");
	struct tcmd *held = calloc(1, sizeof(*held)), *t = calloc(1, sizeof(*t));
	struct fl_diags d = {0};
	struct fl_scenario *sc2 = NULL;

	tcmd_init(held, 0x28, 0, 1, 1, 1);
	tsubmit(e, held, 0);
	CU_ASSERT_FALSE(atomic_load(&held->done));
	CU_ASSERT_STRING_EQUAL(fl_engine_state(e), "y");
	CU_ASSERT_EQUAL(
	    fl_scenario_load_string(
		"b.json",
		"{\"faultlun\": 1, \"states\": [\"p\"], \"rules\": [{\"id\": \"busy\","
		" \"match\": {\"class\": \"read\"}, \"action\": {\"status\": \"busy\"}}]}",
		0, &sc2, &d),
	    0);
	CU_ASSERT_EQUAL(fl_engine_replace(e, sc2), 0);
	fl_scenario_free(sc2);
	CU_ASSERT_STRING_EQUAL(fl_engine_state(e), "p");
	trun(e, t, 0x28, 0, 1, 2, 1);
	CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_BUSY);
	CU_ASSERT_FALSE(atomic_load(&held->done));
	CU_ASSERT_EQUAL(engine_release(e, true, 0, -1), 1);
	CU_ASSERT_TRUE(twait(held, 1000));
	CU_ASSERT_EQUAL(held->cmd.status, FL_STATUS_GOOD);
	fl_engine_destroy(e);
	fl_diags_free(&d);
	free(held);
	free(t);
}

/* Power loss drops unsynced writes (write cache on) and the trace lists them. */
static void test_power_loss_action(void)
{
	struct fl_engine *e = ready_engine(
	    "{\"faultlun\": 1, \"frontends\": [\"iscsi\"], \"luns\": [{\"size\": \"1MiB\","
	    " \"write_cache\": true}], \"rules\": [{\"id\": \"pl\", \"match\": {\"opcode\":"
	    " \"0x25\"}, \"action\": {\"power_loss\": true}}]}");
	struct tcmd *t = calloc(1, sizeof(*t));

	tcmd_init(t, 0x2a, 50, 4, 1, 1);
	memset(t->buf, 0xab, 2048);
	tsubmit(e, t, 0);
	CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_GOOD);
	/* READ CAPACITY(10) carries the power loss, then meets its UA 29/xx itself */
	tcmd_init(t, 0x25, 0, 0, 2, 1);
	t->cmd.data_in = t->buf;
	t->cmd.data_in_cap = 8;
	tsubmit(e, t, 0);
	CU_ASSERT_EQUAL(sense_key(&t->cmd), 6);
	CU_ASSERT_EQUAL(sense_asc(&t->cmd), 0x29);
	clear_ua(e, 1);
	trun(e, t, 0x28, 50, 4, 3, 1);
	CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_GOOD);
	CU_ASSERT_EQUAL(t->buf[0], 0); /* the cached write is gone */
	fl_engine_destroy(e);
	free(t);
}

/* window_ms, initiator globs, per-LUN rules, sense formats and set_state. */
static void test_match_details(void)
{
	struct fl_engine *e = ready_engine(
	    "{\"faultlun\": 1, \"frontends\": [\"iscsi\"], \"luns\": [{\"size\": \"1MiB\"},"
	    " {\"lun\": 3, \"size\": \"1MiB\", \"d_sense\": true}], \"states\": [\"s\", \"t\"],"
	    " \"rules\": ["
	    "  {\"id\": \"late\", \"match\": {\"class\": \"tur\", \"window_ms\": [60, null]},"
	    "   \"action\": {\"status\": \"busy\"}},"
	    "  {\"id\": \"other-host\", \"match\": {\"class\": \"read\", \"initiator\": "
	    "\"*:other\"},"
	    "   \"action\": {\"status\": \"reservation_conflict\"}},"
	    "  {\"id\": \"desc\", \"match\": {\"lun\": 0, \"class\": \"read\", \"lba\": "
	    "{\"first\": 5}},"
	    "   \"action\": {\"sense\": \"MEDIUM_ERROR/11/00\", \"info\": \"lba\", \"format\": "
	    "\"descriptor\"}},"
	    "  {\"id\": \"lun3\", \"match\": {\"lun\": 3, \"class\": \"read\", \"lba\": "
	    "{\"first\": 5}},"
	    "   \"action\": {\"sense\": \"HARDWARE_ERROR/44/00\", \"format\": \"fixed\", "
	    "\"info\": \"lba\", \"set_state\": \"t\"}}]}");
	struct tcmd *t = calloc(1, sizeof(*t));

	/* before the window opens */
	trun(e, t, 0x00, 0, 0, 1, 1);
	CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_GOOD);
	/* initiator glob: the test's own name does not match */
	trun(e, t, 0x28, 0, 1, 2, 1);
	CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_GOOD);
	tcmd_init(t, 0x28, 0, 1, 3, 2);
	t->cmd.nexus.initiator = "iqn.2026-12.org.x:other";
	clear_ua(e, 2);
	tsubmit(e, t, 0);
	CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_RESERVATION_CONFLICT);
	/* descriptor format with an information descriptor (SPC-4 4.5.2.2) */
	trun(e, t, 0x28, 4, 4, 4, 1);
	CU_ASSERT_EQUAL(t->cmd.sense[0], 0x72);
	CU_ASSERT_EQUAL(sense_key(&t->cmd), 3);
	CU_ASSERT_EQUAL(t->cmd.sense[8], 0x00);
	CU_ASSERT_EQUAL(t->cmd.sense[10] & 0x80, 0x80);
	CU_ASSERT_EQUAL(t->cmd.sense[19], 5);
	/* LUN 3 uses descriptor sense, the rule asks for fixed; and moves the state */
	clear_ua(e, 1);
	{
		struct tcmd *u = calloc(1, sizeof(*u));

		for (int i = 0; i < 4; i++) {
			tsubmit(e, (tcmd_init(u, 0x00, 0, 0, 5, 1), u), 3);
			if (u->cmd.status == FL_STATUS_GOOD)
				break;
		}
		tsubmit(e, (tcmd_init(u, 0x28, 5, 1, 6, 1), u), 3);
		CU_ASSERT_EQUAL(u->cmd.sense[0] & 0x7f, 0x70);
		CU_ASSERT_EQUAL(sense_key(&u->cmd), 4);
		CU_ASSERT_EQUAL(sense_asc(&u->cmd), 0x44);
		CU_ASSERT_EQUAL(sense_info(&u->cmd), 5);
		CU_ASSERT_STRING_EQUAL(fl_engine_state(e), "t");
		free(u);
	}
	/* after 60 ms the window is open */
	usleep(70000);
	trun(e, t, 0x00, 0, 0, 7, 1);
	CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_BUSY);
	fl_engine_destroy(e);
	free(t);
}

/* Delay distributions: empirical median / p99 / mean near what the scenario asked. */
static void test_delay_distributions(void)
{
	enum { N = 20001 };
	static double v[N];
	struct fl_prng g;
	struct sc_delay logn = {
	    .dist = DIST_LOGNORMAL, .a = log(2.0), .b = (log(50.0) - log(2.0)) / 2.3263478740};
	struct sc_delay expo = {.dist = DIST_EXPONENTIAL, .a = 3.0};
	struct sc_delay uni = {.dist = DIST_UNIFORM, .a = 1.0, .b = 3.0};
	double sum = 0;

	fl_prng_seed(&g, 5, 0);
	for (int i = 0; i < N; i++)
		v[i] = (double)delay_draw(&logn, &g) / 1e6;
	qsort(v, N, sizeof(v[0]), cmp_double);
	CU_ASSERT_DOUBLE_EQUAL(v[N / 2], 2.0, 0.2);
	CU_ASSERT_DOUBLE_EQUAL(v[N * 99 / 100], 50.0, 10.0);
	for (int i = 0; i < N; i++)
		sum += (double)delay_draw(&expo, &g) / 1e6;
	CU_ASSERT_DOUBLE_EQUAL(sum / N, 3.0, 0.15);
	for (int i = 0; i < N; i++) {
		double x = (double)delay_draw(&uni, &g) / 1e6;

		CU_ASSERT_TRUE(x >= 1.0 && x <= 3.0);
	}
}

/* Store and size overrides; a LUN the scenario lacks answers through the target. */
static void test_engine_options(void)
{
	struct fl_diags d = {0};
	struct fl_scenario *sc = NULL;
	char base[] = "/tmp/faultlun-store-XXXXXX", p0[64], p1[64];
	int fd = mkstemp(base);
	struct fl_engine_opts o = {.store_override = true,
				   .store = FL_STORE_FILE,
				   .store_path = base,
				   .size_override = 2 << 20};
	struct fl_engine *e = NULL;
	struct fl_lun_info info;
	struct tcmd *t = calloc(1, sizeof(*t));

	CU_ASSERT_TRUE_FATAL(fd >= 0);
	close(fd);
	CU_ASSERT_EQUAL_FATAL(
	    fl_scenario_load_string("o.json",
				    "{\"faultlun\": 1, \"luns\": [{\"size\": \"1MiB\"},"
				    " {\"lun\": 1, \"size\": \"1MiB\"}]}",
				    0, &sc, &d),
	    0);
	CU_ASSERT_EQUAL_FATAL(fl_engine_create(sc, &o, &e), 0);
	fl_scenario_free(sc);
	snprintf(p0, sizeof(p0), "%s.0", base);
	snprintf(p1, sizeof(p1), "%s.1", base);
	CU_ASSERT_EQUAL(access(p0, F_OK), 0);
	CU_ASSERT_EQUAL(access(p1, F_OK), 0);
	fl_lun_get_info(fl_target_lun(fl_engine_target(e), 1), &info);
	CU_ASSERT_EQUAL(info.num_blocks, 4096);
	CU_ASSERT_TRUE(fl_engine_seed(e) < (1ull << 53)); /* a fresh seed */
	tcmd_init(t, 0x00, 0, 0, 1, 1);
	tsubmit(e, t, 9);
	CU_ASSERT_TRUE(twait(t, 2000));
	CU_ASSERT_EQUAL(sense_key(&t->cmd), 5);
	CU_ASSERT_EQUAL(sense_asc(&t->cmd), 0x25);
	fl_engine_destroy(e);
	unlink(base);
	unlink(p0);
	unlink(p1);
	free(t);
}

/* READ(10) of 2 blocks at LBA 0, tag `tag`, whose carried decode says LBA `lba`; waits. */
static void read_decoded_as(struct fl_engine *e, struct tcmd *t, uint64_t tag, uint64_t lba)
{
	tcmd_init(t, 0x28, 0, 2, tag, 1);
	fl_cmd_decode(&t->cmd);
	t->cmd.info.lba = lba;
	tsubmit(e, t, 0);
	CU_ASSERT_TRUE(twait(t, 1000));
}

/*
 * A CDB is decoded once per command: whoever needs it first (here the engine,
 * or a front end before it) decodes it into the command, and the rules and
 * the core use that decode. Counted with the core's decode counter (the
 * memory store completes inline, and nothing else decodes meanwhile).
 */
static void test_cdb_decoded_once(void)
{
	struct fl_engine *e = ready_engine(
	    ISCSI_1MIB
	    " \"rules\": [{\"id\": \"bad\", \"match\": {\"class\": \"read\","
	    "  \"lba\": {\"first\": 100, \"last\": 199}},"
	    "  \"action\": {\"sense\": \"MEDIUM_ERROR/11/00\"}},"
	    " {\"id\": \"cut\", \"match\": {\"class\": \"read\","
	    "  \"lba\": {\"first\": 200, \"last\": 299}},"
	    "  \"action\": {\"short\": {\"blocks\": 1}}}]}");
	struct tcmd *t = calloc(1, sizeof(*t));
	uint64_t n;

	/* no rule, a rule answering before the LUN, a rule after it: one decode each */
	for (uint64_t lba = 0; lba <= 200; lba += 100) {
		tcmd_init(t, 0x28, lba, 2, lba, 1);
		n = fl_cdb_decode_count();
		tsubmit(e, t, 0);
		CU_ASSERT_TRUE(twait(t, 1000));
		CU_ASSERT_EQUAL(fl_cdb_decode_count() - n, 1);
		CU_ASSERT_FALSE(t->cmd.decoded); /* a reused fl_cmd is decoded again */
	}
	/* a front end that decoded first: neither the engine nor the core decodes again */
	tcmd_init(t, 0x28, 0, 2, 7, 1);
	n = fl_cdb_decode_count();
	fl_cmd_decode(&t->cmd);
	tsubmit(e, t, 0);
	CU_ASSERT_TRUE(twait(t, 1000));
	CU_ASSERT_EQUAL(fl_cdb_decode_count() - n, 1);
	CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_GOOD);
	/* the carried decode is what the rules match: it says LBA 150 although the CDB says 0 */
	read_decoded_as(e, t, 8, 150);
	CU_ASSERT_EQUAL(sense_key(&t->cmd), FL_KEY_MEDIUM_ERROR);
	/* and what the core executes: LBA 4096 is past the end of the 2048-block LUN */
	read_decoded_as(e, t, 9, 4096);
	CU_ASSERT_EQUAL(sense_key(&t->cmd), FL_KEY_ILLEGAL_REQUEST);
	CU_ASSERT_EQUAL(sense_asc(&t->cmd), 0x21);
	fl_engine_destroy(e);
	free(t);
}

/* The first byte of LBA lba as nexus `nexus` reads it (READ(10), one block); -1 on failure. */
static int late_read(struct fl_engine *e, uint64_t lba, uint64_t nexus)
{
	struct tcmd *t = calloc(1, sizeof(*t));
	int v = -1;

	if (!t)
		return -1;
	for (int i = 0; i < 4; i++) { /* a unit attention comes first: read again */
		trun(e, t, 0x28, lba, 1, 500 + (uint64_t)i, nexus);
		if (twait(t, 2000) && t->cmd.status == FL_STATUS_GOOD) {
			v = t->buf[0];
			break;
		}
	}
	free(t);
	return v;
}

/* A WRITE(10) of one block of `fill` at lba on nexus, answered GOOD. */
static bool late_plain_write(struct fl_engine *e, uint64_t lba, uint8_t fill, uint64_t nexus)
{
	struct tcmd *t = calloc(1, sizeof(*t));
	bool ok = false;

	for (int i = 0; t && i < 4 && !ok; i++) {
		tcmd_init(t, 0x2a, lba, 1, 600 + (uint64_t)i, nexus);
		memset(t->buf, fill, 512);
		tsubmit(e, t, 0);
		ok = twait(t, 2000) && t->cmd.status == FL_STATUS_GOOD;
	}
	free(t);
	return ok;
}

/* TMF completion for the late-write tests. */
static void late_tmf_done(struct fl_tmf *tmf, enum fl_tmf_resp resp)
{
	*(int *)tmf->priv = (int)resp + 1;
}

/* Whether the trace at path holds a line with every one of the strings. */
static bool late_traced(const char *path, const char *a, const char *b, const char *c)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen(path, "r");

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, a) && strstr(line, b) && (!c || strstr(line, c));
	if (f)
		fclose(f);
	return found;
}

/*
 * late_write: the held write's data is not on the medium before after_ms,
 * not after an ABORT TASK, not after a rewrite through another nexus; it
 * lands at after_ms over the rewrite, from a copy (the initiator's buffer
 * is reused after the abort), and the trace says when and where.
 */
static void test_late_write_after_ms(void)
{
	char path[] = "/tmp/fl-late-trace-XXXXXX", text[1024];
	int fd = mkstemp(path), tmf_done = 0, before = -1, v = -1;
	struct tcmd *w = calloc(1, sizeof(*w));
	struct fl_tmf tmf = {0};
	struct fl_engine *e;
	uint64_t t0, waited_ms;
	const uint64_t after_ms = 1500;

	CU_ASSERT_TRUE_FATAL(fd >= 0 && w);
	close(fd);
	snprintf(text, sizeof(text),
		 ISCSI_1MIB
		 " \"rules\": [{\"id\": \"stale\", \"match\": {\"class\": \"write\", \"nth\": 2},"
		 " \"action\": {\"late_write\": {\"after_ms\": %" PRIu64 "}}}]}",
		 after_ms);
	e = mk_engine(text, 1, path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	clear_ua(e, 1);
	CU_ASSERT_TRUE(late_plain_write(e, 10, 0x11, 1)); /* write 1: the old data */
	tcmd_init(w, 0x2a, 10, 1, 42, 1);		   /* write 2: held, late */
	memset(w->buf, 0x22, 512);
	t0 = fl_mono_ns();
	tsubmit(e, w, 0);
	CU_ASSERT_FALSE(twait(w, 50));
	before = late_read(e, 10, 1);
	/* the initiator gives up: ABORT TASK ends the command, its buffer goes */
	tmf = (struct fl_tmf){.fn = FL_TMF_ABORT_TASK,
			      .lun_id = 0,
			      .nexus_id = 1,
			      .ref_tag = 42,
			      .task_exists = true,
			      .done = late_tmf_done,
			      .priv = &tmf_done};
	fl_engine_tmf(e, &tmf);
	CU_ASSERT_EQUAL(tmf_done, FL_TMF_RESP_COMPLETE + 1);
	CU_ASSERT_TRUE(twait(w, 1000));
	CU_ASSERT_TRUE(w->cmd.aborted && w->cmd.no_response);
	memset(w->buf, 0x99, sizeof(w->buf));
	/* the host rewrites the block through another path (nexus 2) */
	clear_ua(e, 2);
	CU_ASSERT_TRUE(late_plain_write(e, 10, 0x33, 2));
	v = late_read(e, 10, 2);
	waited_ms = (fl_mono_ns() - t0) / 1000000;
	if (waited_ms < after_ms) { /* a machine this slow cannot tell before from after */
		CU_ASSERT_EQUAL(before, 0x11);
		CU_ASSERT_EQUAL(v, 0x33);
	}
	/* after after_ms the abandoned write's data lands over the rewrite */
	for (int i = 0; i < 100 && v != 0x22; i++) {
		usleep(50000);
		v = late_read(e, 10, 2);
	}
	waited_ms = (fl_mono_ns() - t0) / 1000000;
	CU_ASSERT_EQUAL(v, 0x22);
	CU_ASSERT_TRUE(waited_ms >= after_ms);
	CU_ASSERT_EQUAL(late_read(e, 11, 2), 0); /* only its own range */
	fl_engine_destroy(e);
	CU_ASSERT_TRUE(late_traced(path, "\"event\":\"inject\"", "\"action\":\"late_write\"", NULL));
	CU_ASSERT_TRUE(late_traced(path, "\"event\":\"late_write\"", "\"why\":\"after_ms\"", NULL));
	CU_ASSERT_TRUE(
	    late_traced(path, "\"event\":\"late_write\"", "\"landed\":true", "\"lba\":10"));
	unlink(path);
	free(w);
}

/*
 * late_write with on_close: the data lands when the command's connection
 * closes (long before after_ms); a command beyond the cap of pending late
 * writes stays held but its data never lands.
 */
static void test_late_write_on_close_and_cap(void)
{
	char path[] = "/tmp/fl-late-trace-XXXXXX";
	int fd = mkstemp(path);
	const size_t n = FL_LATE_MAX + 1;
	struct tcmd *w = calloc(n, sizeof(*w));
	struct fl_engine *e;
	size_t held = 0;

	CU_ASSERT_TRUE_FATAL(fd >= 0 && w);
	close(fd);
	e = mk_engine(ISCSI_1MIB
		      " \"rules\": [{\"id\": \"stale\", \"match\": {\"class\": \"write\"},"
		      " \"action\": {\"late_write\": {\"after_ms\": 3600000, \"on_close\": true}}}]}",
		      1, path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	fl_engine_conn_event(e, FL_CONN_LOGIN, 1, "iqn.x");
	clear_ua(e, 1);
	for (size_t i = 0; i < n; i++) {
		tcmd_init(&w[i], 0x2a, 100 + i, 1, 1000 + i, 1);
		memset(w[i].buf, 0x5a, 512);
		tsubmit(e, &w[i], 0);
		held += !atomic_load(&w[i].done);
	}
	CU_ASSERT_EQUAL(held, n); /* the one beyond the cap is held all the same */
	clear_ua(e, 2);
	CU_ASSERT_EQUAL(late_read(e, 100, 2), 0);
	fl_engine_conn_event(e, FL_CONN_CLOSED, 1, "iqn.x");
	for (size_t i = 0; i < n; i++)
		CU_ASSERT_TRUE(twait(&w[i], 1000) && w[i].cmd.aborted);
	CU_ASSERT_EQUAL(late_read(e, 100, 2), 0x5a);
	CU_ASSERT_EQUAL(late_read(e, 100 + FL_LATE_MAX - 1, 2), 0x5a);
	CU_ASSERT_EQUAL(late_read(e, 100 + FL_LATE_MAX, 2), 0); /* beyond the cap */
	fl_engine_destroy(e);
	CU_ASSERT_TRUE(late_traced(path, "\"event\":\"late_write\"", "\"why\":\"closed\"", NULL));
	CU_ASSERT_TRUE(late_traced(path, "\"event\":\"late_write\"", "\"dropped\":\"cap\"", NULL));
	unlink(path);
	free(w);
}

FL_TESTS(engine_tests,
	 FL_TEST(test_lba_tree_oracle),
	 FL_TEST(test_match_oracle),
	 FL_TEST(test_actions_rate_0_and_1),
	 FL_TEST(test_actions_probabilistic),
	 FL_TEST(test_actions_triggered),
	 FL_TEST(test_actions_stateful),
	 FL_TEST(test_determinism_by_seed),
	 FL_TEST(test_until_written),
	 FL_TEST(test_service_action),
	 FL_TEST(test_state_machine),
	 FL_TEST(test_delay_accuracy),
	 FL_TEST(test_timers_adopted),
	 FL_TEST(test_sense_after_exec),
	 FL_TEST(test_many_holds),
	 FL_TEST(test_trace),
	 FL_TEST(test_replace),
	 FL_TEST(test_power_loss_action),
	 FL_TEST(test_match_details),
	 FL_TEST(test_delay_distributions),
	 FL_TEST(test_engine_options),
	 FL_TEST(test_cdb_decoded_once),
	 FL_TEST(test_late_write_after_ms),
	 FL_TEST(test_late_write_on_close_and_cap));

FL_SUITES(FL_SUITE("engine", NULL, NULL, engine_tests));
