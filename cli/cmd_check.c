// SPDX-License-Identifier: MIT
/*
 * cmd_check.c - `faultlun check SCENARIO...`: serves each scenario on a free
 * loopback port (captive, in this process: engine, control socket, trace,
 * embedded iSCSI target), runs its check through the libiscsi runner
 * (runner.c) and judges it with the scenario model's one checker. One verdict
 * line per expectation; exit 0 when every applicable one holds, 1 when one
 * failed, 2 when a scenario could not be run, 77 when none applied.
 * `--url` runs the check against a target that is already serving instead.
 * `--junit FILE` writes JUnit XML (as Jenkins and GitLab read it, junit.c),
 * `--ktap FILE` KTAP version 1 (ktap.c), `--json FILE` the verdicts in the VM
 * lab's result.json form, with the version, the commit of the build, the
 * scenario's sha256, the seed and the engine's counters at the end.
 */
#include "ports.h"
#include "check_report.h"
#include "cli.h"
#include "cli_opts.h"
#include "fl_commit.h"
#include "fl_faults.h"
#include "fl_iscsi.h"
#include "initiator.h"
#include "runner.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct check_opts {
	const char *url, *ctl, *trace, *junit, *ktap, *json, *obs;
	bool seed_set;
	uint64_t seed;
	int verbose;
	bool quiet;
};

/* Prints the usage of `faultlun check`. */
static void check_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: faultlun check [OPTIONS] SCENARIO...\n"
	    "Serves each scenario on a free loopback port and runs its check through the\n"
	    "libiscsi runner: one verdict line per expectation (PASS, FAIL, N/A).\n"
	    "Exit 0: every applicable expectation holds; 1: one failed; 2: a scenario\n"
	    "could not be run; 77: none applied.\n\n"
	    "  --junit FILE     JUnit XML of the verdicts (Jenkins, GitLab)\n"
	    "  --ktap FILE      the verdicts in KTAP version 1 (the kernel's test format)\n"
	    "  --json FILE      the verdicts, observations, version, scenario sha256, seed\n"
	    "                   and the engine's counters, as JSON\n"
	    "  --seed N         seed every random choice (overrides the scenario's)\n"
	    "  --url URL        check a target that is already serving (iscsi://...);\n"
	    "                   --ctl SOCKET and --trace FILE name its control socket and trace\n"
	    "  -v, --verbose    print each step as it ends\n"
	    "  -q, --quiet      print failures and the summary only\n"
	    "  -h, --help\n"
	    "  -V, --version\n");
}

/* The running binary, for ctl steps (`faultlun ctl`). */
static const char *self_path(void)
{
	static char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n <= 0)
		return "faultlun";
	buf[n] = 0;
	return buf;
}

/* Room for the portals of a scenario's ports, for steps with "port". */
struct step_ports {
	struct fl_runner_port v[FL_RUNNER_MAX_PORTS];
	char portal[FL_RUNNER_MAX_PORTS][280];
	size_t n;
};

/*
 * The portals of sc's ports: with t (a target this process serves), where
 * each port's portal is bound; without, each port's "listen" as the scenario
 * gives it, unknown when its port number is 0 (any free one).
 */
static void step_ports(const struct fl_scenario *sc, const struct fl_iscsi *t,
		       struct step_ports *sp)
{
	unsigned n = fl_scenario_port_count(sc);

	sp->n = n < FL_RUNNER_MAX_PORTS ? n : FL_RUNNER_MAX_PORTS;
	for (size_t i = 0; i < sp->n; i++) {
		const struct sc_port *p = fl_scenario_port(sc, (unsigned)i);
		const char *colon = strrchr(p->listen, ':');

		sp->v[i].name = p->name;
		sp->v[i].portal = NULL;
		sp->v[i].group = p->tpg_id;
		if (!t) {
			if (colon && strcmp(colon, ":0")) {
				snprintf(sp->portal[i], sizeof(sp->portal[i]), "%s", p->listen);
				sp->v[i].portal = sp->portal[i];
			}
			continue;
		}
		for (unsigned k = 0; k < fl_iscsi_portal_count(t); k++) {
			const char *addr;
			uint16_t port, rel;

			if (fl_iscsi_portal(t, k, &addr, &port, &rel) || rel != p->rel_port_id)
				continue;
			snprintf(sp->portal[i], sizeof(sp->portal[i]),
				 strchr(addr, ':') ? "[%s]:%u" : "%s:%u", addr, port);
			sp->v[i].portal = sp->portal[i];
			break;
		}
	}
}

