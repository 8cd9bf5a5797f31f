/* SPDX-License-Identifier: MIT */
/*
 * workload.c - fl-vm-agent, the VM lab's workload runner (runs in the guest).
 *
 * Runs the steps of a scenario's check.workload (docs/scenario-format.md,
 * "check"; the step keys are in docs/vm-lab.md) on the real block devices the
 * guest's initiator created, and records for each step the errno the
 * application saw and its start / end on CLOCK_MONOTONIC (the clock of the
 * guest's /dev/kmsg). Each step runs in a child process so that a step stuck
 * in the kernel (D state) is given up after its timeout and the run goes on.
 * SG_IO steps (SPC-4 / SAM-5 status and sense, fixed or descriptor format)
 * record status, host / driver status and sense key / ASC / ASCQ.
 *
 * Alongside, two threads observe: a probe reading LBA 0 of the healthy LUN
 * (same SCSI host) every 100 ms, recording each read's latency (the stall the
 * error handler imposes on the whole host), and a sampler recording sysfs
 * files (device state, iorequest / ioerr / iotmo counters) whenever they
 * change.
 *
 *   fl-vm-agent --check CHECK.json --out DIR --dev LUN=/dev/sdX [--dev ...]
 *               [--healthy /dev/sdY] [--watch NAME=PATH]... [--ctl SOCKET]
 *               [--faultlun BIN]
 */
#include <jansson.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <poll.h>
#include <pthread.h>
#include <scsi/sg.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEVS 16
#define MAX_WATCH 32
#define MNT_DIR "/mnt/faultlun"

static struct {
	int lun[MAX_DEVS];
	const char *path[MAX_DEVS];
	int n;
} devs;
static const char *healthy_dev;
static const char *watch_name[MAX_WATCH], *watch_path[MAX_WATCH];
static int n_watch;
static const char *out_dir, *ctl_socket, *faultlun_bin = "faultlun";
static volatile int stop_observers;
static double probe_started; /* start of the probe read in flight; 0 = none */
static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;

/* Seconds on CLOCK_MONOTONIC. */
static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Opens DIR/name for appending JSON lines; exits on failure. */
static FILE *open_out(const char *name)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", out_dir, name);
	FILE *f = fopen(p, "a");
	if (!f) {
		fprintf(stderr, "fl-vm-agent: %s: %s\n", p, strerror(errno));
		exit(2);
	}
	setvbuf(f, NULL, _IOLBF, 0);
	return f;
}

/* Symbolic name of an errno value ("OK" for 0). */
static const char *errno_name(int e)
{
	static const struct {
		int e;
		const char *n;
	} t[] = {
	    {0, "OK"},
	    {EIO, "EIO"},
	    {ENOSPC, "ENOSPC"},
	    {EREMOTEIO, "EREMOTEIO"},
	    {ENODATA, "ENODATA"},
	    {EILSEQ, "EILSEQ"},
	    {ENOLINK, "ENOLINK"},
	    {ENODEV, "ENODEV"},
	    {ENXIO, "ENXIO"},
	    {EBADE, "EBADE"},
	    {ETIMEDOUT, "ETIMEDOUT"},
	    {EROFS, "EROFS"},
	    {EINVAL, "EINVAL"},
	    {EAGAIN, "EAGAIN"},
	    {EOPNOTSUPP, "EOPNOTSUPP"},
	    {ENOENT, "ENOENT"},
	    {EPERM, "EPERM"},
	    {EACCES, "EACCES"},
	    {EBUSY, "EBUSY"},
	    {EUCLEAN, "EUCLEAN"},
	    {ENOMEM, "ENOMEM"},
	    {EFBIG, "EFBIG"},
	    {EDQUOT, "EDQUOT"},
	    {ESTALE, "ESTALE"},
	    {ENOTBLK, "ENOTBLK"},
	    {EINTR, "EINTR"},
	    {EBADMSG, "EBADMSG"},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].e == e)
			return t[i].n;
	static char buf[32];
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

