// SPDX-License-Identifier: MIT
/*
 * limits.c - resource limits of `faultlun serve` under hostile peers, one mode
 * per limit, each bounded in time and on 127.0.0.1 only.
 *
 *   fl_limits MODE FAULTLUN [SERVE-OPTIONS...]
 *
 * The program starts `FAULTLUN serve -q --listen 127.0.0.1:0 SERVE-OPTIONS`
 * itself (so it can give the target a small RLIMIT_NOFILE and read its log),
 * drives hand-built PDUs (RFC 7143) at it and stops it. Modes:
 *   emfile    the target runs with 64 (soft) / 128 (hard) open files; 200
 *             peers hold connections: its CPU time and log stay small, and
 *             once they go a new session logs in
 *   emfile-ctl the same at 64 files with 32 control-socket clients, so that
 *             accept itself fails (EMFILE) below the connection cap
 *   pinned    8 logged-in peers send 32 MiB READs and never read, one peer
 *             floods NOP-Outs and never reads: VmHWM of the target stays
 *             under a bound, and a healthy peer is still answered
 *   timeouts  half a PDU then silence, and a silent logged-in peer, are
 *             closed (PDU receive timeout, NOP-In ping timeout); a peer that
 *             answers the pings stays
 *   lockout   1100 sessions without CHAP from one address: a new initiator
 *             still logs in while they hold on
 *   nexus     persistent-reservation identity of an initiator port survives
 *             4100 other ports, and two long names sharing their first 255
 *             bytes are two I_T nexuses
 *   logesc    InitiatorName, TargetName and CHAP_N with newlines never start a
 *             line of their own in the log
 *   chap      failed CHAP logins are throttled per address; a throttled
 *             name still gets in with the right secret; a base64 (0b)
 *             CHAP_R is accepted; --chap-secret-file works
 *   lockout-write  896 sessions without CHAP from 127.0.0.1 and 127.0.0.2,
 *             each holding a WRITE that waits for its Data-Out and
 *             answering every NOP-In: a newcomer from 127.0.0.3 gets in
 *             within 1 s
 *   dataout   (with --pdu-timeout 1) a WRITE whose R2T is never answered
 *             closes its connection after about 1 s, answering pings or not
 *   chap-budget  names and 50 source addresses rotating for 2 s: the checked
 *             guesses over the whole target stay under the budget
 *   chap-victim  an attacker hammering a victim's InitiatorName from
 *             127.0.0.1: the victim, from 127.0.0.2 with the right secret,
 *             gets in 10 times of 10
 * Exit 0 pass, 1 fail, 77 skip (a prerequisite is missing).
 */
#include "fl_harness.h"
#include "fl_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define IQN "iqn.2026-12.org.faultlun:limits"
/* A send to the target gives up when the target reads nothing for this long. */
#define PUT_MS 5000

static struct sockaddr_in addr;
static const char *src_ip; /* the source address of fl_dial(&addr, src_ip), NULL: any */
static pid_t server = -1;
static char logpath[256];

/*
 * Starts the target with these options and an RLIMIT_NOFILE of soft/hard
 * (0: unchanged); waits for its "listening on" line. Returns false on failure.
 */
static bool server_start(const char *fl, char **opts, int nopts, rlim_t soft, rlim_t hard)
{
	snprintf(logpath, sizeof(logpath), "/tmp/fl_limits.%d.log", (int)getpid());
	int lfd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (lfd < 0)
		return false;
	char *argv[64];
	int n = 0;
	argv[n++] = (char *)fl;
	argv[n++] = "serve";
	argv[n++] = "-q";
	argv[n++] = "--listen";
	argv[n++] = "127.0.0.1:0";
	argv[n++] = "--iqn";
	argv[n++] = IQN;
	argv[n++] = "--size";
	argv[n++] = "64MiB";
	for (int i = 0; i < nopts && n < 62; i++)
		argv[n++] = opts[i];
	argv[n] = NULL;
	server = fork();
	if (server < 0)
		return false;
	if (server == 0) {
		if (soft) {
			struct rlimit rl = {.rlim_cur = soft, .rlim_max = hard};
			if (setrlimit(RLIMIT_NOFILE, &rl))
				_exit(126);
		}
		dup2(lfd, 2);
		dup2(lfd, 1);
		execv(fl, argv);
		_exit(127);
	}
	close(lfd);
	for (long t0 = fl_now_ms(); fl_now_ms() - t0 < 10000;) {
		FILE *f = fopen(logpath, "r");
		char line[512];
		while (f && fgets(line, sizeof(line), f)) {
			char *p = strstr(line, "listening on 127.0.0.1:");
			if (p) {
				addr.sin_family = AF_INET;
				addr.sin_port =
				    htons((uint16_t)atoi(p + strlen("listening on 127.0.0.1:")));
				inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
				fclose(f);
				return true;
			}
		}
		if (f)
			fclose(f);
		if (waitpid(server, NULL, WNOHANG) == server) {
			server = -1;
			return false;
		}
		usleep(20000);
	}
	return false;
}

/* Stops the target (SIGTERM, then SIGKILL after 10 s); prints its log tail on failure. */
static void server_stop(void)
{
	if (server > 0) {
		fl_proc_stop(server, 10000, 20);
		server = -1;
	}
	/* the Sanitize build: a report of the target fails the test */
	CHECK(!fl_file_has(logpath, "AddressSanitizer") && !fl_file_has(logpath, "LeakSanitizer") &&
		  !fl_file_has(logpath, "runtime error:"),
	      "a sanitizer report in the target's log");
	if (fl_failures) {
		char cmd[320];
		fprintf(stderr, "--- last lines of the target's log:\n");
		snprintf(cmd, sizeof(cmd), "tail -c 3000 '%s' >&2", logpath);
		if (system(cmd))
			fprintf(stderr, "(no log)\n");
	}
	unlink(logpath);
}

/*
 * True if the target has closed fd already (an EOF or reset is pending),
 * without waiting; PDUs the target sent before (a NOP-In ping, say) are read
 * and discarded on the way.
 */
static bool is_closed(int fd)
{
	char buf[4096];
	for (;;) {
		ssize_t r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r > 0)
			continue;
		return r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
	}
}

static void be24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static void be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * Logs in as initiator `name` with this ISID (one operational-stage Login
 * Request, T=1 to full feature phase) to target `target` (NULL: ours).
 * Returns the connection, or -1 (*status gets the login status, 0xffff when
 * there was no Login Response).
 */
static int login_as(const char *name, uint32_t isid, const char *target, int *status)
{
	char keys[4096];
	int n = snprintf(keys, sizeof(keys),
			 "InitiatorName=%s%cSessionType=Normal%cTargetName=%s%c"
			 "HeaderDigest=None%cDataDigest=None%cInitialR2T=Yes%c"
			 "ImmediateData=Yes%cMaxRecvDataSegmentLength=65536%c",
			 name, 0, 0, target ? target : IQN, 0, 0, 0, 0, 0, 0);
	if (status)
		*status = 0xffff;
	int fd = fl_dial(&addr, src_ip);
	if (fd < 0)
		return -1;
	if (!fl_put_login(fd, isid, keys, (uint32_t)n, PUT_MS)) {
		fl_drop(fd);
		return -1;
	}
	uint8_t rsp[48];
	int op = fl_get_pdu(fd, rsp, 5000);
	if (op == 0x23 && status)
		*status = rsp[36] << 8 | rsp[37];
	if (op != 0x23 || rsp[36] != 0 || !(rsp[1] & 0x80)) {
		fl_drop(fd);
		return -1;
	}
	return fd;
}

