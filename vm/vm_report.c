/* SPDX-License-Identifier: MIT */
/*
 * vm_report.c - renders a VM-lab result (result.json, written by
 * vm_check.c): as text (a verdict per expectation with what was observed,
 * the wall-time split, then the merged timeline) and as a self-contained
 * HTML page that draws the timeline as lanes (workload steps as bars; kernel
 * log, error-handler steps, target trace, uevents, sysfs changes and healthy-
 * LUN stalls as marks) above the verdict table and the full event list.
 */
#include "fl_vm.h"
#include "vm_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Loads a result file, printing why it cannot be read. */
static json_t *load_result(const char *path)
{
	json_error_t err;
	json_t *r = json_load_file(path, 0, &err);
	if (!r)
		fprintf(stderr, "%s:%d:%d: %s\n", path, err.line, err.column, err.text);
	else if (!json_object_get(r, "faultlun_vm_result")) {
		fprintf(stderr, "%s: not a faultlun vm result\n", path);
		json_decref(r);
		r = NULL;
	}
	return r;
}

/*
 * PASS, FAIL or N/A of one verdict of result.json ("verdict": pass, fail,
 * not_applicable; results written before that key have only "ok").
 */
static const char *verdict_word(json_t *v)
{
	const char *w = json_string_value(json_object_get(v, "verdict"));

	if (w)
		return !strcmp(w, "pass") ? "PASS" : !strcmp(w, "fail") ? "FAIL" : "N/A";
	if (json_is_true(json_object_get(v, "not_applicable")))
		return "N/A";
	return json_is_true(json_object_get(v, "ok")) ? "PASS" : "FAIL";
}

/* Time origin of the timeline: the workload's first step, else the first event. */
static double origin(json_t *r)
{
	json_t *s0 = json_array_get(json_object_get(r, "steps"), 0);
	if (s0)
		return json_number_value(json_object_get(s0, "t0"));
	json_t *e0 = json_array_get(json_object_get(r, "timeline"), 0);
	return e0 ? json_number_value(json_object_get(e0, "t")) : 0;
}

/* See fl_vm.h. */
int fl_vm_report_text(const char *result_json, FILE *out, bool timeline)
{
	json_t *r = load_result(result_json);
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
			const char *src = json_string_value(json_object_get(o, "src"));
			double t = json_number_value(json_object_get(o, "t"));
			/* Boot noise before the agent's first marker is left to console.log. */
			agent_seen |= !strcmp(src, "agent");
			if (!agent_seen)
				continue;
			fprintf(out, "  %+9.3f  %-8s %s\n", t - t0, src,
				json_string_value(json_object_get(o, "text")));
		}
		fprintf(out, "\n");
	}
	fprintf(
	    out, "%s on path %s (kernel %s, %s)\n", json_string_value(json_object_get(r, "name")),
	    json_string_value(json_object_get(r, "path")),
	    json_string_value(json_object_get(json_object_get(r, "guest_info"), "kernel")) ?: "?",
	    json_string_value(json_object_get(r, "accel")));
	json_t *eh = json_object_get(r, "eh_sequence");
	if (json_array_size(eh)) {
		fprintf(out, "  error handler: ");
		json_array_foreach(eh, i, o)
		    fprintf(out, "%s%s", i ? " -> " : "", json_string_value(o));
		fprintf(out, "\n");
	}
	json_array_foreach(json_object_get(r, "steps"), i, o)
	    fprintf(out, "  step %lld %-10s %-9s %8.0f ms\n",
		    (long long)json_integer_value(json_object_get(o, "step")),
		    json_string_value(json_object_get(o, "op")),
		    json_string_value(json_object_get(o, "errno")),
		    json_number_value(json_object_get(o, "elapsed_ms")));
	json_array_foreach(json_object_get(r, "expectations"), i, o)
	{
		const char *word = verdict_word(o);
		fprintf(out, "  %-4s  %s\n", word, json_string_value(json_object_get(o, "what")));
		if (!strcmp(word, "FAIL"))
			fprintf(out, "        expected: %s\n        observed: %s\n",
				json_string_value(json_object_get(o, "what")),
				json_string_value(json_object_get(o, "observed")));
		else
			fprintf(out, "        observed: %s\n",
				json_string_value(json_object_get(o, "observed")));
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
		fprintf(out, "  ERROR: %s (run directory %s)\n",
			json_string_value(json_object_get(r, "error")),
			json_string_value(json_object_get(r, "run_dir")));
	fprintf(out, "verdict: %s\n", v ? v : "?");
	int rc = !v		      ? FL_VM_ERROR
		 : !strcmp(v, "PASS") ? FL_VM_PASS
		 : !strcmp(v, "FAIL") ? FL_VM_FAIL
		 : !strcmp(v, "N/A")  ? FL_VM_SKIP
				      : FL_VM_ERROR;
	json_decref(r);
	return rc;
}

