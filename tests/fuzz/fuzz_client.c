// SPDX-License-Identifier: MIT
/*
 * fuzz_client.c - libFuzzer target for the client side: `faultlun send`
 * (cli/cmd_send.c, cli/initiator.c, cli/decode.c, over libiscsi) against a
 * hostile target. The target is this file: it listens on 127.0.0.1 on an
 * ephemeral port, and a thread answers each connection with what the input
 * says; `send` runs as a user runs it (its argument vector), with a 1 s
 * timeout. What the target's answers reach: the login responses and their
 * text keys (RFC 7143 6, 13), SCSI Responses, Data-In, R2T, NOP-In,
 * asynchronous messages, Reject, TMF and Logout Responses (11), the sense
 * (SPC-4 4.5) and every data-in decoder.
 *
 * Input: byte 0 chooses whether `send` prints JSON (bit 0) and hex (bit 1)
 * and the items it sends (bits 2-7, the first six below; none: tur), byte 1
 * bit 0 adds request-sense and abort-task:last; then a list of answers, each
 *   FLAGS (1 byte), LENGTH (2 bytes, big-endian), LENGTH bytes
 * For each PDU the client sends the next answer is written (after 0.5 ms of
 * silence it is written anyway, and so are the answers after it until the
 * client sends again): with FLAGS & A_LOGIN a well-formed Login Response to the
 * client's request (the bytes are its text keys, when any); otherwise the
 * bytes as they are, with A_ITT the request's Initiator Task Tag copied in,
 * with A_SEQ StatSN / ExpCmdSN / MaxCmdSN made consistent, with A_LEN the
 * DataSegmentLength set to the bytes after the BHS. When the answers run
 * out the target closes the connection.
 *
 * Left out on purpose, three defects of libiscsi (1.19, and its master of
 * 2026-06) that a hostile target can reach and faultlun cannot mend (see
 * docs/robustness.md):
 * - a Data-In with data, or an R2T, whose ITT is that of a pending request
 *   that is not a SCSI command (login, logout, TMF, NOP-Out, Text): for a
 *   Data-In libiscsi looks up the SCSI task of that request to place the data
 *   (lib/iscsi-command.c, iscsi_get_scsi_task_iovector_in) before it checks
 *   the opcode, and dereferences NULL; an R2T it takes for any pending
 *   request (lib/pdu.c, iscsi_process_pdu) and answers with Data-Out PDUs of
 *   that request. Such an answer is not sent; to know where PDUs start
 *   the answers' CRC32C digest offers are turned into None.
 * - an R2T asking for data past the command's Expected Data Transfer
 *   Length: libiscsi queues a Data-Out PDU for each MaxRecvDataSegmentLength
 *   of what it asks (lib/iscsi-command.c, iscsi_process_r2t and
 *   iscsi_send_data_out), 4 GiB of them for the largest, each inserted in
 *   order in its queue; `send`'s watchdog ends that (exit 3). Such an answer
 *   is not sent.
 * - an input that declares MaxRecvDataSegmentLength, MaxBurstLength or
 *   FirstBurstLength below 512 (RFC 7143's least), not checked by libiscsi:
 *   with 0 it loops for ever splitting data-out into empty PDUs, with 1 it
 *   queues a PDU per byte, inside its own code; `send` bounds
 *   that with its watchdog (exit 3, tests/integration/hostile-target.py),
 *   which would end the fuzzer.
 */
#define _GNU_SOURCE /* ppoll */
#include "cli.h"
#include "iscsi_proto.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { A_LOGIN = 1, A_ITT = 2, A_SEQ = 4, A_LEN = 8 };

static int lfd = -1;
static uint16_t port;

/* The items the first two bytes choose from. */
static const char *const items[] = {
    "inquiry",	      "inquiry:vpd=0x83", "readcap",	    "read:lba=0,blocks=2",
    "write:lba=1,blocks=2,pattern=7", "report-luns", "request-sense", "abort-task:last",
};

