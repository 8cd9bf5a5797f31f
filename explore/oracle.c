/* SPDX-License-Identifier: MIT */
/*
 * oracle.c - the oracles of `faultlun explore` (docs/explore.md "Oracles"):
 * rules that say a trial found something, each with the line that shows it.
 * They read a trial only through the typed run result (fl_result.h) and its
 * kernel log.
 */
#include "fl_explore.h"

#include <regex.h>
#include <stdio.h>
#include <string.h>

const char *fl_oracle_name(enum fl_oracle o)
{
	switch (o) {
	case FL_ORACLE_KERNEL:
		return "kernel";
	case FL_ORACLE_LIVENESS:
		return "liveness";
	case FL_ORACLE_USER:
		return "user";
	case FL_ORACLE_INTEGRITY:
		return "integrity";
	case FL_ORACLE_NONE:
		break;
	}
	return "none";
}

/* Sets f to oracle o with the evidence text (cut at FL_EXPLORE_EVIDENCE - 1 bytes). */
static bool found(struct fl_finding *f, enum fl_oracle o, const char *text, size_t len)
{
	if (len >= sizeof(f->evidence))
		len = sizeof(f->evidence) - 1;
	f->oracle = o;
	memcpy(f->evidence, text, len);
	f->evidence[len] = 0;
	return true;
}

/*
 * What the kernel prints when it reports a bug of its own (POSIX extended
 * regexes): the splats of lib/bug.c and the fault handlers, the sanitizers,
 * lockdep, the RCU stall detector, refcount_t and list debugging, and the
 * hung-task detector.
 */
static const char *const kernel_splats[] = {
    "BUG:",
    "WARNING:",
    "Oops",
    "general protection fault",
    "(KASAN|KFENCE|UBSAN):",
    "possible (circular|recursive) locking|inconsistent lock state",
    "rcu.*stall",
    "refcount_t:",
    "list_(add|del) corruption",
    "blocked for more than",
};

/* The regex of the kernel's bug report that line (len bytes) is, or NULL. */
static const char *line_splat(const regex_t *re, size_t nre, const char *line, size_t len)
{
	char buf[1024];

	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, line, len);
	buf[len] = 0;
	if (strstr(buf, "faultlun-agent"))
		return NULL;
	for (size_t i = 0; i < nre; i++)
		if (!regexec(&re[i], buf, 0, NULL, 0))
			return kernel_splats[i];
	return NULL;
}

/*
 * The length of a /dev/kmsg record's prefix ("LEVEL,SEQ,USEC,FLAGS;", as the
 * lab's kmsg.txt keeps it) at the start of line, or 0 without one.
 */
static size_t record_prefix(const char *line, size_t len)
{
	size_t i = 0, commas = 0;

	for (; i < len && i < 64 && line[i] != ';'; i++) {
		if (line[i] == ',')
			commas++;
		else if (commas < 3 && (line[i] < '0' || line[i] > '9'))
			return 0;
	}
	return i < len && line[i] == ';' && commas == 3 ? i + 1 : 0;
}

bool fl_oracle_kernel(const char *text, size_t len, struct fl_finding *f)
{
	enum { N = sizeof(kernel_splats) / sizeof(kernel_splats[0]) };
	regex_t re[N];
	size_t nre = 0;
	bool hit = false;

	for (; nre < N; nre++)
		if (regcomp(&re[nre], kernel_splats[nre], REG_EXTENDED | REG_NOSUB))
			break;
	for (size_t at = 0; at < len && !hit;) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - text) : len;

		const char *splat = line_splat(re, nre, text + at, end - at);

		if (splat) {
			size_t skip = record_prefix(text + at, end - at);

			hit = found(f, FL_ORACLE_KERNEL, text + at + skip, end - at - skip);
			f->splat = splat;
		}
		at = end + 1;
	}
	for (size_t i = 0; i < nre; i++)
		regfree(&re[i]);
	return hit;
}

bool fl_oracle_liveness(const struct fl_result *r, size_t want_steps, struct fl_finding *f)
{
	char buf[FL_EXPLORE_EVIDENCE];

	if (r->verdict && !strcmp(r->verdict, "ERROR")) {
		snprintf(buf, sizeof(buf), "run ERROR: %s", r->error ? r->error : "(no reason)");
		return found(f, FL_ORACLE_LIVENESS, buf, strlen(buf));
	}
	for (size_t i = 0; i < r->nsteps; i++)
		if (r->steps[i].errno_name && !strcmp(r->steps[i].errno_name, "TIMEOUT")) {
			snprintf(buf, sizeof(buf), "step %lld (%s) ended TIMEOUT after %.0f ms",
				 r->steps[i].step, r->steps[i].op ? r->steps[i].op : "?",
				 r->steps[i].elapsed_ms);
			return found(f, FL_ORACLE_LIVENESS, buf, strlen(buf));
		}
	if (r->nsteps < want_steps) {
		snprintf(buf, sizeof(buf), "the workload completed %zu of its %zu steps", r->nsteps,
			 want_steps);
		return found(f, FL_ORACLE_LIVENESS, buf, strlen(buf));
	}
	return false;
}

bool fl_oracle_integrity(const struct fl_result *r, struct fl_finding *f)
{
	char buf[FL_EXPLORE_EVIDENCE];

	for (size_t i = 0; i < r->nsteps; i++)
		if (r->steps[i].integrity) {
			snprintf(buf, sizeof(buf), "step %lld (%s): %s", r->steps[i].step,
				 r->steps[i].op ? r->steps[i].op : "?", r->steps[i].integrity);
			return found(f, FL_ORACLE_INTEGRITY, buf, strlen(buf));
		}
	return false;
}

bool fl_oracle_user(const struct fl_result *r, struct fl_finding *f)
{
	char buf[FL_EXPLORE_EVIDENCE];

	for (size_t i = 0; i < r->nexpectations; i++) {
		const struct fl_result_expect *e = &r->expectations[i];

		if (e->verdict != FL_RESULT_FAIL)
			continue;
		snprintf(buf, sizeof(buf), "expectation failed: %s; observed: %s",
			 e->what ? e->what : "(not recorded)",
			 e->observed ? e->observed : "(not recorded)");
		return found(f, FL_ORACLE_USER, buf, strlen(buf));
	}
	return false;
}

bool fl_explore_judge(int rc, const struct fl_result *r, const char *kmsg, size_t kmsg_len,
		      size_t want_steps, struct fl_finding *f)
{
	char buf[64];

	memset(f, 0, sizeof(*f));
	if (kmsg && fl_oracle_kernel(kmsg, kmsg_len, f))
		return true;
	if (!r) {
		snprintf(buf, sizeof(buf), "the run left no result (status %d)", rc);
		return found(f, FL_ORACLE_LIVENESS, buf, strlen(buf));
	}
	return fl_oracle_integrity(r, f) || fl_oracle_liveness(r, want_steps, f) ||
	       fl_oracle_user(r, f);
}
