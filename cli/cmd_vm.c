/* SPDX-License-Identifier: MIT */
/*
 * cmd_vm.c - `faultlun vm SCENARIO... [--path iscsi|tcmu|both|lio] [--keep]
 * [--out DIR] [--cache DIR] [--accel auto|kvm|tcg] [--timeout S] [--quiet]`:
 * runs each scenario on each path in a QEMU guest with the stock Debian
 * kernel (vm/, docs/vm-lab.md), prints the timeline and a verdict per
 * expectation, writes result.json and report.html per run, and exits 0 only
 * if every expectation of every run holds (1: an expectation failed; 2: setup
 * or guest error; 77: qemu or the kernel package cannot be had). `--ktap
 * FILE` writes the runs' verdicts as KTAP version 1 (ktap.c).
 */
#include "check_report.h"
#include "cli.h"
#include "fl_scenario.h"
#include "cli_opts.h"
#include "fl_faults.h"
#include "fl_vm.h"
#include "vm_paths.h"

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
	    "  --cpus N        guest vCPUs (default 2)\n"
	    "  --tcg-thread single|multi   under TCG, one host thread for every vCPU or\n"
	    "                  one each (default $FAULTLUN_TCG_THREAD, else multi)\n"
	    "  --kernel K      the guest's kernel: stock (Debian 12's, the default),\n"
	    "                  debian:SUITE (bookworm, trixie, sid), or a kernel image\n"
	    "                  (bzImage or vmlinux)\n"
	    "  --modules DIR   the image's module tree (a build tree or /lib/modules/VER)\n"
	    "  --kernels K1,K2,...   run everything on each kernel and write a matrix\n"
	    "                  report (matrix.json, matrix.html); an image's module\n"
	    "                  tree follows it after '=' (IMAGE=DIR)\n"
	    "  --boot-each     boot a guest for each run (default: the runs on one\n"
	    "                  kernel and path share a boot, each on a fresh target)\n"
	    "  --recheck DIR   check a kept run directory again (one scenario)\n"
	    "  --quiet         no timeline\n"
	    "  --ktap FILE     the verdicts of every run in KTAP version 1\n"
	    "  --where         print where the lab's scripts, guest programs and tcmu\n"
	    "                  handler are taken from, and exit\n"
	    "  -h, --help      this text\n"
	    "  -V, --version   print the version\n"
	    "Exit status: 0 every expectation holds, 1 one failed, 2 setup or guest error,\n"
	    "77 qemu or the kernel package cannot be had.\n");
}

/*
 * Paths a scenario's check asks for ("iscsi" when it says nothing, or when the
 * scenario does not load: the run then reports its diagnostics).
 */
static int scenario_paths(const char *file, char paths[3][8])
{
	static const struct {
		unsigned bit;
		const char *name;
	} names[] = {{FL_PATH_ISCSI, "iscsi"}, {FL_PATH_TCMU, "tcmu"}, {FL_PATH_LIO, "lio"}};
	struct fl_scenario *sc = NULL;
	struct fl_diags d = {0};
	const struct fl_check *ck;
	int n = 0;

	if (!fl_scenario_load_file(file, FL_FE_ANY, &sc, &d) && (ck = fl_scenario_check(sc)))
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (ck->paths & names[i].bit)
				snprintf(paths[n++], 8, "%s", names[i].name);
	fl_diags_free(&d);
	fl_scenario_free(sc);
	if (!n)
		snprintf(paths[n++], 8, "iscsi");
	return n;
}

/* A file name's stem: "dir/end-of-disk.json" -> "end-of-disk". */
static void file_stem(const char *file, char *stem, size_t len)
{
	const char *slash = strrchr(file, '/');

	snprintf(stem, len, "%s", slash ? slash + 1 : file);
	stem[strcspn(stem, ".")] = 0;
}

/* A kernel's label as a folder name: "debian:trixie" -> "debian-trixie", an image's file name. */
static void kernel_dir(const char *kernel, char *dir, size_t len)
{
	const char *slash = strrchr(kernel, '/');

	snprintf(dir, len, "%s", slash ? slash + 1 : kernel);
	for (char *c = dir; *c; c++)
		if (*c == ':' || *c == '=' || *c == ' ')
			*c = '-';
}

/* One run of `faultlun vm`: a scenario on a path on the current kernel. */
struct vm_one {
	const char *file;
	char path[24], stem[128], dir[PATH_MAX + 400];
	bool batch; /* may share a boot with other runs on its path */
	int rc;	    /* -1: not run yet */
};

