/* SPDX-License-Identifier: MIT */
/*
 * explore_merge.c - `faultlun explore merge [-o FILE] RESULTS...`: joins the
 * explore.json files of the shards of one exploration (`faultlun explore
 * --shard I/N`, run on many machines: a CI job matrix) into one results file
 * and one summary. RESULTS are output folders (their explore.json) or the
 * files themselves. Every file is read as hostile: bounded in size and
 * count, each shard checked to be of the same exploration (base, seed,
 * kernel, path, max_faults, shard count), no shard or trial twice, every
 * trial in its shard. Exit 0: no finding; 1: findings; 2: an error (named).
 */
#include "cli.h"
#include "cli_opts.h"
#include "fl_explore.h"

#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MERGE_MAX_FILE (64u << 20) /* bytes of one explore.json */

/* One shard's file, as read. */
struct shard {
	char file[4096];
	char from[4096]; /* its folder: where its trial and finding files are */
	json_t *doc;
	unsigned index, count;
};

/* What the shards must agree on, from the first one. */
static const char *const same_keys[] = {"base", "seed", "kernel", "path", "max_faults"};

/* Prints the usage. */
static void usage(FILE *out)
{
	fprintf(out, "usage: faultlun explore merge [-o FILE] RESULTS...\n"
		     "  RESULTS   `faultlun explore --shard I/N` output folders (or their\n"
		     "            explore.json) of one exploration\n"
		     "  -o FILE   the merged results (default explore-merged.json)\n"
		     "Exit status: 0 no finding, 1 findings, 2 an error.\n");
}

/* A whole number in [lo, hi] at key k of o, into *v. */
static bool get_uint(json_t *o, const char *k, json_int_t lo, json_int_t hi, unsigned *v)
{
	json_t *x = json_object_get(o, k);

	if (!json_is_integer(x) || json_integer_value(x) < lo || json_integer_value(x) > hi)
		return false;
	*v = (unsigned)json_integer_value(x);
	return true;
}

/* A finite number in [0, hi] at key k of o (0 when absent). */
static bool get_num(json_t *o, const char *k, double hi, double *v)
{
	json_t *x = json_object_get(o, k);

	*v = x ? json_number_value(x) : 0;
	return (!x || json_is_number(x)) && isfinite(*v) && *v >= 0 && *v <= hi;
}

/* Loads RESULTS p into s: its explore.json, bounded. 0, or -1 (message printed). */
static int load(const char *p, struct shard *s)
{
	struct stat st;
	json_error_t err;
	size_t n = strlen(p);

	if (n >= sizeof(s->from) - 16) {
		fprintf(stderr, "faultlun explore merge: %.64s...: path too long\n", p);
		return -1;
	}
	if (!stat(p, &st) && S_ISDIR(st.st_mode)) {
		while (n > 1 && p[n - 1] == '/')
			n--; /* shard-1/ names the folder shard-1 */
		snprintf(s->from, sizeof(s->from), "%.*s", (int)n, p);
		snprintf(s->file, sizeof(s->file), "%.4000s/explore.json", s->from);
	} else {
		const char *slash = strrchr(p, '/');

		snprintf(s->file, sizeof(s->file), "%s", p);
		snprintf(s->from, sizeof(s->from), "%.*s", slash ? (int)(slash - p) : 1,
			 slash ? p : ".");
	}
	if (stat(s->file, &st) || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "faultlun explore merge: %s: not a results file\n", s->file);
		return -1;
	}
	if ((unsigned long long)st.st_size > MERGE_MAX_FILE) {
		fprintf(stderr, "faultlun explore merge: %s: %lld bytes, more than %u\n", s->file,
			(long long)st.st_size, MERGE_MAX_FILE);
		return -1;
	}
	s->doc = json_load_file(s->file, JSON_REJECT_DUPLICATES, &err);
	if (!s->doc) {
		fprintf(stderr, "faultlun explore merge: %s:%d: %s\n", s->file, err.line, err.text);
		return -1;
	}
	return 0;
}