/* What one connection's thread serves. */
struct serve {
	const uint8_t *p;
	size_t n;
};

static void put32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 24), b[1] = (uint8_t)(v >> 16), b[2] = (uint8_t)(v >> 8),
	b[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static void write_all(int fd, const uint8_t *b, size_t n)
{
	while (n) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
		if (w <= 0)
			return;
		b += w, n -= (size_t)w;
	}
}

/* A Login Response answering req (its stage), with text keys. */
static size_t login_answer(const uint8_t *req, const uint8_t *keys, size_t klen, uint32_t statsn,
			   uint8_t *out, size_t cap)
{
	static const char sec[] = "AuthMethod=None\0TargetPortalGroupTag=1";
	static const char op[] = "HeaderDigest=None\0DataDigest=None\0"
				 "MaxRecvDataSegmentLength=262144\0InitialR2T=Yes\0"
				 "ImmediateData=Yes\0MaxBurstLength=262144\0"
				 "FirstBurstLength=65536\0ErrorRecoveryLevel=0";
	uint8_t csg = ISCSI_LOGIN_CSG(req[1]), nsg = ISCSI_LOGIN_NSG(req[1]);
	const char *text = csg == ISCSI_STAGE_SECURITY ? sec : op;
	size_t tlen = csg == ISCSI_STAGE_SECURITY ? sizeof(sec) : sizeof(op);

	if (klen) {
		text = (const char *)keys;
		tlen = klen;
	}
	if (tlen > cap - ISCSI_BHS_LEN - 4)
		tlen = cap - ISCSI_BHS_LEN - 4;
	memset(out, 0, ISCSI_BHS_LEN);
	out[0] = ISCSI_OP_LOGIN_RESP;
	out[1] = (uint8_t)((req[1] & ISCSI_LOGIN_TRANSIT) | csg << 2 |
			   (req[1] & ISCSI_LOGIN_TRANSIT ? nsg : csg));
	out[5] = (uint8_t)(tlen >> 16), out[6] = (uint8_t)(tlen >> 8), out[7] = (uint8_t)tlen;
	memcpy(out + 8, req + 8, 6); /* ISID */
	out[15] = 1;		     /* TSIH */
	memcpy(out + 16, req + 16, 4);
	put32(out + 24, statsn);
	put32(out + 28, get32(req + 24));
	put32(out + 32, get32(req + 24) + 64);
	memcpy(out + ISCSI_BHS_LEN, text, tlen);
	size_t n = ISCSI_BHS_LEN + tlen;
	while (n % 4)
		out[n++] = 0;
	return n;
}

/*
 * What the client has been sent, as libiscsi reads it: PDU boundaries (no
 * digests: see no_digests); and what the client asked: the ITTs of its
 * requests that are not SCSI commands (login, logout, TMF, NOP-Out, Text) and
 * the expected length of its SCSI commands, to keep out the known libiscsi
 * defects in the header comment.
 */
/* Where PDUs start in one direction of the byte stream. */
struct framing {
	uint8_t hdr[ISCSI_BHS_LEN];
	size_t hpos; /* header bytes seen of the current PDU */
	size_t skip; /* bytes of its AHS, data and padding still to come */
};

struct model {
	struct framing in, out; /* client to target, target to client */
	uint32_t itts[64];	/* ITTs of non-SCSI requests (a ring) */
	unsigned nitt;
	uint32_t cmd_itt[64], cmd_edtl[64]; /* SCSI commands: ITT, expected length */
	unsigned ncmd;
};

/* PDU length after the BHS: AHS, data segment and its padding. */
static size_t pdu_rest(const uint8_t *h)
{
	size_t dsl = (size_t)h[5] << 16 | (size_t)h[6] << 8 | h[7];
	return (size_t)h[4] * 4 + ((dsl + 3) & ~(size_t)3);
}

/*
 * Feeds b[0..n) to f; each time a BHS is complete, calls on_hdr(m, hdr),
 * which may return true to stop (then the function returns true).
 */
