/* SPDX-License-Identifier: MIT */
/*
 * test_explore.c - the pieces of `faultlun explore` that run without a
 * kernel: the same seed and BASE draw the same schedules, every drawn trial
 * passes lint, each oracle fires on a planted positive (and only then), and
 * delta debugging reduces a planted failing fault among eight to that one.
 */
#include "runner.h"
#include "fl_explore.h"
#include "fl_scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A shipped base (file), parsed, ready to draw from. */
static int load_base_file(struct fl_explore_base *b, const char *file)
{
	json_error_t jerr;
	json_t *doc = json_load_file(file, 0, &jerr);
	char err[256];
	int rc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	rc = fl_explore_base_init(b, doc, "iscsi", err, sizeof(err));
	json_decref(doc);
	return rc;
}

/* The shipped single-path iSCSI base. */
static int load_base(struct fl_explore_base *b)
{
	return load_base_file(b, FL_EXPLORE_BASE);
}

/*
 * Over dm-multipath (the shipped two-port base) a drawn rule or transport
 * fault takes port A, port B, or every path; every trial lints. A
 * single-port base never names a port.
 */
static void test_ports_drawn(void)
{
	struct fl_explore_base b;
	char file[] = "/tmp/fl-explore-XXXXXX";
	int fd = mkstemp(file);
	unsigned on[3] = {0}, refused = 0;

	CU_ASSERT_TRUE_FATAL(fd >= 0);
	close(fd);
	CU_ASSERT_EQUAL_FATAL(load_base_file(&b, FL_EXPLORE_MPATH), 0);
	CU_ASSERT_EQUAL(b.nports, 2);
	b.tmf_transport = true;
	for (unsigned t = 1; t <= 200; t++) {
		json_t *s = fl_explore_draw(&b, 5, t, 0, 3), *r;
		json_t *doc = fl_explore_scenario(&b, s, UINT32_MAX, "t");
		size_t i;

		refused += fl_explore_write_linted(doc, file, FL_FE_ISCSI, false) != 0;
		json_array_foreach(s, i, r)
		{
			json_t *m = json_object_get(r, "match");
			const char *port;

			if (json_object_get(r, "transport"))
				m = json_object_get(json_object_get(r, "transport"), "match");
			if (!m)
				continue; /* a TMF answer */
			port = json_string_value(json_object_get(m, "port"));
			on[!port ? 0 : !strcmp(port, "A") ? 1 : 2]++;
			CU_ASSERT_TRUE(!port || !strcmp(port, "A") || !strcmp(port, "B"));
		}
		json_decref(doc);
		json_decref(s);
	}
	unlink(file);
	fl_explore_base_free(&b);
	CU_ASSERT_TRUE(refused < 20);
	/* two in three on one port: each port about a third, every path about a third */
	for (unsigned k = 0; k < 3; k++)
		CU_ASSERT_TRUE(on[k] * 5 >= on[0] + on[1] + on[2]);
	CU_ASSERT_EQUAL_FATAL(load_base(&b), 0);
	CU_ASSERT_EQUAL(b.nports, 0);
	for (unsigned t = 1; t <= 50; t++) {
		json_t *s = fl_explore_draw(&b, 5, t, 0, 3), *r;
		size_t i;

		json_array_foreach(s, i, r)
		    CU_ASSERT_PTR_NULL(json_object_get(json_object_get(r, "match"), "port"));
		json_decref(s);
	}
	fl_explore_base_free(&b);
}

/* Unless asked for TMF answers and transport faults, a schedule holds rules only. */
static void test_rules_only_by_default(void)
{
	struct fl_explore_base b;

	CU_ASSERT_EQUAL_FATAL(load_base(&b), 0);
	for (unsigned t = 1; t <= 200; t++) {
		json_t *s = fl_explore_draw(&b, 7, t, 0, 3), *r;
		size_t i;

		json_array_foreach(s, i, r) CU_ASSERT_PTR_NOT_NULL(json_object_get(r, "action"));
		json_decref(s);
	}
	fl_explore_base_free(&b);
}

