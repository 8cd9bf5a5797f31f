// SPDX-License-Identifier: MIT
/*
 * test_judge.c - the one expectation checker (scenario/judge.c) and the typed
 * check section (scenario/check.c).
 *
 * Table-driven over recorded runs: every shipped scenario's check, with what
 * each runner really observed (recorded/NAME.RUNNER.json, written by the
 * libiscsi runner's --obs and the VM lab's obs.json; NAME.libiscsi.json,
 * NAME.vm-PATH.json), goes through the checker
 * and must hold; the same observations with one step's outcome changed must
 * fail. Then the rules a key follows in every runner, one case each.
 */
#include "fl_scenario.h"
#include "runner.h"

#include <dirent.h>
#include <errno.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

/* Loads a scenario from text; NULL (with the diagnostics printed) on error. */
static struct fl_scenario *load(const char *text)
{
	struct fl_diags d = {0};
	struct fl_scenario *sc = NULL;

	if (fl_scenario_load_string("t.json", text, 0, &sc, &d))
		fl_diags_print(&d, stdout);
	fl_diags_free(&d);
	return sc;
}

/* Counts verdicts of one kind. */
static size_t count(const struct fl_verdict *v, int n, enum fl_verdict_kind k)
{
	size_t c = 0;

	for (int i = 0; i < n; i++)
		c += v[i].v == k;
	return c;
}

/* Judges one recorded run of one shipped scenario; returns its exit code, or -1. */
static int judge_recorded(const char *rec, const char *scen, struct fl_obs_doc **docp,
			  struct fl_scenario **scp)
{
	struct fl_diags d = {0};
	struct fl_verdict *v = NULL;
	int n, rc;

	if (fl_scenario_load_file(scen, FL_FE_ANY, scp, &d) || fl_obs_read(rec, docp)) {
		fl_diags_print(&d, stdout);
		fl_diags_free(&d);
		return -1;
	}
	fl_diags_free(&d);
	n = fl_check_judge(fl_scenario_check(*scp), fl_obs_of(*docp), &v);
	if (n < 0)
		return -1;
	rc = fl_verdicts_exit(v, (size_t)n);
	if (rc != 0)
		for (int i = 0; i < n; i++)
			if (v[i].v == FL_VERDICT_FAIL)
				printf("%s: expect %zu: %s (%s)\n", rec, v[i].expect, v[i].what,
				       v[i].observed);
	free(v);
	return rc;
}

/*
 * Every recorded run holds; and for every step some expectation applies to,
 * the run with that step's outcome changed (another errno, status and sense,
 * a time far off) fails: each check can notice a difference.
 */
static void test_recorded_runs(void)
{
	DIR *dir = opendir(FL_RECORDED);
	struct dirent *de;
	int files = 0, vm = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
	while ((de = readdir(dir))) {
		char rec[1024], scen[1024], name[256];
		struct fl_obs_doc *doc = NULL;
		struct fl_scenario *sc = NULL;
		char *dot;

		if (!strstr(de->d_name, ".json"))
			continue;
		snprintf(name, sizeof(name), "%s", de->d_name);
		dot = strchr(name, '.');
		*dot = 0;
		snprintf(rec, sizeof(rec), "%s/%s", FL_RECORDED, de->d_name);
		snprintf(scen, sizeof(scen), "%s/%s.json", FL_SCENARIOS, name);
		files++;
		vm += strstr(de->d_name, ".vm-") != NULL;
		CU_ASSERT_EQUAL(judge_recorded(rec, scen, &doc, &sc), 0);
		if (!doc || !sc) {
			fl_obs_free(doc);
			fl_scenario_free(sc);
			continue;
		}
		const struct fl_check *ck = fl_scenario_check(sc);
		const struct fl_obs *obs = fl_obs_of(doc);
		struct fl_step_obs *steps = calloc(obs->nsteps + 1, sizeof(*steps));
		struct fl_obs changed = *obs;

		changed.steps = steps;
		for (size_t s = 0; s < obs->nsteps && steps; s++) {
			struct fl_verdict *v = NULL;
			bool applies = false;
			int n;

			for (size_t x = 0; x < ck->nexpects; x++)
				applies |= ck->expects[x].step == (int)s &&
					   (ck->expects[x].runners & obs->runner) &&
					   (!ck->expects[x].vm_paths ||
					    (ck->expects[x].vm_paths & obs->vm_path)) &&
					   ck->expects[x].kinds != FL_EX_RAN &&
					   obs->steps[s].end != FL_END_UNSUPPORTED;
			if (!applies)
				continue;
			memcpy(steps, obs->steps, obs->nsteps * sizeof(*steps));
			snprintf(steps[s].errno_name, sizeof(steps[s].errno_name), "EWRONG");
			steps[s].end = FL_END_DONE;
			steps[s].has_status = true;
			steps[s].status = 0x30; /* ACA ACTIVE: no scenario expects it */
			steps[s].has_sense = false;
			steps[s].elapsed_ms = obs->steps[s].elapsed_ms > 1e6 ? 0 : 1e9;
			n = fl_check_judge(ck, &changed, &v);
			CU_ASSERT_TRUE(n > 0 && count(v, n, FL_VERDICT_FAIL) > 0);
			if (n > 0 && !count(v, n, FL_VERDICT_FAIL))
				printf("%s: step %zu changed, yet nothing failed\n", rec, s);
			free(v);
		}
		free(steps);
		fl_obs_free(doc);
		fl_scenario_free(sc);
	}
	closedir(dir);
	/* every shipped scenario for the iSCSI path, from both runners */
	CU_ASSERT_TRUE(files - vm >= 17);
	CU_ASSERT_TRUE(vm >= 16);
}

static const char *const base =
    "{\"faultlun\": 1, \"luns\": [{\"lun\": 0, \"size\": \"8MiB\"}, {\"lun\": 1, \"size\": \"8MiB\"}],"
    " \"check\": {\"workload\": [{\"op\": \"read\"}, {\"op\": \"tur\"}, {\"op\": \"mkfs\"}],"
    " \"expect\": [%s]}}";

/* The kernel release judge_one's runner reports (NULL: none). */
static const char *judge_kernel;
/* The VM-lab path judge_one's run is on (enum fl_check_path; 0: none). */
static unsigned judge_path;

