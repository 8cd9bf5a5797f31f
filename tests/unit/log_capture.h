/* SPDX-License-Identifier: MIT */
/*
 * log_capture.h - a log sink for the unit tests: log_capture_start(&cap)
 * makes every line the code logs from then on appear in cap.text (as much as
 * fits), so that a test can check what was said.
 */
#ifndef FL_UNIT_LOG_CAPTURE_H
#define FL_UNIT_LOG_CAPTURE_H

#include "fl_log.h"

#include <stdio.h>
#include <string.h>

/* The lines logged since log_capture_start, each ending in a newline. */
struct log_capture {
	char text[8192];
};

/* The sink: appends msg and a newline to the struct log_capture at arg. */
static inline void log_capture_sink(enum fl_log_level level, const char *msg, void *arg)
{
	struct log_capture *c = arg;
	size_t n = strlen(c->text);

	(void)level;
	snprintf(c->text + n, sizeof(c->text) - n, "%s\n", msg);
}

/* Empties c and sends the log to it. */
static inline void log_capture_start(struct log_capture *c)
{
	c->text[0] = '\0';
	fl_log_set_sink(log_capture_sink, c);
}

#endif