/* Runs the check of sc against url (t: the target this process serves, or NULL); judges into out.
 */
static void run_and_judge(const struct fl_scenario *sc, const char *url, const struct fl_iscsi *t,
			  const char *ctl, const char *trace, const struct check_opts *co,
			  struct check_outcome *out)
{
	const struct fl_check *check = fl_scenario_check(sc);
	struct step_ports sp;
	struct fl_runner_opts ro = {.url = url,
				    .ctl_socket = ctl,
				    .faultlun_bin = self_path(),
				    .log = co->verbose ? stdout : NULL,
				    .arm_scenario = out->path};

	step_ports(sc, t, &sp);
	ro.ports = sp.v;
	ro.nports = sp.n;
	struct fl_step_obs *steps = NULL;
	char **lines = NULL;
	size_t nlines = 0;
	int test_lun = 0;

	int rr = fl_runner_run(check, &ro, &steps, &test_lun);

	if (rr) {
		out->rc = 2;
		snprintf(out->error, sizeof(out->error),
			 rr == -2 ? "cannot arm the scenario through %s's control socket"
				  : "cannot log in to %s",
			 url);
		return;
	}
	if (trace)
		nlines = fl_runner_read_trace(trace, &lines);
	struct fl_obs obs = {
	    .runner = FL_RUNNER_LIBISCSI,
	    .steps = steps,
	    .nsteps = check->nsteps,
	    .can_status_all = true,
	    .test_lun = test_lun,
	    .has_trace = trace != NULL,
	    .trace = (const char *const *)lines,
	    .ntrace = nlines,
	};
	if (co->obs && fl_obs_write(&obs, co->obs))
		fprintf(stderr, "faultlun check: cannot write %s\n", co->obs);
	out->nv = fl_check_judge(check, &obs, &out->v);
	if (out->nv < 0) {
		out->rc = 2;
		snprintf(out->error, sizeof(out->error), "out of memory");
	} else {
		out->rc = fl_verdicts_exit(out->v, (size_t)out->nv);
	}
	out->steps = steps;
	out->nsteps = check->nsteps;
	for (size_t i = 0; i < nlines; i++)
		free(lines[i]);
	free(lines);
}

/* The stack's accept hook: the seed the engine runs with, kept for the reports. */
static int note_seed(struct fl_engine *e, void *arg)
{
	struct check_outcome *out = arg;

	out->seed = fl_engine_seed(e);
	return 0;
}

/* The scenario out->path without its faults (NULL with out->error set). */
static struct fl_scenario *unarmed(struct check_outcome *out)
{
	struct fl_diags d = {0};
	struct fl_scenario *usc = NULL;
	char *text = fl_scenario_unarmed_text(out->path);

	if (!text || fl_scenario_load_string(out->path, text, FL_FE_ISCSI, &usc, &d))
		snprintf(out->error, sizeof(out->error),
			 "\"arm\": \"workload\": cannot read %s without its faults%s%s", out->path,
			 text ? ": " : "", text ? (d.n ? d.v[0].msg : "?") : "");
	fl_diags_free(&d);
	free(text);
	return usc;
}

/* Serves sc on a free loopback port in this process and runs its check. */
static void serve_and_check(const struct fl_scenario *sc, const struct check_opts *co,
			    struct check_outcome *out)
{
	char dir[] = "/tmp/faultlun-check-XXXXXX", ctl[128], trace[128], url[512];
	struct fl_stack_opts so = {.engine = {.frontend = FL_FE_ISCSI},
				   .ctl_path = ctl,
				   .accept = note_seed,
				   .accept_arg = out};
	struct fl_iscsi_opts io = {.listen = "127.0.0.1:0"};
	struct cli_ports ports;
	struct fl_stack st = {0};
	struct fl_iscsi *t = NULL;
	uint16_t luns[FL_MAX_LUNS];
	unsigned nluns;
	pthread_t th;
	const struct fl_check *check = fl_scenario_check(sc);
	struct fl_scenario *usc = NULL;

