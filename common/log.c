/* SPDX-License-Identifier: MIT */
/*
 * log.c - fl_log(): formats a line and hands it to the front end's sink; the
 * default sink writes it to stderr after a UTC timestamp with milliseconds.
 * A line quotes scenario and peer strings: control characters, DEL and
 * backslashes in it are escaped as \xNN, so that no quoted string can start a
 * line of its own in the log (docs/robustness.md).
 */
#include "fl_log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Longest line a sink receives; longer ones are cut (with "..." at the end). */
#define LOG_LINE_MAX 1024

static pthread_mutex_t sink_lock = PTHREAD_MUTEX_INITIALIZER;
static fl_log_sink_fn sink_fn;
static void *sink_arg;
static enum fl_log_level max_level = FL_LOG_INFO;

/* The level's name as the default sink prints it. */
const char *fl_log_level_name(enum fl_log_level level)
{
	static const char *const names[] = {"error", "warning", "info", "debug"};

	return (unsigned)level < sizeof(names) / sizeof(names[0]) ? names[level] : "?";
}

/* Default sink: "2026-12-03T17:54:47.123Z faultlun: warning: MSG" on stderr. */
static void stderr_sink(enum fl_log_level level, const char *msg, void *arg)
{
	struct timespec ts;
	struct tm tm;
	char when[32] = "";

	(void)arg;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (gmtime_r(&ts.tv_sec, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(stderr, "%s.%03ldZ faultlun: %s: %s\n", when, ts.tv_nsec / 1000000L,
		fl_log_level_name(level), msg);
	fflush(stderr);
}

/* Sets where lines go; NULL restores the default sink. */
void fl_log_set_sink(fl_log_sink_fn fn, void *arg)
{
	pthread_mutex_lock(&sink_lock);
	sink_fn = fn;
	sink_arg = fn ? arg : NULL;
	pthread_mutex_unlock(&sink_lock);
}

/* Drops lines less severe than max. */
void fl_log_set_level(enum fl_log_level max)
{
	__atomic_store_n(&max_level, max, __ATOMIC_RELAXED);
}

/* See fl_log.h. */
const char *fl_log_escape(const char *in, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	if (!cap)
		return out;
	for (const unsigned char *s = (const unsigned char *)(in ? in : ""); *s && o + 5 < cap;
	     s++) {
		if (*s >= 0x20 && *s < 0x7f && *s != '\\') {
			out[o++] = (char)*s;
			continue;
		}
		out[o++] = '\\';
		out[o++] = 'x';
		out[o++] = hex[*s >> 4];
		out[o++] = hex[*s & 15];
	}
	out[o] = 0;
	return out;
}

/* Formats one line, escapes it and hands it to the sink (outside the sink lock). */
void fl_log(enum fl_log_level level, const char *fmt, ...)
{
	char msg[LOG_LINE_MAX], esc[4 * LOG_LINE_MAX];
	fl_log_sink_fn fn;
	void *arg;
	va_list ap;
	int n;

	if (level > __atomic_load_n(&max_level, __ATOMIC_RELAXED))
		return;
	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(msg)) {
		memcpy(msg + sizeof(msg) - 4, "...", 4);
		n = (int)sizeof(msg) - 1;
	}
	while (n > 0 && msg[n - 1] == '\n')
		msg[--n] = '\0';
	pthread_mutex_lock(&sink_lock);
	fn = sink_fn;
	arg = sink_arg;
	pthread_mutex_unlock(&sink_lock);
	(fn ? fn : stderr_sink)(level, fl_log_escape(msg, esc, sizeof(esc)), arg);
}
