/* SPDX-License-Identifier: MIT */
/*
 * cmd_explore.c - `faultlun explore BASE --budget N|Dm|Ds [--seed S] ...`
 * (docs/explore.md): draws fault schedules on top of the scenario BASE
 * (explore/, fl_explore.h), runs them as trials in the VM lab, several per
 * boot (fl_vm_run_batch), judges each trial's run with the oracles, minimises
 * every finding by delta debugging on the kernel, and writes OUT/explore.json,
 * OUT/trials/tNNNN.json and OUT/findings/fN.json. Exit 0: no finding; 1:
 * findings; 2: usage or setup error; 77: qemu or the kernel cannot be had.
 */
#include "cli.h"
#include "cli_opts.h"
#include "fl_explore.h"
#include "fl_vm.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Bounds of the options. */
#define EXPLORE_MAX_BUDGET_S (7 * 86400)
#define EXPLORE_MAX_PER_BOOT 64
#define EXPLORE_MIN_ROUNDS 8 /* delta-debugging rounds per finding at most */

/* One trial: its files and what the oracles said. */
struct trial {
	unsigned n;
	char file[PATH_MAX], dir[PATH_MAX];
	json_t *schedule;
	int rc;
	struct fl_finding f;
};

/* The state of one exploration. */
struct explore {
	struct fl_explore_base base;
	struct fl_vm_opts vm;
	const char *base_file;
	char out[PATH_MAX - 256];
	uint64_t seed;
	unsigned max_trials, per_boot, max_faults, boots, nfindings;
	unsigned shard, nshards; /* --shard I/N: the trials t with t % N == I % N */
	double budget_s;
	bool minimise, list, tmf_transport;
	size_t want_steps;
	json_t *trials; /* explore.json's "trials" */
	struct timespec t0;
};

/* Prints the usage. */
static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: faultlun explore BASE --budget N|Dm|Ds [options]\n"
	    "       faultlun explore merge [-o FILE] RESULTS...   join the shards' results\n"
	    "  --budget N|Dm|Ds  N trials, or D minutes / seconds of trials\n"
	    "  --seed S          the schedules' seed (default 1)\n"
	    "  --kernel K        the guest's kernel, as `faultlun vm --kernel` (default stock)\n"
	    "  --modules DIR     the kernel image's module tree\n"
	    "  --path iscsi|tcmu the path to the LUN (default iscsi)\n"
	    "  --out DIR         results (default faultlun-explore)\n"
	    "  --per-boot M      trials per boot of the guest (default 8)\n"
	    "  --max-faults K    fault rules per schedule at most (default 3, at most %d)\n"
	    "  --no-minimise     report findings as found, without minimising them\n"
	    "  --rules-only      draw rules only (over iSCSI TMF answers and transport\n"
	    "                    faults are drawn too, 2 in 10 entries each)\n"
	    "  --shard I/N       run only trials I, I+N, I+2N, ... (1 <= I <= N <= 1024)\n"
	    "  --list            print the schedules the seed draws (one JSON line a\n"
	    "                    trial; --budget N trials), run nothing\n"
	    "  --cache DIR, --accel auto|kvm|tcg, --timeout S, --memory MB, --cpus N,\n"
	    "  --tcg-thread single|multi\n"
	    "                    as `faultlun vm`\n"
	    "  -h, --help        this text\n"
	    "  -V, --version     print the version\n"
	    "Exit status: 0 no finding, 1 findings, 2 usage or setup error,\n"
	    "77 qemu or the kernel package cannot be had.\n",
	    FL_EXPLORE_MAX_FAULTS);
}

/* Seconds since the exploration began. */
static double elapsed(const struct explore *ex)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - ex->t0.tv_sec) + (double)(t.tv_nsec - ex->t0.tv_nsec) / 1e9;
}

