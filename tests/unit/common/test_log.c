/* SPDX-License-Identifier: MIT */
/*
 * test_log.c - the log hook (common/fl_log.h, common/log.c): a sink set by
 * the front end receives the core's lines with their level; level filter,
 * trailing newline and long lines; the default sink's stderr format.
 */
#include "fl_log.h"
#include "fl_target.h"
#include "runner.h"

#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What the test sink saw last. */
static struct {
	int calls;
	enum fl_log_level level;
	char msg[2048];
	void *arg;
} seen;

/* Test sink: remembers the last line. */
static void sink(enum fl_log_level level, const char *msg, void *arg)
{
	seen.calls++;
	seen.level = level;
	snprintf(seen.msg, sizeof(seen.msg), "%s", msg);
	seen.arg = arg;
}

/* Sets the test sink with a fresh record. */
static void use_sink(void)
{
	memset(&seen, 0, sizeof(seen));
	fl_log_set_sink(sink, &seen);
	fl_log_set_level(FL_LOG_INFO);
}

/* A message from the core (a LUN config it refuses) reaches the sink as an error. */
static void test_core_message_reaches_sink(void)
{
	struct fl_lun_config cfg;
	struct fl_lun *lun = NULL;

	use_sink();
	fl_lun_config_default(&cfg);
	cfg.block_size = 1000;
	CU_ASSERT_NOT_EQUAL(fl_lun_create(&cfg, &lun), 0);
	CU_ASSERT_PTR_NULL(lun);
	CU_ASSERT_EQUAL(seen.calls, 1);
	CU_ASSERT_EQUAL(seen.level, FL_LOG_ERR);
	CU_ASSERT_PTR_EQUAL(seen.arg, &seen);
	CU_ASSERT_STRING_EQUAL(seen.msg,
			       "bad LUN config: block size must be a power of two between 512 "
			       "and 65536");
	fl_log_set_sink(NULL, NULL);
}

/* Each level arrives as itself; lines below the set level are dropped before the sink. */
static void test_levels_and_filter(void)
{
	use_sink();
	fl_log(FL_LOG_WARN, "w %d", 1);
	CU_ASSERT_EQUAL(seen.level, FL_LOG_WARN);
	CU_ASSERT_STRING_EQUAL(seen.msg, "w 1");
	fl_log(FL_LOG_INFO, "i");
	CU_ASSERT_EQUAL(seen.level, FL_LOG_INFO);
	fl_log(FL_LOG_DEBUG, "d"); /* below the default level */
	CU_ASSERT_EQUAL(seen.calls, 2);
	fl_log_set_level(FL_LOG_DEBUG);
	fl_log(FL_LOG_DEBUG, "d");
	CU_ASSERT_EQUAL(seen.calls, 3);
	CU_ASSERT_EQUAL(seen.level, FL_LOG_DEBUG);
	fl_log_set_level(FL_LOG_ERR);
	fl_log(FL_LOG_WARN, "dropped");
	fl_log(FL_LOG_ERR, "kept");
	CU_ASSERT_EQUAL(seen.calls, 4);
	CU_ASSERT_STRING_EQUAL(seen.msg, "kept");
	CU_ASSERT_STRING_EQUAL(fl_log_level_name(FL_LOG_WARN), "warning");
	fl_log_set_sink(NULL, NULL);
	fl_log_set_level(FL_LOG_INFO);
}

/* Trailing newlines are dropped; a line longer than the buffer is cut and ends in "...". */
static void test_newline_and_long_line(void)
{
	char big[3000];

	use_sink();
	fl_log(FL_LOG_ERR, "two newlines\n\n");
	CU_ASSERT_STRING_EQUAL(seen.msg, "two newlines");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	fl_log(FL_LOG_ERR, "%s", big);
	CU_ASSERT_EQUAL(strlen(seen.msg), 1023);
	CU_ASSERT_STRING_EQUAL(seen.msg + 1020, "...");
	fl_log_set_sink(NULL, NULL);
}

/* Without a sink, a line goes to stderr as "TIMESTAMP faultlun: LEVEL: MSG". */
static void test_default_sink_format(void)
{
	char path[] = "/tmp/fl-log-XXXXXX", line[512] = "";
	int fd = mkstemp(path), saved = dup(2);
	regex_t re;
	FILE *f;

	CU_ASSERT_FATAL(fd >= 0 && saved >= 0);
	fl_log_set_sink(NULL, NULL);
	fflush(stderr);
	dup2(fd, 2);
	fl_log(FL_LOG_WARN, "hello %d\n", 5);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	f = fdopen(fd, "r");
	CU_ASSERT_FATAL(f != NULL);
	rewind(f);
	CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof(line), f));
	fclose(f);
	unlink(path);
	CU_ASSERT_FATAL(
	    regcomp(&re,
		    "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z "
		    "faultlun: warning: hello 5\n$",
		    REG_EXTENDED) == 0);
	CU_ASSERT_EQUAL(regexec(&re, line, 0, NULL, 0), 0);
	regfree(&re);
}

FL_TESTS(log_tests,
	 FL_TEST(test_core_message_reaches_sink),
	 FL_TEST(test_levels_and_filter),
	 FL_TEST(test_newline_and_long_line),
	 FL_TEST(test_default_sink_format));

FL_SUITES(FL_SUITE("log", NULL, NULL, log_tests));
