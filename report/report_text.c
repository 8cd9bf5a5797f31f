/* SPDX-License-Identifier: MIT */
/*
 * report_text.c - renders a VM-lab result (result.json, written by
 * vm_check.c, read through fl_result.h) as text: the merged timeline, the summary header of the
 * HTML page (rp_summary: the same rows from the same model), a verdict per
 * expectation with what was observed, the wall-time split. The HTML page is
 * report_html.c's.
 */
#include "fl_report.h"
#include "report_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* s, or "?" when absent (never NULL). */
static const char *str(const char *s)
{
	return s ? s : "?";
}

/* A guest phase's time, 0 when its marker was not seen. */
static double phase(double t)
{
	return t < 0 ? 0 : t;
}

/* See report_internal.h. */
int rp_verdict_code(const char *verdict)
{
	const char *v = verdict ? verdict : "";

	return !strcmp(v, "PASS")   ? FL_VM_PASS
	       : !strcmp(v, "FAIL") ? FL_VM_FAIL
	       : !strcmp(v, "N/A")  ? FL_VM_SKIP
				    : FL_VM_ERROR;
}

/* The timeline, in seconds from t0, from the agent's first marker on. */
static void text_timeline(FILE *out, const struct fl_result *res, double t0)
{
	bool agent_seen = false;

	fprintf(out, "timeline (seconds from the first workload step; guest clock):\n");
	for (size_t i = 0; i < res->ntimeline; i++) {
		const struct fl_result_event *o = &res->timeline[i];
		/* Boot noise before the agent's first marker is left to console.log. */
		agent_seen |= !strcmp(o->src, "agent");
		if (!agent_seen)
			continue;
		fprintf(out, "  %+9.3f  %-8s %s\n", o->t - t0, o->src, o->text);
	}
	fprintf(out, "\n");
}

/* The summary rows of the page's header, from the model. */
static void text_summary(FILE *out, struct rp_model *m)
{
	struct rp_sum_row rows[RP_SUM_ROWS];
	size_t n = rp_summary(m, rows);

	fprintf(out, "summary:\n");
	for (size_t k = 0; k < n; k++) {
		fprintf(out, "  %s: %s", rows[k].label, rows[k].text);
		if (*rows[k].note)
			fprintf(out, " (%s)", rows[k].note);
		fprintf(out, "\n");
		for (int j = 0; j < rows[k].nsub; j++)
			fprintf(out, "    %s: %s\n", rows[k].sub[j].label, rows[k].sub[j].text);
	}
}

/* See fl_report.h. */
int fl_vm_report_text(const char *result_json, FILE *out, bool timeline)
{
	struct fl_result res;
	char err[512];

	if (fl_result_read(result_json, &res, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return FL_VM_ERROR;
	}
	/* Time origin of the timeline: the workload's first step, else the first event. */
	double t0 = res.nsteps ? res.steps[0].t0 : res.ntimeline ? res.timeline[0].t : 0;
	size_t i;

	if (timeline)
		text_timeline(out, &res, t0);
	fprintf(out, "%s on path %s (kernel %s, %s)\n", str(res.name), str(res.path),
		str(res.kernel), str(res.accel));
	/* The page's summary header, from the same model (which takes the result over). */
	struct rp_model *m = rp_model_new(&res);
	const struct fl_result *r = m ? &m->res : &res;
	if (m)
		text_summary(out, m);
	if (r->neh_sequence) {
		fprintf(out, "  error handler: ");
		for (i = 0; i < r->neh_sequence; i++)
			fprintf(out, "%s%s", i ? " -> " : "", str(r->eh_sequence[i]));
		fprintf(out, "\n");
	}
	for (i = 0; i < r->nsteps; i++)
		fprintf(out, "  step %lld %-10s %-9s %8.0f ms\n", r->steps[i].step,
			str(r->steps[i].op), str(r->steps[i].errno_name), r->steps[i].elapsed_ms);
	for (i = 0; i < r->nexpectations; i++) {
		const struct fl_result_expect *o = &r->expectations[i];
		const char *word = fl_result_verdict_word(o->verdict);
		fprintf(out, "  %-4s  %s\n", word, str(o->what));
		if (o->verdict == FL_RESULT_FAIL)
			fprintf(out, "        expected: %s\n        observed: %s\n", str(o->what),
				str(o->observed));
		else
			fprintf(out, "        observed: %s\n", str(o->observed));
	}
	const struct fl_result_wall *w = &r->wall;
	double up = phase(w->agent_up), ws = phase(w->workload_start);
	double we = phase(w->workload_end), fin = phase(w->finish);
	fprintf(out,
		"  wall %.1f s: guest assembly %.1f s, qemu %.1f s (outside the kernel's clock: "
		"firmware, decompression, power-off %.1f s; kernel+initramfs to agent %.1f s, "
		"setup %.1f s, workload %.1f s)\n",
		w->total_s, w->guest_assembly_s, w->qemu_s, fin > 0 ? w->qemu_s - fin : 0.0, up,
		ws > 0 ? ws - up : 0.0, we > 0 ? we - ws : 0.0);
	if (r->error)
		fprintf(out, "  ERROR: %s (run directory %s)\n", r->error, str(r->run_dir));
	const char *v = r->verdict;
	fprintf(out, "verdict: %s\n", v ? v : "?");
	int rc = rp_verdict_code(v);
	if (m)
		rp_model_free(m);
	else
		fl_result_free(&res);
	return rc;
}
