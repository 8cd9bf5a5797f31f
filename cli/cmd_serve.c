/* SPDX-License-Identifier: MIT */
/*
 * cmd_serve.c - `faultlun serve`: the embedded iSCSI target on a scenario.
 *
 * Loads a scenario (or, without one, serves one default 1 GiB memory LUN),
 * binds the portal (127.0.0.1:3260 unless --listen says otherwise; port 0
 * picks a free one), prints where it listens and how to connect, and serves
 * until SIGINT / SIGTERM. With --run CMD it is captive: it serves while
 * `/bin/sh -c CMD` runs (with FAULTLUN_PORT, FAULTLUN_ADDR, FAULTLUN_IQN and
 * FAULTLUN_URL in its environment) and exits with CMD's status.
 * CHAP secrets come from options or the environment and are never printed.
 */
#include "ports.h"
#include "cli.h"
#include "cli_opts.h"
#include "fl_iscsi.h"
#include "fl_log.h"
#include "fl_size.h"

#include <jansson.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* Prints the usage text. */
static void serve_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: faultlun serve [SCENARIO.json] [options]\n"
	    "\n"
	    "Serves LUNs over iSCSI (RFC 7143) with the scenario's faults. Without a\n"
	    "scenario: one 1 GiB memory LUN, no faults.\n"
	    "\n"
	    "  --listen ADDR:PORT   portal (default " FL_ISCSI_DEFAULT_LISTEN
	    "; port 0 = any free); repeated:\n"
	    "                       the portals of the scenario's ports, in order\n"
	    "  --iqn IQN            target name (default: the scenario's, "
	    "else " FL_ISCSI_DEFAULT_IQN ")\n"
	    "  --lun N              LUN number of the default LUN (no scenario; default 0)\n"
	    "  --size SIZE          size of every LUN (e.g. 64MiB, 1GiB, 4096; default 1 GiB)\n"
	    "  --block-size N       logical block size of the default LUN: 512, 1024, ...\n"
	    "                       65536 (512)\n"
	    "  --store memory|null|file:PATH  backing store of every LUN (null: reads\n"
	    "                       zeroes, drops writes)\n"
	    "  --read-only          write-protect every LUN (WP; writes get 27/00)\n"
	    "  --seed N             seed of the scenario's randomness (0..2^64-1)\n"
	    "  --trace FILE         JSON-lines trace of faults and events\n"
	    "  --ctl SOCKET         control socket for `faultlun ctl`\n"
	    "  --chap-user USER     require CHAP; secret from --chap-secret-file, "
	    "$FAULTLUN_CHAP_SECRET\n"
	    "                       or --chap-secret (which `ps` shows to every user)\n"
	    "  --chap-secret-file F the first line of F\n"
	    "  --chap-secret S\n"
	    "  --mutual-secret-file F\n"
	    "  --mutual-user USER   mutual CHAP; secret from --mutual-secret or "
	    "$FAULTLUN_MUTUAL_SECRET\n"
	    "  --mutual-secret S\n"
	    "  --login-timeout S    close connections not logged in after S seconds (30)\n"
	    "  --pdu-timeout S      close a connection whose PDU is not complete after S\n"
	    "                       seconds (30; 0 = never)\n"
	    "  --nopin-interval S   ping a session idle for S seconds with a NOP-In (15; 0 = "
	    "never)\n"
	    "  --nopin-timeout S    close it when the ping gets no answer in S seconds (30)\n"
	    "  --max-connections N  connections at once (1024, fewer if the open-file limit\n"
	    "                       is low)\n"
	    "  --max-sessions-per-initiator N  (default: a quarter of --max-connections)\n"
	    "  --max-sessions-per-address N    (default: half of --max-connections)\n"
	    "  --max-queued-mem SIZE  command buffers and unsent responses over all\n"
	    "                       connections (256MiB)\n"
	    "  --run CMD            captive: serve while `sh -c CMD` runs, exit with its status\n"
	    "                       ($FAULTLUN_URL: the first portal; $FAULTLUN_URLS: every one)\n"
	    "  -v, --verbose        log connections and print every trace event (injected\n"
	    "                       faults, TMFs, state changes) with a timestamp; twice:\n"
	    "                       every PDU received and sent, decoded\n"
	    "  -q, --quiet          nothing on stderr but errors (without --run, the port\n"
	    "                       when port 0 was asked: someone must learn it)\n"
	    "  -h, --help           this text\n"
	    "  -V, --version        print the version\n"
	    "\n"
	    "Numbers are decimal or 0x hexadecimal. Exit status: 0 stopped by a signal,\n"
	    "2 usage or setup error; with --run, the command's status.\n");
}

