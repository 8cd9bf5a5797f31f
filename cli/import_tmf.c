/* SPDX-License-Identifier: MIT */
/*
 * import_tmf.c - how the captured target answered task management: each TMF
 * request is paired with its response by ITT on its connection; per function
 * the answers (RFC 7143 11.6.1) are counted and timed, and a request still
 * unanswered when its connection ended (or 2 s or more before the capture
 * did) is one never answered. The scenario's "tmf" section then answers each
 * function as the target mostly did: its response, after the median time
 * when that is 1 ms or more, or never (docs/faults/tmf.md).
 */
#include "import_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The scenario's names of the functions, by function code (NULL: none). */
static const char *const fn_names[] = {
    [ISCSI_TMF_ABORT_TASK] = "abort_task",
    [ISCSI_TMF_ABORT_TASK_SET] = "abort_task_set",
    [ISCSI_TMF_CLEAR_ACA] = "clear_aca",
    [ISCSI_TMF_CLEAR_TASK_SET] = "clear_task_set",
    [ISCSI_TMF_LUN_RESET] = "lun_reset",
    [ISCSI_TMF_TARGET_WARM_RESET] = "target_warm_reset",
    [ISCSI_TMF_TARGET_COLD_RESET] = "target_cold_reset",
    [ISCSI_TMF_TASK_REASSIGN] = NULL,
};

/* The scenario's "respond" of resp[] slot i (NULL: the format has none). */
static const char *const resp_names[9] = {
    "complete", "task_not_exist", "lun_not_exist", NULL, NULL, "not_supported", NULL, "rejected",
    NULL};

/* How the references word resp[] slot i. */
static const char *const resp_words[9] = {"Function complete",
					  "Task does not exist",
					  "LUN does not exist",
					  "Task still allegiant",
					  "Task allegiance reassignment not supported",
					  "Function not supported",
					  "Function authorization failed",
					  "Function rejected",
					  "an unknown response"};

void imp_tmf_request(struct fl_import *im, struct imp_conn *c, const uint8_t *bhs, uint64_t frame,
		     int64_t t_us)
{
	uint8_t fn = bhs[1] & ISCSI_TMF_FUNC_MASK;
	struct imp_tmf_fn *f;

	if (fn < ISCSI_TMF_ABORT_TASK || fn > ISCSI_TMF_TASK_REASSIGN || !imp_scsi_target_ok(im, c))
		return;
	f = &im->tmf[fn];
	if (!f->seen++)
		f->frame = frame;
	if (c->ntmfs == IMP_MAX_TMF_PENDING) {
		f->dropped++;
		return;
	}
	c->tmfs[c->ntmfs++] = (struct imp_tmf_req){fl_get_be32(bhs + BHS_ITT), fn,
						   imp_lun_number(bhs + BHS_LUN), frame, t_us};
}

void imp_tmf_response(struct fl_import *im, struct imp_conn *c, const uint8_t *bhs, int64_t t_us)
{
	uint32_t itt = fl_get_be32(bhs + BHS_ITT);
	uint8_t r = bhs[2];

	for (unsigned i = 0; i < c->ntmfs; i++) {
		struct imp_tmf_fn *f = &im->tmf[c->tmfs[i].fn];
		double ms;

		if (c->tmfs[i].itt != itt)
			continue;
		ms = t_us > c->tmfs[i].t_us ? (double)(t_us - c->tmfs[i].t_us) / 1000.0 : 0;
		f->answered++;
		f->resp[r <= ISCSI_TMF_RSP_AUTH_FAILED ? r : r == ISCSI_TMF_RSP_REJECTED ? 7 : 8]++;
		if (f->n < IMP_MAX_TMF_MS)
			f->ms[f->n++] = ms;
		/* a reset done: the replay does it too (LUN state: reservations, UAs) */
		if (im->o.verify && r == ISCSI_TMF_RSP_COMPLETE &&
		    c->tmfs[i].fn >= ISCSI_TMF_LUN_RESET &&
		    c->tmfs[i].fn <= ISCSI_TMF_TARGET_COLD_RESET)
			imp_verify_event(im, c, c->tmfs[i].fn, c->tmfs[i].lun);
		if (ms > f->max_ms)
			f->max_ms = ms;
		c->tmfs[i] = c->tmfs[--c->ntmfs];
		return;
	}
}

