/* SPDX-License-Identifier: MIT */
/*
 * report_html.c - the VM lab's HTML report: one self-contained page (inline
 * CSS, SVG and a few lines of inline JavaScript; nothing fetched) that shows
 * the kernel's recovery at a glance: a summary header, the error handler's
 * escalation ladder under the workload's steps, the sequence chart of one
 * cycle, device / session state bands over the healthy LUN's latency, the
 * verdicts (a failing one links to its step on the chart) and the raw
 * timeline with the noise (module loads, other uevents, boot) hidden behind
 * a checkbox. trace.json, written beside the page, is the same run for
 * Perfetto or chrome://tracing (report_trace.c).
 */
#include "fl_report.h"
#include "report_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_W 1300

static const char css[] =
    "body{font-family:sans-serif;margin:20px;color:#222;max-width:1320px}"
    "h2{margin:28px 0 6px;font-size:18px}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px;"
    "font-size:13px;text-align:left;vertical-align:top}"
    ".PASS{color:#1a7f37}.FAIL,.ERROR{color:#c0392b}.NA{color:#777}"
    ".badge{padding:2px 10px;border-radius:4px;color:#fff}"
    ".badge.PASS{background:#1a7f37}.badge.FAIL,.badge.ERROR{background:#c0392b}"
    ".badge.NA{background:#777}"
    "table.summary th{background:#f2f4f7;width:260px}table.summary td{font-size:14px}"
    ".legend span{display:inline-block;margin-right:16px;font-size:13px}"
    ".legend i{display:inline-block;width:14px;height:10px;margin-right:4px;"
    "vertical-align:middle}"
    "tr.noise{display:none}body.shownoise tr.noise{display:table-row}"
    ".note{color:#555;font-size:13px}";

/* Tick spacing for a window of span seconds. */
static double tick_step(double span)
{
	static const double steps[] = {0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300};
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (span / steps[i] <= 16)
			return steps[i];
	return 600;
}

/* x of t on the page-wide charts (the ladder's frame at x = 0). */
static double page_x(const struct rp_model *m, double t)
{
	return 170 + (t - m->tmin) * (PAGE_W - 180) / (m->tmax - m->tmin);
}

/* A summary row's text, its bold part marked up. */
static void sum_text(FILE *f, const struct rp_sum_row *row)
{
	for (size_t i = 0; row->text[i]; i++) {
		char c[2] = {row->text[i], 0};
		if (row->em_len && i == row->em_at && row->em_class)
			fprintf(f, "<b class=\"%s\">", row->em_class);
		else if (row->em_len && i == row->em_at)
			fprintf(f, "<b>");
		rp_esc(f, c);
		if (row->em_len && i + 1 == row->em_at + row->em_len)
			fprintf(f, "</b>");
	}
}

/* The summary header (rp_summary's rows but the verdict, which heads the page). */
static void summary(FILE *f, const struct rp_sum_row *rows, size_t n)
{
	fprintf(f, "<table class=\"summary\" id=\"summary\">\n");
	for (size_t i = 1; i < n; i++) {
		const struct rp_sum_row *row = &rows[i];
		fprintf(f, "<tr><th>");
		rp_esc(f, row->label);
		fprintf(f, "</th><td id=\"%s\">", row->id);
		sum_text(f, row);
		if (*row->note) {
			fprintf(f, " <span class=\"note\">(");
			rp_esc(f, row->note);
			fprintf(f, ")</span>");
		}
		for (int k = 0; k < row->nsub; k++) {
			fprintf(f, "<br><b>");
			rp_esc(f, row->sub[k].label);
			fprintf(f, "</b>: ");
			rp_esc(f, row->sub[k].text);
		}
		fprintf(f, "</td></tr>\n");
	}
	fprintf(f, "</table>\n");
}

/*
 * What the target's rules did, on the chart's time axis: one bar per burst of
 * one rule (injections less than a second apart), labelled with the rule,
 * the action and how many commands it met.
 */
