/* SPDX-License-Identifier: MIT */
/*
 * report_matrix.c - the kernel matrix report of `faultlun vm --kernels K1,K2,...`
 * (docs/vm-lab.md "Kernel matrix"): one row per scenario and path, one column
 * per kernel, each cell the run's verdict (from its result.json), and under a
 * row, where the kernels did different things, the difference side by side:
 * each step's errno, the error-handler steps, the expectations' verdicts,
 * kernel-log lines (numbers and disk names folded, so that "sda" and "sdb",
 * tag#3 and tag#7 are one line) seen on some kernels and not on others, and
 * step times that differ by more than half (and 500 ms); then, per row, the
 * runs' error-handler ladders one above the other on one time axis. Each
 * cell links to its run's report.html (a relative link). Written as
 * matrix.json ("faultlun_vm_matrix": 1) and matrix.html, and printed as text.
 */
#include "fl_report.h"
#include "report_internal.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reads the result at path through the one reader, silently; 0 or -1. */
static int load(const char *path, struct fl_result *res)
{
	char err[512];
	return fl_result_read(path, res, err, sizeof(err));
}

/* One run of a row: its kernel's label and its result. */
struct row_run {
	const char *label;
	struct fl_result res;
};

/* The kernel-log lines of a run's workload, folded, as a JSON object used as a set. */
static json_t *log_patterns(const struct fl_result *r)
{
	json_t *set = json_object();
	double from = r->wall.workload_start < 0 ? 0 : r->wall.workload_start;

	for (size_t i = 0; i < r->ntimeline; i++) {
		const char *src = r->timeline[i].src;
		const char *text = r->timeline[i].text;
		char buf[256];
		size_t o = 0;

		if (strcmp(src, "kernel") || r->timeline[i].t < from)
			continue;
		for (const char *s = text; *s && o + 4 < sizeof(buf); s++) {
			if (*s >= '0' && *s <= '9') {
				while (s[1] >= '0' && s[1] <= '9')
					s++;
				buf[o++] = 'N';
			} else if (s[0] == 's' && s[1] == 'd' && s[2] >= 'a' && s[2] <= 'z' &&
				   (s[3] < 'a' || s[3] > 'z')) {
				memcpy(buf + o, "sdX", 3);
				o += 3;
				s += 2;
			} else {
				buf[o++] = *s;
			}
		}
		buf[o] = 0;
		json_object_set_new(set, buf, json_true());
	}
	return set;
}

/* Adds a difference {what, values{kernel: text}} when the values are not all equal. */
static void differ(json_t *diffs, const char *what, json_t *values)
{
	const char *k, *first = NULL;
	json_t *v;
	bool same = true;

	json_object_foreach(values, k, v)
	{
		const char *t = json_string_value(v) ?: "";
		if (!first)
			first = t;
		else if (strcmp(first, t))
			same = false;
	}
	if (!same && json_object_size(values) > 1)
		json_array_append_new(diffs,
				      json_pack("{s:s,s:O}", "what", what, "values", values));
	json_decref(values);
}

/* The step record of index k in a result's steps. */
static const struct fl_result_step *step_of(const struct fl_result *r, size_t k)
{
	for (size_t i = 0; i < r->nsteps; i++)
		if ((size_t)r->steps[i].step == k)
			return &r->steps[i];
	return NULL;
}

/* Each run of the row in turn: k its label, r its result (ri, k, r declared by the caller). */
#define EACH_RUN for (ri = 0; ri < n && (k = runs[ri].label, r = &runs[ri].res, 1); ri++)

/* Step s's errno and time where the runs differ (a time only when far apart). */
static void diff_step(json_t *diffs, const struct row_run *runs, size_t n, size_t s)
{
	const struct fl_result *r;
	const char *k;
	size_t ri;
	double lo = -1, hi = -1;
	char what[160];
	json_t *values = json_object();

	EACH_RUN
	{
		const struct fl_result_step *st = step_of(r, s);
		const char *e = st ? st->errno_name : NULL;
		json_object_set_new(values, k, json_string(st ? (e ?: "?") : "(no record)"));
	}
	snprintf(what, sizeof(what), "step %zu errno", s);
	differ(diffs, what, values);
	values = json_object();
	EACH_RUN
	{
		const struct fl_result_step *st = step_of(r, s);
		char t[32];
		if (!st)
			continue;
		double ms = st->elapsed_ms;
		lo = lo < 0 || ms < lo ? ms : lo;
		hi = ms > hi ? ms : hi;
		snprintf(t, sizeof(t), "%.0f ms", ms);
		json_object_set_new(values, k, json_string(t));
	}
	snprintf(what, sizeof(what), "step %zu time", s);
	if (hi - lo > 500 && hi > 1.5 * lo)
		differ(diffs, what, values);
	else
		json_decref(values);
}