/* The device of a step: its "lun" key, else the first --dev. */
static const char *step_dev(json_t *step)
{
	json_t *l = json_object_get(step, "lun");
	if (json_is_integer(l))
		for (int i = 0; i < devs.n; i++)
			if (devs.lun[i] == json_integer_value(l))
				return devs.path[i];
	return devs.n ? devs.path[0] : NULL;
}

/* An integer key of a step, or def. */
static long long step_int(json_t *step, const char *key, long long def)
{
	json_t *v = json_object_get(step, key);
	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_real(v))
		return (long long)json_real_value(v);
	if (json_is_string(v))
		return strtoll(json_string_value(v), NULL, 0);
	return def;
}

/* A boolean key of a step, or def. */
static bool step_bool(json_t *step, const char *key, bool def)
{
	json_t *v = json_object_get(step, key);
	return json_is_boolean(v) ? json_is_true(v) : def;
}

/* A string key of a step, or def. */
static const char *step_str(json_t *step, const char *key, const char *def)
{
	json_t *v = json_object_get(step, key);
	return json_is_string(v) ? json_string_value(v) : def;
}

/* Logical block size of an open block device (512 if unknown). */
static unsigned block_size(int fd)
{
	int bs = 0;
	if (ioctl(fd, BLKSSZGET, &bs) < 0 || bs <= 0)
		return 512;
	return (unsigned)bs;
}

/* read / write steps: direct by default, one pread / pwrite of the range. */
static int do_rw(json_t *step, bool is_write, json_t *res)
{
	const char *dev = step_dev(step);
	bool direct = step_bool(step, "direct", true);
	int fd = open(dev, (is_write ? O_RDWR : O_RDONLY) | (direct ? O_DIRECT : 0));
	if (fd < 0)
		return errno;
	unsigned bs = block_size(fd);
	long long lba = step_int(step, "lba", 0), blocks = step_int(step, "blocks", 1);
	size_t len = (size_t)blocks * bs;
	void *buf = NULL;
	if (posix_memalign(&buf, 4096, len ? len : 4096)) {
		close(fd);
		return ENOMEM;
	}
	memset(buf, (int)step_int(step, "pattern", 0xa5), len);
	ssize_t n =
	    is_write ? pwrite(fd, buf, len, (off_t)lba * bs) : pread(fd, buf, len, (off_t)lba * bs);
	int e = n < 0 ? errno : 0;
	json_object_set_new(res, "bytes", json_integer(n < 0 ? 0 : n));
	if (!e && (size_t)n != len)
		json_object_set_new(res, "short", json_true());
	if (!e && is_write && step_bool(step, "fsync", false) && fsync(fd) < 0) {
		e = errno;
		json_object_set_new(res, "failed_call", json_string("fsync"));
	}
	free(buf);
	close(fd);
	return e;
}

/* fsync step: fsync of the device (buffered writes before it) or of a file. */
static int do_fsync(json_t *step)
{
	const char *file = step_str(step, "path", NULL);
	char p[4096];
	if (file)
		snprintf(p, sizeof(p), "%s/%s", MNT_DIR, file);
	int fd = open(file ? p : step_dev(step), O_RDWR);
	if (fd < 0)
		return errno;
	int e = fsync(fd) < 0 ? errno : 0;
	close(fd);
	return e;
}

/* Runs argv, returns its exit status (or 127) and stores it in res. */
static int run_prog(char *const argv[], json_t *res)
{
	pid_t pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	json_object_set_new(res, "exit", json_integer(code));
	return code;
}

/* mkfs step: mkfs.FS on the device; the exit code is the result. */
static int do_mkfs(json_t *step, json_t *res)
{
	char prog[64];
	snprintf(prog, sizeof(prog), "mkfs.%s", step_str(step, "fs", "ext4"));
	char *argv[] = {prog, (char *)"-q", (char *)"-F", (char *)step_dev(step), NULL};
	if (strcmp(step_str(step, "fs", "ext4"), "ext4"))
		argv[2] = NULL;
	int code = run_prog(argv, res);
	return code ? EIO : 0;
}

