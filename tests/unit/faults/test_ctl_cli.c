/* SPDX-License-Identifier: MIT */
/*
 * test_ctl_cli.c - `faultlun ctl` against a real control socket: exit status
 * 0 for ok answers, 1 for refused ones (with diagnostics), 2 for usage and
 * connection errors, and that its requests take effect in the engine.
 */
#include "harness.h"

#include <sys/wait.h>

static char sock_path[108];
static char out_path[64];

/* Runs `faultlun ctl SOCKET args` (stdout+stderr to out_path); returns its exit status. */
static int run_ctl(const char *args)
{
	char cmd[1024];
	int st;

	snprintf(cmd, sizeof(cmd), "%s ctl %s %s >%s 2>&1", FAULTLUN_BIN, sock_path, args,
		 out_path);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Whether the last run's output contains s. */
static bool out_has(const char *s)
{
	static char buf[65536];
	FILE *f = fopen(out_path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = 0;
	return strstr(buf, s) != NULL;
}

static void test_ctl_cli(void)
{
	struct fl_engine *e = mk_engine(
	    "{\"faultlun\": 1, \"name\": \"cli\", \"frontends\": [\"iscsi\"], \"states\": [\"a\", "
	    "\"b\"],"
	    " \"transitions\": [{\"from\": \"a\", \"to\": \"b\", \"on\": {\"after_ms\": 3600000}}],"
	    " \"rules\": [{\"id\": \"r\", \"match\": {\"class\": \"read\"}, \"action\": {\"hold\":"
	    " \"until_release\"}}]}",
	    5, NULL);
	struct fl_ctl *ctl = NULL;
	struct tcmd *t = calloc(1, sizeof(*t));

	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	snprintf(sock_path, sizeof(sock_path), "/tmp/faultlun-cli-%d.sock", (int)getpid());
	snprintf(out_path, sizeof(out_path), "/tmp/faultlun-cli-%d.out", (int)getpid());
	CU_ASSERT_EQUAL_FATAL(fl_ctl_start(e, sock_path, &ctl), 0);
	CU_ASSERT_EQUAL(run_ctl("ping"), 0);
	CU_ASSERT_TRUE(out_has("\"ok\":true"));
	CU_ASSERT_EQUAL(run_ctl("status"), 0);
	CU_ASSERT_TRUE(out_has("\"scenario\":\"cli\""));
	CU_ASSERT_EQUAL(run_ctl("state b"), 0);
	CU_ASSERT_STRING_EQUAL(fl_engine_state(e), "b");
	CU_ASSERT_EQUAL(run_ctl("disarm ghost"), 1);
	clear_ua(e, 1);
	trun(e, t, 0x28, 0, 1, 77, 1);
	CU_ASSERT_EQUAL(run_ctl("held"), 0);
	CU_ASSERT_TRUE(out_has("\"tag\":77"));
	CU_ASSERT_EQUAL(run_ctl("release 77"), 0);
	CU_ASSERT_TRUE(out_has("\"released\":1"));
	CU_ASSERT_TRUE(twait(t, 1000));
	CU_ASSERT_EQUAL(run_ctl("counters"), 0);
	CU_ASSERT_TRUE(out_has("\"held\":1"));
	CU_ASSERT_EQUAL(run_ctl("load " FL_TEST_DATA "/bad-many-errors.json"), 1);
	CU_ASSERT_TRUE(out_has("bad-many-errors.json:5:31: unknown key \"vendr\""));
	CU_ASSERT_EQUAL(run_ctl("load " FL_TEST_DATA "/hung-lun-reset.json"), 0);
	CU_ASSERT_STRING_EQUAL(fl_engine_state(e), "healthy");
	CU_ASSERT_EQUAL(run_ctl("raw '{\"cmd\":\"ping\",\"id\":\"x\"}'"), 0);
	CU_ASSERT_TRUE(out_has("\"id\":\"x\""));
	CU_ASSERT_EQUAL(run_ctl("act 0 '{\"ua\": \"2A/09\"}'"), 0);
	CU_ASSERT_EQUAL(run_ctl("act 0 '{\"drop\": true}'"), 1);
	CU_ASSERT_EQUAL(run_ctl("act 0 notjson"), 2);
	CU_ASSERT_EQUAL(run_ctl("frobnicate"), 2);
	CU_ASSERT_EQUAL(run_ctl("release"), 2);
	fl_ctl_stop(ctl);
	CU_ASSERT_EQUAL(run_ctl("ping"), 2); /* nobody listens any more */
	fl_engine_destroy(e);
	unlink(out_path);
	free(t);
}

FL_TESTS(cli_tests,
	 FL_TEST(test_ctl_cli));

FL_SUITES(FL_SUITE("ctl_cli", NULL, NULL, cli_tests));
