// SPDX-License-Identifier: MIT
/*
 * judge.c - the one expectation checker (fl_check.h).
 *
 * Both runners hand in what they saw (struct fl_obs) and this file decides
 * every verdict, so an expectation means the same thing in the VM lab and in
 * the libiscsi runner (docs/scenario-format.md "Expectations"). An assertion
 * a runner cannot observe, or an entry scoped to the other runner, is "not
 * applicable": never counted as a pass.
 */
#include "scenario_internal.h"

#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Verdicts being collected. */
struct vlist {
	struct fl_verdict *v;
	size_t n, cap;
	bool oom;
};

/* What a runner is called in messages. */
static const char *runner_name(enum fl_runner r)
{
	return r == FL_RUNNER_VM ? "vm" : "libiscsi";
}

/* Appends a verdict (NULL when out of memory). */
static struct fl_verdict *vadd(struct vlist *l, size_t expect, enum fl_expect_kind kind,
			       enum fl_verdict_kind v)
{
	struct fl_verdict *nv;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 32;

		nv = realloc(l->v, cap * sizeof(*nv));
		if (!nv) {
			l->oom = true;
			return NULL;
		}
		l->v = nv;
		l->cap = cap;
	}
	nv = &l->v[l->n++];
	memset(nv, 0, sizeof(*nv));
	nv->expect = expect;
	nv->kind = kind;
	nv->v = v;
	return nv;
}

