/* SPDX-License-Identifier: MIT */
/*
 * test_tmf.c - task management through the engine (SAM-5 7): ABORT TASK of a
 * held and of an unknown task, ABORT TASK SET, LUN RESET that completes
 * (holds released as aborted, UA for the other nexus, "then" effects), never
 * answers, answers late, or is rejected; per-state TMF behaviour; connection
 * events; transport verdicts and standing session conditions.
 */
#include "harness.h"

/* A TMF with its answer. */
struct ttmf {
	struct fl_tmf tmf;
	atomic_int done;
	enum fl_tmf_resp resp;
	uint64_t done_ns;
};

static void ttmf_done(struct fl_tmf *tmf, enum fl_tmf_resp resp)
{
	struct ttmf *t = (struct ttmf *)tmf;

	t->resp = resp;
	t->done_ns = fl_mono_ns();
	atomic_fetch_add(&t->done, 1);
}

/* Issues a TMF and returns it (answered or not). */
static struct ttmf *do_tmf(struct fl_engine *e, enum fl_tmf_fn fn, uint16_t lun, uint64_t nexus,
			   uint64_t ref_tag, bool exists)
{
	struct ttmf *t = calloc(1, sizeof(*t));

	t->tmf = (struct fl_tmf){.fn = fn,
				 .lun_id = lun,
				 .nexus_id = nexus,
				 .ref_tag = ref_tag,
				 .task_exists = exists,
				 .done = ttmf_done};
	fl_engine_tmf(e, &t->tmf);
	return t;
}

/* Waits for a TMF answer. */
static bool tmf_wait(struct ttmf *t, int ms)
{
	for (int i = 0; i < ms * 10 && !atomic_load(&t->done); i++)
		usleep(100);
	return atomic_load(&t->done) != 0;
}

/* do_tmf, which must be answered `resp` within 100 ms. */
static void expect_tmf(struct fl_engine *e, enum fl_tmf_fn fn, uint16_t lun, uint64_t nexus,
		       uint64_t ref_tag, bool exists, enum fl_tmf_resp resp)
{
	struct ttmf *t = do_tmf(e, fn, lun, nexus, ref_tag, exists);

	CU_ASSERT_TRUE(tmf_wait(t, 100));
	CU_ASSERT_EQUAL(t->resp, resp);
	free(t);
}

static const char *const holds_scenario =
    "{\"faultlun\": 1, \"frontends\": [\"iscsi\"], \"luns\": [{\"size\": \"1MiB\"}, {\"lun\": 1,"
    " \"size\": \"1MiB\"}], \"rules\": ["
    " {\"id\": \"ha\", \"match\": {\"class\": \"read\", \"lba\": {\"first\": 0, \"last\": 9}},"
    "  \"action\": {\"hold\": \"until_abort\"}},"
    " {\"id\": \"hr\", \"match\": {\"class\": \"read\", \"lba\": {\"first\": 10, \"last\": 19}},"
    "  \"action\": {\"hold\": \"until_reset\"}},"
    " {\"id\": \"hf\", \"match\": {\"class\": \"read\", \"lba\": {\"first\": 20, \"last\": 29}},"
    "  \"action\": {\"hold\": \"forever\"}},"
    " {\"id\": \"dl\", \"match\": {\"class\": \"read\", \"lba\": {\"first\": 30, \"last\": 39}},"
    "  \"action\": {\"delay_ms\": 60000}}]}";

/* ABORT TASK releases the named held task (as aborted, no response), nothing else. */
static void test_abort_task(void)
{
	struct fl_engine *e = ready_engine(holds_scenario);
	struct tcmd *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b)),
		    *d = calloc(1, sizeof(*d));
	struct ttmf *t;

	trun(e, a, 0x28, 0, 1, 11, 1);
	trun(e, b, 0x28, 1, 1, 12, 1);
	trun(e, d, 0x28, 30, 1, 13, 1);
	CU_ASSERT_FALSE(atomic_load(&a->done) || atomic_load(&b->done) || atomic_load(&d->done));
	t = do_tmf(e, FL_TMF_ABORT_TASK, 0, 1, 11, true);
	CU_ASSERT_TRUE(tmf_wait(t, 1000));
	CU_ASSERT_EQUAL(t->resp, FL_TMF_RESP_COMPLETE);
	CU_ASSERT_TRUE(atomic_load(&a->done) && a->cmd.aborted && a->cmd.no_response);
	CU_ASSERT_FALSE(atomic_load(&b->done));
	free(t);
	/* a delayed command is abortable too */
	t = do_tmf(e, FL_TMF_ABORT_TASK, 0, 1, 13, true);
	CU_ASSERT_TRUE(tmf_wait(t, 1000) && atomic_load(&d->done) && d->cmd.aborted);
	free(t);
	/* a task the engine does not hold, unknown to the front end too */
	t = do_tmf(e, FL_TMF_ABORT_TASK, 0, 1, 999, false);
	CU_ASSERT_TRUE(tmf_wait(t, 1000));
	CU_ASSERT_EQUAL(t->resp, FL_TMF_RESP_TASK_NOT_EXIST);
	free(t);
	/* ABORT TASK SET takes the rest of nexus 1 on LUN 0 */
	t = do_tmf(e, FL_TMF_ABORT_TASK_SET, 0, 1, 0, false);
	CU_ASSERT_TRUE(tmf_wait(t, 1000));
	CU_ASSERT_TRUE(atomic_load(&b->done) && b->cmd.aborted);
	free(t);
	fl_engine_destroy(e);
	free(a);
	free(b);
	free(d);
}