/* Sends a NOP-Out ping and waits for its NOP-In (answering target pings meanwhile). */
static bool ping(int fd, uint32_t itt, uint32_t cmdsn, int ms)
{
	uint8_t bhs[48] = {0x40 | 0x00, 0x80};
	be32(bhs + 16, itt);
	be32(bhs + 20, 0xffffffff);
	be32(bhs + 24, cmdsn);
	bhs[0] |= 0x40; /* immediate */
	if (!fl_put_pdu(fd, bhs, "ping", 4, PUT_MS))
		return false;
	long t0 = fl_now_ms();
	while (fl_now_ms() - t0 < ms) {
		uint8_t r[48];
		int op = fl_get_pdu(fd, r, (int)(ms - (fl_now_ms() - t0)));
		if (op < 0)
			return false;
		if (op == 0x20 && get32(r + 16) == itt)
			return true;
	}
	return false;
}

/* ---- emfile ---------------------------------------------------------------------------- */

#define EMFILE_PEERS 200

/* 200 peers against a target limited to 64/128 open files. */
static int mode_emfile(const char *fl, char **opts, int nopts)
{
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_max < EMFILE_PEERS + 64) {
		fprintf(stderr, "SKIP: our hard limit of open files is %llu\n",
			(unsigned long long)rl.rlim_max);
		return 77;
	}
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	if (!server_start(fl, opts, nopts, 64, 128)) {
		fprintf(stderr, "FAIL: the target did not start\n");
		fl_failures++;
		server_stop();
		return 1;
	}
	static int fds[EMFILE_PEERS];
	int open_fds = 0;
	for (int i = 0; i < EMFILE_PEERS; i++)
		if ((fds[i] = fl_dial(&addr, src_ip)) >= 0)
			open_fds++;
	usleep(500000);
	long t0 = fl_proc_ticks(server), l0 = fl_file_size(logpath);
	usleep(1500000);
	long t1 = fl_proc_ticks(server), l1 = fl_file_size(logpath);
	int held = 0;
	for (int i = 0; i < EMFILE_PEERS; i++)
		if (fds[i] >= 0 && !is_closed(fds[i]))
			held++;
	fprintf(stderr,
		"emfile: %d peers connected, %d held by the target; %ld ticks and %ld log bytes "
		"in 1.5 s\n",
		open_fds, held, t1 - t0, l1 - l0);
	CHECK(t1 - t0 <= 15, "the target used %ld ticks in 1.5 s at its file limit", t1 - t0);
	CHECK(l1 - l0 < 8192, "the log grew by %ld bytes in 1.5 s", l1 - l0);
	/* the soft limit was raised to the hard one (128): more than 64 peers fit */
	CHECK(held > 64 && held < 128, "%d connections held", held);
	for (int i = 0; i < EMFILE_PEERS; i++)
		if (fds[i] >= 0)
			fl_drop(fds[i]);
	int fd = -1;
	for (long s = fl_now_ms(); fd < 0 && fl_now_ms() - s < 3000;) {
		fd = login_as("iqn.2026-12.org.faultlun:after", 1, NULL, NULL);
		if (fd < 0)
			usleep(100000);
	}
	CHECK(fd >= 0 && ping(fd, 7, 0, 2000), "a session once the peers are gone");
	if (fd >= 0)
		fl_drop(fd);
	server_stop();
	return fl_failures ? 1 : 0;
}

/*
 * The target at 64 open files with its control socket full (32 clients):
 * accept itself runs out of descriptors (EMFILE) below the connection cap.
 * The peers it cannot take are closed (the reserve descriptor), it does not
 * spin, its log stays small, and a session works once they go.
 */
