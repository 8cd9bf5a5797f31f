// SPDX-License-Identifier: MIT
/*
 * scenario_files.c - hostile scenario files: `faultlun lint` and `faultlun
 * serve` must answer each crafted file with a clear error (or accept it)
 * within a time bound, with a peak RSS within a small multiple of the file,
 * and the two must agree on every file (docs/robustness.md, "Scenario files").
 *
 *   fl_scenario_files MODE FAULTLUN WORKDIR
 *
 * Modes (each writes its file(s) under WORKDIR):
 *   unknown-keys  100000 unknown keys at the top level (1.3 MB)
 *   rules         90000 rules (3.9 MB, over the cap on list entries), 1025
 *                 rules (over the rule cap), 1024 rules with an id given
 *                 twice, 131000 check steps, 1024 rules (accepted)
 *   dup-key       a key given again after 60000 members
 *   integers      10 MB of integers (over the size cap), and 3.9 MB of them in
 *                 lists of 3601 (over the cap on JSON values)
 *   nested-keys   64 levels of 15000-byte keys above 60000 short members
 *   agree         a table of small scenarios (LUN sizes, block sizes, ...):
 *                 lint and serve both accept or both refuse each
 * Each run of lint or serve is a child with a bound of 2 s of CPU (4 s under
 * ASan; killed after 30 s) and,
 * outside sanitizer builds, a 1 GiB address-space limit, so that code that is
 * quadratic or memory-hungry fails the test instead of the machine.
 * Exit 0 pass, 1 fail.
 */
#include "fl_harness.h"
#include "fl_test.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * How long one lint or serve of a crafted file may take, in CPU time (the
 * wall time depends on what else the machine runs).
 */
#define TIME_BOUND_MS (FL_SANITIZED ? 4000 : 2000) /* ASan: 2 to 3 times slower */
/* When a child is killed (the quadratic code takes minutes on some files). */
#define KILL_MS 30000

static const char *faultlun, *workdir;
static long base_kib; /* peak RSS of lint on a tiny scenario */

/* A growing text buffer for the generators. */
struct text {
	char *s;
	size_t n, cap;
};