/* The error-handler steps of each run, where they differ. */
static void diff_eh(json_t *diffs, const struct row_run *runs, size_t n)
{
	const struct fl_result *r;
	const char *k;
	size_t ri;
	json_t *values = json_object();

	EACH_RUN
	{
		char t[512] = "";
		size_t o = 0;
		for (size_t i = 0; i < r->neh_sequence; i++)
			if (r->eh_sequence[i] && o + 40 < sizeof(t))
				o += (size_t)snprintf(t + o, sizeof(t) - o, "%s%s", o ? " " : "",
						      r->eh_sequence[i]);
		json_object_set_new(values, k, json_string(o ? t : "(none)"));
	}
	differ(diffs, "error-handler steps", values);
}

/* Expectation x where the runs' verdicts differ (the text shows why). */
static void diff_expectation(json_t *diffs, const struct row_run *runs, size_t n, size_t x)
{
	const struct fl_result *r;
	const char *k, *label = NULL, *first = NULL;
	size_t ri;
	bool same = true;
	char what[160];
	json_t *values = json_object();

	EACH_RUN
	{
		char t[600];
		if (x >= r->nexpectations)
			continue;
		const struct fl_result_expect *e = &r->expectations[x];
		label = e->what;
		snprintf(t, sizeof(t), "%s: %s", e->verdict_text ?: "?", e->observed ?: "");
		json_object_set_new(values, k, json_string(t));
	}
	/* Only the verdict counts as a difference. */
	EACH_RUN
	{
		if (x >= r->nexpectations || !r->expectations[x].has_verdict)
			continue;
		const char *t = r->expectations[x].verdict_text ?: "";
		if (!first)
			first = t;
		else if (strcmp(first, t))
			same = false;
	}
	snprintf(what, sizeof(what), "expectation: %s", label ?: "?");
	if (!same)
		json_array_append_new(diffs,
				      json_pack("{s:s,s:O}", "what", what, "values", values));
	json_decref(values);
}

/* Kernel-log lines some kernels printed and others did not (16 at most). */
static void diff_kernel_log(json_t *diffs, const struct row_run *runs, size_t n)
{
	const struct fl_result *r;
	const char *k, *line;
	size_t ri, shown = 0;
	char what[160];
	json_t *sets = json_object(), *all = json_object(), *set, *one, *values;

	EACH_RUN
	{
		set = log_patterns(r);
		json_object_foreach(set, line, one) json_object_set_new(all, line, json_true());
		json_object_set_new(sets, k, set);
	}
	json_object_foreach(all, line, one)
	{
		size_t have = 0;
		json_object_foreach(sets, k, set) have += json_object_get(set, line) != NULL;
		if (have == json_object_size(sets) || shown >= 16)
			continue;
		values = json_object();
		json_object_foreach(sets, k, set) json_object_set_new(
		    values, k, json_string(json_object_get(set, line) ? "printed" : "-"));
		snprintf(what, sizeof(what), "kernel log: %.140s", line);
		differ(diffs, what, values);
		shown++;
	}
	json_decref(sets);
	json_decref(all);
}

/*
 * What differs between the runs of one row (a scenario on a path, one run a
 * kernel): step by step, the error-handler steps, the expectations' verdicts
 * and the kernel log's lines.
 */
static json_t *row_differences(const struct row_run *runs, size_t n)
{
	json_t *diffs = json_array();
	size_t nsteps = 0, nexp = 0;

	for (size_t i = 0; i < n; i++) {
		const struct fl_result *r = &runs[i].res;
		nsteps = r->nsteps > nsteps ? r->nsteps : nsteps;
		nexp = r->nexpectations > nexp ? r->nexpectations : nexp;
	}
	for (size_t s = 0; s < nsteps; s++)
		diff_step(diffs, runs, n, s);
	diff_eh(diffs, runs, n);
	for (size_t x = 0; x < nexp; x++)
		diff_expectation(diffs, runs, n, x);
	diff_kernel_log(diffs, runs, n);
	return diffs;
}
#undef EACH_RUN

