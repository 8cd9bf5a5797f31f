/* SPDX-License-Identifier: MIT */
/*
 * cmd_import.c - `faultlun import CAPTURE -o SCENARIO`: reads a pcap or
 * pcapng capture of iSCSI traffic with libpcap, one frame at a time (the
 * file is never loaded whole), hands each to the import (import.h) and
 * writes the scenario it builds, then loads that scenario as lint does: a
 * scenario import writes is one serve runs (docs/import.md). With --verify
 * (or --verify-scenario FILE) the capture's commands are then replayed
 * against that scenario (or FILE) in process and the answers compared with
 * the capture's (import_verify.c).
 */
#include "cli.h"
#include "cli_opts.h"
#include "import.h"

#include "fl_faults.h"

#include <errno.h>
#include <inttypes.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Prints the usage text. */
static void import_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: faultlun import [OPTIONS] CAPTURE.pcap|CAPTURE.pcapng -o SCENARIO.json\n"
	    "       faultlun import [OPTIONS] CAPTURE --verify [-o SCENARIO.json]\n"
	    "       faultlun import [OPTIONS] CAPTURE --verify-scenario SCENARIO.json\n"
	    "       faultlun import --scsi-debug RULES [--lun N] [--name NAME] -o SCENARIO.json\n"
	    "Builds a scenario from an iSCSI packet capture (tcpdump -w): the target's\n"
	    "identity, every non-GOOD answer, every command never answered, how long\n"
	    "reads, writes, flushes and unmaps took to answer, the connections it cut\n"
	    "and how task management requests were answered (response and delay); or,\n"
	    "with --scsi-debug, from scsi_debug's error rules and module options\n"
	    "(RULES: lines of its debugfs error file, KEY=VALUE options; '-': stdin).\n"
	    "  -o, --output FILE  the scenario to write ('-': standard output)\n"
	    "  --target IQN       import this target (default: the first one logged in to)\n"
	    "  --port N           the target's TCP port (default: 3260 or 860, else the\n"
	    "                     side that answered the SYN, else the PDUs' opcodes)\n"
	    "  --name NAME        the scenario's name (default: the capture's file name)\n"
	    "  --verify           replay the capture's commands against the scenario built\n"
	    "                     (in process) and print every answer that differs\n"
	    "  --verify-scenario FILE\n"
	    "                     replay them against FILE instead (nothing is written)\n"
	    "  --keep-data        keep what the reads returned: one image file per LUN next\n"
	    "                     to SCENARIO (SCENARIO.lunN.img, its file store), and\n"
	    "                     --verify compares the replay's read data with it\n"
	    "  --scsi-debug       RULES is scsi_debug's rules, not a capture\n"
	    "  --lun N            with --scsi-debug: the LUN they are for (default 0)\n"
	    "  -q, --quiet        no summary on stderr\n"
	    "  -h, --help         this text\n"
	    "  -V, --version      print the version\n"
	    "Exit status: 0 written, 1 no iSCSI traffic in the capture or the result does\n"
	    "not load, 2 usage error or an unreadable capture. With --verify or\n"
	    "--verify-scenario: 0 no differences, 1 differences, 2 any error.\n");
}