	if (!mkdtemp(dir)) {
		out->rc = 2;
		snprintf(out->error, sizeof(out->error), "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(ctl, sizeof(ctl), "%s/ctl.sock", dir);
	snprintf(trace, sizeof(trace), "%s/trace.jsonl", dir);
	so.engine.trace_path = trace;
	so.engine.scenario_file = out->path; /* its store paths are opened beneath its directory */
	so.engine.seed_set = co->seed_set;
	so.engine.seed = co->seed;
	io.iqn = fl_scenario_target_iqn(sc);
	/* every port of the scenario, each on a free port number of its address */
	if (cli_ports("check", sc, NULL, 0, true, &ports)) {
		out->rc = 2;
		snprintf(out->error, sizeof(out->error), "bad ports");
		goto out;
	}
	io.ports = ports.v;
	io.nports = ports.n;
	/* "arm": "workload": served without its faults until the runner loads it whole */
	if (check && check->arm_at_workload && !(usc = unarmed(out))) {
		out->rc = 2;
		goto out;
	}
	if (fl_stack_open(usc ? usc : sc, &so, &st) && st.failed == FL_STACK_ENGINE) {
		out->rc = 2;
		snprintf(out->error, sizeof(out->error), "cannot build the scenario's LUNs");
		goto out;
	}
	if (st.failed || fl_iscsi_create(&io, st.engine, NULL, &t) ||
	    cli_loop_start(t, "check", &th)) {
		out->rc = 2;
		snprintf(out->error, sizeof(out->error), "cannot start the target");
		if (t) {
			fl_iscsi_destroy(t);
			t = NULL;
		}
		goto out;
	}
	nluns = fl_target_lun_ids(fl_engine_target(st.engine), luns, FL_MAX_LUNS);
	snprintf(url, sizeof(url), "iscsi://%s:%u/%s/%u", fl_iscsi_address(t), fl_iscsi_port(t),
		 fl_iscsi_iqn(t), nluns ? luns[0] : 0);
	run_and_judge(sc, url, t, ctl, trace, co, out);
	fl_engine_get_counters(st.engine, &out->counters);
	out->have_counters = true;
	cli_loop_stop(t, th);
out:
	fl_stack_close(&st);
	if (t)
		fl_iscsi_destroy(t);
	fl_scenario_free(usc);
	unlink(ctl);
	unlink(trace);
	rmdir(dir);
}

/* The loader's messages as text for the reports (at most 16 KiB), or NULL. */
static char *diags_text(const struct fl_diags *d)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	fl_diags_print(d, f);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	if (len > 16384) {
		text[16384] = 0;
		len = 16384;
	}
	while (len && text[len - 1] == '\n')
		text[--len] = 0;
	if (!len) {
		free(text);
		return NULL;
	}
	return text;
}

/*
 * What the target, the runner, libiscsi and ctl steps write to stderr while
 * a scenario runs: expected login refusals, closed connections, the
 * target's log. Kept aside (in an unlinked file behind fd 2) so that a run
 * that holds prints only its verdicts; shown after a failure, in the JUnit
 * report's system-err, and streamed as it comes with -v (no capture).
 */
struct err_capture {
	int saved; /* the real stderr; -1: not capturing */
	int fd;	   /* the capture file */
};

/* The most of a run's stderr kept for the reports. */
#define CHECK_LOG_MAX (64u << 10)

/* Sends fd 2 into a fresh unlinked file; on failure leaves stderr as it is. */
static void capture_begin(struct err_capture *c)
{
	char tmpl[] = "/tmp/faultlun-check-log-XXXXXX";

	c->saved = c->fd = -1;
	fflush(stderr);
	/* neither the file nor the saved stderr outlives an exec (ctl steps get fd 2 only) */
	c->fd = mkostemp(tmpl, O_CLOEXEC);
	if (c->fd < 0)
		return;
	unlink(tmpl);
	c->saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (c->saved < 0 || dup2(c->fd, STDERR_FILENO) < 0) {
		if (c->saved >= 0)
			close(c->saved);
		close(c->fd);
		c->saved = c->fd = -1;
	}
}

/* Gives stderr back; returns what it got meanwhile (at most CHECK_LOG_MAX, malloc'd) or NULL. */
static char *capture_end(struct err_capture *c)
{
	char *text = NULL;
	off_t size;
	ssize_t got = 0;

	if (c->saved < 0)
		return NULL;
	fflush(stderr);
	dup2(c->saved, STDERR_FILENO);
	close(c->saved);
	size = lseek(c->fd, 0, SEEK_END);
	if (size > 0 && (text = malloc(CHECK_LOG_MAX + 64))) {
		size_t want = size > (off_t)CHECK_LOG_MAX ? CHECK_LOG_MAX : (size_t)size;

		while ((size_t)got < want) {
			ssize_t r = pread(c->fd, text + got, want - (size_t)got, got);

			if (r <= 0)
				break;
			got += r;
		}
		text[got] = 0;
		if (size > (off_t)CHECK_LOG_MAX)
			snprintf(text + got, 64, "\n(%lld more bytes not kept)\n",
				 (long long)(size - (off_t)CHECK_LOG_MAX));
		if (!got) {
			free(text);
			text = NULL;
		}
	}
	close(c->fd);
	c->fd = c->saved = -1;
	return text;
}

/* Checks one scenario file. */
static void check_one(const char *path, const struct check_opts *co, struct check_outcome *out,
		      struct fl_scenario **scp)
{
	struct fl_diags d = {0};
	int err = fl_scenario_load_file(path, FL_FE_ISCSI, scp, &d);
	double t0 = (double)ini_now_ms();

