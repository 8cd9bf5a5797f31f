/* SPDX-License-Identifier: MIT */
/*
 * log.c - the embedded target's log lines, escaped (fl_log_escape), at the
 * levels of opts.verbose. RFC 7143 has no clause for this file.
 */
#include "fl_log.h"
#include "iscsi_internal.h"

#include <stdio.h>
#include <stdint.h>

/* Writes one log line: "faultlun serve: [conn N peer] message" (escaped). */
void iscsi_log(struct portal *p, int level, struct conn *c, const char *fmt, ...)
{
	char raw[512], msg[4 * sizeof(raw)];
	va_list ap;

	if (level > p->opts.verbose)
		return;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	fl_log_escape(raw, msg, sizeof(msg));
	FILE *out = p->opts.log ? p->opts.log : stderr;
	if (c)
		fprintf(out, "faultlun serve: conn %llu %s: %s\n", (unsigned long long)c->id,
			c->peer, msg);
	else
		fprintf(out, "faultlun serve: %s\n", msg);
	fflush(out);
}

/* Writes an accept-path log line, at most one a second (a flood must not fill the disk). */
void accept_log(struct portal *p, const char *fmt, ...)
{
	uint64_t now = fl_mono_ns();
	char msg[256];
	va_list ap;

	if (p->acclog_ns && now - p->acclog_ns < 1000000000u) {
		p->acclog_quiet++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->acclog_quiet)
		iscsi_log(p, LOG_ERR, NULL, "%s (%u more such lines not written)", msg,
			  p->acclog_quiet);
	else
		iscsi_log(p, LOG_ERR, NULL, "%s", msg);
	p->acclog_ns = now;
	p->acclog_quiet = 0;
}