/*
 * Loads the scenario for path as the run will. A scenario the loader refuses
 * gets *rc 2 (diagnostics printed) and does not run: it is reported before
 * a guest boots for it. Returns whether it loaded.
 */
static bool vm_loads(const char *file, const char *path, int *rc)
{
	struct fl_scenario *sc = NULL;
	struct fl_diags diags = {0};
	unsigned fe = !strcmp(path, "tcmu")    ? FL_FE_TCMU
		      : !strcmp(path, "iscsi") ? FL_FE_ISCSI
					       : FL_FE_ANY;

	if (fl_scenario_load_file(file, fe, &sc, &diags) < 0) {
		fl_diags_print(&diags, stderr);
		fprintf(stderr, "faultlun vm: %s: not a valid scenario for path %s\n", file, path);
		fl_diags_free(&diags);
		*rc = 2;
		return false;
	}
	fl_diags_free(&diags);
	fl_scenario_free(sc);
	return true;
}

/* Every run of one `faultlun vm`, on every kernel, and what is written of them. */
struct vm_all {
	const char *kernels[16];
	char *kmods[16];
	int nk;
	bool matrix;			 /* --kernels: a matrix report */
	struct fl_vm_matrix_cell *cells; /* the matrix report's cells */
	char **cell_strings;		 /* three per cell: scenario, path, result */
	size_t ncells;
	struct cli_vm_run *kruns; /* every run of every kernel, for --ktap */
	size_t nkruns;
	struct vm_one *all; /* the current kernel's runs */
	char base[PATH_MAX];
	int worst, runs, skips;
};

/*
 * The kernels to run on: kernel_list (K1,K2,..., each "stock",
 * "debian:SUITE" or IMAGE[=MODULE_DIR], edited in place), else kernel and
 * modules (NULL: the stock kernel). Returns 0, or 2 after a message.
 */
static int vm_kernels(struct vm_all *m, char *kernel_list, const char *kernel, const char *modules)
{
	if (!kernel_list) {
		m->kernels[0] = kernel;
		m->kmods[0] = (char *)modules;
		m->nk = 1;
		return 0;
	}
	char *save = NULL;
	for (char *k = strtok_r(kernel_list, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
		if (m->nk == 16) {
			fprintf(stderr, "faultlun vm: at most 16 kernels at a time\n");
			return 2;
		}
		char *eq = strchr(k, '=');
		m->kmods[m->nk] = NULL;
		if (eq) {
			*eq = 0;
			m->kmods[m->nk] = eq + 1;
		}
		m->kernels[m->nk++] = k;
	}
	if (!m->nk) {
		fprintf(stderr, "faultlun vm: --kernels names no kernel\n");
		return 2;
	}
	m->matrix = true;
	return 0;
}

/*
 * Lays out the runs of files on one kernel (kdir: its folder under base, ""
 * without --kernels): each file on path, or on "both" paths, or on its
 * check.paths when path is NULL. Returns how many runs are in all.
 */
static int vm_plan(struct vm_one *all, const char **files, int nfiles, const char *path,
		   const char *base, const char *kdir, bool batch)
{
	int nrun = 0;

	for (int f = 0; f < nfiles; f++) {
		char paths[3][8];
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
			struct vm_one *r = &all[nrun++];
			*r = (struct vm_one){.file = files[f], .rc = -1};
			snprintf(r->path, sizeof(r->path), "%s", paths[p]);
			file_stem(files[f], r->stem, sizeof(r->stem));
			snprintf(r->dir, sizeof(r->dir), "%s/%s%s%s-%s", base, kdir,
				 *kdir ? "/" : "", r->stem, paths[p]);
			r->batch = vm_loads(files[f], paths[p], &r->rc) && batch;
		}
	}
	return nrun;
}

/* Runs that can share a boot: one boot per path with two or more of them. */
static void vm_run_shared(struct vm_one *all, int nrun, struct fl_vm_opts *o, const char *base,
			  const char *kdir)
{
	static const char *const pw[] = {"iscsi", "tcmu", "lio"};

	for (size_t w = 0; w < sizeof(pw) / sizeof(pw[0]); w++) {
		const char *bf[64 * 3], *bd[64 * 3];
		int brc[64 * 3], bi[64 * 3], nb = 0;
		for (int i = 0; i < nrun; i++)
			if (all[i].batch && !strcmp(all[i].path, pw[w])) {
				bf[nb] = all[i].file;
				bd[nb] = all[i].dir;
				bi[nb++] = i;
			}
		if (nb < 2)
			continue;
		char share[PATH_MAX + 200];
		snprintf(share, sizeof(share), "%s/%s%sboot-%s", base, kdir, *kdir ? "/" : "",
			 pw[w]);
		o->path = pw[w];
		fl_vm_run_batch(bf, (size_t)nb, o, bd, share, brc);
		for (int j = 0; j < nb; j++)
			all[bi[j]].rc = brc[j];
	}
}