/* LUN RESET: until_abort / until_reset holds on that LUN end as aborted; forever stays; UA. */
static void test_lun_reset_completes(void)
{
	struct fl_engine *e = engine_ok(holds_scenario);
	struct tcmd *c[4], *t2 = calloc(1, sizeof(*t2));
	struct ttmf *t;
	struct fl_engine_counters k;

	for (int i = 0; i < 4; i++)
		c[i] = calloc(1, sizeof(struct tcmd));
	clear_ua(e, 1);
	clear_ua(e, 2);
	tsubmit(e, (tcmd_init(c[0], 0x28, 0, 1, 1, 1), c[0]), 0);  /* until_abort */
	tsubmit(e, (tcmd_init(c[1], 0x28, 10, 1, 2, 1), c[1]), 0); /* until_reset */
	tsubmit(e, (tcmd_init(c[2], 0x28, 20, 1, 3, 1), c[2]), 0); /* forever */
	tsubmit(e, (tcmd_init(c[3], 0x28, 10, 1, 4, 1), c[3]), 1); /* other LUN */
	t = do_tmf(e, FL_TMF_LUN_RESET, 0, 1, 0, false);
	CU_ASSERT_TRUE(tmf_wait(t, 1000));
	CU_ASSERT_EQUAL(t->resp, FL_TMF_RESP_COMPLETE);
	CU_ASSERT_TRUE(atomic_load(&c[0]->done) && c[0]->cmd.aborted);
	CU_ASSERT_TRUE(atomic_load(&c[1]->done) && c[1]->cmd.aborted);
	CU_ASSERT_FALSE(atomic_load(&c[2]->done));
	CU_ASSERT_FALSE(atomic_load(&c[3]->done));
	/* every nexus sees the reset's UA 29/00, the resetting one too, once */
	trun(e, t2, 0x00, 0, 0, 5, 2);
	CU_ASSERT_EQUAL(sense_key(&t2->cmd), 6);
	CU_ASSERT_EQUAL(sense_asc(&t2->cmd), 0x29);
	trun(e, t2, 0x00, 0, 0, 6, 1);
	CU_ASSERT_EQUAL(sense_key(&t2->cmd), 6);
	CU_ASSERT_EQUAL(sense_asc(&t2->cmd), 0x29);
	trun(e, t2, 0x00, 0, 0, 7, 1);
	CU_ASSERT_EQUAL(t2->cmd.status, FL_STATUS_GOOD);
	fl_engine_get_counters(e, &k);
	CU_ASSERT_EQUAL(k.tmfs, 1);
	CU_ASSERT_EQUAL(k.resets, 1);
	free(t);
	/* a target reset covers LUN 1 as well */
	t = do_tmf(e, FL_TMF_TARGET_WARM_RESET, 0, 1, 0, false);
	CU_ASSERT_TRUE(tmf_wait(t, 1000));
	CU_ASSERT_TRUE(atomic_load(&c[3]->done) && c[3]->cmd.aborted);
	CU_ASSERT_FALSE(atomic_load(&c[2]->done));
	free(t);
	fl_engine_destroy(e); /* the forever hold ends as aborted at destroy */
	CU_ASSERT_TRUE(atomic_load(&c[2]->done) && c[2]->cmd.aborted);
	for (int i = 0; i < 4; i++)
		free(c[i]);
	free(t2);
}

