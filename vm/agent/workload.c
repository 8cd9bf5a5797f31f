/* SPDX-License-Identifier: MIT */
/*
 * workload.c - fl-vm-agent, the VM lab's workload runner (runs in the guest).
 *
 * Loads the scenario with scenario/'s loader (validated as on the host) and
 * runs the typed steps of its check workload (struct fl_step, defaults
 * applied; docs/scenario-format.md "check", docs/vm-lab.md) on the real block
 * devices the guest's initiator created, and records for each step the errno the
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
 * Results (steps.jsonl, stall.jsonl, sysfs.jsonl) are written with jansson.
 *
 *   fl-vm-agent --scenario FILE [--path iscsi|tcmu|lio] --out DIR
 *               --dev LUN=/dev/sdX [--dev ...] [--healthy /dev/sdY]
 *               [--watch NAME=PATH]... [--ctl SOCKET] [--faultlun BIN]
 *
 * The first --dev is the LUN under test's disk: steps whose LUN is -1, or a
 * LUN without a disk, use it.
 */
#include "fl_check.h"
#include "fl_stamp.h"
#include "fl_scenario.h"
#include "fl_target.h"

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
/* A step's outcome when it could not be started at all (not an errno). */
#define STEP_NOT_RUN (-1)

static struct {
	int lun[MAX_DEVS];
	const char *path[MAX_DEVS];
	int n;
} devs;

/* The LUN a step names, else the first LUN of the guest's disks (0 without one). */
static int step_lun(const struct fl_step *s)
{
	return s->lun >= 0 ? s->lun : devs.n ? devs.lun[0] : 0;
}
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

/* The disk of a step: its LUN's, else (-1 or a LUN without a disk) the LUN under test's. */
static const char *step_dev(const struct fl_step *step)
{
	if (step->lun >= 0)
		for (int i = 0; i < devs.n; i++)
			if (devs.lun[i] == step->lun)
				return devs.path[i];
	return devs.n ? devs.path[0] : NULL;
}

/* Logical block size of an open block device (512 if unknown). */
static unsigned block_size(int fd)
{
	int bs = 0;
	if (ioctl(fd, BLKSSZGET, &bs) < 0 || bs <= 0)
		return 512;
	return (unsigned)bs;
}

/*
 * What the stamped writes of this run left where (fl_stamp.h). A step runs
 * in a child, which reads the book as it was at its start; the parent books
 * the child's writes from its report ("stamped": [[generation, acknowledged],
 * ...]), or, for a child left behind, every generation it may have sent as
 * not acknowledged. Generations are reserved before the child starts, so
 * that steps in the background never share one.
 */
static struct fl_stamp_book book;

/*
 * read / write steps: one pread / pwrite of the range, O_DIRECT unless direct
 * is false. With stamp, a write's blocks describe themselves and a read
 * checks them: a block that is not what the last acknowledged write left
 * ends the step with EBADMSG, "integrity" saying which and how.
 */
static int do_rw(const struct fl_step *step, bool is_write, json_t *res)
{
	int fd =
	    open(step_dev(step), (is_write ? O_RDWR : O_RDONLY) | (step->direct ? O_DIRECT : 0));
	if (fd < 0)
		return errno;
	unsigned bs = block_size(fd);
	size_t len = (size_t)step->blocks * bs;
	void *buf = NULL;
	if (posix_memalign(&buf, 4096, len ? len : 4096)) {
		close(fd);
		return ENOMEM;
	}
	int lun = step_lun(step);
	uint64_t gen = 0;
	if (step->stamp && is_write && bs >= FL_STAMP_MIN_BLOCK)
		gen = fl_stamp_fill(&book, buf, bs, lun, step->lba, step->blocks);
	else
		memset(buf, step->pattern, len);
	off_t at = (off_t)(step->lba * bs);
	ssize_t n = is_write ? pwrite(fd, buf, len, at) : pread(fd, buf, len, at);
	int e = n < 0 ? errno : 0;
	json_object_set_new(res, "bytes", json_integer(n < 0 ? 0 : n));
	if (!e && (size_t)n != len)
		json_object_set_new(res, "short", json_true());
	if (gen) {
		bool acked = !e && (size_t)n == len;
		json_t *a = json_object_get(res, "stamped");
		fl_stamp_written(&book, lun, step->lba, step->blocks, gen, acked);
		if (!a)
			json_object_set_new(res, "stamped", a = json_array());
		json_array_append_new(a, json_pack("[I, b]", (json_int_t)gen, acked));
	}
	if (step->stamp && !is_write && !e && bs >= FL_STAMP_MIN_BLOCK) {
		char why[256];
		if (fl_stamp_check(&book, buf, bs, lun, step->lba, (uint64_t)n / bs, why,
				   sizeof(why))) {
			json_object_set_new(res, "integrity", json_string(why));
			e = EBADMSG;
		}
	}
	free(buf);
	close(fd);
	return e;
}

