/* SPDX-License-Identifier: MIT */
/*
 * bench_tcmu.c - what handler_faultlun.so adds per command over the
 * logical-unit core it wraps.
 *
 * One run measures the same commands on a 1 GiB memory-store LUN with
 * 512-byte blocks (4 KiB READ(16), 4 KiB WRITE(16), and TEST UNIT READY as the
 * no-data case) through three paths:
 *
 *   core     fl_lun_submit on the LUN of an engine built from the scenario
 *   engine   fl_engine_submit with no rules armed (the layer the handler calls)
 *   handler  the handler loaded with dlopen and driven as tcmu-runner 1.5.4
 *            drives it: handle_cmd first; on TCMU_STS_NOT_HANDLED the read or
 *            write callout with the ring command's iovec, and the answer
 *            through tcmur_cmd_complete (docs/tcmu.md, "Command routing")
 *
 * The executable exports its own stand-ins for the tcmu-runner and libtcmu
 * symbols the handler imports (ENABLE_EXPORTS), so nothing of the runner
 * itself is measured: not its ring, its allocation of the command, nor its
 * range and iovec checks. What remains is the handler's own work per command.
 *
 * Each round runs a batch of every (command, path) pair; the order of the
 * paths flips every round so that drift hits them alike. Times are wall clock
 * and the process's CPU time (CLOCK_PROCESS_CPUTIME_ID: every thread, so work a
 * command causes on another thread, such as waking the handler's watchdog,
 * counts; on a busy machine it is steadier than wall clock). It prints the
 * machine, every round, the medians and the handler's overhead. It exits 1 if
 * any command ends in anything but GOOD or data written through one path does
 * not read back.
 *
 *   bench_tcmu HANDLER.so [ROUNDS [COMMANDS [PATH]]]    (defaults 9 and 100000)
 *
 * PATH (core, engine or handler) runs that path alone, for a profiler.
 */
#include "fl_faults.h"
#include "standin.h"
#include "tcmu_abi.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* LUN geometry: 1 GiB of 512-byte blocks; commands cycle over its first 64 MiB. */
#define BLOCK 512u
#define LUN_BLOCKS (2u * 1024 * 1024)
#define XFER 4096u
#define XFER_BLOCKS (XFER / BLOCK)
#define REGION_BLOCKS (64u * 1024 * 1024 / BLOCK)

static const char scenario_text[] =
    "{ \"faultlun\": 1, \"name\": \"bench-tcmu\", \"frontends\": [\"tcmu\"],\n"
    "  \"description\": \"one memory LUN, no rules: the pass-through cost\",\n"
    "  \"luns\": [ { \"lun\": 0, \"size\": \"1GiB\", \"block_size\": 512,\n"
    "              \"store\": { \"kind\": \"memory\" } } ] }\n";

/* ---- commands ---- */

enum op { OP_READ, OP_WRITE, OP_TUR, NOPS };
static const char *const op_name[NOPS] = {"read16-4k", "write16-4k", "tur"};

enum path { PATH_CORE, PATH_ENGINE, PATH_HANDLER, NPATHS };
static const char *const path_name[NPATHS] = {"core", "engine", "handler"};

/* One ring command as libtcmu and the runner lay it out, reused for every command. */
struct ring_cmd {
	struct tcmulib_cmd lib;
	struct tcmur_cmd tc;
	uint8_t cdb[16];
	struct iovec iov;
	bool completed;
	int status;
};

static struct tcmu_device dev;
static struct ring_cmd ring;
static uint8_t data_buf[XFER];	 /* the ring's data area of the command */
static unsigned long bad_status; /* commands that did not end GOOD */
static struct fl_engine *eng;
static struct fl_lun *lun;

/* Fills a 16-byte CDB for op at lba (READ(16)/WRITE(16) of 8 blocks, or TUR). */
static void cdb_fill(uint8_t *cdb, enum op op, uint64_t lba)
{
	memset(cdb, 0, 16);
	if (op == OP_TUR)
		return;
	cdb[0] = op == OP_READ ? 0x88 : 0x8a;
	for (int i = 0; i < 8; i++)
		cdb[2 + i] = (uint8_t)(lba >> (56 - 8 * i));
	cdb[13] = XFER_BLOCKS;
}

/* CDB length of op. */
static uint8_t cdb_len(enum op op)
{
	return op == OP_TUR ? 6 : 16;
}

/* fl_cmd.done for the core and engine paths: counts what did not end GOOD. */
static void core_done(struct fl_cmd *cmd)
{
	if (cmd->status != FL_STATUS_GOOD)
		bad_status++;
	*(bool *)cmd->priv = true;
}

