// SPDX-License-Identifier: MIT
/*
 * test_result.c - the one reader of a VM-lab result (report/fl_result.c):
 * the typed fields of a well-formed result, the version check, and hostile
 * files (missing keys, wrong types, times of 1e308, NaN, numeric strings,
 * huge arrays, deep nesting, long strings, a file past the size bound) that
 * give a clear error or a bounded result, never a crash.
 */
#include "fl_result.h"
#include "runner.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char err[512];

/* Reads text as a result named "r.json"; 0 or -1 with err set. */
static int read_text(const char *text, struct fl_result *res)
{
	json_error_t jerr;
	json_t *doc = json_loads(text, 0, &jerr);

	err[0] = 0;
	if (!doc) {
		memset(res, 0, sizeof(*res));
		snprintf(err, sizeof(err), "parse: %s", jerr.text);
		return -1;
	}
	int rc = fl_result_from_json(doc, "r.json", res, err, sizeof(err));
	json_decref(doc);
	return rc;
}

/* A result with one of everything: every typed field as written. */
static void test_typed_fields(void)
{
	struct fl_result r;

	CU_ASSERT_EQUAL_FATAL(
	    read_text("{\"faultlun_vm_result\":1,\"version\":1,\"scenario\":\"s.json\",\"name\":\"n\","
		      "\"path\":\"iscsi\",\"accel\":\"kvm\",\"verdict\":\"FAIL\",\"run_dir\":\"d\","
		      "\"guest_info\":{\"kernel\":\"6.1.0-57-amd64\"},\"max_stall_ms\":12.5,"
		      "\"wall\":{\"total_s\":9,\"qemu_s\":7,\"guest_assembly_s\":1,"
		      "\"guest_phases\":{\"agent_up\":2,\"workload_start\":3,\"workload_end\":4,"
		      "\"finish\":5}},"
		      "\"timeline\":[{\"t\":1.5,\"src\":\"agent\",\"text\":\"hello\"}],"
		      "\"steps\":[{\"step\":2,\"op\":\"read\",\"errno\":\"EIO\",\"t0\":3,\"t1\":3.5,"
		      "\"elapsed_ms\":500,\"params\":{\"lba\":8}}],"
		      "\"expectations\":[{\"verdict\":\"pass\",\"what\":\"w\",\"observed\":\"o\","
		      "\"step\":2},{\"verdict\":\"not_applicable\"},{\"ok\":true},{\"ok\":false},"
		      "{\"not_applicable\":true}],"
		      "\"eh_sequence\":[\"abort\",3],\"probes\":[{\"t\":3.1,\"ms\":4}],"
		      "\"knobs\":{\"timeout_s\":30,\"multipath\":1},"
		      "\"trace_events\":[{\"t\":3.2,\"event\":\"inject\",\"rule\":\"r\","
		      "\"action\":\"hold\",\"op\":\"read\",\"lba\":8,\"lun\":1},"
		      "{\"t\":3.3,\"event\":\"reset\",\"tmf\":\"lun_reset\",\"ua\":\"29/00\"}]}",
		      &r),
	    0);
	CU_ASSERT_EQUAL(r.version, 1);
	CU_ASSERT_STRING_EQUAL(r.scenario, "s.json");
	CU_ASSERT_STRING_EQUAL(r.name, "n");
	CU_ASSERT_STRING_EQUAL(r.path, "iscsi");
	CU_ASSERT_STRING_EQUAL(r.accel, "kvm");
	CU_ASSERT_STRING_EQUAL(r.verdict, "FAIL");
	CU_ASSERT_STRING_EQUAL(r.run_dir, "d");
	CU_ASSERT_STRING_EQUAL(r.kernel, "6.1.0-57-amd64");
	CU_ASSERT_PTR_NULL(r.error);
	CU_ASSERT_DOUBLE_EQUAL(r.max_stall_ms, 12.5, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.wall.total_s, 9, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.wall.qemu_s, 7, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.wall.guest_assembly_s, 1, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.wall.agent_up, 2, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.wall.workload_start, 3, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.wall.workload_end, 4, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.wall.finish, 5, 1e-9);
	CU_ASSERT_EQUAL_FATAL(r.ntimeline, 1);
	CU_ASSERT_DOUBLE_EQUAL(r.timeline[0].t, 1.5, 1e-9);
	CU_ASSERT_STRING_EQUAL(r.timeline[0].src, "agent");
	CU_ASSERT_STRING_EQUAL(r.timeline[0].text, "hello");
	CU_ASSERT_EQUAL_FATAL(r.nsteps, 1);
	CU_ASSERT_EQUAL(r.steps[0].step, 2);
	CU_ASSERT_STRING_EQUAL(r.steps[0].op, "read");
	CU_ASSERT_STRING_EQUAL(r.steps[0].errno_name, "EIO");
	CU_ASSERT_DOUBLE_EQUAL(r.steps[0].t1, 3.5, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.steps[0].elapsed_ms, 500, 1e-9);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(r.steps[0].params, "lba")), 8);
	CU_ASSERT_EQUAL_FATAL(r.nexpectations, 5);
	CU_ASSERT_EQUAL(r.expectations[0].verdict, FL_RESULT_PASS);
	CU_ASSERT_TRUE(r.expectations[0].has_step);
	CU_ASSERT_EQUAL(r.expectations[0].step, 2);
	CU_ASSERT_STRING_EQUAL(r.expectations[0].observed, "o");
	CU_ASSERT_EQUAL(r.expectations[1].verdict, FL_RESULT_NA);
	CU_ASSERT_FALSE(r.expectations[1].has_step);
	CU_ASSERT_PTR_NULL(r.expectations[1].what);
	CU_ASSERT_TRUE(r.expectations[0].has_verdict);
	CU_ASSERT_STRING_EQUAL(r.expectations[0].verdict_text, "pass");
	CU_ASSERT_STRING_EQUAL(r.expectations[1].verdict_text, "not_applicable");
	CU_ASSERT_EQUAL(r.expectations[2].verdict, FL_RESULT_PASS);
	CU_ASSERT_FALSE(r.expectations[2].has_verdict); /* an older result: "ok" only */
	CU_ASSERT_PTR_NULL(r.expectations[2].verdict_text);
	CU_ASSERT_EQUAL(r.expectations[3].verdict, FL_RESULT_FAIL);
	CU_ASSERT_EQUAL(r.expectations[4].verdict, FL_RESULT_NA);
	CU_ASSERT_STRING_EQUAL(fl_result_verdict_word(FL_RESULT_NA), "N/A");
	CU_ASSERT_EQUAL_FATAL(r.neh_sequence, 2);
	CU_ASSERT_STRING_EQUAL(r.eh_sequence[0], "abort");
	CU_ASSERT_PTR_NULL(r.eh_sequence[1]); /* not a string */
	CU_ASSERT_EQUAL_FATAL(r.nprobes, 1);
	CU_ASSERT_DOUBLE_EQUAL(r.probes[0].ms, 4, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.scenario_knobs.timeout, 30, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.scenario_knobs.abort_tmo, -1, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.guest_knobs.timeout, -1, 1e-9);
	CU_ASSERT_TRUE(r.multipath);
	CU_ASSERT_EQUAL_FATAL(r.ntrace, 2);
	CU_ASSERT_STRING_EQUAL(r.trace[0].event, "inject");
	CU_ASSERT_STRING_EQUAL(r.trace[0].action, "hold");
	CU_ASSERT_TRUE(r.trace[0].has_op);
	CU_ASSERT_DOUBLE_EQUAL(r.trace[0].lba, 8, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.trace[0].lun, 1, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.trace[0].response, -1, 1e-9);
	CU_ASSERT_TRUE(r.trace[1].has_ua);
	CU_ASSERT_STRING_EQUAL(r.trace[1].ua, "29/00");
	CU_ASSERT_TRUE(isnan(r.trace[1].lba)); /* absent */
	CU_ASSERT_FALSE(r.trace[1].has_op);
	fl_result_free(&r);
	CU_ASSERT_PTR_NULL(r.doc);
	fl_result_free(&r); /* harmless twice */
}

