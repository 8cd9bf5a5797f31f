/* SPDX-License-Identifier: MIT */
/*
 * vm_run.c - the host side of one VM-lab run: the scenario loaded and
 * validated by scenario/ (the typed model gives the LUNs, the LUN under test,
 * the healthy LUN and the knobs), guest assembly (vm/mkguest.sh into the
 * cache), the job written to the results share (job.env and the scenario file
 * itself, which the guest agent loads again), the QEMU command (KVM when it boots, else
 * TCG; no network device; host root read-only over 9p; a writable 9p results
 * share), a bounded wait (a stuck guest is killed with a clear message), then
 * vm_check.c turns what the guest wrote into result.json.
 */
#include "fl_vm.h"
#include "vm_internal.h"
#include "vm_paths.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Seconds a guest may take from QEMU's start to the agent's first file. */
#define VM_BOOT_LIMIT_S 90

/* Seconds on CLOCK_MONOTONIC. */
double vm_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The cache directory: override, $XDG_CACHE_HOME/faultlun, ~/.cache/faultlun. */
const char *fl_vm_cache_dir(const char *override)
{
	static char dir[PATH_MAX];
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	if (override && *override)
		snprintf(dir, sizeof(dir), "%s", override);
	else if (getenv("FAULTLUN_CACHE") && *getenv("FAULTLUN_CACHE"))
		snprintf(dir, sizeof(dir), "%s", getenv("FAULTLUN_CACHE"));
	else if (x && *x)
		snprintf(dir, sizeof(dir), "%s/faultlun", x);
	else
		snprintf(dir, sizeof(dir), "%s/.cache/faultlun", home && *home ? home : "/tmp");
	return dir;
}

/* mkdir -p. */
int vm_mkdirs(const char *path)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* Directory of vm/ sources (scripts), overridable with FAULTLUN_VM_DIR. */
static const char *vm_src_dir(void)
{
	const char *e = getenv("FAULTLUN_VM_DIR");
	return e && *e ? e : vm_path(VM_SCRIPTS);
}

/* Runs argv with stdout to a pipe; returns exit status, last stdout line in last. */
static int run_capture(char *const argv[], char *last, size_t lastlen)
{
	int pfd[2];
	if (pipe(pfd) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	char buf[8192];
	size_t got = 0;
	ssize_t n;
	while ((n = read(pfd[0], buf + got, sizeof(buf) - 1 - got)) > 0) {
		got += (size_t)n;
		if (got == sizeof(buf) - 1)
			got = 0; /* keep only the tail */
	}
	close(pfd[0]);
	buf[got] = 0;
	while (got && buf[got - 1] == '\n')
		buf[--got] = 0;
	char *nl = strrchr(buf, '\n');
	const char *tail = nl ? nl + 1 : buf;
	size_t len = strnlen(tail, lastlen - 1);
	memcpy(last, tail, len);
	last[len] = 0;
	int st;
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * Assembles or reuses the guest of kernel (NULL: the stock one; "debian:SUITE";
 * an image's path, with its module tree modules); guest gets its directory.
 */
static int prepare_guest(const char *cache, const char *kernel, const char *modules, char *guest,
			 size_t len)
{
	char script[PATH_MAX];
	snprintf(script, sizeof(script), "%s/mkguest.sh", vm_src_dir());
	char *argv[] = {(char *)"sh", script, (char *)cache, (char *)kernel, (char *)modules, NULL};
	if (!kernel)
		argv[3] = NULL;
	else if (!modules)
		argv[4] = NULL;
	int rc = run_capture(argv, guest, len);
	if (rc == 77)
		return FL_VM_SKIP;
	if (rc == 2) {
		fprintf(stderr, "faultlun vm: the kernel %s cannot be used (see above)\n", kernel);
		return FL_VM_ERROR;
	}
	if (rc != 0 || !*guest) {
		fprintf(stderr, "faultlun vm: assembling the guest failed (%s exited %d)\n", script,
			rc);
		return FL_VM_ERROR;
	}
	return 0;
}

/*
 * Starts QEMU with argv; waits up to timeout_s; returns 0, or -ETIMEDOUT.
 * With up_file, a guest that has not created it within up_s seconds is
 * killed and -EAGAIN returned (a kernel stuck while booting).
 */
static int run_qemu_up(char **argv, const char *log_path, int timeout_s, const char *up_file,
		       int up_s, int *status)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/* QEMU ends with faultlun vm, whatever ended it (SIGTERM, SIGKILL):
		 * a guest left running would hold its CPU and cache for ever. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(127);
		int fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		int nul = open("/dev/null", O_RDONLY);
		if (nul >= 0)
			dup2(nul, 0);
		execvp(argv[0], argv);
		_exit(127);
	}
	double start = vm_now(), deadline = start + timeout_s;
	bool up = !up_file;
	for (;;) {
		int st;
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid) {
			*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			return 0;
		}
		if (!up) {
			up = access(up_file, F_OK) == 0;
			if (!up && vm_now() > start + up_s)
				deadline = 0; /* stuck before the agent: stop now */
		}
		if (vm_now() > deadline) {
			kill(pid, SIGTERM);
			for (int i = 0; i < 20 && waitpid(pid, &st, WNOHANG) == 0; i++)
				usleep(100000);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return up ? -ETIMEDOUT : -EAGAIN;
		}
		usleep(50000);
	}
}