/*
 * The link from out_dir to the report.html beside result_json, relative
 * ("debian-trixie/end-of-disk-iscsi/report.html", "../runs/x/report.html"),
 * so that the matrix can move with its runs. False when there is no report.
 */
static bool report_link(const char *out_dir, const char *result_json, char *rel, size_t len)
{
	char html[PATH_MAX + 16], from[PATH_MAX], to[PATH_MAX];
	const char *slash = strrchr(result_json, '/');
	size_t common = 0, o = 0;

	snprintf(html, sizeof(html), "%.*s/report.html", slash ? (int)(slash - result_json) : 1,
		 slash ? result_json : ".");
	if (!realpath(out_dir, from) || !realpath(html, to))
		return false;
	/* The longest common prefix ending at a folder boundary. */
	size_t nf = strlen(from);
	if (nf == 1) /* out_dir is "/" */
		nf = 0;
	if (!strncmp(from, to, nf) && to[nf] == '/') {
		common = nf;
	} else {
		for (size_t i = 0; from[i] && from[i] == to[i]; i++)
			if (to[i] == '/')
				common = i;
	}
	/* One ".." per folder of out_dir below the common prefix. */
	for (const char *c = from + common; c < from + nf; c++)
		if (*c == '/' && o + 4 < len)
			o += (size_t)snprintf(rel + o, len - o, "../");
	snprintf(rel + o, len - o, "%s", to + common + 1);
	return true;
}

/* Writes text with <, >, & and quotes escaped. */
static void html_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else
			fputc(*s, f);
	}
}

/* The side-by-side picture's width and the height of a run's heading. */
static const int side_w = 1300, side_head = 18;

/*
 * Run i of matrix row j (kernel label, its model m or NULL) in the
 * side-by-side picture: its heading, linked to its report, then its steps and
 * its ladder on the shared axis tmin..tmax; per: the height of a run.
 */
static void side_run(FILE *f, json_t *row, const char *label, size_t i, size_t j,
		     const struct rp_model *m, int per, double tmin, double tmax)
{
	const int W = side_w, head = side_head;
	json_t *c = json_object_get(json_object_get(row, "cells"), label);
	const char *v = json_string_value(json_object_get(c, "verdict")) ?: "-";
	const char *rel = json_string_value(json_object_get(c, "release")) ?: "";
	const char *link = json_string_value(json_object_get(c, "report"));
	int y = 24 + (int)i * per;
	fputs("<g class=\"side-run\" data-kernel=\"", f);
	html_text(f, label);
	fputs("\" data-release=\"", f);
	html_text(f, rel);
	fputs("\" data-path=\"", f);
	html_text(f, json_string_value(json_object_get(row, "path")));
	fprintf(f, "\" data-verdict=\"%s\">", v);
	if (link) {
		fputs("<a href=\"", f);
		html_text(f, link);
		fputs("\">", f);
	}
	fprintf(f,
		"<text class=\"side-label\" x=\"4\" y=\"%d\" font-size=\"13\" "
		"font-weight=\"bold\" fill=\"%s\">",
		y + 13,
		!strcmp(v, "PASS")			    ? "#1a7f37"
		: !strcmp(v, "FAIL") || !strcmp(v, "ERROR") ? "#c0392b"
							    : "#555");
	html_text(f, label);
	if (*rel) {
		fputs(" \xc2\xb7 ", f);
		html_text(f, rel);
	}
	fputs(" \xc2\xb7 ", f);
	html_text(f, json_string_value(json_object_get(row, "path")));
	fprintf(f, " \xc2\xb7 %s</text>", v);
	if (link)
		fputs("</a>", f);
	fputs("\n", f);
	if (m) {
		int sy = y + head;
		sy += rp_svg_steps(f, m, 0, sy, W, tmin, tmax);
		char id[64];
		snprintf(id, sizeof(id), "ladder-%zu-%zu", j, i);
		vm_report_ladder_svg(f, m, id, 0, sy, W, tmin, tmax);
	} else {
		fprintf(f,
			"<text class=\"side-none\" x=\"170\" y=\"%d\" "
			"fill=\"#666\">no result on this kernel</text>\n",
			y + head + 16);
	}
	fputs("</g>\n", f);
}

