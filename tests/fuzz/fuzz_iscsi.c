// SPDX-License-Identifier: MIT
/*
 * fuzz_iscsi.c - libFuzzer target for the embedded iSCSI target (RFC 7143):
 * the PDU parser (BHS, AHS, data segment, padding, digests, section 11), the
 * login and negotiation state machine (sections 6 and 13) and full-feature
 * phase dispatch (SCSI Command, Data-Out, Task Management, NOP-Out, Text,
 * Logout) through the fault engine (as faultlun serve runs it) down to two
 * memory LUNs.
 *
 * The target runs its event loop on a thread, listening on 127.0.0.1 on an
 * ephemeral port. Each input is one TCP connection: when the first byte is
 * odd a valid operational-stage login (leading to full-feature phase) is sent
 * first, then the rest of the input as is; the write side is shut down and
 * everything the target answers is read until it closes the connection.
 */
#include "fl_iscsi.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct fl_iscsi *tgt;
static uint16_t port;

/* The target's event loop. */
static void *loop_main(void *arg)
{
	(void)arg;
	fl_iscsi_run(tgt);
	return NULL;
}

/* What faultlun serve runs: a fault engine over two memory LUNs, with a few cheap faults. */
static const char scenario[] =
    "{\"faultlun\": 1, \"name\": \"fuzz\", \"frontends\": [\"iscsi\"], \"seed\": 1,"
    " \"luns\": [{\"lun\": 0, \"size\": \"1MiB\"},"
    "  {\"lun\": 1, \"size\": \"1MiB\", \"block_size\": 4096, \"thin\": {}}],"
    " \"rules\": ["
    "  {\"id\": \"bad-read\", \"match\": {\"class\": \"read\", \"every\": 5},"
    "   \"action\": {\"sense\": \"MEDIUM_ERROR/UNRECOVERED_READ_ERROR\", \"info\": \"lba\"}},"
    "  {\"id\": \"lost-ack\", \"match\": {\"class\": \"write\", \"every\": 7},"
    "   \"action\": {\"drop_response\": true}}],"
    " \"transport\": {\"rules\": ["
    "  {\"id\": \"lost-data-in\", \"match\": {\"pdu\": \"data_in\", \"every\": 11},"
    "   \"action\": \"drop\"}]}}";

/* Builds the target once and starts its loop on a thread. */
static void setup(void)
{
	struct fl_scenario *sc = NULL;
	struct fl_diags d = {0};
	struct fl_engine *engine = NULL;
	pthread_t th;

	/* As faultlun serve does: a peer's reset must not kill the process. */
	signal(SIGPIPE, SIG_IGN);
	if (fl_scenario_load_string("fuzz", scenario, FL_FE_ISCSI, &sc, &d) != 0) {
		fl_diags_print(&d, stderr);
		abort();
	}
	struct fl_engine_opts eo = {0};
	eo.frontend = FL_FE_ISCSI;
	if (fl_engine_create(sc, &eo, &engine) != 0)
		abort();
	fl_scenario_free(sc);
	struct fl_iscsi_opts o = {0};
	o.listen = "127.0.0.1:0";
	o.login_timeout_s = 2;
	o.log = fopen("/dev/null", "w");
	if (fl_iscsi_create(&o, engine, NULL, &tgt) != 0)
		abort();
	port = fl_iscsi_port(tgt);
	if (pthread_create(&th, NULL, loop_main, NULL) != 0)
		abort();
}

/* Appends a Login Request (CSG operational, NSG full feature, T=1) to buf. */
static size_t login_pdu(uint8_t *buf)
{
	static const char keys[] = "InitiatorName=iqn.2026-12.org.fuzz:init\0"
				   "TargetName=" FL_ISCSI_DEFAULT_IQN "\0"
				   "SessionType=Normal\0"
				   "HeaderDigest=None\0DataDigest=None\0"
				   "MaxRecvDataSegmentLength=65536\0"
				   "ImmediateData=Yes\0InitialR2T=No\0";
	uint32_t dlen = sizeof(keys) - 1;
	memset(buf, 0, 48);
	buf[0] = 0x40 | 0x03; /* immediate, Login Request */
	buf[1] = 0x80 | (1 << 2) | 3;
	buf[5] = (uint8_t)(dlen >> 16);
	buf[6] = (uint8_t)(dlen >> 8);
	buf[7] = (uint8_t)dlen;
	buf[8] = 0x80; /* ISID: random format */
	buf[13] = 1;
	buf[19] = 1; /* ITT */
	memcpy(buf + 48, keys, dlen);
	uint32_t padded = (dlen + 3) & ~3u;
	memset(buf + 48 + dlen, 0, padded - dlen);
	return 48 + padded;
}

/*
 * libFuzzer's timeout timer (SIGALRM each second) can interrupt connect(),
 * which then completes in the background: wait for it.
 */
static bool connect_finish(int fd)
{
	if (errno != EINTR)
		return false;
	struct pollfd pf = {.fd = fd, .events = POLLOUT};
	int err = 0;
	socklen_t len = sizeof(err);
	while (poll(&pf, 1, 5000) < 0)
		if (errno != EINTR)
			return false;
	return getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
}

/* Sends everything, giving up on error. */
static void send_all(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One input: one connection carrying the input bytes. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t lbuf[512], rbuf[65536];
	if (!tgt)
		setup();
	if (size == 0)
		return 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		abort();
	struct sockaddr_in a = {0};
	a.sin_family = AF_INET;
	a.sin_port = htons(port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* RST on close: no TIME_WAIT, so thousands of inputs do not use up ports. */
	struct linger lg = {.l_onoff = 1, .l_linger = 0};
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0 && !connect_finish(fd)) {
		perror("connect to the target");
		abort();
	}
	if (data[0] & 1)
		send_all(fd, lbuf, login_pdu(lbuf));
	send_all(fd, data + 1, size - 1);
	shutdown(fd, SHUT_WR);
	/* Read until the target closes; a live target closes on our EOF. */
	for (int rounds = 0; rounds < 200; rounds++) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		int pr = poll(&pf, 1, 1000);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			break;
		ssize_t r = recv(fd, rbuf, sizeof(rbuf), 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
	}
	close(fd);
	return 0;
}