/* Starts QEMU with argv; waits up to timeout_s; returns 0, or -ETIMEDOUT. */
static int run_qemu(char **argv, const char *log_path, int timeout_s, int *status)
{
	return run_qemu_up(argv, log_path, timeout_s, NULL, 0, status);
}

/* Is qemu-system-x86_64 on PATH? */
static bool have_qemu(void)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];
	if (!path)
		path = "/usr/bin:/bin";
	char *dup = strdup(path), *save = NULL;
	bool found = false;
	for (char *d = strtok_r(dup, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		snprintf(buf, sizeof(buf), "%s/qemu-system-x86_64", d);
		found = access(buf, X_OK) == 0;
	}
	free(dup);
	return found;
}

/*
 * Picks the guest's kernel: the uncompressed PVH vmlinux that vm/mkguest.sh
 * keeps beside vmlinuz (booted straight into its 32-bit entry, no
 * decompression in the guest) when it is there and qboot is the firmware,
 * else the bzImage. Writes the path into kernel; returns true for vmlinux.
 */
static bool guest_kernel(const char *guest, bool qboot, char *kernel, size_t len)
{
	snprintf(kernel, len, "%s/vmlinux", guest);
	if (qboot && access(kernel, R_OK) == 0)
		return true;
	snprintf(kernel, len, "%s/vmlinuz", guest);
	return false;
}

/*
 * TCG's host threads: opts->tcg_thread, else $FAULTLUN_TCG_THREAD ("single"
 * or "multi"; anything else is named on stderr once and not taken), else
 * "multi". One thread for every vCPU ("single") gives up a second host core
 * for a lone guest, and spares the vCPUs' cross-thread synchronisation where
 * guests share few cores (docs/vm-lab.md).
 */
const char *vm_tcg_thread(const struct fl_vm_opts *opts)
{
	static bool warned;
	const char *e = getenv("FAULTLUN_TCG_THREAD");

	if (opts->tcg_thread)
		return opts->tcg_thread;
	if (!e || !*e)
		return "multi";
	if (!strcmp(e, "single") || !strcmp(e, "multi"))
		return e;
	if (!warned)
		fprintf(stderr,
			"faultlun vm: FAULTLUN_TCG_THREAD=%.32s is neither single nor multi: "
			"multi\n",
			e);
	warned = true;
	return "multi";
}

/* Fills the common QEMU argv; returns the count. */
static int qemu_argv(char **a, const char *accel, const char *guest, const char *results,
		     const char *console, const char *append, int mem_mb, int cpus,
		     const char *thread)
{
	static char kernel[PATH_MAX], initrd[PATH_MAX], share[PATH_MAX], res[PATH_MAX],
	    serial[PATH_MAX], mem[32], smp[16], tcg[32];
	int n = 0;
	bool qboot = access("/usr/share/qemu/qboot.rom", R_OK) == 0;
	guest_kernel(guest, qboot, kernel, sizeof(kernel));
	snprintf(initrd, sizeof(initrd), "%s/initrd.img", guest);
	snprintf(share, sizeof(share),
		 "local,path=/,mount_tag=hostroot,readonly=on,security_model=none,multidevs=remap");
	snprintf(res, sizeof(res), "local,path=%s,mount_tag=results,security_model=none", results);
	snprintf(serial, sizeof(serial), "file:%s", console);
	snprintf(mem, sizeof(mem), "%d", mem_mb);
	snprintf(smp, sizeof(smp), "%d", cpus);
	a[n++] = (char *)"qemu-system-x86_64";
	if (!strcmp(accel, "kvm")) {
		a[n++] = (char *)"-accel";
		a[n++] = (char *)"kvm";
		a[n++] = (char *)"-cpu";
		a[n++] = (char *)"host";
	} else {
		a[n++] = (char *)"-accel";
		snprintf(tcg, sizeof(tcg), "tcg,thread=%s", thread);
		a[n++] = tcg;
		a[n++] = (char *)"-cpu";
		a[n++] = (char *)"max";
	}
	a[n++] = (char *)"-smp";
	a[n++] = smp;
	a[n++] = (char *)"-m";
	a[n++] = mem;
	a[n++] = (char *)"-machine";
	a[n++] = (char *)"q35";
	if (qboot) {
		a[n++] = (char *)"-bios";
		a[n++] = (char *)"/usr/share/qemu/qboot.rom";
	}
	a[n++] = (char *)"-nodefaults";
	a[n++] = (char *)"-no-user-config";
	a[n++] = (char *)"-display";
	a[n++] = (char *)"none";
	a[n++] = (char *)"-serial";
	a[n++] = serial;
	a[n++] = (char *)"-no-reboot";
	a[n++] = (char *)"-nic";
	a[n++] = (char *)"none";
	a[n++] = (char *)"-kernel";
	a[n++] = kernel;
	a[n++] = (char *)"-initrd";
	a[n++] = initrd;
	a[n++] = (char *)"-append";
	a[n++] = (char *)append;
	a[n++] = (char *)"-virtfs";
	a[n++] = share;
	if (results) {
		a[n++] = (char *)"-virtfs";
		a[n++] = res;
	}
	a[n] = NULL;
	return n;
}

