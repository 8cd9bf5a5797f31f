/* SPDX-License-Identifier: MIT */
/*
 * test_ctl.c - the control socket over a real UNIX socket
 * (docs/control-protocol.md): mode 0600, other uids refused, every command
 * (ping, status, counters, held, state, arm / disarm, release, load with and
 * without errors, trace streaming), and malformed requests.
 */
#include "fl_log.h"
#include "log_capture.h"
#include "harness.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

static char sock_path[108];

/* A per-test socket path (tests run in parallel). */
static void mk_path(void)
{
	snprintf(sock_path, sizeof(sock_path), "/tmp/faultlun-ctl-%d-%llu.sock", (int)getpid(),
		 (unsigned long long)(fl_mono_ns() % 1000000000ull));
}

/* Connects to the control socket. */
static int ctl_connect(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct timeval tv = {.tv_sec = 5};

	strcpy(sa.sun_path, sock_path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* Reads one line (up to 1 MiB) from fd as JSON. */
static json_t *read_json_line(int fd)
{
	static char buf[1 << 20];
	size_t n = 0;
	json_error_t err;

	while (n < sizeof(buf) - 1) {
		ssize_t r = recv(fd, buf + n, 1, 0);

		if (r <= 0)
			return NULL;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = 0;
	return json_loads(buf, 0, &err);
}

/* Sends one request line and returns the answer. */
static json_t *rpc(int fd, const char *line)
{
	size_t len = strlen(line);

	if (send(fd, line, len, MSG_NOSIGNAL) != (ssize_t)len ||
	    send(fd, "\n", 1, MSG_NOSIGNAL) != 1)
		return NULL;
	return read_json_line(fd);
}

/* True when the answer is {"ok": true, ...}. */
static bool ok(json_t *r)
{
	return r && json_is_true(json_object_get(r, "ok"));
}

static const char *const scenario =
    "{\"faultlun\": 1, \"name\": \"ctl-test\", \"frontends\": [\"iscsi\"],"
    " \"luns\": [{\"size\": \"1MiB\"}], \"states\": [\"calm\", \"storm\"],"
    " \"transitions\": [{\"from\": \"storm\", \"to\": \"calm\", \"on\": {\"after_ms\": 3600000}},"
    "  {\"from\": \"calm\", \"to\": \"storm\", \"on\": {\"after_ms\": 3600000}}],"
    " \"rules\": [{\"id\": \"busy\", \"states\": [\"storm\"], \"match\": {\"class\": \"tur\"},"
    "  \"action\": {\"status\": \"busy\"}},"
    " {\"id\": \"stuck\", \"match\": {\"class\": \"read\"}, \"action\": {\"hold\": "
    "\"until_release\"}}]}";

/* The socket's mode, a ping, status, counters, state, arm / disarm. */
static void test_ctl_basics(void)
{
	struct fl_engine *e = mk_engine(scenario, 77, NULL);
	struct fl_ctl *ctl = NULL;
	struct stat st;
	struct tcmd *t = calloc(1, sizeof(*t));
	json_t *r;
	int fd;

	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	mk_path();
	CU_ASSERT_EQUAL_FATAL(fl_ctl_start(e, sock_path, &ctl), 0);
	CU_ASSERT_EQUAL(stat(sock_path, &st), 0);
	CU_ASSERT_TRUE(S_ISSOCK(st.st_mode));
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	fd = ctl_connect();
	CU_ASSERT_TRUE_FATAL(fd >= 0);
	r = rpc(fd, "{\"cmd\": \"ping\", \"id\": 7}");
	CU_ASSERT_TRUE(ok(r));
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(r, "id")), 7);
	json_decref(r);
	r = rpc(fd, "{\"cmd\": \"status\"}");
	CU_ASSERT_TRUE(ok(r));
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r, "scenario")), "ctl-test");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r, "state")), "calm");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(r, "seed")), 77);
	json_decref(r);
	/* state set, then the storm rule acts on TUR */
	clear_ua(e, 1);
	r = rpc(fd, "{\"cmd\": \"state\", \"set\": \"storm\"}");
	CU_ASSERT_TRUE(ok(r));
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r, "state")), "storm");
	json_decref(r);
	CU_ASSERT_STRING_EQUAL(fl_engine_state(e), "storm");
	trun(e, t, 0x00, 0, 0, 1, 1);
	CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_BUSY);
	r = rpc(fd, "{\"cmd\": \"state\", \"set\": \"nowhere\"}");
	CU_ASSERT_FALSE(ok(r));
	json_decref(r);
	/* disarm: TUR passes; arm: it is busy again */
	r = rpc(fd, "{\"cmd\": \"disarm\", \"rule\": \"busy\"}");
	CU_ASSERT_TRUE(ok(r));
	json_decref(r);
	trun(e, t, 0x00, 0, 0, 2, 1);
	CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_GOOD);
	r = rpc(fd, "{\"cmd\": \"arm\", \"rule\": \"busy\"}");
	CU_ASSERT_TRUE(ok(r));
	json_decref(r);
	trun(e, t, 0x00, 0, 0, 3, 1);
	CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_BUSY);
	r = rpc(fd, "{\"cmd\": \"arm\", \"rule\": \"ghost\"}");
	CU_ASSERT_FALSE(ok(r));
	json_decref(r);
	/* counters, engine-wide and per rule */
	r = rpc(fd, "{\"cmd\": \"counters\"}");
	CU_ASSERT_TRUE(ok(r));
	CU_ASSERT_EQUAL(
	    json_integer_value(json_object_get(json_object_get(r, "counters"), "injected")), 2);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(
			    json_array_get(json_object_get(r, "rules"), 0), "fired")),
			2);
	json_decref(r);
	/* malformed and unknown requests get an error, the connection stays */
	r = rpc(fd, "this is not json");
	CU_ASSERT_FALSE(ok(r));
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(json_string_value(json_object_get(r, "error")), "bad request"));
	json_decref(r);
	r = rpc(fd, "{\"cmd\": \"reboot\"}");
	CU_ASSERT_FALSE(ok(r));
	json_decref(r);
	r = rpc(fd, "{\"cmd\": \"ping\"}");
	CU_ASSERT_TRUE(ok(r));
	json_decref(r);
	close(fd);
	fl_ctl_stop(ctl);
	CU_ASSERT_NOT_EQUAL(access(sock_path, F_OK), 0); /* the socket file is gone */
	fl_engine_destroy(e);
	free(t);
}