	out->started = time(NULL);
	out->path = path;
	snprintf(out->name, sizeof(out->name), "%s", path);
	if (err && fl_scenario_file_is_schema(path)) {
		fl_diags_free(&d);
		out->rc = 77;
		snprintf(out->error, sizeof(out->error), "a JSON Schema, not a scenario");
		return;
	}
	if (err) {
		fl_diags_print(&d, stderr);
		out->diags = diags_text(&d);
		fl_diags_free(&d);
		out->rc = 2;
		snprintf(out->error, sizeof(out->error), "%s",
			 err == -EINVAL ? "the scenario has errors" : strerror(-err));
		return;
	}
	fl_diags_free(&d);
	snprintf(out->name, sizeof(out->name), "%s", fl_scenario_name(*scp));
	if (sha256_file(path, out->sha256))
		out->sha256[0] = 0;
	out->check = fl_scenario_check(*scp);
	if (!out->check) {
		out->rc = 77;
		snprintf(out->error, sizeof(out->error), "no check section");
		return;
	}
	if (out->check->paths && !(out->check->paths & FL_PATH_ISCSI)) {
		out->rc = 77;
		snprintf(out->error, sizeof(out->error), "the check is not for the iscsi path");
		return;
	}
	struct err_capture cap = {.saved = -1, .fd = -1};

