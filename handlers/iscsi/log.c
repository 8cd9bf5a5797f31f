/* SPDX-License-Identifier: MIT */
/*
 * log.c - the embedded target's log lines, escaped (fl_log_escape), at the
 * levels of opts.verbose. RFC 7143 has no clause for this file.
 */
#include "fl_log.h"
#include "iscsi_internal.h"

#include <stdio.h>

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