/* Same seed and trial: the same schedule; another seed: other schedules. */
static void test_same_seed_same_schedules(void)
{
	struct fl_explore_base b;
	unsigned differ = 0;

	CU_ASSERT_EQUAL_FATAL(load_base(&b), 0);
	for (unsigned t = 1; t <= 50; t++) {
		json_t *a = fl_explore_draw(&b, 1, t, 0, 4), *a2 = fl_explore_draw(&b, 1, t, 0, 4);
		json_t *c = fl_explore_draw(&b, 2, t, 0, 4);

		CU_ASSERT_TRUE(json_equal(a, a2));
		CU_ASSERT_TRUE(json_array_size(a) >= 1 && json_array_size(a) <= 4);
		differ += !json_equal(a, c);
		json_decref(a);
		json_decref(a2);
		json_decref(c);
	}
	CU_ASSERT_TRUE(differ >= 45);
	fl_explore_base_free(&b);
}

/*
 * 200 trials: each finds a schedule that passes lint within 16 draws, and
 * the recovery path dominates (held, dropped, delayed, BUSY...).
 */
static void test_trials_lint(void)
{
	struct fl_explore_base b;
	char file[] = "/tmp/fl-explore-XXXXXX";
	int fd = mkstemp(file), refused = 0, recovery = 0, rules = 0, tmfs = 0, xports = 0,
	    entries = 0;

	CU_ASSERT_TRUE_FATAL(fd >= 0);
	close(fd);
	CU_ASSERT_EQUAL_FATAL(load_base(&b), 0);
	b.tmf_transport = true;
	for (unsigned t = 1; t <= 200; t++) {
		bool ok = false;

		for (unsigned attempt = 0; attempt < 16 && !ok; attempt++) {
			json_t *s = fl_explore_draw(&b, 7, t, attempt, 3), *r;
			json_t *doc = fl_explore_scenario(&b, s, UINT32_MAX, "t");
			size_t i;

			ok = !fl_explore_write_linted(doc, file, FL_FE_ISCSI, false);
			refused += !ok;
			json_array_foreach(s, i, r)
			{
				json_t *a = json_object_get(r, "action");

				entries++;
				if (json_object_get(r, "tmf") || json_object_get(r, "transport")) {
					tmfs += json_object_get(r, "tmf") != NULL;
					xports += json_object_get(r, "transport") != NULL;
					continue;
				}
				rules++;
				recovery +=
				    json_object_get(a, "hold") || json_object_get(a, "drop") ||
				    json_object_get(a, "drop_response") ||
				    json_object_get(a, "delay_ms") ||
				    json_object_get(a, "status") || json_object_get(a, "sense");
			}
			json_decref(doc);
			json_decref(s);
		}
		CU_ASSERT_TRUE(ok);
	}
	CU_ASSERT_TRUE(recovery * 10 >= rules * 7);
	/* over iSCSI, TMF answers and transport faults are drawn too (2 in 10 each) */
	CU_ASSERT_TRUE(tmfs * 10 >= entries);
	CU_ASSERT_TRUE(xports * 10 >= entries);
	CU_ASSERT_TRUE((tmfs + xports) * 10 <= entries * 6);
	if (refused)
		printf("(%d draws refused by lint, drawn again) ", refused);
	unlink(file);
	fl_explore_base_free(&b);
}

/* Each schedule entry lands where the scenario has it; only the kept ones. */
static void test_entries_placed(void)
{
	struct fl_explore_base b;
	json_error_t jerr;
	json_t *s =
	    json_loads("[{\"id\": \"x1\", \"match\": {\"lun\": 0, \"class\": \"read\"},"
		       " \"action\": {\"hold\": \"forever\"}},"
		       " {\"id\": \"x2\", \"tmf\": {\"lun_reset\": {\"respond\": \"never\"}}},"
		       " {\"id\": \"x3\", \"transport\": {\"match\": {\"pdu\": \"scsi_command\","
		       " \"times\": 1}, \"action\": \"close\"}}]",
		       0, &jerr);

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL_FATAL(load_base(&b), 0);
	json_t *doc = fl_explore_scenario(&b, s, 0x7, "t"), *x;
	x = json_array_get(json_object_get(json_object_get(doc, "transport"), "rules"), 0);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(doc, "rules")), 1);
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(doc, "tmf"), "lun_reset"), "respond")),
	    "never");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(x, "id")), "x3");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(x, "action")), "close");
	json_decref(doc);
	doc = fl_explore_scenario(&b, s, 0x1, "t"); /* x1 alone */
	CU_ASSERT_PTR_NULL(json_object_get(doc, "tmf"));
	CU_ASSERT_PTR_NULL(json_object_get(doc, "transport"));
	CU_ASSERT_EQUAL(json_array_size(json_object_get(doc, "rules")), 1);
	json_decref(doc);
	json_decref(s);
	fl_explore_base_free(&b);
}