/* Parses --budget: "N" trials, "Dm" minutes, "Ds" seconds. 0, or -1 (message printed). */
static int parse_budget(const char *s, struct explore *ex)
{
	size_t len = strlen(s);
	char num[32];
	uint64_t v;

	if (len && len < sizeof(num) && (s[len - 1] == 'm' || s[len - 1] == 's')) {
		snprintf(num, sizeof(num), "%.*s", (int)len - 1, s);
		if (cli_opt_uint(
			"explore", "--budget", num, 1,
			s[len - 1] == 'm' ? EXPLORE_MAX_BUDGET_S / 60 : EXPLORE_MAX_BUDGET_S, &v))
			return -1;
		ex->budget_s = (double)v * (s[len - 1] == 'm' ? 60 : 1);
		ex->max_trials = FL_EXPLORE_MAX_TRIALS;
		return 0;
	}
	if (cli_opt_uint("explore", "--budget", s, 1, FL_EXPLORE_MAX_TRIALS, &v))
		return -1;
	ex->max_trials = (unsigned)v;
	return 0;
}

/* Parses --shard "I/N" (1 <= I <= N <= FL_EXPLORE_MAX_SHARDS). 0, or -1 (message printed). */
static int parse_shard(const char *s, struct explore *ex)
{
	char i[32];
	const char *slash = strchr(s, '/');
	uint64_t a, b;

	if (!slash || (size_t)(slash - s) >= sizeof(i)) {
		fprintf(stderr, "faultlun explore: --shard: expected I/N, got \"%s\"\n", s);
		return -1;
	}
	snprintf(i, sizeof(i), "%.*s", (int)(slash - s), s);
	if (cli_opt_uint("explore", "--shard's N", slash + 1, 1, FL_EXPLORE_MAX_SHARDS, &b) ||
	    cli_opt_uint("explore", "--shard's I", i, 1, b, &a))
		return -1;
	ex->shard = (unsigned)a;
	ex->nshards = (unsigned)b;
	return 0;
}

/* mkdir -p of one level under the output folder. 0, or -1 (message printed). */
static int make_dir(const char *dir)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "faultlun explore: cannot create %s: %s\n", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* Reads at most FL_EXPLORE_MAX_KMSG bytes of file into a new buffer (*len); NULL: none. */
static char *read_bounded(const char *file, size_t *len)
{
	FILE *f = fopen(file, "r");
	char *buf;

	*len = 0;
	if (!f)
		return NULL;
	buf = malloc(FL_EXPLORE_MAX_KMSG + 1);
	if (buf) {
		*len = fread(buf, 1, FL_EXPLORE_MAX_KMSG, f);
		buf[*len] = 0;
	}
	fclose(f);
	return buf;
}

/* Judges the run in dir (status rc) with the oracles into *f; whether one fired. */
static bool judge_dir(const struct explore *ex, const char *dir, int rc, struct fl_finding *f)
{
	char path[PATH_MAX + 32], err[256];
	struct fl_result r;
	size_t klen;
	char *kmsg;
	bool hit, have;

	snprintf(path, sizeof(path), "%s/result.json", dir);
	have = fl_result_read(path, &r, err, sizeof(err)) == 0;
	snprintf(path, sizeof(path), "%s/guest/kmsg.txt", dir);
	kmsg = read_bounded(path, &klen);
	hit = fl_explore_judge(rc, have ? &r : NULL, kmsg, klen, ex->want_steps, f);
	free(kmsg);
	fl_result_free(&r);
	return hit;
}

/* Runs files[0..n) in one boot (their run folders dirs) into rcs; share under OUT/boots. */
static void run_boot(struct explore *ex, const char *const *files, const char *const *dirs,
		     size_t n, int *rcs)
{
	char share[PATH_MAX];

	ex->boots++;
	if (n == 1) {
		rcs[0] = fl_vm_run(files[0], &ex->vm, dirs[0]);
		return;
	}
	snprintf(share, sizeof(share), "%s/boots/b%04u", ex->out, ex->boots);
	fl_vm_run_batch(files, n, &ex->vm, dirs, share, rcs);
}

/*
 * Draws trial t's schedule and writes its scenario (lint must pass; another
 * draw of the same trial when it does not, up to 16). 0, or -1.
 */