/* Adds run r on kernel k to the KTAP list and the matrix, and prints its report. */
static void vm_record(struct vm_all *m, int k, const struct vm_one *r, bool quiet)
{
	char res[PATH_MAX + 440], html[PATH_MAX + 440];

	m->runs++;
	snprintf(res, sizeof(res), "%s/result.json", r->dir);
	if (m->kruns) {
		struct cli_vm_run *kr = &m->kruns[m->nkruns++];
		snprintf(kr->name, sizeof(kr->name), "%s%s%s (%s)", m->matrix ? m->kernels[k] : "",
			 m->matrix ? " " : "", r->stem, r->path);
		snprintf(kr->result, sizeof(kr->result), "%s", res);
		kr->rc = r->rc;
	}
	if (m->cells) {
		char **cs = m->cell_strings + m->ncells * 3;
		cs[0] = strdup(r->stem);
		cs[1] = strdup(r->path);
		cs[2] = strdup(res);
		m->cells[m->ncells++] = (struct fl_vm_matrix_cell){.kernel = m->kernels[k],
								   .scenario = cs[0],
								   .path = cs[1],
								   .result_json = cs[2],
								   .rc = r->rc};
	}
	if (r->rc == FL_VM_SKIP) {
		m->skips++;
		return;
	}
	snprintf(html, sizeof(html), "%s/report.html", r->dir);
	if (access(res, R_OK) == 0) {
		fl_vm_report_text(res, stdout, !quiet);
		if (fl_vm_report_html(res, html) == 0)
			printf("result: %s\nreport: %s\n", res, html);
	}
	if (r->rc > m->worst)
		m->worst = r->rc;
}

/* Writes the KTAP file and the matrix report, and frees what m holds. */
static void vm_write(struct vm_all *m, const char *ktap)
{
	if (m->kruns && cli_ktap_vm_write(ktap, m->kruns, m->nkruns))
		fprintf(stderr, "faultlun vm: cannot write %s\n", ktap);
	if (m->cells &&
	    fl_vm_matrix_write(m->cells, m->ncells, m->kernels, (size_t)m->nk, m->base, stdout) < 0)
		fprintf(stderr, "faultlun vm: cannot write the matrix report in %s\n", m->base);
	for (size_t i = 0; m->cell_strings && i < m->ncells * 3; i++)
		free(m->cell_strings[i]);
	free(m->cell_strings);
	free(m->cells);
	free(m->kruns);
	free(m->all);
}

/*
 * Runs every scenario on every path on every kernel (vm_kernels says which);
 * with kernel_list, writes the matrix report. Frees kernel_list. Returns the
 * worst exit status, 77 when every run was skipped.
 */