/* A LUN reset that never completes, per state; then a late one; then a rejected one. */
static void test_lun_reset_behaviours(void)
{
	struct fl_engine *e = ready_engine(
	    ISCSI_1MIB
	    " \"states\": [\"start\", \"hung\", \"slow\", \"grumpy\", \"healed\"],"
	    " \"transitions\": [{\"from\": \"start\", \"to\": \"hung\", \"on\": {\"tmf\": "
	    "\"lun_reset\"}},"
	    "  {\"from\": \"hung\", \"to\": \"slow\", \"on\": {\"tmf\": \"lun_reset\"}}],"
	    " \"rules\": [{\"id\": \"h\", \"states\": [\"start\", \"hung\", \"slow\"],"
	    "  \"match\": {\"class\": \"read\"},"
	    "  \"action\": {\"hold\": \"until_reset\"}}],"
	    " \"tmf\": {\"lun_reset\": [{\"states\": [\"hung\"], \"respond\": \"never\"},"
	    "  {\"states\": [\"slow\"], \"delay_ms\": 40, \"then\": {\"state\": \"grumpy\", "
	    "\"disarm\": [\"h\"]}},"
	    "  {\"states\": [\"grumpy\"], \"respond\": \"rejected\"}],"
	    "  \"abort_task\": {\"respond\": \"not_supported\"},"
	    "  \"target_warm_reset\": {\"then\": {\"ua\": null, \"state\": \"healed\"}}}}");
	struct tcmd *c = calloc(1, sizeof(*c)), *c2 = calloc(1, sizeof(*c2));
	struct ttmf *t;
	uint64_t t0;

	trun(e, c, 0x28, 0, 1, 1, 1);
	CU_ASSERT_FALSE(atomic_load(&c->done));
	/* start -> hung on the TMF, then hung's behaviour: never answered, the hold stays */
	t = do_tmf(e, FL_TMF_LUN_RESET, 0, 1, 0, false);
	CU_ASSERT_TRUE(tmf_wait(t, 100));
	CU_ASSERT_EQUAL(t->resp, FL_TMF_RESP_NONE);
	CU_ASSERT_FALSE(atomic_load(&c->done));
	CU_ASSERT_STRING_EQUAL(fl_engine_state(e), "hung");
	free(t);
	/* hung -> slow: answered after 40 ms, hold released, then state grumpy, rule disarmed */
	t0 = fl_mono_ns();
	t = do_tmf(e, FL_TMF_LUN_RESET, 0, 1, 0, false);
	CU_ASSERT_FALSE(atomic_load(&t->done));
	CU_ASSERT_TRUE(tmf_wait(t, 2000));
	CU_ASSERT_TRUE(t->done_ns - t0 >= 40000000ull);
	CU_ASSERT_EQUAL(t->resp, FL_TMF_RESP_COMPLETE);
	CU_ASSERT_TRUE(atomic_load(&c->done) && c->cmd.aborted);
	CU_ASSERT_STRING_EQUAL(fl_engine_state(e), "grumpy");
	free(t);
	/* rejected */
	expect_tmf(e, FL_TMF_LUN_RESET, 0, 1, 0, false, FL_TMF_RESP_REJECTED);
	expect_tmf(e, FL_TMF_ABORT_TASK, 0, 1, 5, true, FL_TMF_RESP_NOT_SUPPORTED);
	/* a target reset without UA (the earlier resets' UA consumed first) */
	clear_ua(e, 1);
	t = do_tmf(e, FL_TMF_TARGET_WARM_RESET, 0, 1, 0, false);
	CU_ASSERT_TRUE(tmf_wait(t, 100));
	CU_ASSERT_EQUAL(t->resp, FL_TMF_RESP_COMPLETE);
	CU_ASSERT_STRING_EQUAL(fl_engine_state(e), "healed");
	trun(e, c2, 0x00, 0, 0, 2, 1);
	CU_ASSERT_EQUAL(c2->cmd.status, FL_STATUS_GOOD);
	free(t);
	fl_engine_destroy(e);
	free(c);
	free(c2);
}

/*
 * docs/faults/tmf.md: {"tmf": ...} transitions run before the TMF's behaviour is
 * chosen, so the behaviour comes from the state the TMF moved the machine to.
 */
static void test_tmf_transition_before_behaviour(void)
{
	struct fl_engine *e = engine_ok(
	    "{\"faultlun\": 1, \"frontends\": [\"iscsi\"], \"states\": [\"before\", \"after\"],"
	    " \"transitions\": [{\"from\": \"before\", \"to\": \"after\","
	    "  \"on\": {\"tmf\": \"lun_reset\"}}],"
	    " \"tmf\": {\"lun_reset\": {\"states\": [\"after\"], \"respond\": \"rejected\"}}}");
	struct ttmf *t;
	struct fl_engine_counters k;

	t = do_tmf(e, FL_TMF_LUN_RESET, 0, 1, 0, false);
	CU_ASSERT_TRUE(tmf_wait(t, 1000));
	CU_ASSERT_STRING_EQUAL(fl_engine_state(e), "after");
	CU_ASSERT_EQUAL(t->resp, FL_TMF_RESP_REJECTED);
	fl_engine_get_counters(e, &k);
	CU_ASSERT_EQUAL(k.resets, 0); /* a rejected reset resets nothing */
	free(t);
	fl_engine_destroy(e);
}