/* Judges one expectation (JSON text) against steps observed by runner. */
static int judge_one(const char *expect, enum fl_runner runner, const struct fl_step_obs *steps,
		     bool kernel, struct fl_verdict *out)
{
	char text[2048];
	struct fl_scenario *sc;
	struct fl_verdict *v = NULL;
	static const char *const kmsg[] = {"sd 2:0:0:0: [sda] tag#3 abort scheduled",
					   "sd 2:0:0:0: [sda] tag#3 abort scheduled",
					   "scsi host2: iSCSI recovery"};
	static const enum fl_eh_step eh[] = {FL_EH_ABORT, FL_EH_LUN_RESET, FL_EH_TARGET_RESET};
	struct fl_step_obs seen[3];
	struct fl_obs obs = {.runner = runner,
			     .steps = seen,
			     .nsteps = 3,
			     .can_status_all = runner == FL_RUNNER_LIBISCSI,
			     .has_kernel = kernel,
			     .kmsg = kmsg,
			     .nkmsg = kernel ? 3 : 0,
			     .eh = eh,
			     .neh = kernel ? 3 : 0,
			     .kernel_release = judge_kernel,
			     .vm_path = judge_path};
	int n;

	/* The VM lab sees a SCSI status only of pass-through ops (step 1, tur). */
	memcpy(seen, steps, sizeof(seen));
	if (runner == FL_RUNNER_VM)
		seen[0].has_status = seen[0].has_sense = false;
	snprintf(text, sizeof(text), base, expect);
	sc = load(text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	n = fl_check_judge(fl_scenario_check(sc), &obs, &v);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	*out = v[0];
	free(v);
	fl_scenario_free(sc);
	return out->v;
}

static const struct fl_step_obs medium_error[3] = {
    {.end = FL_END_DONE, .errno_name = "ENODATA", .has_status = true, .status = 2,
     .has_sense = true, .key = 3, .asc = 0x11, .ascq = 0, .elapsed_ms = 12, .repeats_done = 1},
    {.end = FL_END_DONE, .errno_name = "OK", .has_status = true, .status = 0, .elapsed_ms = 1,
     .repeats_done = 1},
    {.end = FL_END_UNSUPPORTED, .why = "a file system operation"},
};

/* One expectation, two runners: the verdict each must give. */
static const struct {
	const char *expect;
	enum fl_verdict_kind libiscsi, vm;
} cases[] = {
    {"{\"step\": 0, \"errno\": \"ENODATA\"}", FL_VERDICT_PASS, FL_VERDICT_PASS},
    {"{\"step\": 0, \"errno\": [\"EIO\", \"ENODATA\"]}", FL_VERDICT_PASS, FL_VERDICT_PASS},
    {"{\"step\": 0, \"errno\": \"EIO\"}", FL_VERDICT_FAIL, FL_VERDICT_FAIL},
    /* status and sense of a read: the VM lab cannot see them (not applicable) */
    {"{\"step\": 0, \"sense\": \"MEDIUM_ERROR/UNRECOVERED_READ_ERROR\"}", FL_VERDICT_PASS,
     FL_VERDICT_NA},
    {"{\"step\": 0, \"sense\": \"MEDIUM_ERROR\"}", FL_VERDICT_PASS, FL_VERDICT_NA},
    {"{\"step\": 0, \"sense\": \"3/11/00\"}", FL_VERDICT_PASS, FL_VERDICT_NA},
    {"{\"step\": 0, \"sense\": \"MEDIUM_ERROR/11/01\"}", FL_VERDICT_FAIL, FL_VERDICT_NA},
    {"{\"step\": 1, \"status\": \"good\"}", FL_VERDICT_PASS, FL_VERDICT_PASS},
    {"{\"step\": 1, \"status\": \"BUSY\"}", FL_VERDICT_FAIL, FL_VERDICT_FAIL},
    {"{\"step\": 0, \"within_ms\": 20}", FL_VERDICT_PASS, FL_VERDICT_PASS},
    {"{\"step\": 0, \"within_ms\": 10}", FL_VERDICT_FAIL, FL_VERDICT_FAIL},
    {"{\"step\": 0, \"min_ms\": 10}", FL_VERDICT_PASS, FL_VERDICT_PASS},
    {"{\"step\": 1}", FL_VERDICT_PASS, FL_VERDICT_PASS},
    /* an op the runner cannot carry out: not applicable, never a pass */
    {"{\"step\": 2, \"errno\": \"OK\"}", FL_VERDICT_NA, FL_VERDICT_NA},
    /* kernel-only expectations: not applicable without a kernel */
    {"{\"kernel_log\": \"abort scheduled\", \"count\": 2}", FL_VERDICT_NA, FL_VERDICT_PASS},
    {"{\"kernel_log\": \"abort scheduled\", \"max\": 1}", FL_VERDICT_NA, FL_VERDICT_FAIL},
    {"{\"eh\": [\"abort\", \"target_reset\"]}", FL_VERDICT_NA, FL_VERDICT_PASS},
    {"{\"eh\": [\"target_reset\", \"abort\"]}", FL_VERDICT_NA, FL_VERDICT_FAIL},
    {"{\"max_stall_ms\": 100}", FL_VERDICT_NA, FL_VERDICT_NA},
    {"{\"device_state\": \"running\"}", FL_VERDICT_NA, FL_VERDICT_NA},
    /* scoped to one runner: the other says not applicable */
    {"{\"step\": 0, \"errno\": \"EIO\", \"runner\": \"vm\"}", FL_VERDICT_NA, FL_VERDICT_FAIL},
    {"{\"step\": 0, \"errno\": \"ENODATA\", \"runner\": \"libiscsi\"}", FL_VERDICT_PASS,
     FL_VERDICT_NA},
};

/* Each key means the same in both runners; what one cannot see is N/A. */
static void test_same_meaning(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fl_verdict v;

		if (judge_one(cases[i].expect, FL_RUNNER_LIBISCSI, medium_error, false, &v) !=
		    (int)cases[i].libiscsi)
			printf("libiscsi: %s -> %s (%s)\n", cases[i].expect, fl_verdict_name(v.v),
			       v.observed);
		CU_ASSERT_EQUAL(v.v, cases[i].libiscsi);
		CU_ASSERT_TRUE(v.what[0] != 0); /* N/A entries say what they expected too */
		if (judge_one(cases[i].expect, FL_RUNNER_VM, medium_error, true, &v) !=
		    (int)cases[i].vm)
			printf("vm: %s -> %s (%s)\n", cases[i].expect, fl_verdict_name(v.v),
			       v.observed);
		CU_ASSERT_EQUAL(v.v, cases[i].vm);
	}
}

/* A step that should have run and did not fails its expectations. */
static void test_not_run_fails(void)
{
	struct fl_step_obs steps[3] = {
	    {.end = FL_END_NOT_RUN, .why = "cannot run faultlun"}, {.end = FL_END_DONE}, {0}};
	struct fl_verdict v;

	CU_ASSERT_EQUAL(judge_one("{\"step\": 0, \"errno\": \"OK\"}", FL_RUNNER_LIBISCSI, steps,
				  false, &v),
			FL_VERDICT_FAIL);
	CU_ASSERT_PTR_NOT_NULL(strstr(v.observed, "cannot run faultlun"));
}

/* A step past its deadline is TIMEOUT in both runners; within_ms fails. */
static void test_timeout(void)
{
	struct fl_step_obs steps[3] = {{.end = FL_END_TIMEOUT, .elapsed_ms = 1000}};
	struct fl_verdict v;

	CU_ASSERT_EQUAL(judge_one("{\"step\": 0, \"errno\": \"TIMEOUT\"}", FL_RUNNER_VM, steps,
				  true, &v),
			FL_VERDICT_PASS);
	CU_ASSERT_EQUAL(judge_one("{\"step\": 0, \"errno\": \"TIMEOUT\"}", FL_RUNNER_LIBISCSI,
				  steps, false, &v),
			FL_VERDICT_PASS);
	CU_ASSERT_EQUAL(judge_one("{\"step\": 0, \"within_ms\": 5000}", FL_RUNNER_VM, steps, true,
				  &v),
			FL_VERDICT_FAIL);
}

