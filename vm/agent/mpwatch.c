/* SPDX-License-Identifier: MIT */
/*
 * mpwatch.c - fl-vm-mpwatch, the VM lab's path observer under dm-multipath
 * (vm/agent.sh starts it once the map has all its paths).
 *
 *   fl-vm-mpwatch [--ports "ID=ADDR:PORT ..."]
 *
 * Writes to the kernel log (the timeline's clock), as "faultlun-agent: ..."
 * lines, and to stdout with the guest's uptime:
 *   "pathdev PORT DEV MAJ:MIN"   at a path's first sight
 *   "path PORT DEV DM_STATE CHECKER_STATE PRIO GROUP"   at each change of a path
 *   "dm MAP STATUS"              at each change of a multipath map's status
 * DM_STATE and GROUP (current, enabled, bypassed or none) come from the map's
 * status, read with the device-mapper ioctl every 0.1 s; CHECKER_STATE and
 * PRIO from multipathd, asked by a thread of its own every 0.2 s, since
 * multipathd answers only when it is not busy (1.4 s and more while it
 * reinstates a path) and a group current for less than that must not be
 * missed. PORT is the path's port id from --ports (its iSCSI connection's
 * address), else ADDR:PORT. Runs until /tmp/mp-stop exists, then asks
 * multipathd once more, samples a last time and creates /tmp/mp-watch-done.
 *
 * One long-running program, not a shell loop: under TCG each start of a
 * dynamically linked program (dmsetup, the multipathd client) costs 0.1-0.3 s
 * of emulated CPU, and a shell loop of them kept more than a core busy.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/dm-ioctl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_PATHS 64
#define MAX_TEXT 65536
#define PATHS_CMD "show paths raw format %d|%D|%t|%T|%p"

static const char *ports = "";
static pthread_mutex_t paths_lock = PTHREAD_MUTEX_INITIALIZER;
static char paths_text[MAX_TEXT]; /* multipathd's last answer */
static volatile int stopping;