/* Rules that answer reads, writes and INQUIRY; %s: extra keys of the read and write actions. */
static const char *const ua_order_fmt =
    ISCSI_1MIB " \"rules\": ["
	       "  {\"id\": \"bad-read\", \"match\": {\"class\": \"read\", \"nth\": 1},"
	       "   \"action\": {\"sense\": \"MEDIUM_ERROR/UNRECOVERED_READ_ERROR\"%s}},"
	       "  {\"id\": \"busy-write\", \"match\": {\"class\": \"write\"},"
	       "   \"action\": {\"status\": \"busy\"%s}},"
	       "  {\"id\": \"bad-inquiry\", \"match\": {\"class\": \"inquiry\"},"
	       "   \"action\": {\"sense\": \"HARDWARE_ERROR/44/00\"}}]}";

/* Submits one command on nexus 1 of LUN 0 and waits for it. */
static struct tcmd *ua_cmd(struct fl_engine *e, struct tcmd *t, uint8_t op, uint64_t tag)
{
	trun(e, t, op, 0, 1, tag, 1);
	CU_ASSERT_TRUE(twait(t, 1000));
	return t;
}

/* A completed LUN RESET from nexus 1: UA 29/00 pending for every nexus. */
static void ua_reset(struct fl_engine *e)
{
	struct ttmf *t = do_tmf(e, FL_TMF_LUN_RESET, 0, 1, 0, false);

	CU_ASSERT_TRUE(tmf_wait(t, 1000));
	CU_ASSERT_EQUAL(t->resp, FL_TMF_RESP_COMPLETE);
	free(t);
}

/* An engine of ua_order_fmt with the two rules' extra options, nexus 1's UAs cleared, then
 * ua_reset. */
static struct fl_engine *ua_order_engine(const char *opt1, const char *opt2)
{
	char text[1024];
	struct fl_engine *e;

	snprintf(text, sizeof(text), ua_order_fmt, opt1, opt2);
	e = ready_engine(text);
	ua_reset(e);
	return e;
}

/* Whether a command ended with CHECK CONDITION and key/asc/ascq. */
static bool has_sense(const struct tcmd *t, int key, int asc, int ascq)
{
	return sense_key(&t->cmd) == key && sense_asc(&t->cmd) == asc &&
	       sense_ascq(&t->cmd) == ascq;
}

/*
 * SAM-5 r21 5.14: a pending unit attention is reported before an injected
 * CHECK CONDITION or status on the nexus's next command (INQUIRY aside), as on
 * a real LUN; the rule then acts on the command after it (the one answered
 * with the UA does not count: "nth": 1 hits the retried read).
 */
static void test_ua_before_injected_check_condition(void)
{
	struct fl_engine *e = ua_order_engine("", "");
	struct tcmd *t = calloc(1, sizeof(*t));
	struct fl_engine_counters k;

	/* INQUIRY never reports a UA: the rule answers it and the UA stays pending */
	CU_ASSERT_TRUE(has_sense(ua_cmd(e, t, 0x12, 1), FL_KEY_HARDWARE_ERROR, 0x44, 0x00));
	CU_ASSERT_TRUE(has_sense(ua_cmd(e, t, 0x28, 2), FL_KEY_UNIT_ATTENTION, 0x29, 0x00));
	CU_ASSERT_TRUE(has_sense(ua_cmd(e, t, 0x28, 3), FL_KEY_MEDIUM_ERROR, 0x11, 0x00));
	CU_ASSERT_EQUAL(ua_cmd(e, t, 0x28, 4)->cmd.status, FL_STATUS_GOOD); /* nth 1 is spent */
	ua_reset(e);
	CU_ASSERT_TRUE(has_sense(ua_cmd(e, t, 0x2a, 5), FL_KEY_UNIT_ATTENTION, 0x29, 0x00));
	CU_ASSERT_EQUAL(ua_cmd(e, t, 0x2a, 6)->cmd.status, FL_STATUS_BUSY);
	/* nothing left to surface on an unrelated command */
	CU_ASSERT_EQUAL(ua_cmd(e, t, 0x00, 7)->cmd.status, FL_STATUS_GOOD);
	fl_engine_get_counters(e, &k);
	CU_ASSERT_EQUAL(k.injected, 3);
	fl_engine_destroy(e);
	free(t);
}

