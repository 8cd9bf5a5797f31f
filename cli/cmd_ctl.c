/* SPDX-License-Identifier: MIT */
/*
 * cmd_ctl.c - `faultlun ctl SOCKET COMMAND [ARGS]`: one request to a running
 * target's control socket (docs/control-protocol.md), the answer printed as
 * one JSON line. `trace` prints trace lines until interrupted. Exit status 0
 * when the answer is ok, 1 when it is not, 2 on usage or connection errors.
 */
#include "cli.h"
#include "cli_opts.h"

#include <jansson.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Prints the usage text. */
static void ctl_usage(FILE *out)
{
	fprintf(out,
		"usage: faultlun ctl [--help] [--version] SOCKET COMMAND [ARGS]\n"
		"commands:\n"
		"  ping                    check the socket answers\n"
		"  status                  scenario, state, seed, LUNs\n"
		"  counters                engine and per-rule counters\n"
		"  held                    commands held or delayed now\n"
		"  state [NAME]            print, or move the state machine to NAME\n"
		"  arm ID | disarm ID      arm or disarm a rule\n"
		"  release --all | TAG [LUN]  end holds; the commands then execute\n"
		"  load FILE               replace the scenario (rules, tmf, transport, states)\n"
		"  act LUN ACTION          a LUN-wide effect now: ua, power_loss, resize, alua or\n"
		"                          owner, e.g. act 0 '{\"power_loss\": true}'\n"
		"  alua GROUP STATE        target port group GROUP enters STATE on every LUN\n"
		"                          (standby, active_optimized, transitioning, ...)\n"
		"  trace                   stream the trace (JSON lines) until interrupted\n"
		"  raw JSON                send one request as given\n");
}

/* Connects to the control socket; returns the fd or -1. */
static int ctl_connect(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "faultlun ctl: socket path too long\n");
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "faultlun ctl: cannot connect to %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Reads a whole file into a string. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			char *b = realloc(buf, cap = (cap ? cap * 2 : 8192));

			if (!b) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = b;
		}
		size_t r = fread(buf + n, 1, cap - n - 1, f);

		n += r;
		if (r == 0)
			break;
	}
	fclose(f);
	buf[n] = 0;
	return buf;
}

/* Reads a number argument of a ctl command strictly; -1 after a message. */
static int ctl_number(const char *what, const char *s, uint64_t max, uint64_t *out)
{
	return cli_opt_uint("ctl", what, s, 0, max, out);
}

/* Says that cmd takes other arguments than it got; returns NULL. */
static json_t *ctl_bad_args(const char *cmd, const char *want)
{
	fprintf(stderr, "faultlun ctl: %s takes %s\n", cmd, want);
	return NULL;
}

/* Builds a release request: --all, or TAG [LUN]; NULL after a message. */
static json_t *build_release(int argc, char **argv)
{
	uint64_t tag, lun;

	if (argc == 2 && !strcmp(argv[1], "--all"))
		return json_pack("{s:s, s:b}", "cmd", "release", "all", 1);
	if (argc < 2 || argc > 3)
		return ctl_bad_args(argv[0], "--all, or a tag and optionally a LUN");
	if (ctl_number("release TAG", argv[1], INT64_MAX, &tag))
		return NULL;
	if (argc == 2)
		return json_pack("{s:s, s:I}", "cmd", "release", "tag", (json_int_t)tag);
	if (ctl_number("release LUN", argv[2], 255, &lun))
		return NULL;
	return json_pack("{s:s, s:I, s:I}", "cmd", "release", "tag", (json_int_t)tag, "lun",
			 (json_int_t)lun);
}

/* Builds a load request carrying the text of scenario FILE; NULL after a message. */
static json_t *build_load(int argc, char **argv)
{
	char *text;
	json_t *r;

	if (argc != 2)
		return ctl_bad_args(argv[0], "one scenario file");
	text = slurp(argv[1]);
	if (!text) {
		fprintf(stderr, "faultlun ctl: load: cannot read %s: %s\n", argv[1],
			strerror(errno));
		return NULL;
	}
	r = json_pack("{s:s, s:s, s:s}", "cmd", "load", "name", argv[1], "text", text);
	free(text);
	return r;
}

/* Builds an act request: LUN and an ACTION given as a JSON object; NULL after a message. */
static json_t *build_act(int argc, char **argv)
{
	json_error_t err;
	uint64_t lun;
	json_t *a;

	if (argc != 3)
		return ctl_bad_args(argv[0], "a LUN and an action (JSON)");
	if (ctl_number("act LUN", argv[1], 255, &lun))
		return NULL;
	a = json_loads(argv[2], 0, &err);
	if (!json_is_object(a)) {
		fprintf(stderr,
			"faultlun ctl: act ACTION: '%s' is not a JSON object (e.g. "
			"'{\"power_loss\": true}')\n",
			argv[2]);
		json_decref(a);
		return NULL;
	}
	return json_pack("{s:s, s:I, s:o}", "cmd", "act", "lun", (json_int_t)lun, "action", a);
}

/* Builds an alua request: GROUP and STATE; NULL after a message. */
static json_t *build_alua(int argc, char **argv)
{
	uint64_t group;

	if (argc != 3)
		return ctl_bad_args(argv[0], "a target port group and a state");
	if (ctl_number("alua GROUP", argv[1], 0xffff, &group))
		return NULL;
	return json_pack("{s:s, s:I, s:s}", "cmd", "alua", "group", (json_int_t)group, "state",
			 argv[2]);
}

