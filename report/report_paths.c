/* SPDX-License-Identifier: MIT */
/*
 * report_paths.c - the dm-multipath part of the VM lab's report: each path's
 * state over time, dm-multipath's path events, the failover time.
 *
 * Sources, all in result.json's timeline: the path observer's lines
 * ("faultlun-agent: path A sda active ready 50 current": port, disk, dm
 * state, checker state, priority, the state of the path's group in the
 * map), the kernel's lines of dm-mpath.c ("device-mapper: multipath: 254:0:
 * Failing path 8:0.", "Reinstating path 8:0.") and its uevents (DM_ACTION=
 * PATH_FAILED / PATH_REINSTATED with DM_PATH=8:0). Paths are named by the
 * observer; the kernel names a path by its device number, which is the sd
 * disk's (major 8, 65-71, 128-135; 16 minors a disk).
 */
#include "report_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE (-1e9)
#define LABEL_W 170

const char *const rp_pmark_names[RP_PM_NKINDS] = {
    [RP_PM_UEV_FAILED] = "PATH_FAILED",
    [RP_PM_UEV_REINSTATED] = "PATH_REINSTATED",
    [RP_PM_KERN_FAILING] = "Failing path",
    [RP_PM_KERN_REINSTATING] = "Reinstating path",
};

/* The device number of an sd disk name ("sdb" -> "8:16"); "" if not one. */
static void sd_devno(const char *dev, char *out, size_t len)
{
	long idx = 0;
	const char *p = dev + 2;

	*out = 0;
	if (strncmp(dev, "sd", 2) || !*p)
		return;
	/* sd_format_disk_name: a..z, aa..zz, ... (bijective base 26). */
	for (; *p; p++) {
		if (*p < 'a' || *p > 'z')
			return;
		idx = idx * 26 + (*p - 'a' + 1);
	}
	idx--;
	int major = idx < 16 ? 8 : idx < 128 ? 64 + (int)(idx / 16) : 128 + (int)(idx / 16 - 8);
	if (idx >= 256)
		return;
	snprintf(out, len, "%d:%ld", major, (idx % 16) * 16);
}

/* The path of a port, added at first sight; -1 when the table is full. */
static int path_of_port(struct rp_model *m, const char *port, const char *dev)
{
	for (size_t i = 0; i < m->npaths; i++)
		if (!strcmp(m->paths[i].port, port))
			return (int)i;
	if (m->npaths >= RP_MAX_PATHS)
		return -1;
	struct rp_path *p = &m->paths[m->npaths];
	memset(p, 0, sizeof(*p));
	snprintf(p->port, sizeof(p->port), "%s", port);
	snprintf(p->dev, sizeof(p->dev), "%s", dev);
	sd_devno(dev, p->devno, sizeof(p->devno));
	return (int)m->npaths++;
}

/* The path of a device number ("8:0"); -1 if no observed path has it. */
static int path_of_devno(const struct rp_model *m, const char *devno)
{
	for (size_t i = 0; i < m->npaths; i++)
		if (*m->paths[i].devno && !strcmp(m->paths[i].devno, devno))
			return (int)i;
	return -1;
}

/* The open segment of path k, or NULL. */
static struct rp_pseg *open_seg(struct rp_model *m, int k)
{
	for (size_t i = m->npsegs; i-- > 0;)
		if (m->psegs[i].path == k)
			return &m->psegs[i];
	return NULL;
}

/* Path k is in this state from t (a field NULL: unchanged). */
static void set_state(struct rp_model *m, int k, double t, const char *dm, const char *chk,
		      const char *group)
{
	struct rp_pseg *o = open_seg(m, k);
	struct rp_pseg n = {.path = k, .t0 = t, .t1 = m->tmax};
	snprintf(n.dm, sizeof(n.dm), "%s", dm ?: o ? o->dm : "");
	snprintf(n.chk, sizeof(n.chk), "%s", chk ?: o ? o->chk : "");
	snprintf(n.group, sizeof(n.group), "%s", group ?: o ? o->group : "");
	if (o && !strcmp(o->dm, n.dm) && !strcmp(o->chk, n.chk) && !strcmp(o->group, n.group))
		return;
	if (o && o->t0 >= t) {
		/* A second change at the same instant replaces the first. */
		*o = n;
		o->t0 = t;
		return;
	}
	if (o)
		o->t1 = t;
	if (m->npsegs < RP_MAX_PSEGS)
		m->psegs[m->npsegs++] = n;
}

/* A mark of path k. */
static void add_pmark(struct rp_model *m, int k, enum rp_pmark_kind kind, double t)
{
	if (m->npmarks < RP_MAX_PMARKS)
		m->pmarks[m->npmarks++] = (struct rp_pmark){.path = k, .kind = kind, .t = t};
}