/* Checks s's document: the keys the merge reads, its shard, its trials. NULL, or why not. */
static const char *check_doc(struct shard *s)
{
	json_t *d = s->doc, *sh = json_object_get(d, "shard"),
	       *trials = json_object_get(d, "trials");
	unsigned v;
	double x;
	size_t i;
	json_t *t;

	if (!json_is_object(d) || !get_uint(d, "explore", 1, 1, &v))
		return "not a `faultlun explore` results file (\"explore\": 1)";
	if (!json_is_string(json_object_get(d, "base")) ||
	    !json_is_integer(json_object_get(d, "seed")) ||
	    !json_is_string(json_object_get(d, "kernel")) ||
	    !json_is_string(json_object_get(d, "path")) ||
	    !get_uint(d, "max_faults", 1, FL_EXPLORE_MAX_FAULTS, &v))
		return "base, seed, kernel, path or max_faults missing or of the wrong type";
	s->index = s->count = 1;
	if (sh && (!get_uint(sh, "count", 1, FL_EXPLORE_MAX_SHARDS, &s->count) ||
		   !get_uint(sh, "index", 1, s->count, &s->index)))
		return "\"shard\": expected {\"index\": I, \"count\": N}, 1 <= I <= N <= 1024";
	if (!json_is_array(trials) || json_array_size(trials) > FL_EXPLORE_MAX_TRIALS)
		return "\"trials\": expected a list of at most 100000 trials";
	json_array_foreach(trials, i, t)
	{
		const char *verdict = json_string_value(json_object_get(t, "verdict"));

		if (!get_uint(t, "trial", 1, FL_EXPLORE_MAX_TRIALS, &v) || !verdict ||
		    (strcmp(verdict, "pass") && strcmp(verdict, "finding") &&
		     strcmp(verdict, "skipped")))
			return "a trial without its number (1 to 100000) or its verdict";
		if ((v - 1) % s->count != s->index - 1)
			return "a trial that is not of the file's shard";
	}
	if (!get_num(json_object_get(d, "summary"), "seconds", 1e9, &x) ||
	    !get_num(json_object_get(d, "summary"), "boots", 1e9, &x))
		return "\"summary\": seconds or boots out of range";
	return NULL;
}

/* Is s of the same exploration as the first shard f? NULL, or the key that differs. */
static const char *differs(const struct shard *s, const struct shard *f)
{
	for (size_t k = 0; k < sizeof(same_keys) / sizeof(same_keys[0]); k++)
		if (!json_equal(json_object_get(s->doc, same_keys[k]),
				json_object_get(f->doc, same_keys[k])))
			return same_keys[k];
	return s->count != f->count ? "shard count" : NULL;
}

/* Orders trials by their number. */
static int by_trial(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "trial"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "trial"));

	return (x > y) - (x < y);
}

/* The trials of every shard, each with the folder it came from, by number; NULL on a repeat. */
static json_t *join_trials(struct shard *sh, size_t n, unsigned *findings)
{
	size_t total = 0, k = 0, i;
	json_t **all, *t, *out = NULL;

	for (size_t s = 0; s < n; s++)
		total += json_array_size(json_object_get(sh[s].doc, "trials"));
	all = calloc(total ? total : 1, sizeof(*all));
	if (!all)
		return NULL;
	for (size_t s = 0; s < n; s++)
		json_array_foreach(json_object_get(sh[s].doc, "trials"), i, t)
		{
			const char *f = json_string_value(json_object_get(t, "finding"));
			char path[8192];

			json_object_set_new(t, "from", json_string(sh[s].from));
			if (f) {
				snprintf(path, sizeof(path), "%.4000s/%.4000s", sh[s].from, f);
				json_object_set_new(t, "finding", json_string(path));
			}
			all[k++] = t;
		}
	qsort(all, total, sizeof(*all), by_trial);
	for (k = 1; k < total && by_trial(&all[k - 1], &all[k]); k++)
		;
	if (k < total) {
		fprintf(stderr, "faultlun explore merge: trial %lld is in two results files\n",
			(long long)json_integer_value(json_object_get(all[k], "trial")));
	} else if ((out = json_array())) {
		for (k = 0; k < total; k++) {
			const char *v = json_string_value(json_object_get(all[k], "verdict"));
			*findings += !strcmp(v, "finding");
			json_array_append(out, all[k]);
		}
	}
	free(all);
	return out;
}