/* mount step: mount(2) of the device on MNT_DIR; errno is mount's. */
static int do_mount(json_t *step)
{
	mkdir(MNT_DIR, 0755);
	const char *opts = step_str(step, "options", NULL);
	if (mount(step_dev(step), MNT_DIR, step_str(step, "fs", "ext4"), 0, opts) < 0)
		return errno;
	return 0;
}

/* write_file step: writes size bytes to a file on the mounted fs, fsyncs. */
static int do_write_file(json_t *step, json_t *res)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", MNT_DIR, step_str(step, "path", "file"));
	long long size = step_int(step, "size", 1 << 20);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		json_object_set_new(res, "failed_call", json_string("open"));
		return errno;
	}
	static char chunk[65536];
	memset(chunk, 0x5a, sizeof(chunk));
	long long done = 0;
	int e = 0;
	while (done < size) {
		size_t n =
		    size - done > (long long)sizeof(chunk) ? sizeof(chunk) : (size_t)(size - done);
		ssize_t w = write(fd, chunk, n);
		if (w < 0) {
			e = errno;
			json_object_set_new(res, "failed_call", json_string("write"));
			break;
		}
		done += w;
	}
	json_object_set_new(res, "bytes", json_integer(done));
	if (!e && step_bool(step, "fsync", true) && fsync(fd) < 0) {
		e = errno;
		json_object_set_new(res, "failed_call", json_string("fsync"));
	}
	if (close(fd) < 0 && !e) {
		e = errno;
		json_object_set_new(res, "failed_call", json_string("close"));
	}
	return e;
}

/* Parses a hex CDB ("28 00 00 00 00 00 00 00 08 00" or "2800..."). */
static int parse_cdb(const char *s, unsigned char *cdb)
{
	int n = 0;
	while (*s && n < 32) {
		while (*s == ' ' || *s == ':')
			s++;
		if (!s[0] || !s[1])
			break;
		char h[3] = {s[0], s[1], 0};
		char *end;
		cdb[n++] = (unsigned char)strtoul(h, &end, 16);
		if (*end)
			return -1;
		s += 2;
	}
	return n;
}

/* sg_raw step: one SG_IO on the device; records status and sense. */
static int do_sg_raw(json_t *step, json_t *res)
{
	unsigned char cdb[32], sense[96];
	int cdb_len = parse_cdb(step_str(step, "cdb", ""), cdb);
	if (cdb_len < 6)
		return EINVAL;
	/* "size": bytes of data-in; "data": bytes of data-out (pattern-filled). */
	long long in = step_int(step, "size", 0), out = step_int(step, "data", 0);
	size_t len = (size_t)(in ? in : out);
	void *buf = calloc(1, len ? len : 1);
	memset(buf, (int)step_int(step, "pattern", 0xa5), out ? len : 0);
	int fd = open(step_dev(step), O_RDWR | O_NONBLOCK);
	if (fd < 0) {
		free(buf);
		return errno;
	}
	struct sg_io_hdr io = {
	    .interface_id = 'S',
	    .dxfer_direction = in    ? SG_DXFER_FROM_DEV
			       : out ? SG_DXFER_TO_DEV
				     : SG_DXFER_NONE,
	    .cmd_len = (unsigned char)cdb_len,
	    .mx_sb_len = sizeof(sense),
	    .dxfer_len = (unsigned)len,
	    .dxferp = buf,
	    .cmdp = cdb,
	    .sbp = sense,
	    .timeout = (unsigned)step_int(step, "timeout_s", 60) * 1000,
	};
	int e = ioctl(fd, SG_IO, &io) < 0 ? errno : 0;
	close(fd);
	free(buf);
	if (e)
		return e;
	json_object_set_new(res, "status", json_integer(io.status));
	json_object_set_new(res, "host_status", json_integer(io.host_status));
	json_object_set_new(res, "driver_status", json_integer(io.driver_status));
	json_object_set_new(res, "resid", json_integer(io.resid));
	if (io.sb_len_wr >= 8) {
		unsigned key, asc, ascq;
		if ((sense[0] & 0x7f) >= 0x72) { /* SPC-4 4.5.2 descriptor format */
			key = sense[1] & 0xf, asc = sense[2], ascq = sense[3];
		} else { /* SPC-4 4.5.3 fixed format */
			key = sense[2] & 0xf, asc = io.sb_len_wr > 12 ? sense[12] : 0;
			ascq = io.sb_len_wr > 13 ? sense[13] : 0;
		}
		json_object_set_new(res, "sense_key", json_integer(key));
		json_object_set_new(res, "asc", json_integer(asc));
		json_object_set_new(res, "ascq", json_integer(ascq));
		char hex[3 * sizeof(sense) + 1] = "";
		for (int i = 0; i < io.sb_len_wr && i < (int)sizeof(sense); i++)
			snprintf(hex + 3 * i, 4, "%02x ", sense[i]);
		json_object_set_new(res, "sense_hex", json_string(hex));
	}
	return 0;
}