/* Step values: one set of rules and defaults, checked when the file is read. */
static void test_step_values(void)
{
	static const char *const good =
	    "{\"faultlun\": 1, \"check\": {\"workload\": ["
	    "{\"op\": \"sleep\"}, {\"op\": \"sg_raw\", \"cdb\": \"28:00:00:00:00:10:00:00:08:00\","
	    " \"size\": \"4KiB\"}, {\"op\": \"read\", \"lba\": \"0x10\", \"repeat\": 3},"
	    " {\"op\": \"write_file\"}, {\"op\": \"mkfs\"}, {\"op\": \"read\", \"lba\": \"010\"}]}}";
	static const char *const bad[] = {
	    "{\"op\": \"sg_raw\", \"cdb\": \"28 0\"}",			/* too short */
	    "{\"op\": \"sg_raw\", \"cdb\": \"280\"}",			/* odd digit */
	    "{\"op\": \"sg_raw\", \"cdb\": \"28 00 00 00 00 10 00 00 08 00 00 00 00 00 00 00 00\"}",
	    "{\"op\": \"read\", \"lun\": 7}",				/* no such LUN */
	    "{\"op\": \"read\", \"repeat\": 0}",
	    "{\"op\": \"read\", \"count\": 2}",			/* not a step key */
	    "{\"op\": \"read\", \"bs\": 512}",
	    "{\"op\": \"sleep\", \"ms\": \"1s\"}",
	    "{\"op\": \"mkfs\", \"fs\": \"zfs\"}",
	    "{\"op\": \"ctl\"}",
	    "{\"op\": \"reed\"}",
	    "{\"op\": \"read\", \"lba\": \"0x\"}",
	    "{\"op\": \"read\", \"lba\": \" 5\"}",
	};
	struct fl_scenario *sc = load(good);
	const struct fl_check *ck;

	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	ck = fl_scenario_check(sc);
	CU_ASSERT_EQUAL(ck->steps[0].ms, FL_STEP_SLEEP_MS);
	CU_ASSERT_EQUAL(ck->steps[1].cdb_len, 10);
	CU_ASSERT_EQUAL(ck->steps[1].cdb[5], 0x10);
	CU_ASSERT_EQUAL(ck->steps[1].data_in, 4096);
	CU_ASSERT_EQUAL(ck->steps[2].lba, 16);
	CU_ASSERT_EQUAL(ck->steps[2].repeat, 3);
	CU_ASSERT_EQUAL(ck->steps[2].timeout_s, FL_STEP_TIMEOUT_S);
	CU_ASSERT_STRING_EQUAL(ck->steps[3].path, "file");
	CU_ASSERT_STRING_EQUAL(ck->steps[4].fs, "ext4");
	CU_ASSERT_EQUAL(ck->steps[5].lba, 10); /* decimal, as every number: never octal */
	fl_scenario_free(sc);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[512];
		struct fl_diags d = {0};

		snprintf(text, sizeof(text), "{\"faultlun\": 1, \"check\": {\"workload\": [%s]}}",
			 bad[i]);
		sc = NULL;
		if (fl_scenario_load_string("t.json", text, 0, &sc, &d) != -EINVAL)
			printf("accepted: %s\n", bad[i]);
		CU_ASSERT_PTR_NULL(sc);
		CU_ASSERT_TRUE(d.n > 0);
		fl_diags_free(&d);
		fl_scenario_free(sc);
	}
}

/* Expectation values are checked when the file is read, not by a runner. */
static void test_expect_values(void)
{
	static const char *const bad[] = {
	    "{\"step\": 5, \"errno\": \"OK\"}",		     /* no step 5 */
	    "{\"step\": 0, \"status\": \"FINE\"}",	     /* no such status */
	    "{\"step\": 0, \"sense\": \"MEDIUM_ERROR/NOPE\"}", /* no such name */
	    "{\"step\": 0, \"errno\": \"eio\"}",
	    "{\"kernel_log\": \"(unclosed\"}",
	    "{\"eh\": [\"lun_rest\"]}",
	    "{\"step\": 0, \"max_stall_ms\": 10}",
	    "{\"kernel_log\": \"x\", \"eh\": []}",
	    "{\"errno\": \"OK\"}",
	    "{\"runner\": \"kernel\", \"step\": 0}",
	    "{\"trace\": {\"event\": {\"nested\": 1}}}",
	    "{\"step\": 0, \"kernel\": \"six\"}",
	    "{\"step\": 0, \"kernel\": \">=6.12,\"}",
	    "{\"step\": 0, \"kernel\": \"=>6.1\"}",
	    "{\"step\": 0, \"kernel\": 612}",
	    "{\"step\": 0, \"vm_path\": \"tcm\"}",
	    "{\"step\": 0, \"vm_path\": [\"iscsi\", \"fc\"]}",
	    "{\"step\": 0, \"vm_path\": []}",
	    "{\"step\": 0, \"vm_path\": 1}",
	    "{\"step\": 0, \"vm_path\": \"TCMU\"}",
	    "{\"access_state\": \"standby\"}",		   /* without dh_state */
	    "{\"dh_state\": 1}",
	    "{\"dh_state\": \"alua\", \"access_state\": [\"standby\"]}",
	    "{\"step\": 0, \"dh_state\": \"alua\"}", /* not about a step */
	    "{\"dh_state\": \"alua\", \"path\": \"A\", \"state\": \"current\"}",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[2048];
		struct fl_diags d = {0};
		struct fl_scenario *sc = NULL;

		snprintf(text, sizeof(text), base, bad[i]);
		if (fl_scenario_load_string("t.json", text, 0, &sc, &d) != -EINVAL)
			printf("accepted: %s\n", bad[i]);
		CU_ASSERT_PTR_NULL(sc);
		fl_diags_free(&d);
		fl_scenario_free(sc);
	}
}

/* Judges expect against the device-handler lines dh (n of them; has: the runner sees handlers). */
static int judge_dh(const char *expect, bool has, const char *const *dh, size_t n,
		    struct fl_verdict *out)
{
	char text[2048];
	struct fl_scenario *sc;
	struct fl_verdict *v = NULL;
	struct fl_obs obs = {.runner = has ? FL_RUNNER_VM : FL_RUNNER_LIBISCSI,
			     .steps = medium_error,
			     .nsteps = 3,
			     .has_kernel = has,
			     .has_dh = has,
			     .dh = dh,
			     .ndh = n};