/* fsync step: fsync of a file on the mounted fs, else of the disk (after buffered writes). */
static int do_fsync(const struct fl_step *step)
{
	char p[4096];
	if (step->path)
		snprintf(p, sizeof(p), "%s/%s", MNT_DIR, step->path);
	int fd = open(step->path ? p : step_dev(step), O_RDWR);
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

/* mkfs step: `mkfs.FS -q -F DISK` (ext2, ext3, ext4 all take -F); a non-zero exit is EIO. */
static int do_mkfs(const struct fl_step *step, json_t *res)
{
	char prog[64];
	snprintf(prog, sizeof(prog), "mkfs.%s", step->fs ? step->fs : "ext4");
	char *argv[] = {prog, (char *)"-q", (char *)"-F", (char *)step_dev(step), NULL};
	return run_prog(argv, res) ? EIO : 0;
}

/* mount step: mount(2) of the disk on MNT_DIR, no options; errno is mount's. */
static int do_mount(const struct fl_step *step)
{
	mkdir(MNT_DIR, 0755);
	if (mount(step_dev(step), MNT_DIR, step->fs ? step->fs : "ext4", 0, NULL) < 0)
		return errno;
	return 0;
}

/* write_file step: writes size bytes of 0x5a to a file on the mounted fs, fsyncs, closes. */
static int do_write_file(const struct fl_step *step, json_t *res)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", MNT_DIR, step->path ? step->path : "file");
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		json_object_set_new(res, "failed_call", json_string("open"));
		return errno;
	}
	static char chunk[65536];
	memset(chunk, 0x5a, sizeof(chunk));
	uint64_t done = 0;
	int e = 0;
	while (done < step->size) {
		size_t n =
		    step->size - done > sizeof(chunk) ? sizeof(chunk) : (size_t)(step->size - done);
		ssize_t w = write(fd, chunk, n);
		if (w < 0) {
			e = errno;
			json_object_set_new(res, "failed_call", json_string("write"));
			break;
		}
		done += (uint64_t)w;
	}
	json_object_set_new(res, "bytes", json_integer((json_int_t)done));
	if (!e && fsync(fd) < 0) {
		e = errno;
		json_object_set_new(res, "failed_call", json_string("fsync"));
	}
	if (close(fd) < 0 && !e) {
		e = errno;
		json_object_set_new(res, "failed_call", json_string("close"));
	}
	return e;
}

/* The host byte of a command whose timer ran out (scsi.h DID_TIME_OUT). */
#define SG_HOST_DID_TIME_OUT 0x03

/*
 * One SG_IO on the step's disk: data-in of in bytes, else data-out of out
 * bytes of the step's pattern; records host / driver status, resid, and
 * the status and sense (SPC-4 4.5.2 descriptor, 4.5.3 fixed format) when
 * the device gave one. The SG_IO timeout is the step's deadline, at most
 * 60 s (fl_step_sgio_timeout_s). Returns the step's errno: 0 whenever a
 * status came back; ETIMEDOUT for a command the kernel timed out
 * (DID_TIME_OUT), EIO for any other host byte.
 */