static int draw_trial(struct explore *ex, struct trial *t)
{
	char name[64];

	snprintf(name, sizeof(name), "explore-t%04u", t->n);
	snprintf(t->file, sizeof(t->file), "%s/trials/t%04u.json", ex->out, t->n);
	snprintf(t->dir, sizeof(t->dir), "%s/runs/t%04u", ex->out, t->n);
	for (unsigned attempt = 0; attempt < 16; attempt++) {
		json_t *doc;
		int rc;

		t->schedule = fl_explore_draw(&ex->base, ex->seed, t->n, attempt, ex->max_faults);
		doc = fl_explore_scenario(&ex->base, t->schedule, UINT32_MAX, name);
		rc = doc ? fl_explore_write_linted(doc, t->file, ex->base.frontend, attempt == 15)
			 : -1;
		json_decref(doc);
		if (!rc)
			return 0;
		json_decref(t->schedule);
		t->schedule = NULL;
	}
	fprintf(stderr, "faultlun explore: trial %u: no schedule drawn passes lint\n", t->n);
	return -1;
}

/* One minimisation: the finding's trial, the oracle it tripped, the round. */
struct minimise {
	struct explore *ex;
	json_t *schedule; /* the rules candidates are drawn from */
	enum fl_oracle oracle;
	unsigned fno, round;
};

/*
 * Runs candidate schedules scheds[0..n) (n <= 64) in one boot: fails[i] when
 * scheds[i] trips the same oracle. 0, or -1 when nothing could run.
 */
static int run_schedules(struct minimise *m, json_t *const *scheds, size_t n, bool *fails)
{
	char(*files)[PATH_MAX] = calloc(n, PATH_MAX), (*dirs)[PATH_MAX] = calloc(n, PATH_MAX);
	const char *fp[64], *dp[64];
	size_t idx[64], nr = 0;
	int rcs[64];

	if (!files || !dirs || n > 64) {
		free(files);
		free(dirs);
		return -1;
	}
	m->round++;
	for (size_t i = 0; i < n; i++) {
		char name[64];
		json_t *doc;

		fails[i] = false;
		snprintf(name, sizeof(name), "explore-f%u-r%u-c%zu", m->fno, m->round, i);
		snprintf(files[i], PATH_MAX, "%s/findings/f%u.d/%s.json", m->ex->out, m->fno, name);
		snprintf(dirs[i], PATH_MAX, "%s/findings/f%u.d/%s", m->ex->out, m->fno, name);
		doc = fl_explore_scenario(&m->ex->base, scheds[i], UINT32_MAX, name);
		if (doc && !fl_explore_write_linted(doc, files[i], m->ex->base.frontend, false)) {
			fp[nr] = files[i];
			dp[nr] = dirs[i];
			idx[nr++] = i;
		}
		json_decref(doc);
	}
	if (nr)
		run_boot(m->ex, fp, dp, nr, rcs);
	for (size_t j = 0; j < nr; j++) {
		struct fl_finding f;

		fails[idx[j]] = judge_dir(m->ex, dp[j], rcs[j], &f) && f.oracle == m->oracle;
	}
	printf("  minimise f%u round %u: %zu candidates in one boot\n", m->fno, m->round, nr);
	fflush(stdout);
	free(files);
	free(dirs);
	return nr ? 0 : -1;
}

/* The rules of schedule whose bits are set in keep: a new array. */
static json_t *kept_rules(json_t *schedule, uint32_t keep)
{
	json_t *out = json_array(), *r;
	size_t i;

	json_array_foreach(schedule, i, r) if (i < 32 && (keep >> i & 1))
	    json_array_append_new(out, json_deep_copy(r));
	return out;
}

/* fl_ddmin's test: the candidate masks over m->schedule, run in one boot. */
static int min_test(void *ctx, const uint32_t *cands, size_t n, bool *fails)
{
	struct minimise *m = ctx;
	json_t *scheds[64] = {NULL};
	int rc;

	if (n > 64)
		return -1;
	for (size_t i = 0; i < n; i++)
		scheds[i] = kept_rules(m->schedule, cands[i]);
	rc = run_schedules(m, scheds, n, fails);
	for (size_t i = 0; i < n; i++)
		json_decref(scheds[i]);
	return rc;
}