/* Does the file contain the string? */
static bool file_has(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	bool found = false;
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}

/*
 * Picks the accelerator: "auto" boots a probe guest under KVM once (result
 * cached in the cache directory as kvm-ok / kvm-broken) and falls back to TCG.
 */
static const char *pick_accel(const char *want, const char *cache, const char *guest)
{
	char ok[PATH_MAX], broken[PATH_MAX], console[PATH_MAX];
	if (want && !strcmp(want, "tcg"))
		return "tcg";
	if (want && !strcmp(want, "kvm"))
		return "kvm";
	if (access("/dev/kvm", R_OK | W_OK) != 0)
		return "tcg";
	snprintf(ok, sizeof(ok), "%s/kvm-ok", cache);
	snprintf(broken, sizeof(broken), "%s/kvm-broken", cache);
	if (access(ok, F_OK) == 0)
		return "kvm";
	if (access(broken, F_OK) == 0)
		return "tcg";
	snprintf(console, sizeof(console), "%s/kvm-probe.console", cache);
	char *argv[64];
	qemu_argv(argv, "kvm", guest, NULL, console, "console=ttyS0 panic=-1 fl.probe=1", 512, 2,
		  "multi");
	char log[PATH_MAX];
	snprintf(log, sizeof(log), "%s/kvm-probe.log", cache);
	int st = 0;
	int rc = run_qemu(argv, log, 20, &st);
	bool good = rc == 0 && file_has(console, "faultlun-init: probe ok");
	fprintf(stderr, "faultlun vm: KVM %s (probe cached in %s)\n",
		good ? "works" : "does not boot a guest here; using TCG", good ? ok : broken);
	FILE *f = fopen(good ? ok : broken, "w");
	if (f)
		fclose(f);
	return good ? "kvm" : "tcg";
}

/* Writes a shell-safe assignment NAME='value' to f. */
static void env_put(FILE *f, const char *name, const char *value)
{
	fprintf(f, "%s='", name);
	for (const char *s = value; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	}
	fputs("'\n", f);
}

/* Copies the scenario file as it is (the guest's loader quotes its lines). */
static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int src = open(from, O_RDONLY), dst = -1, rc = 0;
	ssize_t n;

	if (src < 0)
		return -errno;
	dst = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (dst < 0) {
		rc = -errno;
		goto out;
	}
	while ((n = read(src, buf, sizeof(buf))) > 0)
		if (write(dst, buf, (size_t)n) != n) {
			rc = -EIO;
			goto out;
		}
	if (n < 0)
		rc = -errno;
out:
	if (dst >= 0 && close(dst) < 0 && !rc)
		rc = -errno;
	close(src);
	return rc;
}

/* The id of the scenario's i-th LUN. */
static int lun_id(const struct fl_scenario *sc, unsigned i)
{
	struct fl_lun_config cfg;
	uint16_t id = 0;

	return fl_scenario_lun(sc, i, &id, &cfg) < 0 ? -1 : id;
}

/* Is lun one of the scenario's LUNs? */
static bool has_lun(const struct fl_scenario *sc, int lun)
{
	for (unsigned i = 0; i < fl_scenario_lun_count(sc); i++)
		if (lun_id(sc, i) == lun)
			return true;
	return false;
}

/* See vm_internal.h. A step LUN the scenario does not have means the LUN under test. */
int vm_test_lun(const struct fl_scenario *sc)
{
	const struct fl_check *check = fl_scenario_check(sc);

	if (check && check->nsteps && check->steps[0].lun >= 0 && has_lun(sc, check->steps[0].lun))
		return check->steps[0].lun;
	return fl_scenario_lun_count(sc) ? lun_id(sc, 0) : 0;
}

/* See vm_internal.h. */
int vm_healthy_lun(const struct fl_scenario *sc)
{
	const struct fl_check *check = fl_scenario_check(sc);
	int test = vm_test_lun(sc), healthy = -1;

	for (unsigned i = 0; i < fl_scenario_lun_count(sc); i++) {
		int lun = lun_id(sc, i);
		bool used = lun == test;

		for (size_t k = 0; check && k < check->nsteps; k++)
			used |= check->steps[k].lun == lun;
		if (!used)
			healthy = lun;
	}
	return healthy;
}

/* Front ends a scenario is validated for on a lab path (as `faultlun vm` does). */
static unsigned path_frontends(const char *path)
{
	if (!strcmp(path, "iscsi"))
		return FL_FE_ISCSI;
	if (!strcmp(path, "tcmu"))
		return FL_FE_TCMU;
	return FL_FE_ANY;
}