/* Writes the scenario to path ("-": stdout); 0 or -1 after a message. */
static int write_scenario(json_t *s, const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;

	if (!f) {
		fprintf(stderr, "faultlun import: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (json_dumpf(s, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) || fputc('\n', f) == EOF ||
	    (f != stdout ? fclose(f) : fflush(f))) {
		fprintf(stderr, "faultlun import: %s: write failed\n", path);
		return -1;
	}
	return 0;
}

/* Reads every frame of the capture into im; 0, or 2 after a message. */
static int read_capture(struct fl_import *im, const char *path, bool quiet)
{
	char err[PCAP_ERRBUF_SIZE] = "";
	struct pcap_pkthdr *h;
	const u_char *data;
	uint64_t frame = 0;
	pcap_t *p = pcap_open_offline(path, err);
	int r, lt;

	if (!p) {
		fprintf(stderr, "faultlun import: %s: not a capture libpcap can read: %s\n", path,
			err);
		return 2;
	}
	lt = pcap_datalink(p);
	while ((r = pcap_next_ex(p, &h, &data)) == 1) {
		frame++;
		uint32_t caplen = h->caplen > h->len && h->len ? h->len : h->caplen;
		int64_t t = (int64_t)h->ts.tv_sec * 1000000 + h->ts.tv_usec;
		if (fl_import_frame(im, lt, frame, t, data, caplen, h->len) == -ENOTSUP) {
			fprintf(stderr,
				"faultlun import: %s: link type %s (%d) is not read (Ethernet, "
				"Linux cooked, loopback, raw IP are)\n",
				path,
				pcap_datalink_val_to_name(lt) ? pcap_datalink_val_to_name(lt) : "?",
				lt);
			pcap_close(p);
			return 2;
		}
	}
	if (r == -1) {
		/* A truncated or corrupt file: what came before the bad frame is used. */
		fprintf(stderr,
			"faultlun import: %s: frame %" PRIu64 ": %s; the %" PRIu64
			" frames before it are imported\n",
			path, frame + 1, pcap_geterr(p), frame);
		fl_import_note(im, "the capture file ends in a bad frame (frame %" PRIu64 "): %s",
			       frame + 1, pcap_geterr(p));
	}
	(void)quiet;
	pcap_close(p);
	return 0;
}

/* Loads the scenario to verify against: FILE, the file written, or the one built. */
static struct fl_scenario *verify_load(const char *path, json_t *s)
{
	struct fl_diags d = {0};
	struct fl_scenario *sc = NULL;
	char *text = NULL;
	int r;

	if (path) {
		r = fl_scenario_load_file(path, 0, &sc, &d);
	} else {
		text = json_dumps(s, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		r = text ? fl_scenario_load_string("(imported)", text, 0, &sc, &d) : -ENOMEM;
	}
	if (r) {
		fl_diags_print(&d, stderr);
		fprintf(stderr, "faultlun import: verify: %s does not load: %s\n",
			path ? path : "the scenario built", strerror(-r));
		sc = NULL;
	}
	fl_diags_free(&d);
	free(text);
	return sc;
}

/* `faultlun import --verify` / `--verify-scenario`: 0 no differences, 1 some, 2 an error. */
static int import_verify(const struct fl_import_opts *o, const char *cap, const char *out,
			 const char *vscen, const char *name, bool quiet)
{
	struct fl_import *im = fl_import_new(o);
	struct fl_scenario *sc = NULL;
	json_t *s = NULL;
	unsigned n = 0, m = 0;
	int rc;

	if (!im)
		return 2;
	if (!name) {
		const char *b = strrchr(cap, '/');
		name = b ? b + 1 : cap;
	}
	rc = read_capture(im, cap, quiet);
	if (!rc && fl_import_finish(im, name, &s))
		rc = 2;
	if (!rc && out && write_scenario(s, out))
		rc = 2;
	if (!rc && !(sc = verify_load(vscen ? vscen : out && strcmp(out, "-") ? out : NULL, s)))
		rc = 2;
	if (!rc && out && strcmp(out, "-") && !quiet)
		fprintf(stderr, "faultlun import: %s -> %s\n", cap, out);
	if (!rc)
		rc = fl_import_verify(im, sc, vscen ? vscen : out,
				      out && !strcmp(out, "-") ? stderr : stdout, &n, &m)
			 ? 2
		     : m ? 1
			 : 0;
	fl_scenario_free(sc);
	json_decref(s);
	fl_import_free(im);
	return rc;
}

/* True if the scenario written to out loads as lint loads it (else its diagnostics are printed). */
static bool scenario_loads(const char *out)
{
	struct fl_diags d = {0};
	struct fl_scenario *sc = NULL;
	bool ok = true;

	if (fl_scenario_load_file(out, 0, &sc, &d)) {
		fl_diags_print(&d, stderr);
		fprintf(stderr, "faultlun import: %s does not load (a bug in import)\n", out);
		ok = false;
	}
	fl_diags_free(&d);
	fl_scenario_free(sc);
	return ok;
}

/*
 * Reads capture cap and writes the scenario it makes, named name, to out ("-": stdout);
 * returns the exit status of `faultlun import`.
 */
static int import_capture(const struct fl_import_opts *o, const char *cap, const char *name,
			  const char *out, bool quiet)
{
	struct fl_import *im = fl_import_new(o);
	json_t *s = NULL;
	int rc;

	if (!im)
		return 2;
	rc = read_capture(im, cap, quiet);
	if (!rc)
		rc = fl_import_finish(im, name, &s) ? 1 : 0;
	if (!rc && write_scenario(s, out))
		rc = 2;
	if (!rc && strcmp(out, "-") && !scenario_loads(out))
		rc = 1;
	if (!rc && !quiet) {
		json_t *r = json_object_get(s, "rules"), *l = json_object_get(s, "luns");
		fprintf(stderr, "faultlun import: %s: %zu LUN(s), %zu rule(s) -> %s\n", cap,
			json_array_size(l), json_array_size(r), out);
	}
	json_decref(s);
	fl_import_free(im);
	return rc;
}

/* `faultlun import --scsi-debug RULES`: the exit status. */
static int import_scsi_debug(const char *rules, int lun, const char *name, const char *out,
			     bool quiet)
{
	FILE *in = strcmp(rules, "-") ? fopen(rules, "r") : stdin;
	char err[512] = "";
	json_t *s;
	int rc = 0;

	if (!in) {
		fprintf(stderr, "faultlun import: %s: %s\n", rules, strerror(errno));
		return 2;
	}
	s = fl_import_scsi_debug(in, rules, lun, name, err, sizeof(err));
	if (in != stdin)
		fclose(in);
	if (!s) {
		fprintf(stderr, "faultlun import: %s\n", err);
		return 2;
	}
	if (write_scenario(s, out))
		rc = 2;
	if (!rc && strcmp(out, "-") && !scenario_loads(out))
		rc = 1;
	if (!rc && !quiet)
		fprintf(stderr, "faultlun import: %s: %zu rule(s), %zu TMF behaviour(s) -> %s\n",
			rules, json_array_size(json_object_get(s, "rules")),
			json_object_size(json_object_get(s, "tmf")), out);
	json_decref(s);
	return rc;
}

/* What the command line of `faultlun import` asks for. */
struct import_args {
	struct fl_import_opts o;
	const char *out, *name, *vscen;
	bool quiet, sd, lun_set;
	uint64_t lun;
};

/* Reads import's options into a; -1 to go on, else the exit status. */
static int import_options(int argc, char **argv, struct import_args *a)
{
	static const struct option longopts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"target", required_argument, NULL, 't'},
	    {"port", required_argument, NULL, 'p'},
	    {"name", required_argument, NULL, 'n'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {"verify", no_argument, NULL, 'v'},
	    {"verify-scenario", required_argument, NULL, 'S'},
	    {"scsi-debug", no_argument, NULL, 'D'},
	    {"lun", required_argument, NULL, 'L'},
	    {"keep-data", no_argument, NULL, 'K'},
	    {NULL, 0, NULL, 0},
	};
	uint64_t v;
	int opt;

	optind = 0;
	while ((opt = cli_getopt("import", argc, argv, "o:qhV", longopts)) != -1) {
		switch (opt) {
		case 'o':
			a->out = optarg;
			break;
		case 't':
			if (cli_opt_iqn("import", "--target", optarg))
				return 2;
			a->o.target = optarg;
			break;
		case 'p':
			if (cli_opt_uint("import", "--port", optarg, 1, 65535, &v))
				return 2;
			a->o.port = (uint16_t)v;
			break;
		case 'n':
			a->name = optarg;
			break;
		case 'q':
			a->quiet = true;
			break;
		case 'v':
			a->o.verify = true;
			break;
		case 'S':
			a->o.verify = true;
			a->vscen = optarg;
			break;
		case 'D':
			a->sd = true;
			break;
		case 'K':
			a->o.keep_data = true;
			break;
		case 'L':
			if (cli_opt_uint("import", "--lun", optarg, 0, 255, &a->lun))
				return 2;
			a->lun_set = true;
			break;
		case 'h':
			import_usage(stdout);
			return 0;
		case 'V':
			cli_print_version(stdout);
			return 0;
		default:
			cli_try_help("import");
			return 2;
		}
	}
	return -1;
}

/* True, after a message, when a's options and operands (argv from optind) do not go together. */
static bool import_args_bad(const struct import_args *a, int argc)
{
	if (a->sd && (a->o.verify || a->o.target || a->o.port || optind != argc - 1 || !a->out)) {
		fprintf(stderr,
			"faultlun import: --scsi-debug takes one RULES file and -o SCENARIO "
			"(not --verify, --target or --port)\n");
		return true;
	}
	if (a->o.keep_data && (a->sd || a->vscen || !a->out || !strcmp(a->out, "-"))) {
		fprintf(stderr, "faultlun import: --keep-data writes image files next to the "
				"scenario: it needs -o FILE (not -, --verify-scenario or "
				"--scsi-debug)\n");
		return true;
	}
	if (a->lun_set && !a->sd) {
		fprintf(stderr, "faultlun import: --lun goes with --scsi-debug "
				"(a capture names its LUNs)\n");
		return true;
	}
	if (!a->sd && (optind != argc - 1 || (!a->out && !a->o.verify) || (a->out && a->vscen))) {
		fprintf(stderr, "faultlun import: %s\n",
			optind != argc - 1 ? "one capture file, please"
			: a->vscen	   ? "--verify-scenario writes nothing: no -o"
					   : "-o SCENARIO is required (or --verify)");
		return true;
	}
	return false;
}

/*
 * --keep-data: the images' prefix, the scenario's path without ".json" (to
 * write, fs) and its file name so (as the scenario names it, relative to its
 * folder). False when too long.
 */
static bool image_prefix(const char *out, char *fs, size_t fslen, const char **named)
{
	size_t n = strlen(out);

	if (n > 5 && !strcmp(out + n - 5, ".json"))
		n -= 5;
	if (n + 1 > fslen || n == 0)
		return false;
	memcpy(fs, out, n);
	fs[n] = 0;
	*named = strrchr(fs, '/') ? strrchr(fs, '/') + 1 : fs;
	return **named != 0;
}

/* `faultlun import`. */
int cmd_import(int argc, char **argv)
{
	struct import_args a = {0};
	const char *cap, *name;
	char prefix[4000];
	int rc = import_options(argc, argv, &a);

	if (rc >= 0)
		return rc;
	if (import_args_bad(&a, argc)) {
		cli_try_help("import");
		return 2;
	}
	if (a.o.keep_data) {
		if (!image_prefix(a.out, prefix, sizeof(prefix), &a.o.image)) {
			fprintf(stderr, "faultlun import: %s: no name for the images\n", a.out);
			return 2;
		}
		a.o.image_fs = prefix;
	}
	if (a.sd)
		return import_scsi_debug(argv[optind], (int)a.lun, a.name ? a.name : "scsi-debug",
					 a.out, a.quiet);
	if (a.o.verify)
		return import_verify(&a.o, argv[optind], a.out, a.vscen, a.name, a.quiet);
	cap = argv[optind];
	name = a.name;
	if (!name) {
		const char *b = strrchr(cap, '/');
		name = b ? b + 1 : cap;
	}
	return import_capture(&a.o, cap, name, a.out, a.quiet);
}