/* ctl step: `faultlun ctl --socket S ARGS...`; the exit code is the result. */
static int do_ctl(json_t *step, json_t *res)
{
	json_t *args = json_object_get(step, "args");
	char *argv[40];
	int n = 0;
	if (!ctl_socket) {
		json_object_set_new(res, "error", json_string("no control socket on this path"));
		return EINVAL;
	}
	argv[n++] = (char *)faultlun_bin;
	argv[n++] = (char *)"ctl";
	argv[n++] = (char *)ctl_socket;
	size_t i;
	json_t *a;
	json_array_foreach(args, i, a) if (json_is_string(a) && n < 38) argv[n++] =
	    (char *)json_string_value(a);
	argv[n] = NULL;
	return run_prog(argv, res) ? EIO : 0;
}

/* tur / inquiry steps: SG_IO with a fixed CDB (SPC-4 6.37, 6.6). */
static int do_fixed_cdb(json_t *step, json_t *res, const char *cdb, long long in)
{
	json_t *s = json_deep_copy(step);
	json_object_set_new(s, "cdb", json_string(cdb));
	json_object_set_new(s, "size", json_integer(in));
	json_object_del(s, "data");
	int e = do_sg_raw(s, res);
	json_decref(s);
	return e;
}

/* discard step: BLKDISCARD of lba..lba+blocks-1 (UNMAP / WRITE SAME). */
static int do_discard(json_t *step)
{
	int fd = open(step_dev(step), O_RDWR);
	if (fd < 0)
		return errno;
	uint64_t bs = block_size(fd);
	uint64_t range[2] = {(uint64_t)step_int(step, "lba", 0) * bs,
			     (uint64_t)step_int(step, "blocks", 1) * bs};
	int e = ioctl(fd, BLKDISCARD, range) < 0 ? errno : 0;
	close(fd);
	return e;
}

/* read_file step: reads a whole file on the mounted fs. */
static int do_read_file(json_t *step, json_t *res)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", MNT_DIR, step_str(step, "path", "file"));
	int fd = open(p, O_RDONLY);
	if (fd < 0)
		return errno;
	static char chunk[65536];
	long long total = 0;
	ssize_t n;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		total += n;
	int e = n < 0 ? errno : 0;
	close(fd);
	json_object_set_new(res, "bytes", json_integer(total));
	return e;
}

/* rescan step: asks sd to re-read the device's capacity and settings. */
static int do_rescan(json_t *step)
{
	const char *dev = step_dev(step), *name = strrchr(dev, '/');
	char p[256];
	snprintf(p, sizeof(p), "/sys/block/%s/device/rescan", name ? name + 1 : dev);
	int fd = open(p, O_WRONLY);
	if (fd < 0)
		return errno;
	int e = write(fd, "1", 1) < 0 ? errno : 0;
	close(fd);
	return e;
}

/* shell step: `sh -c COMMAND` (DEV in the environment); non-zero exit is EIO. */
static int do_shell(json_t *step, json_t *res)
{
	setenv("DEV", step_dev(step), 1);
	char *argv[] = {(char *)"sh", (char *)"-c", (char *)step_str(step, "command", "true"),
			NULL};
	return run_prog(argv, res) ? EIO : 0;
}

