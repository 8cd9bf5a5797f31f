/* SPDX-License-Identifier: MIT */
/*
 * report_svg.c - the VM-lab report's drawings, as inline SVG: the error
 * handler's escalation ladder (time on x, rung on y, each span coloured by
 * its outcome and labelled with its length and what ended it), the sequence
 * chart of one cycle (what the kernel sent, what the target received and
 * decided), and the device / session state bands above the healthy LUN's
 * probe latencies (log scale). Every element carries class and data-*
 * attributes so that a test can read the picture from the DOM.
 */
#include "report_internal.h"

#include <math.h>
#include <string.h>

#define NONE (-1e9)
#define ROW_H 40
#define LABEL_W 170

/* x of time t in a frame. */
static double xof(double t, int x, int w, double tmin, double tmax)
{
	return x + LABEL_W + (t - tmin) * (w - LABEL_W - 10) / (tmax - tmin);
}

/* "2.0 s" or "350 ms". */
static void dur(char *b, size_t n, double s)
{
	if (s < 1)
		snprintf(b, n, "%.0f ms", s * 1000);
	else
		snprintf(b, n, "%.1f s", s);
}

/* See report_internal.h. */
void rp_esc(FILE *f, const char *s)
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

/*
 * One error-handler span of the ladder at x, y (w wide, tmin..tmax): its bar
 * and its label above it, on one of two lines of its rung that last_end
 * keeps free (no label over another).
 */
static void ladder_span(FILE *f, const struct rp_span *s, int x, int y, int w, double tmin,
			double tmax, double last_end[RP_NLEVELS][2])
{
	int ry = y + (RP_NLEVELS - 1 - (int)s->level) * ROW_H;
	double x0 = xof(s->t0, x, w, tmin, tmax), x1 = xof(s->t1, x, w, tmin, tmax);
	double bw = x1 - x0 < 4 ? 4 : x1 - x0;
	char len[24], label[160], why[128];
	/* The chart says what ended the span; the target's side is in the sequence. */
	snprintf(why, sizeof(why), "%s", s->ended_by);
	if (s->outcome == RP_TIMED_OUT && strstr(why, ", target:"))
		*strstr(why, ", target:") = 0;
	if (!strcmp(why, "failed at once: never reached the target"))
		snprintf(why, sizeof(why), "never reached the target");
	dur(len, sizeof(len), s->t1 - s->t0);
	if (s->level == RP_END || s->outcome == RP_SKIPPED)
		snprintf(label, sizeof(label), "%s", why);
	else
		snprintf(label, sizeof(label), "%s \xc2\xb7 %s", len, why);
	fprintf(f,
		"<g class=\"eh-span\" data-level=\"%s\" data-outcome=\"%s\" data-cycle=\"%d\" "
		"data-len-s=\"%.3f\" data-ended-by=\"",
		rp_level_names[s->level], rp_outcome_names[s->outcome], s->cycle + 1,
		s->t1 - s->t0);
	rp_esc(f, s->ended_by);
	fprintf(f, "\"><title>%s, %s (%s at %+.1f s): ", rp_level_names[s->level],
		rp_outcome_names[s->outcome], len, s->t0);
	rp_esc(f, s->detail);
	fprintf(f, "%s</title>", s->from_trace ? " [seen in the target's trace]" : "");
	fprintf(f,
		"<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"14\" rx=\"2\" "
		"fill=\"%s\"%s/>",
		x0, ry + 20, bw, s->outcome == RP_SKIPPED ? "none" : rp_outcome_colors[s->outcome],
		s->outcome == RP_SKIPPED ? " stroke=\"#9aa0a6\" stroke-dasharray=\"2,2\""
		: s->from_trace		 ? " stroke=\"#333\" stroke-dasharray=\"3,2\""
					 : "");
	/* Labels sit above their span, on one of two lines, never on another label. */
	double lw = strlen(label) * 5.6;
	/* Near the right edge a label ends at its span instead of starting there. */
	bool right = x0 + lw > x + w - 10;
	double lx = right ? x0 + bw - lw : x0;
	int line = lx >= last_end[s->level][0] ? 0 : lx >= last_end[s->level][1] ? 1 : -1;
	if (line >= 0) {
		last_end[s->level][line] = right ? x + w : x0 + lw + 6;
		fprintf(f,
			"<text class=\"span-label\" x=\"%.1f\" y=\"%d\" font-size=\"10\" "
			"fill=\"#222\"%s>",
			right ? x0 + bw : x0, ry + (line ? 8 : 17),
			right ? " text-anchor=\"end\"" : "");
		rp_esc(f, label);
		fprintf(f, "</text>");
	}
	fprintf(f, "</g>\n");
}