static void faults_row(FILE *f, const struct rp_model *m, int y)
{
	const struct fl_result_trace *tr = m->res.trace;
	size_t n = m->res.ntrace;
	bool *done = calloc(n ? n : 1, sizeof(*done));
	double last_end[2] = {-1e9, -1e9};

	fprintf(f, "<text x=\"4\" y=\"%d\" font-weight=\"bold\">target: faults</text>\n", y + 22);
	for (size_t i = 0; done && i < n; i++) {
		const struct fl_result_trace *e = &tr[i];
		const char *ev = e->event;
		const char *rule = e->rule;
		if (done[i] || !ev || strcmp(ev, "inject") || !rule)
			continue;
		double a = e->t - m->origin, b = a;
		int cnt = 0;
		for (size_t k = i; k < n; k++) {
			const char *r2 = tr[k].rule;
			double t = tr[k].t - m->origin;
			if (done[k] || !r2 || strcmp(r2, rule))
				continue;
			if (t - b > 1.0)
				break;
			done[k] = true;
			b = t;
			cnt++;
		}
		const char *act = e->action ?: "?";
		char label[160];
		/* the action's own trace fields say which it is (scenario/actions/) */
		if (e->status)
			snprintf(label, sizeof(label), "%s: status %s x%d", rule, e->status, cnt);
		else if (e->hold)
			snprintf(label, sizeof(label), "%s: held %s", rule, e->op ?: "");
		else
			snprintf(label, sizeof(label), "%s: %s%s%s x%d", rule, act,
				 e->has_op ? " " : "", e->op ?: "", cnt);
		if (!strcmp(label + strlen(label) - 3, " x1"))
			label[strlen(label) - 3] = 0;
		double x0 = page_x(m, a), x1 = page_x(m, b);
		fprintf(f, "<g class=\"fault\" data-rule=\"");
		rp_esc(f, rule);
		fprintf(f, "\" data-count=\"%d\"><title>%+.2f .. %+.2f s: ", cnt, a, b);
		rp_esc(f, label);
		fprintf(f,
			"</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"10\" "
			"fill=\"#8a3bd8\" opacity=\"0.75\"/>",
			x0, y + 24, x1 - x0 < 3 ? 3 : x1 - x0);
		double lw = strlen(label) * 5.6;
		int line = x0 >= last_end[0] ? 0 : x0 >= last_end[1] ? 1 : -1;
		if (line >= 0 && x0 + lw < PAGE_W) {
			fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" fill=\"#5b1f9a\">",
				x0, y + (line ? 10 : 20));
			rp_esc(f, label);
			fprintf(f, "</text>");
			last_end[line] = x0 + lw + 6;
		}
		fprintf(f, "</g>\n");
	}
	free(done);
}

/* The escalation chart: time axis, the workload's steps, the target's faults, the ladder. */
static void ladder_chart(FILE *f, const struct rp_model *m)
{
	const int top = 22, steps_h = 88;
	int h = top + steps_h + RP_NLEVELS * 40 + 22;
	fprintf(
	    f,
	    "<div class=\"legend\">"
	    "<span><i style=\"background:%s\"></i>completed</span>"
	    "<span><i style=\"background:%s\"></i>failed (an answer or a dead connection)</span>"
	    "<span><i style=\"background:%s\"></i>timed out (the named timer fired)</span>"
	    "<span><i style=\"border:1px dashed #9aa0a6\"></i>not sent</span>"
	    "<span><i style=\"background:#ccc;border:1px dashed #333\"></i>seen only in the "
	    "target's trace</span><span>&#9670; connection error / retry</span></div>\n",
	    rp_outcome_colors[RP_COMPLETED], rp_outcome_colors[RP_FAILED],
	    rp_outcome_colors[RP_TIMED_OUT]);
	fprintf(
	    f,
	    "<svg id=\"ladder-chart\" width=\"%d\" height=\"%d\" "
	    "xmlns=\"http://www.w3.org/2000/svg\" font-size=\"11\" font-family=\"sans-serif\">\n",
	    PAGE_W, h);
	double step = tick_step(m->tmax - m->tmin);
	/* at most RP_MAX_TICKS ticks, whatever the window (see rp_svg_axis) */
	if ((m->tmax - m->tmin) / step > RP_MAX_TICKS)
		step = (m->tmax - m->tmin) / RP_MAX_TICKS;
	for (int k = 0; k <= RP_MAX_TICKS && k * step <= m->tmax; k++) {
		double t = k * step, x = page_x(m, t);
		fprintf(
		    f,
		    "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#e6e6e6\"/>"
		    "<text x=\"%.1f\" y=\"14\" text-anchor=\"middle\" fill=\"#555\">%gs</text>\n",
		    x, x, top - 4, h, x, t);
	}
	fprintf(f, "<text x=\"4\" y=\"%d\" font-weight=\"bold\">application</text>\n", top + 26);
	double last_end[2] = {-1e9, -1e9};
	for (size_t i = 0; i < m->res.nsteps; i++) {
		const struct fl_result_step *o = &m->res.steps[i];
		long long n = o->step;
		double a = o->t0 - m->origin;
		double b = o->t1 - m->origin;
		const char *e = o->errno_name ?: "?";
		double x0 = page_x(m, a), x1 = page_x(m, b);
		char label[96];
		snprintf(label, sizeof(label), "step %lld %s \xe2\x86\x92 %s, %.1f s", n,
			 o->op ?: "?", e, o->elapsed_ms / 1000);
		fprintf(f, "<g id=\"step-%lld\" class=\"step\" data-errno=\"%s\"><title>", n, e);
		rp_esc(f, label);
		fprintf(
		    f,
		    "</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"14\" fill=\"%s\" "
		    "opacity=\"0.8\"/>",
		    x0, top + 26, x1 - x0 < 3 ? 3 : x1 - x0,
		    strcmp(e, "OK") ? "#d03b2f" : "#3b7dd8");
		/* The label goes inside a bar long enough, else above it where there is room. */
		double lw = strlen(label) * 5.6;
		int line = x1 - x0 >= lw + 6   ? 2
			   : x0 >= last_end[0] ? 0
			   : x0 >= last_end[1] ? 1
					       : -1;
		if (line < 2 && x0 + lw > PAGE_W - 10)
			line = -1;
		if (line >= 0) {
			if (line < 2)
				last_end[line] = x0 + lw + 6;
			fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\"%s>",
				x0 + (line == 2 ? 3 : 0),
				top + (line == 2 ? 37
				       : line	 ? 12
						 : 23),
				line == 2 ? " fill=\"#fff\"" : "");
			rp_esc(f, label);
			fprintf(f, "</text>");
		}
		fprintf(f, "</g>\n");
	}
	faults_row(f, m, top + 48);
	vm_report_ladder_svg(f, m, "ladder", 0, top + steps_h, PAGE_W, m->tmin, m->tmax);
	fprintf(f, "</svg>\n");
}