/* Submits one command through the core or the engine; the memory store answers inline. */
static void core_one(enum path p, enum op op, uint64_t lba, uint64_t tag, uint64_t nexus)
{
	static struct fl_cmd cmd;
	bool done = false;

	memset(&cmd, 0, offsetof(struct fl_cmd, status));
	cdb_fill(cmd.cdb, op, lba);
	cmd.cdb_len = cdb_len(op);
	cmd.nexus.id = nexus;
	cmd.nexus.initiator = "tcmu:bench";
	cmd.nexus.rel_port_id = 1;
	cmd.tag = tag;
	if (op == OP_READ) {
		cmd.data_in = data_buf;
		cmd.data_in_cap = XFER;
	} else if (op == OP_WRITE) {
		cmd.data_out = data_buf;
		cmd.data_out_len = XFER;
	}
	cmd.done = core_done;
	cmd.priv = &done;
	if (p == PATH_CORE)
		fl_lun_submit(lun, &cmd);
	else
		fl_engine_submit(eng, 0, &cmd);
	if (!done) {
		fprintf(stderr, "bench_tcmu: %s did not complete inline\n", path_name[p]);
		exit(1);
	}
}

/* tcmur_cmd.done as the runner's handle_generic_cbk would use it. */
static void ring_done(struct tcmu_device *d, struct tcmur_cmd *tc, int rc)
{
	struct ring_cmd *r = (struct ring_cmd *)((uint8_t *)tc - offsetof(struct ring_cmd, tc));

	(void)d;
	r->status = rc;
	r->completed = true;
}

/*
 * Runs one command as tcmu-runner 1.5.4's command thread does with the
 * handler's callouts: handle_cmd; on NOT_HANDLED the read/write callout,
 * whose TCMU_STS_OK means "answered later through tcmur_cmd_complete".
 */
static void handler_one(enum op op, uint64_t lba)
{
	int rc;

	ring.completed = false;
	ring.tc.done = NULL;
	cdb_fill(ring.cdb, op, lba);
	ring.iov.iov_base = data_buf;
	ring.iov.iov_len = op == OP_TUR ? 0 : XFER;
	ring.lib.iov_cnt = op == OP_TUR ? 0 : 1;
	rc = standin_handler->handle_cmd(&dev, &ring.tc);
	if (rc == TCMU_STS_NOT_HANDLED) {
		ring.tc.done = ring_done;
		if (op == OP_READ)
			rc = standin_handler->read(&dev, &ring.tc, &ring.iov, 1, XFER,
						   (off_t)(lba * BLOCK));
		else if (op == OP_WRITE)
			rc = standin_handler->write(&dev, &ring.tc, &ring.iov, 1, XFER,
						    (off_t)(lba * BLOCK));
		else
			rc =
			    TCMU_STS_INVALID_CMD; /* the runner's own TUR emulation: not measured */
		if (rc == TCMU_STS_OK) {
			if (!ring.completed) {
				fprintf(stderr, "bench_tcmu: handler did not complete inline\n");
				exit(1);
			}
			rc = ring.status;
		}
	} else if (op != OP_TUR) {
		fprintf(stderr, "bench_tcmu: handle_cmd took a %s itself (status %d)\n",
			op_name[op], rc);
		exit(1);
	}
	if (rc != TCMU_STS_OK)
		bad_status++;
}

/* One command through path p; LBAs cycle over the region in 4 KiB steps. */
static void one(enum path p, enum op op, unsigned long i)
{
	uint64_t lba = (uint64_t)(i * XFER_BLOCKS) % REGION_BLOCKS;

	if (p == PATH_HANDLER)
		handler_one(op, lba);
	else
		core_one(p, op, lba, i, p == PATH_CORE ? 101 : 102);
}

/* Nanoseconds of a clock. */
static double clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Runs a batch; sets wall-clock and process-CPU ns per command. */
static void batch(enum path p, enum op op, unsigned long cmds, double *wall, double *cpu)
{
	double w0 = clock_ns(CLOCK_MONOTONIC), c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);

	for (unsigned long i = 0; i < cmds; i++)
		one(p, op, i);
	*cpu = (clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0) / (double)cmds;
	*wall = (clock_ns(CLOCK_MONOTONIC) - w0) / (double)cmds;
}

/* Orders doubles for qsort. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of n values (sorts them). */
static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Prints CPU model, cores, kernel and load average, as bench/common.sh does. */
static void print_machine(void)
{
	char line[512], model[256] = "?";
	struct utsname u;
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			snprintf(model, sizeof(model), "%s", strchr(line, ':') + 2);
			model[strcspn(model, "\n")] = '\0';
			break;
		}
	if (f)
		fclose(f);
	uname(&u);
	printf("cpu: %s\ncores: %ld online; kernel: %s\n", model, sysconf(_SC_NPROCESSORS_ONLN),
	       u.release);
	f = fopen("/proc/loadavg", "r");
	if (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		printf("load average: %s\n", line);
	}
	if (f)
		fclose(f);
}