/* A line to the kernel log and to stdout, as the agent's mark(). */
static void mark(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void mark(const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* one write(2) per record: /dev/kmsg refuses stdio's (dprintf fails on it) */
	char rec[1100];
	int n = snprintf(rec, sizeof(rec), "faultlun-agent: %s\n", line);
	int k = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (k >= 0) {
		if (write(k, rec, (size_t)n) < 0)
			perror("fl-vm-mpwatch: /dev/kmsg");
		close(k);
	}
	double up = 0;
	FILE *f = fopen("/proc/uptime", "r");
	if (f) {
		if (fscanf(f, "%lf", &up) != 1)
			up = 0;
		fclose(f);
	}
	printf("[%.2f] %s\n", up, line);
	fflush(stdout);
}

/* The first line of a sysfs file into buf (newline dropped); "" when unreadable. */
static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = 0;
	if (f) {
		if (!fgets(buf, (int)len, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
}

/* The port id of path dev (sdX): its iSCSI connection's address in --ports. */
static void port_of(const char *dev, char *out, size_t len)
{
	char link[PATH_MAX], real[PATH_MAX], p[PATH_MAX], addr[128], port[32];
	const char *s;

	snprintf(link, sizeof(link), "/sys/block/%s/device", dev);
	snprintf(out, len, ":");
	if (!realpath(link, real) || !(s = strstr(real, "/session")))
		return;
	int sess = atoi(s + 8);
	snprintf(p, sizeof(p), "/sys/class/iscsi_connection/connection%d:0/persistent_address",
		 sess);
	read_line(p, addr, sizeof(addr));
	snprintf(p, sizeof(p), "/sys/class/iscsi_connection/connection%d:0/persistent_port", sess);
	read_line(p, port, sizeof(port));
	char want[192];
	snprintf(want, sizeof(want), "%s:%s", addr, port);
	snprintf(out, len, "%s", want);
	/* "A=127.0.0.1:3260 B=127.0.0.2:36495" */
	for (const char *w = ports; *w;) {
		size_t n = strcspn(w, " ");
		const char *eq = memchr(w, '=', n);
		if (eq && (size_t)(w + n - eq - 1) == strlen(want) &&
		    !memcmp(eq + 1, want, strlen(want))) {
			snprintf(out, len, "%.*s", (int)(eq - w), w);
			return;
		}
		w += n;
		w += strspn(w, " ");
	}
}

/* One device-mapper ioctl on control with buf (size len); 0 or -1. */
static int dm_call(int control, unsigned long cmd, struct dm_ioctl *io, size_t len,
		   const char *name)
{
	memset(io, 0, len);
	io->version[0] = DM_VERSION_MAJOR;
	io->data_size = (__u32)len;
	io->data_start = sizeof(*io);
	if (name)
		snprintf(io->name, sizeof(io->name), "%s", name);
	if (ioctl(control, cmd, io) < 0 || (io->flags & DM_BUFFER_FULL_FLAG))
		return -1;
	return 0;
}

/*
 * The status of every multipath map as `dmsetup status --target multipath`
 * prints it ("NAME: START LENGTH multipath PARAMS", one line each) into out.
 */
static void dm_status(int control, char *out, size_t len)
{
	static union {
		struct dm_ioctl io;
		char b[MAX_TEXT];
	} list, st;
	size_t used = 0;

	out[0] = 0;
	if (dm_call(control, DM_LIST_DEVICES, &list.io, sizeof(list), NULL) < 0)
		return;
	char *base = list.b + list.io.data_start;
	if (list.io.data_start + sizeof(struct dm_name_list) > list.io.data_size)
		return;
	struct dm_name_list *n = (struct dm_name_list *)base;
	if (!n->dev)
		return; /* no device at all */
	for (;;) {
		if (dm_call(control, DM_TABLE_STATUS, &st.io, sizeof(st), n->name) == 0) {
			char *sb = st.b + st.io.data_start;
			size_t off = 0;
			for (__u32 t = 0; t < st.io.target_count; t++) {
				struct dm_target_spec *sp = (struct dm_target_spec *)(sb + off);
				if ((char *)(sp + 1) >= st.b + sizeof(st))
					break;
				const char *params = (const char *)(sp + 1);
				size_t pl = strnlen(params, (size_t)(st.b + sizeof(st) - params));
				while (pl && params[pl - 1] == ' ')
					pl--;
				if (!strncmp(sp->target_type, "multipath",
					     sizeof(sp->target_type)) &&
				    used < len) {
					int w = snprintf(out + used, len - used,
							 "%s: %llu %llu multipath %.*s\n", n->name,
							 (unsigned long long)sp->sector_start,
							 (unsigned long long)sp->length, (int)pl,
							 params);
					used += w > 0 ? (size_t)w : 0;
				}
				if (!sp->next || sp->next <= off)
					break;
				off = sp->next;
			}
		}
		if (!n->next)
			break;
		n = (struct dm_name_list *)((char *)n + n->next);
		if ((char *)n >= list.b + sizeof(list) - sizeof(*n))
			break;
	}
	if (used >= len)
		out[len - 1] = 0;
}

/* Reads exactly len bytes from fd within timeout_ms; 0 or -1. */
static int read_full(int fd, void *buf, size_t len, int timeout_ms)
{
	for (size_t got = 0; got < len;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int r = poll(&p, 1, timeout_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		ssize_t n = read(fd, (char *)buf + got, len - got);
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

/* multipathd's answer to cmd into out (len bytes); 0 or -1. */
static int mpathd_ask(const char *cmd, char *out, size_t len)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	const char *name = "/org/kernel/linux/storage/multipathd";
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), rc = -1;
	size_t n = strlen(cmd) + 1, rlen;

	if (fd < 0)
		return -1;
	/* an abstract socket: a NUL, then the name */
	memcpy(a.sun_path + 1, name, strlen(name));
	socklen_t al = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name));
	if (connect(fd, (struct sockaddr *)&a, al) == 0 && write(fd, &n, sizeof(n)) == sizeof(n) &&
	    write(fd, cmd, n) == (ssize_t)n && read_full(fd, &rlen, sizeof(rlen), 5000) == 0 &&
	    rlen < len && read_full(fd, out, rlen, 5000) == 0) {
		out[rlen] = 0;
		rc = strncmp(out, "fail\n", 5) ? 0 : -1;
	}
	close(fd);
	return rc;
}

/* Asks multipathd for the paths and keeps the answer (the last good one stays). */
static void poll_paths(void)
{
	static char buf[MAX_TEXT];

	if (mpathd_ask(PATHS_CMD, buf, sizeof(buf)) == 0) {
		pthread_mutex_lock(&paths_lock);
		memcpy(paths_text, buf, sizeof(paths_text));
		pthread_mutex_unlock(&paths_lock);
	}
}

/* The multipathd poller: every 0.2 s until the observer stops. */
static void *poller(void *arg)
{
	(void)arg;
	while (!stopping) {
		poll_paths();
		usleep(200000);
	}
	return NULL;
}

/* Path dev_t -> its group's state and its own state, from one map's status. */
struct dm_path {
	char devt[32];
	char group; /* A active (current), E enabled, D disabled (bypassed) */
	char state; /* A active, F failed */
};

/*
 * The count at field x of a status line of nf fields, as 0..nf: a count that
 * is negative, past the line or not a number walks no field backwards and no
 * loop past the line.
 */
static int count_at(char *const *f, int nf, int x)
{
	if (x < 0 || x >= nf)
		return 0;
	long v = strtol(f[x], NULL, 10);
	return v < 0 ? 0 : v > nf ? nf : (int)v;
}

/* Walks the multipath status of each line of dm (see dm-mpath.c multipath_status). */
static size_t parse_dm(const char *dm, struct dm_path *out, size_t max)
{
	size_t n = 0;
	char copy[MAX_TEXT];

	snprintf(copy, sizeof(copy), "%s", dm);
	for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *f[4096], *s2 = NULL;
		int nf = 0;
		for (char *w = strtok_r(line, " ", &s2); w && nf < 4096;
		     w = strtok_r(NULL, " ", &s2))
			f[nf++] = w;
		if (nf <= 5)
			continue;
		/* fields from 1: name: start length multipath, then #features
		 * features..., #hw_handler args..., #groups, next group, then per group */
		int i = 4;
#define NUM(x) count_at(f, nf, (x))
		i += NUM(i) + 1;
		i += NUM(i) + 1;
		int npg = NUM(i);
		i += 2;
		for (int g = 0; g < npg && i < nf; g++) {
			char st = f[i][0];
			i++;
			i += NUM(i) + 1;
			int np = NUM(i), npa = NUM(i + 1);
			i += 2;
			for (int k = 0; k < np && i + 1 < nf; k++) {
				if (n < max) {
					snprintf(out[n].devt, sizeof(out[n].devt), "%s", f[i]);
					out[n].group = st;
					out[n].state = f[i + 1][0];
					n++;
				}
				i += 3 + npa; /* dev_t, state, fail count, selector args */
			}
		}
#undef NUM
	}
	return n;
}

/* Trims blanks and turns inner spaces into '_' (one field of multipathd's raw format). */
static void field(char *s, char *out, size_t len)
{
	while (*s == ' ')
		s++;
	size_t n = strlen(s);
	while (n && s[n - 1] == ' ')
		n--;
	snprintf(out, len, "%.*s", (int)n, s);
	for (char *c = out; *c; c++)
		if (*c == ' ')
			*c = '_';
}

/*
 * The paths' lines "DEV DM_STATE CHECKER_STATE PRIO GROUP" from multipathd's
 * view (paths) joined with the maps' status (dm) by dev_t, into cur.
 */
static void path_lines(const char *dm, const char *paths, char *cur, size_t len)
{
	struct dm_path dp[MAX_PATHS];
	size_t ndp = parse_dm(dm, dp, MAX_PATHS), used = 0;
	char copy[MAX_TEXT];

	cur[0] = 0;
	snprintf(copy, sizeof(copy), "%s", paths);
	for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *f[5];
		int nf = 0;
		for (char *p = line; nf < 5;) {
			f[nf++] = p;
			p = strchr(p, '|');
			if (!p)
				break;
			*p++ = 0;
		}
		if (nf < 5)
			continue;
		char v[5][64];
		for (int k = 0; k < 5; k++)
			field(f[k], v[k], sizeof(v[k]));
		const struct dm_path *m = NULL;
		for (size_t k = 0; k < ndp; k++)
			if (!strcmp(dp[k].devt, v[1]))
				m = &dp[k];
		const char *d = !m		  ? ""
				: m->state == 'A' ? "active"
				: m->state == 'F' ? "failed"
						  : "";
		const char *g = !m		  ? "none"
				: m->group == 'A' ? "current"
				: m->group == 'D' ? "bypassed"
				: m->group == 'E' ? "enabled"
						  : "none";
		int w = snprintf(cur + used, len > used ? len - used : 0, "%s %s %s %s %s\n", v[0],
				 *d ? d : v[2], v[3], v[4], g);
		used += w > 0 ? (size_t)w : 0;
		if (used >= len) {
			cur[len - 1] = 0;
			break;
		}
	}
}