/* held and release: by tag, then all. */
static void test_ctl_release(void)
{
	struct fl_engine *e = engine_ok(scenario);
	struct fl_ctl *ctl = NULL;
	struct tcmd *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	json_t *r;
	int fd;

	mk_path();
	CU_ASSERT_EQUAL_FATAL(fl_ctl_start(e, sock_path, &ctl), 0);
	fd = ctl_connect();
	CU_ASSERT_TRUE_FATAL(fd >= 0);
	clear_ua(e, 1);
	trun(e, a, 0x28, 0, 1, 41, 1);
	trun(e, b, 0x28, 0, 1, 42, 1);
	r = rpc(fd, "{\"cmd\": \"held\"}");
	CU_ASSERT_TRUE(ok(r));
	CU_ASSERT_EQUAL(json_array_size(json_object_get(r, "held")), 2);
	json_decref(r);
	r = rpc(fd, "{\"cmd\": \"release\", \"tag\": 42}");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(r, "released")), 1);
	json_decref(r);
	CU_ASSERT_TRUE(twait(b, 1000));
	CU_ASSERT_EQUAL(b->cmd.status, FL_STATUS_GOOD);
	CU_ASSERT_FALSE(atomic_load(&a->done));
	r = rpc(fd, "{\"cmd\": \"release\"}");
	CU_ASSERT_FALSE(ok(r));
	json_decref(r);
	r = rpc(fd, "{\"cmd\": \"release\", \"all\": true}");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(r, "released")), 1);
	json_decref(r);
	CU_ASSERT_TRUE(twait(a, 1000));
	close(fd);
	fl_ctl_stop(ctl);
	fl_engine_destroy(e);
	free(a);
	free(b);
}