static int run_kernels(const char **files, int nfiles, const char *path, struct fl_vm_opts *o,
		       char *kernel_list, const char *kernel, const char *modules, const char *out,
		       bool keep, bool batch, const char *ktap)
{
	struct vm_all m = {0};
	size_t most = (size_t)nfiles * 3;

	if (vm_kernels(&m, kernel_list, kernel, modules)) {
		free(kernel_list);
		return 2;
	}
	snprintf(m.base, sizeof(m.base), "%s", out ? out : "/tmp/faultlun-vm.XXXXXX");
	if (!out && !mkdtemp(m.base)) {
		perror("faultlun vm: mkdtemp");
		free(kernel_list);
		return 2;
	}
	m.all = calloc(most, sizeof(*m.all));
	m.kruns = ktap ? calloc((size_t)m.nk * most, sizeof(*m.kruns)) : NULL;
	if (m.matrix) {
		m.cells = calloc((size_t)m.nk * most, sizeof(*m.cells));
		m.cell_strings = calloc((size_t)m.nk * most * 3, sizeof(char *));
	}
	if (!m.all || (ktap && !m.kruns) || (m.matrix && (!m.cells || !m.cell_strings))) {
		free(m.all);
		free(m.kruns);
		free(m.cells);
		free(m.cell_strings);
		fprintf(stderr, "faultlun vm: out of memory\n");
		free(kernel_list);
		return 2;
	}
	for (int k = 0; k < m.nk; k++) {
		/* "stock" is the default kernel */
		o->kernel = m.kernels[k] && strcmp(m.kernels[k], "stock") ? m.kernels[k] : NULL;
		o->modules = m.kmods[k];
		char kdir[128] = "";
		if (m.matrix)
			kernel_dir(m.kernels[k], kdir, sizeof(kdir));
		int nrun = vm_plan(m.all, files, nfiles, path, m.base, kdir, batch);
		vm_run_shared(m.all, nrun, o, m.base, kdir);
		for (int i = 0; i < nrun; i++) {
			struct vm_one *r = &m.all[i];
			if (r->rc == -1) {
				o->path = r->path;
				r->rc = fl_vm_run(r->file, o, r->dir);
			}
			vm_record(&m, k, r, o->quiet);
		}
	}
	vm_write(&m, ktap);
	free(kernel_list);
	if (m.skips == m.runs) {
		fprintf(stderr, "faultlun vm: skipped (no qemu or no kernel package)\n");
		return 77;
	}
	if (!out && !keep && m.worst == 0) {
		char cmd[PATH_MAX + 16];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", m.base);
		if (system(cmd) != 0)
			fprintf(stderr, "faultlun vm: could not remove %s\n", m.base);
	} else {
		printf("run directory: %s\n", m.base);
	}
	return m.worst;
}

/*
 * `--recheck DIR`: checks the kept run in DIR again against file on path,
 * prints its report and writes ktap when asked. Returns the verdict's status.
 */
static int vm_recheck(const char *file, const char *path, const char *dir, bool quiet,
		      const char *ktap)
{
	char res[PATH_MAX + 16];
	int rc = fl_vm_recheck(file, path, dir);

	snprintf(res, sizeof(res), "%s/result.json", dir);
	if (access(res, R_OK) == 0)
		fl_vm_report_text(res, stdout, !quiet);
	if (ktap) {
		struct cli_vm_run kr = {.rc = rc};
		char stem[128];

		file_stem(file, stem, sizeof(stem));
		snprintf(kr.name, sizeof(kr.name), "%s (%s)", stem, path);
		snprintf(kr.result, sizeof(kr.result), "%s", res);
		if (cli_ktap_vm_write(ktap, &kr, 1))
			fprintf(stderr, "faultlun vm: cannot write %s\n", ktap);
	}
	return rc;
}

int cli_vm_opt(const char *cmd, int opt, const char *arg, struct fl_vm_opts *o)
{
	static const char *const accel_words[] = {"auto", "kvm", "tcg", NULL};
	static const char *const thread_words[] = {"single", "multi", NULL};
	uint64_t v;

	switch (opt) {
	case 'c':
		o->cache_dir = arg;
		return 1;
	case 'a':
		if (cli_opt_word(cmd, "--accel", arg, accel_words))
			return -1;
		o->accel = arg;
		return 1;
	case 't':
		if (cli_opt_uint(cmd, "--timeout", arg, 1, 86400, &v))
			return -1;
		o->guest_timeout_s = (int)v;
		return 1;
	case 'm':
		if (cli_opt_uint(cmd, "--memory", arg, 256, 1048576, &v))
			return -1;
		o->memory_mb = (int)v;
		return 1;
	case 'C':
		if (cli_opt_uint(cmd, "--cpus", arg, 1, 64, &v))
			return -1;
		o->cpus = (int)v;
		return 1;
	case 'G':
		if (cli_opt_word(cmd, "--tcg-thread", arg, thread_words))
			return -1;
		o->tcg_thread = arg;
		return 1;
	default:
		return 0;
	}
}

/* What the command line of `faultlun vm` asks for. */
struct vm_args {
	struct fl_vm_opts o;
	const char *path, *out, *recheck, *kernel, *modules;
	const char *ktap;
	char *kernel_list; /* --kernels, a copy owned here */
	bool keep, boot_each;
	const char *files[64]; /* the scenarios */
	int nfiles;
};