/* Sets a verdict's observed text. */
static void observed(struct fl_verdict *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void observed(struct fl_verdict *v, const char *fmt, ...)
{
	va_list ap;

	if (!v)
		return;
	va_start(ap, fmt);
	vsnprintf(v->observed, sizeof(v->observed), fmt, ap);
	va_end(ap);
}

/* "N times", "N to M times" or "at least N times": how often a state is entered (path, dh_state).
 */
static void times(const struct fl_expect *x, char *buf, size_t len)
{
	unsigned long long lo = x->has_count_min ? x->count_min : 1;

	if (x->has_count_min && x->has_count_max && x->count_min == x->count_max)
		snprintf(buf, len, "%llu time%s", lo, lo == 1 ? "" : "s");
	else if (x->has_count_max)
		snprintf(buf, len, "%llu to %llu times", x->has_count_min ? lo : 0,
			 (unsigned long long)x->count_max);
	else
		snprintf(buf, len, "at least %llu time%s", lo, lo == 1 ? "" : "s");
}

/* "step N errno E" or "step N errno one of E1, E2, ...". */
static void describe_errno(const struct fl_expect *x, char *buf, size_t len)
{
	size_t o =
	    (size_t)snprintf(buf, len, "step %d errno %s%s", x->step,
			     x->nerrnos > 1 ? "one of " : "", x->nerrnos ? x->errnos[0] : "?");

	for (size_t i = 1; i < x->nerrnos && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, ", %s", x->errnos[i]);
}

/* "step N CHECK CONDITION with sense KEY/ASC", or with any ASC of the key. */
static void describe_sense(const struct fl_expect *x, char *buf, size_t len)
{
	char t[96];

	if (x->sense_any_asc)
		snprintf(t, sizeof(t), "%s (any ASC)",
			 fl_sense_key_name(x->key) ? fl_sense_key_name(x->key) : "?");
	else
		fl_sense_text(x->key, x->asc, x->ascq, t, sizeof(t));
	snprintf(buf, len, "step %d CHECK CONDITION with sense %s", x->step, t);
}

/* "kernel log /RE/" with its count bounds, if any. */
static void describe_kernel_log(const struct fl_expect *x, char *buf, size_t len)
{
	if (x->has_count_min && x->has_count_max && x->count_min == x->count_max)
		snprintf(buf, len, "kernel log /%s/ count %llu", x->kernel_log,
			 (unsigned long long)x->count_min);
	else if (x->has_count_max)
		snprintf(buf, len, "kernel log /%s/ count from %llu to %llu", x->kernel_log,
			 (unsigned long long)(x->has_count_min ? x->count_min : 0),
			 (unsigned long long)x->count_max);
	else if (x->has_count_min)
		snprintf(buf, len, "kernel log /%s/ count at least %llu", x->kernel_log,
			 (unsigned long long)x->count_min);
	else
		snprintf(buf, len, "kernel log /%s/", x->kernel_log);
}

/* "error-handler steps in order: S1 S2 ..." or "(none required)". */
static void describe_eh(const struct fl_expect *x, char *buf, size_t len)
{
	size_t o = (size_t)snprintf(buf, len, "error-handler steps in order:");

	for (size_t i = 0; i < x->neh && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, " %s", fl_eh_names[x->eh[i]]);
	if (!x->neh)
		snprintf(buf + o, len - o, " (none required)");
}

/* "trace {"KEY": JSON, ...} at least N[, at most M]". */
static void describe_trace(const struct fl_expect *x, char *buf, size_t len)
{
	size_t o = (size_t)snprintf(buf, len, "trace {");

	for (size_t i = 0; i < x->ntrace && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s\"%s\": %s", i ? ", " : "",
				      x->trace[i].key, x->trace[i].json);
	if (o < len)
		snprintf(buf + o, len - o, "} at least %llu",
			 (unsigned long long)(x->has_count_min ? x->count_min : 1));
	if (x->has_count_max && strlen(buf) + 24 < len)
		snprintf(buf + strlen(buf), len - strlen(buf), ", at most %llu",
			 (unsigned long long)x->count_max);
}

/* Writes the "what" text of one assertion of an expectation. */
static void describe(const struct fl_expect *x, enum fl_expect_kind kind, char *buf, size_t len)
{
	char tm[64];

	switch (kind) {
	case FL_EX_ERRNO:
		describe_errno(x, buf, len);
		break;
	case FL_EX_STATUS:
		snprintf(buf, len, "step %d status %s", x->step,
			 fl_status_name(x->status) ? fl_status_name(x->status) : "?");
		break;
	case FL_EX_SENSE:
		describe_sense(x, buf, len);
		break;
	case FL_EX_UA: {
		const char *a = fl_sense_asc_name(x->ua_asc, x->ua_ascq);

		snprintf(buf, len, "step %d answered with UNIT ATTENTION %s%s%02X/%02X%s", x->step,
			 a ? a : "", a ? " (" : "", x->ua_asc, x->ua_ascq, a ? ")" : "");
		break;
	}
	case FL_EX_TMF_RESPONSE:
		snprintf(buf, len, "step %d TMF response %s", x->step,
			 fl_tmf_response_name(x->tmf_response) ?: "?");
		break;
	case FL_EX_WITHIN:
		snprintf(buf, len, "step %d ends within %llu ms", x->step,
			 (unsigned long long)x->within_ms);
		break;
	case FL_EX_MIN_MS:
		snprintf(buf, len, "step %d takes at least %llu ms", x->step,
			 (unsigned long long)x->min_ms);
		break;
	case FL_EX_RAN:
		snprintf(buf, len, "step %d ran", x->step);
		break;
	case FL_EX_KERNEL_LOG:
		describe_kernel_log(x, buf, len);
		break;
	case FL_EX_PATH:
		times(x, tm, sizeof(tm));
		snprintf(buf, len, "path %s enters %s %s", x->path_port, x->path_state, tm);
		break;
	case FL_EX_DH_STATE:
		times(x, tm, sizeof(tm));
		snprintf(buf, len, "device handler %s%s%s entered %s", x->dh_handler,
			 x->dh_access ? " in " : "", x->dh_access ? x->dh_access : "", tm);
		break;
	case FL_EX_EH:
		describe_eh(x, buf, len);
		break;
	case FL_EX_DEVICE_STATE:
		if (x->lun >= 0)
			snprintf(buf, len, "LUN %d device state %s at the end", x->lun,
				 x->device_state);
		else
			snprintf(buf, len, "device state %s at the end", x->device_state);
		break;
	case FL_EX_STALL:
		if (x->stall_min_ms)
			snprintf(buf, len, "healthy LUN stalls between %llu and %llu ms",
				 (unsigned long long)x->stall_min_ms,
				 (unsigned long long)x->stall_max_ms);
		else
			snprintf(buf, len, "healthy LUN stalls at most %llu ms",
				 (unsigned long long)x->stall_max_ms);
		break;
	case FL_EX_TRACE:
		describe_trace(x, buf, len);
		break;
	}
}

/* Text of how a step ended, for messages. */
static void step_end_text(const struct fl_step_obs *s, char *buf, size_t len)
{
	switch (s->end) {
	case FL_END_NOT_RUN:
		snprintf(buf, len, "step did not run%s%s", s->why[0] ? ": " : "", s->why);
		break;
	case FL_END_UNSUPPORTED:
		snprintf(buf, len, "not run by this runner%s%s", s->why[0] ? ": " : "", s->why);
		break;
	case FL_END_TIMEOUT:
		snprintf(buf, len, "TIMEOUT after %.0f ms", s->elapsed_ms);
		break;
	case FL_END_CRASHED:
		snprintf(buf, len, "CRASHED after %.0f ms", s->elapsed_ms);
		break;
	case FL_END_DONE:
		snprintf(buf, len, "%s after %.0f ms", s->errno_name, s->elapsed_ms);
		if (s->retries) {
			size_t o = strlen(buf);
			snprintf(buf + o, len - o, ", %u retr%s", s->retries,
				 s->retries == 1 ? "y" : "ies");
		}
		if (s->why[0]) { /* a stamped read: which block is not as acknowledged */
			size_t o = strlen(buf);
			snprintf(buf + o, len - o, ": %s", s->why);
		}
		break;
	}
}

/* The errno name a step recorded. */
static const char *step_errno(const struct fl_step_obs *s)
{
	return s->end == FL_END_TIMEOUT	  ? "TIMEOUT"
	       : s->end == FL_END_CRASHED ? "CRASHED"
					  : s->errno_name;
}

/* Text of a step's status and sense. */
static void status_text(const struct fl_step_obs *s, char *buf, size_t len)
{
	const char *n = fl_status_name(s->status);
	char t[96];

	if (!s->has_sense) {
		snprintf(buf, len, "status %s (0x%02x), no sense", n ? n : "?", s->status);
		return;
	}
	fl_sense_text(s->key, s->asc, s->ascq, t, sizeof(t));
	snprintf(buf, len, "status %s (0x%02x), sense %s", n ? n : "?", s->status, t);
}

/* Judges a TMF-response assertion about a step that ran; t is how the step ended. */
static struct fl_verdict *judge_tmf_response(struct vlist *l, const struct fl_check *check,
					     const struct fl_expect *x, size_t xi,
					     const struct fl_step_obs *s, const char *t)
{
	struct fl_verdict *v;
	bool ok;

	if (!fl_step_op_is_tmf(check->steps[x->step].op)) {
		v = vadd(l, xi, FL_EX_TMF_RESPONSE, FL_VERDICT_FAIL);
		observed(v, "step %d is a %s step, not a task-management function (%s)", x->step,
			 fl_step_op_name(check->steps[x->step].op), t);
		return v;
	}
	ok = s->end == FL_END_DONE && s->has_tmf_response && s->tmf_response == x->tmf_response;
	v = vadd(l, xi, FL_EX_TMF_RESPONSE, ok ? FL_VERDICT_PASS : FL_VERDICT_FAIL);
	if (s->has_tmf_response)
		observed(v, "TMF response %s (%u), %s",
			 fl_tmf_response_name(s->tmf_response) ?: "?", s->tmf_response, t);
	else
		observed(v, "no TMF response (%s)", t);
	return v;
}

/* True when a step's status and sense satisfy a status, sense or unit-attention assertion. */
static bool status_matches(const struct fl_expect *x, enum fl_expect_kind kind,
			   const struct fl_step_obs *s)
{
	if (kind == FL_EX_STATUS)
		return s->status == x->status;
	if (kind == FL_EX_UA)
		return s->status == 0x02 && s->has_sense && s->key == 0x06 && s->asc == x->ua_asc &&
		       s->ascq == x->ua_ascq;
	return s->status == 0x02 && s->has_sense && s->key == x->key &&
	       (x->sense_any_asc || (s->asc == x->asc && s->ascq == x->ascq));
}

/* Judges a status, sense or unit-attention assertion about a step that ran. */
static struct fl_verdict *judge_status(struct vlist *l, const struct fl_check *check,
				       const struct fl_expect *x, size_t xi,
				       enum fl_expect_kind kind, const struct fl_obs *obs,
				       const struct fl_step_obs *s, const char *t)
{
	struct fl_verdict *v;
	char st[200];

	if (!s->has_status) {
		bool can =
		    obs->can_status_all || fl_step_op_is_passthrough(check->steps[x->step].op);

		v = vadd(l, xi, kind, can ? FL_VERDICT_FAIL : FL_VERDICT_NA);
		if (can)
			observed(v, "no SCSI status (%s)", t);
		else
			observed(v,
				 "the %s runner sees no SCSI status of this op (only of "
				 "tur, inquiry and sg_raw)",
				 runner_name(obs->runner));
		return v;
	}
	v = vadd(l, xi, kind, status_matches(x, kind, s) ? FL_VERDICT_PASS : FL_VERDICT_FAIL);
	status_text(s, st, sizeof(st));
	observed(v, "%s", st);
	return v;
}

/* Judges one assertion about a step. */
static void judge_step(struct vlist *l, const struct fl_check *check, const struct fl_expect *x,
		       size_t xi, enum fl_expect_kind kind, const struct fl_obs *obs)
{
	const struct fl_step_obs *s =
	    x->step >= 0 && (size_t)x->step < obs->nsteps ? &obs->steps[x->step] : NULL;
	struct fl_verdict *v;
	char t[200];
	bool ok = false;

	if (!s) {
		v = vadd(l, xi, kind, FL_VERDICT_FAIL);
		observed(v, "the runner has no record of step %d", x->step);
		goto what;
	}
	step_end_text(s, t, sizeof(t));
	if (s->end == FL_END_UNSUPPORTED ||
	    (obs->runner == FL_RUNNER_VM && !fl_step_op_in_vm(check->steps[x->step].op))) {
		v = vadd(l, xi, kind, FL_VERDICT_NA);
		observed(v, "the %s runner cannot run %s%s steps%s%s", runner_name(obs->runner),
			 check->steps[x->step].background ? "background " : "",
			 fl_step_op_name(check->steps[x->step].op), s->why[0] ? ": " : "", s->why);
		goto what;
	}
	if (s->end == FL_END_NOT_RUN) {
		v = vadd(l, xi, kind, FL_VERDICT_FAIL);
		observed(v, "%s", t);
		goto what;
	}
	switch (kind) {
	case FL_EX_ERRNO:
		for (size_t i = 0; i < x->nerrnos; i++)
			ok |= !strcmp(x->errnos[i], step_errno(s));
		v = vadd(l, xi, kind, ok ? FL_VERDICT_PASS : FL_VERDICT_FAIL);
		observed(v, "%s", t);
		break;
	case FL_EX_TMF_RESPONSE:
		v = judge_tmf_response(l, check, x, xi, s, t);
		break;
	case FL_EX_STATUS:
	case FL_EX_SENSE:
	case FL_EX_UA:
		v = judge_status(l, check, x, xi, kind, obs, s, t);
		break;
	case FL_EX_WITHIN:
		ok = s->end == FL_END_DONE && s->elapsed_ms <= (double)x->within_ms;
		v = vadd(l, xi, kind, ok ? FL_VERDICT_PASS : FL_VERDICT_FAIL);
		observed(v, "%s", t);
		break;
	case FL_EX_MIN_MS:
		ok = s->elapsed_ms >= (double)x->min_ms;
		v = vadd(l, xi, kind, ok ? FL_VERDICT_PASS : FL_VERDICT_FAIL);
		observed(v, "%s", t);
		break;
	default: /* FL_EX_RAN */
		v = vadd(l, xi, kind, FL_VERDICT_PASS);
		observed(v, "%s", t);
		break;
	}
what:
	if (v)
		describe(x, kind, v->what, sizeof(v->what));
}

/* Counts kernel-log records matching x's expression; -1 when it does not compile. */
static long count_kmsg(const struct fl_expect *x, const struct fl_obs *obs, const char **first)
{
	regex_t re;
	long n = 0;

	if (regcomp(&re, x->kernel_log, REG_EXTENDED | REG_NOSUB))
		return -1;
	for (size_t i = 0; i < obs->nkmsg; i++)
		if (!regexec(&re, obs->kmsg[i], 0, NULL, 0)) {
			if (!n)
				*first = obs->kmsg[i];
			n++;
		}
	regfree(&re);
	return n;
}

/* True when want appears in seen in order (others between; repeats in a row count once). */
static bool eh_subsequence(const struct fl_expect *x, const struct fl_obs *obs)
{
	size_t j = 0;

	for (size_t i = 0; i < obs->neh && j < x->neh; i++)
		if (obs->eh[i] == x->eh[j])
			j++;
	return j == x->neh;
}

/* Counts trace events having every member of x; events parsed once per call. */
static size_t count_trace(const struct fl_expect *x, json_t **events, size_t n)
{
	size_t count = 0;
	json_t **want = calloc(x->ntrace ? x->ntrace : 1, sizeof(*want));

	if (!want)
		return 0;
	for (size_t k = 0; k < x->ntrace; k++)
		want[k] = json_loads(x->trace[k].json, JSON_DECODE_ANY, NULL);
	for (size_t i = 0; i < n; i++) {
		bool all = events[i] != NULL;

		for (size_t k = 0; all && k < x->ntrace; k++) {
			json_t *got = json_object_get(events[i], x->trace[k].key);

			all = got && want[k] &&
			      (json_equal(got, want[k]) ||
			       (json_is_number(got) && json_is_number(want[k]) &&
				json_number_value(got) == json_number_value(want[k])));
		}
		count += all;
	}
	for (size_t k = 0; k < x->ntrace; k++)
		json_decref(want[k]);
	free(want);
	return count;
}

/*
 * Does path line "PORT DEV DM_STATE CHECKER_STATE PRIO GROUP" name port and
 * hold state (its dm state, checker state or group state)?
 */
static bool path_line(const char *line, const char *port, const char *state, bool *holds)
{
	char p[64], dev[32], dm[32], chk[32], prio[16], grp[32] = "";

	if (sscanf(line, "%63s %31s %31s %31s %15s %31s", p, dev, dm, chk, prio, grp) < 4 ||
	    strcmp(p, port))
		return false;
	*holds = !strcmp(dm, state) || !strcmp(chk, state) || !strcmp(grp, state);
	return true;
}

/*
 * How many times the path of port entered state after its first line (the
 * state when the workload started); its states in observed.
 */
static uint64_t count_path(const struct fl_expect *x, const struct fl_obs *obs, char *seen,
			   size_t len)
{
	uint64_t n = 0;
	bool first = true, was = false;
	size_t o = 0;

	seen[0] = 0;
	for (size_t i = 0; i < obs->npaths; i++) {
		bool holds;

		if (!path_line(obs->paths[i], x->path_port, x->path_state, &holds))
			continue;
		if (!first && holds && !was)
			n++;
		was = holds;
		first = false;
		const char *st = strchr(obs->paths[i], ' ');
		st = st ? strchr(st + 1, ' ') : NULL;
		if (st && o + 8 < len)
			o += (size_t)snprintf(seen + o, len - o, "%s%s", o ? " -> " : "", st + 1);
	}
	return n;
}

/*
 * How many times a disk's device handler entered x's handler and access
 * state (a disk's line that holds after one of the same disk that did not,
 * or its first); each line's disk, handler and state in seen.
 */
static uint64_t count_dh(const struct fl_expect *x, const struct fl_obs *obs, char *seen,
			 size_t len)
{
	uint64_t n = 0;
	size_t o = 0;

	seen[0] = 0;
	for (size_t i = 0; i < obs->ndh; i++) {
		char dev[32], h[32], st[48];

		if (!obs->dh[i] || sscanf(obs->dh[i], "%31s %31s %47s", dev, h, st) != 3)
			continue;
		bool holds =
		    !strcmp(h, x->dh_handler) && (!x->dh_access || !strcmp(st, x->dh_access));
		bool was = false;

		/* the same disk's line before this one */
		for (size_t k = i; k-- > 0;) {
			char d2[32], h2[32], s2[48];

			if (!obs->dh[k] || sscanf(obs->dh[k], "%31s %31s %47s", d2, h2, s2) != 3 ||
			    strcmp(d2, dev))
				continue;
			was = !strcmp(h2, x->dh_handler) &&
			      (!x->dh_access || !strcmp(s2, x->dh_access));
			break;
		}
		if (holds && !was)
			n++;
		if (o + 8 < len)
			o += (size_t)snprintf(seen + o, len - o, "%s%s %s %s", o ? ", " : "", dev,
					      h, st);
	}
	return n;
}

/* A kernel_log or eh expectation: the lines that match, or the error-handler steps. */
static struct fl_verdict *judge_kernel(struct vlist *l, const struct fl_expect *x, size_t xi,
				       enum fl_expect_kind kind, const struct fl_obs *obs)
{
	struct fl_verdict *v = NULL;
	const char *who = runner_name(obs->runner);

	if (!obs->has_kernel) {
		v = vadd(l, xi, kind, FL_VERDICT_NA);
		observed(v, "the %s runner has no kernel log", who);
		return v;
	}
	if (kind == FL_EX_EH) {
		size_t o = 0;

		v = vadd(l, xi, kind, eh_subsequence(x, obs) ? FL_VERDICT_PASS : FL_VERDICT_FAIL);
		if (!v)
			return v;
		for (size_t i = 0; i < obs->neh && o + 2 < sizeof(v->observed); i++)
			if (!i || obs->eh[i] != obs->eh[i - 1])
				o +=
				    (size_t)snprintf(v->observed + o, sizeof(v->observed) - o,
						     "%s%s", o ? " " : "", fl_eh_names[obs->eh[i]]);
		if (!o)
			observed(v, "(no error-handler step)");
	} else {
		const char *first = NULL;
		long n = count_kmsg(x, obs, &first);
		uint64_t lo = x->has_count_min ? x->count_min : 1;
		bool ok = n >= 0 && (uint64_t)n >= lo &&
			  (!x->has_count_max || (uint64_t)n <= x->count_max);

		v = vadd(l, xi, kind, ok ? FL_VERDICT_PASS : FL_VERDICT_FAIL);
		if (n < 0)
			observed(v, "invalid regular expression");
		else
			observed(v, "%ld matching line%s%s%.200s%s", n, n == 1 ? "" : "s",
				 first ? ", first: \"" : "", first ? first : "", first ? "\"" : "");
	}
	return v;
}

/* A device_state expectation: the state of the LUN's kernel device. */
static struct fl_verdict *judge_device_state(struct vlist *l, const struct fl_expect *x, size_t xi,
					     enum fl_expect_kind kind, const struct fl_obs *obs)
{
	struct fl_verdict *v = NULL;
	const char *who = runner_name(obs->runner);
	const char *got;

	if (!obs->device_state) {
		v = vadd(l, xi, kind, FL_VERDICT_NA);
		observed(v, "the %s runner sees no kernel device state", who);
		return v;
	}
	got = obs->device_state(obs->device_state_arg, x->lun >= 0 ? x->lun : obs->test_lun);
	v = vadd(l, xi, kind,
		 got && !strcmp(got, x->device_state) ? FL_VERDICT_PASS : FL_VERDICT_FAIL);
	observed(v, "%s", got ? got : "(unknown)");
	return v;
}

/* A max_stall_ms expectation: the healthy LUN's longest read. */
static struct fl_verdict *judge_stall(struct vlist *l, const struct fl_expect *x, size_t xi,
				      enum fl_expect_kind kind, const struct fl_obs *obs)
{
	struct fl_verdict *v = NULL;
	const char *who = runner_name(obs->runner);

	if (!obs->has_stall) {
		v = vadd(l, xi, kind, FL_VERDICT_NA);
		observed(v, "the %s runner has no healthy-LUN probe", who);
		return v;
	}
	if (obs->max_stall_ms < 0) {
		v = vadd(l, xi, kind, FL_VERDICT_FAIL);
		observed(v, "no healthy-LUN probe (needs a LUN no step uses)");
		return v;
	}
	v = vadd(l, xi, kind,
		 obs->max_stall_ms <= (double)x->stall_max_ms &&
			 obs->max_stall_ms >= (double)x->stall_min_ms
		     ? FL_VERDICT_PASS
		     : FL_VERDICT_FAIL);
	observed(v, "longest healthy-LUN read %.0f ms", obs->max_stall_ms);
	return v;
}

/*
 * The verdict of a path or dh_state expectation whose state was entered n times (within its
 * bounds: at least once by default); seen lists the states, unseen says why there are none.
 */
static struct fl_verdict *judge_entries(struct vlist *l, const struct fl_expect *x, size_t xi,
					enum fl_expect_kind kind, uint64_t n, const char *seen,
					const char *unseen)
{
	uint64_t lo = x->has_count_min ? x->count_min : 1;
	struct fl_verdict *v =
	    vadd(l, xi, kind,
		 n >= lo && (!x->has_count_max || n <= x->count_max) ? FL_VERDICT_PASS
								     : FL_VERDICT_FAIL);

	if (seen[0])
		observed(v, "entered %llu time%s; states: %s", (unsigned long long)n,
			 n == 1 ? "" : "s", seen);
	else
		observed(v, "%s", unseen);
	return v;
}

/* A path expectation: how often the port's path entered the state. */
static struct fl_verdict *judge_path(struct vlist *l, const struct fl_expect *x, size_t xi,
				     enum fl_expect_kind kind, const struct fl_obs *obs)
{
	struct fl_verdict *v = NULL;
	const char *who = runner_name(obs->runner);
	char seen[400], unseen[200];

	if (!obs->has_paths) {
		v = vadd(l, xi, kind, FL_VERDICT_NA);
		observed(v, "the %s runner sees no dm-multipath paths%s", who,
			 obs->runner == FL_RUNNER_VM ? " (knob multipath not set)" : "");
		return v;
	}
	snprintf(unseen, sizeof(unseen), "no path of port %s was seen", x->path_port);
	return judge_entries(l, x, xi, kind, count_path(x, obs, seen, sizeof(seen)), seen, unseen);
}

/* A dh_state expectation: how often a disk's device handler entered the state. */
static struct fl_verdict *judge_dh(struct vlist *l, const struct fl_expect *x, size_t xi,
				   enum fl_expect_kind kind, const struct fl_obs *obs)
{
	struct fl_verdict *v = NULL;
	const char *who = runner_name(obs->runner);
	char seen[400];

	if (!obs->has_dh) {
		v = vadd(l, xi, kind, FL_VERDICT_NA);
		observed(v, "the %s runner sees no device handler", who);
		return v;
	}
	return judge_entries(l, x, xi, kind, count_dh(x, obs, seen, sizeof(seen)), seen,
			     "no disk had a device handler attached");
}

/* A trace expectation: the target's trace events that match (parsed once, into *events). */
static struct fl_verdict *judge_trace(struct vlist *l, const struct fl_expect *x, size_t xi,
				      enum fl_expect_kind kind, const struct fl_obs *obs,
				      json_t ***events)
{
	struct fl_verdict *v = NULL;
	const char *who = runner_name(obs->runner);
	size_t n;
	uint64_t lo = x->has_count_min ? x->count_min : 1;

	if (!obs->has_trace) {
		v = vadd(l, xi, kind, FL_VERDICT_NA);
		observed(v, "the %s runner has no trace of the target", who);
		return v;
	}
	if (!*events && obs->ntrace) {
		*events = calloc(obs->ntrace, sizeof(**events));
		for (size_t i = 0; *events && i < obs->ntrace; i++)
			(*events)[i] = json_loads(obs->trace[i], 0, NULL);
	}
	n = *events ? count_trace(x, *events, obs->ntrace) : 0;
	v = vadd(l, xi, kind,
		 n >= lo && (!x->has_count_max || n <= x->count_max) ? FL_VERDICT_PASS
								     : FL_VERDICT_FAIL);
	observed(v, "%zu matching trace event%s", n, n == 1 ? "" : "s");
	return v;
}

/* Judges one whole-run expectation. */
static void judge_run(struct vlist *l, const struct fl_expect *x, size_t xi,
		      enum fl_expect_kind kind, const struct fl_obs *obs, json_t ***events)
{
	struct fl_verdict *v = NULL;

	switch (kind) {
	case FL_EX_KERNEL_LOG:
	case FL_EX_EH:
		v = judge_kernel(l, x, xi, kind, obs);
		break;
	case FL_EX_DEVICE_STATE:
		v = judge_device_state(l, x, xi, kind, obs);
		break;
	case FL_EX_STALL:
		v = judge_stall(l, x, xi, kind, obs);
		break;
	case FL_EX_PATH:
		v = judge_path(l, x, xi, kind, obs);
		break;
	case FL_EX_DH_STATE:
		v = judge_dh(l, x, xi, kind, obs);
		break;
	case FL_EX_TRACE:
		v = judge_trace(l, x, xi, kind, obs, events);
		break;
	default:
		break;
	}
	if (v)
		describe(x, kind, v->what, sizeof(v->what));
}

/* Reads up to three dot-separated numbers at s into v; returns how many, 0: none. */
static int version_numbers(const char *s, unsigned long v[3], const char **end)
{
	int n = 0;

	while (n < 3 && *s >= '0' && *s <= '9') {
		char *e;

		v[n++] = strtoul(s, &e, 10);
		s = e;
		if (*s != '.' || s[1] < '0' || s[1] > '9')
			break;
		s++;
	}
	*end = s;
	return n;
}

/* See fl_check.h. */
int fl_kernel_in_range(const char *spec, const char *release)
{
	unsigned long rel[3] = {0, 0, 0};
	const char *s = spec, *end;
	int in = 1;

	if (!spec || !*spec)
		return -EINVAL;
	if (!release || !version_numbers(release, rel, &end))
		release = NULL;
	for (;;) {
		unsigned long want[3] = {0, 0, 0};
		char op[3] = "=";
		int n, cmp = 0;

		while (*s == ' ')
			s++;
		if (s[0] == '>' || s[0] == '<' || s[0] == '=') {
			op[0] = s[0];
			op[1] = s[1] == '=' ? '=' : 0;
			s += op[1] ? 2 : 1;
		}
		if (!(n = version_numbers(s, want, &end)))
			return -EINVAL;
		s = end;
		while (*s == ' ')
			s++;
		if (*s && *s != ',')
			return -EINVAL;
		for (int i = 0; i < n && !cmp; i++)
			cmp = rel[i] < want[i] ? -1 : rel[i] > want[i];
		if (!strcmp(op, "=") || !strcmp(op, "=="))
			in &= cmp == 0;
		else if (!strcmp(op, ">="))
			in &= cmp >= 0;
		else if (!strcmp(op, "<="))
			in &= cmp <= 0;
		else if (!strcmp(op, ">"))
			in &= cmp > 0;
		else
			in &= cmp < 0;
		if (!*s)
			break;
		s++;
	}
	return release ? in : 0;
}

/* An entry of kind scoped to another runner, kernel or VM-lab path than obs's: its N/A verdict
 * is added to l and true returned. */
static bool scoped_out(struct vlist *l, const struct fl_expect *x, size_t xi,
		       enum fl_expect_kind kind, const struct fl_obs *obs)
{
	if (!(x->runners & obs->runner)) {
		struct fl_verdict *v = vadd(l, xi, kind, FL_VERDICT_NA);

		observed(v, "only the %s runner checks it",
			 runner_name((enum fl_runner)x->runners));
		if (v)
			describe(x, kind, v->what, sizeof(v->what));
		return true;
	}
	if (x->kernel && fl_kernel_in_range(x->kernel, obs->kernel_release) != 1) {
		struct fl_verdict *v = vadd(l, xi, kind, FL_VERDICT_NA);

		if (obs->kernel_release)
			observed(v, "scoped to kernel %s; this run is on %s", x->kernel,
				 obs->kernel_release);
		else
			observed(v,
				 "scoped to kernel %s; the %s runner runs on no "
				 "kernel",
				 x->kernel, runner_name(obs->runner));
		if (v)
			describe(x, kind, v->what, sizeof(v->what));
		return true;
	}
	/*
	 * The libiscsi runner drives the target's iSCSI front end: an
	 * entry scoped to VM-lab paths that include "iscsi" is judged there.
	 */
	unsigned path = obs->vm_path			    ? obs->vm_path
			: obs->runner == FL_RUNNER_LIBISCSI ? FL_PATH_ISCSI
							    : 0;
	if (x->vm_paths && !(x->vm_paths & path)) {
		struct fl_verdict *v = vadd(l, xi, kind, FL_VERDICT_NA);
		char want[32] = "";

		for (unsigned p = FL_PATH_ISCSI; p <= FL_PATH_LIO; p <<= 1)
			if (x->vm_paths & p)
				snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%s",
					 *want ? "," : "",
					 fl_check_path_name((enum fl_check_path)p));
		if (obs->vm_path)
			observed(v, "scoped to VM-lab path %s; this run is on %s", want,
				 fl_check_path_name((enum fl_check_path)obs->vm_path));
		else
			observed(v,
				 "scoped to VM-lab path %s; the %s runner has no "
				 "VM-lab path",
				 want, runner_name(obs->runner));
		if (v)
			describe(x, kind, v->what, sizeof(v->what));
		return true;
	}
	return false;
}