/* load: a bad scenario is refused whole with its diagnostics; a good one replaces. */
static void test_ctl_load(void)
{
	struct fl_engine *e = engine_ok(scenario);
	struct fl_ctl *ctl = NULL;
	json_t *r, *req;
	char *line;
	int fd;

	mk_path();
	CU_ASSERT_EQUAL_FATAL(fl_ctl_start(e, sock_path, &ctl), 0);
	fd = ctl_connect();
	CU_ASSERT_TRUE_FATAL(fd >= 0);
	req = json_pack("{s:s, s:s, s:s}", "cmd", "load", "name", "bad.json", "text",
			"{\"faultlun\": 1,\n \"rules\": [{\"action\": {\"sense\": \"NOPE/X\"}}]}");
	line = json_dumps(req, JSON_COMPACT);
	r = rpc(fd, line);
	free(line);
	json_decref(req);
	CU_ASSERT_FALSE(ok(r));
	CU_ASSERT_EQUAL(json_array_size(json_object_get(r, "diagnostics")), 1);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(json_string_value(json_array_get(json_object_get(r, "diagnostics"), 0)),
		   "bad.json:2:"));
	json_decref(r);
	CU_ASSERT_STRING_EQUAL(fl_engine_state(e), "calm"); /* nothing changed */
	req = json_pack("{s:s, s:s, s:s}", "cmd", "load", "name", "good.json", "text",
			"{\"faultlun\": 1, \"name\": \"second\", \"states\": [\"only\"]}");
	line = json_dumps(req, JSON_COMPACT);
	r = rpc(fd, line);
	free(line);
	json_decref(req);
	CU_ASSERT_TRUE(ok(r));
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(r, "scenario")), "second");
	json_decref(r);
	CU_ASSERT_STRING_EQUAL(fl_engine_state(e), "only");
	r = rpc(fd, "{\"cmd\": \"load\", \"path\": \"/nonexistent/x.json\"}");
	CU_ASSERT_FALSE(ok(r));
	json_decref(r);
	close(fd);
	fl_ctl_stop(ctl);
	fl_engine_destroy(e);
}

/* trace: the stream carries the injections made after it started. */
static void test_ctl_trace_stream(void)
{
	struct fl_engine *e = engine_ok(scenario);
	struct fl_ctl *ctl = NULL;
	struct tcmd *t = calloc(1, sizeof(*t));
	json_t *r;
	int fd, fd2;
	bool seen = false;

	mk_path();
	CU_ASSERT_EQUAL_FATAL(fl_ctl_start(e, sock_path, &ctl), 0);
	fd = ctl_connect();
	fd2 = ctl_connect();
	CU_ASSERT_TRUE_FATAL(fd >= 0 && fd2 >= 0);
	r = rpc(fd, "{\"cmd\": \"trace\"}");
	CU_ASSERT_TRUE(ok(r));
	json_decref(r);
	r = rpc(fd2, "{\"cmd\": \"state\", \"set\": \"storm\"}"); /* the subscription is live */
	json_decref(r);
	clear_ua(e, 1);
	trun(e, t, 0x00, 0, 0, 5, 1);
	for (int i = 0; i < 10 && !seen; i++) {
		r = read_json_line(fd);
		if (!r)
			break;
		if (!strcmp(json_string_value(json_object_get(r, "event")), "inject") &&
		    !strcmp(json_string_value(json_object_get(r, "rule")), "busy"))
			seen = true;
		json_decref(r);
	}
	CU_ASSERT_TRUE(seen);
	close(fd); /* the stream's end unsubscribes; later events must not hurt */
	close(fd2);
	usleep(20000);
	trun(e, t, 0x00, 0, 0, 6, 1);
	fl_ctl_stop(ctl);
	fl_engine_destroy(e);
	free(t);
}