static int mode_emfile_ctl(const char *fl, char **opts, int nopts)
{
	char sock[108], *o[] = {"--ctl", sock};
	snprintf(sock, sizeof(sock), "/tmp/fl_limits.%d.ctl", (int)getpid());
	(void)opts;
	(void)nopts;
	if (!server_start(fl, o, 2, 64, 64)) {
		fprintf(stderr, "FAIL: the target did not start\n");
		fl_failures++;
		server_stop();
		return 1;
	}
	int ctl[32], nctl = 0;
	for (int i = 0; i < 32; i++) {
		struct sockaddr_un un = {.sun_family = AF_UNIX};
		snprintf(un.sun_path, sizeof(un.sun_path), "%s", sock);
		ctl[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (ctl[i] >= 0 && !connect(ctl[i], (struct sockaddr *)&un, sizeof(un)))
			nctl++;
	}
	usleep(200000);
	static int fds[100];
	for (int i = 0; i < 100; i++)
		fds[i] = fl_dial(&addr, src_ip);
	usleep(500000);
	long t0 = fl_proc_ticks(server), l0 = fl_file_size(logpath);
	usleep(1500000);
	long t1 = fl_proc_ticks(server), l1 = fl_file_size(logpath);
	int held = 0, closed = 0;
	for (int i = 0; i < 100; i++) {
		if (fds[i] < 0)
			continue;
		if (is_closed(fds[i]))
			closed++;
		else
			held++;
	}
	fprintf(stderr,
		"emfile-ctl: %d control clients; of 100 peers %d held, %d closed; %ld ticks and "
		"%ld log bytes in 1.5 s\n",
		nctl, held, closed, t1 - t0, l1 - l0);
	CHECK(fl_file_has(logpath, "Too many open files"),
	      "accept ran out of descriptors (the case tested)");
	CHECK(t1 - t0 <= 15, "the target used %ld ticks in 1.5 s out of descriptors", t1 - t0);
	CHECK(l1 - l0 < 8192, "the log grew by %ld bytes in 1.5 s", l1 - l0);
	CHECK(closed > 0, "peers the target could not take were closed, not left hanging");
	for (int i = 0; i < 100; i++)
		if (fds[i] >= 0)
			fl_drop(fds[i]);
	for (int i = 0; i < 32; i++)
		if (ctl[i] >= 0)
			close(ctl[i]);
	int fd = -1;
	for (long s = fl_now_ms(); fd < 0 && fl_now_ms() - s < 3000;) {
		fd = login_as("iqn.2026-12.org.faultlun:after", 1, NULL, NULL);
		if (fd < 0)
			usleep(150000);
	}
	CHECK(fd >= 0 && ping(fd, 7, 0, 2000), "a session once the peers are gone");
	if (fd >= 0)
		fl_drop(fd);
	server_stop();
	unlink(sock);
	return fl_failures ? 1 : 0;
}

/* ---- pinned ----------------------------------------------------------------------------- */

#define PIN_PEERS 8
#define PIN_READS 16
/*
 * The bound on the target's peak memory above its size before the attack:
 * the process-wide budget of unsent responses (--max-queued-mem, 256 MiB by
 * default), plus one 32 MiB READ a peer past it (a connection with no unsent
 * answer is read on, so that a TMF for a command held by the engine is seen:
 * its READ's buffer exists before its answer counts), plus 16 MiB of
 * allocator slack; under AddressSanitizer also the shadow of those buffers
 * (an eighth of them).
 */
#define PIN_BASE_MB (256 + PIN_PEERS * 32 + 16)
#if defined(__SANITIZE_ADDRESS__)
#define PIN_BOUND_MB (PIN_BASE_MB + PIN_BASE_MB / 8)
#else
#define PIN_BOUND_MB PIN_BASE_MB
#endif

/* Sends READ(10)s of 32 MiB that the peer will never read the answers of. */
static bool send_big_reads(int fd, int n)
{
	for (int i = 0; i < n; i++) {
		uint8_t bhs[48] = {0x01, 0x80 | 0x40}; /* F, R */
		be32(bhs + 16, 0x100 + (uint32_t)i);   /* ITT */
		be32(bhs + 20, 32u << 20);	       /* EDTL */
		be32(bhs + 24, (uint32_t)i);	       /* CmdSN */
		bhs[32] = 0x28;
		be32(bhs + 34, (uint32_t)(i % 2) * 65536);
		bhs[39] = 0x00;
		bhs[40] = 0x00; /* 65536 blocks: transfer length 0 means 0 for READ(10) */
		bhs[39] = 0xff;
		bhs[40] = 0xff; /* 65535 blocks */
		if (!fl_put_pdu(fd, bhs, NULL, 0, PUT_MS))
			return false;
	}
	return true;
}

/* Peers that never read: 32 MiB READs and a NOP-Out flood; memory stays bounded. */
static int mode_pinned(const char *fl, char **opts, int nopts)
{
	if (!server_start(fl, opts, nopts, 0, 0)) {
		fprintf(stderr, "FAIL: the target did not start\n");
		fl_failures++;
		server_stop();
		return 1;
	}
	int healthy = login_as("iqn.2026-12.org.faultlun:healthy", 1, NULL, NULL);
	CHECK(healthy >= 0 && ping(healthy, 1, 0, 2000), "a healthy session");
	long base = fl_proc_kib(server, "VmRSS");
	int fds[PIN_PEERS + 1];
	for (int i = 0; i < PIN_PEERS + 1; i++) {
		char name[96];
		snprintf(name, sizeof(name), "iqn.2026-12.org.faultlun:pin%d", i);
		fds[i] = login_as(name, 100 + (uint32_t)i, NULL, NULL);
		CHECK(fds[i] >= 0, "peer %d logged in", i);
		if (fds[i] >= 0) {
			int small = 4096;
			setsockopt(fds[i], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
			fcntl(fds[i], F_SETFL, O_NONBLOCK);
		}
	}
	for (int i = 0; i < PIN_PEERS; i++)
		if (fds[i] >= 0)
			send_big_reads(fds[i], PIN_READS);
	/* The NOP-Out flood: 64 KiB pings, as many as the target reads in 2 s. */
	static uint8_t nopdata[65536];
	long sent_nop = 0, hwm_seen = 0;
	int nfd = fds[PIN_PEERS];
	long t0 = fl_now_ms();
	uint32_t sn = 0;
	bool stalled = false;
	while (fl_now_ms() - t0 < 4000) {
		if (nfd >= 0 && !stalled) {
			uint8_t bhs[48] = {0x40 | 0x00, 0x80};
			bhs[0] = 0x40 | 0x00; /* immediate NOP-Out */
			be32(bhs + 16, 0x5000 + sn);
			be32(bhs + 20, 0xffffffff);
			be32(bhs + 24, sn);
			be24(bhs + 5, sizeof(nopdata));
			/* non-blocking: a target that stopped reading stops the flood */
			struct pollfd pf = {.fd = nfd, .events = POLLOUT};
			if (poll(&pf, 1, 100) == 1) {
				if (fl_put(nfd, bhs, 48, PUT_MS) &&
				    fl_put(nfd, nopdata, sizeof(nopdata), PUT_MS))
					sent_nop++;
				else
					stalled = true;
			}
		} else {
			usleep(50000);
		}
		long hwm = fl_proc_kib(server, "VmHWM");
		if (hwm > hwm_seen)
			hwm_seen = hwm;
		if (hwm - base > PIN_BOUND_MB * 1024L) /* stop before the machine suffers */
			break;
	}
	bool answered = healthy >= 0 && ping(healthy, 2, 0, 3000);
	long rss = fl_proc_kib(server, "VmRSS");
	fprintf(stderr,
		"pinned: VmRSS %ld KiB before, %ld KiB under attack, VmHWM %ld KiB; %ld NOP-Outs "
		"of 64 KiB sent\n",
		base, rss, hwm_seen, sent_nop);
	CHECK(hwm_seen - base < PIN_BOUND_MB * 1024L,
	      "VmHWM %ld KiB, %ld KiB over the %ld before: over %d MiB", hwm_seen, hwm_seen - base,
	      base, PIN_BOUND_MB);
	CHECK(answered, "the healthy session is answered during the attack");
	for (int i = 0; i < PIN_PEERS + 1; i++)
		if (fds[i] >= 0)
			fl_drop(fds[i]);
	if (healthy >= 0)
		fl_drop(healthy);
	server_stop();
	return fl_failures ? 1 : 0;
}

/* ---- timeouts --------------------------------------------------------------------------- */

/*
 * With --pdu-timeout 1 --nopin-interval 1 --nopin-timeout 1: half a PDU is
 * closed, a silent session is pinged then closed, a peer answering stays.
 */
static int mode_timeouts(const char *fl, char **opts, int nopts)
{
	if (!server_start(fl, opts, nopts, 0, 0)) {
		fprintf(stderr, "FAIL: the target did not start\n");
		fl_failures++;
		server_stop();
		return 1;
	}
	int half = login_as("iqn.2026-12.org.faultlun:half", 1, NULL, NULL);
	int slow = login_as("iqn.2026-12.org.faultlun:slow", 2, NULL, NULL);
	int silent = login_as("iqn.2026-12.org.faultlun:silent", 3, NULL, NULL);
	int good = login_as("iqn.2026-12.org.faultlun:good", 4, NULL, NULL);
	CHECK(half >= 0 && slow >= 0 && silent >= 0 && good >= 0, "four sessions");
	if (half < 0 || slow < 0 || silent < 0 || good < 0) {
		server_stop();
		return 1;
	}
	uint8_t nop[48] = {0x40, 0x80};
	be32(nop + 16, 0x77);
	be32(nop + 20, 0xffffffff);
	fl_put(half, nop, 20, PUT_MS); /* 20 bytes of a BHS, then nothing */
	long t0 = fl_now_ms(), half_closed = -1, slow_closed = -1, silent_closed = -1;
	long good_closed = -1;
	int slow_sent = 0, pings_to_silent = 0, pings_answered = 0;
	while (fl_now_ms() - t0 < 6000) {
		long el = fl_now_ms() - t0;
		/* slowloris: one byte of a NOP-Out every 250 ms, while it is open */
		if (slow_closed < 0 && el / 250 >= slow_sent && slow_sent < 48) {
			if (!fl_put(slow, nop + slow_sent, 1, PUT_MS) || is_closed(slow))
				slow_closed = el;
			slow_sent++;
		}
		if (half_closed < 0 && is_closed(half))
			half_closed = el;
		if (slow_closed < 0 && is_closed(slow))
			slow_closed = el;
		/* the silent peer reads what comes (to see the pings) but never answers */
		struct pollfd pf[2] = {{.fd = silent, .events = POLLIN},
				       {.fd = good, .events = POLLIN}};
		poll(pf, 2, 50);
		if (silent_closed < 0 && pf[0].revents) {
			uint8_t r[48];
			int op = fl_get_pdu(silent, r, 1000);
			if (op == 0x20)
				pings_to_silent++;
			else if (op == -2)
				silent_closed = fl_now_ms() - t0;
		}
		if (good_closed < 0 && pf[1].revents) {
			uint8_t r[48];
			int op = fl_get_pdu(good, r, 1000);
			if (op == -2) {
				good_closed = fl_now_ms() - t0;
			} else if (op == 0x20 && get32(r + 20) != 0xffffffff) {
				/* a target ping: answer it (RFC 7143 11.18.2) */
				uint8_t a[48] = {0x40, 0x80};
				memcpy(a + 8, r + 8, 8);
				be32(a + 16, 0xffffffff);
				memcpy(a + 20, r + 20, 4);
				memcpy(a + 24, r + 28, 4); /* CmdSN = ExpCmdSN */
				fl_put_pdu(good, a, NULL, 0, PUT_MS);
				pings_answered++;
			}
		}
	}
	fprintf(stderr,
		"timeouts: half a PDU closed after %ld ms, slowloris after %ld ms, silent session "
		"after %ld ms (%d pings); answering session %s (%d pings answered)\n",
		half_closed, slow_closed, silent_closed, pings_to_silent,
		good_closed < 0 ? "still open" : "closed", pings_answered);
	CHECK(half_closed >= 0 && half_closed <= 3500, "half a PDU closed (%ld ms)", half_closed);
	CHECK(slow_closed >= 0 && slow_closed <= 3500, "slowloris closed (%ld ms)", slow_closed);
	CHECK(silent_closed >= 0 && silent_closed <= 5000, "silent session closed (%ld ms)",
	      silent_closed);
	CHECK(pings_to_silent >= 1, "the silent session was pinged before");
	CHECK(good_closed < 0 && pings_answered >= 2, "the answering session stays (%d pings)",
	      pings_answered);
	CHECK(good_closed >= 0 || ping(good, 9, 0, 2000), "the answering session still works");
	fl_drop(half);
	fl_drop(slow);
	fl_drop(silent);
	fl_drop(good);
	server_stop();
	return fl_failures ? 1 : 0;
}

/* ---- lockout ---------------------------------------------------------------------------- */

#define LOCK_FLOOD 1100

/* 1100 sessions without CHAP from one address; a new initiator still gets in. */
static int mode_lockout(const char *fl, char **opts, int nopts)
{
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_max < LOCK_FLOOD + 100) {
		fprintf(stderr, "SKIP: our hard limit of open files is %llu\n",
			(unsigned long long)rl.rlim_max);
		return 77;
	}
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	if (!server_start(fl, opts, nopts, 0, 0)) {
		fprintf(stderr, "FAIL: the target did not start\n");
		fl_failures++;
		server_stop();
		return 1;
	}
	static int fds[LOCK_FLOOD];
	int in = 0;
	long t0 = fl_now_ms();
	for (int i = 0; i < LOCK_FLOOD; i++) {
		char name[96];
		/* a few names shared by many sessions, and many names of their own */
		if (i % 2)
			snprintf(name, sizeof(name), "iqn.2026-12.org.faultlun:flood-%d", i);
		else
			snprintf(name, sizeof(name), "iqn.2026-12.org.faultlun:flood-shared-%d",
				 i % 6);
		fds[i] = login_as(name, 0x10000 + (uint32_t)i, NULL, NULL);
		if (fds[i] >= 0)
			in++;
	}
	long flood_ms = fl_now_ms() - t0;
	/* the newcomer: some tries over 3 s, as an initiator retries a login */
	long t1 = fl_now_ms();
	int fd = -1, st = 0;
	while (fd < 0 && fl_now_ms() - t1 < 3000) {
		fd = login_as("iqn.2026-12.org.faultlun:newcomer", 42, NULL, &st);
		if (fd < 0)
			usleep(100000);
	}
	long admit_ms = fl_now_ms() - t1;
	bool works = fd >= 0 && ping(fd, 5, 0, 2000);
	int still = 0;
	for (int i = 0; i < LOCK_FLOOD; i++)
		if (fds[i] >= 0 && !is_closed(fds[i]))
			still++;
	fprintf(stderr,
		"lockout: %d of %d flood sessions logged in in %ld ms; the newcomer %s after %ld "
		"ms (last status 0x%04x); %d flood sessions still open\n",
		in, LOCK_FLOOD, flood_ms, fd >= 0 ? "got in" : "was kept out", admit_ms, st, still);
	CHECK(works, "a new initiator logs in while the flood holds on");
	for (int i = 0; i < LOCK_FLOOD; i++)
		if (fds[i] >= 0)
			fl_drop(fds[i]);
	if (fd >= 0)
		fl_drop(fd);
	server_stop();
	return fl_failures ? 1 : 0;
}

/* SIGALRM: the test hangs somewhere; stop the target with it. */
static void on_alarm(int sig)
{
	(void)sig;
	if (server > 0)
		kill(server, SIGKILL);
	static const char msg[] = "FAIL: the test did not finish in time\n";
	ssize_t r = write(2, msg, sizeof(msg) - 1);
	(void)r;
	_exit(1);
}

/* ---- nexus ------------------------------------------------------------------------------ */

/*
 * Sends one SCSI command (CDB of 10 bytes, optional immediate data out) and
 * returns its status (0x100 + opcode for an unexpected PDU, -1 on no answer).
 */
static int scsi(int fd, uint32_t *cmdsn, const uint8_t cdb[10], const void *out, uint32_t len)
{
	uint8_t bhs[48] = {0x01, 0x80 | (len ? 0x20 : 0)};
	static uint32_t itt = 0x9000;
	bhs[9] = 0; /* LUN 0 */
	be32(bhs + 16, ++itt);
	be32(bhs + 20, len);
	be32(bhs + 24, (*cmdsn)++);
	memcpy(bhs + 32, cdb, 10);
	if (!fl_put_pdu(fd, bhs, out, len, PUT_MS))
		return -1;
	for (;;) {
		uint8_t r[48];
		int op = fl_get_pdu(fd, r, 5000);
		if (op < 0)
			return -1;
		if (op == 0x21 || (op == 0x25 && (r[1] & 0x01)))
			return r[3];
		if (op != 0x25 && op != 0x20)
			return 0x100 + op;
	}
}

/* TEST UNIT READY until GOOD (the unit attention of a new nexus comes first). */
static bool tur(int fd, uint32_t *cmdsn)
{
	static const uint8_t cdb[10] = {0x00};
	for (int i = 0; i < 4; i++)
		if (scsi(fd, cmdsn, cdb, NULL, 0) == 0)
			return true;
	return false;
}

/* PERSISTENT RESERVE OUT, REGISTER (SPC-4 6.16): reservation key rk, new key sak. */
static int pr_register(int fd, uint32_t *cmdsn, uint64_t rk, uint64_t sak)
{
	uint8_t cdb[10] = {0x5f, 0x00, 0x00, 0, 0, 0, 0, 0, 24, 0};
	uint8_t par[24] = {0};
	for (int i = 0; i < 8; i++) {
		par[i] = (uint8_t)(rk >> (56 - 8 * i));
		par[8 + i] = (uint8_t)(sak >> (56 - 8 * i));
	}
	return scsi(fd, cmdsn, cdb, par, sizeof(par));
}

/* Logs a port in, registers rk -> sak, logs it out; the command's status (-1: no session). */
static int port_register(const char *name, uint32_t isid, uint64_t rk, uint64_t sak)
{
	int fd = login_as(name, isid, NULL, NULL);
	if (fd < 0)
		return -1;
	uint32_t sn = 0;
	int st = tur(fd, &sn) ? pr_register(fd, &sn, rk, sak) : -1;
	fl_drop(fd);
	return st;
}

#define NEXUS_CHURN 4100

/*
 * Persistent-reservation identity: a port registered after 4100 other ports
 * have come and gone keeps its registration on its next login; two names
 * that share their first 255 bytes are two ports.
 */
static int mode_nexus(const char *fl, char **opts, int nopts)
{
	if (!server_start(fl, opts, nopts, 0, 0)) {
		fprintf(stderr, "FAIL: the target did not start\n");
		fl_failures++;
		server_stop();
		return 1;
	}
	int ok = 0;
	long t0 = fl_now_ms();
	for (int i = 0; i < NEXUS_CHURN; i++) {
		int fd =
		    login_as("iqn.2026-12.org.faultlun:churn", 0x20000 + (uint32_t)i, NULL, NULL);
		if (fd >= 0) {
			ok++;
			fl_drop(fd);
		}
	}
	fprintf(stderr, "nexus: %d ports logged in and out in %ld ms\n", ok, fl_now_ms() - t0);
	CHECK(ok == NEXUS_CHURN, "%d of %d churn logins", ok, NEXUS_CHURN);
	const char *holder = "iqn.2026-12.org.faultlun:holder";
	int st = port_register(holder, 7, 0, 0x1111);
	CHECK(st == 0, "the holder registers key 0x1111 (status %d)", st);
	st = port_register(holder, 7, 0x1111, 0x2222);
	CHECK(st == 0,
	      "the holder's next login is the same I_T nexus: REGISTER 0x1111 -> 0x2222 "
	      "(status 0x%x; 0x18 = RESERVATION CONFLICT: a new nexus)",
	      st);
	/* two names alike in their first 255 bytes */
	char a[400], b[400];
	snprintf(a, sizeof(a), "iqn.2026-12.org.faultlun:%0270d-one", 0);
	snprintf(b, sizeof(b), "iqn.2026-12.org.faultlun:%0270d-two", 0);
	st = port_register(a, 9, 0, 0x3333);
	CHECK(st == 0, "long name one registers (status 0x%x)", st);
	st = port_register(b, 9, 0, 0x4444);
	CHECK(st == 0, "long name two is another nexus: it registers with key 0 (status 0x%x)", st);
	st = port_register(a, 9, 0x3333, 0x5555);
	CHECK(st == 0, "long name one keeps its key (status 0x%x)", st);
	server_stop();
	return fl_failures ? 1 : 0;
}

/* ---- CHAP logins ------------------------------------------------------------------------ */

/* MD5 (RFC 1321) of handlers/iscsi/chap.c, which this program links. */
void md5_digest(const uint8_t *data, size_t len, uint8_t out[16]);

/* The value of key in a login response's key=value\0 text, or NULL. */
static const char *key_of(const char *text, size_t len, const char *key)
{
	size_t kl = strlen(key);
	for (size_t i = 0; i < len;) {
		const char *kv = text + i;
		size_t n = strnlen(kv, len - i);
		if (n > kl && !strncmp(kv, key, kl) && kv[kl] == '=')
			return kv + kl + 1;
		i += n + 1;
	}
	return NULL;
}

/* Sends one Login Request with these flags and keys; the response's status (0xffff: none). */
static int login_pdu(int fd, uint8_t flags, uint32_t isid, const char *keys, size_t klen,
		     char *resp, size_t rcap, size_t *rlen)
{
	uint8_t bhs[48] = {0x43, flags};
	bhs[8] = 0x80;
	be32(bhs + 10, isid);
	be32(bhs + 16, 0x7000 + isid);
	if (!fl_put_pdu(fd, bhs, keys, (uint32_t)klen, PUT_MS))
		return 0xffff;
	uint8_t r[48];
	if (fl_get_pdu_data(fd, r, (uint8_t *)resp, rcap, 5000) != 0x23)
		return 0xffff;
	uint32_t dlen = ((uint32_t)r[5] << 16) | ((uint32_t)r[6] << 8) | r[7];
	*rlen = dlen < rcap - 1 ? dlen : rcap - 1;
	return r[36] << 8 | r[37];
}

/* Base64 (RFC 4648) of n bytes. */
static void b64(const uint8_t *in, size_t n, char *out)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? in[i + 2] : 0);
		out[o++] = a[v >> 18 & 63];
		out[o++] = a[v >> 12 & 63];
		out[o++] = i + 1 < n ? a[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? a[v & 63] : '=';
	}
	out[o] = 0;
}