/* The merged document and its summary lines on stdout. */
static json_t *merged(struct shard *sh, size_t n, json_t *trials, unsigned findings)
{
	const struct shard *f = &sh[0];
	json_t *have = json_array(), *missing = json_array(), *from = json_array();
	double secs = 0, boots = 0, x;
	unsigned ran = 0, skipped = 0;
	size_t i;
	json_t *t;
	bool *seen = calloc(f->count + 1, sizeof(*seen));

	for (size_t s = 0; s < n && seen; s++) {
		seen[sh[s].index] = true;
		json_array_append_new(from, json_string(sh[s].from));
		get_num(json_object_get(sh[s].doc, "summary"), "seconds", 1e9, &x);
		secs += x;
		get_num(json_object_get(sh[s].doc, "summary"), "boots", 1e9, &x);
		boots += x;
	}
	for (unsigned k = 1; seen && k <= f->count; k++)
		json_array_append_new(seen[k] ? have : missing, json_integer(k));
	free(seen);
	json_array_foreach(trials, i, t)
	{
		bool skip = !strcmp(json_string_value(json_object_get(t, "verdict")), "skipped");
		skipped += skip;
		ran += !skip;
	}
	printf("merged %zu of %u shards", json_array_size(have), f->count);
	if (json_array_size(missing)) {
		printf(" (missing:");
		json_array_foreach(missing, i, t) printf(" %lld", (long long)json_integer_value(t));
		printf(")");
	}
	printf(": %u trials, %u findings, %.0f seconds of trials, %.0f boots\n", ran, findings,
	       secs, boots);
	json_array_foreach(trials, i, t)
	{
		const char *f = json_string_value(json_object_get(t, "finding"));

		if (f)
			printf("t%04lld: finding (%s): %s: %s\n",
			       (long long)json_integer_value(json_object_get(t, "trial")),
			       json_string_value(json_object_get(t, "oracle")) ?: "?",
			       json_string_value(json_object_get(t, "evidence")) ?: "?", f);
	}
	return json_pack("{s:i, s:O, s:O, s:O, s:O, s:O, s:{s:i, s:o, s:o}, s:o, s:O, "
			 "s:{s:i, s:i, s:i, s:f, s:f, s:f}}",
			 "explore", 1, "base", json_object_get(f->doc, "base"), "seed",
			 json_object_get(f->doc, "seed"), "kernel",
			 json_object_get(f->doc, "kernel"), "path", json_object_get(f->doc, "path"),
			 "max_faults", json_object_get(f->doc, "max_faults"), "shards", "count",
			 (int)f->count, "merged", have, "missing", missing, "from", from, "trials",
			 trials, "summary", "trials", (int)ran, "skipped", (int)skipped, "findings",
			 (int)findings, "seconds", secs, "trials_per_hour",
			 secs > 0 ? ran * 3600.0 / secs : 0.0, "boots", boots);
}

/* Loads and checks the n shards of paths into sh. 0, or -1 (message printed). */
static int load_all(char **paths, size_t n, struct shard *sh)
{
	for (size_t s = 0; s < n; s++) {
		const char *why, *key;

		if (load(paths[s], &sh[s]))
			return -1;
		if ((why = check_doc(&sh[s]))) {
			fprintf(stderr, "faultlun explore merge: %s: %s\n", sh[s].file, why);
			return -1;
		}
		if (s && (key = differs(&sh[s], &sh[0]))) {
			fprintf(stderr,
				"faultlun explore merge: %s and %s are not of one exploration: "
				"their %s differs\n",
				sh[0].file, sh[s].file, key);
			return -1;
		}
		for (size_t k = 0; k < s; k++)
			if (sh[k].index == sh[s].index) {
				fprintf(
				    stderr,
				    "faultlun explore merge: %s and %s are both shard %u of %u\n",
				    sh[k].file, sh[s].file, sh[s].index, sh[s].count);
				return -1;
			}
	}
	return 0;
}

int cmd_explore_merge(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *out = "explore-merged.json";
	struct shard *sh = NULL;
	json_t *trials = NULL, *doc = NULL;
	unsigned findings = 0;
	size_t n;
	int opt, rc = 2;

	optind = 0;
	while ((opt = cli_getopt("explore merge", argc, argv, "o:h", longopts)) != -1) {
		if (opt == 'o') {
			out = optarg;
		} else if (opt == 'h') {
			usage(stdout);
			return 0;
		} else {
			cli_try_help("explore merge");
			return 2;
		}
	}
	n = (size_t)(argc - optind);
	if (!n || n > FL_EXPLORE_MAX_SHARDS) {
		fprintf(stderr, "faultlun explore merge: give 1 to %u results\n",
			FL_EXPLORE_MAX_SHARDS);
		usage(stderr);
		return 2;
	}
	sh = calloc(n, sizeof(*sh));
	if (sh && !load_all(argv + optind, n, sh) && (trials = join_trials(sh, n, &findings)) &&
	    (doc = merged(sh, n, trials, findings))) {
		if (json_dump_file(doc, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER))
			fprintf(stderr, "faultlun explore merge: cannot write %s\n", out);
		else
			rc = findings ? 1 : 0;
		printf("results: %s\n", out);
	}
	json_decref(doc);
	json_decref(trials);
	for (size_t s = 0; sh && s < n; s++)
		json_decref(sh[s].doc);
	free(sh);
	return rc;
}