/* See report_internal.h. */
int vm_report_ladder_svg(FILE *f, const struct rp_model *m, const char *id, int x, int y, int w,
			 double tmin, double tmax)
{
	double last_end[RP_NLEVELS][2];
	int h = RP_NLEVELS * ROW_H;

	if (tmax <= tmin)
		tmax = tmin + 1;
	fprintf(f, "<g id=\"");
	rp_esc(f, id);
	fprintf(f,
		"\" class=\"ladder\" data-cycles=\"%d\" data-tmin=\"%.3f\" data-tmax=\"%.3f\">\n",
		m->ncycles, tmin, tmax);
	for (int l = 0; l < RP_NLEVELS; l++) {
		int ry = y + (RP_NLEVELS - 1 - l) * ROW_H;
		last_end[l][0] = last_end[l][1] = -1e9;
		fprintf(f,
			"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>"
			"<text x=\"%d\" y=\"%d\" class=\"rung\" font-weight=\"bold\">%s</text>\n",
			x + LABEL_W, ry, w - LABEL_W - 10, ROW_H, l % 2 ? "#fafafa" : "#f2f4f7",
			x + 4, ry + ROW_H / 2 + 4, rp_level_names[l]);
	}
	/* Cycle boundaries. */
	int cyc = -1;
	for (size_t i = 0; i < m->nspans; i++) {
		const struct rp_span *s = &m->spans[i];
		if (s->cycle == cyc || s->cycle < 0 || s->level != RP_TIMEOUT)
			continue;
		cyc = s->cycle;
		double cx = xof(s->t0, x, w, tmin, tmax);
		fprintf(f,
			"<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#bbb\" "
			"stroke-dasharray=\"2,3\"/><text x=\"%.1f\" y=\"%d\" fill=\"#777\" "
			"font-size=\"10\">cycle %d</text>\n",
			cx, cx, y, y + h, cx + 2, y + h + 11, cyc + 1);
	}
	for (size_t i = 0; i < m->nspans; i++)
		ladder_span(f, &m->spans[i], x, y, w, tmin, tmax, last_end);
	for (size_t i = 0; i < m->nmarks; i++) {
		const struct rp_mark *k = &m->marks[i];
		int ry = y + (RP_NLEVELS - 1 - (int)k->level) * ROW_H;
		double mx = xof(k->t, x, w, tmin, tmax);
		fprintf(f, "<g class=\"eh-mark\"><title>%+.1f s: ", k->t);
		rp_esc(f, k->text);
		fprintf(f,
			"</title><path d=\"M%.1f %d l5 6 l-5 6 l-5 -6 z\" fill=\"%s\" "
			"stroke=\"#fff\"/></g>\n",
			mx, ry + 21, k->level == RP_SESSION ? "#7a1f1f" : "#3b7dd8");
	}
	if (!m->nspans)
		fprintf(f,
			"<text class=\"no-eh\" x=\"%d\" y=\"%d\" font-size=\"14\" fill=\"#1a7f37\">"
			"no error-handler action: the kernel never timed a command out, aborted "
			"or reset anything</text>\n",
			x + LABEL_W + 20, y + (RP_NLEVELS - 1) * ROW_H + 26);
	fprintf(f, "</g>\n");
	return h + 14; /* the cycle numbers under it */
}

/* See report_internal.h. */
void rp_svg_axis(FILE *f, int x, int y0, int y1, int w, double tmin, double tmax)
{
	static const double steps[] = {0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600};
	double step = 600;

	if (tmax <= tmin)
		tmax = tmin + 1;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if ((tmax - tmin) / steps[i] <= 16) {
			step = steps[i];
			break;
		}
	/* at most RP_MAX_TICKS ticks, whatever the window (a counted loop: t += step
	 * stops moving t past 2^53 * step) */
	if ((tmax - tmin) / step > RP_MAX_TICKS)
		step = (tmax - tmin) / RP_MAX_TICKS;
	for (int k = 0; k <= RP_MAX_TICKS && k * step <= tmax; k++) {
		double t = k * step, tx = xof(t, x, w, tmin, tmax);
		fprintf(f,
			"<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#e6e6e6\"/>"
			"<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" "
			"fill=\"#555\">%gs</text>\n",
			tx, tx, y0 + 4, y1, tx, y0, t);
	}
}