/* Is line (without its newline) one of the lines of text? */
static bool has_line(const char *text, const char *line, size_t n)
{
	for (const char *p = text; *p;) {
		size_t l = strcspn(p, "\n");
		if (l == n && !memcmp(p, line, n))
			return true;
		p += l;
		if (*p)
			p++;
	}
	return false;
}

/* One sample: marks what changed since prev_p (path lines) and prev_d (the maps' status). */
static void sample(int control, char *prev_p, char *prev_d)
{
	static char dm[MAX_TEXT], paths[MAX_TEXT], cur[MAX_TEXT], seen[MAX_TEXT];

	dm_status(control, dm, sizeof(dm));
	pthread_mutex_lock(&paths_lock);
	memcpy(paths, paths_text, sizeof(paths));
	pthread_mutex_unlock(&paths_lock);
	path_lines(dm, paths, cur, sizeof(cur));
	if (*cur && strcmp(cur, prev_p)) {
		for (const char *p = cur; *p;) {
			size_t l = strcspn(p, "\n");
			char line[512], dev[64], port[192], devt[32], sysdev[PATH_MAX];
			snprintf(line, sizeof(line), "%.*s", (int)l, p);
			p += l + (p[l] ? 1 : 0);
			if (has_line(prev_p, line, strlen(line)))
				continue;
			snprintf(dev, sizeof(dev), "%.*s", (int)strcspn(line, " "), line);
			port_of(dev, port, sizeof(port));
			if (!has_line(seen, dev, strlen(dev))) {
				size_t sl = strlen(seen);
				snprintf(seen + sl, sizeof(seen) - sl, "%s\n", dev);
				snprintf(sysdev, sizeof(sysdev), "/sys/block/%s/dev", dev);
				read_line(sysdev, devt, sizeof(devt));
				mark("pathdev %s %s %s", port, dev, devt);
			}
			mark("path %s %s", port, line);
		}
		memcpy(prev_p, cur, MAX_TEXT);
	}
	if (strcmp(dm, prev_d)) {
		for (const char *p = dm; *p;) {
			size_t l = strcspn(p, "\n");
			mark("dm %.*s", (int)l, p);
			p += l + (p[l] ? 1 : 0);
		}
		memcpy(prev_d, dm, MAX_TEXT);
	}
}

int main(int argc, char **argv)
{
	static char prev_p[MAX_TEXT], prev_d[MAX_TEXT];
	pthread_t th;

	for (int i = 1; i + 1 < argc; i += 2)
		if (!strcmp(argv[i], "--ports"))
			ports = argv[i + 1];
	int control = open("/dev/mapper/control", O_RDWR | O_CLOEXEC);
	if (control < 0) {
		perror("fl-vm-mpwatch: /dev/mapper/control");
		return 1;
	}
	if (pthread_create(&th, NULL, poller, NULL)) {
		fprintf(stderr, "fl-vm-mpwatch: cannot start the multipathd poller\n");
		return 1;
	}
	while (access("/tmp/mp-stop", F_OK) != 0) {
		sample(control, prev_p, prev_d);
		usleep(100000);
	}
	stopping = 1;
	pthread_join(th, NULL);
	/* One last look after the workload ended. */
	poll_paths();
	sample(control, prev_p, prev_d);
	close(control);
	int fd = open("/tmp/mp-watch-done", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	return 0;
}