/*
 * A login through CHAP (RFC 7143 12.1.3) as initiator iname, CHAP user
 * `user`; secret NULL answers wrongly; base64: CHAP_R as 0b... Returns the
 * status of the Login Response that ends it (0: logged in; then *fdp is the
 * session, else -1), 0xffff when the target did not answer.
 */
static int chap_login(const char *iname, uint32_t isid, const char *user, const char *secret,
		      bool base64, int *fdp)
{
	char keys[2048], resp[4096];
	size_t rlen = 0;
	int st = 0xffff;
	*fdp = -1;
	int fd = fl_dial(&addr, src_ip);
	if (fd < 0)
		return 0xffff;
	int n = snprintf(keys, sizeof(keys),
			 "InitiatorName=%s%cSessionType=Normal%cTargetName=%s%cAuthMethod=CHAP%c",
			 iname, 0, 0, IQN, 0, 0);
	if ((st = login_pdu(fd, 0x00, isid, keys, (size_t)n, resp, sizeof(resp), &rlen)))
		goto out;
	n = snprintf(keys, sizeof(keys), "CHAP_A=5%c", 0);
	if ((st = login_pdu(fd, 0x00, isid, keys, (size_t)n, resp, sizeof(resp), &rlen)))
		goto out;
	const char *ci = key_of(resp, rlen, "CHAP_I"), *cc = key_of(resp, rlen, "CHAP_C");
	if (!ci || !cc || strncmp(cc, "0x", 2)) {
		st = 0xfffe;
		goto out;
	}
	uint8_t buf[512], md[16];
	size_t bl = 0;
	buf[bl++] = (uint8_t)atoi(ci);
	const char *sec = secret ? secret : "not-the-secret";
	memcpy(buf + bl, sec, strlen(sec));
	bl += strlen(sec);
	for (const char *h = cc + 2; h[0] && h[1] && bl < sizeof(buf); h += 2) {
		char x[3] = {h[0], h[1], 0};
		buf[bl++] = (uint8_t)strtoul(x, NULL, 16);
	}
	md5_digest(buf, bl, md);
	char r[64];
	if (base64) {
		strcpy(r, "0b");
		b64(md, 16, r + 2);
	} else {
		strcpy(r, "0x");
		for (int i = 0; i < 16; i++)
			snprintf(r + 2 + 2 * i, 3, "%02x", md[i]);
	}
	n = snprintf(keys, sizeof(keys), "CHAP_N=%s%cCHAP_R=%s%c", user, 0, r, 0);
	/* T=1, CSG 0 -> NSG 1 */
	if ((st = login_pdu(fd, 0x81, isid, keys, (size_t)n, resp, sizeof(resp), &rlen)))
		goto out;
	n = snprintf(keys, sizeof(keys), "HeaderDigest=None%cDataDigest=None%c", 0, 0);
	/* T=1, CSG 1 -> NSG 3 */
	st = login_pdu(fd, 0x87, isid, keys, (size_t)n, resp, sizeof(resp), &rlen);
out:
	if (st == 0)
		*fdp = fd;
	else
		fl_drop(fd);
	return st;
}