/* Judges every expectation against what a runner observed. */
int fl_check_judge(const struct fl_check *check, const struct fl_obs *obs, struct fl_verdict **out)
{
	struct vlist l = {0};
	json_t **events = NULL;

	for (size_t xi = 0; check && xi < check->nexpects; xi++) {
		const struct fl_expect *x = &check->expects[xi];

		for (unsigned bit = 1; bit <= FL_EX_LAST; bit <<= 1) {
			enum fl_expect_kind kind = (enum fl_expect_kind)bit;

			if (!(x->kinds & bit))
				continue;
			if (scoped_out(&l, x, xi, kind, obs))
				continue;
			if (x->step >= 0)
				judge_step(&l, check, x, xi, kind, obs);
			else
				judge_run(&l, x, xi, kind, obs, &events);
		}
	}
	if (events) {
		for (size_t i = 0; i < obs->ntrace; i++)
			json_decref(events[i]);
		free(events);
	}
	if (l.oom) {
		free(l.v);
		return -ENOMEM;
	}
	*out = l.v;
	return (int)l.n;
}

/* "PASS", "FAIL", "N/A". */
const char *fl_verdict_name(enum fl_verdict_kind v)
{
	return v == FL_VERDICT_PASS ? "PASS" : v == FL_VERDICT_FAIL ? "FAIL" : "N/A";
}

