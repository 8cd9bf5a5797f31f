/* SPDX-License-Identifier: MIT */
/*
 * cmd_vm.c - `faultlun vm SCENARIO... [--path iscsi|tcmu|both|lio] [--keep]
 * [--out DIR] [--cache DIR] [--accel auto|kvm|tcg] [--timeout S] [--quiet]`:
 * runs each scenario on each path in a QEMU guest with the stock Debian
 * kernel (vm/, docs/vm-lab.md), prints the timeline and a verdict per
 * expectation, writes result.json and report.html per run, and exits 0 only
 * if every expectation of every run holds (1: an expectation failed; 2: setup
 * or guest error; 77: qemu or the kernel package cannot be had).
 */
#include "cli.h"
#include "fl_faults.h"
#include "fl_vm.h"

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Prints the usage. */
static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: faultlun vm SCENARIO... [options]\n"
	    "  --path iscsi|tcmu|both|lio   path(s) to the LUN (default: the scenario's\n"
	    "                               check.paths; lio = LIO ramdisk, plumbing only)\n"
	    "  --out DIR       results (default: a new directory under /tmp, removed\n"
	    "                  after a pass unless --keep)\n"
	    "  --keep          keep the run directory\n"
	    "  --cache DIR     guest cache (default $XDG_CACHE_HOME/faultlun, ~/.cache/faultlun)\n"
	    "  --accel auto|kvm|tcg   accelerator (default auto: KVM if it boots, else TCG)\n"
	    "  --timeout S     guest time limit (default check.vm_timeout_s or 300)\n"
	    "  --memory MB     guest memory (default 2048)\n"
	    "  --quiet         no timeline\n");
}

/* Paths a scenario asks for ("iscsi" when it says nothing). */
static int scenario_paths(const char *file, char paths[2][8])
{
	json_t *sc = json_load_file(file, 0, NULL);
	json_t *p = json_object_get(json_object_get(sc, "check"), "paths");
	int n = 0;
	size_t i;
	json_t *v;
	json_array_foreach(p, i, v) if (n < 2 && json_is_string(v))
	    snprintf(paths[n++], 8, "%s", json_string_value(v));
	json_decref(sc);
	if (!n)
		snprintf(paths[n++], 8, "iscsi");
	return n;
}

int cmd_vm(int argc, char **argv)
{
	struct fl_vm_opts o = {.accel = "auto"};
	const char *path = NULL, *out = NULL, *recheck = NULL;
	bool keep = false;
	const char *files[64];
	int nfiles = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--keep")) {
			keep = true;
		} else if (!strcmp(a, "--quiet")) {
			o.quiet = true;
		} else if (a[0] == '-' && a[1] == '-' && !v) {
			fprintf(stderr, "faultlun vm: %s needs a value\n", a);
			return 2;
		} else if (!strcmp(a, "--path")) {
			path = argv[++i];
		} else if (!strcmp(a, "--recheck")) {
			recheck = argv[++i];
		} else if (!strcmp(a, "--out")) {
			out = argv[++i];
		} else if (!strcmp(a, "--cache")) {
			o.cache_dir = argv[++i];
		} else if (!strcmp(a, "--accel")) {
			o.accel = argv[++i];
		} else if (!strcmp(a, "--timeout")) {
			o.guest_timeout_s = atoi(argv[++i]);
		} else if (!strcmp(a, "--memory")) {
			o.memory_mb = atoi(argv[++i]);
		} else if (a[0] == '-') {
			fprintf(stderr, "faultlun vm: unknown option %s\n", a);
			usage(stderr);
			return 2;
		} else if (nfiles < 64) {
			files[nfiles++] = a;
		}
	}
	if (!nfiles) {
		usage(stderr);
		return 2;
	}
	if (path && strcmp(path, "iscsi") && strcmp(path, "tcmu") && strcmp(path, "both") &&
	    strcmp(path, "lio")) {
		fprintf(stderr, "faultlun vm: --path must be iscsi, tcmu, both or lio\n");
		return 2;
	}
	if (recheck) {
		char res[PATH_MAX + 16];
		if (nfiles != 1) {
			fprintf(stderr, "faultlun vm: --recheck takes one scenario\n");
			return 2;
		}
		int rc = fl_vm_recheck(files[0], path ? path : "iscsi", recheck);
		snprintf(res, sizeof(res), "%s/result.json", recheck);
		if (access(res, R_OK) == 0)
			fl_vm_report_text(res, stdout, !o.quiet);
		return rc;
	}
	char base[PATH_MAX];
	if (out) {
		snprintf(base, sizeof(base), "%s", out);
	} else {
		snprintf(base, sizeof(base), "/tmp/faultlun-vm.XXXXXX");
		if (!mkdtemp(base)) {
			perror("faultlun vm: mkdtemp");
			return 2;
		}
	}
	int worst = 0, runs = 0, skips = 0;
	for (int f = 0; f < nfiles; f++) {
		char paths[2][8];
		int np;
		if (!path) {
			np = scenario_paths(files[f], paths);
		} else if (!strcmp(path, "both")) {
			snprintf(paths[0], 8, "iscsi");
			snprintf(paths[1], 8, "tcmu");
			np = 2;
		} else {
			snprintf(paths[0], 8, "%s", path);
			np = 1;
		}
		for (int p = 0; p < np; p++) {
			char dir[PATH_MAX + 200], res[PATH_MAX + 240], html[PATH_MAX + 240];
			char stem[128];
			const char *slash = strrchr(files[f], '/');
			snprintf(stem, sizeof(stem), "%s", slash ? slash + 1 : files[f]);
			stem[strcspn(stem, ".")] = 0;
			snprintf(dir, sizeof(dir), "%s/%s-%s", base, stem, paths[p]);
			o.path = paths[p];
			/* A broken scenario is reported before a guest boots for it. */
			if (strcmp(paths[p], "lio")) {
				struct fl_scenario *sc = NULL;
				struct fl_diags diags = {0};
				unsigned fe = !strcmp(paths[p], "tcmu") ? FL_FE_TCMU : FL_FE_ISCSI;
				int lr = fl_scenario_load_file(files[f], fe, &sc, &diags);
				if (lr < 0) {
					fl_diags_print(&diags, stderr);
					fl_diags_free(&diags);
					fprintf(
					    stderr,
					    "faultlun vm: %s: not a valid scenario for path %s\n",
					    files[f], paths[p]);
					if (worst < 2)
						worst = 2;
					runs++;
					continue;
				}
				fl_diags_free(&diags);
				fl_scenario_free(sc);
			}
			int rc = fl_vm_run(files[f], &o, dir);
			runs++;
			if (rc == FL_VM_SKIP) {
				skips++;
				continue;
			}
			snprintf(res, sizeof(res), "%s/result.json", dir);
			snprintf(html, sizeof(html), "%s/report.html", dir);
			if (access(res, R_OK) == 0) {
				fl_vm_report_text(res, stdout, !o.quiet);
				if (fl_vm_report_html(res, html) == 0)
					printf("result: %s\nreport: %s\n", res, html);
			}
			if (rc > worst)
				worst = rc;
		}
	}
	if (skips == runs) {
		fprintf(stderr, "faultlun vm: skipped (no qemu or no kernel package)\n");
		return 77;
	}
	if (!out && !keep && worst == 0) {
		char cmd[PATH_MAX + 16];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
		if (system(cmd) != 0)
			fprintf(stderr, "faultlun vm: could not remove %s\n", base);
	} else {
		printf("run directory: %s\n", base);
	}
	return worst;
}