/* Loads and validates the scenario for path; prints the diagnostics on failure. */
static int load_scenario(const char *file, const char *path, struct fl_scenario **sc)
{
	struct fl_diags diags = {0};
	int rc = fl_scenario_load_file(file, path_frontends(path), sc, &diags);

	if (rc < 0) {
		fl_diags_print(&diags, stderr);
		if (rc != -EINVAL)
			fprintf(stderr, "faultlun vm: %s: %s\n", file, strerror(-rc));
		else
			fprintf(stderr, "faultlun vm: %s: not a valid scenario for path %s\n", file,
				path);
	}
	fl_diags_free(&diags);
	return rc;
}

/* Writes FL_LUNS (LUN:BYTES:BLOCK_SIZE for each LUN; a scenario without luns has LUN 0),
 * FL_TEST_LUN and FL_HEALTHY_LUN. */
static void env_luns(FILE *f, const struct fl_scenario *sc)
{
	char lunlist[2048] = "", num[32];
	size_t used = 0;

	for (unsigned i = 0; i < fl_scenario_lun_count(sc); i++) {
		struct fl_lun_config cfg;
		uint16_t id;

		if (fl_scenario_lun(sc, i, &id, &cfg) < 0)
			continue;
		int w = snprintf(
		    lunlist + used, sizeof(lunlist) - used, "%s%u:%llu:%u", used ? " " : "", id,
		    (unsigned long long)cfg.num_blocks * cfg.block_size, cfg.block_size);
		if (w < 0 || (size_t)w >= sizeof(lunlist) - used)
			break;
		used += (size_t)w;
	}
	env_put(f, "FL_LUNS", lunlist);
	snprintf(num, sizeof(num), "%d", vm_test_lun(sc));
	env_put(f, "FL_TEST_LUN", num);
	int healthy = vm_healthy_lun(sc);
	if (healthy >= 0)
		snprintf(num, sizeof(num), "%d", healthy);
	else
		num[0] = 0;
	env_put(f, "FL_HEALTHY_LUN", num);
}

/* Writes FL_PORTS: the target ports as ID=ADDR:PORT (the first on the agent's 127.0.0.1:3260). */
static void env_ports(FILE *f, const struct fl_scenario *sc)
{
	char ports[1024] = "";
	size_t used = 0;

	for (unsigned i = 0; i < fl_scenario_port_count(sc); i++) {
		const struct sc_port *pt = fl_scenario_port(sc, i);
		int w = snprintf(ports + used, sizeof(ports) - used, "%s%s=%s", used ? " " : "",
				 pt->name, i ? pt->listen : "127.0.0.1:3260");
		if (w < 0 || (size_t)w >= sizeof(ports) - used)
			break;
		used += (size_t)w;
	}
	env_put(f, "FL_PORTS", ports);
}

/*
 * Writes job.env and the scenario (copied as is) into results, the job's
 * folder of the results share; share is that folder as the guest sees it.
 */
/* results/scenario-unarmed.json: the scenario file without its faults. */
static int write_unarmed(const char *scenario, const char *results)
{
	char p[PATH_MAX + 32], *text = fl_scenario_unarmed_text(scenario);
	FILE *f;
	int rc = 0;

	if (!text)
		return -errno;
	snprintf(p, sizeof(p), "%s/scenario-unarmed.json", results);
	f = fopen(p, "w");
	if (!f || fputs(text, f) == EOF)
		rc = -errno;
	if (f && fclose(f) && !rc)
		rc = -errno;
	free(text);
	return rc;
}

static int write_job(const struct fl_scenario *sc, const char *scenario, const char *path,
		     const char *guest, const char *results, const char *share)
{
	char p[PATH_MAX + 32], self[PATH_MAX], num[32], arg[PATH_MAX];
	const struct fl_check *check = fl_scenario_check(sc);
	int rc;

	snprintf(p, sizeof(p), "%s/scenario.json", results);
	rc = copy_file(scenario, p);
	if (rc < 0)
		return rc;
	if (check && check->arm_at_workload) {
		rc = write_unarmed(scenario, results);
		if (rc < 0)
			return rc;
	}
	snprintf(p, sizeof(p), "%s/job.env", results);
	FILE *f = fopen(p, "w");
	if (!f)
		return -errno;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = 0;
	const char *fl = getenv("FAULTLUN_BIN") ? getenv("FAULTLUN_BIN") : self;
	env_put(f, "FL_GUEST", guest);
	env_put(f, "FL_PATH", path);
	env_put(f, "FL_FAULTLUN", fl);
	char prog[PATH_MAX];
	snprintf(prog, sizeof(prog), "%s/fl-vm-agent", vm_path(VM_PROGRAMS));
	env_put(f, "FL_AGENT", prog);
	snprintf(prog, sizeof(prog), "%s/fl-vm-uevent", vm_path(VM_PROGRAMS));
	env_put(f, "FL_UEVENT", prog);
	env_put(f, "FL_HANDLER_DIR",
		getenv("FAULTLUN_HANDLER_DIR") ? getenv("FAULTLUN_HANDLER_DIR")
					       : vm_path(VM_HANDLER));
	snprintf(arg, sizeof(arg), "%s/scenario.json", share);
	env_put(f, "FL_SCENARIO", arg);
	/* "arm": "workload": served without its faults, loaded whole before the workload */
	const char *served = check && check->arm_at_workload ? "scenario-unarmed" : "scenario";
	snprintf(arg, sizeof(arg), "%s/%s.json", share, served);
	env_put(f, "FL_SERVE_SCENARIO", arg);
	if (check && check->arm_at_workload)
		env_put(f, "FL_ARM", "1");
	snprintf(arg, sizeof(arg),
		 "%s/%s.json --listen 127.0.0.1:3260 --trace %s/trace.jsonl --ctl "
		 "/run/faultlun.sock",
		 share, served, share);
	env_put(f, "FL_SERVE_ARGS", arg);
	if (!strcmp(path, "iscsi"))
		env_put(f, "FL_CTL", "/run/faultlun.sock");
	env_luns(f, sc);
	/* Knobs the scenario gives (-1: not given), by their names in the scenario. */
	for (size_t k = 0; check && k < fl_knob_count; k++) {
		char name[96];

		if (!fl_knob_text(&fl_knob_descs[k], &check->knobs, num, sizeof(num)))
			continue;
		snprintf(name, sizeof(name), "FL_KNOB_%s", fl_knob_descs[k].name);
		env_put(f, name, num);
	}
	env_ports(f, sc);
	if (fclose(f) < 0)
		return -errno;
	return 0;
}