/* True for timeline rows hidden by default: boot, module loads, other uevents. */
static bool noise(const char *src, const char *text, double t, double ws)
{
	if (!strcmp(src, "uevent"))
		return !strstr(text, "SDEV_") && !strstr(text, "RESIZE") &&
		       !strstr(text, "DISK_RO");
	return t < ws && strcmp(src, "agent");
}

/* The verdicts and the raw timeline. */
static void tables(FILE *f, const struct rp_model *m)
{
	size_t i;
	fprintf(f, "<h2>Expectations</h2>\n<table id=\"expectations\"><tr><th>verdict</th>"
		   "<th>expected</th><th>observed</th><th>on the chart</th></tr>\n");
	for (i = 0; i < m->res.nexpectations; i++) {
		const struct fl_result_expect *o = &m->res.expectations[i];
		const char *word = fl_result_verdict_word(o->verdict);
		fprintf(f, "<tr class=\"exp-%s\"><td class=\"%s\">%s</td><td>",
			!strcmp(word, "N/A") ? "na" : word, !strcmp(word, "N/A") ? "NA" : word,
			word);
		rp_esc(f, o->what ?: "(not recorded)");
		fprintf(f, "</td><td>");
		rp_esc(f, o->observed);
		fprintf(f, "</td><td>");
		if (o->has_step)
			fprintf(f, "<a href=\"#step-%lld\">step %lld</a>", o->step, o->step);
		else if (!strcmp(word, "FAIL"))
			fprintf(f, "<a href=\"#ladder-chart\">ladder</a>");
		fprintf(f, "</td></tr>\n");
	}
	double ws = m->res.wall.workload_start < 0 ? 0 : m->res.wall.workload_start;
	const struct fl_result_event *tl = m->res.timeline;
	int hidden = 0;
	for (i = 0; i < m->res.ntimeline; i++)
		hidden += noise(tl[i].src, tl[i].text, tl[i].t, ws);
	fprintf(f,
		"</table>\n<h2>Timeline</h2>\n<p><label><input type=\"checkbox\" id=\"shownoise\" "
		"onchange=\"document.body.classList.toggle('shownoise', this.checked)\"> show "
		"the %d rows of boot, module loads and other uevents</label></p>\n"
		"<table id=\"timeline\"><tr><th>t (s)</th><th>source</th><th>event</th></tr>\n",
		hidden);
	for (i = 0; i < m->res.ntimeline; i++) {
		const char *src = tl[i].src, *text = tl[i].text;
		double t = tl[i].t;
		fprintf(f, "<tr%s><td>%+.3f</td><td>",
			noise(src, text, t, ws) ? " class=\"noise\"" : "", t - m->origin);
		rp_esc(f, src);
		fprintf(f, "</td><td>");
		rp_esc(f, text);
		fprintf(f, "</td></tr>\n");
	}
	fprintf(f, "</table>\n");
}