/* "overtake_ua": true: the rule answers first and the UA surfaces on the next command. */
static void test_ua_overtaken_by_rule(void)
{
	struct fl_engine *e = ua_order_engine(", \"overtake_ua\": true", ", \"overtake_ua\": true");
	struct tcmd *t = calloc(1, sizeof(*t));

	CU_ASSERT_TRUE(has_sense(ua_cmd(e, t, 0x28, 1), FL_KEY_MEDIUM_ERROR, 0x11, 0x00));
	CU_ASSERT_TRUE(has_sense(ua_cmd(e, t, 0x00, 2), FL_KEY_UNIT_ATTENTION, 0x29, 0x00));
	CU_ASSERT_EQUAL(ua_cmd(e, t, 0x00, 3)->cmd.status, FL_STATUS_GOOD);
	ua_reset(e);
	CU_ASSERT_EQUAL(ua_cmd(e, t, 0x2a, 4)->cmd.status, FL_STATUS_BUSY);
	CU_ASSERT_TRUE(has_sense(ua_cmd(e, t, 0x00, 5), FL_KEY_UNIT_ATTENTION, 0x29, 0x00));
	fl_engine_destroy(e);
	free(t);
}

/* The delay of a TMF answer is honoured (and a pending one is answered NONE at destroy). */
static void test_tmf_delay(void)
{
	struct fl_engine *e = engine_ok("{\"faultlun\": 1, \"frontends\": [\"iscsi\"], \"tmf\": "
					"{\"lun_reset\": {\"delay_ms\": 30},"
					" \"clear_task_set\": {\"delay_ms\": 60000}}}");
	struct ttmf *t, *t2;
	uint64_t t0 = fl_mono_ns();

	t = do_tmf(e, FL_TMF_LUN_RESET, 0, 1, 0, false);
	CU_ASSERT_TRUE(tmf_wait(t, 2000));
	CU_ASSERT_TRUE(t->done_ns - t0 >= 30000000ull);
	CU_ASSERT_EQUAL(t->resp, FL_TMF_RESP_COMPLETE);
	t2 = do_tmf(e, FL_TMF_CLEAR_TASK_SET, 0, 1, 0, false);
	CU_ASSERT_FALSE(atomic_load(&t2->done));
	fl_engine_destroy(e);
	CU_ASSERT_TRUE(atomic_load(&t2->done));
	CU_ASSERT_EQUAL(t2->resp, FL_TMF_RESP_NONE);
	free(t);
	free(t2);
}

/* A closed connection takes its nexus's holds with it; login / logout move the state. */
static void test_conn_events(void)
{
	struct fl_engine *e = engine_ok(
	    "{\"faultlun\": 1, \"frontends\": [\"iscsi\"], \"states\": [\"out\", \"in\"],"
	    " \"transitions\": [{\"from\": \"out\", \"to\": \"in\", \"on\": {\"login\": true}},"
	    "  {\"from\": \"in\", \"to\": \"out\", \"on\": {\"logout\": true}}],"
	    " \"rules\": [{\"match\": {\"class\": \"read\"}, \"action\": {\"hold\": "
	    "\"forever\"}}]}");
	struct tcmd *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));

	fl_engine_conn_event(e, FL_CONN_LOGIN, 1, "iqn.x");
	CU_ASSERT_STRING_EQUAL(fl_engine_state(e), "in");
	clear_ua(e, 1);
	clear_ua(e, 2);
	trun(e, a, 0x28, 0, 1, 1, 1);
	trun(e, b, 0x28, 0, 1, 1, 2);
	fl_engine_conn_event(e, FL_CONN_CLOSED, 1, "iqn.x");
	CU_ASSERT_TRUE(atomic_load(&a->done) && a->cmd.aborted && a->cmd.no_response);
	CU_ASSERT_FALSE(atomic_load(&b->done));
	CU_ASSERT_STRING_EQUAL(fl_engine_state(e), "out");
	fl_engine_destroy(e);
	free(a);
	free(b);
}