/* ---- logesc ----------------------------------------------------------------------------- */

/* True if a line of the log starts with text (a forged line). */
static bool log_line_starts(const char *path, const char *text)
{
	FILE *f = fopen(path, "r");
	char line[8192];
	bool found = false;
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, text, strlen(text));
	fclose(f);
	return found;
}

/*
 * Peer strings with newlines in the log and the trace: InitiatorName of a
 * session (-v), TargetName of a refused login, CHAP_N of a failed CHAP.
 */
static int mode_logesc(const char *fl, char **opts, int nopts)
{
	char trace[300];
	snprintf(trace, sizeof(trace), "/tmp/fl_limits.%d.trace", (int)getpid());
	char *o1[] = {"-v", "--trace", trace};
	(void)opts;
	(void)nopts;
	if (!server_start(fl, o1, 3, 0, 0)) {
		fprintf(stderr, "FAIL: the target did not start\n");
		fl_failures++;
		server_stop();
		return 1;
	}
	int st;
	int fd = login_as("iqn.2026-12.org.faultlun:evil\nfaultlun serve: FORGED-INITIATOR", 1,
			  NULL, &st);
	CHECK(fd >= 0, "a session with a newline in its InitiatorName (status 0x%x)", st);
	uint32_t sn = 0;
	if (fd >= 0) {
		tur(fd, &sn);
		fl_drop(fd);
	}
	fd = login_as("iqn.2026-12.org.faultlun:x", 2, "iqn.bad\nfaultlun serve: FORGED-TARGET\r",
		      &st);
	CHECK(fd < 0 && st == 0x0203, "an unknown TargetName is refused (status 0x%x)", st);
	usleep(200000);
	CHECK(!log_line_starts(logpath, "faultlun serve: FORGED"), "a forged line in the log");
	CHECK(fl_file_has(logpath, "evil\\x0afaultlun serve: FORGED-INITIATOR"),
	      "the InitiatorName is in the log, its newline as \\x0a");
	CHECK(fl_file_has(logpath, "iqn.bad\\x0afaultlun serve: FORGED-TARGET\\x0d"),
	      "the TargetName is in the log, escaped");
	CHECK(!log_line_starts(trace, "faultlun serve: FORGED"), "a forged line in the trace");
	server_stop();
	unlink(trace);

	char *o2[] = {"--chap-user", "fluser", "--chap-secret", "flsecret-0123-good"};
	if (!server_start(fl, o2, 4, 0, 0)) {
		fprintf(stderr, "FAIL: the target did not start\n");
		fl_failures++;
		server_stop();
		return 1;
	}
	st = chap_login("iqn.2026-12.org.faultlun:chap", 3, "fluser\nfaultlun serve: FORGED-CHAP_N",
			NULL, false, &fd);
	CHECK(st == 0x0201, "a wrong CHAP answer is refused (status 0x%x)", st);
	usleep(200000);
	CHECK(!log_line_starts(logpath, "faultlun serve: FORGED"), "a forged line in the log");
	CHECK(fl_file_has(logpath, "fluser\\x0afaultlun serve: FORGED-CHAP_N"),
	      "CHAP_N in the log, escaped");
	server_stop();
	return fl_failures ? 1 : 0;
}