/* No "version": a result written before the key is version 1. */
static void test_version_absent(void)
{
	struct fl_result r;

	CU_ASSERT_EQUAL_FATAL(read_text("{\"faultlun_vm_result\":1}", &r), 0);
	CU_ASSERT_EQUAL(r.version, 1);
	fl_result_free(&r);
}

/* A newer version is refused with a message that says so; a bad one too. */
static void test_version_newer(void)
{
	struct fl_result r;
	char text[128];

	snprintf(text, sizeof(text), "{\"faultlun_vm_result\":1,\"version\":%d}",
		 FL_RESULT_VERSION + 1);
	CU_ASSERT_EQUAL(read_text(text, &r), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "r.json: "));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "is newer than this faultlun reads"));
	CU_ASSERT_PTR_NULL(r.doc);
	fl_result_free(&r);
	CU_ASSERT_EQUAL(read_text("{\"faultlun_vm_result\":1,\"version\":\"1\"}", &r), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "\"version\" is not a positive integer"));
	CU_ASSERT_EQUAL(read_text("{\"faultlun_vm_result\":1,\"version\":0}", &r), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "\"version\" is not a positive integer"));
	CU_ASSERT_EQUAL(read_text("{\"faultlun_vm_result\":1,\"version\":1.5}", &r), -1);
}