/*
 * Rule i of rules with its numeric parameters at their descriptors' minimum
 * and its count window at its least (after 0, times 1): a new array, or NULL
 * when nothing changes.
 */
static json_t *shrunk(json_t *rules, size_t i)
{
	json_t *out = json_deep_copy(rules), *r = json_array_get(out, i);
	json_t *action = json_object_get(r, "action"), *match = json_object_get(r, "match");

	if (!match) /* a transport fault's count is in its own match */
		match = json_object_get(json_object_get(r, "transport"), "match");
	bool changed = false;
	const char *key;
	json_t *v;

	json_object_foreach(action, key, v)
	{
		const struct fl_action *d = fl_action_by_name(key);

		for (size_t k = 0; d && k < d->nparams; k++) {
			const struct fl_action_param *p = &d->params[k];

			if (strcmp(p->key, key) || (p->type != FL_PARAM_UINT && !fl_param_is_ms(p)))
				continue;
			if (json_is_number(v) && json_number_value(v) > p->min) {
				json_object_set_new(action, key, json_integer((json_int_t)p->min));
				changed = true;
			}
		}
	}
	if (json_integer_value(json_object_get(match, "after")) > 0) {
		json_object_set_new(match, "after", json_integer(0));
		changed = true;
	}
	if (json_integer_value(json_object_get(match, "times")) > 1) {
		json_object_set_new(match, "times", json_integer(1));
		changed = true;
	}
	if (!changed) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/*
 * Shrinks the numbers of *rules in one boot: each rule's shrunk form is a
 * candidate; those that still trip the oracle are kept together, confirmed
 * in one more boot when there are several. *rules is replaced by the result.
 */
static void shrink_numbers(struct minimise *m, json_t **rules)
{
	size_t n = json_array_size(*rules), nc = 0, which[FL_EXPLORE_MAX_FAULTS], nok = 0;
	json_t *cands[FL_EXPLORE_MAX_FAULTS], *all = json_deep_copy(*rules);
	bool fails[FL_EXPLORE_MAX_FAULTS];

	for (size_t i = 0; i < n && i < FL_EXPLORE_MAX_FAULTS; i++)
		if ((cands[nc] = shrunk(*rules, i)))
			which[nc++] = i;
	if (nc && !run_schedules(m, cands, nc, fails))
		for (size_t c = 0; c < nc; c++)
			if (fails[c]) {
				json_array_set(all, which[c], json_array_get(cands[c], which[c]));
				nok++;
			}
	for (size_t c = 0; c < nc; c++)
		json_decref(cands[c]);
	if (nok > 1 && (run_schedules(m, &all, 1, fails) || !fails[0]))
		nok = 0; /* together they no longer fail: keep the rules as they were */
	if (nok) {
		json_decref(*rules);
		*rules = all;
	} else {
		json_decref(all);
	}
}

/*
 * Minimises trial t's schedule for its finding (delta debugging over its
 * rules, then their numbers) and writes OUT/findings/fN.json: BASE with the
 * smallest schedule found and, for the kernel oracle, an expectation that
 * the splat does not appear. Returns the file's rules (a new array).
 */
static json_t *minimise_finding(struct explore *ex, const struct trial *t, unsigned fno, char *file,
				size_t len)
{
	struct minimise m = {.ex = ex, .schedule = t->schedule, .oracle = t->f.oracle, .fno = fno};
	size_t n = json_array_size(t->schedule);
	uint32_t all = n >= 32 ? UINT32_MAX : (UINT32_C(1) << n) - 1, keep = all;
	char dir[PATH_MAX], name[32];
	json_t *rules, *doc;

	snprintf(dir, sizeof(dir), "%s/findings/f%u.d", ex->out, fno);
	if (ex->minimise && !make_dir(dir)) {
		keep = fl_ddmin(all, min_test, &m, EXPLORE_MIN_ROUNDS);
		rules = kept_rules(t->schedule, keep);
		shrink_numbers(&m, &rules);
	} else {
		rules = kept_rules(t->schedule, keep);
	}
	snprintf(name, sizeof(name), "explore-f%u", fno);
	snprintf(file, len, "%s/findings/f%u.json", ex->out, fno);
	doc = fl_explore_scenario(&ex->base, rules, UINT32_MAX, name);
	if (doc && t->f.splat) {
		json_t *check = json_object_get(doc, "check"),
		       *expect = json_object_get(check, "expect");

		if (json_is_array(expect))
			json_array_append_new(
			    expect, json_pack("{s:s, s:i}", "kernel_log", t->f.splat, "count", 0));
	}
	if (doc && fl_explore_write_linted(doc, file, ex->base.frontend, true))
		fprintf(stderr, "faultlun explore: %s: the finding's scenario does not lint\n",
			file);
	json_decref(doc);
	return rules;
}

/* The file's name relative to the output folder. */
static const char *rel(const struct explore *ex, const char *file)
{
	size_t n = strlen(ex->out);

	return !strncmp(file, ex->out, n) && file[n] == '/' ? file + n + 1 : file;
}

/* Judges trial t's run, minimises a finding, and adds its line to explore.json. */
static void record_trial(struct explore *ex, struct trial *t)
{
	json_t *o = json_pack("{s:i, s:s, s:O, s:i}", "trial", (int)t->n, "file", rel(ex, t->file),
			      "schedule", t->schedule, "status", t->rc);
	char file[PATH_MAX];

	if (t->rc == FL_VM_SKIP) {
		json_object_set_new(o, "verdict", json_string("skipped"));
	} else if (judge_dir(ex, t->dir, t->rc, &t->f)) {
		unsigned fno = ++ex->nfindings;
		json_t *rules;

		printf("t%04u: finding (%s): %s\n", t->n, fl_oracle_name(t->f.oracle),
		       t->f.evidence);
		fflush(stdout);
		json_object_set_new(o, "verdict", json_string("finding"));
		json_object_set_new(o, "oracle", json_string(fl_oracle_name(t->f.oracle)));
		json_object_set_new(o, "evidence", json_string(t->f.evidence));
		rules = minimise_finding(ex, t, fno, file, sizeof(file));
		json_object_set_new(o, "finding", json_string(rel(ex, file)));
		json_object_set_new(o, "minimised", rules);
		printf("t%04u: %zu of %zu rules left: %s\n", t->n, json_array_size(rules),
		       json_array_size(t->schedule), file);
	} else {
		printf("t%04u: nothing found (%zu rules)\n", t->n, json_array_size(t->schedule));
		json_object_set_new(o, "verdict", json_string("pass"));
	}
	json_array_append_new(ex->trials, o);
	fflush(stdout);
}

/*
 * Runs batches of trials until the budget is spent. Returns the number of
 * trials run, skipped ones aside (*skipped counts those).
 */
static unsigned run_trials(struct explore *ex, unsigned *skipped)
{
	struct trial *ts = calloc(EXPLORE_MAX_PER_BOOT, sizeof(*ts));
	unsigned next = ex->shard, ran = 0;

	*skipped = 0;
	while (ts && next <= ex->max_trials && (!ex->budget_s || elapsed(ex) < ex->budget_s)) {
		const char *files[EXPLORE_MAX_PER_BOOT], *dirs[EXPLORE_MAX_PER_BOOT];
		int rcs[EXPLORE_MAX_PER_BOOT];
		size_t n = 0;

		while (n < ex->per_boot && next <= ex->max_trials) {
			struct trial *t = &ts[n];

			memset(t, 0, sizeof(*t));
			t->n = next;
			next += ex->nshards;
			if (draw_trial(ex, t))
				continue;
			files[n] = t->file;
			dirs[n++] = t->dir;
		}
		if (!n)
			break;
		printf("boot %u: trials t%04u..t%04u\n", ex->boots + 1, ts[0].n, ts[n - 1].n);
		fflush(stdout);
		run_boot(ex, files, dirs, n, rcs);
		for (size_t i = 0; i < n; i++) {
			ts[i].rc = rcs[i];
			*skipped += rcs[i] == FL_VM_SKIP;
			ran += rcs[i] != FL_VM_SKIP;
			record_trial(ex, &ts[i]);
			json_decref(ts[i].schedule);
		}
		if (!ran)
			break; /* the lab cannot run: no use drawing more */
	}
	free(ts);
	return ran;
}

/*
 * --list: draws the shard's trials up to the budget as run_trials would and
 * prints each one's schedule as a JSON line. 0, or -1.
 */
static int list_trials(struct explore *ex)
{
	for (unsigned n = ex->shard; n <= ex->max_trials; n += ex->nshards) {
		struct trial t = {.n = n};
		json_t *o;
		char *line;

		if (draw_trial(ex, &t))
			return -1;
		unlink(t.file);
		o = json_pack("{s:i, s:o}", "trial", (int)n, "schedule", t.schedule);
		line = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
		json_decref(o);
		if (!line)
			return -1;
		printf("%s\n", line);
		free(line);
	}
	return fflush(stdout) ? -1 : 0;
}

/* Writes OUT/explore.json and prints the summary. 0, or -1. */
static int write_results(struct explore *ex, unsigned ran, unsigned skipped)
{
	double s = elapsed(ex), per_hour = s > 0 ? ran * 3600.0 / s : 0;
	char file[PATH_MAX];
	json_t *doc;
	int rc;

	snprintf(file, sizeof(file), "%s/explore.json", ex->out);
	doc = json_pack("{s:i, s:s, s:I, s:s, s:s, s:i, s:i, s:{s:i, s:i}, s:o, "
			"s:{s:i, s:i, s:i, s:f, s:f, s:i}}",
			"explore", 1, "base", ex->base_file, "seed", (json_int_t)ex->seed, "kernel",
			ex->vm.kernel ? ex->vm.kernel : "stock", "path", ex->vm.path, "per_boot",
			(int)ex->per_boot, "max_faults", (int)ex->max_faults, "shard", "index",
			(int)ex->shard, "count", (int)ex->nshards, "trials",
			json_incref(ex->trials), "summary", "trials", (int)ran, "skipped",
			(int)skipped, "findings", (int)ex->nfindings, "seconds", s,
			"trials_per_hour", per_hour, "boots", (int)ex->boots);
	rc = doc ? json_dump_file(doc, file, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : -1;
	json_decref(doc);
	if (rc < 0)
		fprintf(stderr, "faultlun explore: cannot write %s\n", file);
	printf("%u trials, %u findings, %.0f seconds, %.1f trials/hour (%u boots", ran,
	       ex->nfindings, s, per_hour, ex->boots);
	if (skipped)
		printf(", %u trials skipped", skipped);
	printf(")\nresults: %s\n", file);
	return rc < 0 ? -1 : 0;
}

/* Loads BASE (it must lint for the path) and creates the output folders. 0, or -1. */
static int setup(struct explore *ex)
{
	static const char *const sub[] = {"", "/trials", "/runs", "/boots", "/findings"};
	struct fl_scenario *sc = NULL;
	struct fl_diags d = {0};
	json_error_t jerr;
	char err[256], dir[PATH_MAX];
	json_t *doc;
	int rc;

	ex->base.frontend = !strcmp(ex->vm.path, "tcmu") ? FL_FE_TCMU : FL_FE_ISCSI;
	rc = fl_scenario_load_file(ex->base_file, ex->base.frontend, &sc, &d);
	if (rc < 0)
		fl_diags_print(&d, stderr);
	fl_diags_free(&d);
	fl_scenario_free(sc);
	if (rc < 0) {
		fprintf(stderr, "faultlun explore: %s: not a valid scenario for path %s\n",
			ex->base_file, ex->vm.path);
		return -1;
	}
	doc = json_load_file(ex->base_file, JSON_REJECT_DUPLICATES, &jerr);
	rc = doc ? fl_explore_base_init(&ex->base, doc, ex->vm.path, err, sizeof(err)) : -1;
	json_decref(doc);
	ex->base.tmf_transport = ex->tmf_transport;
	if (rc < 0) {
		fprintf(stderr, "faultlun explore: %s: %s\n", ex->base_file, doc ? err : jerr.text);
		return -1;
	}
	ex->want_steps =
	    json_array_size(json_object_get(json_object_get(ex->base.doc, "check"), "workload"));
	if (ex->list) { /* the trials it lints go to a folder of its own, removed after */
		char tmp[] = "/tmp/faultlun-explore-list-XXXXXX";

		if (!mkdtemp(tmp)) {
			fprintf(stderr, "faultlun explore: mkdtemp: %s\n", strerror(errno));
			return -1;
		}
		snprintf(ex->out, sizeof(ex->out), "%s", tmp);
	}
	for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		snprintf(dir, sizeof(dir), "%s%s", ex->out, sub[i]);
		if (make_dir(dir))
			return -1;
	}
	return 0;
}

/* Removes --list's folder: the trial files are gone, the folders empty. */
static void list_cleanup(struct explore *ex)
{
	static const char *const sub[] = {"/trials", "/runs", "/boots", "/findings", ""};
	char dir[PATH_MAX];

	for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		snprintf(dir, sizeof(dir), "%s%s", ex->out, sub[i]);
		rmdir(dir);
	}
}