void imp_tmf_close(struct fl_import *im, struct imp_conn *c)
{
	for (unsigned i = 0; i < c->ntmfs; i++) {
		const struct imp_tmf_req *q = &c->tmfs[i];

		if (c->at_end && im->tlast_us - q->t_us < 2000000) {
			fl_import_note(im,
				       "frame %" PRIu64 ": a TMF still unanswered when the capture "
				       "ended %.3f s later: not reproduced",
				       q->frame, (double)(im->tlast_us - q->t_us) / 1e6);
			continue;
		}
		im->tmf[q->fn].never++;
	}
	c->ntmfs = 0;
}

/* Orders doubles (qsort). */
static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The behaviour of function fn as the target mostly answered it, or NULL
 * when that is faultlun's own (complete at once); *why says what was seen.
 */
static json_t *behaviour(struct fl_import *im, unsigned fn, char *why, size_t len)
{
	struct imp_tmf_fn *f = &im->tmf[fn];
	unsigned best = 0;
	double med = 0;
	size_t at;

	for (unsigned i = 1; i < 9; i++)
		if (f->resp[i] > f->resp[best])
			best = i;
	if (f->n) {
		qsort(f->ms, f->n, sizeof(f->ms[0]), by_value);
		med = f->ms[f->n / 2];
	}
	at = (size_t)snprintf(why, len,
			      "tmf %s: %" PRIu64 " request(s) from frame %" PRIu64 ": %" PRIu64
			      " answered (mostly %s, median %.3f ms, longest %.3f ms), %" PRIu64
			      " never",
			      fn_names[fn], f->seen, f->frame, f->answered,
			      f->answered ? resp_words[best] : "none", med, f->max_ms, f->never);
	if (at >= len)
		at = len - 1;
	if (f->never > f->answered) {
		snprintf(why + at, len - at, ": answered never");
		return json_pack("{s:s}", "respond", "never");
	}
	/* ABORT TASK of a task the target no longer has: faultlun answers so too */
	if (fn == ISCSI_TMF_ABORT_TASK && best == ISCSI_TMF_RSP_NO_TASK)
		best = ISCSI_TMF_RSP_COMPLETE;
	if (!resp_names[best]) {
		snprintf(why + at, len - at, ": %s has no \"respond\" in the format; no behaviour",
			 resp_words[best]);
		fl_import_note(im, "tmf %s answered %s (frame %" PRIu64 " on): no such answer",
			       fn_names[fn], resp_words[best], f->frame);
		return NULL;
	}
	if (best == ISCSI_TMF_RSP_COMPLETE && med < 1.0) {
		snprintf(why + at, len - at, ": no behaviour (faultlun's own)");
		return NULL;
	}
	json_t *o = json_pack("{s:s}", "respond", resp_names[best]);

	if (med >= 1.0)
		json_object_set_new(o, "delay_ms", json_integer((json_int_t)(med + 0.5)));
	snprintf(why + at, len - at, ": %s%s", resp_names[best],
		 med >= 1.0 ? " after the median" : "");
	return o;
}

unsigned imp_tmf_behaviours(struct fl_import *im, json_t *tmf, json_t *refs)
{
	unsigned n = 0;
	char why[400];

	for (unsigned fn = ISCSI_TMF_ABORT_TASK; fn <= ISCSI_TMF_TASK_REASSIGN; fn++) {
		json_t *b;

		if (!im->tmf[fn].seen)
			continue;
		if (!fn_names[fn]) {
			fl_import_note(im,
				       "%" PRIu64 " TASK REASSIGN request(s) from frame %" PRIu64
				       ": the format has no such function",
				       im->tmf[fn].seen, im->tmf[fn].frame);
			continue;
		}
		b = behaviour(im, fn, why, sizeof(why));
		json_array_append_new(refs, json_string(why));
		if (im->tmf[fn].dropped)
			fl_import_note(im,
				       "tmf %s: %" PRIu64 " request(s) past %u outstanding "
				       "on a connection were not followed",
				       fn_names[fn], im->tmf[fn].dropped, IMP_MAX_TMF_PENDING);
		if (b) {
			json_object_set_new(tmf, fn_names[fn], b);
			n++;
		}
	}
	return n;
}