static int do_sg_io(const struct fl_step *step, const uint8_t *cdb, uint8_t cdb_len, uint32_t in,
		    uint32_t out, json_t *res)
{
	unsigned char cmd[FL_STEP_CDB_MAX], sense[96];
	size_t len = in ? in : out;
	void *buf = calloc(1, len ? len : 1);
	if (!buf)
		return ENOMEM;
	memcpy(cmd, cdb, cdb_len);
	if (!in)
		memset(buf, step->pattern, out);
	int fd = open(step_dev(step), O_RDWR | O_NONBLOCK);
	if (fd < 0) {
		free(buf);
		return errno;
	}
	uint32_t timeout_s = fl_step_sgio_timeout_s(step);
	struct sg_io_hdr io = {
	    .interface_id = 'S',
	    .dxfer_direction = in    ? SG_DXFER_FROM_DEV
			       : out ? SG_DXFER_TO_DEV
				     : SG_DXFER_NONE,
	    .cmd_len = cdb_len,
	    .mx_sb_len = sizeof(sense),
	    .dxfer_len = (unsigned)len,
	    .dxferp = buf,
	    .cmdp = cmd,
	    .sbp = sense,
	    .timeout = timeout_s * 1000,
	};
	int e = ioctl(fd, SG_IO, &io) < 0 ? errno : 0;
	close(fd);
	free(buf);
	if (e)
		return e;
	json_object_set_new(res, "host_status", json_integer(io.host_status));
	json_object_set_new(res, "driver_status", json_integer(io.driver_status));
	json_object_set_new(res, "resid", json_integer(io.resid));
	/*
	 * A host byte: the kernel completed the command without a SCSI status
	 * (its timer ran out and the error handling took it back, or the
	 * connection failed under it); the ioctl itself succeeded. The step
	 * records no status and the errno the host byte means.
	 */
	if (io.host_status)
		return io.host_status == SG_HOST_DID_TIME_OUT ? ETIMEDOUT : EIO;
	json_object_set_new(res, "status", json_integer(io.status));
	if (io.sb_len_wr >= 8) {
		struct fl_sense_data sd;
		size_t sb_len = io.sb_len_wr < sizeof(sense) ? io.sb_len_wr : sizeof(sense);

		fl_sense_decode(sense, sb_len, &sd);
		json_object_set_new(res, "sense_key", json_integer(sd.key));
		json_object_set_new(res, "asc", json_integer(sd.asc));
		json_object_set_new(res, "ascq", json_integer(sd.ascq));
		char hex[3 * sizeof(sense) + 1] = "";
		for (int i = 0; i < io.sb_len_wr && i < (int)sizeof(sense); i++)
			snprintf(hex + 3 * i, 4, "%02x ", sense[i]);
		json_object_set_new(res, "sense_hex", json_string(hex));
	}
	return 0;
}

/*
 * ctl step: `faultlun ctl SOCKET ARGS...`; a non-zero exit is EIO. A ctl
 * that cannot start (no socket on this path, no faultlun program) did not
 * run (docs/scenario-format.md "ctl").
 */
static int do_ctl(const struct fl_step *step, json_t *res)
{
	char *argv[FL_CTL_ARGS_MAX + 4];
	int n = 0;
	if (!ctl_socket) {
		json_object_set_new(res, "not_run", json_string("no control socket on this path"));
		return STEP_NOT_RUN;
	}
	if (strchr(faultlun_bin, '/') && access(faultlun_bin, X_OK) < 0) {
		json_object_set_new(res, "not_run", json_string("no faultlun program to run"));
		return STEP_NOT_RUN;
	}
	argv[n++] = (char *)faultlun_bin;
	argv[n++] = (char *)"ctl";
	argv[n++] = (char *)ctl_socket;
	for (size_t i = 0; i < step->nargs && i < FL_CTL_ARGS_MAX; i++)
		argv[n++] = step->args[i];
	argv[n] = NULL;
	return run_prog(argv, res) ? EIO : 0;
}