/*
 * Applies one of explore's own options, opt with its argument in optarg, to
 * ex; sets *budget for --budget. 0, 1 (help printed), or -1 (usage error,
 * message printed).
 */
static int explore_opt(struct explore *ex, int opt, bool *budget)
{
	static const char *const path_words[] = {"iscsi", "tcmu", NULL};
	uint64_t v;
	int bad = 0;

	switch (opt) {
	case 'b':
		bad = parse_budget(optarg, ex);
		*budget = true;
		break;
	case 's':
		bad = cli_opt_uint("explore", "--seed", optarg, 0, INT64_MAX, &ex->seed);
		break;
	case 'K':
		ex->vm.kernel = strcmp(optarg, "stock") ? optarg : NULL;
		break;
	case 'M':
		ex->vm.modules = optarg;
		break;
	case 'p':
		bad = cli_opt_word("explore", "--path", optarg, path_words);
		ex->vm.path = optarg;
		break;
	case 'o':
		if (strlen(optarg) >= sizeof(ex->out)) {
			fprintf(stderr, "faultlun explore: --out: a path of at most %zu bytes\n",
				sizeof(ex->out) - 1);
			return -1;
		}
		snprintf(ex->out, sizeof(ex->out), "%s", optarg);
		break;
	case 'n':
		bad = cli_opt_uint("explore", "--per-boot", optarg, 1, EXPLORE_MAX_PER_BOOT, &v);
		ex->per_boot = (unsigned)v;
		break;
	case 'f':
		bad = cli_opt_uint("explore", "--max-faults", optarg, 1, FL_EXPLORE_MAX_FAULTS, &v);
		ex->max_faults = (unsigned)v;
		break;
	case 'N':
		ex->minimise = false;
		break;
	case 'T': /* the default since TMF answers and transport faults meet only the workload */
		ex->tmf_transport = true;
		break;
	case 'R':
		ex->tmf_transport = false;
		break;
	case 'S':
		bad = parse_shard(optarg, ex);
		break;
	case 'L':
		ex->list = true;
		break;
	case 'h':
		usage(stdout);
		return 1;
	case 'V':
		cli_print_version(stdout);
		return 1;
	default:
		cli_try_help("explore");
		return -1;
	}
	return bad ? -1 : 0;
}