/* Transport rules: every 2nd NOP-Out dropped; read responses delayed; in-state close. */
static void test_transport_verdicts(void)
{
	struct fl_engine *e = engine_ok(
	    "{\"faultlun\": 1, \"frontends\": [\"iscsi\"], \"states\": [\"ok\", \"dying\"],"
	    " \"transitions\": [{\"to\": \"dying\", \"on\": {\"commands\": 1}}],"
	    " \"transport\": {\"rules\": ["
	    "  {\"id\": \"nop\", \"match\": {\"pdu\": \"nop_out\", \"every\": 2}, \"action\": "
	    "\"drop\"},"
	    "  {\"id\": \"slow\", \"match\": {\"pdu\": \"scsi_response\", \"class\": \"read\"},"
	    "   \"action\": {\"delay_ms\": 1.5}},"
	    "  {\"id\": \"bye\", \"states\": [\"dying\"], \"match\": {\"pdu\": \"scsi_command\"},"
	    "   \"action\": \"close\"}],"
	    "  \"session\": {\"nop_in_interval_ms\": 1000, \"states\": {\"dying\": "
	    "{\"ignore_nop_out\": true,"
	    "   \"stall_max_cmd_sn\": true, \"request_logout\": {\"after_ms\": 0, \"wait_s\": "
	    "3}}}}}}");
	struct fl_pdu_info pdu = {.kind = FL_PDU_NOP_OUT, .nexus_id = 1};
	struct fl_xport_verdict v;
	struct fl_xport_state xs;
	struct tcmd *t = calloc(1, sizeof(*t));
	int drops = 0;

	for (int i = 0; i < 10; i++) {
		fl_engine_pdu(e, &pdu, &v);
		drops += v.action == FL_XPORT_DROP;
		if (v.action == FL_XPORT_DROP)
			CU_ASSERT_STRING_EQUAL(v.rule, "nop");
	}
	CU_ASSERT_EQUAL(drops, 5);
	pdu.kind = FL_PDU_SCSI_RESP;
	pdu.has_cdb = true;
	pdu.cdb.cls = FL_CLASS_READ;
	pdu.cdb.opcode = 0x28;
	fl_engine_pdu(e, &pdu, &v);
	CU_ASSERT_EQUAL(v.action, FL_XPORT_DELAY);
	CU_ASSERT_EQUAL(v.delay_us, 1500);
	pdu.cdb.cls = FL_CLASS_WRITE;
	fl_engine_pdu(e, &pdu, &v);
	CU_ASSERT_EQUAL(v.action, FL_XPORT_PASS);
	pdu.kind = FL_PDU_SCSI_CMD;
	fl_engine_pdu(e, &pdu, &v);
	CU_ASSERT_EQUAL(v.action, FL_XPORT_PASS);
	fl_engine_xport_state(e, 1, &xs);
	CU_ASSERT_FALSE(xs.ignore_nop_out || xs.stall_max_cmd_sn || xs.request_logout);
	CU_ASSERT_EQUAL(xs.nop_in_interval_ms, 1000);
	trun(e, t, 0x00, 0, 0, 1, 1);
	CU_ASSERT_STRING_EQUAL(fl_engine_state(e), "dying");
	fl_engine_pdu(e, &pdu, &v);
	CU_ASSERT_EQUAL(v.action, FL_XPORT_CLOSE);
	fl_engine_xport_state(e, 1, &xs);
	CU_ASSERT_TRUE(xs.ignore_nop_out && xs.stall_max_cmd_sn && xs.request_logout);
	CU_ASSERT_EQUAL(xs.logout_wait_s, 3);
	CU_ASSERT_EQUAL(xs.nop_in_interval_ms, 1000);
	fl_engine_destroy(e);
	free(t);
}

/*
 * An inbound SCSI Command PDU comes with its raw CDB: the engine decodes it
 * only for a transport rule that asks for the opcode or class (and for the
 * trace of a verdict), so the command itself is decoded once.
 */
static void test_xport_raw_cdb(void)
{
	static const char *const fmt =
	    "{\"faultlun\": 1, \"frontends\": [\"iscsi\"], \"transport\": {\"rules\": ["
	    "  {\"id\": \"nop\", \"match\": {\"pdu\": \"nop_out\"}, \"action\": \"drop\"}%s]}}";
	char text[512];
	struct fl_engine *e;
	uint8_t cdb[16] = {0x28, 0, 0, 0, 0, 8, 0, 0, 1, 0};
	struct fl_pdu_info pdu = {
	    .kind = FL_PDU_SCSI_CMD, .nexus_id = 1, .raw_cdb = cdb, .raw_cdb_len = 16};
	struct fl_xport_verdict v;
	uint64_t n;

	/* no rule reads the CDB: not decoded */
	snprintf(text, sizeof(text), fmt, "");
	e = engine_ok(text);
	n = fl_cdb_decode_count();
	fl_engine_pdu(e, &pdu, &v);
	CU_ASSERT_EQUAL(v.action, FL_XPORT_PASS);
	CU_ASSERT_EQUAL(fl_cdb_decode_count() - n, 0);
	fl_engine_destroy(e);
	/* a rule on the class: decoded once for it */
	snprintf(text, sizeof(text), fmt,
		 ", {\"id\": \"writes\", \"match\": {\"pdu\": \"scsi_command\", \"class\":"
		 " \"write\"}, \"action\": \"drop\"}");
	e = engine_ok(text);
	n = fl_cdb_decode_count();
	fl_engine_pdu(e, &pdu, &v);
	CU_ASSERT_EQUAL(v.action, FL_XPORT_PASS);
	CU_ASSERT_EQUAL(fl_cdb_decode_count() - n, 1);
	cdb[0] = 0x2a;
	fl_engine_pdu(e, &pdu, &v);
	CU_ASSERT_EQUAL(v.action, FL_XPORT_DROP);
	CU_ASSERT_STRING_EQUAL(v.rule, "writes");
	fl_engine_destroy(e);
}