/* Writes s HTML-escaped. */
static void html_esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

/* Lane of a timeline event in the drawing. */
static int lane_of(const char *src, const char *text)
{
	if (!strcmp(src, "workload"))
		return 0;
	if (!strcmp(src, "kernel"))
		return strstr(text, "ABORT") || strstr(text, "abort") || strstr(text, "reset") ||
			       strstr(text, "RESET") || strstr(text, "conn error") ||
			       strstr(text, "offline") || strstr(text, "recovery")
			   ? 1
			   : 2;
	if (!strcmp(src, "target"))
		return 3;
	if (!strcmp(src, "uevent"))
		return 4;
	if (!strcmp(src, "sysfs"))
		return 5;
	if (!strcmp(src, "healthy"))
		return 6;
	return 7;
}

/* See fl_vm.h. */
int fl_vm_report_html(const char *result_json, const char *html_path)
{
	static const char *const lanes[] = {"workload", "kernel EH", "kernel log",  "target trace",
					    "uevents",	"sysfs",     "healthy LUN", "agent"};
	static const char *const colors[] = {"#3b7dd8", "#d8453b", "#888",    "#8a3bd8",
					     "#2a9d5c", "#d89a3b", "#c0392b", "#555"};
	json_t *r = load_result(result_json);
	if (!r)
		return -EINVAL;
	FILE *f = fopen(html_path, "w");
	if (!f) {
		int e = errno;
		json_decref(r);
		return -e;
	}
	double t0 = origin(r), tmax = 1;
	size_t i;
	json_t *o, *tl = json_object_get(r, "timeline");
	json_array_foreach(tl, i, o)
	{
		double t = json_number_value(json_object_get(o, "t")) - t0;
		if (t > tmax)
			tmax = t;
	}
	/* A little context before the first step, in proportion to the run. */
	double tmin = -(0.2 + 0.05 * tmax);
	if (tmin < -2)
		tmin = -2;
	const int W = 1100, left = 110, laneh = 28;
	double scale = (W - left - 20) / (tmax - tmin);
	const char *v = json_string_value(json_object_get(r, "verdict"));
	fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>faultlun vm: ");
	html_esc(f, json_string_value(json_object_get(r, "name")));
	fprintf(f, "</title><style>body{font-family:sans-serif;margin:20px}"
		   "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px;"
		   "font-size:13px;text-align:left;vertical-align:top}.PASS{color:#1a7f37}"
		   ".FAIL,.ERROR{color:#c0392b}pre{font-size:12px}</style></head><body>\n");
	fprintf(f, "<h1>");
	html_esc(f, json_string_value(json_object_get(r, "name")));
	fprintf(f, " <span class=\"%s\">%s</span></h1>\n<p>path ", v ? v : "ERROR", v ? v : "?");
	html_esc(f, json_string_value(json_object_get(r, "path")));
	fprintf(f, ", kernel ");
	html_esc(f, json_string_value(json_object_get(json_object_get(r, "guest_info"), "kernel")));
	fprintf(f, ", accelerator ");
	html_esc(f, json_string_value(json_object_get(r, "accel")));
	fprintf(f, "; wall %.1f s</p>\n",
		json_number_value(json_object_get(json_object_get(r, "wall"), "total_s")));
	if (json_object_get(r, "error")) {
		fprintf(f, "<p class=\"ERROR\">");
		html_esc(f, json_string_value(json_object_get(r, "error")));
		fprintf(f, "</p>\n");
	}
	int H = 30 + 8 * laneh;
	fprintf(f,
		"<svg width=\"%d\" height=\"%d\" xmlns=\"http://www.w3.org/2000/svg\" "
		"font-size=\"11\">\n",
		W, H + 20);
	for (int l = 0; l < 8; l++) {
		fprintf(f,
			"<text x=\"4\" y=\"%d\">%s</text><line x1=\"%d\" x2=\"%d\" y1=\"%d\" "
			"y2=\"%d\" stroke=\"#eee\"/>\n",
			30 + l * laneh + 14, lanes[l], left, W - 10, 30 + l * laneh + 20,
			30 + l * laneh + 20);
	}
	for (double t = 0; t <= tmax; t += tmax > 120 ? 20 : tmax > 30 ? 5 : 1) {
		int x = left + (int)((t - tmin) * scale);
		fprintf(f,
			"<line x1=\"%d\" x2=\"%d\" y1=\"20\" y2=\"%d\" stroke=\"#ddd\"/>"
			"<text x=\"%d\" y=\"14\">%.0fs</text>\n",
			x, x, H, x - 6, t);
	}
	json_array_foreach(json_object_get(r, "steps"), i, o)
	{
		double a = json_number_value(json_object_get(o, "t0")) - t0;
		double b = json_number_value(json_object_get(o, "t1")) - t0;
		int x = left + (int)((a - tmin) * scale), w = (int)((b - a) * scale);
		fprintf(f,
			"<rect x=\"%d\" y=\"34\" width=\"%d\" height=\"16\" fill=\"%s\" "
			"opacity=\"0.6\"><title>step %lld %s: ",
			x, w < 2 ? 2 : w,
			strcmp(json_string_value(json_object_get(o, "errno")) ?: "", "OK")
			    ? "#d8453b"
			    : "#3b7dd8",
			(long long)json_integer_value(json_object_get(o, "step")),
			json_string_value(json_object_get(o, "op")));
		html_esc(f, json_string_value(json_object_get(o, "errno")));
		fprintf(f,
			" after %.0f ms</title></rect><text x=\"%d\" y=\"46\" "
			"fill=\"#fff\">%lld</text>\n",
			json_number_value(json_object_get(o, "elapsed_ms")), x + 2,
			(long long)json_integer_value(json_object_get(o, "step")));
	}
	json_array_foreach(tl, i, o)
	{
		const char *src = json_string_value(json_object_get(o, "src"));
		const char *text = json_string_value(json_object_get(o, "text"));
		double t = json_number_value(json_object_get(o, "t")) - t0;
		int l = lane_of(src, text);
		if (l == 0 || t < tmin)
			continue;
		int x = left + (int)((t - tmin) * scale);
		/* Events with a duration (healthy-LUN stalls) are bars, the rest marks. */
		int w = (int)(json_number_value(json_object_get(o, "dur")) * scale);
		fprintf(
		    f,
		    "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"16\" fill=\"%s\"><title>%+.3f ",
		    x, 34 + l * laneh, w > 3 ? w : 3, colors[l], t);
		html_esc(f, text);
		fprintf(f, "</title></rect>\n");
	}
	fprintf(f, "</svg>\n<h2>Expectations</h2>\n<table><tr><th>verdict</th><th>expected</th>"
		   "<th>observed</th></tr>\n");
	json_array_foreach(json_object_get(r, "expectations"), i, o)
	{
		const char *word = verdict_word(o);
		fprintf(f, "<tr><td class=\"%s\">%s</td><td>", word, word);
		html_esc(f, json_string_value(json_object_get(o, "what")));
		fprintf(f, "</td><td>");
		html_esc(f, json_string_value(json_object_get(o, "observed")));
		fprintf(f, "</td></tr>\n");
	}
	fprintf(f, "</table>\n<h2>Timeline</h2>\n<table><tr><th>t (s)</th><th>source</th>"
		   "<th>event</th></tr>\n");
	json_array_foreach(tl, i, o)
	{
		double t = json_number_value(json_object_get(o, "t")) - t0;
		if (t < tmin)
			continue;
		fprintf(f, "<tr><td>%+.3f</td><td>", t);
		html_esc(f, json_string_value(json_object_get(o, "src")));
		fprintf(f, "</td><td>");
		html_esc(f, json_string_value(json_object_get(o, "text")));
		fprintf(f, "</td></tr>\n");
	}
	fprintf(f, "</table>\n</body></html>\n");
	fclose(f);
	json_decref(r);
	return 0;
}