/* trace.json beside the page. */
static void trace_path(const char *html_path, char *buf, size_t len)
{
	const char *slash = strrchr(html_path, '/');
	if (slash)
		snprintf(buf, len, "%.*s/trace.json", (int)(slash - html_path), html_path);
	else
		snprintf(buf, len, "trace.json");
}

/* See fl_vm.h. */
int fl_vm_report_html(const char *result_json, const char *html_path)
{
	struct rp_model *m = rp_model_read(result_json);
	if (!m)
		return -EINVAL;
	FILE *f = fopen(html_path, "w");
	if (!f) {
		int e = errno;
		rp_model_free(m);
		return -e;
	}
	struct rp_sum_row rows[RP_SUM_ROWS];
	size_t nrows = rp_summary(m, rows);
	fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>faultlun vm: ");
	rp_esc(f, m->res.name);
	fprintf(f, "</title><style>%s</style></head><body>\n<h1>", css);
	rp_esc(f, m->res.name);
	fprintf(f, " <span class=\"badge %s\" id=\"verdict\">", rows[0].em_class);
	rp_esc(f, rows[0].text);
	fprintf(f, "</span></h1>\n");
	if (*rows[0].note) {
		fprintf(f, "<p class=\"ERROR\">");
		rp_esc(f, rows[0].note);
		fprintf(f, "</p>\n");
	}
	summary(f, rows, nrows);
	fprintf(f, "<h2>The error handler's escalation</h2>\n<p class=\"note\">Time in seconds "
		   "from the first workload step. Each bar is one rung the kernel took, labelled "
		   "with how long it lasted and the timer or answer that ended it.</p>\n");
	ladder_chart(f, m);
	if (m->npaths) {
		fprintf(f,
			"<h2>dm-multipath paths</h2>\n<p class=\"note\">Each path's dm state "
			"and checker state; outlined: its path group is the current one. Marks "
			"above a band: the kernel's Failing path / Reinstating path lines; below: "
			"the PATH_FAILED / PATH_REINSTATED uevents (red: failed, green: "
			"reinstated). <span class=\"legend\"><span><i style=\"background:"
			"#bfe5cc\"></i>active, ready</span><span><i style=\"background:#c9d3e6\">"
			"</i>ghost (standby port)</span><span><i style=\"background:#f6d28b\"></i>"
			"faulty, shaky, pending</span><span><i style=\"background:#f09a92\"></i>"
			"failed</span></span></p>\n");
		rp_svg_paths(f, m, PAGE_W);
	}
	if (m->seq_cycle >= 0) {
		fprintf(
		    f,
		    "<h2>Cycle %d, message by message</h2>\n<p class=\"note\">Left: what the "
		    "kernel sent and what came of it; right: what the target received and "
		    "decided (from its trace). A red cross: it never reached the target.%s</p>\n",
		    m->seq_cycle + 1,
		    m->eh_from_trace ? " The kernel printed nothing of its error handler in this "
				       "run: its side is what the target received (dotted)."
				     : "");
		rp_svg_sequence(f, m);
	} else {
		fprintf(f, "<h2>Task management</h2>\n<p id=\"no-tmf\">The target received no "
			   "task-management function in this run.</p>\n");
	}
	fprintf(f, "<h2>Device and session state; the healthy LUN's reads</h2>\n"
		   "<p class=\"note\">The error handler stops all I/O to the host while it runs: "
		   "the healthy LUN shares the host, and its reads (every 100 ms) stall. "
		   "<span class=\"legend\"><span><i style=\"background:#bfe5cc\"></i>running, "
		   "logged in</span><span><i style=\"background:#f6d28b\"></i>blocked</span>"
		   "<span><i style=\"background:#f09a92\"></i>offline, session failed</span>"
		   "</span></p>\n");
	rp_svg_states(f, m, PAGE_W);
	tables(f, m);
	fprintf(f, "<p class=\"note\">trace.json beside this page holds the same run as Chrome "
		   "trace events (open it in Perfetto or chrome://tracing).</p>\n</body></html>\n");
	int rc = fclose(f) ? -errno : 0;
	char tp[PATH_MAX];
	trace_path(html_path, tp, sizeof(tp));
	if (!rc)
		rc = rp_write_chrome_trace(m, tp);
	rp_model_free(m);
	return rc;
}