/* Not a lab result at all. */
static void test_not_a_result(void)
{
	struct fl_result r;

	CU_ASSERT_EQUAL(read_text("{\"name\":\"x\"}", &r), -1);
	CU_ASSERT_STRING_EQUAL(err, "r.json: not a faultlun vm result");
	CU_ASSERT_EQUAL(read_text("[1,2]", &r), -1);
	CU_ASSERT_STRING_EQUAL(err, "r.json: not a faultlun vm result");
}

/* Missing keys and wrong types read as the documented defaults. */
static void test_missing_and_wrong_types(void)
{
	struct fl_result r;

	CU_ASSERT_EQUAL_FATAL(
	    read_text("{\"faultlun_vm_result\":1,\"name\":7,\"guest_info\":\"x\",\"wall\":[1],"
		      "\"steps\":{\"a\":1},\"expectations\":[1,\"x\",null,{\"step\":1.5}],"
		      "\"probes\":[[],{\"t\":\"x\"}],\"eh_sequence\":\"abort\","
		      "\"max_stall_ms\":\"nan\"}",
		      &r),
	    0);
	CU_ASSERT_PTR_NULL(r.name);
	CU_ASSERT_PTR_NULL(r.kernel);
	CU_ASSERT_PTR_NULL(r.verdict);
	CU_ASSERT_DOUBLE_EQUAL(r.wall.total_s, 0, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.wall.workload_start, -1, 1e-9); /* not seen */
	CU_ASSERT_EQUAL(r.nsteps, 0);
	CU_ASSERT_EQUAL(r.ntimeline, 0);
	CU_ASSERT_EQUAL_FATAL(r.nexpectations, 4);
	CU_ASSERT_EQUAL(r.expectations[0].verdict, FL_RESULT_FAIL);
	CU_ASSERT_FALSE(r.expectations[3].has_step);
	CU_ASSERT_EQUAL_FATAL(r.nprobes, 2);
	CU_ASSERT_DOUBLE_EQUAL(r.probes[1].t, 0, 1e-9);
	CU_ASSERT_EQUAL(r.neh_sequence, 0);
	CU_ASSERT_DOUBLE_EQUAL(r.max_stall_ms, -1, 1e-9); /* "nan": taken as absent */
	fl_result_free(&r);
	/* A step's numeric strings are bounded as numbers are. */
	CU_ASSERT_EQUAL_FATAL(read_text("{\"faultlun_vm_result\":1,\"steps\":[{\"t0\":\"inf\","
					"\"t1\":\"1e308\",\"elapsed_ms\":\"12\"}]}",
					&r),
			      0);
	CU_ASSERT_DOUBLE_EQUAL(r.steps[0].t0, 0, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.steps[0].t1, 0, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(r.steps[0].elapsed_ms, 12, 1e-9);
	CU_ASSERT_TRUE(isfinite(r.steps[0].t0));
	fl_result_free(&r);
}

/*
 * Integers past the bound of reals are read: a target's drawn seed (any 64-bit
 * value) and an initiator's LBA are in its trace; the typed LBA is left
 * unknown rather than rounded.
 */
static void test_big_integers(void)
{
	struct fl_result r;

	CU_ASSERT_EQUAL_FATAL(
	    read_text("{\"faultlun_vm_result\":1,\"trace_events\":[{\"t\":1,\"event\":\"start\","
		      "\"seed\":7368468528522125},{\"t\":2,\"event\":\"cmd\","
		      "\"lba\":9223372036854775807,\"seed\":\"18446744073709551615\"}]}",
		      &r),
	    0);
	CU_ASSERT_EQUAL(r.ntrace, 2);
	if (r.ntrace == 2)
		CU_ASSERT_TRUE(isnan(r.trace[1].lba));
	fl_result_free(&r);
	/* A real past the bound is still refused. */
	CU_ASSERT_EQUAL(read_text("{\"faultlun_vm_result\":1,\"x\":7.3e15}", &r), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "is not a number within"));
}