/* The value of KEY= in a uevent's timeline text, into out. */
static bool uevent_val(const char *text, const char *key, char *out, size_t len)
{
	const char *p = strstr(text, key);
	if (!p)
		return false;
	p += strlen(key);
	size_t n = strcspn(p, " ");
	snprintf(out, len, "%.*s", (int)n, p);
	return true;
}

/* qsort order of paths: by port name. */
static int by_port(const void *a, const void *b)
{
	return strcmp(((const struct rp_path *)a)->port, ((const struct rp_path *)b)->port);
}

/* Path k failed (fail) or was reinstated at t, as dm-multipath said it. */
static void path_dm_event(struct rp_model *m, int k, bool fail, double t)
{
	if (fail)
		m->paths[k].nfail++;
	else
		m->paths[k].nreinstate++;
	m->paths[k].kernel_said = true;
	set_state(m, k, t, fail ? "failed" : "active", NULL, NULL);
}

/* Notes t as the first path failure when it is the earliest. */
static void first_fail(struct rp_model *m, double t)
{
	if (m->first_path_fail < NONE / 2 || t < m->first_path_fail)
		m->first_path_fail = t;
}

/* A kernel line at t: dm-multipath's "Failing path" / "Reinstating path". */
static void path_kernel_line(struct rp_model *m, const char *text, double t)
{
	const char *p;
	char devno[16];
	int k;

	if (!strstr(text, "device-mapper: multipath:") ||
	    !((p = strstr(text, "Failing path ")) || (p = strstr(text, "Reinstating path "))))
		return;
	bool fail = *p == 'F';
	p = strstr(p, "path ") + 5;
	snprintf(devno, sizeof(devno), "%.*s", (int)strcspn(p, ". "), p);
	if ((k = path_of_devno(m, devno)) < 0)
		return;
	add_pmark(m, k, fail ? RP_PM_KERN_FAILING : RP_PM_KERN_REINSTATING, t);
	path_dm_event(m, k, fail, t);
	if (fail)
		first_fail(m, t);
}

/* A uevent at t: dm-multipath's PATH_FAILED / PATH_REINSTATED; they say the dm state when the
 * kernel log has no dm line (!kernel_lines). */
static void path_uevent(struct rp_model *m, const char *text, double t, bool kernel_lines)
{
	char devno[16], act[24];
	int k;

	if (!strstr(text, "DM_TARGET=multipath") ||
	    !uevent_val(text, "DM_ACTION=", act, sizeof(act)) ||
	    !uevent_val(text, "DM_PATH=", devno, sizeof(devno)))
		return;
	bool fail = !strcmp(act, "PATH_FAILED");
	if ((!fail && strcmp(act, "PATH_REINSTATED")) || (k = path_of_devno(m, devno)) < 0)
		return;
	add_pmark(m, k, fail ? RP_PM_UEV_FAILED : RP_PM_UEV_REINSTATED, t);
	if (fail)
		m->paths[k].nfail_ev++;
	else
		m->paths[k].nreinstate_ev++;
	if (fail)
		first_fail(m, t);
	if (!kernel_lines)
		path_dm_event(m, k, fail, t);
}

/* See report_internal.h. */
void rp_build_paths(struct rp_model *m)
{
	static const char tag[] = "faultlun-agent: path ";
	const struct fl_result_event *tl = m->res.timeline;
	size_t i;
	bool kernel_lines = false;

	m->first_path_fail = NONE;
	m->failover_step = -1;
	if (!m->res.multipath)
		return;
	/* The paths as the observer names them, and whether the kernel printed dm's lines. */
	for (i = 0; i < m->res.ntimeline; i++) {
		const char *text = tl[i].text;
		const char *p = strstr(text, tag);
		char port[16], dev[16];
		if (p && sscanf(p + sizeof(tag) - 1, "%15s %15s", port, dev) == 2)
			path_of_port(m, port, dev);
		kernel_lines |= strstr(text, "device-mapper: multipath:") &&
				(strstr(text, "Failing path") || strstr(text, "Reinstating path"));
	}
	/* Bands in the order of the ports' names (A, B, ...), not of first sight. */
	qsort(m->paths, m->npaths, sizeof(m->paths[0]), by_port);
	for (i = 0; i < m->res.ntimeline; i++) {
		const char *src = tl[i].src;
		const char *text = tl[i].text;
		double t = tl[i].t - m->origin;
		const char *p;
		char port[16], dev[16], dm[16], chk[24], group[16];
		int prio, k;

		if (!strcmp(src, "agent") && (p = strstr(text, tag)) &&
		    sscanf(p + sizeof(tag) - 1, "%15s %15s %15s %23s %d %15s", port, dev, dm, chk,
			   &prio, group) == 6) {
			if ((k = path_of_port(m, port, dev)) >= 0)
				set_state(m, k, t, m->paths[k].kernel_said ? NULL : dm, chk, group);
		} else if (!strcmp(src, "kernel")) {
			path_kernel_line(m, text, t);
		} else if (!strcmp(src, "uevent")) {
			path_uevent(m, text, t, kernel_lines);
		}
	}
	/* The step running at the first failure, else the next to start. */
	if (m->first_path_fail > NONE / 2) {
		for (i = 0; i < m->res.nsteps; i++) {
			double b = m->res.steps[i].t1 - m->origin;
			if (b >= m->first_path_fail) {
				m->failover_step = (int)i;
				break;
			}
		}
	}
}