/* Parses seconds ("30", "0.5") into milliseconds; 0 becomes FL_ISCSI_OFF. */
static int parse_seconds_ms(const char *s, unsigned *ms)
{
	char *end;
	/* Digits and one optional point: no sign, exponent, "inf" or "nan". */
	if (!*s || strspn(s, "0123456789.") != strlen(s) || strchr(s, '.') != strrchr(s, '.'))
		return -1;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || v < 0 || v > 86400 * 7)
		return -1;
	*ms = v == 0 ? FL_ISCSI_OFF : (unsigned)(v * 1000 + 0.5);
	if (!*ms)
		*ms = 1;
	return 0;
}

/*
 * Raises the soft limit of open files to the hard one: every connection is a
 * descriptor, and the portal sizes its connection cap from this limit.
 */
static void raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		fprintf(stderr, "faultlun serve: cannot raise the open-file limit to %llu: %s\n",
			(unsigned long long)rl.rlim_max, strerror(errno));
}

/*
 * Reads a secret: the first line of a file (without its line end). Says so
 * when others may read the file. NULL, with a message, on failure.
 */
static char *read_secret_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	struct stat st;

	if (!f) {
		fprintf(stderr, "faultlun serve: cannot read the secret file %s: %s\n", path,
			strerror(errno));
		return NULL;
	}
	if (!fstat(fileno(f), &st) && (st.st_mode & 077))
		fprintf(stderr,
			"faultlun serve: warning: %s is readable by other users (mode %03o)\n",
			path, (unsigned)(st.st_mode & 0777));
	ssize_t n = getline(&line, &cap, f);
	fclose(f);
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = 0;
	if (n <= 0) {
		fprintf(stderr, "faultlun serve: the secret file %s is empty\n", path);
		free(line);
		return NULL;
	}
	return line;
}

/* Appends " (in state A, B)" for a rule scoped to states, else nothing. */
static void print_states(FILE *out, const struct fl_scenario *sc, uint64_t states)
{
	const char *sep = " (in state ";

	for (size_t i = 0; states && i < sc->nstates && i < SC_MAX_STATES; i++)
		if (states & (1ull << i)) {
			char name[4 * 64];
			fprintf(out, "%s%s", sep, fl_log_escape(sc->states[i], name, sizeof(name)));
			sep = ", ";
		}
	if (states)
		fputc(')', out);
}

/* Prints the rules the scenario arms at start: id, action, states. */
static void banner_rules(FILE *out, const struct fl_scenario *sc)
{
	static const char *const xactions[] = {"pass", "drop", "delay", "close"};

	if (!sc->nrules && !sc->nxrules) {
		fprintf(out, "faultlun serve: no fault rules\n");
		return;
	}
	fprintf(out, "faultlun serve: armed rules:\n");
	for (size_t i = 0; i < sc->nrules; i++) {
		char id[4 * 64];
		fprintf(out, "faultlun serve:   %s: %s",
			fl_log_escape(sc->rules[i].id, id, sizeof(id)),
			sc_verb_name(sc->rules[i].a.verb));
		print_states(out, sc, sc->rules[i].states);
		fputc('\n', out);
	}
	for (size_t i = 0; i < sc->nxrules; i++) {
		unsigned a = sc->xrules[i].action;
		char id[4 * 64];

		fprintf(out, "faultlun serve:   %s: transport %s",
			fl_log_escape(sc->xrules[i].id, id, sizeof(id)),
			a < sizeof(xactions) / sizeof(xactions[0]) ? xactions[a] : "?");
		print_states(out, sc, sc->xrules[i].states);
		fputc('\n', out);
	}
}

/*
 * With several portals: one line per target port (docs/multipath.md): its
 * portal, relative target port, target port group and the group's state on
 * the first LUN.
 */