	if (!co->verbose)
		capture_begin(&cap);
	if (co->url)
		run_and_judge(*scp, co->url, NULL, co->ctl, co->trace, co, out);
	else
		serve_and_check(*scp, co, out);
	out->log = capture_end(&cap);
	out->ms = (double)ini_now_ms() - t0;
	if (out->log && (out->rc == 1 || out->rc == 2)) {
		fprintf(stderr, "faultlun check: %s: what the run wrote to stderr:\n", out->name);
		fputs(out->log, stderr);
	}
}

/* The verdict word of an outcome for JSON. */
static const char *rc_word(int rc)
{
	return rc == 0 ? "pass" : rc == 1 ? "fail" : rc == 77 ? "not_applicable" : "error";
}

/* Step k of a scenario's outcome as the results file gives it. */
static json_t *step_json(const struct check_outcome *o, size_t k)
{
	const struct fl_step_obs *s = &o->steps[k];
	json_t *e =
	    json_pack("{s:I, s:s, s:s, s:f, s:I}", "step", (json_int_t)k, "op",
		      fl_step_op_name(o->check->steps[k].op), "errno",
		      s->end == FL_END_TIMEOUT	 ? "TIMEOUT"
		      : s->end == FL_END_DONE	 ? s->errno_name
		      : s->end == FL_END_NOT_RUN ? "NOT_RUN"
						 : "UNSUPPORTED",
		      "elapsed_ms", s->elapsed_ms, "repeats_done", (json_int_t)s->repeats_done);

	if (s->has_status)
		json_object_set_new(e, "status", json_integer(s->status));
	if (s->has_sense) {
		char t[96];

		fl_sense_text(s->key, s->asc, s->ascq, t, sizeof(t));
		json_object_set_new(e, "sense", json_string(t));
	}
	return e;
}

/* Writes the JSON report: one document per run, a result per scenario. */
static int write_json(const char *file, const struct check_outcome *o, size_t n)
{
	json_t *root = json_object(), *results = json_array();
	int r;

	json_object_set_new(
	    root, "faultlun",
	    json_pack("{s:s, s:s}", "version", FAULTLUN_VERSION, "commit", FAULTLUN_COMMIT));
	json_object_set_new(root, "runner", json_string("libiscsi"));
	for (size_t i = 0; i < n; i++) {
		json_t *res = json_object(), *vs = json_array(), *steps = json_array();

		json_object_set_new(res, "scenario", json_string(o[i].name));
		json_object_set_new(res, "path", json_string(o[i].path));
		if (o[i].sha256[0])
			json_object_set_new(res, "sha256", json_string(o[i].sha256));
		json_object_set_new(res, "verdict", json_string(rc_word(o[i].rc)));
		if (o[i].error[0])
			json_object_set_new(res, "error", json_string(o[i].error));
		if (o[i].have_counters) {
			char seed[32];

			snprintf(seed, sizeof(seed), "%llu", (unsigned long long)o[i].seed);
			json_object_set_new(res, "seed", json_string(seed));
			json_object_set_new(
			    res, "counters",
			    json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "commands",
				      (json_int_t)o[i].counters.commands, "injected",
				      (json_int_t)o[i].counters.injected, "held",
				      (json_int_t)o[i].counters.held, "released",
				      (json_int_t)o[i].counters.released, "dropped",
				      (json_int_t)o[i].counters.dropped, "delayed",
				      (json_int_t)o[i].counters.delayed, "tmfs",
				      (json_int_t)o[i].counters.tmfs, "resets",
				      (json_int_t)o[i].counters.resets));
		}
		json_object_set_new(res, "elapsed_ms", json_real(o[i].ms));
		for (int k = 0; k < o[i].nv; k++) {
			const struct fl_verdict *v = &o[i].v[k];
			json_t *e = json_pack("{s:I, s:s, s:s, s:s}", "expect",
					      (json_int_t)v->expect, "verdict",
					      v->v == FL_VERDICT_PASS	? "pass"
					      : v->v == FL_VERDICT_FAIL ? "fail"
									: "not_applicable",
					      "what", v->what, "observed", v->observed);

			if (v->v != FL_VERDICT_NA)
				json_object_set_new(e, "ok", json_boolean(v->v == FL_VERDICT_PASS));
			json_array_append_new(vs, e);
		}
		json_object_set_new(res, "verdicts", vs);
		for (size_t k = 0; k < o[i].nsteps; k++)
			json_array_append_new(steps, step_json(&o[i], k));
		json_object_set_new(res, "steps", steps);
		json_array_append_new(results, res);
	}
	json_object_set_new(root, "results", results);
	r = json_dump_file(root, file, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ? -EIO : 0;
	json_decref(root);
	return r;
}

/* Counts of verdicts and outcomes over a check's scenarios. */
struct check_tally {
	int held, failed, na, errors;
};

/* Prints scenario o's verdicts and outcome (quiet: failures only) and counts them into t. */
static void check_print(const struct check_outcome *o, bool quiet, struct check_tally *t)
{
	for (int k = 0; k < o->nv; k++) {
		const struct fl_verdict *v = &o->v[k];

		t->held += v->v == FL_VERDICT_PASS;
		t->failed += v->v == FL_VERDICT_FAIL;
		t->na += v->v == FL_VERDICT_NA;
		if (quiet && v->v != FL_VERDICT_FAIL)
			continue;
		printf("%-4s %s: expect %zu: %s (%s)\n", fl_verdict_name(v->v), o->name, v->expect,
		       v->what, v->observed);
	}
	if (o->rc == 2) {
		t->errors++;
		printf("ERROR %s: %s\n", o->path, o->error);
	} else if (o->rc == 77) {
		if (!quiet)
			printf("SKIP %s: %s\n", o->name,
			       o->error[0] ? o->error : "no expectation applies");
	} else if (!quiet || o->rc) {
		printf("%s %s (%.1f s)\n", o->rc ? "FAILED" : "held", o->name, o->ms / 1e3);
	}
	fflush(stdout);
}

/* Refuses options that do not go together (n: the number of scenarios). Returns 0 or 2. */
static int check_validate(const struct check_opts *co, int n)
{
	if (n < 1) {
		fprintf(stderr, "faultlun check: no scenario given\n");
		check_usage(stderr);
		return 2;
	}
	if (co->url && strncmp(co->url, "iscsi://", 8)) {
		fprintf(stderr, "faultlun check: --url: '%s' is not an iscsi:// URL\n", co->url);
		return 2;
	}
	if ((co->ctl || co->trace) && !co->url) {
		fprintf(stderr, "faultlun check: --ctl and --trace go with --url (without it the "
				"check serves the scenario and has both)\n");
		return 2;
	}
	if (co->obs && n > 1) {
		fprintf(stderr, "faultlun check: --obs takes one scenario\n");
		return 2;
	}
	return 0;
}

/* Reads check's options into co; -1 to go on, else the exit status. */
static int check_options(int argc, char **argv, struct check_opts *co)
{
	static const struct option longopts[] = {
	    {"junit", required_argument, NULL, 'J'},
	    {"json", required_argument, NULL, 'j'},
	    {"ktap", required_argument, NULL, 'K'},
	    {"seed", required_argument, NULL, 's'},
	    {"url", required_argument, NULL, 'u'},
	    {"ctl", required_argument, NULL, 'c'},
	    {"trace", required_argument, NULL, 't'},
	    {"obs", required_argument, NULL, 'o'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	optind = 0; /* a fresh getopt_long: options may follow the scenarios */
	while ((c = cli_getopt("check", argc, argv, "vqhV", longopts)) != -1) {
		switch (c) {
		case 'J':
			co->junit = optarg;
			break;
		case 'j':
			co->json = optarg;
			break;
		case 'K':
			co->ktap = optarg;
			break;
		case 's':
			if (cli_opt_uint("check", "--seed", optarg, 0, UINT64_MAX, &co->seed))
				return 2;
			co->seed_set = true;
			break;
		case 'u':
			co->url = optarg;
			break;
		case 'c':
			co->ctl = optarg;
			break;
		case 't':
			co->trace = optarg;
			break;
		case 'o':
			co->obs = optarg;
			break;
		case 'v':
			co->verbose++;
			break;
		case 'q':
			co->quiet = true;
			break;
		case 'h':
			check_usage(stdout);
			return 0;
		case 'V':
			cli_print_version(stdout);
			return 0;
		default:
			cli_try_help("check");
			return 2;
		}
	}
	return -1;
}

/* Writes the reports asked for (--junit, --ktap, --json) of the n outcomes out. */
static void check_write_reports(const struct check_opts *co, struct check_outcome *out, int n)
{
	if (co->junit && cli_junit_write(co->junit, out, (size_t)n))
		fprintf(stderr, "faultlun check: cannot write %s\n", co->junit);
	if (co->ktap && cli_ktap_check_write(co->ktap, out, (size_t)n))
		fprintf(stderr, "faultlun check: cannot write %s\n", co->ktap);
	if (co->json && write_json(co->json, out, (size_t)n))
		fprintf(stderr, "faultlun check: cannot write %s\n", co->json);
}

/* Frees the n outcomes out and scenarios scs, and both arrays. */
static void check_free(struct check_outcome *out, struct fl_scenario **scs, int n)
{
	for (int i = 0; i < n; i++) {
		free(out[i].v);
		free(out[i].steps);
		free(out[i].diags);
		free(out[i].log);
		fl_scenario_free(scs[i]);
	}
	free(out);
	free(scs);
}

/* `faultlun check`. */
int cmd_check(int argc, char **argv)
{
	struct check_opts co = {0};
	struct check_outcome *out;
	struct fl_scenario **scs;
	struct check_tally t = {0};
	int n, rc;

	rc = check_options(argc, argv, &co);
	if (rc >= 0)
		return rc;
	n = argc - optind;
	if (check_validate(&co, n))
		return 2;
	signal(SIGPIPE, SIG_IGN);
	out = calloc((size_t)n, sizeof(*out));
	scs = calloc((size_t)n, sizeof(*scs));
	if (!out || !scs) {
		free(out);
		free(scs);
		return 2;
	}
	for (int i = 0; i < n; i++) {
		check_one(argv[optind + i], &co, &out[i], &scs[i]);
		check_print(&out[i], co.quiet, &t);
	}
	printf("faultlun check: %d scenario%s, %d held, %d failed, %d not applicable%s%s\n", n,
	       n == 1 ? "" : "s", t.held, t.failed, t.na, t.errors ? ", could not run: " : "",
	       t.errors ? "see above" : "");
	check_write_reports(&co, out, n);
	rc = t.errors ? 2 : t.failed ? 1 : t.held ? 0 : 77;
	check_free(out, scs, n);
	return rc;
}