	snprintf(text, sizeof(text), base, expect);
	sc = load(text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	CU_ASSERT_EQUAL_FATAL(fl_check_judge(fl_scenario_check(sc), &obs, &v), 1);
	*out = v[0];
	free(v);
	fl_scenario_free(sc);
	return out->v;
}

/*
 * dh_state: how often a disk's handler entered a state, from the lab's
 * device-handler lines; a line that repeats the state (max_sectors_kb
 * changed) is not a new entry; the libiscsi runner gives N/A.
 */
static void test_dh_state(void)
{
	static const char *const dh[] = {
	    "sda alua active/optimized max_sectors_kb 1280",
	    "sdb alua active/non-optimized max_sectors_kb 1280",
	    "sda alua transitioning max_sectors_kb 1280",
	    "sda alua transitioning max_sectors_kb 512",
	    "sda alua standby max_sectors_kb 512",
	    "sdb alua transitioning max_sectors_kb 1280",
	    "sda alua active/optimized max_sectors_kb 512",
	};
	static const struct {
		const char *expect;
		enum fl_verdict_kind v;
	} rows[] = {
	    {"{\"dh_state\": \"alua\", \"access_state\": \"transitioning\"}", FL_VERDICT_PASS},
	    {"{\"dh_state\": \"alua\", \"access_state\": \"transitioning\", \"count\": 2}",
	     FL_VERDICT_PASS},
	    {"{\"dh_state\": \"alua\", \"access_state\": \"transitioning\", \"count\": 3}",
	     FL_VERDICT_FAIL},
	    {"{\"dh_state\": \"alua\", \"access_state\": \"standby\", \"max\": 0}",
	     FL_VERDICT_FAIL},
	    {"{\"dh_state\": \"alua\", \"access_state\": \"active/optimized\", \"count\": 2}",
	     FL_VERDICT_PASS},
	    {"{\"dh_state\": \"alua\", \"access_state\": \"unavailable\"}", FL_VERDICT_FAIL},
	    {"{\"dh_state\": \"alua\", \"count\": 2}", FL_VERDICT_PASS}, /* attached to two disks */
	    {"{\"dh_state\": \"emc\"}", FL_VERDICT_FAIL},
	    {"{\"dh_state\": \"emc\", \"count\": 0}", FL_VERDICT_PASS},
	};
	struct fl_verdict v;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (judge_dh(rows[i].expect, true, dh, sizeof(dh) / sizeof(dh[0]), &v) !=
		    (int)rows[i].v)
			printf("%s -> %s (%s)\n", rows[i].expect, fl_verdict_name(v.v), v.observed);
		CU_ASSERT_EQUAL(v.v, rows[i].v);
		CU_ASSERT_EQUAL(v.kind, FL_EX_DH_STATE);
	}
	CU_ASSERT_EQUAL(judge_dh(rows[0].expect, false, NULL, 0, &v), FL_VERDICT_NA);
	CU_ASSERT_PTR_NOT_NULL(strstr(v.observed, "sees no device handler"));
	/* no handler attached: a failure that says so */
	CU_ASSERT_EQUAL(judge_dh(rows[0].expect, true, NULL, 0, &v), FL_VERDICT_FAIL);
	CU_ASSERT_PTR_NOT_NULL(strstr(v.observed, "no disk had a device handler attached"));
	CU_ASSERT_PTR_NOT_NULL(strstr(v.what, "device handler alua in transitioning"));
	CU_ASSERT_STRING_EQUAL(fl_expect_kind_word(FL_EX_DH_STATE), "dh_state");

	/* the lines survive obs.json */
	char path[] = "/tmp/fl-obs-dh-XXXXXX";
	int fd = mkstemp(path);
	struct fl_obs obs = {.runner = FL_RUNNER_VM, .has_dh = true, .dh = dh, .ndh = 7};
	struct fl_obs_doc *doc = NULL;

	CU_ASSERT_TRUE_FATAL(fd >= 0);
	close(fd);
	CU_ASSERT_EQUAL(fl_obs_write(&obs, path), 0);
	CU_ASSERT_EQUAL_FATAL(fl_obs_read(path, &doc), 0);
	CU_ASSERT_TRUE(fl_obs_of(doc)->has_dh);
	CU_ASSERT_EQUAL_FATAL(fl_obs_of(doc)->ndh, 7);
	CU_ASSERT_STRING_EQUAL(fl_obs_of(doc)->dh[4], dh[4]);
	fl_obs_free(doc);
	unlink(path);
}

/* Kernel ranges: each term on the release's numbers, to the term's precision. */
static void test_kernel_range(void)
{
	static const struct {
		const char *spec, *release;
		int in;
	} cases[] = {
	    {">=6.12", "6.12.117+deb13-amd64", 1},
	    {">=6.12", "6.1.0-57-amd64", 0},
	    {">=6.12", "7.2.13+deb14-amd64", 1},
	    {"<6.12", "6.1.0-57-amd64", 1},
	    {"<6.12", "6.12.0", 0},
	    {"6.1", "6.1.0-57-amd64", 1},
	    {"6.1", "6.12.117+deb13-amd64", 0},
	    {"=7.2", "7.2.13+deb14-amd64", 1},
	    {">=6.1,<6.12", "6.1.0-57-amd64", 1},
	    {">=6.1,<6.12", "6.12.117", 0},
	    {">=6.1, <6.12", "6.6.30", 1},
	    {">6.1", "6.1.99", 0},
	    {">6.1.5", "6.1.99", 1},
	    {"<=6.12", "6.12.200", 1},
	    {">=6.1", "garbage", 0},
	    {">=6.1", NULL, 0},
	    {"", "6.1", -EINVAL},
	    {">=", "6.1", -EINVAL},
	    {"6.1,", "6.1", -EINVAL},
	    {"6.1x", "6.1", -EINVAL},
	    {"~6.1", "6.1", -EINVAL},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = fl_kernel_in_range(cases[i].spec, cases[i].release);

		if (got != cases[i].in)
			printf("%s on %s: %d, expected %d\n", cases[i].spec,
			       cases[i].release ? cases[i].release : "(none)", got, cases[i].in);
		CU_ASSERT_EQUAL(got, cases[i].in);
	}
}

/* An entry scoped to kernels the run is not on is N/A; on them it is judged. */
static void test_kernel_scope(void)
{
	struct fl_verdict v;

	judge_kernel = "6.12.117+deb13-amd64";
	CU_ASSERT_EQUAL(judge_one("{\"step\": 0, \"errno\": \"ENODATA\", \"kernel\": \">=6.12\"}",
				  FL_RUNNER_VM, medium_error, true, &v),
			FL_VERDICT_PASS);
	CU_ASSERT_EQUAL(judge_one("{\"step\": 0, \"errno\": \"EIO\", \"kernel\": \">=6.12\"}",
				  FL_RUNNER_VM, medium_error, true, &v),
			FL_VERDICT_FAIL);
	CU_ASSERT_EQUAL(judge_one("{\"step\": 0, \"errno\": \"EIO\", \"kernel\": \"<6.12\"}",
				  FL_RUNNER_VM, medium_error, true, &v),
			FL_VERDICT_NA);
	CU_ASSERT_PTR_NOT_NULL(strstr(v.observed, "this run is on 6.12.117+deb13-amd64"));
	CU_ASSERT_PTR_NOT_NULL(strstr(v.what, "step 0 errno EIO"));
	CU_ASSERT_EQUAL(judge_one("{\"kernel_log\": \"abort scheduled\", \"kernel\": \"6.1\"}",
				  FL_RUNNER_VM, medium_error, true, &v),
			FL_VERDICT_NA);
	judge_kernel = "6.1.0-57-amd64";
	CU_ASSERT_EQUAL(judge_one("{\"kernel_log\": \"abort scheduled\", \"kernel\": \"6.1\"}",
				  FL_RUNNER_VM, medium_error, true, &v),
			FL_VERDICT_PASS);
	/* the libiscsi runner runs on no kernel: scoped entries are N/A there */
	judge_kernel = NULL;
	CU_ASSERT_EQUAL(judge_one("{\"step\": 0, \"errno\": \"ENODATA\", \"kernel\": \">=6.1\"}",
				  FL_RUNNER_LIBISCSI, medium_error, false, &v),
			FL_VERDICT_NA);
	CU_ASSERT_PTR_NOT_NULL(strstr(v.observed, "runs on no kernel"));
	/* unscoped entries are judged on every kernel and in every runner */
	CU_ASSERT_EQUAL(judge_one("{\"step\": 0, \"errno\": \"ENODATA\"}", FL_RUNNER_LIBISCSI,
				  medium_error, false, &v),
			FL_VERDICT_PASS);
}

