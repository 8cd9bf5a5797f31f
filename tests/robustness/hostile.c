// SPDX-License-Identifier: MIT
/*
 * hostile.c - hostile initiators against `faultlun serve` (RFC 7143), while a
 * well-behaved client keeps working and the server's memory stays bounded.
 *
 * Run under `faultlun serve --login-timeout 2 --run 'hostile $PPID'` (the
 * target's pid, FAULTLUN_ADDR, FAULTLUN_PORT, FAULTLUN_URL in the
 * environment). Phases, each bounded in count and time:
 *   random     connections sending random bytes, before and after a login
 *   truncated  a BHS cut short, a data segment cut short, then close
 *   oversized  DataSegmentLength 16 MiB - 1 in login and full-feature phase
 *              (must be refused without the target allocating it)
 *   opcodes    every initiator opcode as the first PDU of the login phase,
 *              a Login Request in full-feature phase, a SCSI Command in a
 *              discovery session (11.12, 11.17: Reject or close, never a hang)
 *   flood      FLOOD connections at once, half of them logged in (sessions)
 *   halfopen   connections that never send a byte, closed by the login timeout
 *   dataout    WRITEs whose solicited Data-Out stops midway and the
 *              connection drops (the task must be freed)
 *   churn      CHURN sequential sessions closed without a logout
 *   overcap    OVERCAP silent connections, more than the target's cap of
 *              1024: no busy loop, and sessions work again once they go
 * Between phases and during them a client thread runs iscsi-readcapacity16
 * (libiscsi) in a loop: every run must succeed. VmHWM of the target must stay
 * under RSS_BOUND_MB and its VmRSS at the end within RSS_GROWTH_MB of the
 * start (after the first healthy session).
 */
#include "fl_byteorder.h"
#include "fl_harness.h"
#include "fl_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define FLOOD 400
#define HALFOPEN 100
#define CHURN 3000
#define OVERCAP 1100 /* more than the target's 1024-connection cap */
#define RSS_BOUND_MB 256
#define RSS_GROWTH_MB 48
/* A send to the target waits as long as the target takes (no bound of its own). */
#define PUT_MS (-1)

static struct sockaddr_in addr;
static const char *iqn, *url;
static pid_t server;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

/* xorshift64: reproducible randomness. */
static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

/* True while the target process exists. */
static bool server_alive(void)
{
	return kill(server, 0) == 0;
}

/*
 * Logs in (one operational-stage Login Request, T=1 to full feature phase);
 * returns the connection or -1. Normal sessions name the target; session
 * ids come from the per-connection counter.
 */
static int login(bool discovery, bool r2t)
{
	static uint32_t isid = 1;
	char keys[1024];
	int n = snprintf(keys, sizeof(keys),
			 "InitiatorName=iqn.2026-12.org.faultlun:hostile%c"
			 "SessionType=%s%c%s%s%c"
			 "HeaderDigest=None%cDataDigest=None%c"
			 "InitialR2T=%s%cImmediateData=%s%cMaxRecvDataSegmentLength=65536%c",
			 0, discovery ? "Discovery" : "Normal", 0,
			 discovery ? "" : "TargetName=", discovery ? "" : iqn, discovery ? 1 : 0, 0,
			 0, r2t ? "Yes" : "No", 0, r2t ? "No" : "Yes", 0, 0);
	/* A discovery login has no TargetName: drop the empty key (marked by \1). */
	char *mark = memchr(keys, 1, (size_t)n);
	if (mark) {
		memmove(mark, mark + 1, (size_t)(keys + n - mark - 1));
		n--;
	}
	int fd = fl_dial(&addr, NULL);
	if (fd < 0)
		return -1;
	if (!fl_put_login(fd, isid++, keys, (uint32_t)n, PUT_MS)) {
		fl_drop(fd);
		return -1;
	}
	uint8_t rsp[48];
	if (fl_get_pdu(fd, rsp, 5000) != 0x23 || rsp[36] != 0 || !(rsp[1] & 0x80)) {
		fl_drop(fd);
		return -1;
	}
	return fd;
}

/* The well-behaved client: iscsi-readcapacity16 in a loop until told to stop. */
static volatile int client_stop, client_pause;
static int client_ok, client_fail;
static void *client_main(void *arg)
{
	(void)arg;
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "iscsi-readcapacity16 '%s' >/dev/null 2>&1", url);
	while (!client_stop) {
		if (client_pause) { /* the target is full on purpose: refusal is right */
			usleep(20000);
			continue;
		}
		if (system(cmd) == 0)
			client_ok++;
		else
			client_fail++;
		usleep(50000);
	}
	return NULL;
}