/* See report_internal.h. */
int rp_svg_steps(FILE *f, const struct rp_model *m, int x, int y, int w, double tmin, double tmax)
{
	size_t i;

	if (tmax <= tmin)
		tmax = tmin + 1;
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">application</text>\n", x + 4,
		y + 12);
	for (i = 0; i < m->res.nsteps; i++) {
		const struct fl_result_step *o = &m->res.steps[i];
		long long n = o->step;
		double a = o->t0 - m->origin, b = o->t1 - m->origin;
		const char *e = o->errno_name ?: "?";
		const char *op = o->op ?: "?";
		double x0 = xof(a, x, w, tmin, tmax), x1 = xof(b, x, w, tmin, tmax);
		double bw = x1 - x0 < 3 ? 3 : x1 - x0;
		char label[96];
		snprintf(label, sizeof(label), "%s %s", op, e);
		fprintf(f, "<g class=\"side-step\" data-step=\"%lld\" data-errno=\"", n);
		rp_esc(f, e);
		fprintf(f, "\"><title>step %lld ", n);
		rp_esc(f, label);
		fprintf(f,
			", %.1f s (%+.1f .. %+.1f s)</title><rect x=\"%.1f\" y=\"%d\" "
			"width=\"%.1f\" height=\"14\" fill=\"%s\" opacity=\"0.8\"/>",
			o->elapsed_ms / 1000, a, b, x0, y + 2, bw,
			strcmp(e, "OK") ? "#d03b2f" : "#3b7dd8");
		if (bw > (strlen(label) + 1) * 6.0) {
			fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" fill=\"#fff\">",
				x0 + 3, y + 13);
			rp_esc(f, label);
			fprintf(f, "</text>");
		}
		fprintf(f, "</g>\n");
	}
	return 20;
}

/* Fill colour of a device or session state. */
static const char *state_color(const char *st)
{
	if (!strcmp(st, "running") || !strcmp(st, "LOGGED_IN") || !strcmp(st, "up"))
		return "#bfe5cc";
	if (!strcmp(st, "blocked") || !strcmp(st, "transport-offline"))
		return "#f6d28b";
	if (!strcmp(st, "offline") || !strcmp(st, "FAILED") || !strcmp(st, "failed"))
		return "#f09a92";
	return "#d9d9d9";
}

/* The state bands of each device and session (nrows rows of band_h from top). */
static void svg_bands(FILE *f, const struct rp_model *m, int w, int nrows, int band_h, int top)
{
	double tmin = m->tmin, tmax = m->tmax;

	for (int r = 0; r < nrows; r++) {
		const char *name = "";
		for (size_t i = 0; i < m->nbands; i++)
			if (m->bands[i].row == r)
				name = m->bands[i].name;
		int y = top + r * (band_h + 4);
		fprintf(f, "<text x=\"4\" y=\"%d\" font-weight=\"bold\">%s %s</text>\n", y + 15,
			!strncmp(name, "lun", 3) ? "LUN" : "session",
			name + (!strncmp(name, "lun", 3) ? 3 : 7));
		for (size_t i = 0; i < m->nbands; i++) {
			const struct rp_band *b = &m->bands[i];
			if (b->row != r || b->t1 < tmin)
				continue;
			double x0 = xof(fmax(b->t0, tmin), 0, w, tmin, tmax);
			double x1 = xof(fmin(b->t1, tmax), 0, w, tmin, tmax);
			fprintf(f,
				"<g class=\"band\" data-name=\"%s\" data-state=\"%s\"><title>%s %s "
				"%+.1f .. %+.1f s</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
				"height=\"%d\" fill=\"%s\"/>",
				b->name, b->state, b->name, b->state, b->t0, b->t1, x0, y,
				x1 - x0 < 1 ? 1 : x1 - x0, band_h, state_color(b->state));
			if (x1 - x0 > strlen(b->state) * 6.5 + 4)
				fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\">%s</text>",
					x0 + 3, y + 15, b->state);
			fprintf(f, "</g>\n");
		}
	}
	if (!nrows)
		fprintf(f, "<text x=\"4\" y=\"%d\">no device or session state recorded</text>\n",
			top + 14);
}