/* Checks the operand and the options taken together. 0, or -1 (message printed). */
static int check_operands(struct explore *ex, int argc, char **argv, bool budget)
{
	if (optind != argc - 1 || !budget) {
		fprintf(stderr, "faultlun explore: %s\n",
			optind != argc - 1 ? "give one BASE scenario" : "--budget is required");
		usage(stderr);
		return -1;
	}
	if (ex->list && ex->budget_s > 0) {
		fprintf(stderr, "faultlun explore: --list draws a number of trials: --budget N\n");
		return -1;
	}
	if (ex->vm.modules && !ex->vm.kernel) {
		fprintf(stderr, "faultlun explore: --modules goes with --kernel IMAGE\n");
		return -1;
	}
	ex->base_file = argv[optind];
	return 0;
}

/* Reads the options into ex. 0, 1 (help printed), or -1 (usage error, message printed). */
static int parse_args(struct explore *ex, int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"budget", required_argument, NULL, 'b'},
	    {"seed", required_argument, NULL, 's'},
	    {"kernel", required_argument, NULL, 'K'},
	    {"modules", required_argument, NULL, 'M'},
	    {"path", required_argument, NULL, 'p'},
	    {"out", required_argument, NULL, 'o'},
	    {"per-boot", required_argument, NULL, 'n'},
	    {"max-faults", required_argument, NULL, 'f'},
	    {"no-minimise", no_argument, NULL, 'N'},
	    {"tmf-transport", no_argument, NULL, 'T'},
	    {"rules-only", no_argument, NULL, 'R'},
	    {"help", no_argument, NULL, 'h'},
	    {"shard", required_argument, NULL, 'S'},
	    {"list", no_argument, NULL, 'L'},
	    {"version", no_argument, NULL, 'V'},
	    CLI_VM_LONGOPTS,
	    {NULL, 0, NULL, 0},
	};
	bool budget = false;
	int opt;

	optind = 0;
	while ((opt = cli_getopt("explore", argc, argv, "hV", longopts)) != -1) {
		int bad = cli_vm_opt("explore", opt, optarg, &ex->vm);

		if (bad) {
			if (bad < 0)
				return -1;
			continue;
		}
		bad = explore_opt(ex, opt, &budget);
		if (bad)
			return bad;
	}
	return check_operands(ex, argc, argv, budget);
}