/* discard step: BLKDISCARD of lba..lba+blocks-1 (the kernel sends UNMAP or WRITE SAME). */
static int do_discard(const struct fl_step *step)
{
	int fd = open(step_dev(step), O_RDWR);
	if (fd < 0)
		return errno;
	uint64_t bs = block_size(fd);
	uint64_t range[2] = {step->lba * bs, step->blocks * bs};
	int e = ioctl(fd, BLKDISCARD, range) < 0 ? errno : 0;
	close(fd);
	return e;
}

/* read_file step: reads a whole file on the mounted fs. */
static int do_read_file(const struct fl_step *step, json_t *res)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s/%s", MNT_DIR, step->path ? step->path : "file");
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
static int do_rescan(const struct fl_step *step)
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
static int do_shell(const struct fl_step *step, json_t *res)
{
	setenv("DEV", step_dev(step), 1);
	char *argv[] = {(char *)"sh", (char *)"-c", step->command ? step->command : (char *)"true",
			NULL};
	return run_prog(argv, res) ? EIO : 0;
}

/* Runs one step once in this (child) process; returns its errno or STEP_NOT_RUN. */
static int run_step_once(const struct fl_step *step, json_t *res)
{
	/* SPC-4 6.37 TEST UNIT READY, 6.6 INQUIRY (standard data). */
	static const uint8_t tur[6] = {SPC_OP_TEST_UNIT_READY, 0, 0, 0, 0, 0};
	static const uint8_t inquiry[6] = {SPC_OP_INQUIRY, 0, 0, 0, FL_INQUIRY_ALLOC, 0};

	switch (step->op) {
	case FL_OP_READ:
		return do_rw(step, false, res);
	case FL_OP_WRITE:
		return do_rw(step, true, res);
	case FL_OP_DISCARD:
		return do_discard(step);
	case FL_OP_FSYNC:
		return do_fsync(step);
	case FL_OP_SYNC:
		sync();
		return 0;
	case FL_OP_TUR:
		return do_sg_io(step, tur, sizeof(tur), 0, 0, res);
	case FL_OP_INQUIRY:
		return do_sg_io(step, inquiry, sizeof(inquiry), FL_INQUIRY_ALLOC, 0, res);
	case FL_OP_SG_RAW:
		/* "size" (data-in) wins over "data" (data-out). */
		return do_sg_io(step, step->cdb, step->cdb_len, step->data_in,
				step->data_in ? 0 : step->data_out, res);
	case FL_OP_CTL:
		return do_ctl(step, res);
	case FL_OP_SLEEP:
		usleep((useconds_t)step->ms * 1000);
		return 0;
	case FL_OP_MKFS:
		return do_mkfs(step, res);
	case FL_OP_MOUNT:
		return do_mount(step);
	case FL_OP_UMOUNT:
		return umount(MNT_DIR) < 0 ? errno : 0;
	case FL_OP_WRITE_FILE:
		return do_write_file(step, res);
	case FL_OP_READ_FILE:
		return do_read_file(step, res);
	case FL_OP_RESCAN:
		return do_rescan(step);
	case FL_OP_SHELL:
		return do_shell(step, res);
	case FL_OP_UNMAP:
	case FL_OP_WRITE_SAME:
	case FL_OP_ABORT_TASK:
	case FL_OP_LUN_RESET:
	case FL_OP_TARGET_RESET:
		/* the libiscsi runner's ops (fl_step_op_in_vm): the judge gives them N/A here */
		json_object_set_new(res, "not_run", json_string("the VM lab cannot run this op"));
		return STEP_NOT_RUN;
	case FL_OP_NR:
		break;
	}
	json_object_set_new(res, "error", json_string("unknown op"));
	return EINVAL;
}

/* Runs a step repeat times, stopping at the first error; records repeats_done. */
static int run_step(const struct fl_step *step, json_t *res)
{
	uint32_t done = 0;
	int e = 0;
	while (done < step->repeat && !(e = run_step_once(step, res)))
		done++;
	json_object_set_new(res, "repeats_done", json_integer(done));
	return e;
}