/*
 * Boots the guest with the agent reading its job from results (the writable
 * share); console.log and qemu.log go to log_dir. A kernel that dies or hangs
 * while booting, before the agent runs, is booted once more: under TCG with
 * several vCPUs, 7.2 was seen to oops in text patching (int3 in
 * sched_clock_idle_wakeup_event) at about 1.9 s in two boots of seventeen,
 * and 6.1 to hang in cryptomgr_test (a soft lockup on CPU 1) once; nothing of
 * a scenario has run then. tsc=reliable: under TCG the kernel finds the
 * vCPUs' TSCs unsynchronized and falls back to the HPET, whose every read is
 * an emulated device access; QEMU's TSC follows the host's clock on every
 * vCPU, and the TSC clocksource took a tenth off the guest's CPU time
 * (docs/vm-lab.md). Returns 0 (QEMU's status in *st), -ETIMEDOUT (the
 * guest was killed after timeout seconds) or -errno.
 */
static int boot_guest(const char *accel, const char *guest, const char *results,
		      const char *log_dir, const struct fl_vm_opts *opts, int timeout,
		      const char *what, int *st)
{
	char console[PATH_MAX], qlog[PATH_MAX], append[PATH_MAX + 128];
	snprintf(append, sizeof(append),
		 "console=ttyS0 panic=-1 loglevel=4 printk.devkmsg=on log_buf_len=4M "
		 "tsc=reliable fl.agent=%s/agent.sh",
		 vm_src_dir());
	snprintf(console, sizeof(console), "%s/console.log", log_dir);
	snprintf(qlog, sizeof(qlog), "%s/qemu.log", log_dir);
	char *argv[64];
	const char *thread = vm_tcg_thread(opts);
	qemu_argv(argv, accel, guest, results, console, append,
		  opts->memory_mb ? opts->memory_mb : 2048, opts->cpus ? opts->cpus : 2, thread);
	const char *kernel = "?";
	for (int i = 0; argv[i]; i++)
		if (!strcmp(argv[i], "-kernel") && argv[i + 1])
			kernel = strrchr(argv[i + 1], '/') + 1;
	fprintf(stderr,
		"faultlun vm: %s on path %s: booting %s/%s (%s%s, %d vCPU, %d MiB, limit %d s)\n",
		what, opts->path, strrchr(guest, '/') + 1, kernel, accel,
		strcmp(accel, "tcg")	    ? ""
		: !strcmp(thread, "single") ? " single-threaded"
					    : "",
		opts->cpus ? opts->cpus : 2, opts->memory_mb ? opts->memory_mb : 2048, timeout);
	char agent_up[PATH_MAX + 16];
	snprintf(agent_up, sizeof(agent_up), "%s/kmsg.txt", results);
	int q = run_qemu_up(argv, qlog, timeout, agent_up, VM_BOOT_LIMIT_S, st);
	if (q == -EAGAIN ||
	    (q == 0 && access(agent_up, F_OK) != 0 && file_has(console, "Kernel panic"))) {
		char again[PATH_MAX + 32];
		snprintf(again, sizeof(again), "%s/console-boot-failed.log", log_dir);
		rename(console, again);
		fprintf(stderr,
			"faultlun vm: the kernel %s while booting, before the agent ran (%s); "
			"booting once more\n",
			q == -EAGAIN ? "did not reach the agent in time" : "panicked", again);
		q = run_qemu_up(argv, qlog, timeout, agent_up, VM_BOOT_LIMIT_S, st);
		if (q == -EAGAIN)
			q = -ETIMEDOUT;
	}
	if (q == -ETIMEDOUT)
		fprintf(stderr,
			"faultlun vm: the guest did not finish within %d s and was killed "
			"(stuck kernel or agent); console: %s, agent log: %s/agent.log\n",
			timeout, console, results);
	else if (q < 0)
		fprintf(stderr, "faultlun vm: cannot run qemu: %s\n", strerror(-q));
	return q;
}