/* Runs one step once in this (child) process; returns its errno. */
static int run_step_once(json_t *step, json_t *res)
{
	const char *op = step_str(step, "op", "");
	if (!strcmp(op, "read"))
		return do_rw(step, false, res);
	if (!strcmp(op, "write"))
		return do_rw(step, true, res);
	if (!strcmp(op, "fsync"))
		return do_fsync(step);
	if (!strcmp(op, "sync")) {
		sync();
		return 0;
	}
	if (!strcmp(op, "mkfs"))
		return do_mkfs(step, res);
	if (!strcmp(op, "mount"))
		return do_mount(step);
	if (!strcmp(op, "umount"))
		return umount(MNT_DIR) < 0 ? errno : 0;
	if (!strcmp(op, "write_file"))
		return do_write_file(step, res);
	if (!strcmp(op, "read_file"))
		return do_read_file(step, res);
	if (!strcmp(op, "sg_raw"))
		return do_sg_raw(step, res);
	if (!strcmp(op, "tur"))
		return do_fixed_cdb(step, res, "00 00 00 00 00 00", 0);
	if (!strcmp(op, "inquiry"))
		return do_fixed_cdb(step, res, "12 00 00 00 60 00", 96);
	if (!strcmp(op, "discard"))
		return do_discard(step);
	if (!strcmp(op, "rescan"))
		return do_rescan(step);
	if (!strcmp(op, "shell"))
		return do_shell(step, res);
	if (!strcmp(op, "ctl"))
		return do_ctl(step, res);
	if (!strcmp(op, "sleep")) {
		usleep((useconds_t)step_int(step, "ms", 1000) * 1000);
		return 0;
	}
	json_object_set_new(res, "error", json_string("unknown op"));
	return EINVAL;
}

/* Runs a step "repeat" times (default once), stopping at the first error. */
static int run_step(json_t *step, json_t *res)
{
	long long n = step_int(step, "repeat", 1), i;
	int e = 0;
	for (i = 0; i < n && !e; i++)
		e = run_step_once(step, res);
	if (n > 1)
		json_object_set_new(res, "repeats_done", json_integer(e ? i - 1 : i));
	return e;
}

/* A step running in its child process. */
struct running_step {
	pid_t pid;
	int fd; /* read end of the child's report pipe */
	double t0;
	int timeout_ms;
	size_t i;
	json_t *step;
};