/* One healthy run, synchronously: the target still serves. */
static bool healthy(void)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "iscsi-readcapacity16 '%s' >/dev/null 2>&1", url);
	return system(cmd) == 0;
}

/* Random bytes, with and without a login first. */
static void phase_random(void)
{
	uint8_t buf[4096];
	for (int i = 0; i < 300; i++) {
		int fd = i % 2 ? login(false, false) : fl_dial(&addr, NULL);
		if (fd < 0) {
			CHECK(0, "connection %d", i);
			continue;
		}
		size_t n = rnd() % sizeof(buf);
		for (size_t k = 0; k < n; k++)
			buf[k] = (uint8_t)rnd();
		fl_put(fd, buf, n, PUT_MS);
		if (i % 3 == 0) { /* our EOF: the target must close its side */
			shutdown(fd, SHUT_WR);
			CHECK(fl_closed_within(fd, 4000), "random bytes then EOF: closed (%d)", i);
		}
		fl_drop(fd);
	}
}

/* A BHS cut short, and a data segment cut short; the peer then goes away. */
static void phase_truncated(void)
{
	for (int i = 0; i < 60; i++) {
		int fd = i % 2 ? login(false, false) : fl_dial(&addr, NULL);
		if (fd < 0) {
			CHECK(0, "connection %d", i);
			continue;
		}
		uint8_t bhs[48] = {i % 2 ? 0x01 : 0x43, 0x80};
		fl_put_be24(bhs + 5, 4096);
		fl_put_be32(bhs + 20, 4096);
		bhs[32] = 0x28;
		size_t cut = i % 4 < 2 ? (size_t)(rnd() % 48) : 48;
		fl_put(fd, bhs, cut, PUT_MS);
		if (cut == 48) {
			uint8_t data[1000] = {0};
			fl_put(fd, data, rnd() % sizeof(data), PUT_MS);
		}
		if (i % 5 == 0) {
			shutdown(fd, SHUT_WR);
			CHECK(fl_closed_within(fd, 4000), "EOF mid-PDU closes (%d)", i);
		}
		fl_drop(fd);
	}
}

/* DataSegmentLength 16 MiB - 1, in the login phase and in full-feature phase. */
static void phase_oversized(void)
{
	long before = fl_proc_kib(server, "VmRSS");
	for (int i = 0; i < 40; i++) {
		int fd = i % 2 ? login(false, false) : fl_dial(&addr, NULL);
		if (fd < 0) {
			CHECK(0, "connection %d", i);
			continue;
		}
		uint8_t bhs[48] = {i % 2 ? 0x01 : 0x43, 0x80 | (i % 2 ? 0x40 : 0x07)};
		fl_put_be24(bhs + 5, 0xffffff);
		fl_put_be32(bhs + 20, 0xffffff);
		fl_put(fd, bhs, 48, PUT_MS);
		uint8_t data[4096] = {0};
		fl_put(fd, data, sizeof(data), PUT_MS);
		CHECK(fl_closed_within(fd, 5000),
		      "oversized DataSegmentLength closes the connection (%d)", i);
		fl_drop(fd);
	}
	long after = fl_proc_kib(server, "VmRSS");
	CHECK(after - before < 40 * 1024, "RSS grew %ld KiB over 40 oversized PDUs",
	      after - before);
}

/* The wrong opcode for the phase: Reject or close, within 5 s, never a hang. */
static void phase_opcodes(void)
{
	static const uint8_t ops[] = {0x00, 0x01, 0x02, 0x04, 0x05, 0x06, 0x10, 0x1c, 0x3f};
	uint8_t bhs[48], rsp[48];
	for (size_t i = 0; i < sizeof(ops); i++) {
		int fd = fl_dial(&addr, NULL);
		if (fd < 0)
			continue;
		memset(bhs, 0, sizeof(bhs));
		bhs[0] = ops[i];
		bhs[1] = 0x80;
		fl_put_pdu(fd, bhs, NULL, 0, PUT_MS);
		int r = fl_get_pdu(fd, rsp, 5000);
		CHECK(r == -2 || r == 0x3f || r == 0x23, "opcode 0x%02x in login phase: got %d",
		      ops[i], r);
		CHECK(fl_closed_within(fd, 5000), "opcode 0x%02x in login phase: connection closed",
		      ops[i]);
		fl_drop(fd);
	}
	/* A Login Request in full-feature phase. */
	int fd = login(false, false);
	CHECK(fd >= 0, "login");
	if (fd >= 0) {
		memset(bhs, 0, sizeof(bhs));
		bhs[0] = 0x43;
		bhs[1] = 0x87;
		bhs[8] = 0x80;
		fl_put_be32(bhs + 16, 77);
		fl_put_pdu(fd, bhs, NULL, 0, PUT_MS);
		int r = fl_get_pdu(fd, rsp, 5000);
		CHECK(r == -2 || r == 0x3f || r == 0x23, "Login in full-feature phase: got %d", r);
		fl_drop(fd);
	}
	/* A SCSI Command in a discovery session (RFC 7143 4.3: not allowed). */
	fd = login(true, false);
	CHECK(fd >= 0, "discovery login");
	if (fd >= 0) {
		memset(bhs, 0, sizeof(bhs));
		bhs[0] = 0x01;
		bhs[1] = 0x80 | 0x40;
		fl_put_be32(bhs + 16, 5);
		fl_put_be32(bhs + 20, 96);
		bhs[32] = 0x12;
		bhs[36] = 96;
		fl_put_pdu(fd, bhs, NULL, 0, PUT_MS);
		int r = fl_get_pdu(fd, rsp, 5000);
		CHECK(r == -2 || r == 0x3f,
		      "SCSI Command in a discovery session: got %d (want Reject or close)", r);
		fl_drop(fd);
	}
}

