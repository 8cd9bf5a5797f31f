// SPDX-License-Identifier: MIT
/*
 * ctl_flood.c - a control-socket client that never reads its answers must
 * not stall the other clients, nor grow the target (docs/robustness.md,
 * "Control clients").
 *
 *   fl_ctl_flood FAULTLUN WORKDIR
 *
 * Starts `FAULTLUN serve -q --listen 127.0.0.1:0 --ctl WORKDIR/ctl.sock`.
 * Client A writes 100000 pings and reads nothing; meanwhile client B sends a
 * ping every 50 ms, each of which must be answered within 1 s. A must be
 * dropped (its socket closed by the target, a line in the target's log),
 * the target's VmHWM must stay under a bound, and B must still be answered
 * afterwards. Then B loads a crafted 3.9 MB scenario: refused within 2 s,
 * VmHWM still under the bound. Exit 0 pass, 1 fail, 77 skip.
 */
#include "fl_harness.h"
#include "fl_test.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PINGS 100000
#define B_BOUND_MS 1000

static pid_t server = -1;
static char sock_path[108], log_path[4096];

/* Connects to the control socket; -1 on failure. */
static int ctl_connect(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Sends a ping on fd and waits for its answer line; its latency in ms, or -1. */
static long ping(int fd, int timeout_ms)
{
	static const char req[] = "{\"cmd\": \"ping\"}\n";
	long t0 = fl_now_ms();
	char buf[256];
	size_t n = 0;

	if (send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) != (ssize_t)sizeof(req) - 1)
		return -1;
	while (fl_now_ms() - t0 < timeout_ms) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t r;

		if (poll(&p, 1, (int)(timeout_ms - (fl_now_ms() - t0))) <= 0)
			continue;
		r = recv(fd, buf + n, sizeof(buf) - 1 - n, 0);
		if (r <= 0)
			return -1;
		n += (size_t)r;
		buf[n] = 0;
		if (strchr(buf, '\n'))
			return strstr(buf, "\"ok\":true") || strstr(buf, "\"ok\": true")
				   ? fl_now_ms() - t0
				   : -1;
		if (n >= sizeof(buf) - 1)
			return -1;
	}
	return -1;
}

/* Starts the target; false if it does not answer a ping within 10 s. */
static bool server_start(const char *faultlun)
{
	long t0 = fl_now_ms();

	server = fork();
	if (server == 0) {
		int o = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int z = open("/dev/null", O_RDWR);

		dup2(z, 0);
		dup2(z, 1);
		dup2(o, 2);
		execl(faultlun, "faultlun", "serve", "-q", "--listen", "127.0.0.1:0", "--size",
		      "64MiB", "--ctl", sock_path, (char *)NULL);
		_exit(127);
	}
	while (fl_now_ms() - t0 < 10000) {
		int fd = ctl_connect();

		if (fd >= 0) {
			long ms = ping(fd, 2000);

			close(fd);
			if (ms >= 0)
				return true;
		}
		usleep(20000);
	}
	return false;
}

/* Stops the target (SIGTERM, then SIGKILL after 5 s). */
static void server_stop(void)
{
	fl_proc_stop(server, 5000, 10);
	server = -1;
}

/*
 * `load` of a crafted 3.9 MB scenario (integers in lists of 3601, over the
 * cap on JSON values) is refused within 2 s, and the target's VmHWM stays
 * under the bound (the tree of such a file took 190 MiB).
 */
static void load_crafted(int fd, const char *dir, long hwm_bound)
{
	char path[4096], req[4200], buf[4096];
	long t0, hwm;
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/integers.json", dir);
	f = fopen(path, "w");
	CHECK(f, "cannot write %s", path);
	if (!f)
		return;
	fputs("{\"faultlun\": 1, \"seed\": [[0]", f);
	for (long size = 0; size < 3900 * 1000;) {
		fputs(",[0", f);
		for (int i = 0; i < 400; i++)
			fputs(",1,2,3,4,5,6,7,8,9", f);
		fputs("]", f);
		size += 2 + 400 * 18 + 1;
	}
	fputs("]}\n", f);
	fclose(f);
	snprintf(req, sizeof(req), "{\"cmd\": \"load\", \"path\": \"%s\"}\n", path);
	t0 = fl_now_ms();
	CHECK(send(fd, req, strlen(req), MSG_NOSIGNAL) == (ssize_t)strlen(req), "send load");
	while (fl_now_ms() - t0 < 10000 && !memchr(buf, '\n', n)) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t r;

		if (poll(&p, 1, 100) <= 0)
			continue;
		r = recv(fd, buf + n, sizeof(buf) - 1 - n, 0);
		if (r <= 0 || (n += (size_t)r) >= sizeof(buf) - 1)
			break;
	}
	buf[n] = 0;
	hwm = fl_proc_kib(server, "VmHWM");
	printf("load of a 3.9 MB crafted file: answered in %ld ms, VmHWM %ld KiB: %.160s\n",
	       fl_now_ms() - t0, hwm, buf);
	CHECK(strstr(buf, "JSON values"), "load: no error about the JSON values: %.300s", buf);
	CHECK(fl_now_ms() - t0 < 2000, "load answered after %ld ms", fl_now_ms() - t0);
	CHECK(hwm > 0 && hwm < hwm_bound, "target VmHWM %ld KiB after load (bound %ld KiB)", hwm,
	      hwm_bound);
}