/* Applies one of vm's own options (argument in optarg) to a; -1 to go on, else the exit status. */
static int vm_opt(struct vm_args *a, int opt)
{
	static const char *const path_words[] = {"iscsi", "tcmu", "both", "lio", NULL};

	switch (opt) {
	case 'p':
		if (cli_opt_word("vm", "--path", optarg, path_words))
			return 2;
		a->path = optarg;
		return -1;
	case 'R':
		a->recheck = optarg;
		return -1;
	case 'o':
		a->out = optarg;
		return -1;
	case 'k':
		a->keep = true;
		return -1;
	case 'B':
		a->boot_each = true;
		return -1;
	case 'q':
		a->o.quiet = true;
		return -1;
	case 'h':
		usage(stdout);
		return 0;
	case 'V':
		cli_print_version(stdout);
		return 0;
	case 'W':
		printf("scripts %s\nprograms %s\nhandler %s\ncache %s\n", vm_path(VM_SCRIPTS),
		       vm_path(VM_PROGRAMS), vm_path(VM_HANDLER), fl_vm_cache_dir(a->o.cache_dir));
		return 0;
	case 'K':
		a->kernel = optarg;
		return -1;
	case 'M':
		a->modules = optarg;
		return -1;
	case 'X':
		free(a->kernel_list);
		a->kernel_list = strdup(optarg);
		return -1;
	case 'T':
		a->ktap = optarg;
		return -1;
	default:
		cli_try_help("vm");
		return 2;
	}
}

/* Reads vm's options into a; -1 to go on, else the exit status. */
static int vm_options(int argc, char **argv, struct vm_args *a)
{
	static const struct option longopts[] = {
	    {"path", required_argument, NULL, 'p'},
	    {"recheck", required_argument, NULL, 'R'},
	    {"out", required_argument, NULL, 'o'},
	    {"keep", no_argument, NULL, 'k'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {"where", no_argument, NULL, 'W'},
	    {"kernel", required_argument, NULL, 'K'},
	    {"modules", required_argument, NULL, 'M'},
	    {"kernels", required_argument, NULL, 'X'},
	    {"boot-each", no_argument, NULL, 'B'},
	    {"ktap", required_argument, NULL, 'T'},
	    CLI_VM_LONGOPTS,
	    {NULL, 0, NULL, 0},
	};
	int opt, r;

	optind = 0;
	while ((opt = cli_getopt("vm", argc, argv, "qhV", longopts)) != -1) {
		if ((r = cli_vm_opt("vm", opt, optarg, &a->o)) != 0) {
			if (r < 0)
				return 2;
			continue;
		}
		r = vm_opt(a, opt);
		if (r >= 0)
			return r;
	}
	return -1;
}

/*
 * Takes the scenarios (argv from optind) into a and checks that the options
 * go together; -1 to go on, else the exit status.
 */
static int vm_operands(int argc, char **argv, struct vm_args *a)
{
	for (int i = optind; i < argc; i++) {
		if (a->nfiles == 64) {
			fprintf(stderr, "faultlun vm: at most 64 scenarios at a time\n");
			return 2;
		}
		a->files[a->nfiles++] = argv[i];
	}
	if (!a->nfiles) {
		fprintf(stderr, "faultlun vm: no scenario given\n");
		usage(stderr);
		free(a->kernel_list);
		return 2;
	}
	if (a->kernel_list && (a->kernel || a->modules)) {
		fprintf(stderr,
			"faultlun vm: --kernels takes the place of --kernel and --modules\n");
		free(a->kernel_list);
		return 2;
	}
	if (a->modules && !a->kernel) {
		fprintf(stderr, "faultlun vm: --modules goes with --kernel IMAGE\n");
		return 2;
	}
	return -1;
}

/* `faultlun vm`: the exit status (0 every expectation held, 1, 2 or 77). */
int cmd_vm(int argc, char **argv)
{
	struct vm_args a = {.o = {.accel = "auto"}};
	int rc = vm_options(argc, argv, &a);

	if (rc < 0)
		rc = vm_operands(argc, argv, &a);
	if (rc >= 0)
		return rc;
	if (a.kernel_list || a.kernel)
		return run_kernels(a.files, a.nfiles, a.path, &a.o, a.kernel_list, a.kernel,
				   a.modules, a.out, a.keep, !a.boot_each, a.ktap);
	if (a.recheck) {
		if (a.nfiles != 1) {
			fprintf(stderr, "faultlun vm: --recheck takes one scenario\n");
			return 2;
		}
		return vm_recheck(a.files[0], a.path ? a.path : "iscsi", a.recheck, a.o.quiet,
				  a.ktap);
	}
	return run_kernels(a.files, a.nfiles, a.path, &a.o, NULL, NULL, NULL, a.out, a.keep,
			   !a.boot_each, a.ktap);
}