/* ---- chap ------------------------------------------------------------------------------- */

/*
 * CHAP: the secret from --chap-secret-file, CHAP_R in hex or base64 (RFC
 * 7143 5.1: 0b), failures throttled per initiator name (not per address
 * alone), and the start-up warnings about weak secrets.
 */
static int mode_chap(const char *fl, char **opts, int nopts)
{
	char secfile[300];
	const char *secret = "fl-chap-secret-0123";
	snprintf(secfile, sizeof(secfile), "/tmp/fl_limits.%d.secret", (int)getpid());
	FILE *f = fopen(secfile, "w");
	if (!f)
		return 2;
	fprintf(f, "%s\n", secret);
	fclose(f);
	chmod(secfile, 0600);
	char *o1[] = {"-v", "--chap-user", "fluser", "--chap-secret-file", secfile};
	(void)opts;
	(void)nopts;
	bool up = server_start(fl, o1, 5, 0, 0);
	CHECK(up, "the target starts with --chap-secret-file");
	if (!up) {
		server_stop();
		unlink(secfile);
		return 1;
	}
	int fd, st;
	st = chap_login("iqn.2026-12.org.faultlun:hex", 1, "fluser", secret, false, &fd);
	CHECK(st == 0, "CHAP_R in hex, secret from the file (status 0x%x)", st);
	if (fd >= 0)
		fl_drop(fd);
	st = chap_login("iqn.2026-12.org.faultlun:b64", 2, "fluser", secret, true, &fd);
	CHECK(st == 0, "CHAP_R in base64 (status 0x%x)", st);
	if (fd >= 0)
		fl_drop(fd);
	/* a guesser: three failures are free, then each try waits for a while */
	const char *guesser = "iqn.2026-12.org.faultlun:guesser";
	for (int i = 0; i < 4; i++) {
		st = chap_login(guesser, 3, "fluser", NULL, false, &fd);
		CHECK(st == 0x0201, "wrong answer %d refused (status 0x%x)", i, st);
	}
	st = chap_login(guesser, 3, "fluser", secret, false, &fd);
	CHECK(st == 0, "a name's failures never refuse its right secret (0x%x)", st);
	if (fd >= 0)
		fl_drop(fd);
	/* an address past its free failures waits */
	for (int i = 0; i < 20; i++)
		chap_login(guesser, 3, "fluser", NULL, false, &fd);
	st = chap_login(guesser, 3, "fluser", secret, false, &fd);
	CHECK(st == 0x0201, "right after 20 failures from the address, refused (0x%x)", st);
	if (fd >= 0)
		fl_drop(fd);
	CHECK(fl_file_has(logpath, "CHAP: too many failed authentications"),
	      "the throttle is logged");
	src_ip = "127.0.0.2";
	st = chap_login("iqn.2026-12.org.faultlun:other", 4, "fluser", secret, false, &fd);
	CHECK(st == 0, "another initiator from the same address logs in (status 0x%x)", st);
	if (fd >= 0)
		fl_drop(fd);
	usleep(1300000);
	src_ip = NULL;
	st = chap_login(guesser, 3, "fluser", secret, false, &fd);
	CHECK(st == 0, "the guesser with the right secret once the delay is over (0x%x)", st);
	if (fd >= 0)
		fl_drop(fd);
	server_stop();
	unlink(secfile);

	char *o2[] = {"--chap-user",   "fluser", "--chap-secret",   "short",
		      "--mutual-user", "tgt",	 "--mutual-secret", "short"};
	up = server_start(fl, o2, 8, 0, 0);
	CHECK(up, "the target starts with weak secrets");
	usleep(100000);
	CHECK(fl_file_has(logpath, "shorter than 12"),
	      "a warning about a CHAP secret under 12 bytes");
	CHECK(fl_file_has(logpath, "same secret"),
	      "a warning about one secret for both directions");
	server_stop();
	return fl_failures ? 1 : 0;
}