/* The transport notifier runs when the state moves. */
static atomic_int notified;
static void on_notify(void *ctx)
{
	(void)ctx;
	atomic_fetch_add(&notified, 1);
}

static void test_xport_notify(void)
{
	struct fl_engine *e = engine_ok(
	    "{\"faultlun\": 1, \"frontends\": [\"iscsi\"], \"states\": [\"a\", \"b\"],"
	    " \"transitions\": [{\"from\": \"a\", \"to\": \"b\", \"on\": {\"after_ms\": 20}}]}");
	atomic_store(&notified, 0);
	fl_engine_set_xport_notify(e, on_notify, NULL);
	for (int i = 0; i < 20000 && !atomic_load(&notified); i++)
		usleep(100);
	CU_ASSERT_TRUE(atomic_load(&notified) >= 1);
	CU_ASSERT_STRING_EQUAL(fl_engine_state(e), "b");
	fl_engine_destroy(e);
}

/* clear_faults disarms every rule; a TMF for a LUN that does not exist says so. */
static void test_clear_faults(void)
{
	struct fl_engine *e = engine_ok("{\"faultlun\": 1, \"frontends\": [\"iscsi\"], \"rules\": "
					"[{\"match\": {\"class\": \"tur\"},"
					" \"action\": {\"status\": \"busy\"}}], \"tmf\": "
					"{\"lun_reset\": {\"then\": {\"ua\": null,"
					" \"clear_faults\": true}}}}");
	struct tcmd *c = calloc(1, sizeof(*c));

	/* a new nexus hears of the power on (29/00) before the rule's BUSY */
	trun(e, c, 0x00, 0, 0, 1, 1);
	CU_ASSERT_EQUAL(sense_key(&c->cmd), FL_KEY_UNIT_ATTENTION);
	trun(e, c, 0x00, 0, 0, 1, 1);
	CU_ASSERT_EQUAL(c->cmd.status, FL_STATUS_BUSY);
	expect_tmf(e, FL_TMF_LUN_RESET, 7, 1, 0, false, FL_TMF_RESP_LUN_NOT_EXIST);
	expect_tmf(e, FL_TMF_LUN_RESET, 0, 1, 0, false, FL_TMF_RESP_COMPLETE);
	clear_ua(e, 1);
	trun(e, c, 0x00, 0, 0, 2, 1);
	CU_ASSERT_EQUAL(c->cmd.status, FL_STATUS_GOOD);
	fl_engine_destroy(e);
	free(c);
}

/* Submitters on several threads, TMFs and releases from another: each command completes once. */
enum { STRESS_THREADS = 4, STRESS_CMDS = 1500 };
struct stress {
	struct fl_engine *e;
	int id;
	struct tcmd *cmds;
};

/* One submitting thread: reads and writes over LBAs the rules cover. */
static void *stress_submit(void *arg)
{
	struct stress *st = arg;
	struct fl_prng g;

	fl_prng_seed(&g, 99, (uint64_t)st->id);
	for (int i = 0; i < STRESS_CMDS; i++) {
		uint64_t x = fl_prng_next(&g);

		tcmd_init(&st->cmds[i], x & 1 ? 0x28 : 0x2a, (x >> 8) % 64, 1,
			  (uint64_t)st->id * 100000 + (uint64_t)i, (uint64_t)st->id + 1);
		tsubmit(st->e, &st->cmds[i], 0);
	}
	return NULL;
}