/*
 * The liveness bound: the allowance follows the knobs (iscsi-single's: six
 * sends of 3 x (2 + 1) s timer + 2 + 2 + 2 s TMFs + 4 x 2 s TEST UNIT READYs
 * + 5 s recovery + 2 s login = 180 s; TCMU's: six of (4 + 1) + 2 x 6 + 4 x 2
 * = 150 s; the kernel's defaults over iSCSI: six of 93 + 15 + 30 + 30 + 40 +
 * 120 + 2 = 1980 s), and a trial's steps and lowered hung-task timeout get it
 * on top of their own.
 */
static void test_liveness_bound(void)
{
	struct fl_explore_base b;
	json_error_t jerr;
	json_t *tcmu = json_loads("{\"timeout_s\": 4, \"eh_timeout_s\": 2, \"cmd_time_out_s\": 6}",
				  0, &jerr);
	json_t *none = json_array(), *doc, *step;
	size_t i;

	CU_ASSERT_EQUAL_FATAL(load_base(&b), 0);
	CU_ASSERT_EQUAL(fl_explore_allowance_s(
			    json_object_get(json_object_get(b.doc, "check"), "knobs"), FL_FE_ISCSI),
			180);
	CU_ASSERT_EQUAL(fl_explore_allowance_s(tcmu, FL_FE_TCMU), 150);
	CU_ASSERT_EQUAL(fl_explore_allowance_s(NULL, FL_FE_ISCSI), 1980);
	doc = fl_explore_scenario(&b, none, 0, "t");
	/* a repeated step: the allowance for each call (iscsi-single's repeat 8) */
	json_array_foreach(json_object_get(json_object_get(doc, "check"), "workload"), i, step)
	{
		json_int_t calls = json_integer_value(json_object_get(step, "repeat"));
		CU_ASSERT_EQUAL(json_integer_value(json_object_get(step, "timeout_s")),
				60 + (calls > 1 ? calls : 1) * 180);
	}
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(
			    json_array_get(json_object_get(json_object_get(doc, "check"), "workload"),
					   2),
			    "timeout_s")),
			60 + 8 * 180);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(
			    json_object_get(json_object_get(doc, "check"), "knobs"),
			    "hung_task_timeout_s")),
			60 + 180);
	/* BASE itself is left as it is */
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(
			    json_array_get(json_object_get(json_object_get(b.doc, "check"),
							   "workload"),
					   0),
			    "timeout_s")),
			60);
	json_decref(doc);
	json_decref(none);
	json_decref(tcmu);
	fl_explore_base_free(&b);
}

/*
 * Over dm-multipath with ALUA, each REPORT TARGET PORT GROUPS answer a
 * schedule may lose adds one RTPG send at its longest to every step and to
 * the hung-task timeout: with the mpath base's knobs, on the longest RTPG
 * timer seen (7.2's 255 s), 3 x (255 + 1) + 2 + 2 + 2 + 4 x 2 + 5 + 2 = 789 s
 * a send. The multipath campaign's f2 (three
 * Data-In PDUs of port A dropped) gets 3 x 789 s; a drop of read commands
 * (a class) cannot take RTPG and gets nothing; the single-path base, nothing.
 */