/* 0: none failed and one passed; 1: one failed; 77: none applied. */
int fl_verdicts_exit(const struct fl_verdict *v, size_t n)
{
	bool pass = false;

	for (size_t i = 0; i < n; i++) {
		if (v[i].v == FL_VERDICT_FAIL)
			return 1;
		pass |= v[i].v == FL_VERDICT_PASS;
	}
	return pass ? 0 : 77;
}

/* See fl_check.h. */
const char *fl_expect_kind_word(enum fl_expect_kind k)
{
	switch (k) {
	case FL_EX_ERRNO:
		return "errno";
	case FL_EX_STATUS:
		return "status";
	case FL_EX_SENSE:
		return "sense";
	case FL_EX_WITHIN:
		return "within_ms";
	case FL_EX_MIN_MS:
		return "min_ms";
	case FL_EX_RAN:
		return "ran";
	case FL_EX_KERNEL_LOG:
		return "kernel_log";
	case FL_EX_EH:
		return "eh";
	case FL_EX_DEVICE_STATE:
		return "device_state";
	case FL_EX_STALL:
		return "max_stall_ms";
	case FL_EX_TRACE:
		return "trace";
	case FL_EX_PATH:
		return "path";
	case FL_EX_DH_STATE:
		return "dh_state";
	case FL_EX_UA:
		return "ua";
	case FL_EX_TMF_RESPONSE:
		return "tmf_response";
	}
	return "expectation"; /* not a kind of this build */
}