/* ---- lockout-write ---------------------------------------------------------------------- */

#define HOLD_SESSIONS 896 /* the session share of the default 1024 connections */

/* Reads what came on a holding session: answers a target ping; false when it is closed. */
static bool hold_serve(int fd)
{
	uint8_t r[48], data[512];
	int op = fl_get_pdu_data(fd, r, data, sizeof(data), 200);
	if (op == -2)
		return false;
	if (op == 0x20 && get32(r + 20) != 0xffffffff) {
		/* a target ping: answer it (RFC 7143 11.18.2) */
		uint8_t a[48] = {0x40, 0x80};
		memcpy(a + 8, r + 8, 8);
		be32(a + 16, 0xffffffff);
		memcpy(a + 20, r + 20, 4);
		memcpy(a + 24, r + 28, 4); /* CmdSN = ExpCmdSN */
		fl_put_pdu(fd, a, NULL, 0, PUT_MS);
	}
	return true; /* an R2T: left unanswered */
}

/*
 * 896 sessions without CHAP, half from 127.0.0.1 and half from 127.0.0.2,
 * each sending a WRITE(10) of one block without its data (the target sends
 * an R2T) and answering every NOP-In (pings every second): none is idle. A
 * newcomer from 127.0.0.3 retries every 100 ms and must be in within 1 s.
 */
static int mode_lockout_write(const char *fl, char **opts, int nopts)
{
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_max < HOLD_SESSIONS + 200) {
		printf("SKIP: our hard limit of open files is %llu\n",
		       (unsigned long long)rl.rlim_max);
		return 77;
	}
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	char *o1[] = {"--nopin-interval", "1", "--nopin-timeout", "2"};
	(void)opts;
	(void)nopts;
	if (!server_start(fl, o1, 4, 0, 0)) {
		CHECK(false, "the target starts");
		server_stop();
		return 1;
	}
	static int fds[HOLD_SESSIONS];
	int in = 0, writes = 0;
	for (int i = 0; i < HOLD_SESSIONS; i++) {
		char name[96];
		src_ip = i % 2 ? "127.0.0.2" : "127.0.0.1";
		snprintf(name, sizeof(name), "iqn.2026-12.org.faultlun:hold-%d", i);
		fds[i] = login_as(name, 0x20000 + (uint32_t)i, NULL, NULL);
		if (fds[i] < 0) {
			if (i == 0) {
				printf("SKIP: cannot log in from %s\n", src_ip);
				server_stop();
				return 77;
			}
			continue;
		}
		in++;
		/* WRITE(10) LBA i, one block, no immediate data: the target answers an R2T */
		uint8_t bhs[48] = {0x01, 0x80 | 0x20};
		be32(bhs + 16, 0x100 + (uint32_t)i);
		be32(bhs + 20, 512);
		be32(bhs + 24, 0); /* CmdSN */
		bhs[32] = 0x2a;
		be32(bhs + 34, (uint32_t)i);
		bhs[40] = 1;
		if (fl_put_pdu(fds[i], bhs, NULL, 0, PUT_MS)) {
			uint8_t r[48];
			writes += fl_get_pdu(fds[i], r, 2000) == 0x31;
		}
	}
	src_ip = NULL;
	/* the newcomer tries in a child while the holders answer every ping */
	int pfd[2];
	if (pipe(pfd)) {
		server_stop();
		return 2;
	}
	long t1 = fl_now_ms();
	pid_t kid = fork();
	if (kid == 0) {
		long t = -1;
		int fd = -1, st = 0;
		src_ip = "127.0.0.3";
		while (fd < 0 && fl_now_ms() - t1 < 3000) {
			fd = login_as("iqn.2026-12.org.faultlun:newcomer", 42, NULL, &st);
			if (fd < 0)
				usleep(100000);
		}
		if (fd >= 0 && ping(fd, 5, 0, 2000))
			t = fl_now_ms() - t1;
		char msg[64];
		int n = snprintf(msg, sizeof(msg), "%ld %d\n", t, st);
		ssize_t w = write(pfd[1], msg, (size_t)n);
		(void)w;
		_exit(0);
	}
	close(pfd[1]);
	long admit_ms = -1;
	int st = 0;
	char msg[64] = "";
	while (fl_now_ms() - t1 < 4000) {
		struct pollfd pf[HOLD_SESSIONS + 1];
		for (int i = 0; i < HOLD_SESSIONS; i++)
			pf[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
		pf[HOLD_SESSIONS] = (struct pollfd){.fd = pfd[0], .events = POLLIN};
		poll(pf, HOLD_SESSIONS + 1, 50);
		for (int i = 0; i < HOLD_SESSIONS; i++)
			if (fds[i] >= 0 && pf[i].revents && !hold_serve(fds[i])) {
				close(fds[i]);
				fds[i] = -1;
			}
		if (pf[HOLD_SESSIONS].revents) {
			ssize_t r = read(pfd[0], msg, sizeof(msg) - 1);
			msg[r > 0 ? r : 0] = 0;
			sscanf(msg, "%ld %d", &admit_ms, &st);
			break;
		}
	}
	if (kid > 0)
		waitpid(kid, NULL, 0);
	close(pfd[0]);
	int still = 0;
	for (int i = 0; i < HOLD_SESSIONS; i++)
		still += fds[i] >= 0 && !is_closed(fds[i]);
	printf("lockout-write: %d sessions logged in from 2 addresses, %d WRITEs waiting for "
	       "Data-Out; the newcomer from 127.0.0.3 %s after %ld ms (last status 0x%04x); "
	       "%d holding sessions still open\n",
	       in, writes, admit_ms >= 0 ? "got in" : "was kept out", admit_ms, st, still);
	CHECK(in == HOLD_SESSIONS && writes == HOLD_SESSIONS, "the holders are in (%d, %d)", in,
	      writes);
	CHECK(admit_ms >= 0 && admit_ms <= 1000, "the newcomer got in within 1 s (%ld ms)",
	      admit_ms);
	CHECK(still >= HOLD_SESSIONS - 16, "the holders stay but for a few (%d)", still);
	for (int i = 0; i < HOLD_SESSIONS; i++)
		if (fds[i] >= 0)
			fl_drop(fds[i]);
	server_stop();
	return fl_failures ? 1 : 0;
}

/* ---- dataout ---------------------------------------------------------------------------- */

/*
 * With --pdu-timeout 1 --nopin-interval 1: a session sends a WRITE, gets its
 * R2T, never sends the Data-Out and answers every ping; the target closes
 * it within 1 to 3.5 s with a log line saying why.
 */