static void banner_ports(struct fl_iscsi *t, struct fl_target *tgt, const struct fl_scenario *sc,
			 const uint16_t *luns, unsigned nluns)
{
	static const char *const names[16] = {[FL_ALUA_ACTIVE_OPTIMIZED] = "active_optimized",
					      [FL_ALUA_ACTIVE_NON_OPTIMIZED] =
						  "active_non_optimized",
					      [FL_ALUA_STANDBY] = "standby",
					      [FL_ALUA_UNAVAILABLE] = "unavailable",
					      [FL_ALUA_LBA_DEPENDENT] = "lba_dependent",
					      [FL_ALUA_OFFLINE] = "offline",
					      [FL_ALUA_TRANSITIONING] = "transitioning"};
	struct fl_lun *lun = nluns ? fl_target_lun(tgt, luns[0]) : NULL;

	if (fl_iscsi_portal_count(t) < 2 && !fl_scenario_port_count(sc))
		return;
	for (unsigned i = 0; i < fl_iscsi_portal_count(t); i++) {
		const struct sc_port *sp = fl_scenario_port(sc, i);
		enum fl_alua_state st = FL_ALUA_ACTIVE_OPTIMIZED;
		const char *addr;
		uint16_t port, rel, tpg;

		fl_iscsi_portal(t, i, &addr, &port, &rel);
		tpg = fl_scenario_port_group(sc, nluns ? luns[0] : 0, rel);
		if (lun)
			fl_lun_tpg_state(lun, tpg, &st);
		char name[4 * 64];
		fprintf(stderr,
			"faultlun serve:   port %s: %s:%u, relative port %u, group %u (%s)\n",
			fl_log_escape(sp && sp->name ? sp->name : "-", name, sizeof(name)), addr,
			port, rel, tpg, names[st & 0xf] ? names[st & 0xf] : "?");
	}
}

/*
 * Prints where the target listens, each LUN as a host will see it (size,
 * block size, serial, and the NAA that names /dev/disk/by-id/wwn-0x...), the
 * armed rules, and how to connect.
 */
static void banner(struct fl_iscsi *t, struct fl_target *tgt, const struct fl_scenario *sc,
		   const uint16_t *luns, unsigned nluns, const char *what)
{
	const char *addr = fl_iscsi_address(t), *iqn = fl_iscsi_iqn(t);
	unsigned port = fl_iscsi_port(t);

	/* whole lines: -v's tap thread prints the engine's first trace lines meanwhile */
	flockfile(stderr);
	fprintf(stderr, "faultlun serve: listening on %s:%u, target %s (%s)\n", addr, port, iqn,
		what);
	banner_ports(t, tgt, sc, luns, nluns);
	for (unsigned i = 0; i < nluns; i++) {
		struct fl_lun *lun = fl_target_lun(tgt, luns[i]);
		struct fl_lun_info info;
		char serial[128];
		uint64_t naa;

		if (!lun)
			continue;
		fl_lun_get_info(lun, &info);
		fl_lun_identity(lun, &naa, serial, sizeof(serial));
		fprintf(stderr,
			"faultlun serve:   LUN %u: %llu bytes (%llu blocks of %u)%s, serial %s, "
			"NAA 0x%016llx (wwn-0x%016llx)\n",
			luns[i], (unsigned long long)(info.num_blocks * info.block_size),
			(unsigned long long)info.num_blocks, info.block_size,
			info.read_only ? ", read-only" : "", serial, (unsigned long long)naa,
			(unsigned long long)naa);
	}
	banner_rules(stderr, sc);
	fprintf(stderr,
		"faultlun serve: connect with\n"
		"  iscsiadm -m discovery -t sendtargets -p %s:%u\n"
		"  iscsiadm -m node -T %s -p %s:%u --login\n"
		"  libiscsi: iscsi://%s:%u/%s/%u\n",
		addr, port, iqn, addr, port, addr, port, iqn, nluns ? luns[0] : 0);
	fflush(stderr);
	funlockfile(stderr);
}

/* The -v printer: the engine's trace lines, also copied to --trace FILE. */
struct trace_tap {
	int rfd;    /* read end of the engine's trace pipe */
	FILE *copy; /* --trace FILE, or NULL */
	pthread_t th;
};

/*
 * Prints a string value with every byte that is not printable ASCII, and the
 * backslash (kept in JSON text, which escapes its own), as \xNN: initiator
 * names come from the peer, and one with a newline must not forge log lines.
 */
static void print_escaped(const char *s, bool json)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c >= 0x20 && *c < 0x7f && (*c != '\\' || json))
			fputc(*c, stderr);
		else
			fprintf(stderr, "\\x%02x", *c);
	}
}

/* Prints one trace line as "faultlun serve: HH:MM:SS.mmm EVENT key=value ...". */
static void tap_print(const char *line)
{
	json_t *o = json_loads(line, 0, NULL);
	struct timespec ts;
	struct tm tm;
	const char *k;
	json_t *v;
	char when[32];

	if (!o)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	flockfile(stderr);
	k = json_string_value(json_object_get(o, "event"));
	fprintf(stderr, "faultlun serve: %s.%03ld ", when, ts.tv_nsec / 1000000);
	print_escaped(k ? k : "event", false);
	json_object_foreach(o, k, v)
	{
		char *text;

		if (!strcmp(k, "event") || !strcmp(k, "t_us"))
			continue;
		text = json_is_string(v) ? NULL : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		fputc(' ', stderr);
		print_escaped(k, false);
		fputc('=', stderr);
		print_escaped(text ? text : json_string_value(v), text != NULL);
		free(text);
	}
	fputc('\n', stderr);
	funlockfile(stderr);
	json_decref(o);
}

