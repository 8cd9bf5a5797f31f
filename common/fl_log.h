/* SPDX-License-Identifier: MIT */
/*
 * fl_log.h - the log hook of the core and the fault engine.
 *
 * target/ and faults/ never write to stderr themselves: they call fl_log(),
 * and the front end decides where the line goes by setting a sink once at
 * start-up. `faultlun serve` and the tools keep the default sink (stderr,
 * one line with a UTC timestamp); handler_faultlun.so sends every line to
 * tcmu-runner's own log at the matching level.
 *
 * Threading: fl_log may be called from any thread; the sink is called on the
 * caller's thread, with no faultlun lock held by the log itself. Set the sink
 * before the threads that log start, or accept that a line logged during the
 * change may reach the old sink.
 */
#ifndef FL_LOG_H
#define FL_LOG_H

#include <stddef.h>

/* Severity of a line, most severe first (syslog's order). */
enum fl_log_level {
	FL_LOG_ERR,
	FL_LOG_WARN,
	FL_LOG_INFO,
	FL_LOG_DEBUG,
};

/* Receives one formatted line: no trailing newline, no "faultlun:" prefix. */
typedef void (*fl_log_sink_fn)(enum fl_log_level level, const char *msg, void *arg);

/* Sets where lines go; fn NULL restores the default sink (stderr with a timestamp). */
void fl_log_set_sink(fl_log_sink_fn fn, void *arg);

/* Drops lines less severe than max before they are formatted (default FL_LOG_INFO). */
void fl_log_set_level(enum fl_log_level max);

/* Formats a line (printf-style; a trailing newline is dropped) and hands it to the sink. */
void fl_log(enum fl_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * Copies in to out (cap bytes, NUL-terminated, cut short if it does not fit)
 * with control characters, DEL and backslashes as \xNN; returns out. fl_log
 * escapes its lines with it; a front end quoting a scenario or peer string
 * in a line of its own uses it too.
 */
const char *fl_log_escape(const char *in, char *out, size_t cap);

/* The level's name as the default sink prints it ("error", "warning", "info", "debug"). */
const char *fl_log_level_name(enum fl_log_level level);

#endif