/*
 * Under the table, one figure per row: the error handler's ladder of each
 * kernel's run, one above the other on one time axis (the union of the
 * runs' windows, so that the same time is at the same x on every kernel),
 * each headed by its kernel, release, path and verdict and linked to its
 * report.
 */
static void side_by_side(FILE *f, json_t *doc)
{
	json_t *kernels = json_object_get(doc, "kernels"), *kv, *row;
	size_t i, j;
	const int W = side_w, head = side_head;
	fputs("<h2>The error handler side by side</h2>\n<p class=\"note\">Each row's runs "
	      "on one time axis (seconds from the first workload step): the workload's steps "
	      "and the error handler's ladder of each kernel, one above the other.</p>\n",
	      f);
	json_array_foreach(json_object_get(doc, "rows"), j, row)
	{
		size_t nk = json_array_size(kernels);
		struct rp_model **m = calloc(nk ? nk : 1, sizeof(*m));
		double tmin = 0, tmax = 1;
		bool any = false;

		if (!m)
			return;
		json_array_foreach(kernels, i, kv)
		{
			json_t *c =
			    json_object_get(json_object_get(row, "cells"),
					    json_string_value(json_object_get(kv, "label")));
			const char *res = json_string_value(json_object_get(c, "result"));
			m[i] = res ? rp_model_read(res) : NULL; /* within the bounds */
			if (!m[i])
				continue;
			tmin = any ? fmin(tmin, m[i]->tmin) : m[i]->tmin;
			tmax = any ? fmax(tmax, m[i]->tmax) : m[i]->tmax;
			any = true;
		}
		int per = head + 20 + RP_NLEVELS * 40 + 14 + 16;
		int h = 24 + (int)nk * per;
		fprintf(f, "<section class=\"side\" id=\"side-%zu\" data-scenario=\"", j);
		html_text(f, json_string_value(json_object_get(row, "scenario")));
		fputs("\" data-path=\"", f);
		html_text(f, json_string_value(json_object_get(row, "path")));
		fputs("\"><h3>", f);
		html_text(f, json_string_value(json_object_get(row, "scenario")));
		fputs(" on ", f);
		html_text(f, json_string_value(json_object_get(row, "path")));
		fprintf(
		    f,
		    "</h3>\n<svg class=\"side-by-side\" width=\"%d\" height=\"%d\" "
		    "data-tmin=\"%.3f\" data-tmax=\"%.3f\" xmlns=\"http://www.w3.org/2000/svg\" "
		    "font-size=\"11\" font-family=\"sans-serif\">\n",
		    W, h, tmin, tmax);
		rp_svg_axis(f, 0, 14, h, W, tmin, tmax);
		json_array_foreach(kernels, i, kv)
		{
			side_run(f, row, json_string_value(json_object_get(kv, "label")), i, j,
				 m[i], per, tmin, tmax);
			rp_model_free(m[i]);
		}
		fputs("</svg></section>\n", f);
		free(m);
	}
}

/* One cell of the matrix: the verdict of row's scenario on kernel kv, linked to its report. */
static void html_cell(FILE *f, json_t *row, json_t *kv)
{
	json_t *c = json_object_get(json_object_get(row, "cells"),
				    json_string_value(json_object_get(kv, "label")));
	const char *v = json_string_value(json_object_get(c, "verdict")) ?: "-";
	const char *html = json_string_value(json_object_get(c, "report"));
	fprintf(f, "<td class=\"%s\">", !strcmp(v, "N/A") ? "NA" : v);
	if (html) {
		fputs("<a class=\"run\" href=\"", f);
		html_text(f, html);
		fputs("\">", f);
	}
	html_text(f, v);
	if (html)
		fputs("</a>", f);
	if (c && json_object_get(c, "workload_s"))
		fprintf(f, " <small>%.1f s</small>",
			json_number_value(json_object_get(c, "workload_s")));
	fputs("</td>", f);
}