/* The tap thread: reads trace lines until the engine closes the pipe. */
static void *tap_main(void *arg)
{
	struct trace_tap *tap = arg;
	FILE *in = fdopen(tap->rfd, "r");
	char *line = NULL;
	size_t cap = 0;

	if (!in) {
		close(tap->rfd);
		return NULL;
	}
	while (getline(&line, &cap, in) > 0) {
		if (tap->copy) {
			fputs(line, tap->copy);
			fflush(tap->copy);
		}
		tap_print(line);
	}
	free(line);
	fclose(in);
	return NULL;
}

/*
 * Starts the tap for -v: the engine writes its trace into a pipe (*wfd), the
 * tap prints each line and copies it to trace_path when given.
 */
static int tap_start(struct trace_tap *tap, const char *trace_path, int *wfd)
{
	int p[2];

	tap->copy = NULL;
	if (trace_path) {
		tap->copy = fopen(trace_path, "we");
		if (!tap->copy) {
			fprintf(stderr, "faultlun serve: --trace: cannot open %s: %s\n", trace_path,
				strerror(errno));
			return -1;
		}
	}
	if (pipe2(p, O_CLOEXEC)) {
		if (tap->copy)
			fclose(tap->copy);
		return -1;
	}
	tap->rfd = p[0];
	if (pthread_create(&tap->th, NULL, tap_main, tap)) {
		close(p[0]);
		close(p[1]);
		if (tap->copy)
			fclose(tap->copy);
		return -1;
	}
	*wfd = p[1];
	return 0;
}

/* Waits for the tap to drain (the engine has closed, or we close, the write end). */
static void tap_stop(struct trace_tap *tap, int wfd)
{
	if (wfd >= 0)
		close(wfd);
	pthread_join(tap->th, NULL);
	if (tap->copy)
		fclose(tap->copy);
}

/* Starts `/bin/sh -c cmd` with the target's coordinates in its environment. */
static int run_child(const char *cmd, struct fl_iscsi *t, uint16_t lun, pid_t *pid)
{
	char port[16], url[512];
	snprintf(port, sizeof(port), "%u", fl_iscsi_port(t));
	snprintf(url, sizeof(url), "iscsi://%s:%u/%s/%u", fl_iscsi_address(t), fl_iscsi_port(t),
		 fl_iscsi_iqn(t), lun);
	setenv("FAULTLUN_PORT", port, 1);
	setenv("FAULTLUN_ADDR", fl_iscsi_address(t), 1);
	setenv("FAULTLUN_IQN", fl_iscsi_iqn(t), 1);
	setenv("FAULTLUN_URL", url, 1);
	/* every portal's URL, in the order of the scenario's ports (docs/multipath.md) */
	char urls[FL_ISCSI_MAX_PORTS * 300] = "";
	for (unsigned i = 0; i < fl_iscsi_portal_count(t); i++) {
		const char *a;
		uint16_t pt;
		size_t used = strlen(urls);

		fl_iscsi_portal(t, i, &a, &pt, NULL);
		snprintf(urls + used, sizeof(urls) - used, "%siscsi://%s:%u/%s/%u", i ? " " : "", a,
			 pt, fl_iscsi_iqn(t), lun);
	}
	setenv("FAULTLUN_URLS", urls, 1);

	posix_spawnattr_t attr;
	sigset_t none, all;
	sigemptyset(&none);
	sigemptyset(&all);
	sigaddset(&all, SIGINT);
	sigaddset(&all, SIGTERM);
	sigaddset(&all, SIGCHLD);
	sigaddset(&all, SIGPIPE);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	char *argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};
	int err = posix_spawn(pid, "/bin/sh", NULL, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	return err ? -err : 0;
}

/* What the command line of `faultlun serve` asks for. */
struct serve_args {
	struct fl_iscsi_opts o;
	char *chap_file_secret, *mutual_file_secret; /* owned: read from files */
	const char *run, *store, *trace, *ctl, *scenario_path;
	uint64_t size, seed;
	unsigned lun_id;
	uint32_t block_size;
	bool lun_set, seed_set, quiet, read_only;
	const char *listens[FL_ISCSI_MAX_PORTS];
	unsigned nlisten;
};