/* An entry scoped to VM-lab paths the run is not on is N/A; on them it is judged. */
static void test_vm_path_scope(void)
{
	struct fl_verdict v;

	judge_path = FL_PATH_TCMU;
	CU_ASSERT_EQUAL(judge_one("{\"step\": 0, \"errno\": \"ENODATA\", \"vm_path\": \"tcmu\"}",
				  FL_RUNNER_VM, medium_error, true, &v),
			FL_VERDICT_PASS);
	CU_ASSERT_EQUAL(judge_one("{\"step\": 0, \"errno\": \"EIO\", \"vm_path\": \"tcmu\"}",
				  FL_RUNNER_VM, medium_error, true, &v),
			FL_VERDICT_FAIL);
	CU_ASSERT_EQUAL(judge_one("{\"step\": 0, \"errno\": \"EIO\", \"vm_path\": \"iscsi\"}",
				  FL_RUNNER_VM, medium_error, true, &v),
			FL_VERDICT_NA);
	CU_ASSERT_PTR_NOT_NULL(strstr(v.observed, "scoped to VM-lab path iscsi; this run is on tcmu"));
	CU_ASSERT_PTR_NOT_NULL(strstr(v.what, "step 0 errno EIO"));
	/* a list: any of its paths */
	CU_ASSERT_EQUAL(judge_one("{\"kernel_log\": \"abort scheduled\", "
				  "\"vm_path\": [\"iscsi\", \"tcmu\"]}",
				  FL_RUNNER_VM, medium_error, true, &v),
			FL_VERDICT_PASS);
	CU_ASSERT_EQUAL(judge_one("{\"kernel_log\": \"abort scheduled\", "
				  "\"vm_path\": [\"iscsi\", \"lio\"]}",
				  FL_RUNNER_VM, medium_error, true, &v),
			FL_VERDICT_NA);
	CU_ASSERT_PTR_NOT_NULL(strstr(v.observed, "path iscsi,lio;"));
	judge_path = FL_PATH_ISCSI;
	CU_ASSERT_EQUAL(judge_one("{\"step\": 0, \"errno\": \"EIO\", \"vm_path\": \"iscsi\"}",
				  FL_RUNNER_VM, medium_error, true, &v),
			FL_VERDICT_FAIL);
	/* with a kernel scope too, both must hold */
	judge_kernel = "6.1.0-57-amd64";
	CU_ASSERT_EQUAL(judge_one("{\"step\": 0, \"errno\": \"EIO\", \"vm_path\": \"iscsi\", "
				  "\"kernel\": \">=6.12\"}",
				  FL_RUNNER_VM, medium_error, true, &v),
			FL_VERDICT_NA);
	judge_kernel = NULL;
	/*
	 * the libiscsi runner drives the iSCSI front end: entries scoped to the
	 * iscsi path are judged there, entries scoped to other paths are N/A
	 */
	judge_path = 0;
	CU_ASSERT_EQUAL(judge_one("{\"step\": 0, \"errno\": \"ENODATA\", \"vm_path\": \"iscsi\"}",
				  FL_RUNNER_LIBISCSI, medium_error, false, &v),
			FL_VERDICT_PASS);
	CU_ASSERT_EQUAL(judge_one("{\"step\": 0, \"errno\": \"EIO\", \"vm_path\": [\"tcmu\", \"iscsi\"]}",
				  FL_RUNNER_LIBISCSI, medium_error, false, &v),
			FL_VERDICT_FAIL);
	CU_ASSERT_EQUAL(judge_one("{\"step\": 0, \"errno\": \"ENODATA\", \"vm_path\": \"tcmu\"}",
				  FL_RUNNER_LIBISCSI, medium_error, false, &v),
			FL_VERDICT_NA);
	CU_ASSERT_PTR_NOT_NULL(strstr(v.observed, "the libiscsi runner has no VM-lab path"));
	/* unscoped entries are judged on every path */
	judge_path = FL_PATH_LIO;
	CU_ASSERT_EQUAL(judge_one("{\"step\": 0, \"errno\": \"ENODATA\"}", FL_RUNNER_VM,
				  medium_error, true, &v),
			FL_VERDICT_PASS);
	judge_path = 0;
}

/* Observations survive a write and a read. */
static void test_obs_round_trip(void)
{
	char path[] = "/tmp/fl-obs-XXXXXX";
	int fd = mkstemp(path);
	struct fl_obs obs = {.runner = FL_RUNNER_LIBISCSI,
			     .steps = medium_error,
			     .nsteps = 3,
			     .kernel_release = "7.2.13+deb14-amd64",
			     .vm_path = FL_PATH_TCMU};
	struct fl_obs_doc *doc = NULL;
	const struct fl_obs *o;

	CU_ASSERT_TRUE_FATAL(fd >= 0);
	close(fd);
	CU_ASSERT_EQUAL(fl_obs_write(&obs, path), 0);
	CU_ASSERT_EQUAL_FATAL(fl_obs_read(path, &doc), 0);
	o = fl_obs_of(doc);
	CU_ASSERT_EQUAL(o->runner, FL_RUNNER_LIBISCSI);
	CU_ASSERT_EQUAL(o->nsteps, 3);
	CU_ASSERT_STRING_EQUAL(o->steps[0].errno_name, "ENODATA");
	CU_ASSERT_EQUAL(o->steps[0].asc, 0x11);
	CU_ASSERT_EQUAL(o->steps[2].end, FL_END_UNSUPPORTED);
	CU_ASSERT_FALSE(o->has_kernel);
	CU_ASSERT_STRING_EQUAL(o->kernel_release ? o->kernel_release : "", "7.2.13+deb14-amd64");
	CU_ASSERT_EQUAL(o->vm_path, FL_PATH_TCMU);
	fl_obs_free(doc);
	unlink(path);
}

/* Judges the one expectation expect of a check (JSON text around it) against steps. */
static int judge_check(const char *check_fmt, const char *expect, enum fl_runner runner,
		       const struct fl_step_obs *steps, size_t nsteps, struct fl_verdict *out)
{
	char text[2048];
	struct fl_scenario *sc;
	struct fl_verdict *v = NULL;
	struct fl_obs obs = {.runner = runner,
			     .steps = steps,
			     .nsteps = nsteps,
			     .can_status_all = runner == FL_RUNNER_LIBISCSI};
	int n;

	snprintf(text, sizeof(text), check_fmt, expect);
	sc = load(text);
	CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
	n = fl_check_judge(fl_scenario_check(sc), &obs, &v);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	*out = v[0];
	free(v);
	fl_scenario_free(sc);
	return out->v;
}