int cmd_explore(int argc, char **argv)
{
	struct explore ex = {.tmf_transport = true,
			     .vm = {.accel = "auto", .path = "iscsi", .quiet = true},
			     .seed = 1,
			     .per_boot = 8,
			     .max_faults = 3,
			     .minimise = true,
			     .shard = 1,
			     .nshards = 1,
			     .out = "faultlun-explore"};
	unsigned ran, skipped;
	int rc;

	if (argc > 1 && !strcmp(argv[1], "merge"))
		return cmd_explore_merge(argc - 1, argv + 1);
	rc = parse_args(&ex, argc, argv);
	if (rc)
		return rc > 0 ? 0 : 2;
	if (setup(&ex))
		return 2;
	if (ex.list) {
		rc = list_trials(&ex);
		list_cleanup(&ex);
		fl_explore_base_free(&ex.base);
		return rc ? 2 : 0;
	}
	ex.trials = json_array();
	clock_gettime(CLOCK_MONOTONIC, &ex.t0);
	printf("explore %s: seed %llu, path %s, kernel %s, %u trials per boot, at most %u faults",
	       ex.base_file, (unsigned long long)ex.seed, ex.vm.path,
	       ex.vm.kernel ? ex.vm.kernel : "stock", ex.per_boot, ex.max_faults);
	if (ex.nshards > 1)
		printf(", shard %u of %u", ex.shard, ex.nshards);
	printf("\n");
	ran = run_trials(&ex, &skipped);
	rc = write_results(&ex, ran, skipped);
	json_decref(ex.trials);
	fl_explore_base_free(&ex.base);
	if (!ran && skipped) {
		fprintf(stderr, "faultlun explore: skipped (no qemu or no kernel package)\n");
		return 77;
	}
	if (rc || !ran)
		return 2;
	return ex.nfindings ? 1 : 0;
}