static bool frame(struct framing *f, const uint8_t *b, size_t n, struct model *m,
		  bool (*on_hdr)(struct model *, const uint8_t *))
{
	for (size_t i = 0; i < n; i++) {
		if (f->skip) {
			size_t k = n - i < f->skip ? n - i : f->skip;
			f->skip -= k, i += k - 1;
			continue;
		}
		f->hdr[f->hpos++] = b[i];
		if (f->hpos < ISCSI_BHS_LEN)
			continue;
		f->hpos = 0;
		f->skip = pdu_rest(f->hdr);
		if (on_hdr && on_hdr(m, f->hdr))
			return true;
	}
	return false;
}

/* A request's header: the ITTs of non-SCSI requests, the commands' lengths. */
static bool on_request(struct model *m, const uint8_t *h)
{
	uint8_t op = h[0] & ISCSI_OPCODE_MASK;

	if (op == ISCSI_OP_SCSI_CMD) {
		m->cmd_itt[m->ncmd % 64] = get32(h + 16);
		m->cmd_edtl[m->ncmd++ % 64] = get32(h + 20);
	} else if (op != ISCSI_OP_DATA_OUT) {
		m->itts[m->nitt++ % 64] = get32(h + 16);
	}
	return false;
}

/* An answer's header: true when it reaches one of the libiscsi defects. */
static bool on_answer(struct model *m, const uint8_t *h)
{
	uint8_t op = h[0] & ISCSI_OPCODE_MASK;
	uint32_t itt = get32(h + 16);

	if ((op == ISCSI_OP_DATA_IN && (h[5] | h[6] | h[7])) || op == ISCSI_OP_R2T)
		for (unsigned k = 0; k < 64 && k < m->nitt; k++)
			if (m->itts[k] == itt)
				return true;
	if (op == ISCSI_OP_R2T)
		for (unsigned k = 0; k < 64 && k < m->ncmd; k++)
			if (m->cmd_itt[k] == itt &&
			    (uint64_t)get32(h + 40) + get32(h + 44) > m->cmd_edtl[k])
				return true;
	return false;
}

/* Turns every CRC32C offer in an answer into None (see struct model). */
static void no_digests(uint8_t *b, size_t n)
{
	for (size_t i = 0; i + 6 <= n; i++)
		if (!memcmp(b + i, "CRC32C", 6))
			memcpy(b + i, "None\0\0", 6);
}

/* Serves one connection: an answer per request, or unasked after a silence. */
static void serve_conn(int cfd, struct serve *s)
{
	static uint8_t req[65536], out[65536 + 64];
	uint32_t statsn = 1;
	bool have_req = false;
	long wait_us = 500; /* 0 after a silence, until the client speaks again */
	struct model m = {0};

	while (s->n >= 3) {
		uint8_t flags = s->p[0];
		size_t len = (size_t)s->p[1] << 8 | s->p[2];
		struct pollfd pfd = {.fd = cfd, .events = POLLIN};

		s->p += 3, s->n -= 3;
		if (len > s->n)
			len = s->n;
		struct timespec ts = {0, wait_us * 1000};
		if (ppoll(&pfd, 1, &ts, NULL) == 1) {
			ssize_t r = recv(cfd, req, sizeof(req), 0);
			if (r <= 0)
				return;
			have_req = r >= ISCSI_BHS_LEN;
			frame(&m.in, req, (size_t)r, &m, on_request);
			wait_us = 500;
		} else {
			wait_us = 0;
		}
		size_t olen;
		if ((flags & A_LOGIN) && have_req) {
			olen = login_answer(req, s->p, len, statsn++, out, sizeof(out));
		} else {
			memcpy(out, s->p, len);
			olen = len;
			if ((flags & A_ITT) && have_req && olen >= 20)
				memcpy(out + 16, req + 16, 4);
			if ((flags & A_SEQ) && have_req && olen >= 36) {
				put32(out + 24, statsn++);
				put32(out + 28, get32(req + 24) + 1);
				put32(out + 32, get32(req + 24) + 64);
			}
			if ((flags & A_LEN) && olen >= ISCSI_BHS_LEN) {
				size_t dl = olen - ISCSI_BHS_LEN;
				out[4] = 0;
				out[5] = (uint8_t)(dl >> 16), out[6] = (uint8_t)(dl >> 8),
				out[7] = (uint8_t)dl;
			}
		}
		s->p += len, s->n -= len;
		no_digests(out, olen);
		struct framing f = m.out;
		if (frame(&f, out, olen, &m, on_answer))
			continue; /* this answer is left out */
		m.out = f;
		write_all(cfd, out, olen);
	}
}