static void test_liveness_bound_rtpg(void)
{
	static const char *const schedules[] = {
	    "[{\"id\": \"x1\", \"transport\": {\"match\": {\"pdu\": \"data_in\", "
	    "\"times\": 3, \"port\": \"A\"}, \"action\": \"drop\"}}]",
	    "[{\"id\": \"x1\", \"match\": {\"lun\": 0, \"class\": \"read\", \"times\": 3}, "
	    "\"action\": {\"drop\": true}}]",
	    "[{\"id\": \"x1\", \"match\": {\"opcode\": \"0xa3\"}, \"action\": {\"hold\": "
	    "\"until_abort\"}}, {\"id\": \"x2\", \"transport\": {\"match\": {\"pdu\": "
	    "\"nop_out\", \"times\": 2}, \"action\": \"drop\"}}]",
	};
	static const unsigned losses[] = {3, 0, FL_EXPLORE_RTPG_MAX};
	struct fl_explore_base b, single;
	json_error_t jerr;

	CU_ASSERT_EQUAL_FATAL(load_base_file(&b, FL_EXPLORE_MPATH), 0);
	CU_ASSERT_EQUAL_FATAL(load_base(&single), 0);
	for (size_t k = 0; k < sizeof(schedules) / sizeof(schedules[0]); k++) {
		json_t *s = json_loads(schedules[k], 0, &jerr);
		json_t *doc = fl_explore_scenario(&b, s, UINT32_MAX, "t");
		json_t *one = fl_explore_scenario(&single, s, UINT32_MAX, "t");
		json_t *check = json_object_get(doc, "check");
		json_int_t rtpg = (json_int_t)losses[k] * 789;

		CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
		CU_ASSERT_EQUAL(fl_explore_rtpg_losses(doc), losses[k]);
		CU_ASSERT_EQUAL(fl_explore_rtpg_losses(one), 0);
		/* step 0: one write of 60 s; mpath's allowance 190 s */
		CU_ASSERT_EQUAL(json_integer_value(json_object_get(
				    json_array_get(json_object_get(check, "workload"), 0), "timeout_s")),
				60 + 190 + rtpg);
		CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(check, "knobs"),
								   "hung_task_timeout_s")),
				60 + 190 + rtpg);
		json_decref(one);
		json_decref(doc);
		json_decref(s);
	}
	fl_explore_base_free(&single);
	fl_explore_base_free(&b);
}

/* A clean 6.1 boot-and-recovery log: nothing for the kernel oracle. */
static const char clean_log[] =
    "[    0.000000] Linux version 6.1.0-57-amd64\n"
    "[    5.100000] sd 2:0:0:0: [sda] Attached SCSI disk\n"
    "[   12.000000] connection1:0: detected conn error (1022)\n"
    "[   12.500000] sd 2:0:0:0: Power-on or device reset occurred\n"
    "[   13.000000] faultlun-agent: step 3 shell: echo 'WARNING: planted' > /dev/kmsg\n";

/* Each splat the kernel oracle knows, planted in a clean log, fires with its line. */
static void test_kernel_oracle_planted(void)
{
	static const char *const planted[] = {
	    "[   20.1] BUG: kernel NULL pointer dereference, address: 0000000000000008",
	    "[   20.1] WARNING: CPU: 1 PID: 77 at drivers/scsi/scsi_error.c:2201 scsi_eh",
	    "[   20.1] Oops: 0000 [#1] PREEMPT SMP NOPTI",
	    "[   20.1] general protection fault, probably for non-canonical address",
	    "[   20.1] BUG: KASAN: use-after-free in iscsi_eh_abort+0x1a/0x200",
	    "[   20.1] UBSAN: shift-out-of-bounds in drivers/scsi/sd.c:1234",
	    "[   20.1] WARNING: possible circular locking dependency detected",
	    "[   20.1] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:",
	    "[   20.1] refcount_t: underflow; use-after-free.",
	    "[   20.1] list_del corruption. prev->next should be ffff, but was dead",
	    "[  150.0] INFO: task kworker/u4:2:91 blocked for more than 120 seconds.",
	};
	struct fl_finding f;
	char buf[2048];

	CU_ASSERT_FALSE(fl_oracle_kernel(clean_log, strlen(clean_log), &f));
	for (size_t i = 0; i < sizeof(planted) / sizeof(planted[0]); i++) {
		int n =
		    snprintf(buf, sizeof(buf), "%s%s\n[   21.0] after\n", clean_log, planted[i]);

		memset(&f, 0, sizeof(f));
		CU_ASSERT_TRUE(fl_oracle_kernel(buf, (size_t)n, &f));
		CU_ASSERT_EQUAL(f.oracle, FL_ORACLE_KERNEL);
		CU_ASSERT_STRING_EQUAL(f.evidence, planted[i]);
		CU_ASSERT_PTR_NOT_NULL(f.splat);
	}
	/* a record as the lab keeps /dev/kmsg: the evidence is its text */
	static const char rec[] = "6,400,3800000,-;sd 2:0:0:0: [sda] ok\n"
				  "4,423,38365671,-;WARNING: CPU: 0 PID: 1 at x.c:1 f\n";
	CU_ASSERT_TRUE(fl_oracle_kernel(rec, strlen(rec), &f));
	CU_ASSERT_STRING_EQUAL(f.evidence, "WARNING: CPU: 0 PID: 1 at x.c:1 f");
}