static void test_concurrency(void)
{
	struct fl_engine *e = engine_ok(
	    ISCSI_1MIB
	    " \"rules\": ["
	    "  {\"match\": {\"lba\": {\"first\": 0, \"last\": 15}, \"probability\": 0.3},"
	    "   \"action\": {\"delay_ms\": {\"dist\": \"uniform\", \"min\": 0, \"max\": 2}}},"
	    "  {\"match\": {\"lba\": {\"first\": 16, \"last\": 31}, \"probability\": 0.3},"
	    "   \"action\": {\"hold\": \"until_abort\"}},"
	    "  {\"match\": {\"lba\": {\"first\": 32, \"last\": 47}, \"probability\": 0.3},"
	    "   \"action\": {\"hold\": \"until_release\"}},"
	    "  {\"match\": {\"class\": \"read\", \"probability\": 0.1}, \"action\": {\"corrupt\": "
	    "{\"bytes\": 1}}},"
	    "  {\"match\": {\"class\": \"write\", \"lba\": {\"first\": 48}}, \"action\": "
	    "{\"sense\":"
	    "   \"MEDIUM_ERROR/WRITE_ERROR\", \"info\": \"lba\", \"delay_ms\": 0.2}, \"until\": "
	    "\"written\"}]}");
	struct stress st[STRESS_THREADS];
	pthread_t th[STRESS_THREADS];
	bool running = true;
	int rounds = 0;

	for (int i = 0; i < STRESS_THREADS; i++) {
		st[i] = (struct stress){
		    .e = e, .id = i, .cmds = calloc(STRESS_CMDS, sizeof(struct tcmd))};
		pthread_create(&th[i], NULL, stress_submit, &st[i]);
	}
	while (running) {
		struct ttmf *t;

		t = do_tmf(e, rounds % 3 ? FL_TMF_ABORT_TASK_SET : FL_TMF_LUN_RESET, 0,
			   (uint64_t)(rounds % STRESS_THREADS) + 1, 0, false);
		tmf_wait(t, 1000);
		free(t);
		engine_release(e, true, 0, -1);
		usleep(500);
		running = ++rounds < 400;
	}
	for (int i = 0; i < STRESS_THREADS; i++)
		pthread_join(th[i], NULL);
	{
		struct ttmf *t = do_tmf(e, FL_TMF_TARGET_WARM_RESET, 0, 1, 0, false);

		tmf_wait(t, 1000);
		free(t);
	}
	engine_release(e, true, 0, -1);
	for (int i = 0; i < STRESS_THREADS; i++)
		for (int k = 0; k < STRESS_CMDS; k++)
			twait(&st[i].cmds[k], 2000);
	fl_engine_destroy(e);
	for (int i = 0; i < STRESS_THREADS; i++) {
		int once = 0;

		for (int k = 0; k < STRESS_CMDS; k++)
			once += atomic_load(&st[i].cmds[k].done) == 1;
		CU_ASSERT_EQUAL(once, STRESS_CMDS);
		free(st[i].cmds);
	}
}

/* A logout request falls due after after_ms: the notifier runs and the state says so. */
static void test_logout_request_timer(void)
{
	uint64_t t0 = fl_mono_ns(); /* before the engine arms: after_ms counts from there */
	struct fl_engine *e =
	    mk_engine("{\"faultlun\": 1, \"frontends\": [\"iscsi\"], \"transport\":"
		      " {\"session\": {\"request_logout\": {\"after_ms\": 30, \"wait_s\": 4}}}}",
		      1, NULL);
	struct fl_xport_state xs;

	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	atomic_store(&notified, 0);
	fl_engine_set_xport_notify(e, on_notify, NULL);
	fl_engine_xport_state(e, 1, &xs);
	CU_ASSERT_FALSE(xs.request_logout);
	for (int i = 0; i < 20000 && !atomic_load(&notified); i++)
		usleep(100);
	CU_ASSERT_TRUE(atomic_load(&notified) >= 1);
	CU_ASSERT_TRUE(fl_mono_ns() - t0 >= 30000000ull);
	fl_engine_xport_state(e, 1, &xs);
	CU_ASSERT_TRUE(xs.request_logout);
	CU_ASSERT_EQUAL(xs.logout_wait_s, 4);
	fl_engine_destroy(e);
}

FL_TESTS(tmf_tests,
	 FL_TEST(test_abort_task),
	 FL_TEST(test_lun_reset_completes),
	 FL_TEST(test_lun_reset_behaviours),
	 FL_TEST(test_tmf_transition_before_behaviour),
	 FL_TEST(test_ua_before_injected_check_condition),
	 FL_TEST(test_ua_overtaken_by_rule),
	 FL_TEST(test_tmf_delay),
	 FL_TEST(test_conn_events),
	 FL_TEST(test_transport_verdicts),
	 FL_TEST(test_xport_raw_cdb),
	 FL_TEST(test_xport_notify),
	 FL_TEST(test_clear_faults),
	 FL_TEST(test_concurrency),
	 FL_TEST(test_logout_request_timer));

FL_SUITES(FL_SUITE("tmf", NULL, NULL, tmf_tests));