/* The "Where the kernels differ" section: each row's differences, one column a kernel. */
static void html_differences(FILE *f, json_t *doc, json_t *kernels)
{
	json_t *row, *kv;
	size_t i, j;

	fputs("</table>\n<h2>Where the kernels differ</h2>\n", f);
	size_t ndiff = 0;
	json_array_foreach(json_object_get(doc, "rows"), j, row) ndiff +=
	    json_array_size(json_object_get(row, "differences"));
	if (!ndiff)
		fputs("<p id=\"no-differences\">Nowhere the matrix compares: in every row, each "
		      "step's errno, the error-handler steps, the verdicts and the workload's "
		      "kernel-log lines were the same, step times within half.</p>\n",
		      f);
	json_array_foreach(json_object_get(doc, "rows"), j, row)
	{
		json_t *diffs = json_object_get(row, "differences"), *d;
		size_t k;

		if (!json_array_size(diffs))
			continue;
		fputs("<details open><summary>", f);
		html_text(f, json_string_value(json_object_get(row, "scenario")));
		fputs(" on ", f);
		html_text(f, json_string_value(json_object_get(row, "path")));
		fprintf(f, " (%zu)</summary>\n<table><tr><th></th>", json_array_size(diffs));
		json_array_foreach(kernels, i, kv)
		{
			fputs("<th>", f);
			html_text(f, json_string_value(json_object_get(kv, "label")));
			fputs("</th>", f);
		}
		fputs("</tr>\n", f);
		json_array_foreach(diffs, k, d)
		{
			fputs("<tr><td class=\"d\">", f);
			html_text(f, json_string_value(json_object_get(d, "what")));
			fputs("</td>", f);
			json_array_foreach(kernels, i, kv)
			{
				fputs("<td class=\"d\">", f);
				html_text(f, json_string_value(json_object_get(
						 json_object_get(d, "values"),
						 json_string_value(json_object_get(kv, "label"))))
						 ?: "");
				fputs("</td>", f);
			}
			fputs("</tr>\n", f);
		}
		fputs("</table></details>\n", f);
	}
}

/* Writes matrix.html from the matrix document. */
static int write_html(json_t *doc, const char *path)
{
	FILE *f = fopen(path, "w");
	json_t *kernels = json_object_get(doc, "kernels"), *kv, *row;
	size_t i, j;

	if (!f)
		return -errno;
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>faultlun kernel "
	      "matrix</title>\n<style>body{font-family:sans-serif;margin:1em}"
	      "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #bbb;"
	      "padding:.2em .5em;text-align:left;vertical-align:top}"
	      ".PASS{background:#c8f0c8}.FAIL{background:#f6c0c0}.ERROR{background:#f0d090}"
	      ".SKIP,.NA{background:#e0e0e0}details{margin:.3em 0 1em 1em}"
	      "td.d{font-family:monospace;font-size:90%}</style></head><body>\n"
	      "<h1>Kernel matrix</h1>\n<table><tr><th>scenario</th><th>path</th>",
	      f);
	json_array_foreach(kernels, i, kv)
	{
		fputs("<th>", f);
		html_text(f, json_string_value(json_object_get(kv, "label")));
		fputs("<br><small>", f);
		html_text(f, json_string_value(json_object_get(kv, "release")) ?: "");
		fputs("</small></th>", f);
	}
	fputs("</tr>\n", f);
	json_array_foreach(json_object_get(doc, "rows"), j, row)
	{
		fputs("<tr><td>", f);
		html_text(f, json_string_value(json_object_get(row, "scenario")));
		fputs("</td><td>", f);
		html_text(f, json_string_value(json_object_get(row, "path")));
		fputs("</td>", f);
		json_array_foreach(kernels, i, kv)
		{
			html_cell(f, row, kv);
		}
		fputs("</tr>\n", f);
	}
	html_differences(f, doc, kernels);
	side_by_side(f, doc);
	fputs("</body></html>\n", f);
	return fclose(f) ? -errno : 0;
}

/* The kernels' columns: each label, with the release its first readable run recorded. */
static json_t *matrix_kernels(const struct fl_vm_matrix_cell *cells, size_t n,
			      const char *const *kernels, size_t nkernels)
{
	json_t *kl = json_array();

	for (size_t k = 0; k < nkernels; k++) {
		const char *release = NULL;
		json_t *kv = json_pack("{s:s}", "label", kernels[k]);
		for (size_t i = 0; i < n && !release; i++) {
			if (strcmp(cells[i].kernel, kernels[k]))
				continue;
			struct fl_result r;
			if (load(cells[i].result_json, &r) < 0)
				continue;
			if (r.kernel) {
				release = kernels[k];
				json_object_set_new(kv, "release", json_string(r.kernel));
			}
			fl_result_free(&r);
		}
		json_array_append_new(kl, kv);
	}
	return kl;
}