/* The log-scale grid of the latency panel (x0..x1, lat_h high from ly). */
static void svg_latency_grid(FILE *f, int x0, int x1, int ly, int lat_h)
{
	static const struct {
		double ms;
		const char *label;
	} grid[] = {{1, "1 ms"},   {10, "10 ms"},   {100, "100 ms"},
		    {1000, "1 s"}, {10000, "10 s"}, {100000, "100 s"}};

	fprintf(f,
		"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fbfbfb\" "
		"stroke=\"#ddd\"/>\n",
		x0, ly, x1 - x0, lat_h);
	for (size_t g = 0; g < sizeof(grid) / sizeof(grid[0]); g++) {
		double gy = ly + lat_h - log10(grid[g].ms) / 5.0 * lat_h;
		fprintf(f,
			"<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"%s/>"
			"<text x=\"%d\" y=\"%.1f\" font-size=\"9\" text-anchor=\"end\" "
			"fill=\"#666\">%s</text>\n",
			x0, x1, gy, gy, grid[g].ms == 1000 ? "#d03b2f" : "#e4e4e4",
			grid[g].ms == 1000 ? " stroke-dasharray=\"4,3\"" : "", x0 - 3, gy + 3,
			grid[g].label);
	}
}

/* The healthy LUN's probes in the latency panel; returns how many were in the window. */
static int svg_probes(FILE *f, const struct rp_model *m, int w, int ly, int lat_h)
{
	double tmin = m->tmin, tmax = m->tmax, last_label_x = -1e9;
	int nprobes = 0;

	for (size_t i = 0; i < m->res.nprobes; i++) {
		double t = m->res.probes[i].t - m->origin;
		double ms = m->res.probes[i].ms;
		if (t < tmin || t > tmax)
			continue;
		nprobes++;
		double px = xof(t, 0, w, tmin, tmax);
		double py = ly + lat_h - fmin(fmax(log10(fmax(ms, 1)), 0), 5) / 5.0 * lat_h;
		if (ms < 1000) {
			fprintf(f,
				"<circle class=\"probe\" cx=\"%.1f\" cy=\"%.1f\" r=\"1.6\" "
				"fill=\"#3b7dd8\"/>\n",
				px, py);
			continue;
		}
		/* A stalled read is a bar as long as it lasted. */
		double px1 = xof(t + ms / 1000, 0, w, tmin, tmax);
		fprintf(f,
			"<g class=\"stall\" data-ms=\"%.0f\"><title>%+.1f s: healthy LUN read "
			"took %.0f ms</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"4\" fill=\"#d03b2f\"/>",
			ms, t, ms, px, py - 2, px1 - px < 2 ? 2 : px1 - px);
		if (px > last_label_x) {
			fprintf(f,
				"<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
				"fill=\"#d03b2f\">stall %.1f s</text>",
				px, py - 5, ms / 1000);
			last_label_x = px + 62;
		}
		fprintf(f, "</g>\n");
	}
	return nprobes;
}

/* See report_internal.h. */
void rp_svg_states(FILE *f, const struct rp_model *m, int w)
{
	int nrows = 0;
	for (size_t i = 0; i < m->nbands; i++)
		if (m->bands[i].row + 1 > nrows)
			nrows = m->bands[i].row + 1;
	const int band_h = 22, lat_h = 170, top = 6;
	int ly = top + nrows * (band_h + 4) + 14;
	int h = m->res.nprobes ? ly + lat_h + 30 : ly + 30;
	fprintf(
	    f,
	    "<svg id=\"states\" width=\"%d\" height=\"%d\" xmlns=\"http://www.w3.org/2000/svg\" "
	    "font-size=\"11\" font-family=\"sans-serif\">\n",
	    w, h);
	svg_bands(f, m, w, nrows, band_h, top);
	/* Latency of the healthy LUN's probes, 1 ms .. 100 s on a log scale. */
	fprintf(f,
		"<text x=\"4\" y=\"%d\" font-weight=\"bold\">healthy LUN</text>"
		"<text x=\"4\" y=\"%d\" font-size=\"10\">read latency (log)</text>\n",
		ly + 14, ly + 28);
	int x0 = LABEL_W, x1 = w - 10;
	if (!m->res.nprobes) {
		fprintf(f,
			"<text class=\"no-healthy\" x=\"%d\" y=\"%d\" fill=\"#666\">no healthy "
			"LUN in this scenario: nothing was probed</text>\n</svg>\n",
			x0 + 10, ly + 14);
		return;
	}
	svg_latency_grid(f, x0, x1, ly, lat_h);
	if (!svg_probes(f, m, w, ly, lat_h))
		fprintf(f,
			"<text class=\"no-healthy\" x=\"%d\" y=\"%d\" fill=\"#666\">no healthy LUN "
			"in this scenario: nothing was probed</text>\n",
			x0 + 10, ly + lat_h / 2);
	fprintf(f, "</svg>\n");
}