/* Starts step i in a child that reports its result (and its end time) over a pipe. */
static int start_step(size_t i, json_t *step, struct running_step *rs)
{
	int pfd[2];
	if (pipe(pfd) < 0)
		return -errno;
	rs->t0 = now_s();
	rs->timeout_ms = (int)step_int(step, "timeout_s", 180) * 1000;
	rs->i = i;
	rs->step = step;
	rs->pid = fork();
	if (rs->pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	if (rs->pid == 0) {
		close(pfd[0]);
		json_t *res = json_object();
		int e = run_step(step, res);
		json_object_set_new(res, "errno_num", json_integer(e));
		json_object_set_new(res, "t1", json_real(now_s()));
		char *s = json_dumps(res, JSON_COMPACT);
		if (s && write(pfd[1], s, strlen(s)) < 0)
			_exit(3);
		_exit(0);
	}
	close(pfd[1]);
	rs->fd = pfd[0];
	return 0;
}

/*
 * Collects a started step by its deadline and writes its record. A child
 * past its deadline is left behind (it is stuck in the kernel) and the
 * step's errno is "TIMEOUT".
 */
static void finish_step(FILE *out, struct running_step *rs)
{
	char buf[8192];
	size_t got = 0;
	bool timed_out = false;
	for (;;) {
		int left = rs->timeout_ms - (int)((now_s() - rs->t0) * 1000);
		if (left <= 0) {
			timed_out = true;
			break;
		}
		struct pollfd p = {.fd = rs->fd, .events = POLLIN};
		int r = poll(&p, 1, left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			timed_out = r == 0;
			break;
		}
		ssize_t n = read(rs->fd, buf + got, sizeof(buf) - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	double t1 = now_s();
	close(rs->fd);
	buf[got] = 0;
	json_t *res = got ? json_loads(buf, 0, NULL) : NULL;
	if (!res)
		res = json_object();
	if (!timed_out)
		waitpid(rs->pid, NULL, 0);
	/* The child's own end time counts (a background step is collected late). */
	if (json_is_real(json_object_get(res, "t1")))
		t1 = json_real_value(json_object_get(res, "t1"));
	json_object_set_new(res, "step", json_integer((json_int_t)rs->i));
	json_object_set_new(res, "op", json_string(step_str(rs->step, "op", "")));
	json_object_set_new(res, "t0", json_real(rs->t0));
	json_object_set_new(res, "t1", json_real(t1));
	json_object_set_new(res, "elapsed_ms", json_real((t1 - rs->t0) * 1000));
	if (timed_out)
		json_object_set_new(res, "errno", json_string("TIMEOUT"));
	else if (json_is_integer(json_object_get(res, "errno_num")))
		json_object_set_new(res, "errno",
				    json_string(errno_name((int)json_integer_value(
					json_object_get(res, "errno_num")))));
	else
		json_object_set_new(res, "errno", json_string("CRASHED"));
	json_object_set_new(res, "params", json_deep_copy(rs->step));
	char *s = json_dumps(res, JSON_COMPACT);
	fprintf(out, "%s\n", s);
	fprintf(stderr, "fl-vm-agent: step %zu %s -> %s in %.0f ms\n", rs->i,
		step_str(rs->step, "op", ""), json_string_value(json_object_get(res, "errno")),
		(t1 - rs->t0) * 1000);
	free(s);
	json_decref(res);
}

/* The healthy-LUN probe: a direct read of LBA 0 every 100 ms. */
static void *probe_thread(void *arg)
{
	(void)arg;
	FILE *out = open_out("stall.jsonl");
	int fd = open(healthy_dev, O_RDONLY | O_DIRECT);
	void *buf = NULL;
	if (fd < 0 || posix_memalign(&buf, 4096, 4096)) {
		fprintf(out, "{\"error\":\"cannot open %s\"}\n", healthy_dev);
		fclose(out);
		return NULL;
	}
	while (!stop_observers) {
		double t0 = now_s();
		pthread_mutex_lock(&probe_lock);
		probe_started = t0;
		pthread_mutex_unlock(&probe_lock);
		ssize_t n = pread(fd, buf, 4096, 0);
		int e = n < 0 ? errno : 0;
		double t1 = now_s();
		pthread_mutex_lock(&probe_lock);
		probe_started = 0;
		pthread_mutex_unlock(&probe_lock);
		fprintf(out, "{\"t0\":%.6f,\"t1\":%.6f,\"ms\":%.3f,\"errno\":\"%s\"}\n", t0, t1,
			(t1 - t0) * 1000, errno_name(e));
		usleep(100000);
	}
	fclose(out);
	free(buf);
	close(fd);
	return NULL;
}

/* The sysfs sampler: one line per change of any watched file. */
static void *sampler_thread(void *arg)
{
	(void)arg;
	FILE *out = open_out("sysfs.jsonl");
	char last[MAX_WATCH][128] = {{0}};
	while (!stop_observers) {
		for (int i = 0; i < n_watch; i++) {
			char v[128] = "";
			int fd = open(watch_path[i], O_RDONLY);
			if (fd >= 0) {
				ssize_t n = read(fd, v, sizeof(v) - 1);
				v[n > 0 ? n : 0] = 0;
				close(fd);
				v[strcspn(v, "\n")] = 0;
			} else {
				snprintf(v, sizeof(v), "(gone)");
			}
			if (strcmp(v, last[i])) {
				snprintf(last[i], sizeof(last[i]), "%s", v);
				json_t *o = json_pack("{s:f,s:s,s:s}", "t", now_s(), "name",
						      watch_name[i], "value", v);
				char *s = json_dumps(o, JSON_COMPACT);
				fprintf(out, "%s\n", s);
				free(s);
				json_decref(o);
			}
		}
		usleep(100000);
	}
	fclose(out);
	return NULL;
}

/* Prints the usage and exits 2. */
static void usage(void)
{
	fprintf(stderr, "usage: fl-vm-agent --check CHECK.json --out DIR --dev LUN=DEV "
			"[--healthy DEV] [--watch NAME=PATH] [--ctl SOCKET] [--faultlun BIN]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *check_path = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--check")) {
			check_path = v;
		} else if (!strcmp(a, "--out")) {
			out_dir = v;
		} else if (!strcmp(a, "--healthy")) {
			healthy_dev = v;
		} else if (!strcmp(a, "--ctl")) {
			ctl_socket = v;
		} else if (!strcmp(a, "--faultlun")) {
			faultlun_bin = v;
		} else if (!strcmp(a, "--dev") && devs.n < MAX_DEVS && strchr(v, '=')) {
			devs.lun[devs.n] = atoi(v);
			devs.path[devs.n++] = strchr(v, '=') + 1;
		} else if (!strcmp(a, "--watch") && n_watch < MAX_WATCH && strchr(v, '=')) {
			watch_name[n_watch] = strndup(v, (size_t)(strchr(v, '=') - v));
			watch_path[n_watch++] = strchr(v, '=') + 1;
		} else {
			usage();
		}
	}
	if (!check_path || !out_dir || !devs.n)
		usage();
	json_error_t err;
	json_t *check = json_load_file(check_path, 0, &err);
	if (!check) {
		fprintf(stderr, "fl-vm-agent: %s:%d:%d: %s\n", check_path, err.line, err.column,
			err.text);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	/* Clock sync: the kernel log stamps this record with its own clock. */
	int kfd = open("/dev/kmsg", O_WRONLY);
	if (kfd >= 0) {
		char m[96];
		int n = snprintf(m, sizeof(m), "faultlun-agent: clock mono_us=%lld\n",
				 (long long)(now_s() * 1e6));
		if (write(kfd, m, (size_t)n) < 0)
			perror("fl-vm-agent: /dev/kmsg");
		close(kfd);
	}
	pthread_t probe, sampler;
	bool have_probe = healthy_dev && *healthy_dev;
	if (have_probe)
		pthread_create(&probe, NULL, probe_thread, NULL);
	pthread_create(&sampler, NULL, sampler_thread, NULL);
	/* Let the observers take a baseline before the first step. */
	usleep(300000);
	FILE *out = open_out("steps.jsonl");
	json_t *steps = json_object_get(check, "workload"), *step;
	size_t i;
	/* "background": true steps run on while the next ones start; they are
	 * collected (each by its own deadline) after the last foreground step. */
	struct running_step bg[64];
	size_t nbg = 0;
	json_array_foreach(steps, i, step)
	{
		struct running_step rs;
		if (start_step(i, step, &rs) < 0) {
			fprintf(stderr, "fl-vm-agent: cannot start step %zu\n", i);
			continue;
		}
		if (step_bool(step, "background", false) && nbg < 64)
			bg[nbg++] = rs;
		else
			finish_step(out, &rs);
	}
	for (size_t b = 0; b < nbg; b++)
		finish_step(out, &bg[b]);
	fclose(out);
	/* Let the observers see what the last step set off. */
	usleep(1000000);
	stop_observers = 1;
	pthread_join(sampler, NULL);
	if (have_probe) {
		/* A probe stuck in the kernel is recorded as still stalled, not joined. */
		pthread_mutex_lock(&probe_lock);
		double started = probe_started;
		pthread_mutex_unlock(&probe_lock);
		if (started > 0) {
			FILE *f = open_out("stall.jsonl");
			fprintf(f, "{\"t0\":%.6f,\"t1\":%.6f,\"ms\":%.3f,\"unfinished\":true}\n",
				started, now_s(), (now_s() - started) * 1000);
			fclose(f);
		} else {
			struct timespec dl;
			clock_gettime(CLOCK_REALTIME, &dl);
			dl.tv_sec += 3;
			pthread_timedjoin_np(probe, NULL, &dl);
		}
	}
	json_decref(check);
	return 0;
}