/* Times out of bounds, entries without their fields, deep nesting, long strings. */
static void test_hostile_refused(void)
{
	static const struct {
		const char *text, *why;
	} cases[] = {
	    {"{\"faultlun_vm_result\":1,\"steps\":[{\"t0\":0,\"t1\":1e308}]}",
	     "\"t1\": time 1e+308 s outside [0, 1e+06]"},
	    {"{\"faultlun_vm_result\":1,\"timeline\":[{\"t\":-1,\"src\":\"a\",\"text\":\"b\"}]}",
	     "\"t\": time -1 s outside"},
	    {"{\"faultlun_vm_result\":1,\"probes\":[{\"t\":1,\"ms\":1e300}]}",
	     "\"ms\": duration 1e+300 ms outside"},
	    {"{\"faultlun_vm_result\":1,\"x\":-1e300}", "is not a number within"},
	    {"{\"faultlun_vm_result\":1,\"timeline\":[{\"t\":1,\"text\":\"b\"}]}",
	     "timeline[0]: not an object with a string \"src\""},
	    {"{\"faultlun_vm_result\":1,\"timeline\":[{\"t\":\"1\",\"src\":\"a\",\"text\":\"b\"}]}",
	     "timeline[0]: not an object"},
	    {"{\"faultlun_vm_result\":1,\"timeline\":{}}", "\"timeline\" is not an array"},
	};
	struct fl_result r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CU_ASSERT_EQUAL(read_text(cases[i].text, &r), -1);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "r.json: not a result the report reads: "));
		if (!strstr(err, cases[i].why))
			fprintf(stderr, "case %zu: %s\n", i, err);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, cases[i].why));
		CU_ASSERT_PTR_NULL(r.doc);
	}
	/* 40 levels of nesting, past the bound of 32. */
	char deep[200] = "{\"faultlun_vm_result\":1,\"x\":";
	for (int i = 0; i < 40; i++)
		strcat(deep, "[");
	for (int i = 0; i < 40; i++)
		strcat(deep, "]");
	strcat(deep, "}");
	CU_ASSERT_EQUAL(read_text(deep, &r), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "nested deeper than 32 levels"));
	/* A name of 64 KiB + 1. */
	json_t *doc = json_pack("{s:i}", "faultlun_vm_result", 1);
	char *big = malloc(FL_RESULT_MAX_STRING + 2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(big);
	memset(big, 'a', FL_RESULT_MAX_STRING + 1);
	big[FL_RESULT_MAX_STRING + 1] = 0;
	json_object_set_new(doc, "name", json_string(big));
	free(big);
	CU_ASSERT_EQUAL(fl_result_from_json(doc, "r.json", &r, err, sizeof(err)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "\"name\": a string longer than 65536 bytes"));
	json_decref(doc);
}