/* See report_internal.h. */
void rp_summary_paths(const struct rp_model *m, struct rp_sum_row **wp)
{
	struct rp_sum_row *w = *wp;
	if (!m->npaths)
		return;
	*++w = (struct rp_sum_row){.id = "sum-failover", .label = "failover"};
	const struct fl_result_step *st =
	    m->failover_step >= 0 && (size_t)m->failover_step < m->res.nsteps
		? &m->res.steps[m->failover_step]
		: NULL;
	int first = -1;
	for (size_t i = 0; i < m->npmarks && first < 0; i++)
		if ((m->pmarks[i].kind == RP_PM_UEV_FAILED ||
		     m->pmarks[i].kind == RP_PM_KERN_FAILING) &&
		    m->pmarks[i].t == m->first_path_fail)
			first = m->pmarks[i].path;
	if (m->first_path_fail < NONE / 2) {
		rp_sum_put(w, false, "no path failed");
	} else if (!st) {
		rp_sum_put(w, false, "path %s failed at %+.3f s; no step ran after it",
			   first >= 0 ? m->paths[first].port : "?", m->first_path_fail);
	} else {
		const char *err = st->errno_name ?: "?";
		double b = st->t1 - m->origin;
		long long sn = st->step;
		const char *op = st->op ?: "?";
		if (!strcmp(err, "OK")) {
			rp_sum_put(w, true, "%.0f ms", (b - m->first_path_fail) * 1000);
			w->em_class = "PASS";
			rp_sum_put(w, false,
				   ": path %s failed at %+.3f s, step %lld %s completed at %+.3f s",
				   first >= 0 ? m->paths[first].port : "?", m->first_path_fail, sn,
				   op, b);
		} else {
			rp_sum_put(w, true, "none");
			w->em_class = "FAIL";
			rp_sum_put(w, false,
				   ": path %s failed at %+.3f s, step %lld %s ended %s at %+.3f s",
				   first >= 0 ? m->paths[first].port : "?", m->first_path_fail, sn,
				   op, err, b);
		}
		snprintf(w->note, sizeof(w->note),
			 "from the first path failure dm reported to the end of the step it "
			 "met; the step took %.0f ms in all",
			 st->elapsed_ms);
	}
	*++w = (struct rp_sum_row){.id = "sum-paths", .label = "path failures"};
	int nf = 0, nr = 0;
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		nf += p->nfail;
		nr += p->nreinstate;
		w->sub[w->nsub].label = p->port;
		snprintf(w->sub[w->nsub].text, sizeof(w->sub[0].text),
			 "%s (%s): %d failed, %d reinstated (uevents %d / %d)", p->dev,
			 *p->devno ? p->devno : "?", p->nfail, p->nreinstate, p->nfail_ev,
			 p->nreinstate_ev);
		w->nsub++;
	}
	rp_sum_put(w, false, "%d failed, %d reinstated on %zu paths", nf, nr, m->npaths);
	snprintf(w->note, sizeof(w->note),
		 "dm-multipath's Failing path / Reinstating path lines; its PATH_FAILED / "
		 "PATH_REINSTATED uevents in brackets");
	*wp = w;
}

/* x of time t on the report's scale (as report_svg.c's ladder). */
static double xof(double t, int w, double tmin, double tmax)
{
	return LABEL_W + (t - tmin) * (w - LABEL_W - 10) / (tmax - tmin);
}

/* The fill of a path state. */
static const char *pseg_color(const struct rp_pseg *s)
{
	if (!strcmp(s->dm, "failed"))
		return "#f09a92";
	if (!strcmp(s->chk, "ghost"))
		return "#c9d3e6";
	if (!strcmp(s->chk, "ready") || !*s->chk)
		return "#bfe5cc";
	return "#f6d28b"; /* faulty, shaky, i/o_timeout, pending, ... */
}