/*
 * One cell of the matrix (verdict, result, report link, workload time,
 * release); a readable run joins runs[0..*nruns) under its kernel's label (a
 * label seen before in the row: the later run stands).
 */
static json_t *matrix_cell(const struct fl_vm_matrix_cell *cell, const char *out_dir,
			   struct row_run *runs, size_t *nruns)
{
	struct fl_result r;
	bool loaded = load(cell->result_json, &r) == 0;
	const char *v = cell->rc == FL_VM_SKIP ? "SKIP" : "ERROR";
	json_t *c = json_object();

	if (loaded && r.verdict)
		v = r.verdict;
	json_object_set_new(c, "verdict", json_string(v));
	if (!loaded)
		return c;
	char rel[PATH_MAX];
	json_object_set_new(c, "result", json_string(cell->result_json));
	if (report_link(out_dir, cell->result_json, rel, sizeof(rel)))
		json_object_set_new(c, "report", json_string(rel));
	if (r.wall.workload_end >= 0)
		json_object_set_new(
		    c, "workload_s",
		    json_real(r.wall.workload_end -
			      (r.wall.workload_start < 0 ? 0 : r.wall.workload_start)));
	if (r.kernel)
		json_object_set_new(c, "release", json_string(r.kernel));
	size_t at = 0;
	while (at < *nruns && strcmp(runs[at].label, cell->kernel))
		at++;
	if (at == *nruns)
		(*nruns)++;
	else
		fl_result_free(&runs[at].res);
	runs[at] = (struct row_run){.label = cell->kernel, .res = r};
	return c;
}

/* The matrix as text: a line a row, each kernel's verdict, the count of differences. */
static void matrix_text(const json_t *doc, const char *out_dir, FILE *text)
{
	json_t *row, *kv;
	size_t j, i;

	fprintf(text, "kernel matrix:\n");
	json_array_foreach(json_object_get(doc, "rows"), j, row)
	{
		fprintf(text, "  %-28s %-6s", json_string_value(json_object_get(row, "scenario")),
			json_string_value(json_object_get(row, "path")));
		json_array_foreach(json_object_get(doc, "kernels"), i, kv)
		{
			const char *l = json_string_value(json_object_get(kv, "label"));
			json_t *c = json_object_get(json_object_get(row, "cells"), l);
			fprintf(text, "  %s %s", l,
				json_string_value(json_object_get(c, "verdict")) ?: "-");
		}
		fprintf(text, "  (%zu differences)\n",
			json_array_size(json_object_get(row, "differences")));
	}
	fprintf(text, "matrix: %s/matrix.json, %s/matrix.html\n", out_dir, out_dir);
}

/* See fl_vm.h. */
int fl_vm_matrix_write(const struct fl_vm_matrix_cell *cells, size_t n, const char *const *kernels,
		       size_t nkernels, const char *out_dir, FILE *text)
{
	json_t *doc = json_object(), *rows = json_array();
	char p[PATH_MAX];
	int rc = 0;

	json_object_set_new(doc, "faultlun_vm_matrix", json_integer(1));
	json_object_set_new(doc, "kernels", matrix_kernels(cells, n, kernels, nkernels));
	for (size_t i = 0; i < n; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(cells[j].scenario, cells[i].scenario) &&
			       !strcmp(cells[j].path, cells[i].path);
		if (seen)
			continue;
		struct row_run *runs = calloc(n, sizeof(*runs));
		size_t nruns = 0;
		if (!runs) {
			rc = -ENOMEM;
			break;
		}
		json_t *row =
		    json_pack("{s:s,s:s}", "scenario", cells[i].scenario, "path", cells[i].path);
		json_t *cl = json_object();
		for (size_t j = i; j < n; j++)
			if (!strcmp(cells[j].scenario, cells[i].scenario) &&
			    !strcmp(cells[j].path, cells[i].path))
				json_object_set_new(cl, cells[j].kernel,
						    matrix_cell(&cells[j], out_dir, runs, &nruns));
		json_object_set_new(row, "cells", cl);
		json_object_set_new(row, "differences", row_differences(runs, nruns));
		for (size_t k = 0; k < nruns; k++)
			fl_result_free(&runs[k].res);
		free(runs);
		json_array_append_new(rows, row);
	}
	json_object_set_new(doc, "rows", rows);
	snprintf(p, sizeof(p), "%s/matrix.json", out_dir);
	if (json_dump_file(doc, p, JSON_INDENT(1)) < 0)
		rc = -EIO;
	snprintf(p, sizeof(p), "%s/matrix.html", out_dir);
	if (!rc)
		rc = write_html(doc, p);
	if (text)
		matrix_text(doc, out_dir, text);
	json_decref(doc);
	return rc;
}