/* Sets a --pdu-timeout / --nopin-interval / --nopin-timeout (options 7..9); 0 or 2. */
static int opt_seconds(struct serve_args *a, int opt, const char *arg)
{
	static const char *const names[] = {"--pdu-timeout", "--nopin-interval", "--nopin-timeout"};
	unsigned ms;

	if (parse_seconds_ms(arg, &ms)) {
		fprintf(stderr,
			"faultlun serve: %s: '%s' is not a number of seconds "
			"(0..604800, fractions allowed: 0.5)\n",
			names[opt - 7], arg);
		return 2;
	}
	*(opt == 7   ? &a->o.pdu_timeout_ms
	  : opt == 8 ? &a->o.nopin_interval_ms
		     : &a->o.nopin_timeout_ms) = ms;
	return 0;
}

/* Sets a --max-connections / --max-sessions-per-* (options 10..12); 0 or 2. */
static int opt_limit(struct serve_args *a, int opt, const char *arg)
{
	static const char *const names[] = {"--max-connections", "--max-sessions-per-initiator",
					    "--max-sessions-per-address"};
	uint64_t v;

	if (cli_opt_uint("serve", names[opt - 10], arg, 1, 1000000, &v))
		return 2;
	*(opt == 10   ? &a->o.max_connections
	  : opt == 11 ? &a->o.max_sessions_per_initiator
		      : &a->o.max_sessions_per_address) = (unsigned)v;
	return 0;
}

/* Reads --chap-secret-file (14) or --mutual-secret-file (15); 0 or 2. */
static int opt_secret_file(struct serve_args *a, int opt, const char *arg)
{
	char *sec = read_secret_file(arg);

	if (!sec)
		return 2;
	free(opt == 14 ? a->chap_file_secret : a->mutual_file_secret);
	*(opt == 14 ? &a->chap_file_secret : &a->mutual_file_secret) = sec;
	*(opt == 14 ? &a->o.chap_secret : &a->o.mutual_secret) = sec;
	return 0;
}

/* The iSCSI portal's options: CHAP, timeouts, limits. 0, 2 (bad value) or -1 (not one). */
static int opt_portal(struct serve_args *a, int opt, const char *arg)
{
	uint64_t v;

	switch (opt) {
	case 1:
		a->o.chap_user = arg;
		return 0;
	case 2:
		a->o.chap_secret = arg;
		return 0;
	case 3:
		a->o.mutual_user = arg;
		return 0;
	case 4:
		a->o.mutual_secret = arg;
		return 0;
	case 5:
		if (cli_opt_uint("serve", "--login-timeout", arg, 1, 86400, &v))
			return 2;
		a->o.login_timeout_s = (unsigned)v;
		return 0;
	case 7:
	case 8:
	case 9:
		return opt_seconds(a, opt, arg);
	case 10:
	case 11:
	case 12:
		return opt_limit(a, opt, arg);
	case 13:
		if (cli_opt_size("serve", "--max-queued-mem", arg, &a->o.max_queued_bytes))
			return 2;
		return 0;
	case 14:
	case 15:
		return opt_secret_file(a, opt, arg);
	default:
		return -1;
	}
}

/* Checks --store's value: memory, null or file:PATH; 0 or 2. */
static int opt_store(struct serve_args *a, const char *arg)
{
	a->store = arg;
	if (strcmp(arg, "memory") && strcmp(arg, "null") && (strncmp(arg, "file:", 5) || !arg[5])) {
		fprintf(stderr, "faultlun serve: --store: '%s' is not memory, null or file:PATH\n",
			arg);
		return 2;
	}
	return 0;
}

/* The options of the LUNs, the engine and the run. 0, 2 (bad value) or -1 (not one). */
static int opt_lun(struct serve_args *a, int opt, const char *arg)
{
	uint64_t v;

	switch (opt) {
	case 'l':
		if (a->nlisten == FL_ISCSI_MAX_PORTS) {
			fprintf(stderr, "faultlun serve: at most %u --listen\n",
				FL_ISCSI_MAX_PORTS);
			return 2;
		}
		a->listens[a->nlisten++] = arg;
		a->o.listen = a->listens[0];
		return 0;
	case 'i':
		if (cli_opt_iqn("serve", "--iqn", arg))
			return 2;
		a->o.iqn = arg;
		return 0;
	case 'L':
		if (cli_opt_uint("serve", "--lun", arg, 0, FL_MAX_LUNS - 1, &v))
			return 2;
		a->lun_id = (unsigned)v;
		a->lun_set = true;
		return 0;
	case 's':
		return cli_opt_size("serve", "--size", arg, &a->size) ? 2 : 0;
	case 'b':
		return cli_opt_block_size("serve", "--block-size", arg, &a->block_size) ? 2 : 0;
	case 'S':
		return opt_store(a, arg);
	case 'e':
		if (cli_opt_uint("serve", "--seed", arg, 0, UINT64_MAX, &a->seed))
			return 2;
		a->seed_set = true;
		return 0;
	case 't':
		a->trace = arg;
		return 0;
	case 'c':
		a->ctl = arg;
		return 0;
	case 'r':
		a->run = arg;
		return 0;
	case 6:
		a->read_only = true;
		return 0;
	default:
		return -1;
	}
}