/*
 * Writes a pattern and reads it back: through the handler (its own LUN), and
 * through the core then the engine (the other LUN). The paths really move data.
 */
static int check_data(void)
{
	uint8_t want[XFER];
	const uint64_t lba = REGION_BLOCKS + 8;

	for (unsigned i = 0; i < XFER; i++)
		want[i] = data_buf[i] = (uint8_t)(i * 7 + 1);
	handler_one(OP_WRITE, lba);
	memset(data_buf, 0, XFER);
	handler_one(OP_READ, lba);
	if (memcmp(data_buf, want, XFER))
		return -1;
	for (unsigned i = 0; i < XFER; i++)
		want[i] = data_buf[i] = (uint8_t)(i * 13 + 5);
	core_one(PATH_CORE, OP_WRITE, lba, 0, 101);
	memset(data_buf, 0, XFER);
	core_one(PATH_ENGINE, OP_READ, lba, 0, 102);
	return memcmp(data_buf, want, XFER) ? -1 : 0;
}

/* Builds the engine of paths core/engine from the scenario, as the handler builds its own. */
static int make_engine(void)
{
	struct fl_diags dg = {0};
	struct fl_scenario *sc = NULL;
	struct fl_engine_opts o = {.frontend = FL_FE_TCMU};
	int rc = fl_scenario_load_string("bench-tcmu.json", scenario_text, FL_FE_TCMU, &sc, &dg);

	if (rc) {
		fl_diags_print(&dg, stderr);
		fl_diags_free(&dg);
		return rc;
	}
	fl_diags_free(&dg);
	rc = fl_engine_create(sc, &o, &eng);
	fl_scenario_free(sc);
	if (rc)
		return rc;
	lun = fl_target_lun(fl_engine_target(eng), 0);
	return lun ? 0 : -ENOENT;
}

/* Loads the handler, opens a device on the scenario file (no trace, no control socket). */
static int open_handler(const char *so, const char *scenario_path, void **dl)
{
	int (*init)(void);

	*dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	if (!*dl) {
		fprintf(stderr, "bench_tcmu: dlopen %s: %s\n", so, dlerror());
		return -1;
	}
	init = (int (*)(void))dlsym(*dl, "handler_init");
	if (!init || init() || !standin_handler) {
		fprintf(stderr, "bench_tcmu: handler_init missing or failed\n");
		return -1;
	}
	snprintf(dev.cfgstring, sizeof(dev.cfgstring),
		 "faultlun/scenario=%s;store=memory;trace=none;ctl=none", scenario_path);
	snprintf(dev.uio, sizeof(dev.uio), "uio0");
	dev.cmd_time_out = 30; /* the kernel's default */
	standin_log_level = 2; /* errors and warnings (none is expected while measuring) */
	dev.block_size = BLOCK;
	dev.num_lbas = LUN_BLOCKS;
	ring.lib.cdb = ring.cdb;
	ring.lib.iovec = &ring.iov;
	ring.lib.hm_private = &ring.tc;
	ring.tc.lib_cmd = &ring.lib;
	return standin_handler->open(&dev, false) ? -1 : 0;
}