/* Builds a raw request: the JSON as given; NULL after a message. */
static json_t *build_raw(int argc, char **argv)
{
	json_error_t err;
	json_t *r;

	if (argc != 2)
		return ctl_bad_args(argv[0], "one JSON request");
	r = json_loads(argv[1], 0, &err);
	if (!r)
		fprintf(stderr, "faultlun ctl: raw: bad JSON: %s\n", err.text);
	return r;
}

/* Builds the request for argv; returns NULL (after a message) on usage errors. */
static json_t *build_request(int argc, char **argv)
{
	static const char *const commands[] = {"ping",	"status", "counters", "held", "state",
					       "arm",	"disarm", "release",  "load", "act",
					       "trace", "raw",	  "alua",     NULL};
	const char *cmd = argv[0];

	if (cli_opt_word("ctl", "COMMAND", cmd, commands))
		return NULL;
	if (!strcmp(cmd, "ping") || !strcmp(cmd, "status") || !strcmp(cmd, "counters") ||
	    !strcmp(cmd, "held") || !strcmp(cmd, "trace"))
		return argc == 1 ? json_pack("{s:s}", "cmd", cmd)
				 : ctl_bad_args(cmd, "no arguments");
	if (!strcmp(cmd, "state"))
		return argc == 1   ? json_pack("{s:s}", "cmd", "state")
		       : argc == 2 ? json_pack("{s:s, s:s}", "cmd", "state", "set", argv[1])
				   : ctl_bad_args(cmd, "at most one state name");
	if (!strcmp(cmd, "arm") || !strcmp(cmd, "disarm"))
		return argc == 2 ? json_pack("{s:s, s:s}", "cmd", cmd, "rule", argv[1])
				 : ctl_bad_args(cmd, "one rule id");
	if (!strcmp(cmd, "release"))
		return build_release(argc, argv);
	if (!strcmp(cmd, "load"))
		return build_load(argc, argv);
	if (!strcmp(cmd, "act"))
		return build_act(argc, argv);
	if (!strcmp(cmd, "alua"))
		return build_alua(argc, argv);
	return build_raw(argc, argv);
}

/* Reads ctl's options (before SOCKET); -1 to go on, else the exit status. */
static int ctl_options(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	int opt;

	/* "+": options before SOCKET only; "release --all" is an argument. */
	optind = 0;
	while ((opt = cli_getopt("ctl", argc, argv, "+hV", longopts)) != -1) {
		switch (opt) {
		case 'h':
			ctl_usage(stdout);
			return 0;
		case 'V':
			cli_print_version(stdout);
			return 0;
		default:
			cli_try_help("ctl");
			return 2;
		}
	}
	if (argc - optind < 2) {
		fprintf(stderr, "faultlun ctl: %s\n",
			argc - optind < 1 ? "no SOCKET and no COMMAND given" : "no COMMAND given");
		ctl_usage(stderr);
		return 2;
	}
	return -1;
}

/* Writes req as one line to fd, and releases it. */
static void ctl_send(int fd, json_t *req)
{
	char *s = json_dumps(req, JSON_COMPACT);
	size_t len = s ? strlen(s) : 0, off = 0;

	json_decref(req);
	while (s && off < len + 1) {
		ssize_t w = off < len ? write(fd, s + off, len - off) : write(fd, "\n", 1);

		if (w <= 0)
			break;
		off += (size_t)w;
	}
	free(s);
}

/* Says why the target refused command cmd (its answer resp), with its diagnostics. */
static void ctl_refused(json_t *resp, const char *cmd)
{
	json_t *d = json_object_get(resp, "diagnostics"), *v;
	const char *e = json_string_value(json_object_get(resp, "error"));
	size_t i;

	fprintf(stderr, "faultlun ctl: %s: %s\n", cmd, e ? e : "the target refused the request");
	json_array_foreach(d, i, v) fprintf(stderr, "%s\n", json_string_value(v));
}

/* `faultlun ctl`: sends one request, prints the answer (or the trace stream). */
int cmd_ctl(int argc, char **argv)
{
	json_t *req, *resp;
	json_error_t err;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *in;
	int fd, rc;
	const char *sock;

	rc = ctl_options(argc, argv);
	if (rc >= 0)
		return rc;
	sock = argv[optind];
	req = build_request(argc - optind - 1, argv + optind + 1);
	if (!req) {
		cli_try_help("ctl");
		return 2;
	}
	fd = ctl_connect(sock);
	if (fd < 0) {
		json_decref(req);
		return 2;
	}
	ctl_send(fd, req);
	in = fdopen(fd, "r");
	if (!in) {
		close(fd);
		return 2;
	}
	n = getline(&line, &cap, in);
	if (n <= 0) {
		fprintf(stderr, "faultlun ctl: no answer from %s\n", sock);
		fclose(in);
		free(line);
		return 2;
	}
	fputs(line, stdout);
	resp = json_loads(line, 0, &err);
	rc = json_is_true(json_object_get(resp, "ok")) ? 0 : 1;
	if (rc)
		ctl_refused(resp, argv[optind + 1]);
	if (!rc && !strcmp(argv[optind + 1], "trace")) {
		fflush(stdout);
		while ((n = getline(&line, &cap, in)) > 0) {
			fputs(line, stdout);
			fflush(stdout);
		}
	}
	json_decref(resp);
	free(line);
	fclose(in);
	return rc;
}