/* Appends printf output to t. */
static void tprintf(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tprintf(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int k;

	for (;;) {
		va_start(ap, fmt);
		k = vsnprintf(t->s ? t->s + t->n : NULL, t->s ? t->cap - t->n : 0, fmt, ap);
		va_end(ap);
		if (k < 0)
			abort();
		if (t->s && t->n + (size_t)k < t->cap) {
			t->n += (size_t)k;
			return;
		}
		t->cap = (t->cap ? t->cap : 1 << 16) * 2 + (size_t)k;
		t->s = realloc(t->s, t->cap);
		if (!t->s)
			abort();
	}
}

/* Appends head, then fmt (which takes the index) for i = 0..n-1, then tail. */
static void repeated(struct text *t, const char *head, const char *fmt, int n, const char *tail)
{
	tprintf(t, "%s", head);
	for (int i = 0; i < n; i++)
		tprintf(t, fmt, i);
	tprintf(t, "%s", tail);
}

/* Writes t to WORKDIR/name; returns the path (static per call site: copy it). */
static char *tsave(struct text *t, const char *name)
{
	static char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", workdir, name);
	f = fopen(path, "w");
	if (!f || fwrite(t->s, 1, t->n, f) != t->n || fclose(f)) {
		fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
		exit(1);
	}
	free(t->s);
	*t = (struct text){0};
	return path;
}

/* What one run of lint or serve did. */
struct run {
	int status;		  /* exit status, or 128 + signal */
	long ms, cpu_ms, rss_kib; /* wall and CPU time, peak RSS */
	char out[4096];		  /* the start of its output */
	bool has_more;		  /* output longer than out */
};

/* Runs FAULTLUN with args (NULL-terminated), output to WORKDIR/out.txt. */
static void run(struct run *r, char *const args[])
{
	char outpath[4096];
	struct rusage ru;
	long t0 = fl_now_ms();
	int st = 0, fd;
	pid_t pid;

	snprintf(outpath, sizeof(outpath), "%s/out.txt", workdir);
	pid = fork();
	if (pid == 0) {
		int o = open(outpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int z = open("/dev/null", O_RDONLY);

		if (!FL_SANITIZED) {
			struct rlimit rl = {1ul << 30, 1ul << 30};

			setrlimit(RLIMIT_AS, &rl);
		}
		dup2(z, 0);
		dup2(o, 1);
		dup2(o, 2);
		execv(faultlun, args);
		_exit(127);
	}
	for (;;) {
		pid_t w = wait4(pid, &st, WNOHANG, &ru);

		if (w == pid)
			break;
		if (fl_now_ms() - t0 > KILL_MS) {
			kill(pid, SIGKILL);
			wait4(pid, &st, 0, &ru);
			break;
		}
		usleep(2000);
	}
	r->ms = fl_now_ms() - t0;
	r->cpu_ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
		    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
	r->rss_kib = ru.ru_maxrss;
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	memset(r->out, 0, sizeof(r->out));
	fd = open(outpath, O_RDONLY);
	if (fd >= 0) {
		ssize_t n = read(fd, r->out, sizeof(r->out) - 1);
		char c;

		r->has_more = n == (ssize_t)sizeof(r->out) - 1 && read(fd, &c, 1) == 1;
		close(fd);
	}
}

/* Runs `faultlun lint FILE`. */
static void lint(struct run *r, const char *file)
{
	char *args[] = {"faultlun", "lint", "-q", (char *)file, NULL};

	run(r, args);
}

/* Runs `faultlun serve FILE` on an ephemeral loopback port until `true` ends. */
static void serve(struct run *r, const char *file)
{
	char *args[] = {"faultlun",    "serve", (char *)file, "-q", "--listen",
			"127.0.0.1:0", "--run", "true",	      NULL};

	run(r, args);
}

/* File size in bytes. */
static long file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (long)st.st_size;
}

/*
 * Checks that lint and serve refuse path (exit 1 / 2) with a message holding
 * want, each within the time bound and with a peak RSS under the base plus
 * mult times the file.
 */
static void expect_refused(const char *what, const char *path, const char *want, long mult)
{
	long size = file_size(path), bound_kib = base_kib + 8192 + mult * size / 1024;
	struct run r;

	if (FL_SANITIZED)
		bound_kib = 4 * bound_kib + 65536; /* redzones, shadow, quarantine */
	lint(&r, path);
	printf("%s (%ld bytes): lint exit %d in %ld ms (CPU %ld ms), peak RSS %ld KiB (bound %ld "
	       "KiB)\n",
	       what, size, r.status, r.ms, r.cpu_ms, r.rss_kib, bound_kib);
	CHECK(r.status == 1, "%s: lint exit %d (1 = problems found): %.300s", what, r.status,
	      r.out);
	CHECK(strstr(r.out, want), "%s: lint does not say \"%s\": %.300s", what, want, r.out);
	CHECK(r.cpu_ms < TIME_BOUND_MS, "%s: lint took %ld ms of CPU", what, r.cpu_ms);
	CHECK(r.rss_kib < bound_kib, "%s: lint peak RSS %ld KiB", what, r.rss_kib);
	serve(&r, path);
	printf("%s: serve exit %d in %ld ms (CPU %ld ms), peak RSS %ld KiB\n", what, r.status, r.ms,
	       r.cpu_ms, r.rss_kib);
	CHECK(r.status == 2, "%s: serve exit %d (2 = setup error): %.300s", what, r.status, r.out);
	CHECK(strstr(r.out, want), "%s: serve does not say \"%s\": %.300s", what, want, r.out);
	CHECK(r.cpu_ms < TIME_BOUND_MS, "%s: serve took %ld ms of CPU", what, r.cpu_ms);
	CHECK(r.rss_kib < bound_kib + 8192, "%s: serve peak RSS %ld KiB", what, r.rss_kib);
}

/* 100000 unknown keys at the top level. */
static void mode_unknown_keys(void)
{
	struct text t = {0};

	repeated(&t, "{\"faultlun\": 1", ",\n\"k%06d\": 0", 100000, "}\n");
	expect_refused("100000 unknown keys", tsave(&t, "unknown-keys.json"),
		       "unknown key \"k000000\"", 16);
}

/* Appends a "rules" list of n rules, ids r0, r1, ... (the last one dup_last's id when set). */
static void rules_text(struct text *t, int n, bool dup_last)
{
	tprintf(t, "{\"faultlun\": 1, \"rules\": [");
	for (int i = 0; i < n; i++)
		tprintf(t, "%s\n{\"id\": \"r%d\", \"action\": {\"drop\": true}}", i ? "," : "",
			dup_last && i == n - 1 ? 0 : i);
	tprintf(t, "]}\n");
}

/* 90000 rules; 1025 rules, one more than the cap; 1024 rules, the last id twice. */
static void mode_rules(void)
{
	struct text t = {0};
	struct run r;

	rules_text(&t, 90000, false);
	expect_refused("90000 rules", tsave(&t, "rules.json"), "more than 4096 entries", 16);
	rules_text(&t, 1025, false);
	expect_refused("1025 rules", tsave(&t, "rules-1025.json"), "more than the limit of 1024",
		       16);
	rules_text(&t, 1024, true);
	expect_refused("1024 rules, an id twice", tsave(&t, "rules-dup.json"),
		       "rule id \"r0\" is used twice", 16);
	tprintf(&t, "{\"faultlun\": 1, \"check\": {\"workload\": [{}");
	for (int i = 1; i < 131000; i++)
		tprintf(&t, ",{}");
	tprintf(&t, "]}}\n");
	expect_refused("131000 check steps", tsave(&t, "steps.json"), "more than 4096 entries", 16);
	rules_text(&t, 1024, false);
	lint(&r, tsave(&t, "rules-1024.json"));
	printf("1024 rules: lint exit %d in %ld ms (CPU %ld ms)\n", r.status, r.ms, r.cpu_ms);
	CHECK(r.status == 0, "1024 rules: lint exit %d: %.300s", r.status, r.out);
}

/* A key given again after 60000 members. */
static void mode_dup_key(void)
{
	struct text t = {0};

	repeated(&t, "{\"faultlun\": 1, \"emulates\": {", "\"m%d\": 0,\n", 60000, "\"m0\": 1}}\n");
	expect_refused("a duplicate key after 60000 members", tsave(&t, "dup-key.json"),
		       "duplicate key \"m0\"", 16);
}

/* 10 MB of integers, then 3.9 MB of them. */
static void mode_integers(void)
{
	struct text t = {0};

	tprintf(&t, "{\"faultlun\": 1, \"seed\": [0");
	while (t.n < 10 * 1000 * 1000)
		tprintf(&t, ",1,2,3,4,5,6,7,8,9");
	tprintf(&t, "]}\n");
	expect_refused("10 MB of integers", tsave(&t, "integers.json"), "larger than", 4);
	tprintf(&t, "{\"faultlun\": 1, \"seed\": [[0]");
	while (t.n < 3900 * 1000) {
		tprintf(&t, ",[0");
		for (int i = 0; i < 400; i++)
			tprintf(&t, ",1,2,3,4,5,6,7,8,9");
		tprintf(&t, "]");
	}
	tprintf(&t, "]}\n");
	expect_refused("3.9 MB of integers", tsave(&t, "integers-3.9m.json"), "JSON values", 4);
}

/* 64 levels of long keys above 60000 short members (about 1.4 MB). */
static void mode_nested_keys(void)
{
	struct text t = {0};
	static char key[15001];

	memset(key, 'k', sizeof(key) - 1);
	tprintf(&t, "{\"faultlun\": 1, \"x\": ");
	for (int d = 0; d < 62; d++)
		tprintf(&t, "{\"%s%d\": ", key, d);
	tprintf(&t, "{");
	for (int i = 0; i < 60000; i++)
		tprintf(&t, "%s\"a%d\":0", i ? "," : "", i);
	tprintf(&t, "}");
	for (int d = 0; d < 62; d++)
		tprintf(&t, "}");
	tprintf(&t, "}\n");
	expect_refused("nested long keys", tsave(&t, "nested-keys.json"), "unknown key \"x\"", 16);
}

/* One row of the agreement table: a scenario and whether it is valid. */
struct agree_row {
	const char *what;
	const char *json;
	bool valid;
};

/* lint and serve agree on every row (one validation for both). */
static void mode_agree(void)
{
	static const struct agree_row rows[] = {
	    {"size 8 blocks", "{\"faultlun\":1,\"luns\":[{\"size\":\"8blocks\"}]}", true},
	    {"size 2^63 blocks",
	     "{\"faultlun\":1,\"luns\":[{\"size\":\"9223372036854775808blocks\"}]}", false},
	    {"size 2^47 blocks", "{\"faultlun\":1,\"luns\":[{\"size\":\"140737488355328blocks\"}]}",
	     false},
	    {"size 2^47 blocks of 4096 bytes in bytes",
	     "{\"faultlun\":1,\"luns\":[{\"block_size\":4096,\"size\":576460752303423488}]}",
	     false},
	    {"size 16 EiB - 512", "{\"faultlun\":1,\"luns\":[{\"size\":18446744073709551104}]}",
	     false},
	    {"size 1 TiB", "{\"faultlun\":1,\"luns\":[{\"size\":\"1TiB\"}]}", true},
	    {"size 0", "{\"faultlun\":1,\"luns\":[{\"size\":0}]}", false},
	    {"thin pool larger than the LUN",
	     "{\"faultlun\":1,\"luns\":[{\"size\":\"1MiB\",\"thin\":{\"pool\":\"2MiB\"}}]}", true},
	    {"thin pool of 2^60 blocks",
	     "{\"faultlun\":1,\"luns\":[{\"size\":\"1MiB\",\"thin\":{\"pool\":"
	     "\"1152921504606846976blocks\"}}]}",
	     true},
	    {"block size 65536",
	     "{\"faultlun\":1,\"luns\":[{\"block_size\":65536,\"size\":\"1MiB\"}]}", true},
	    {"LUN 255", "{\"faultlun\":1,\"luns\":[{\"lun\":255,\"size\":\"1MiB\"}]}", true},
	    {"a rule on LUN 7 of none",
	     "{\"faultlun\":1,\"rules\":[{\"id\":\"a\",\"match\":{\"lun\":7},\"action\":\"drop\"}]"
	     "}",
	     false},
	    {"seed 2^64 - 1", "{\"faultlun\":1,\"seed\":\"18446744073709551615\"}", true},
	    {"seed 2^64 - 1 as a JSON number", "{\"faultlun\":1,\"seed\":18446744073709551615}",
	     false},
	};
	char name[64];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct text t = {0};
		struct run l, s;
		char path[4096];

		tprintf(&t, "%s\n", rows[i].json);
		snprintf(name, sizeof(name), "agree-%zu.json", i);
		snprintf(path, sizeof(path), "%s", tsave(&t, name));
		lint(&l, path);
		serve(&s, path);
		printf("%-45s lint exit %d, serve exit %d\n", rows[i].what, l.status, s.status);
		CHECK((l.status == 0) == rows[i].valid, "%s: lint exit %d: %.300s", rows[i].what,
		      l.status, l.out);
		CHECK((s.status == 0) == rows[i].valid, "%s: serve exit %d: %.300s", rows[i].what,
		      s.status, s.out);
		CHECK(l.status == 0 || l.status == 1, "%s: lint exit %d", rows[i].what, l.status);
	}
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} modes[] = {{"unknown-keys", mode_unknown_keys}, {"rules", mode_rules},
		     {"dup-key", mode_dup_key},		  {"integers", mode_integers},
		     {"nested-keys", mode_nested_keys},	  {"agree", mode_agree}};
	struct text t = {0};
	struct run r;

	if (argc != 4) {
		fprintf(stderr, "usage: fl_scenario_files MODE FAULTLUN WORKDIR\n");
		return 2;
	}
	faultlun = argv[2];
	workdir = argv[3];
	if (mkdir(workdir, 0755) && errno != EEXIST) {
		fprintf(stderr, "cannot make %s: %s\n", workdir, strerror(errno));
		return 1;
	}
	tprintf(&t, "{\"faultlun\": 1}\n");
	lint(&r, tsave(&t, "tiny.json"));
	if (r.status != 0) {
		fprintf(stderr, "lint of a tiny scenario: exit %d: %s\n", r.status, r.out);
		return 1;
	}
	base_kib = r.rss_kib;
	printf("lint of a tiny scenario: %ld ms, peak RSS %ld KiB\n", r.ms, r.rss_kib);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(argv[1], modes[i].name)) {
			modes[i].fn();
			return fl_test_exit(argv[1]);
		}
	fprintf(stderr, "unknown mode %s\n", argv[1]);
	return 2;
}