/* Reads the options in order; -1 to go on, else the exit status (help, version, errors). */
static int serve_options(int argc, char **argv, struct serve_args *a)
{
	static const struct option longopts[] = {
	    {"listen", required_argument, NULL, 'l'},
	    {"iqn", required_argument, NULL, 'i'},
	    {"lun", required_argument, NULL, 'L'},
	    {"size", required_argument, NULL, 's'},
	    {"block-size", required_argument, NULL, 'b'},
	    {"store", required_argument, NULL, 'S'},
	    {"seed", required_argument, NULL, 'e'},
	    {"trace", required_argument, NULL, 't'},
	    {"ctl", required_argument, NULL, 'c'},
	    {"chap-user", required_argument, NULL, 1},
	    {"chap-secret", required_argument, NULL, 2},
	    {"mutual-user", required_argument, NULL, 3},
	    {"mutual-secret", required_argument, NULL, 4},
	    {"run", required_argument, NULL, 'r'},
	    {"login-timeout", required_argument, NULL, 5},
	    {"read-only", no_argument, NULL, 6},
	    {"pdu-timeout", required_argument, NULL, 7},
	    {"nopin-interval", required_argument, NULL, 8},
	    {"nopin-timeout", required_argument, NULL, 9},
	    {"max-connections", required_argument, NULL, 10},
	    {"max-sessions-per-initiator", required_argument, NULL, 11},
	    {"max-sessions-per-address", required_argument, NULL, 12},
	    {"max-queued-mem", required_argument, NULL, 13},
	    {"chap-secret-file", required_argument, NULL, 14},
	    {"mutual-secret-file", required_argument, NULL, 15},
	    {"verbose", no_argument, NULL, 'v'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	int opt, rc;

	optind = 0;
	while ((opt = cli_getopt("serve", argc, argv, "vqhV", longopts)) != -1) {
		if ((rc = opt_lun(a, opt, optarg)) >= 0 || (rc = opt_portal(a, opt, optarg)) >= 0) {
			if (rc)
				return rc;
			continue;
		}
		switch (opt) {
		case 'v':
			a->o.verbose++;
			break;
		case 'q':
			a->quiet = true;
			break;
		case 'h':
			serve_usage(stdout);
			return 0;
		case 'V':
			cli_print_version(stdout);
			return 0;
		default:
			cli_try_help("serve");
			return 2;
		}
	}
	return -1;
}

/*
 * After the options: the scenario operand, the default LUN's size, the CHAP
 * secrets (from the environment when not given). -1 to go on, else 2.
 */
static int serve_operands(int argc, char **argv, struct serve_args *a)
{
	a->scenario_path = optind < argc ? argv[optind++] : NULL;
	if (optind < argc) {
		fprintf(stderr, "faultlun serve: one scenario at a time (got '%s' after '%s')\n",
			argv[optind], a->scenario_path);
		cli_try_help("serve");
		return 2;
	}
	if (!a->scenario_path) {
		uint32_t bs = a->block_size ? a->block_size : 512;
		if (a->size % bs) {
			fprintf(
			    stderr,
			    "faultlun serve: --size: %llu bytes is not a whole number of %u-byte "
			    "blocks\n",
			    (unsigned long long)a->size, bs);
			return 2;
		}
	}
	/* a secret on the command line is in /proc/PID/cmdline for every user to read */
	if (!a->o.chap_secret)
		a->o.chap_secret = getenv("FAULTLUN_CHAP_SECRET");
	if (!a->o.mutual_secret)
		a->o.mutual_secret = getenv("FAULTLUN_MUTUAL_SECRET");
	if (a->o.chap_user && !a->o.chap_secret) {
		fprintf(stderr, "faultlun serve: --chap-user needs --chap-secret or "
				"$FAULTLUN_CHAP_SECRET\n");
		return 2;
	}
	if (a->o.mutual_user && (!a->o.mutual_secret || !a->o.chap_user)) {
		fprintf(stderr, "faultlun serve: --mutual-user needs --chap-user and a mutual "
				"secret\n");
		return 2;
	}
	return -1;
}

/* Loads the scenario file into *sc; what: the banner's words for it. 0 or -1. */
static int load_scenario_file(struct serve_args *a, struct fl_scenario **sc, char *what, size_t len)
{
	struct fl_diags d = {0};

	if (a->lun_set || a->block_size)
		fprintf(stderr, "faultlun serve: --lun and --block-size apply to the default "
				"LUN only; the scenario's LUNs are served\n");
	int err = fl_scenario_load_file(a->scenario_path, FL_FE_ISCSI, sc, &d);
	if (err) {
		fl_diags_print(&d, stderr);
		fl_diags_free(&d);
		if (err != -EINVAL)
			fprintf(stderr, "faultlun serve: %s: %s\n", a->scenario_path,
				strerror(-err));
		return -1;
	}
	fl_diags_free(&d);
	if (!a->o.iqn)
		a->o.iqn = fl_scenario_target_iqn(*sc);
	snprintf(what, len, "scenario %s", fl_scenario_name(*sc));
	return 0;
}

/* No scenario: one default LUN (--lun, --size, --block-size), no rules. 0 or -1. */
static int load_default(const struct serve_args *a, struct fl_scenario **sc, char *what, size_t len)
{
	char text[256];
	struct fl_diags d = {0};

	snprintf(text, sizeof(text),
		 "{\"faultlun\": 1, \"name\": \"default\", \"frontends\": [\"iscsi\"], "
		 "\"luns\": [{\"lun\": %u, \"size\": %llu, \"block_size\": %u}]}",
		 a->lun_id, (unsigned long long)(a->size ? a->size : 1ull << 30),
		 a->block_size ? a->block_size : 512);
	if (fl_scenario_load_string("default", text, FL_FE_ISCSI, sc, &d)) {
		fl_diags_print(&d, stderr);
		fl_diags_free(&d);
		return -1;
	}
	fl_diags_free(&d);
	snprintf(what, len, "no scenario: one memory LUN");
	return 0;
}

/* The stack's options from the command line: trace, seed, store, size, control socket. */
static void stack_options(const struct serve_args *a, struct fl_stack_opts *so)
{
	struct fl_engine_opts *eo = &so->engine;

	memset(so, 0, sizeof(*so));
	eo->frontend = FL_FE_ISCSI;
	eo->trace_path = a->trace;
	eo->seed_set = a->seed_set;
	eo->seed = a->seed;
	if (a->store) {
		eo->store_override = true;
		eo->store = !strcmp(a->store, "memory") ? FL_STORE_MEMORY
			    : !strcmp(a->store, "null") ? FL_STORE_NULL
							: FL_STORE_FILE;
		eo->store_path = eo->store == FL_STORE_FILE ? a->store + 5 : NULL;
	}
	eo->size_override = a->size;
	/* the scenario's store paths are opened beneath its directory */
	eo->scenario_file = a->scenario_path;
	so->ctl_path = a->ctl;
}

/* Opens the stack; says which step failed. 0 or -1. */
static int open_stack(const struct fl_scenario *sc, const struct fl_stack_opts *so,
		      struct fl_stack *st)
{
	if (!fl_stack_open(sc, so, st))
		return 0;
	if (st->failed == FL_STACK_CTL)
		fprintf(stderr, "faultlun serve: cannot open control socket %s\n", so->ctl_path);
	else
		fprintf(stderr, "faultlun serve: cannot build the scenario's LUNs\n");
	return -1;
}

/* -q without --run: prints each portal asked for on port 0 (someone must learn the port). */
static void print_ephemeral(struct fl_iscsi *t, const struct cli_ports *ports, const char *listen)
{
	for (unsigned i = 0; i < fl_iscsi_portal_count(t); i++) {
		const char *l = ports->n ? ports->v[i].listen : listen;
		const char *a;
		uint16_t pt;

		if (l && strlen(l) > 2 && !strcmp(l + strlen(l) - 2, ":0") &&
		    !fl_iscsi_portal(t, i, &a, &pt, NULL))
			fprintf(stderr, "faultlun serve: listening on %s:%u\n", a, pt);
	}
}

/*
 * Signals are taken with sigwaitinfo by this thread only: block them before
 * any thread exists (the engine's timer thread, the loop), or a SIGCHLD
 * delivered to another thread is lost.
 */
static void block_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/*
 * Serves until SIGINT / SIGTERM or, with --run, until the command exits
 * (signals are passed on to it). Returns the exit status.
 */
static int serve_until_done(const sigset_t *set, const char *run, struct fl_iscsi *t, uint16_t lun)
{
	pid_t child = -1;
	int ret = 0;

	if (run) {
		int err = run_child(run, t, lun, &child);
		if (err) {
			fprintf(stderr, "faultlun serve: cannot run '%s': %s\n", run,
				strerror(-err));
			ret = 2;
		}
	}
	while (ret == 0 || child > 0) {
		siginfo_t si;
		int sig = sigwaitinfo(set, &si);
		if (sig < 0)
			continue;
		if (sig == SIGCHLD) {
			int st;
			if (child > 0 && waitpid(child, &st, WNOHANG) == child) {
				ret = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
				child = -1;
				break;
			}
			continue;
		}
		if (child > 0) {
			kill(child, sig); /* captive: the command decides, we follow */
			continue;
		}
		fprintf(stderr, "faultlun serve: %s, shutting down\n",
			sig == SIGINT ? "interrupted" : "terminated");
		break;
	}
	return ret;
}

/* What a running serve holds, closed in reverse by serve_close. */
struct serve_run {
	struct fl_scenario *sc;
	struct fl_stack stack;
	struct fl_iscsi *t;
	struct trace_tap tap;
	int tap_wfd; /* -v: the write end of the trace pipe, else -1 */
	uint16_t luns[FL_MAX_LUNS];
	unsigned nluns;
	char what[300]; /* the banner's words for what is served */
};

/* Scenario, trace tap (-v), stack, portal. 0, or -1 after a message. */
static int serve_open(struct serve_args *a, struct serve_run *r, struct cli_ports *ports)
{
	struct fl_stack_opts so;

	stack_options(a, &so);
	if (a->scenario_path ? load_scenario_file(a, &r->sc, r->what, sizeof(r->what))
			     : load_default(a, &r->sc, r->what, sizeof(r->what)))
		return -1;
	if (a->read_only)
		fl_scenario_set_read_only(r->sc);
	/* -v: the trace goes through a pipe to the printer (and on to --trace FILE). */
	if (a->o.verbose) {
		if (tap_start(&r->tap, a->trace, &r->tap_wfd))
			return -1;
		so.engine.trace_path = NULL;
		so.engine.trace_fd = r->tap_wfd;
	}
	if (open_stack(r->sc, &so, &r->stack))
		return -1;
	r->nluns = fl_target_lun_ids(fl_engine_target(r->stack.engine), r->luns, FL_MAX_LUNS);
	if (cli_ports("serve", r->sc, a->listens, a->nlisten, false, ports))
		return -1;
	a->o.ports = ports->v;
	a->o.nports = ports->n;
	return fl_iscsi_create(&a->o, r->stack.engine, NULL, &r->t) ? -1 : 0;
}

/* Closes what serve_open opened: the stack, the portal, the scenario, the tap. */
static void serve_close(struct serve_args *a, struct serve_run *r)
{
	fl_stack_close(&r->stack);
	fl_iscsi_destroy(r->t);
	fl_scenario_free(r->sc);
	free(a->chap_file_secret);
	free(a->mutual_file_secret);
	if (r->tap_wfd >= 0)
		tap_stop(&r->tap, r->tap_wfd);
}

/* `faultlun serve`: options, scenario and stack, portal, signals, captive child. */
int cmd_serve(int argc, char **argv)
{
	struct serve_args a = {0};
	struct serve_run r = {.tap_wfd = -1};
	struct cli_ports ports;
	sigset_t set;
	pthread_t th;
	int ret;

	if ((ret = serve_options(argc, argv, &a)) >= 0 ||
	    (ret = serve_operands(argc, argv, &a)) >= 0) {
		free(a.chap_file_secret);
		free(a.mutual_file_secret);
		return ret;
	}
	raise_nofile();
	block_signals(&set);
	ret = 2;
	if (serve_open(&a, &r, &ports))
		goto out;
	if (!a.quiet)
		banner(r.t, fl_engine_target(r.stack.engine), r.sc, r.luns, r.nluns, r.what);
	else if (!a.run)
		print_ephemeral(r.t, &ports, a.o.listen);
	if (cli_loop_start(r.t, "serve", &th))
		goto out;
	ret = serve_until_done(&set, a.run, r.t, r.nluns ? r.luns[0] : 0);
	cli_loop_stop(r.t, th);
out:
	serve_close(&a, &r);
	return ret;
}