static const char *const ua_check =
    "{\"faultlun\": 1, \"luns\": [{\"lun\": 0, \"size\": \"8MiB\"}],"
    " \"check\": {\"workload\": [{\"op\": \"read\"}, {\"op\": \"tur\"}],"
    " \"expect\": [%s]}}";

/* "ua": the step's answer is that UNIT ATTENTION, by name or AA/QQ; N/A as sense is. */
static void test_ua(void)
{
	/* step 1 (tur) answered 2A/09, as SG_IO returns it; step 0 (read) GOOD */
	static const struct fl_step_obs seen[2] = {
	    {.end = FL_END_DONE, .errno_name = "OK", .has_status = true, .status = 0},
	    {.end = FL_END_DONE, .errno_name = "OK", .has_status = true, .status = 2,
	     .has_sense = true, .key = 6, .asc = 0x2a, .ascq = 0x09},
	};
	static const struct fl_step_obs vm_seen[2] = {
	    {.end = FL_END_DONE, .errno_name = "OK"}, /* no status of a block read */
	    {.end = FL_END_DONE, .errno_name = "OK", .has_status = true, .status = 2,
	     .has_sense = true, .key = 6, .asc = 0x2a, .ascq = 0x09},
	};
	static const struct {
		const char *expect;
		enum fl_verdict_kind libiscsi, vm;
	} c[] = {
	    {"{\"step\": 1, \"ua\": \"2A/09\"}", FL_VERDICT_PASS, FL_VERDICT_PASS},
	    {"{\"step\": 1, \"ua\": \"2a/09\"}", FL_VERDICT_PASS, FL_VERDICT_PASS},
	    {"{\"step\": 1, \"ua\": \"CAPACITY_DATA_HAS_CHANGED\"}", FL_VERDICT_PASS,
	     FL_VERDICT_PASS},
	    {"{\"step\": 1, \"ua\": \"38/07\"}", FL_VERDICT_FAIL, FL_VERDICT_FAIL},
	    {"{\"step\": 1, \"ua\": \"POWER_ON_RESET\"}", FL_VERDICT_FAIL, FL_VERDICT_FAIL},
	    {"{\"step\": 0, \"ua\": \"2A/09\"}", FL_VERDICT_FAIL, FL_VERDICT_NA},
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct fl_verdict v;

		if (judge_check(ua_check, c[i].expect, FL_RUNNER_LIBISCSI, seen, 2, &v) !=
		    (int)c[i].libiscsi)
			printf("libiscsi: %s -> %s (%s)\n", c[i].expect, fl_verdict_name(v.v),
			       v.observed);
		CU_ASSERT_EQUAL(v.v, c[i].libiscsi);
		CU_ASSERT_EQUAL(v.kind, FL_EX_UA);
		CU_ASSERT_PTR_NOT_NULL(strstr(v.what, "UNIT ATTENTION"));
		if (judge_check(ua_check, c[i].expect, FL_RUNNER_VM, vm_seen, 2, &v) !=
		    (int)c[i].vm)
			printf("vm: %s -> %s (%s)\n", c[i].expect, fl_verdict_name(v.v), v.observed);
		CU_ASSERT_EQUAL(v.v, c[i].vm);
	}
}

static const char *const tmf_check =
    "{\"faultlun\": 1, \"luns\": [{\"lun\": 0, \"size\": \"8MiB\"}],"
    " \"check\": {\"workload\": [{\"op\": \"write\", \"timeout_s\": 1}, {\"op\": "
    "\"abort_task\"}, {\"op\": \"lun_reset\"}, {\"op\": \"unmap\", \"blocks\": 8}],"
    " \"expect\": [%s]}}";

/* TMF steps: tmf_response in the libiscsi runner; the VM lab cannot run them (N/A). */
static void test_tmf_steps(void)
{
	static const struct fl_step_obs seen[4] = {
	    {.end = FL_END_TIMEOUT, .elapsed_ms = 1000},
	    {.end = FL_END_DONE, .errno_name = "OK", .has_tmf_response = true, .tmf_response = 0},
	    {.end = FL_END_DONE, .errno_name = "EIO", .has_tmf_response = true, .tmf_response = 5},
	    {.end = FL_END_DONE, .errno_name = "OK", .has_status = true, .status = 0},
	};
	/* what the VM lab's agent records: the op did not run */
	static const struct fl_step_obs vm_seen[4] = {
	    {.end = FL_END_TIMEOUT, .elapsed_ms = 1000},
	    {.end = FL_END_NOT_RUN, .why = "the VM lab cannot run this op"},
	    {.end = FL_END_NOT_RUN, .why = "the VM lab cannot run this op"},
	    {.end = FL_END_NOT_RUN, .why = "the VM lab cannot run this op"},
	};
	static const struct {
		const char *expect;
		enum fl_verdict_kind libiscsi, vm;
	} c[] = {
	    {"{\"step\": 1, \"tmf_response\": \"function_complete\"}", FL_VERDICT_PASS,
	     FL_VERDICT_NA},
	    {"{\"step\": 1, \"tmf_response\": \"task_does_not_exist\"}", FL_VERDICT_FAIL,
	     FL_VERDICT_NA},
	    {"{\"step\": 2, \"tmf_response\": \"not_supported\"}", FL_VERDICT_PASS,
	     FL_VERDICT_NA},
	    {"{\"step\": 2, \"errno\": \"EIO\"}", FL_VERDICT_PASS, FL_VERDICT_NA},
	    {"{\"step\": 3, \"status\": \"GOOD\"}", FL_VERDICT_PASS, FL_VERDICT_NA},
	    /* tmf_response of a step that is no TMF fails */
	    {"{\"step\": 3, \"tmf_response\": \"function_complete\"}", FL_VERDICT_FAIL,
	     FL_VERDICT_NA},
	    {"{\"step\": 0, \"errno\": \"TIMEOUT\"}", FL_VERDICT_PASS, FL_VERDICT_PASS},
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct fl_verdict v;

		if (judge_check(tmf_check, c[i].expect, FL_RUNNER_LIBISCSI, seen, 4, &v) !=
		    (int)c[i].libiscsi)
			printf("libiscsi: %s -> %s (%s)\n", c[i].expect, fl_verdict_name(v.v),
			       v.observed);
		CU_ASSERT_EQUAL(v.v, c[i].libiscsi);
		if (judge_check(tmf_check, c[i].expect, FL_RUNNER_VM, vm_seen, 4, &v) !=
		    (int)c[i].vm)
			printf("vm: %s -> %s (%s)\n", c[i].expect, fl_verdict_name(v.v), v.observed);
		CU_ASSERT_EQUAL(v.v, c[i].vm);
	}
}

/* Loads text; returns the load's result and whether a diagnostic holds want. */
static int load_diag(const char *text, const char *want, bool *found)
{
	struct fl_diags d = {0};
	struct fl_scenario *sc = NULL;
	int r = fl_scenario_load_string("t.json", text, 0, &sc, &d);

	*found = false;
	for (size_t k = 0; k < d.n; k++)
		*found |= want && strstr(d.v[k].msg, want) != NULL;
	if (want && !*found)
		fl_diags_print(&d, stdout);
	fl_diags_free(&d);
	fl_scenario_free(sc);
	return r;
}