/* See report_internal.h. */
void rp_svg_sequence(FILE *f, const struct rp_model *m)
{
	const int W = 1300, kx = 430, tx = 880, row = 46, top = 50;
	int h = top + (int)m->nmsgs * row + 20;
	fprintf(
	    f,
	    "<svg id=\"sequence\" data-cycle=\"%d\" width=\"%d\" height=\"%d\" "
	    "xmlns=\"http://www.w3.org/2000/svg\" font-size=\"12\" font-family=\"sans-serif\">\n"
	    "<defs><marker id=\"arr\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
	    "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0 0 L10 5 L0 10 "
	    "z\" fill=\"#333\"/></marker></defs>\n",
	    m->seq_cycle + 1, W, h);
	fprintf(
	    f,
	    "<text x=\"%d\" y=\"18\" text-anchor=\"middle\" font-weight=\"bold\">kernel "
	    "(initiator)</text><text x=\"%d\" y=\"18\" text-anchor=\"middle\" "
	    "font-weight=\"bold\">faultlun target</text>"
	    "<text x=\"%d\" y=\"36\" text-anchor=\"end\" fill=\"#555\">what came of it "
	    "(kernel)</text><text x=\"%d\" y=\"36\" fill=\"#555\">what the target "
	    "received and decided</text>\n"
	    "<line x1=\"%d\" x2=\"%d\" y1=\"40\" y2=\"%d\" stroke=\"#888\" stroke-width=\"2\"/>"
	    "<line x1=\"%d\" x2=\"%d\" y1=\"40\" y2=\"%d\" stroke=\"#888\" stroke-width=\"2\"/>\n",
	    kx, tx, kx - 10, tx + 10, kx, kx, h - 10, tx, tx, h - 10);
	for (size_t i = 0; i < m->nmsgs; i++) {
		const struct rp_msg *g = &m->msgs[i];
		int y = top + (int)i * row + 20;
		bool arrived = g->t_recv > NONE / 2;
		double t = g->t_sent > NONE / 2 ? g->t_sent : g->t_recv;
		fprintf(f, "<g class=\"seq-msg\" data-sent=\"");
		rp_esc(f, g->sent);
		fprintf(f, "\" data-decision=\"");
		rp_esc(f, g->decision);
		fprintf(f, "\" data-arrived=\"%s\">", arrived ? "yes" : "no");
		fprintf(f, "<text x=\"6\" y=\"%d\" fill=\"#666\">%+.2f s</text>", y + 4, t);
		/* the message */
		int end = arrived ? tx : (kx + tx) / 2;
		fprintf(f,
			"<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" "
			"stroke-width=\"2\"%s marker-end=\"url(#arr)\"/>",
			kx, end - 2, y, y, arrived ? "#333" : "#d03b2f",
			g->t_sent > NONE / 2 || !arrived ? "" : " stroke-dasharray=\"1,3\"");
		if (!arrived)
			fprintf(f,
				"<path d=\"M%d %d l10 10 M%d %d l-10 10\" stroke=\"#d03b2f\" "
				"stroke-width=\"3\"/>",
				end + 2, y - 5, end + 12, y - 5);
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-weight=\"bold\">",
			(kx + tx) / 2, y - 6);
		rp_esc(f, g->sent);
		fprintf(f, "</text>");
		/* the target's answer, if any */
		if (g->t_answer > NONE / 2) {
			char d[24];
			dur(d, sizeof(d), g->t_answer - g->t_recv);
			fprintf(f,
				"<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#2a9d5c\" "
				"stroke-dasharray=\"5,3\" marker-end=\"url(#arr)\"/>"
				"<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"10\" "
				"fill=\"#2a9d5c\">answer after %s</text>",
				tx, kx + 2, y + 12, y + 12, (kx + tx) / 2, y + 23, d);
		}
		/* the target's decision */
		fprintf(f, "<text class=\"seq-decision\" x=\"%d\" y=\"%d\" fill=\"%s\">", tx + 10,
			y + 4,
			!arrived || strstr(g->decision, "never") ? "#d03b2f"
			: strstr(g->decision, "complete") || strstr(g->decision, "logged in")
			    ? "#1a7f37"
			    : "#333");
		rp_esc(f, arrived ? g->decision : "never arrived");
		if (arrived && g->t_sent > NONE / 2 && fabs(g->t_recv - g->t_sent) > 0.0005)
			fprintf(f, " (got it %+.0f ms later)", (g->t_recv - g->t_sent) * 1000);
		fprintf(f, "</text>");
		/* what the kernel made of it */
		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" fill=\"%s\">", kx - 10,
			y + 4, rp_outcome_colors[g->outcome]);
		rp_esc(f, g->result);
		fprintf(f, "</text></g>\n");
	}
	fprintf(f, "</svg>\n");
}