/* The step's keys as the scenario gives them (defaults applied), for steps.jsonl. */
static json_t *step_params(const struct fl_step *s)
{
	json_t *p = json_object();
	char hex[3 * FL_STEP_CDB_MAX + 1] = "";

	json_object_set_new(p, "op", json_string(fl_step_op_name(s->op)));
	if (s->lun >= 0)
		json_object_set_new(p, "lun", json_integer(s->lun));
	switch (s->op) {
	case FL_OP_READ:
	case FL_OP_WRITE:
	case FL_OP_DISCARD:
		json_object_set_new(p, "lba", json_integer((json_int_t)s->lba));
		json_object_set_new(p, "blocks", json_integer((json_int_t)s->blocks));
		if (s->op != FL_OP_DISCARD && !s->direct)
			json_object_set_new(p, "direct", json_false());
		if (s->op == FL_OP_WRITE && s->pattern != FL_STEP_PATTERN && !s->stamp)
			json_object_set_new(p, "pattern", json_integer(s->pattern));
		if (s->stamp)
			json_object_set_new(p, "stamp", json_true());
		break;
	case FL_OP_SG_RAW:
		for (unsigned i = 0; i < s->cdb_len; i++)
			snprintf(hex + (i ? 3 * i - 1 : 0), 4, "%s%02x", i ? " " : "", s->cdb[i]);
		json_object_set_new(p, "cdb", json_string(hex));
		if (s->data_in)
			json_object_set_new(p, "size", json_integer(s->data_in));
		else if (s->data_out)
			json_object_set_new(p, "data", json_integer(s->data_out));
		break;
	case FL_OP_WRITE_FILE:
		json_object_set_new(p, "size", json_integer((json_int_t)s->size));
		/* fall through */
	case FL_OP_FSYNC:
	case FL_OP_READ_FILE:
		if (s->path)
			json_object_set_new(p, "path", json_string(s->path));
		break;
	case FL_OP_MKFS:
	case FL_OP_MOUNT:
		if (s->fs)
			json_object_set_new(p, "fs", json_string(s->fs));
		break;
	case FL_OP_SHELL:
		if (s->command)
			json_object_set_new(p, "command", json_string(s->command));
		break;
	case FL_OP_CTL: {
		json_t *a = json_array();
		for (size_t i = 0; i < s->nargs; i++)
			json_array_append_new(a, json_string(s->args[i]));
		json_object_set_new(p, "args", a);
		break;
	}
	case FL_OP_SLEEP:
		json_object_set_new(p, "ms", json_integer(s->ms));
		break;
	default:
		break;
	}
	if (s->repeat > 1)
		json_object_set_new(p, "repeat", json_integer(s->repeat));
	if (s->background)
		json_object_set_new(p, "background", json_true());
	if (s->timeout_s != FL_STEP_TIMEOUT_S)
		json_object_set_new(p, "timeout_s", json_integer(s->timeout_s));
	return p;
}

/* A step running in its child process. */
struct running_step {
	pid_t pid;
	int fd; /* read end of the child's report pipe */
	double t0;
	double deadline; /* t0 + the step's timeout_s, over all its repeats */
	size_t i;
	const struct fl_step *step;
	uint64_t gen_base; /* a stamped write: its generations are gen_base + 1 .. + repeat */
};