int main(int argc, char **argv)
{
	static const char req[] = "{\"cmd\": \"ping\"}\n";
	size_t total = (sizeof(req) - 1) * PINGS, sent = 0;
	long worst = 0, t0, hwm, hwm_bound = FL_SANITIZED ? 256 * 1024 : 48 * 1024;
	bool a_dropped = false;
	int a, b, pings_b = 0, late = 0;
	char *flood;

	if (argc != 3) {
		fprintf(stderr, "usage: fl_ctl_flood FAULTLUN WORKDIR\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if (mkdir(argv[2], 0755) && errno != EEXIST) {
		fprintf(stderr, "cannot make %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	snprintf(sock_path, sizeof(sock_path), "/tmp/fl-ctl-flood-%d.sock", (int)getpid());
	snprintf(log_path, sizeof(log_path), "%s/serve.log", argv[2]);
	if (!server_start(argv[1])) {
		fprintf(stderr, "the target did not answer on %s; its log:\n", sock_path);
		server_stop();
		return 1;
	}
	flood = malloc(total);
	for (size_t i = 0; flood && i < PINGS; i++)
		memcpy(flood + i * (sizeof(req) - 1), req, sizeof(req) - 1);
	a = ctl_connect();
	b = ctl_connect();
	CHECK(flood && a >= 0 && b >= 0, "cannot connect two clients");
	if (!flood || a < 0 || b < 0)
		goto out;
	fcntl(a, F_SETFL, O_NONBLOCK);
	t0 = fl_now_ms();
	/* A writes what the socket takes, never reads; B pings every 50 ms */
	while (fl_now_ms() - t0 < 20000 && !a_dropped) {
		long ms;

		while (sent < total) {
			ssize_t w = send(a, flood + sent, total - sent, MSG_NOSIGNAL);

			if (w > 0) {
				sent += (size_t)w;
				continue;
			}
			if (w < 0 && (errno == EPIPE || errno == ECONNRESET))
				a_dropped = true;
			break;
		}
		ms = ping(b, 3000);
		pings_b++;
		if (ms < 0 || ms > B_BOUND_MS)
			late++;
		if (ms < 0)
			ms = 3000;
		if (ms > worst)
			worst = ms;
		if (sent == total && !a_dropped) {
			/* all sent: the answers pile up; A must be closed by the target */
			struct pollfd p = {.fd = a, .events = POLLIN};
			char sink[65536];

			while (!a_dropped && fl_now_ms() - t0 < 20000 && poll(&p, 1, 50) >= 0) {
				ssize_t r;

				if (!(p.revents & (POLLIN | POLLHUP | POLLERR)))
					break;
				r = recv(a, sink, sizeof(sink), 0);
				if (r == 0 || (r < 0 && errno == ECONNRESET))
					a_dropped = true;
				else if (r < 0)
					break;
			}
		}
		usleep(50000);
	}
	hwm = fl_proc_kib(server, "VmHWM");
	printf("A sent %zu of %zu bytes (%zu pings) in %ld ms; B: %d pings, worst %ld ms, %d over "
	       "%d ms; target VmHWM %ld KiB\n",
	       sent, total, sent / (sizeof(req) - 1), fl_now_ms() - t0, pings_b, worst, late,
	       B_BOUND_MS, hwm);
	CHECK(late == 0, "%d of B's pings took over %d ms (worst %ld ms)", late, B_BOUND_MS, worst);
	CHECK(a_dropped, "client A, which never reads, was not dropped");
	CHECK(fl_file_has(log_path, "dropping a client that leaves its answers unread"),
	      "the target's log does not say it dropped A");
	CHECK(hwm > 0 && hwm < hwm_bound, "target VmHWM %ld KiB (bound %ld KiB)", hwm, hwm_bound);
	CHECK(ping(b, 1000) >= 0, "B is not answered after the flood");
	load_crafted(b, argv[2], hwm_bound);
out:
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	free(flood);
	server_stop();
	unlink(sock_path);
	return fl_test_exit("ctl_flood");
}