static int mode_dataout(const char *fl, char **opts, int nopts)
{
	if (!server_start(fl, opts, nopts, 0, 0)) {
		CHECK(false, "the target starts");
		server_stop();
		return 1;
	}
	int fd = login_as("iqn.2026-12.org.faultlun:dataout", 1, NULL, NULL);
	CHECK(fd >= 0, "a session");
	if (fd < 0) {
		server_stop();
		return 1;
	}
	uint8_t bhs[48] = {0x01, 0x80 | 0x20}, r[48];
	be32(bhs + 16, 0x100);
	be32(bhs + 20, 512);
	bhs[32] = 0x2a;
	bhs[40] = 1;
	CHECK(fl_put_pdu(fd, bhs, NULL, 0, PUT_MS) && fl_get_pdu(fd, r, 2000) == 0x31,
	      "an R2T for the WRITE");
	long t0 = fl_now_ms(), closed = -1;
	while (closed < 0 && fl_now_ms() - t0 < 5000)
		if (!hold_serve(fd))
			closed = fl_now_ms() - t0;
	printf("dataout: a WRITE without its Data-Out closed after %ld ms\n", closed);
	CHECK(closed >= 900 && closed <= 3500, "closed after %ld ms", closed);
	CHECK(fl_file_has(logpath, "no Data-Out for an R2T within 1000 ms"), "the log says why");
	fl_drop(fd);
	server_stop();
	return fl_failures ? 1 : 0;
}

/* ---- chap-budget ------------------------------------------------------------------------ */

/* CHAP_CHECKS_PER_S of handlers/iscsi/chap.c (docs/robustness.md). */
#define CHAP_BUDGET 20
#define ROTATE_ADDRS 50

/*
 * Wrong answers under fresh InitiatorNames from 50 rotating source addresses
 * for 2 s: the failures the target checked (its "authentication failed" log
 * lines) stay within the target-wide budget per second, plus the first try
 * of each address.
 */
static int mode_chap_budget(const char *fl, char **opts, int nopts)
{
	char *o1[] = {"-v", "--chap-user", "fluser", "--chap-secret", "fl-chap-secret-0123"};
	(void)opts;
	(void)nopts;
	if (!server_start(fl, o1, 5, 0, 0)) {
		CHECK(false, "the target starts");
		server_stop();
		return 1;
	}
	char ip[32], name[96];
	long tries = 0, t0 = fl_now_ms(), t;
	while ((t = fl_now_ms() - t0) < 2000) {
		int fd;
		snprintf(ip, sizeof(ip), "127.0.0.%d", 10 + (int)(tries % ROTATE_ADDRS));
		snprintf(name, sizeof(name), "iqn.2026-12.org.faultlun:rot%ld", tries);
		src_ip = ip;
		int st =
		    chap_login(name, (uint32_t)(tries & 0xffff) + 1, "fluser", NULL, false, &fd);
		if (fd >= 0)
			fl_drop(fd);
		if (st == 0xffff && tries == 0) {
			printf("SKIP: cannot connect from %s\n", ip);
			server_stop();
			return 77;
		}
		tries++;
	}
	src_ip = NULL;
	long checked = fl_file_count(logpath, "CHAP: authentication failed");
	long bound = CHAP_BUDGET * (t / 1000 + 1) + ROTATE_ADDRS;
	printf("%ld tries in %ld ms from %d addresses: %ld checked (%.0f per second), bound %ld\n",
	       tries, t, ROTATE_ADDRS, checked, checked * 1000.0 / (double)t, bound);
	CHECK(tries > 2 * bound, "the attack ran (%ld tries)", tries);
	CHECK(checked <= bound, "%ld guesses checked in %ld ms, more than %ld", checked, t, bound);
	server_stop();
	return fl_failures ? 1 : 0;
}

/* ---- chap-victim ------------------------------------------------------------------------ */

/*
 * An attacker that knows the victim's InitiatorName sends wrong answers in
 * its name from 127.0.0.1 without pause; the victim, from 127.0.0.2 with the
 * right secret, logs in 10 times, one every 100 ms: each gets in.
 */
static int mode_chap_victim(const char *fl, char **opts, int nopts)
{
	const char *secret = "fl-chap-secret-0123", *victim = "iqn.2026-12.org.faultlun:victim";
	char *o1[] = {"-v", "--chap-user", "fluser", "--chap-secret", (char *)secret};
	(void)opts;
	(void)nopts;
	if (!server_start(fl, o1, 5, 0, 0)) {
		CHECK(false, "the target starts");
		server_stop();
		return 1;
	}
	pid_t attacker = fork();
	if (attacker == 0) {
		src_ip = "127.0.0.1";
		for (long t0 = fl_now_ms(); fl_now_ms() - t0 < 4000;) {
			int fd;
			chap_login(victim, 7, "fluser", NULL, false, &fd);
			if (fd >= 0)
				fl_drop(fd);
		}
		_exit(0);
	}
	usleep(300000);
	src_ip = "127.0.0.2";
	int in = 0;
	for (int i = 0; i < 10; i++) {
		int fd, st = chap_login(victim, 8, "fluser", secret, false, &fd);
		in += st == 0;
		if (fd >= 0)
			fl_drop(fd);
		usleep(100000);
	}
	src_ip = NULL;
	long failed = fl_file_count(logpath, "CHAP: authentication failed");
	printf("the victim got in %d times of 10 while the attacker failed %ld times in its name\n",
	       in, failed);
	CHECK(failed >= 3, "the attacker ran (%ld failures)", failed);
	CHECK(in == 10, "the victim got in %d times of 10", in);
	if (attacker > 0) {
		kill(attacker, SIGKILL);
		waitpid(attacker, NULL, 0);
	}
	server_stop();
	return fl_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: fl_limits MODE FAULTLUN [SERVE-OPTIONS...]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, on_alarm);
	alarm(120); /* a hang anywhere fails the test (SIGALRM) */
	const char *mode = argv[1], *fl = argv[2];
	char **opts = argv + 3;
	int nopts = argc - 3;
	if (!strcmp(mode, "emfile"))
		return mode_emfile(fl, opts, nopts);
	if (!strcmp(mode, "emfile-ctl"))
		return mode_emfile_ctl(fl, opts, nopts);
	if (!strcmp(mode, "pinned"))
		return mode_pinned(fl, opts, nopts);
	if (!strcmp(mode, "timeouts"))
		return mode_timeouts(fl, opts, nopts);
	if (!strcmp(mode, "lockout"))
		return mode_lockout(fl, opts, nopts);
	if (!strcmp(mode, "nexus"))
		return mode_nexus(fl, opts, nopts);
	if (!strcmp(mode, "logesc"))
		return mode_logesc(fl, opts, nopts);
	if (!strcmp(mode, "chap"))
		return mode_chap(fl, opts, nopts);
	if (!strcmp(mode, "dataout"))
		return mode_dataout(fl, opts, nopts);
	if (!strcmp(mode, "lockout-write"))
		return mode_lockout_write(fl, opts, nopts);
	if (!strcmp(mode, "chap-budget"))
		return mode_chap_budget(fl, opts, nopts);
	if (!strcmp(mode, "chap-victim"))
		return mode_chap_victim(fl, opts, nopts);
	fprintf(stderr, "unknown mode %s\n", mode);
	return 2;
}
