/* SPDX-License-Identifier: MIT */
/*
 * report_text.c - renders a VM-lab result (result.json, written by
 * vm_check.c) as text: the merged timeline, the summary header of the
 * HTML page (rp_summary: the same rows from the same model), a verdict per
 * expectation with what was observed, the wall-time split. The HTML page is
 * report_html.c's.
 */
#include "fl_report.h"
#include "report_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* See report_internal.h. */
json_t *vm_report_load(const char *path)
{
	struct fl_result res;
	char err[512];

	if (fl_result_read(path, &res, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return NULL;
	}
	json_t *r = json_incref(res.doc);
	fl_result_free(&res);
	return r;
}

/* See report_internal.h. */
const char *vm_report_verdict(json_t *v)
{
	const char *w = json_string_value(json_object_get(v, "verdict"));

	if (w)
		return !strcmp(w, "pass") ? "PASS" : !strcmp(w, "fail") ? "FAIL" : "N/A";
	if (json_is_true(json_object_get(v, "not_applicable")))
		return "N/A";
	return json_is_true(json_object_get(v, "ok")) ? "PASS" : "FAIL";
}

/* The string value of key in o, or "?" when absent or not a string (never NULL). */
static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "?";
}

/* Time origin of the timeline: the workload's first step, else the first event. */
static double origin(json_t *r)
{
	json_t *s0 = json_array_get(json_object_get(r, "steps"), 0);
	if (s0)
		return rp_num(s0, "t0", 0);
	json_t *e0 = json_array_get(json_object_get(r, "timeline"), 0);
	return e0 ? rp_num(e0, "t", 0) : 0;
}

/* See fl_vm.h. */
int fl_vm_report_text(const char *result_json, FILE *out, bool timeline)
{
	json_t *r = vm_report_load(result_json);
	if (!r)
		return FL_VM_ERROR;
	const char *v = json_string_value(json_object_get(r, "verdict"));
	size_t i;
	json_t *o;
	double t0 = origin(r);
	if (timeline) {
		fprintf(out, "timeline (seconds from the first workload step; guest clock):\n");
		bool agent_seen = false;
		json_array_foreach(json_object_get(r, "timeline"), i, o)
		{
			const char *src = str(o, "src");
			double t = json_number_value(json_object_get(o, "t"));
			/* Boot noise before the agent's first marker is left to console.log. */
			agent_seen |= !strcmp(src, "agent");
			if (!agent_seen)
				continue;
			fprintf(out, "  %+9.3f  %-8s %s\n", t - t0, src, str(o, "text"));
		}
		fprintf(out, "\n");
	}
	fprintf(out, "%s on path %s (kernel %s, %s)\n", str(r, "name"), str(r, "path"),
		str(json_object_get(r, "guest_info"), "kernel"), str(r, "accel"));
	/* The page's summary header, from the same model. */
	struct rp_model *m = rp_model_new(r);
	if (m) {
		struct rp_sum_row rows[RP_SUM_ROWS];
		size_t n = rp_summary(m, rows);
		fprintf(out, "summary:\n");
		for (size_t k = 0; k < n; k++) {
			fprintf(out, "  %s: %s", rows[k].label, rows[k].text);
			if (*rows[k].note)
				fprintf(out, " (%s)", rows[k].note);
			fprintf(out, "\n");
			for (int j = 0; j < rows[k].nsub; j++)
				fprintf(out, "    %s: %s\n", rows[k].sub[j].label,
					rows[k].sub[j].text);
		}
		rp_model_free(m);
	}
	json_t *eh = json_object_get(r, "eh_sequence");
	if (json_array_size(eh)) {
		fprintf(out, "  error handler: ");
		json_array_foreach(eh, i, o)
		    fprintf(out, "%s%s", i ? " -> " : "", json_string_value(o) ?: "?");
		fprintf(out, "\n");
	}
	json_array_foreach(json_object_get(r, "steps"), i, o)
	    fprintf(out, "  step %lld %-10s %-9s %8.0f ms\n",
		    (long long)json_integer_value(json_object_get(o, "step")), str(o, "op"),
		    str(o, "errno"), json_number_value(json_object_get(o, "elapsed_ms")));
	json_array_foreach(json_object_get(r, "expectations"), i, o)
	{
		const char *word = vm_report_verdict(o);
		fprintf(out, "  %-4s  %s\n", word, str(o, "what"));
		if (!strcmp(word, "FAIL"))
			fprintf(out, "        expected: %s\n        observed: %s\n", str(o, "what"),
				str(o, "observed"));
		else
			fprintf(out, "        observed: %s\n", str(o, "observed"));
	}
	json_t *w = json_object_get(r, "wall"), *ph = json_object_get(w, "guest_phases");
	double up = json_number_value(json_object_get(ph, "agent_up"));
	double ws = json_number_value(json_object_get(ph, "workload_start"));
	double we = json_number_value(json_object_get(ph, "workload_end"));
	double fin = json_number_value(json_object_get(ph, "finish"));
	double qemu = json_number_value(json_object_get(w, "qemu_s"));
	fprintf(out,
		"  wall %.1f s: guest assembly %.1f s, qemu %.1f s (outside the kernel's clock: "
		"firmware, decompression, power-off %.1f s; kernel+initramfs to agent %.1f s, "
		"setup %.1f s, workload %.1f s)\n",
		json_number_value(json_object_get(w, "total_s")),
		json_number_value(json_object_get(w, "guest_assembly_s")), qemu,
		fin > 0 ? qemu - fin : 0.0, up, ws > 0 ? ws - up : 0.0, we > 0 ? we - ws : 0.0);
	if (json_object_get(r, "error"))
		fprintf(out, "  ERROR: %s (run directory %s)\n", str(r, "error"),
			str(r, "run_dir"));
	fprintf(out, "verdict: %s\n", v ? v : "?");
	int rc = !v		      ? FL_VM_ERROR
		 : !strcmp(v, "PASS") ? FL_VM_PASS
		 : !strcmp(v, "FAIL") ? FL_VM_FAIL
		 : !strcmp(v, "N/A")  ? FL_VM_SKIP
				      : FL_VM_ERROR;
	json_decref(r);
	return rc;
}