/*
 * New steps' values and defaults, and what lint says of a workload: warnings
 * (the load succeeds) of a deadline shorter than the runner's error handling,
 * of a min_ms past the deadline, of a step the VM lab cannot run; an error for
 * an abort_task with no command before it.
 */
static void test_workload_lint(void)
{
	static const struct {
		const char *check, *want;
		int r;
	} c[] = {
	    /* 18 s < 2 x 2 s (the pings on) + 3 x 5 s */
	    {"\"knobs\": {\"timeout_s\": 2}, \"workload\": [{\"op\": \"write\", \"timeout_s\": 18}]",
	     "(19000 ms: the command's timer 4000 ms, twice the command timeout with the pings on", 0},
	    /* 5 s < 2 x 10 s command timeout (the pings on) + 3 x 5 s TMF waits */
	    {"\"knobs\": {\"timeout_s\": 10}, \"workload\": [{\"op\": \"read\", \"timeout_s\": 5}]",
	     "warning: step 0's deadline (timeout_s 5 s) is shorter than the libiscsi runner's "
	     "error handling of one command (35000 ms",
	     0},
	    {"\"knobs\": {\"timeout_s\": 10, \"reset_wait_ms\": 1000}, \"workload\": [{\"op\": "
	     "\"write\", \"timeout_s\": 22}]",
	     "(23000 ms: the command's timer 20000 ms, twice the command timeout with the pings on, "
	     "then ABORT TASK and two LUN RESETs, each "
	     "waited up to knobs.reset_wait_ms 1000 ms)",
	     0},
	    /* a pass-through command's timer is SG_IO's: 60 s past a 60 s deadline */
	    {"\"knobs\": {\"timeout_s\": 10, \"reset_wait_ms\": 1000}, \"workload\": [{\"op\": "
	     "\"tur\", \"timeout_s\": 100}]",
	     "(123000 ms: the command's timer 120000 ms, twice SG_IO's timeout with the pings on",
	     0},
	    {"\"workload\": [{\"op\": \"read\", \"timeout_s\": 2}], \"expect\": [{\"step\": 0, "
	     "\"min_ms\": 2500}]",
	     "warning: min_ms 2500 is past step 0's deadline (timeout_s 2 s)", 0},
	    {"\"paths\": [\"iscsi\"], \"workload\": [{\"op\": \"lun_reset\"}]",
	     "warning: the VM lab cannot run lun_reset steps", 0},
	    {"\"paths\": [\"tcmu\"], \"workload\": [{\"op\": \"write_same\"}]",
	     "warning: the VM lab cannot run write_same steps", 0},
	    {"\"workload\": [{\"op\": \"abort_task\"}]",
	     "abort_task aborts the previous step's command: step 0 has no step before it",
	     -EINVAL},
	    {"\"workload\": [{\"op\": \"sleep\"}, {\"op\": \"abort_task\"}]",
	     "step 1 does not follow a step that sends one", -EINVAL},
	    {"\"workload\": [{\"op\": \"lun-reset\"}]", "did you mean \"lun_reset\"", -EINVAL},
	    {"\"workload\": [{\"op\": \"unmap\", \"pattern\": 1}]", "pattern", -EINVAL},
	    {"\"workload\": [{\"op\": \"tur\"}], \"expect\": [{\"step\": 0, \"ua\": \"NOPE\"}]",
	     "NOPE", -EINVAL},
	    {"\"workload\": [{\"op\": \"lun_reset\"}], \"expect\": [{\"step\": 0, "
	     "\"tmf_response\": \"done\"}]",
	     "\"tmf_response\": unknown response \"done\"", -EINVAL},
	    {"\"workload\": [{\"op\": \"tur\"}], \"expect\": [{\"ua\": \"29/00\"}]",
	     "give \"step\"", -EINVAL},
	    /* without "ports" the trace names no port */
	    {"\"workload\": [{\"op\": \"tur\"}], \"expect\": [{\"trace\": {\"event\": "
	     "\"inject\", \"port\": 1}}]",
	     "warning: trace member \"port\": 1 never matches", 0},
	    {"\"workload\": [{\"op\": \"tur\"}], \"expect\": [{\"trace\": {\"port\": "
	     "2}}]",
	     "trace member \"port\": 2 never matches", 0},
	};
	static const char *const quiet[] = {
	    /* the defaults: 180 s holds 30 s + 3 x 5 s; no VM-lab paths named */
	    "\"workload\": [{\"op\": \"read\"}, {\"op\": \"abort_task\"}, {\"op\": "
	    "\"target_reset\"}, {\"op\": \"unmap\"}]",
	    /* 2 x 2 s (the pings on) + 3 x 5 s; 2 s + 3 x 5 s with them off */
	    "\"knobs\": {\"timeout_s\": 2}, \"workload\": [{\"op\": \"write\", \"timeout_s\": 19}]",
	    "\"knobs\": {\"timeout_s\": 2, \"noop_interval_s\": 0, \"noop_timeout_s\": 0}, "
	    "\"workload\": [{\"op\": \"write\", \"timeout_s\": 17}]",
	    /* a VM-lab-only check: the libiscsi runner does not run it */
	    "\"paths\": [\"tcmu\"], \"workload\": [{\"op\": \"read\", \"timeout_s\": 1}]",
	    /* a pass-through's SG_IO timeout is its deadline (up to 60 s); a
	     * background step is not run by the libiscsi runner */
	    "\"knobs\": {\"timeout_s\": 10}, \"workload\": [{\"op\": \"tur\", \"timeout_s\": 12}, "
	    "{\"op\": \"read\", \"timeout_s\": 5, \"background\": true}]",
	};
	char text[1024];
	bool found;

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int r;

		snprintf(text, sizeof(text),
			 "{\"faultlun\": 1, \"luns\": [{\"size\": \"8MiB\"}], \"check\": {%s}}",
			 c[i].check);
		r = load_diag(text, c[i].want, &found);
		if (r != c[i].r || !found)
			printf("case %zu: r=%d, want %d and ...%s...\n", i, r, c[i].r, c[i].want);
		CU_ASSERT_EQUAL(r, c[i].r);
		CU_ASSERT_TRUE(found);
	}
	for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++) {
		snprintf(text, sizeof(text),
			 "{\"faultlun\": 1, \"luns\": [{\"size\": \"8MiB\"}], \"check\": {%s}}",
			 quiet[i]);
		CU_ASSERT_EQUAL(load_diag(text, "warning", &found), 0);
		CU_ASSERT_FALSE(found);
	}
	/* "vm" written in "frontends" names the VM lab too; absent, it does not */
	CU_ASSERT_EQUAL(load_diag("{\"faultlun\": 1, \"frontends\": [\"iscsi\", \"vm\"], \"luns\": "
				  "[{\"size\": \"8MiB\"}], \"check\": {\"workload\": [{\"op\": "
				  "\"unmap\"}]}}",
				  "warning: the VM lab cannot run unmap steps", &found),
			0);
	CU_ASSERT_TRUE(found);
	CU_ASSERT_EQUAL(load_diag("{\"faultlun\": 1, \"frontends\": [\"iscsi\"], \"luns\": "
				  "[{\"size\": \"8MiB\"}], \"check\": {\"workload\": [{\"op\": "
				  "\"unmap\"}]}}",
				  "warning", &found),
			0);
	CU_ASSERT_FALSE(found);
	/* defaults of the new steps and the knob */
	{
		struct fl_scenario *sc = load(
		    "{\"faultlun\": 1, \"luns\": [{\"size\": \"8MiB\"}], \"check\": {\"knobs\": "
		    "{\"reset_wait_ms\": 7000}, \"workload\": [{\"op\": \"write_same\", \"lba\": 8, "
		    "\"blocks\": 16}, {\"op\": \"write_same\", \"unmap\": false, \"pattern\": 90}, "
		    "{\"op\": \"unmap\", \"lba\": 100, \"blocks\": 4}]}}");
		const struct fl_check *ck;

		CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
		ck = fl_scenario_check(sc);
		CU_ASSERT_EQUAL(ck->knobs.reset_wait_ms, 7000);
		CU_ASSERT_EQUAL(ck->steps[0].op, FL_OP_WRITE_SAME);
		CU_ASSERT_TRUE(ck->steps[0].unmap);
		CU_ASSERT_EQUAL(ck->steps[0].pattern, 0);
		CU_ASSERT_EQUAL(ck->steps[0].lba, 8);
		CU_ASSERT_EQUAL(ck->steps[0].blocks, 16);
		CU_ASSERT_FALSE(ck->steps[1].unmap);
		CU_ASSERT_EQUAL(ck->steps[1].pattern, 90);
		CU_ASSERT_EQUAL(ck->steps[2].op, FL_OP_UNMAP);
		CU_ASSERT_TRUE(fl_step_op_is_passthrough(FL_OP_UNMAP));
		CU_ASSERT_TRUE(fl_step_op_is_passthrough(FL_OP_TUR));
		CU_ASSERT_FALSE(fl_step_op_is_passthrough(FL_OP_DISCARD));
		CU_ASSERT_FALSE(fl_step_op_in_vm(FL_OP_LUN_RESET));
		CU_ASSERT_TRUE(fl_step_op_in_vm(FL_OP_SG_RAW));
		fl_scenario_free(sc);
	}
}