/* Another uid is refused (needs root to become another uid; skipped otherwise). */
static void test_ctl_other_uid_refused(void)
{
	struct fl_engine *e;
	struct fl_ctl *ctl = NULL;
	pid_t pid;
	int status = 0;

	if (geteuid() != 0) {
		fprintf(stderr, "\n(not root: the other-uid check is not exercised)\n");
		return;
	}
	e = engine_ok(scenario);
	mk_path();
	CU_ASSERT_EQUAL_FATAL(fl_ctl_start(e, sock_path, &ctl), 0);
	chmod(sock_path, 0666); /* let the other uid reach the socket: SO_PEERCRED must stop it */
	pid = fork();
	if (pid == 0) {
		json_t *r;
		int fd;

		if (setgid(65534) || setuid(65534))
			_exit(3);
		fd = ctl_connect();
		if (fd < 0)
			_exit(4);
		r = read_json_line(fd);
		_exit(r && !ok(r) &&
			      strstr(json_string_value(json_object_get(r, "error")),
				     "permission denied")
			  ? 0
			  : 5);
	}
	CU_ASSERT_TRUE(pid > 0);
	waitpid(pid, &status, 0);
	CU_ASSERT_TRUE(WIFEXITED(status));
	CU_ASSERT_EQUAL(WEXITSTATUS(status), 0);
	fl_ctl_stop(ctl);
	fl_engine_destroy(e);
}

/* act: a power loss, a resize and a UA on demand; other verbs and bad actions refused. */
static void test_ctl_act(void)
{
	struct fl_engine *e = engine_ok(scenario);
	struct fl_ctl *ctl = NULL;
	struct tcmd *t = calloc(1, sizeof(*t));
	struct fl_lun_info info;
	json_t *r;
	int fd;

	mk_path();
	CU_ASSERT_EQUAL_FATAL(fl_ctl_start(e, sock_path, &ctl), 0);
	fd = ctl_connect();
	CU_ASSERT_TRUE_FATAL(fd >= 0);
	clear_ua(e, 1);
	tcmd_init(t, 0x2a, 8, 1, 1, 1);
	memset(t->buf, 0x5a, 512);
	tsubmit(e, t, 0);
	CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_GOOD);
	r = rpc(fd, "{\"cmd\": \"act\", \"lun\": 0, \"action\": {\"power_loss\": true}}");
	CU_ASSERT_TRUE(ok(r));
	json_decref(r);
	trun(e, t, 0x00, 0, 0, 2, 1);
	CU_ASSERT_EQUAL(sense_key(&t->cmd), 6);
	r = rpc(fd, "{\"cmd\": \"act\", \"lun\": 0, \"action\": {\"resize\": \"2MiB\"}}");
	CU_ASSERT_TRUE(ok(r));
	json_decref(r);
	fl_lun_get_info(fl_target_lun(fl_engine_target(e), 0), &info);
	CU_ASSERT_EQUAL(info.num_blocks, 4096);
	r = rpc(fd, "{\"cmd\": \"act\", \"lun\": 0, \"action\": {\"status\": \"busy\"}}");
	CU_ASSERT_FALSE(ok(r));
	json_decref(r);
	r = rpc(fd, "{\"cmd\": \"act\", \"lun\": 0, \"action\": {\"ua\": \"NOPE\"}}");
	CU_ASSERT_FALSE(ok(r));
	CU_ASSERT_EQUAL(json_array_size(json_object_get(r, "diagnostics")), 1);
	json_decref(r);
	r = rpc(fd, "{\"cmd\": \"act\", \"lun\": 9, \"action\": {\"ua\": \"29/00\"}}");
	CU_ASSERT_FALSE(ok(r));
	json_decref(r);
	close(fd);
	fl_ctl_stop(ctl);
	fl_engine_destroy(e);
	free(t);
}

/* The error message of an answer, or "". */
static const char *answer_error(json_t *r)
{
	const char *m = json_string_value(json_object_get(r, "error"));

	return m ? m : "";
}

/*
 * act resize: a size the LUN cannot take is answered with an error naming the
 * value and the limit, and changes nothing; 4096 TiB and back both work.
 */