static struct serve job;
static sem_t job_start, job_done;

/*
 * The target's thread, made once (a thread a run would cost more than the
 * run): for each job, one connection, then it waits for the next (a session
 * renewal finds no one).
 */
static void *target_main(void *arg)
{
	(void)arg;
	for (;;) {
		struct pollfd pfd = {.fd = lfd, .events = POLLIN};

		while (sem_wait(&job_start))
			;
		if (poll(&pfd, 1, 2000) == 1) {
			int cfd = accept(lfd, NULL, NULL);
			if (cfd >= 0) {
				serve_conn(cfd, &job);
				shutdown(cfd, SHUT_RDWR);
				close(cfd);
			}
		}
		sem_post(&job_done);
	}
	return NULL;
}

/* The listening socket and stdout to /dev/null, once. */
static void setup(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t al = sizeof(a);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) ||
	    listen(lfd, 4) || getsockname(lfd, (struct sockaddr *)&a, &al))
		abort();
	port = ntohs(a.sin_port);
	if (!freopen("/dev/null", "w", stdout))
		abort();
	pthread_t th;
	if (sem_init(&job_start, 0, 0) || sem_init(&job_done, 0, 0) ||
	    pthread_create(&th, NULL, target_main, NULL))
		abort();
}

/* Does the input declare a burst length below 512 (see the header)? */
static bool short_burst(const uint8_t *d, size_t n)
{
	static const char *const keys[] = {"MaxRecvDataSegmentLength=", "MaxBurstLength=",
					   "FirstBurstLength="};

	for (size_t k = 0; k < 3; k++) {
		size_t kl = strlen(keys[k]);
		for (size_t i = 0; i + kl <= n; i++) {
			if (memcmp(d + i, keys[k], kl))
				continue;
			size_t j = i + kl;
			unsigned long v = 0;
			while (j < n && j < i + kl + 12 && d[j] >= '0' && d[j] <= '9')
				v = v * 10 + (d[j++] - '0');
			if (v < 512) /* RFC 7143 13.12-13.14: 512 to 2^24 - 1 */
				return true;
		}
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char url[96];
	char *argv[16];
	int argc = 0;

	if (size < 2 || short_burst(data, size))
		return -1;
	if (lfd < 0)
		setup();
	snprintf(url, sizeof(url), "iscsi://127.0.0.1:%u/iqn.2026-12.org.faultlun:fuzz/0",
		 (unsigned)port);
	argv[argc++] = "send";
	argv[argc++] = "-t";
	argv[argc++] = "1";
	if (data[0] & 1)
		argv[argc++] = "--json";
	if (data[0] & 2)
		argv[argc++] = "--hex";
	argv[argc++] = url;
	int first = argc;
	for (size_t i = 0; i < 6; i++)
		if (data[0] & (4u << i))
			argv[argc++] = (char *)items[i];
	if (data[1] & 1) {
		argv[argc++] = (char *)items[6];
		argv[argc++] = (char *)items[7];
	}
	if (argc == first)
		argv[argc++] = "tur";
	argv[argc] = NULL;

	job = (struct serve){.p = data + 2, .n = size - 2};
	sem_post(&job_start);
	(void)cmd_send(argc, argv);
	while (sem_wait(&job_done))
		;
	return 0;
}