/* Writes the scenario into a temporary file; returns 0 and its path. */
static int write_scenario(char *path, size_t cap)
{
	const char *tmp = getenv("TMPDIR");
	int fd;
	FILE *f;

	snprintf(path, cap, "%s/fl-bench-tcmu-XXXXXX.json", tmp ? tmp : "/tmp");
	fd = mkstemps(path, 5);
	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	if (!f || fputs(scenario_text, f) < 0 || fclose(f)) {
		unlink(path);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 9;
	unsigned long cmds = argc > 3 ? strtoul(argv[3], NULL, 0) : 100000;
	char scenario_path[512];
	double *wall[NOPS][NPATHS], *cpu[NOPS][NPATHS];
	double mw[NOPS][NPATHS], mc[NOPS][NPATHS];
	void *dl = NULL;
	int only = -1; /* run one path alone */
	int rc = 0;

	if (argc < 2 || !rounds || !cmds) {
		fprintf(stderr, "usage: %s HANDLER.so [ROUNDS [COMMANDS [PATH]]]\n", argv[0]);
		return 2;
	}
	for (int p = 0; argc > 4 && p < NPATHS; p++)
		if (!strcmp(argv[4], path_name[p]))
			only = p;
	if (argc > 4 && only < 0) {
		fprintf(stderr, "bench_tcmu: PATH is core, engine or handler\n");
		return 2;
	}
	if (write_scenario(scenario_path, sizeof(scenario_path))) {
		perror("bench_tcmu: scenario file");
		return 1;
	}
	if (make_engine() || open_handler(argv[1], scenario_path, &dl)) {
		unlink(scenario_path);
		return 1;
	}
	unlink(scenario_path);

	printf("== machine\n");
	print_machine();
	printf("rounds: %u, commands per batch: %lu; 1 GiB memory LUN, 512-byte blocks, "
	       "LBAs cycling over 64 MiB\n",
	       rounds, cmds);

	/*
	 * Warm up: the power-on unit attention of each nexus, then the whole region
	 * written with non-zero data (zeroes would keep the memory store sparse and
	 * measure its zero scan instead of a copy).
	 */
	for (unsigned i = 0; i < XFER; i++)
		data_buf[i] = (uint8_t)(i | 1);
	for (int p = 0; p < NPATHS; p++) {
		one(p, OP_TUR, 0);
		bad_status = 0;
		for (unsigned long i = 0; i < REGION_BLOCKS / XFER_BLOCKS; i++)
			one(p, OP_WRITE, i);
		for (unsigned long i = 0; i < cmds / 10; i++)
			one(p, OP_READ, i);
	}
	if (bad_status || check_data()) {
		fprintf(stderr, "bench_tcmu: warm-up failed (%lu commands not GOOD, or data)\n",
			bad_status);
		return 1;
	}

	for (int o = 0; o < NOPS; o++)
		for (int p = 0; p < NPATHS; p++) {
			wall[o][p] = calloc(rounds, sizeof(double));
			cpu[o][p] = calloc(rounds, sizeof(double));
		}
	for (unsigned r = 0; r < rounds; r++) {
		printf("== round %u (order: %s)\n", r + 1,
		       r % 2 ? "handler engine core" : "core engine handler");
		for (int o = 0; o < NOPS; o++) {
			printf("  %-10s", op_name[o]);
			for (int k = 0; k < NPATHS; k++) {
				int p = r % 2 ? NPATHS - 1 - k : k;

				if (only >= 0 && p != only)
					continue;
				batch(p, o, cmds, &wall[o][p][r], &cpu[o][p][r]);
			}
			for (int p = 0; p < NPATHS; p++)
				if (only < 0 || p == only)
					printf("  %s %7.1f ns (cpu %7.1f)", path_name[p],
					       wall[o][p][r], cpu[o][p][r]);
			printf("\n");
		}
	}
	if (bad_status) {
		fprintf(stderr, "bench_tcmu: %lu commands did not end GOOD\n", bad_status);
		rc = 1;
	}

	if (only >= 0)
		goto out;
	printf("== medians over %u rounds (ns per command, wall clock; cpu = process CPU time)\n",
	       rounds);
	printf("%-10s %-8s %10s %12s %10s\n", "command", "path", "ns/cmd", "commands/s", "cpu ns");
	for (int o = 0; o < NOPS; o++)
		for (int p = 0; p < NPATHS; p++) {
			mw[o][p] = median(wall[o][p], rounds);
			mc[o][p] = median(cpu[o][p], rounds);
			printf("%-10s %-8s %10.1f %12.0f %10.1f\n", op_name[o], path_name[p],
			       mw[o][p], 1e9 / mw[o][p], mc[o][p]);
		}
	/* the difference of the medians, from wall clock and from process CPU time */
	for (int k = 0; k < 2; k++) {
		printf("== added ns per command (and ratio), medians of %s\n",
		       k ? "process CPU time" : "wall clock");
		printf("%-10s %16s %16s %16s\n", "command", "handler-engine", "handler-core",
		       "engine-core");
		for (int o = 0; o < NOPS; o++) {
			const double *m = k ? mc[o] : mw[o];

			printf("%-10s %+8.1f (x%4.2f) %+8.1f (x%4.2f) %+8.1f (x%4.2f)\n",
			       op_name[o], m[PATH_HANDLER] - m[PATH_ENGINE],
			       m[PATH_HANDLER] / m[PATH_ENGINE], m[PATH_HANDLER] - m[PATH_CORE],
			       m[PATH_HANDLER] / m[PATH_CORE], m[PATH_ENGINE] - m[PATH_CORE],
			       m[PATH_ENGINE] / m[PATH_CORE]);
		}
	}
out:
	if (check_data()) {
		fprintf(stderr, "bench_tcmu: data written through one path did not read back\n");
		rc = 1;
	}
	printf("load average at the end: ");
	fflush(stdout);
	{
		FILE *f = fopen("/proc/loadavg", "r");
		char line[128];

		if (f && fgets(line, sizeof(line), f))
			fputs(line, stdout);
		else
			printf("?\n");
		if (f)
			fclose(f);
	}
	for (int o = 0; o < NOPS; o++)
		for (int p = 0; p < NPATHS; p++) {
			free(wall[o][p]);
			free(cpu[o][p]);
		}
	standin_handler->close(&dev);
	fl_engine_destroy(eng);
	dlclose(dl);
	return rc;
}