/* A result document with verdict, steps and expectations as given. */
static bool judge_text(const char *text, size_t want_steps, struct fl_finding *f)
{
	struct fl_result r;
	char err[256];
	json_t *doc = json_loads(text, 0, NULL);
	bool hit;

	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	CU_ASSERT_EQUAL_FATAL(fl_result_from_json(doc, "r.json", &r, err, sizeof(err)), 0);
	json_decref(doc);
	hit = fl_explore_judge(0, &r, clean_log, strlen(clean_log), want_steps, f);
	fl_result_free(&r);
	return hit;
}

/* The liveness oracle: an ERROR run, a step that timed out, a workload cut short. */
static void test_liveness_oracle_planted(void)
{
	struct fl_finding f;

	CU_ASSERT_FALSE(judge_text("{\"faultlun_vm_result\":1,\"verdict\":\"PASS\",\"steps\":["
				   "{\"step\":0,\"errno\":\"0\"},{\"step\":1,\"errno\":\"EIO\"}]}",
				   2, &f));
	CU_ASSERT_TRUE(judge_text("{\"faultlun_vm_result\":1,\"verdict\":\"ERROR\","
				  "\"error\":\"guest stopped at the time limit\"}",
				  2, &f));
	CU_ASSERT_EQUAL(f.oracle, FL_ORACLE_LIVENESS);
	CU_ASSERT_PTR_NOT_NULL(strstr(f.evidence, "guest stopped at the time limit"));
	CU_ASSERT_TRUE(judge_text("{\"faultlun_vm_result\":1,\"verdict\":\"PASS\",\"steps\":["
				  "{\"step\":0,\"op\":\"read\",\"errno\":\"TIMEOUT\","
				  "\"elapsed_ms\":60000}]}",
				  1, &f));
	CU_ASSERT_EQUAL(f.oracle, FL_ORACLE_LIVENESS);
	CU_ASSERT_PTR_NOT_NULL(strstr(f.evidence, "step 0 (read) ended TIMEOUT"));
	CU_ASSERT_TRUE(judge_text("{\"faultlun_vm_result\":1,\"verdict\":\"PASS\",\"steps\":["
				  "{\"step\":0,\"errno\":\"0\"}]}",
				  3, &f));
	CU_ASSERT_EQUAL(f.oracle, FL_ORACLE_LIVENESS);
	CU_ASSERT_STRING_EQUAL(f.evidence, "the workload completed 1 of its 3 steps");
	CU_ASSERT_TRUE(fl_explore_judge(2, NULL, NULL, 0, 1, &f));
	CU_ASSERT_EQUAL(f.oracle, FL_ORACLE_LIVENESS);
}

/*
 * The integrity oracle: a stamped read's finding, named by its step and
 * words, asked before the liveness and user oracles (the same run's failed
 * "errno OK" expectation is the user's); a read whose blocks held is none.
 */
static void test_integrity_oracle_planted(void)
{
	struct fl_finding f;

	CU_ASSERT_FALSE(judge_text("{\"faultlun_vm_result\":1,\"verdict\":\"PASS\",\"steps\":["
				   "{\"step\":0,\"op\":\"write\",\"errno\":\"OK\"},"
				   "{\"step\":1,\"op\":\"read\",\"errno\":\"OK\"}]}",
				   2, &f));
	CU_ASSERT_TRUE(judge_text(
	    "{\"faultlun_vm_result\":1,\"verdict\":\"FAIL\",\"steps\":["
	    "{\"step\":0,\"op\":\"write\",\"errno\":\"OK\"},"
	    "{\"step\":1,\"op\":\"read\",\"errno\":\"EBADMSG\",\"integrity\":"
	    "\"LBA 0: stale: it holds write 1, an older one than write 2, acknowledged\"}],"
	    "\"expectations\":[{\"verdict\":\"fail\",\"what\":\"step 1 errno OK\","
	    "\"observed\":\"EBADMSG\"}]}",
	    2, &f));
	CU_ASSERT_EQUAL(f.oracle, FL_ORACLE_INTEGRITY);
	CU_ASSERT_STRING_EQUAL(f.evidence, "step 1 (read): LBA 0: stale: it holds write 1, an "
					   "older one than write 2, acknowledged");
	CU_ASSERT_STRING_EQUAL(fl_oracle_name(FL_ORACLE_INTEGRITY), "integrity");
}