/* The name of a lab path's bit in check.paths. */
static unsigned path_bit(const char *path)
{
	if (!strcmp(path, "iscsi"))
		return FL_PATH_ISCSI;
	if (!strcmp(path, "tcmu"))
		return FL_PATH_TCMU;
	return FL_PATH_LIO;
}

/*
 * What every boot needs: QEMU, multipath-tools and udevd when a scenario has
 * the multipath knob (mp), the guest assembled or reused in cache (its
 * folder in guest) and the accelerator. Returns 0, FL_VM_SKIP or FL_VM_ERROR
 * (message printed).
 */
static int lab_ready(const struct fl_vm_opts *opts, bool mp, const char *cache, char *guest,
		     size_t len, const char **accel)
{
	if (!have_qemu()) {
		fprintf(stderr, "faultlun vm: qemu-system-x86_64 not found (Debian package "
				"qemu-system-x86)\n");
		return FL_VM_SKIP;
	}
	/* dm-multipath runs the host's multipath-tools and udevd in the guest. */
	if (mp && !strcmp(opts->path, "iscsi") &&
	    (access("/sbin/multipathd", X_OK) || access("/lib/systemd/systemd-udevd", X_OK))) {
		fprintf(stderr, "faultlun vm: the multipath knob needs multipathd and "
				"systemd-udevd (Debian packages multipath-tools, udev)\n");
		return FL_VM_SKIP;
	}
	fprintf(stderr, "faultlun vm: cache %s\n", cache);
	int g = prepare_guest(cache, opts->kernel, opts->modules, guest, len);
	if (g) {
		if (g == FL_VM_SKIP)
			fprintf(stderr, "faultlun vm: the guest kernel cannot be had: skipped\n");
		return g;
	}
	*accel = pick_accel(opts->accel, cache, guest);
	return 0;
}