/* An array past FL_RESULT_MAX_ITEMS members is refused; one at the bound is read. */
static void test_huge_arrays(void)
{
	struct fl_result r;
	json_t *doc = json_pack("{s:i}", "faultlun_vm_result", 1), *a = json_array();

	for (size_t i = 0; i < FL_RESULT_MAX_ITEMS; i++)
		json_array_append_new(a, json_null()); /* null is not allocated */
	json_object_set_new(doc, "steps", a);
	CU_ASSERT_EQUAL_FATAL(fl_result_from_json(doc, "r.json", &r, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(r.nsteps, FL_RESULT_MAX_ITEMS);
	CU_ASSERT_EQUAL(r.steps[FL_RESULT_MAX_ITEMS - 1].step, 0);
	CU_ASSERT_PTR_NULL(r.steps[FL_RESULT_MAX_ITEMS - 1].op);
	fl_result_free(&r);
	json_array_append_new(a, json_null());
	CU_ASSERT_EQUAL(fl_result_from_json(doc, "r.json", &r, err, sizeof(err)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "\"steps\": more than 1000000 members"));
	json_decref(doc);
}

/* Files: NaN does not parse, a truncated file, a file past 64 MiB (sparse). */
static void test_files(void)
{
	char dir[] = "/tmp/fl-test-result-XXXXXX", p[64];
	struct fl_result r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/result.json", dir);
	FILE *f = fopen(p, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("{\"faultlun_vm_result\":1,\"steps\":[{\"t0\":NaN}]}", f);
	fclose(f);
	CU_ASSERT_EQUAL(fl_result_read(p, &r, err, sizeof(err)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, p));
	CU_ASSERT_PTR_NULL(r.doc);
	f = fopen(p, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("{\"faultlun_vm_result\":1,\"steps\":[{\"t0\":1", f);
	fclose(f);
	CU_ASSERT_EQUAL(fl_result_read(p, &r, err, sizeof(err)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, p));
	/* 64 MiB + 1 without writing them: refused before it is read. */
	int fd = open(p, O_WRONLY | O_TRUNC);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(ftruncate(fd, (off_t)FL_RESULT_MAX_FILE_BYTES + 1), 0);
	close(fd);
	CU_ASSERT_EQUAL(fl_result_read(p, &r, err, sizeof(err)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "more than a result file may have"));
	unlink(p);
	CU_ASSERT_EQUAL(fl_result_read(p, &r, err, sizeof(err)), -1); /* gone */
	CU_ASSERT_PTR_NOT_NULL(strstr(err, p));
	f = fopen(p, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("{\"faultlun_vm_result\":1,\"version\":1,\"name\":\"ok\"}", f);
	fclose(f);
	CU_ASSERT_EQUAL_FATAL(fl_result_read(p, &r, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(r.name, "ok");
	fl_result_free(&r);
	unlink(p);
	rmdir(dir);
}

FL_TESTS(result_tests,
	 {"typed_fields", test_typed_fields},
	 {"version_absent", test_version_absent},
	 {"version_newer", test_version_newer},
	 {"not_a_result", test_not_a_result},
	 {"missing_and_wrong_types", test_missing_and_wrong_types},
	 {"hostile_refused", test_hostile_refused},
	 {"big_integers", test_big_integers},
	 {"huge_arrays", test_huge_arrays},
	 {"files", test_files});

FL_SUITES(FL_SUITE("result", NULL, NULL, result_tests));