/* The user's oracle: a failed expectation of BASE, named by its words. */
static void test_user_oracle_planted(void)
{
	struct fl_finding f;

	CU_ASSERT_FALSE(
	    judge_text("{\"faultlun_vm_result\":1,\"verdict\":\"PASS\","
		       "\"expectations\":[{\"verdict\":\"pass\",\"what\":\"step 5 OK\"},"
		       "{\"verdict\":\"not_applicable\",\"what\":\"na\"}]}",
		       0, &f));
	CU_ASSERT_TRUE(judge_text("{\"faultlun_vm_result\":1,\"verdict\":\"FAIL\","
				  "\"expectations\":[{\"verdict\":\"pass\",\"what\":\"a\"},"
				  "{\"verdict\":\"fail\",\"what\":\"step 5 errno OK\","
				  "\"observed\":\"EIO\"}]}",
				  0, &f));
	CU_ASSERT_EQUAL(f.oracle, FL_ORACLE_USER);
	CU_ASSERT_STRING_EQUAL(f.evidence, "expectation failed: step 5 errno OK; observed: EIO");
}

/* The kernel oracle is asked first: a splat wins over a failed expectation. */
static void test_oracle_order(void)
{
	static const char text[] = "{\"faultlun_vm_result\":1,\"verdict\":\"FAIL\","
				   "\"expectations\":[{\"verdict\":\"fail\",\"what\":\"w\"}]}";
	static const char kmsg[] = "[ 1.0] ok\n[ 2.0] WARNING: CPU: 0 PID: 1 at x.c:1 f\n";
	struct fl_result r;
	struct fl_finding f;
	char err[256];
	json_t *doc = json_loads(text, 0, NULL);

	CU_ASSERT_EQUAL_FATAL(fl_result_from_json(doc, "r.json", &r, err, sizeof(err)), 0);
	json_decref(doc);
	CU_ASSERT_TRUE(fl_explore_judge(1, &r, kmsg, strlen(kmsg), 0, &f));
	CU_ASSERT_EQUAL(f.oracle, FL_ORACLE_KERNEL);
	CU_ASSERT_STRING_EQUAL(f.evidence, "[ 2.0] WARNING: CPU: 0 PID: 1 at x.c:1 f");
	fl_result_free(&r);
}

/* The synthetic predicate: fails when every bit of ctx's mask is kept. */
struct planted {
	uint32_t needed;
	unsigned rounds, runs;
};

/* fl_ddmin's test over the planted predicate. */
static int planted_test(void *ctx, const uint32_t *cands, size_t n, bool *fails)
{
	struct planted *p = ctx;

	p->rounds++;
	p->runs += (unsigned)n;
	for (size_t i = 0; i < n; i++)
		fails[i] = (cands[i] & p->needed) == p->needed;
	return 0;
}

/* A planted failing fault among eight is reduced to that one; a pair to the pair. */
static void test_ddmin_planted(void)
{
	for (unsigned bit = 0; bit < 8; bit++) {
		struct planted p = {.needed = UINT32_C(1) << bit};

		CU_ASSERT_EQUAL(fl_ddmin(0xff, planted_test, &p, 16), p.needed);
		CU_ASSERT_TRUE(p.rounds <= 4);
	}
	struct planted pair = {.needed = (1u << 2) | (1u << 6)};

	CU_ASSERT_EQUAL(fl_ddmin(0xff, planted_test, &pair, 16), pair.needed);
	struct planted one = {.needed = 1u << 3};

	CU_ASSERT_EQUAL(fl_ddmin(1u << 3, planted_test, &one, 16), 1u << 3);
	CU_ASSERT_EQUAL(one.rounds, 0);
}

FL_TESTS(explore_tests, {"same_seed_same_schedules", test_same_seed_same_schedules},
	 {"trials_lint", test_trials_lint}, {"entries_placed", test_entries_placed},
	 {"rules_only_by_default", test_rules_only_by_default}, {"ports_drawn", test_ports_drawn},
	 {"kernel_oracle_planted", test_kernel_oracle_planted},
	 {"liveness_oracle_planted", test_liveness_oracle_planted},
	 {"user_oracle_planted", test_user_oracle_planted},
	 {"integrity_oracle_planted", test_integrity_oracle_planted},
	 {"oracle_order", test_oracle_order}, {"ddmin_planted", test_ddmin_planted},
	 {"liveness_bound", test_liveness_bound},
	 {"liveness_bound_rtpg", test_liveness_bound_rtpg});

FL_SUITES(FL_SUITE("explore", NULL, NULL, explore_tests));