/* Runs one scenario on one path; see fl_vm.h. */
int fl_vm_run(const char *scenario, const struct fl_vm_opts *opts, const char *run_dir)
{
	double t_start = vm_now();
	struct fl_scenario *sc = NULL;
	if (load_scenario(scenario, opts->path, &sc) < 0)
		return FL_VM_ERROR;
	const struct fl_check *check = fl_scenario_check(sc);
	if (check && check->paths && !(check->paths & path_bit(opts->path)))
		fprintf(stderr, "faultlun vm: note: the scenario's check.paths does not name %s\n",
			opts->path);
	int rc = FL_VM_ERROR;
	char results[PATH_MAX], guest[PATH_MAX];
	const char *cache = fl_vm_cache_dir(opts->cache_dir);
	snprintf(results, sizeof(results), "%s/guest", run_dir);
	if (vm_mkdirs(results) < 0 || vm_mkdirs(cache) < 0) {
		fprintf(stderr, "faultlun vm: cannot create %s or %s: %s\n", results, cache,
			strerror(errno));
		goto out;
	}
	/* Old outputs must not be mistaken for this run's. */
	static const char *const old[] = {"done",	 "kmsg.txt",	"steps.jsonl",
					  "stall.jsonl", "sysfs.jsonl", "uevents.jsonl",
					  "trace.jsonl", "agent.log",	"guest.json",
					  "disks.txt",	 "check.json",	"multipathd.log"};
	char p[PATH_MAX + 32];
	for (size_t i = 0; i < sizeof(old) / sizeof(old[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", results, old[i]);
		unlink(p);
	}
	for (unsigned i = 0; i < fl_scenario_lun_count(sc); i++) {
		snprintf(p, sizeof(p), "%s/trace-lun%d.jsonl", results, lun_id(sc, i));
		unlink(p);
	}
	const char *accel = NULL;
	int g = lab_ready(opts, check && check->knobs.multipath == 1, cache, guest, sizeof(guest),
			  &accel);
	if (g) {
		rc = g;
		goto out;
	}
	double t_guest = vm_now();
	if (write_job(sc, scenario, opts->path, guest, results, "/fl-results") < 0) {
		fprintf(stderr, "faultlun vm: cannot write the job into %s\n", results);
		goto out;
	}
	int timeout = opts->guest_timeout_s;
	if (!timeout)
		timeout = 300;
	double t_boot = vm_now();
	int st = 0;
	int q = boot_guest(accel, guest, results, run_dir, opts, timeout,
			   fl_scenario_name(sc) ?: scenario, &st);
	double t_end = vm_now();
	struct vm_run_info info = {
	    .scenario = scenario,
	    .path = opts->path,
	    .accel = accel,
	    .guest = guest,
	    .run_dir = run_dir,
	    .results = results,
	    .timed_out = q == -ETIMEDOUT,
	    .qemu_status = st,
	    .timeout_s = timeout,
	    .wall_guest_build_s = t_guest - t_start,
	    .wall_qemu_s = t_end - t_boot,
	    .wall_total_s = 0,
	    .t_start = t_start,
	};
	rc = vm_check_run(sc, &info);
out:
	fl_scenario_free(sc);
	return rc;
}

/* nftw callback of rm_tree. */
static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

/* Removes dir and everything under it (a run's old outputs). */
static void rm_tree(const char *dir)
{
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Does path exist? */
static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/*
 * Writes the jobs idx[0..nj) of a batch into share (job0, job1, ...) and
 * share/job.env (the first job's, with FL_BATCH: the agent's set-up before
 * the jobs reads it). Returns 0 or -errno.
 */
static int write_batch(struct fl_scenario *const *sc, const char *const *files, const size_t *idx,
		       size_t nj, const struct fl_vm_opts *opts, const char *guest,
		       const char *share)
{
	char dir[PATH_MAX + 32], in_guest[64], p[PATH_MAX + 48];
	rm_tree(share);
	if (vm_mkdirs(share) < 0)
		return -errno;
	for (size_t k = 0; k < nj; k++) {
		snprintf(dir, sizeof(dir), "%s/job%zu", share, k);
		snprintf(in_guest, sizeof(in_guest), "/fl-results/job%zu", k);
		int rc = vm_mkdirs(dir);
		if (rc < 0 || (rc = write_job(sc[idx[k]], files[idx[k]], opts->path, guest, dir,
					      in_guest)) < 0)
			return rc;
	}
	snprintf(p, sizeof(p), "%s/job.env", share);
	snprintf(dir, sizeof(dir), "%s/job0/job.env", share);
	int rc = copy_file(dir, p);
	if (rc < 0)
		return rc;
	FILE *f = fopen(p, "a");
	if (!f)
		return -errno;
	fprintf(f, "FL_BATCH=%zu\n", nj);
	return fclose(f) < 0 ? -errno : 0;
}

/* See vm_internal.h. */
size_t vm_batch_settle(const bool *done, const bool *began, size_t nj, bool *judge)
{
	size_t judged = 0;

	for (size_t k = 0; k < nj; k++) {
		judge[k] = done[k] || began[k] || !judged;
		judged += judge[k];
	}
	return judged;
}

/* One batch of `faultlun vm`: its scenarios, what each job became and the boot's figures. */
struct vm_batch {
	const char *const *files, *const *run_dirs;
	const char *share, *guest, *accel;
	const struct fl_vm_opts *opts;
	struct fl_scenario **sc;
	size_t n, *idx;
	bool *todo, *done, *began, *judge;
	int *rcs, per_job;
	double t_start, t_guest;
};

/* Loads the batch's scenarios: the ones that load are to do. Returns how many; *mp when one
 * asks for dm-multipath. */
static size_t batch_load(struct vm_batch *b, bool *mp)
{
	size_t left = 0;

	for (size_t i = 0; i < b->n; i++) {
		b->rcs[i] = FL_VM_ERROR;
		if (load_scenario(b->files[i], b->opts->path, &b->sc[i]) < 0)
			continue;
		const struct fl_check *check = fl_scenario_check(b->sc[i]);
		if (check && check->paths && !(check->paths & path_bit(b->opts->path)))
			fprintf(stderr,
				"faultlun vm: note: %s: the scenario's check.paths does not name "
				"%s\n",
				b->files[i], b->opts->path);
		*mp |= check && check->knobs.multipath == 1;
		b->todo[i] = true;
		left++;
	}
	return left;
}

/* Moves job k of the boot (scenario i) into its run directory and judges it. Returns 0 or -1
 * when the job's results cannot be moved. */
static int batch_judge_job(struct vm_batch *b, size_t k, size_t nj, int q, int st, double t_boot,
			   double t_end)
{
	size_t i = b->idx[k];
	char job[PATH_MAX + 32], p[PATH_MAX + 48], results[PATH_MAX + 16];

	snprintf(job, sizeof(job), "%s/job%zu", b->share, k);
	snprintf(results, sizeof(results), "%s/guest", b->run_dirs[i]);
	rm_tree(results);
	if (vm_mkdirs(b->run_dirs[i]) < 0 || rename(job, results) < 0) {
		fprintf(stderr, "faultlun vm: cannot move %s to %s: %s\n", job, results,
			strerror(errno));
		return -1;
	}
	snprintf(p, sizeof(p), "%s/console.log", b->share);
	snprintf(job, sizeof(job), "%s/console.log", b->run_dirs[i]);
	copy_file(p, job);
	struct vm_run_info info = {
	    .scenario = b->files[i],
	    .path = b->opts->path,
	    .accel = b->accel,
	    .guest = b->guest,
	    .run_dir = b->run_dirs[i],
	    .results = results,
	    .timed_out = !b->done[k] && q == -ETIMEDOUT,
	    .qemu_status = st,
	    .timeout_s = b->per_job * (int)nj,
	    .wall_guest_build_s = b->t_guest - b->t_start,
	    .wall_qemu_s = t_end - t_boot,
	    .t_start = b->t_start,
	    .batch_job = (int)k,
	    .batch_jobs = (int)nj,
	};
	b->rcs[i] = vm_check_run(b->sc[i], &info);
	b->todo[i] = false;
	return 0;
}

/* One boot for the jobs left to do. Returns how many it judged, or -1 on an error that ends the
 * batch. */
static ssize_t batch_boot(struct vm_batch *b)
{
	size_t nj = 0, judged = 0;
	char what[64];
	int st = 0;

	for (size_t i = 0; i < b->n; i++)
		if (b->todo[i])
			b->idx[nj++] = i;
	if (write_batch(b->sc, b->files, b->idx, nj, b->opts, b->guest, b->share) < 0) {
		fprintf(stderr, "faultlun vm: cannot write the jobs into %s\n", b->share);
		return -1;
	}
	snprintf(what, sizeof(what), "%zu scenario%s in one boot", nj, nj == 1 ? "" : "s");
	double t_boot = vm_now();
	int q = boot_guest(b->accel, b->guest, b->share, b->share, b->opts, b->per_job * (int)nj,
			   what, &st);
	double t_end = vm_now();
	for (size_t k = 0; k < nj; k++) {
		char p[PATH_MAX + 48];

		snprintf(p, sizeof(p), "%s/job%zu/done", b->share, k);
		b->done[k] = exists(p);
		snprintf(p, sizeof(p), "%s/job%zu/kmsg.txt", b->share, k);
		b->began[k] = exists(p);
	}
	/* A job the guest never began waits for the next boot. */
	vm_batch_settle(b->done, b->began, nj, b->judge);
	for (size_t k = 0; k < nj; k++) {
		if (!b->judge[k])
			continue;
		if (batch_judge_job(b, k, nj, q, st, t_boot, t_end) < 0)
			return -1;
		judged++;
	}
	return (ssize_t)judged;
}

/* The worst verdict of rcs[0..n), skips left out. */
static int batch_worst(const int *rcs, size_t n)
{
	int worst = FL_VM_PASS;

	for (size_t i = 0; i < n; i++)
		if (rcs[i] != FL_VM_SKIP && rcs[i] > worst)
			worst = rcs[i];
	return worst;
}

/* See fl_vm.h. */
int fl_vm_run_batch(const char *const *files, size_t n, const struct fl_vm_opts *opts,
		    const char *const *run_dirs, const char *share, int *rcs)
{
	char guest[PATH_MAX];
	struct vm_batch b = {.files = files,
			     .run_dirs = run_dirs,
			     .share = share,
			     .guest = guest,
			     .opts = opts,
			     .n = n,
			     .rcs = rcs,
			     .t_start = vm_now()};
	const char *cache = fl_vm_cache_dir(opts->cache_dir);
	size_t left = 0;
	bool mp = false;

	b.sc = calloc(n, sizeof(*b.sc));
	b.idx = calloc(n, sizeof(*b.idx));
	b.todo = calloc(n, sizeof(bool));
	b.done = calloc(n, sizeof(bool));
	b.began = calloc(n, sizeof(bool));
	b.judge = calloc(n, sizeof(bool));
	if (!b.sc || !b.idx || !b.todo || !b.done || !b.began || !b.judge) {
		fprintf(stderr, "faultlun vm: out of memory\n");
		for (size_t i = 0; i < n; i++)
			rcs[i] = FL_VM_ERROR;
		goto out;
	}
	left = batch_load(&b, &mp);
	if (!left)
		goto out;
	if (vm_mkdirs(cache) < 0) {
		fprintf(stderr, "faultlun vm: cannot create %s: %s\n", cache, strerror(errno));
		goto fail_all;
	}
	int g = lab_ready(opts, mp, cache, guest, sizeof(guest), &b.accel);
	if (g) {
		for (size_t i = 0; i < n; i++)
			if (b.todo[i])
				rcs[i] = g;
		goto out;
	}
	b.t_guest = vm_now();
	b.per_job = opts->guest_timeout_s ? opts->guest_timeout_s : 300;
	/* One boot for every job left; a job that broke its boot sends the rest to the next. */
	while (left) {
		ssize_t judged = batch_boot(&b);
		if (judged < 0)
			goto fail_all;
		left -= (size_t)judged;
	}
	goto out;
fail_all:
	for (size_t i = 0; i < n; i++)
		if (b.todo[i])
			rcs[i] = FL_VM_ERROR;
out:
	for (size_t i = 0; b.sc && i < n; i++)
		fl_scenario_free(b.sc[i]);
	free(b.sc);
	free(b.idx);
	free(b.todo);
	free(b.done);
	free(b.began);
	free(b.judge);
	return batch_worst(rcs, n);
}

/* See fl_vm.h. */
int fl_vm_recheck(const char *scenario, const char *path, const char *run_dir)
{
	struct fl_scenario *sc = NULL;
	if (load_scenario(scenario, path, &sc) < 0)
		return FL_VM_ERROR;
	char results[PATH_MAX + 16];
	snprintf(results, sizeof(results), "%s/guest", run_dir);
	if (access(results, R_OK) != 0) {
		fprintf(stderr, "faultlun vm: %s: no guest observations to check\n", results);
		fl_scenario_free(sc);
		return FL_VM_ERROR;
	}
	struct vm_run_info info = {
	    .scenario = scenario,
	    .path = path,
	    .accel = "recorded",
	    .guest = "recorded",
	    .run_dir = run_dir,
	    .results = results,
	    .t_start = vm_now(),
	};
	int rc = vm_check_run(sc, &info);
	fl_scenario_free(sc);
	return rc;
}