/* Starts step i in a child that reports its result (and its end time) over a pipe. */
static int start_step(size_t i, const struct fl_step *step, struct running_step *rs)
{
	int pfd[2];
	if (pipe(pfd) < 0)
		return -errno;
	/* Not inherited by what a step runs: a daemon a shell step starts must
	 * not hold the report pipe open (the step would last to its deadline). */
	fcntl(pfd[0], F_SETFD, FD_CLOEXEC);
	fcntl(pfd[1], F_SETFD, FD_CLOEXEC);
	rs->t0 = now_s();
	rs->deadline = rs->t0 + step->timeout_s;
	rs->i = i;
	rs->step = step;
	rs->gen_base = book.next_gen;
	if (step->op == FL_OP_WRITE && step->stamp)
		book.next_gen += step->repeat;
	rs->pid = fork();
	if (rs->pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	if (rs->pid == 0) {
		/* A ctl step in a process group of its own: past its deadline it is
		 * killed with its program. */
		if (step->op == FL_OP_CTL)
			setpgid(0, 0);
		close(pfd[0]);
		book.next_gen = rs->gen_base; /* its own generations (reserved above) */
		json_t *res = json_object();
		int e = run_step(step, res);
		if (e != STEP_NOT_RUN)
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

/* Books a stamped write step's writes as its child reported them (see book). */
static void book_child_writes(const struct running_step *rs, json_t *res, bool timed_out)
{
	const struct fl_step *st = rs->step;
	int lun = step_lun(st);
	json_t *a = json_object_get(res, "stamped"), *w;
	size_t k;

	if (st->op != FL_OP_WRITE || !st->stamp)
		return;
	if (timed_out) { /* any of them may have been sent, and may land */
		for (uint32_t r = 1; r <= st->repeat; r++)
			fl_stamp_written(&book, lun, st->lba, st->blocks, rs->gen_base + r, false);
		return;
	}
	json_array_foreach(a, k, w)
	{
		json_int_t gen = json_integer_value(json_array_get(w, 0));

		if (gen > (json_int_t)rs->gen_base &&
		    gen <= (json_int_t)(rs->gen_base + st->repeat))
			fl_stamp_written(&book, lun, st->lba, st->blocks, (uint64_t)gen,
					 json_is_true(json_array_get(w, 1)));
	}
}

/*
 * Collects a started step by its deadline and writes its record. A child
 * past its deadline is left behind (it is stuck in the kernel), a ctl step's
 * killed, and the step's errno is "TIMEOUT".
 */
static void finish_step(FILE *out, struct running_step *rs)
{
	char buf[8192];
	size_t got = 0;
	bool timed_out = false;
	for (;;) {
		double left_s = rs->deadline - now_s();
		/* Past the deadline, one look without waiting: a background step
		 * collected late may have ended in time (its end time decides, below). */
		int left = left_s > 3600 ? 3600000 : left_s > 0 ? (int)(left_s * 1000) : 0;
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
	if (!timed_out) {
		waitpid(rs->pid, NULL, 0);
	} else if (rs->step->op == FL_OP_CTL) {
		/* A faultlun ctl still running at the deadline is killed (TIMEOUT). */
		kill(-rs->pid, SIGKILL);
		waitpid(rs->pid, NULL, 0);
	}
	/* The child's own end time counts (a background step is collected late);
	 * a child that ended past its deadline timed out all the same. */
	if (!timed_out && json_is_real(json_object_get(res, "t1"))) {
		t1 = json_real_value(json_object_get(res, "t1"));
		timed_out = t1 > rs->deadline;
	}
	if (timed_out && t1 > rs->deadline)
		t1 = rs->deadline; /* a step that timed out took its deadline */
	json_object_set_new(res, "step", json_integer((json_int_t)rs->i));
	json_object_set_new(res, "op", json_string(fl_step_op_name(rs->step->op)));
	json_object_set_new(res, "t0", json_real(rs->t0));
	json_object_set_new(res, "t1", json_real(t1));
	json_object_set_new(res, "elapsed_ms", json_real((t1 - rs->t0) * 1000));
	if (timed_out)
		json_object_set_new(res, "errno", json_string("TIMEOUT"));
	else if (json_object_get(res, "not_run"))
		json_object_set_new(res, "errno", json_string("NOT_RUN"));
	else if (json_is_integer(json_object_get(res, "errno_num")))
		json_object_set_new(res, "errno",
				    json_string(errno_name((int)json_integer_value(
					json_object_get(res, "errno_num")))));
	else
		json_object_set_new(res, "errno", json_string("CRASHED"));
	json_object_set_new(res, "params", step_params(rs->step));
	book_child_writes(rs, res, timed_out);
	char *s = json_dumps(res, JSON_COMPACT);
	fprintf(out, "%s\n", s);
	fprintf(stderr, "fl-vm-agent: step %zu %s -> %s in %.0f ms\n", rs->i,
		fl_step_op_name(rs->step->op), json_string_value(json_object_get(res, "errno")),
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
	fprintf(stderr, "usage: fl-vm-agent --scenario FILE [--path iscsi|tcmu|lio] --out DIR "
			"--dev LUN=DEV [--healthy DEV] [--watch NAME=PATH] [--ctl SOCKET] "
			"[--faultlun BIN]\n");
	exit(2);
}

/* Reads the agent's options: --scenario and --path into *scenario_path and *frontends, the
 * rest into the observers' globals; usage() on anything else. */
static void parse_args(int argc, char **argv, const char **scenario_path, unsigned *frontends)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v)
			usage();
		i++;
		if (!strcmp(a, "--scenario")) {
			*scenario_path = v;
		} else if (!strcmp(a, "--path")) {
			/* Validated for the path's front end, as the host did. */
			*frontends = !strcmp(v, "iscsi")  ? FL_FE_ISCSI
				     : !strcmp(v, "tcmu") ? FL_FE_TCMU
							  : FL_FE_ANY;
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
	if (!*scenario_path || !out_dir || !devs.n)
		usage();
}

/* Clock sync: the kernel log stamps this record with its own clock. */
static void clock_mark(void)
{
	int kfd = open("/dev/kmsg", O_WRONLY);
	if (kfd >= 0) {
		char m[96];
		int n = snprintf(m, sizeof(m), "faultlun-agent: clock mono_us=%lld\n",
				 (long long)(now_s() * 1e6));
		if (write(kfd, m, (size_t)n) < 0)
			perror("fl-vm-agent: /dev/kmsg");
		close(kfd);
	}
}

/* Ends the healthy-LUN probe: a probe stuck in the kernel is recorded as still stalled, not
 * joined. */
static void end_probe(pthread_t probe)
{
	pthread_mutex_lock(&probe_lock);
	double started = probe_started;
	pthread_mutex_unlock(&probe_lock);
	if (started > 0) {
		FILE *f = open_out("stall.jsonl");
		fprintf(f, "{\"t0\":%.6f,\"t1\":%.6f,\"ms\":%.3f,\"unfinished\":true}\n", started,
			now_s(), (now_s() - started) * 1000);
		fclose(f);
	} else {
		struct timespec dl;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += 3;
		pthread_timedjoin_np(probe, NULL, &dl);
	}
}

/* Runs the scenario's workload on the devices, with the observers beside it. */
int main(int argc, char **argv)
{
	const char *scenario_path = NULL;
	unsigned frontends = FL_FE_ANY;
	parse_args(argc, argv, &scenario_path, &frontends);
	struct fl_scenario *sc = NULL;
	struct fl_diags diags = {0};
	int rc = fl_scenario_load_file(scenario_path, frontends, &sc, &diags);
	if (rc < 0) {
		fl_diags_print(&diags, stderr);
		fprintf(stderr, "fl-vm-agent: %s: %s\n", scenario_path,
			rc == -EINVAL ? "not a valid scenario" : strerror(-rc));
		fl_diags_free(&diags);
		return 2;
	}
	fl_diags_free(&diags);
	const struct fl_check *check = fl_scenario_check(sc);
	size_t nsteps = check ? check->nsteps : 0;
	signal(SIGPIPE, SIG_IGN);
	clock_mark();
	pthread_t probe, sampler;
	bool have_probe = healthy_dev && *healthy_dev;
	if (have_probe)
		pthread_create(&probe, NULL, probe_thread, NULL);
	pthread_create(&sampler, NULL, sampler_thread, NULL);
	/* Let the observers take a baseline before the first step. */
	usleep(300000);
	FILE *out = open_out("steps.jsonl");
	/* Background steps run on while the next ones start; they are collected
	 * (each by its own deadline) after the last foreground step. */
	struct running_step bg[64];
	size_t nbg = 0;
	for (size_t i = 0; i < nsteps; i++) {
		struct running_step rs;
		if (start_step(i, &check->steps[i], &rs) < 0) {
			fprintf(stderr, "fl-vm-agent: cannot start step %zu\n", i);
			continue;
		}
		if (check->steps[i].background && nbg < 64)
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
	if (have_probe)
		end_probe(probe);
	fl_scenario_free(sc);
	return 0;
}