static void test_ctl_act_resize_limits(void)
{
	static const struct {
		const char *size, *says;
	} bad[] = {
	    {"0", "at least one block"},
	    {"\"0blocks\"", "at least one block"},
	    {"1000", "not a multiple of LUN 0's block size (512 bytes)"},
	    {"\"18446744073709551615\"", "18446744073709551615 bytes: more than the largest LUN, "
					 "140737488355327 blocks"},
	    {"\"140737488355328blocks\"", "more than the largest LUN"},
	};
	struct fl_engine *e = engine_ok(scenario);
	struct fl_ctl *ctl = NULL;
	struct fl_lun_info info;
	char line[200];
	json_t *r;
	int fd;

	mk_path();
	CU_ASSERT_EQUAL_FATAL(fl_ctl_start(e, sock_path, &ctl), 0);
	fd = ctl_connect();
	CU_ASSERT_TRUE_FATAL(fd >= 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line),
			 "{\"cmd\": \"act\", \"lun\": 0, \"action\": {\"resize\": %s}}",
			 bad[i].size);
		r = rpc(fd, line);
		CU_ASSERT_PTR_NOT_NULL(r);
		CU_ASSERT_FALSE(ok(r));
		if (!strstr(answer_error(r), bad[i].says))
			fprintf(stderr, "\n  resize %s answered \"%s\", expected \"%s\"\n",
				bad[i].size, answer_error(r), bad[i].says);
		CU_ASSERT_PTR_NOT_NULL(strstr(answer_error(r), bad[i].says));
		json_decref(r);
		fl_lun_get_info(fl_target_lun(fl_engine_target(e), 0), &info);
		CU_ASSERT_EQUAL(info.num_blocks, 2048);
	}
	/* 4096 TiB and back: both answered ok, and the size follows */
	r = rpc(fd, "{\"cmd\": \"act\", \"lun\": 0, \"action\": {\"resize\": \"4096TiB\"}}");
	CU_ASSERT_TRUE(ok(r));
	json_decref(r);
	fl_lun_get_info(fl_target_lun(fl_engine_target(e), 0), &info);
	CU_ASSERT_EQUAL(info.num_blocks, 1ull << 43);
	r = rpc(fd, "{\"cmd\": \"act\", \"lun\": 0, \"action\": {\"resize\": \"1MiB\"}}");
	CU_ASSERT_TRUE(ok(r));
	json_decref(r);
	fl_lun_get_info(fl_target_lun(fl_engine_target(e), 0), &info);
	CU_ASSERT_EQUAL(info.num_blocks, 2048);
	close(fd);
	fl_ctl_stop(ctl);
	fl_engine_destroy(e);
}

/* The engine's log lines. */
static struct log_capture rule_log;

/* A resize rule with a size the LUN cannot take: logged, the size unchanged, the command runs. */
static void test_rule_resize_refused(void)
{
	struct fl_engine *e = ready_engine(
	    ISCSI_1MIB " \"rules\": [{\"id\": \"odd\", \"match\": {\"class\": \"read\"},"
		       " \"action\": {\"resize\": 1000}}]}");
	struct tcmd *t = calloc(1, sizeof(*t));
	struct fl_lun_info info;

	log_capture_start(&rule_log);
	trun(e, t, 0x28, 0, 1, 1, 1);
	CU_ASSERT_TRUE(twait(t, 2000));
	fl_log_set_sink(NULL, NULL);
	CU_ASSERT_EQUAL(t->cmd.status, FL_STATUS_GOOD);
	fl_lun_get_info(fl_target_lun(fl_engine_target(e), 0), &info);
	CU_ASSERT_EQUAL(info.num_blocks, 2048);
	CU_ASSERT_PTR_NOT_NULL(strstr(rule_log.text, "odd: resize to 1000 bytes: not a multiple"));
	fl_engine_destroy(e);
	free(t);
}

FL_TESTS(ctl_tests,
	 FL_TEST(test_ctl_basics),
	 FL_TEST(test_ctl_release),
	 FL_TEST(test_ctl_load),
	 FL_TEST(test_ctl_act),
	 FL_TEST(test_ctl_act_resize_limits),
	 FL_TEST(test_rule_resize_refused),
	 FL_TEST(test_ctl_trace_stream),
	 FL_TEST(test_ctl_other_uid_refused));

FL_SUITES(FL_SUITE("ctl", NULL, NULL, ctl_tests));