/* A TMF step's response survives the observations file (the VM lab's, --obs). */
static void test_obs_tmf_response(void)
{
	struct fl_step_obs steps[2] = {
	    {.end = FL_END_DONE, .errno_name = "EIO", .has_tmf_response = true, .tmf_response = 255},
	    {.end = FL_END_DONE, .errno_name = "OK"}};
	struct fl_obs obs = {.runner = FL_RUNNER_LIBISCSI, .steps = steps, .nsteps = 2};
	char path[] = "/tmp/fl-obs-tmf-XXXXXX";
	struct fl_obs_doc *doc = NULL;
	int fd = mkstemp(path);

	CU_ASSERT_TRUE_FATAL(fd >= 0);
	close(fd);
	CU_ASSERT_EQUAL_FATAL(fl_obs_write(&obs, path), 0);
	CU_ASSERT_EQUAL_FATAL(fl_obs_read(path, &doc), 0);
	CU_ASSERT_TRUE(fl_obs_of(doc)->steps[0].has_tmf_response);
	CU_ASSERT_EQUAL(fl_obs_of(doc)->steps[0].tmf_response, 255);
	CU_ASSERT_FALSE(fl_obs_of(doc)->steps[1].has_tmf_response);
	CU_ASSERT_STRING_EQUAL(fl_tmf_response_name(255), "rejected");
	fl_obs_free(doc);
	unlink(path);
}

/*
 * On a scenario with ports a trace expectation's "port" is a port's "id" or
 * relative port number, port 1 as well as the others: the trace names every
 * command's port there.
 */
static void test_trace_port(void)
{
	static const char *const trace[] = {
	    "{\"t_us\": 1, \"event\": \"inject\", \"port\": 1, \"rule\": \"r\"}",
	    "{\"t_us\": 2, \"event\": \"inject\", \"port\": 2, \"rule\": \"r\"}",
	    "{\"t_us\": 3, \"event\": \"inject\", \"port\": 2, \"rule\": \"r\"}"};
	static const struct {
		const char *expect;
		enum fl_verdict_kind want;
	} c[] = {
	    {"{\"trace\": {\"event\": \"inject\", \"port\": \"A\", \"min\": 1, \"max\": 1}}",
	     FL_VERDICT_PASS},
	    {"{\"trace\": {\"port\": 1, \"min\": 1, \"max\": 1}}", FL_VERDICT_PASS},
	    {"{\"trace\": {\"port\": \"B\", \"min\": 2, \"max\": 2}}", FL_VERDICT_PASS},
	    {"{\"trace\": {\"port\": \"A\", \"min\": 2}}", FL_VERDICT_FAIL},
	};
	struct fl_step_obs step = {.end = FL_END_DONE, .errno_name = "OK", .repeats_done = 1};
	struct fl_obs obs = {
	    .runner = FL_RUNNER_LIBISCSI, .steps = &step, .nsteps = 1, .has_trace = true,
	    .trace = trace, .ntrace = 3};
	char text[1024];

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct fl_scenario *sc;
		struct fl_verdict *v = NULL;

		snprintf(text, sizeof(text),
			 "{\"faultlun\": 1, \"ports\": [{\"id\": \"A\", \"listen\": "
			 "\"127.0.0.1:0\"}, {\"id\": \"B\", \"listen\": \"127.0.0.2:0\"}], \"luns\": "
			 "[{\"size\": \"8MiB\"}], \"check\": {\"workload\": [{\"op\": \"tur\"}], "
			 "\"expect\": [%s]}}",
			 c[i].expect);
		sc = load(text);
		CU_ASSERT_PTR_NOT_NULL_FATAL(sc);
		CU_ASSERT_EQUAL_FATAL(fl_check_judge(fl_scenario_check(sc), &obs, &v), 1);
		if (v[0].v != c[i].want)
			printf("case %zu: verdict %d, want %d\n", i, v[0].v, c[i].want);
		CU_ASSERT_EQUAL(v[0].v, c[i].want);
		free(v);
		fl_scenario_free(sc);
	}
	/* a name that is not a port of the scenario is an error */
	CU_ASSERT_PTR_NULL(load("{\"faultlun\": 1, \"ports\": [{\"id\": \"A\", \"listen\": "
				"\"127.0.0.1:0\"}], \"luns\": [{\"size\": \"8MiB\"}], \"check\": "
				"{\"workload\": [{\"op\": \"tur\"}], \"expect\": [{\"trace\": "
				"{\"port\": \"C\"}}]}}"));
}

FL_TESTS(tests,
	 FL_TEST(test_trace_port),
	 FL_TEST(test_ua),
	 FL_TEST(test_tmf_steps),
	 FL_TEST(test_workload_lint),
	 FL_TEST(test_obs_tmf_response),
	 FL_TEST(test_recorded_runs),
	 FL_TEST(test_same_meaning),
	 FL_TEST(test_not_run_fails),
	 FL_TEST(test_timeout),
	 FL_TEST(test_step_values),
	 FL_TEST(test_expect_values),
	 FL_TEST(test_kernel_range),
	 FL_TEST(test_kernel_scope),
	 FL_TEST(test_vm_path_scope),
	 FL_TEST(test_dh_state),
	 FL_TEST(test_obs_round_trip));

FL_SUITES(FL_SUITE("judge", NULL, NULL, tests));