/* FLOOD connections at once, every other one a logged-in session. */
static void phase_flood(int *fds)
{
	int sessions = 0;
	for (int i = 0; i < FLOOD; i++) {
		fds[i] = i % 2 ? login(false, false) : fl_dial(&addr, NULL);
		if (fds[i] >= 0 && i % 2)
			sessions++;
	}
	CHECK(sessions == FLOOD / 2, "%d of %d flood sessions logged in", sessions, FLOOD / 2);
	CHECK(healthy(), "a healthy session during the flood");
	fprintf(stderr, "flood: %d connections, %d sessions, target VmRSS %ld KiB\n", FLOOD,
		sessions, fl_proc_kib(server, "VmRSS"));
	for (int i = 0; i < FLOOD; i++)
		if (fds[i] >= 0)
			fl_drop(fds[i]);
}

/* Connections that never send anything are closed by the login timeout (2 s). */
static void phase_halfopen(void)
{
	int fds[HALFOPEN];
	for (int i = 0; i < HALFOPEN; i++)
		fds[i] = fl_dial(&addr, NULL);
	CHECK(healthy(), "a healthy session while %d peers are silent", HALFOPEN);
	int closed = 0;
	for (int i = 0; i < HALFOPEN; i++) {
		if (fds[i] < 0)
			continue;
		if (fl_closed_within(fds[i], 8000))
			closed++;
		fl_drop(fds[i]);
	}
	CHECK(closed == HALFOPEN, "%d of %d silent connections closed by the login timeout", closed,
	      HALFOPEN);
}

/* WRITE(10) of 64 blocks with R2T; the solicited Data-Out stops midway and the peer drops. */
static void phase_dataout(void)
{
	static uint8_t data[32768];
	for (int i = 0; i < 60; i++) {
		int fd = login(false, true);
		if (fd < 0) {
			CHECK(0, "login %d", i);
			continue;
		}
		uint8_t bhs[48] = {0x01, 0x80 | 0x20}; /* F, W */
		fl_put_be32(bhs + 16, 9);		       /* ITT */
		fl_put_be32(bhs + 20, sizeof(data));	       /* EDTL */
		/* CmdSN 0: the login's CmdSN, which an immediate Login does not advance */
		bhs[32] = 0x2a;
		fl_put_be32(bhs + 34, (uint32_t)(rnd() % 1000));
		bhs[39] = 64;
		fl_put_pdu(fd, bhs, NULL, 0, PUT_MS);
		uint8_t r2t[48];
		int op = fl_get_pdu(fd, r2t, 5000);
		CHECK(op == 0x31, "R2T for the WRITE (%d)", op);
		if (op == 0x31) {
			uint8_t d[48] = {0x05};
			memcpy(d + 16, bhs + 16, 4);	       /* ITT */
			memcpy(d + 20, r2t + 20, 4);	       /* TTT */
			uint32_t len = 512 * (1 + rnd() % 16); /* less than asked */
			fl_put_pdu(fd, d, data, len, PUT_MS);
			if (i % 2) { /* and half a PDU more */
				fl_put_be24(d + 5, 8192);
				fl_put(fd, d, 48, PUT_MS);
				fl_put(fd, data, 100, PUT_MS);
			}
		}
		fl_drop(fd);
	}
}

/*
 * More silent connections than the target accepts: the ones over the cap are
 * refused, the target does not spin, and once they go a session works again.
 */