/* Reads one LABEL=RUN_DIR (or LABEL=RESULT_JSON) of the matrix into st[0..3]: the label,
 * the result file, the scenario's name, the path. Returns the run's FL_VM_* verdict, or -1
 * (said on stderr) when it cannot be read. */
static int read_spec(const char *spec, char **st)
{
	const char *eq = strchr(spec, '=');
	struct stat sb;

	if (!eq || eq == spec || !eq[1]) {
		fprintf(stderr, "faultlun report: %s: not LABEL=RUN_DIR\n", spec);
		return -1;
	}
	st[0] = strndup(spec, (size_t)(eq - spec));
	if (stat(eq + 1, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		size_t len = strlen(eq + 1) + sizeof("/result.json");
		st[1] = malloc(len);
		if (st[1])
			snprintf(st[1], len, "%s/result.json", eq + 1);
	} else {
		st[1] = strdup(eq + 1);
	}
	struct fl_result r;
	char err[512];
	if (!st[0] || !st[1])
		return -1;
	if (fl_result_read(st[1], &r, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	const char *sc = r.scenario ?: "?";
	const char *slash = strrchr(sc, '/');
	st[2] = strdup(slash ? slash + 1 : sc);
	if (st[2])
		st[2][strcspn(st[2], ".")] = 0;
	st[3] = strdup(r.path ?: "?");
	int rc = rp_verdict_code(r.verdict);
	fl_result_free(&r);
	return st[2] && st[3] ? rc : -1;
}

/* The run's own report beside its result file, written when it is missing, for the cell to
 * link to. */
static void run_report(const char *result_json)
{
	const char *slash = strrchr(result_json, '/');
	char html[PATH_MAX + 16];

	snprintf(html, sizeof(html), "%.*s/report.html", slash ? (int)(slash - result_json) : 1,
		 slash ? result_json : ".");
	if (access(html, F_OK) && fl_vm_report_html(result_json, html) < 0)
		fprintf(stderr, "faultlun report: cannot write %s\n", html);
}

/* See fl_vm.h. */
int fl_vm_matrix_from_runs(const char *const *specs, size_t n, const char *out_dir, FILE *text)
{
	struct fl_vm_matrix_cell *cells = calloc(n ? n : 1, sizeof(*cells));
	char **strs = calloc(n ? n * 4 : 1, sizeof(*strs));
	const char **kernels = calloc(n ? n : 1, sizeof(*kernels));
	size_t nk = 0, nc = 0;
	int worst = FL_VM_PASS;

	if (!cells || !strs || !kernels) {
		worst = FL_VM_ERROR;
		goto out;
	}
	if (mkdir(out_dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "faultlun report: %s: %s\n", out_dir, strerror(errno));
		worst = FL_VM_ERROR;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		char **st = strs + 4 * i;
		int rc = read_spec(specs[i], st);

		if (rc < 0) {
			worst = FL_VM_ERROR;
			continue;
		}
		if (rc != FL_VM_SKIP && rc > worst)
			worst = rc;
		run_report(st[1]);
		size_t k = 0;
		while (k < nk && strcmp(kernels[k], st[0]))
			k++;
		if (k == nk)
			kernels[nk++] = st[0];
		cells[nc++] = (struct fl_vm_matrix_cell){.kernel = st[0],
							 .scenario = st[2],
							 .path = st[3],
							 .result_json = st[1],
							 .rc = rc};
	}
	if (worst != FL_VM_ERROR && fl_vm_matrix_write(cells, nc, kernels, nk, out_dir, text) < 0) {
		fprintf(stderr, "faultlun report: cannot write the matrix report in %s\n", out_dir);
		worst = FL_VM_ERROR;
	}
out:
	for (size_t i = 0; strs && i < 4 * n; i++)
		free(strs[i]);
	free(strs);
	free(cells);
	free(kernels);
	return worst;
}