/* See report_internal.h. */
void rp_svg_paths(FILE *f, const struct rp_model *m, int w)
{
	const int band_h = 24, gap = 16, top = 30;
	double tmin = m->tmin, tmax = m->tmax;
	int h = top + (int)m->npaths * (band_h + gap) + 6;

	fprintf(f,
		"<svg id=\"paths\" width=\"%d\" height=\"%d\" xmlns=\"http://www.w3.org/2000/svg\" "
		"font-size=\"11\" font-family=\"sans-serif\" data-paths=\"%zu\">\n",
		w, h, m->npaths);
	rp_svg_axis(f, 0, 12, h, w, tmin, tmax);
	for (size_t k = 0; k < m->npaths; k++) {
		const struct rp_path *p = &m->paths[k];
		int y = top + (int)k * (band_h + gap);
		fprintf(
		    f, "<g class=\"path-band\" data-path=\"%s\" data-dev=\"%s\" data-devno=\"%s\">",
		    p->port, p->dev, p->devno);
		fprintf(f, "<text x=\"4\" y=\"%d\" font-weight=\"bold\">path %s</text>", y + 16,
			p->port);
		fprintf(f, "<text x=\"60\" y=\"%d\" fill=\"#666\">%s %s</text>\n", y + 16, p->dev,
			p->devno);
		for (size_t i = 0; i < m->npsegs; i++) {
			const struct rp_pseg *s = &m->psegs[i];
			if (s->path != (int)k || s->t1 < tmin)
				continue;
			double x0 = xof(fmax(s->t0, tmin), w, tmin, tmax);
			double x1 = xof(fmin(s->t1, tmax), w, tmin, tmax);
			bool cur = !strcmp(s->group, "current");
			char label[64];
			snprintf(label, sizeof(label), "%s%s%s%s", s->dm, *s->chk ? "/" : "",
				 s->chk, cur ? " · current" : "");
			fprintf(f,
				"<g class=\"path-state%s\" data-path=\"%s\" data-dm=\"%s\" "
				"data-checker=\"%s\" data-group=\"%s\" data-t0=\"%.3f\" "
				"data-t1=\"%.3f\"><title>path %s %s: dm %s, checker %s, group %s, "
				"%+.3f .. %+.3f s</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
				"height=\"%d\" fill=\"%s\"%s/>",
				cur ? " current" : "", p->port, s->dm, s->chk, s->group, s->t0,
				s->t1, p->port, p->dev, s->dm, *s->chk ? s->chk : "?",
				*s->group ? s->group : "?", s->t0, s->t1, x0, y,
				x1 - x0 < 1 ? 1 : x1 - x0, band_h, pseg_color(s),
				cur ? " stroke=\"#1f5fbf\" stroke-width=\"2\"" : "");
			if (x1 - x0 > strlen(label) * 6 + 4)
				fprintf(f, "<text x=\"%.1f\" y=\"%d\" font-size=\"10\">", x0 + 3,
					y + 16);
			else if (x0 > w - 160) /* near the right edge: ends at the span's end */
				fprintf(f,
					"<text x=\"%.1f\" y=\"%d\" font-size=\"9\" "
					"fill=\"#444\" text-anchor=\"end\">",
					x1, y - 2);
			else
				fprintf(f,
					"<text x=\"%.1f\" y=\"%d\" font-size=\"9\" "
					"fill=\"#444\">",
					x0 + 1, y - 2);
			rp_esc(f, label);
			fprintf(f, "</text></g>\n");
		}
		/* Marks: the kernel's lines above the band's middle, uevents below. */
		for (size_t i = 0; i < m->npmarks; i++) {
			const struct rp_pmark *pm = &m->pmarks[i];
			if (pm->path != (int)k || pm->t < tmin || pm->t > tmax)
				continue;
			bool fail = pm->kind == RP_PM_UEV_FAILED || pm->kind == RP_PM_KERN_FAILING;
			bool uev = pm->kind == RP_PM_UEV_FAILED || pm->kind == RP_PM_UEV_REINSTATED;
			double x = xof(pm->t, w, tmin, tmax);
			int my = uev ? y + band_h : y;
			fprintf(f,
				"<g class=\"path-mark\" data-path=\"%s\" data-kind=\"%s\" "
				"data-t=\"%.3f\"><title>%s %s %s at %+.3f s</title>"
				"<path d=\"M%.1f %d l-4 %d h8 z\" fill=\"%s\"/></g>\n",
				p->port, rp_pmark_names[pm->kind], pm->t,
				uev ? "uevent" : "kernel:", rp_pmark_names[pm->kind], p->devno,
				pm->t, x, my, uev ? 7 : -7, fail ? "#b3261e" : "#1e7b34");
		}
		fprintf(f, "</g>\n");
	}
	fprintf(f, "</svg>\n");
}