static void phase_overcap(void)
{
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_max < OVERCAP + 64) {
		fprintf(stderr, "overcap: fd limit %llu too low, phase skipped\n",
			(unsigned long long)rl.rlim_max);
		return;
	}
	rl.rlim_cur = OVERCAP + 64;
	setrlimit(RLIMIT_NOFILE, &rl);
	static int fds[OVERCAP];
	int open = 0;
	client_pause = 1;
	usleep(300000); /* let a client run in progress finish */
	for (int i = 0; i < OVERCAP; i++)
		if ((fds[i] = fl_dial(&addr, NULL)) >= 0)
			open++;
	long t0 = fl_proc_ticks(server);
	usleep(1000000);
	long t1 = fl_proc_ticks(server);
	CHECK(t1 - t0 < 50, "target used %ld ticks in 1 s with %d peers at its cap", t1 - t0, open);
	for (int i = 0; i < OVERCAP; i++)
		if (fds[i] >= 0)
			fl_drop(fds[i]);
	usleep(200000);
	client_pause = 0;
	CHECK(healthy(), "a healthy session once the peers over the cap are gone");
}

/* CHURN sessions one after another, each dropped without a logout. */
static void phase_churn(void)
{
	int ok = 0;
	for (int i = 0; i < CHURN; i++) {
		int fd = login(false, false);
		if (fd >= 0) {
			ok++;
			fl_drop(fd);
		}
	}
	CHECK(ok == CHURN, "%d of %d sessions logged in", ok, CHURN);
}

int main(int argc, char **argv)
{
	const char *a = getenv("FAULTLUN_ADDR"), *p = getenv("FAULTLUN_PORT");
	iqn = getenv("FAULTLUN_IQN");
	url = getenv("FAULTLUN_URL");
	if (argc < 2 || !a || !p || !iqn || !url) {
		fprintf(stderr, "usage: hostile SERVER_PID (under faultlun serve --run)\n");
		return 2;
	}
	if (system("command -v iscsi-readcapacity16 >/dev/null 2>&1") != 0) {
		fprintf(stderr, "iscsi-readcapacity16 not installed: skipped\n");
		return 77;
	}
	server = (pid_t)atoi(argv[1]);
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t)atoi(p));
	inet_pton(AF_INET, a, &addr.sin_addr);
	signal(SIGPIPE, SIG_IGN);
	alarm(240); /* a hang anywhere fails the test (SIGALRM) well inside ctest's limit */

	CHECK(healthy(), "a healthy session before anything");
	long base = fl_proc_kib(server, "VmRSS");
	CHECK(base > 0, "VmRSS of pid %d", (int)server);
	pthread_t th;
	pthread_create(&th, NULL, client_main, NULL);

	static int fds[FLOOD];
	struct {
		const char *name;
		void (*fn)(void);
	} phases[] = {{"random", phase_random},	      {"truncated", phase_truncated},
		      {"oversized", phase_oversized}, {"opcodes", phase_opcodes},
		      {"halfopen", phase_halfopen},   {"dataout", phase_dataout},
		      {"churn", phase_churn},	      {"overcap", phase_overcap}};
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		phases[i].fn();
		clock_gettime(CLOCK_MONOTONIC, &t1);
		CHECK(server_alive(), "target alive after %s", phases[i].name);
		CHECK(healthy(), "a healthy session after %s", phases[i].name);
		fprintf(stderr, "%-10s %5.1f s  VmRSS %ld KiB\n", phases[i].name,
			(double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
			fl_proc_kib(server, "VmRSS"));
		if (i == 3)
			phase_flood(fds);
	}
	client_stop = 1;
	pthread_join(th, NULL);
	sleep(1);
	long end = fl_proc_kib(server, "VmRSS"), hwm = fl_proc_kib(server, "VmHWM");
	fprintf(stderr,
		"client runs: %d ok, %d failed; VmRSS %ld KiB at start, %ld at end, VmHWM %ld\n",
		client_ok, client_fail, base, end, hwm);
	CHECK(client_fail == 0 && client_ok > 0, "the well-behaved client: %d failed runs",
	      client_fail);
	CHECK(hwm < RSS_BOUND_MB * 1024, "peak RSS %ld KiB over %d MiB", hwm, RSS_BOUND_MB);
	CHECK(end - base < RSS_GROWTH_MB * 1024, "RSS grew %ld KiB (bound %d MiB)", end - base,
	      RSS_GROWTH_MB);
	if (fl_failures)
		fprintf(stderr, "%d fl_failures\n", fl_failures);
	return fl_failures ? 1 : 0;
}
