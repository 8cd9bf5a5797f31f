/* SPDX-License-Identifier: MIT */
/*
 * iscsi_raw.c - protocol checks of `faultlun serve` with hand-built PDUs.
 *
 * libiscsi never sends a wrong PDU on purpose; this program does. It speaks
 * RFC 7143 on a plain socket and checks: login status classes (11.13.5:
 * 02/03, 02/05, 02/07, 02/0a), the result function of every operational key
 * of section 13 and the special answers NotUnderstood / Irrelevant / Reject
 * (6.2), TargetPortalGroupTag in the first response (13.9), header and data
 * digests (CRC32C, 13.1), the CmdSN window (4.2.2.1: out-of-window commands
 * ignored), Reject of SNACK at ERL 0 and of unknown opcodes (11.17), Data-Out
 * DataSN checks (11.7), SendTargets (Appendix C). Usage: iscsi_raw CHECK
 * with FAULTLUN_ADDR, FAULTLUN_PORT and FAULTLUN_IQN in the environment.
 */
#include "fl_byteorder.h"
#include "fl_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* CRC32C, bitwise (the target's own table code is not reused on purpose). */
static uint32_t crc32c(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
	}
	return ~c;
}

/* One connection with its digest settings and sequence numbers. */
struct link {
	int fd;
	bool hd, dd;
	uint32_t cmdsn, expstatsn, itt;
	uint16_t isid_q; /* ISID qualifier: distinct per link, so no reinstatement */
};

/* When set, the ISID qualifier of the next links: a new login of the same initiator port. */
static uint16_t g_same_q;

/* Opens a TCP connection to the target. */
static bool link_open(struct link *l)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	memset(l, 0, sizeof(*l));
	sa.sin_port = htons((uint16_t)atoi(getenv("FAULTLUN_PORT")));
	inet_pton(AF_INET, getenv("FAULTLUN_ADDR"), &sa.sin_addr);
	static uint16_t next_q = 1;
	l->fd = socket(AF_INET, SOCK_STREAM, 0);
	l->itt = 0x100;
	l->isid_q = g_same_q ? g_same_q : next_q++;
	return l->fd >= 0 && !connect(l->fd, (struct sockaddr *)&sa, sizeof(sa));
}

/* When set, the next data digests sent are wrong. */
static uint32_t g_corrupt_dd;

/* Sends a PDU with digests as negotiated; corrupt_hd flips the header digest. */
static void send_pdu(struct link *l, uint8_t *bhs, const void *data, uint32_t dlen, bool corrupt_hd)
{
	uint8_t buf[65536 + 128];
	size_t n = 0;
	bhs[5] = dlen >> 16, bhs[6] = dlen >> 8, bhs[7] = dlen;
	memcpy(buf, bhs, 48);
	n = 48;
	if (l->hd) {
		uint32_t c = crc32c(bhs, 48) ^ (corrupt_hd ? 1 : 0);
		memcpy(buf + n, &c, 4); /* little-endian host: LSB first on the wire */
		n += 4;
	}
	if (dlen)
		memcpy(buf + n, data, dlen);
	n += dlen;
	while (n % 4)
		buf[n++] = 0;
	if (l->dd && dlen) {
		uint32_t c = crc32c(buf + (l->hd ? 52 : 48), (dlen + 3) & ~3u) ^ g_corrupt_dd;
		memcpy(buf + n, &c, 4);
		n += 4;
	}
	if (write(l->fd, buf, n) != (ssize_t)n)
		fprintf(stderr, "short write\n");
}

/* Reads exactly n bytes within ms; false on timeout or EOF. */
static bool read_full(int fd, uint8_t *p, size_t n, int ms)
{
	while (n) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		if (poll(&pfd, 1, ms) != 1)
			return false;
		ssize_t r = read(fd, p, n);
		if (r <= 0)
			return false;
		p += r;
		n -= (size_t)r;
	}
	return true;
}

/* Receives one PDU; checks its digests; returns false on timeout / EOF. */
static bool recv_pdu(struct link *l, uint8_t *bhs, uint8_t *data, uint32_t *dlen, int ms)
{
	if (!read_full(l->fd, bhs, 48, ms))
		return false;
	uint8_t d[4];
	if (l->hd) {
		if (!read_full(l->fd, d, 4, ms))
			return false;
		uint32_t c;
		memcpy(&c, d, 4);
		CHECK(c == crc32c(bhs, 48), "header digest of opcode 0x%02x", bhs[0]);
	}
	uint32_t n = (uint32_t)bhs[5] << 16 | (uint32_t)bhs[6] << 8 | bhs[7];
	uint32_t padded = (n + 3) & ~3u;
	if (n && !read_full(l->fd, data, padded, ms))
		return false;
	if (l->dd && n) {
		if (!read_full(l->fd, d, 4, ms))
			return false;
		uint32_t c;
		memcpy(&c, d, 4);
		CHECK(c == crc32c(data, padded), "data digest of opcode 0x%02x", bhs[0]);
	}
	*dlen = n;
	if ((bhs[0] & 0x3f) != 0x25 || (bhs[1] & 1))
		l->expstatsn = fl_get_be32(bhs + 24) + 1;
	return true;
}

/* True when the peer has closed the connection within ms. */
static bool closed_by_peer(struct link *l, int ms)
{
	uint8_t buf[4096];
	for (;;) {
		struct pollfd pfd = {.fd = l->fd, .events = POLLIN};
		if (poll(&pfd, 1, ms) != 1)
			return false;
		ssize_t r = read(l->fd, buf, sizeof(buf));
		if (r <= 0)
			return true;
	}
}

/* Finds key=value in a text segment; returns the value or NULL. */
static const char *text_get(const uint8_t *data, uint32_t n, const char *key, char *out, size_t cap)
{
	size_t kl = strlen(key);
	for (uint32_t i = 0; i < n;) {
		const char *s = (const char *)data + i;
		size_t len = strnlen(s, n - i);
		if (len > kl && !strncmp(s, key, kl) && s[kl] == '=') {
			snprintf(out, cap, "%s", s + kl + 1);
			return out;
		}
		i += (uint32_t)len + 1;
	}
	return NULL;
}

/* Builds "k=v\0k=v\0" from a NULL-terminated list of "k=v" strings. */
static uint32_t text_build(uint8_t *buf, const char *const *kv)
{
	uint32_t n = 0;
	for (; *kv; kv++) {
		size_t len = strlen(*kv) + 1;
		memcpy(buf + n, *kv, len);
		n += (uint32_t)len;
	}
	return n;
}

/*
 * Sends one Login Request (CSG/NSG, T bit) with the given keys; fills the
 * response. Returns the 16-bit status or -1 when nothing came back.
 */
static int login_pdu(struct link *l, int csg, int nsg, bool transit, const char *const *kv,
		     uint8_t *rbhs, uint8_t *rdata, uint32_t *rlen, uint8_t vmin, uint16_t tsih)
{
	uint8_t bhs[48] = {0x43}, data[8192];
	bhs[1] = (uint8_t)((transit ? 0x80 : 0) | csg << 2 | (transit ? nsg : 0));
	bhs[3] = vmin;
	bhs[8] = 0x80; /* ISID: random format, qualifier per link */
	bhs[12] = l->isid_q >> 8, bhs[13] = l->isid_q & 0xff;
	bhs[14] = tsih >> 8, bhs[15] = tsih & 0xff;
	fl_put_be32(bhs + 16, l->itt);
	fl_put_be32(bhs + 24, l->cmdsn);
	fl_put_be32(bhs + 28, l->expstatsn);
	send_pdu(l, bhs, data, text_build(data, kv), false);
	if (!recv_pdu(l, rbhs, rdata, rlen, 5000))
		return -1;
	return rbhs[36] << 8 | rbhs[37];
}

/* Expects a login status for a first request. */
static void expect_login_status(const char *const *kv, int want, uint8_t vmin, uint16_t tsih,
				const char *what)
{
	struct link l;
	uint8_t rb[48], rd[8192];
	uint32_t rl;
	CHECK(link_open(&l), "connect");
	int st = login_pdu(&l, 1, 3, true, kv, rb, rd, &rl, vmin, tsih);
	CHECK(st == want, "%s: status 0x%04x, expected 0x%04x", what, st, want);
	CHECK(closed_by_peer(&l, 3000), "%s: connection closed after a failed login", what);
	close(l.fd);
}

/* Login status classes. */
static void check_login_status(void)
{
	char tn[300];
	snprintf(tn, sizeof(tn), "TargetName=%s", getenv("FAULTLUN_IQN"));
	const char *no_iname[] = {tn, "SessionType=Normal", NULL};
	expect_login_status(no_iname, 0x0207, 0, 0, "no InitiatorName");
	const char *no_tname[] = {"InitiatorName=iqn.2026-12.test:raw", NULL};
	expect_login_status(no_tname, 0x0207, 0, 0, "normal session without TargetName");
	const char *wrong[] = {"InitiatorName=iqn.2026-12.test:raw",
			       "TargetName=iqn.2026-12.test:nope", NULL};
	expect_login_status(wrong, 0x0203, 0, 0, "unknown TargetName");
	const char *good[] = {"InitiatorName=iqn.2026-12.test:raw", tn, NULL};
	expect_login_status(good, 0x0205, 1, 0, "Version-min 1");
	expect_login_status(good, 0x020a, 0, 0x7777, "TSIH of no session");
	const char *badtype[] = {"InitiatorName=iqn.2026-12.test:raw", tn, "SessionType=Bogus",
				 NULL};
	expect_login_status(badtype, 0x0209, 0, 0, "unknown SessionType");
	/* Straight from the security stage to full feature phase (RFC 7143 6.3). */
	struct link l;
	uint8_t rb[48], rd[8192];
	uint32_t rl;
	const char *direct[] = {"InitiatorName=iqn.2026-12.test:raw-direct", tn, "AuthMethod=None",
				NULL};
	CHECK(link_open(&l), "connect");
	int st = login_pdu(&l, 0, 3, true, direct, rb, rd, &rl, 0, 0);
	CHECK(st == 0 && (rb[1] & 0x83) == 0x83 && (rb[14] | rb[15]),
	      "security -> full feature in one step (status 0x%04x flags 0x%02x)", st, rb[1]);
	close(l.fd);
	/* Two logins with a key repeated in one request fail with 02/00. */
	const char *dup[] = {"InitiatorName=iqn.2026-12.test:raw-dup", tn, "MaxBurstLength=4096",
			     "MaxBurstLength=8192", NULL};
	expect_login_status(dup, 0x0200, 0, 0, "a key sent twice");
}

/* MaxBurstLength / MaxOutstandingR2T the next full_login offers (and expects back). */
static const char *g_burst = "300000", *g_burst_kv = "MaxBurstLength=300000";
static const char *g_r2t = "4", *g_r2t_kv = "MaxOutstandingR2T=4";

/* Logs in with every operational key; checks each answer. Leaves l in FFP. */
static bool full_login(struct link *l, bool digests)
{
	char tn[300], v[256];
	uint8_t rb[48], rd[8192];
	uint32_t rl;
	snprintf(tn, sizeof(tn), "TargetName=%s", getenv("FAULTLUN_IQN"));
	const char *sec[] = {"InitiatorName=iqn.2026-12.test:raw-full", tn, "SessionType=Normal",
			     "AuthMethod=None", NULL};
	if (!link_open(l))
		return false;
	int st = login_pdu(l, 0, 1, true, sec, rb, rd, &rl, 0, 0);
	CHECK(st == 0, "security stage status 0x%04x", st);
	CHECK(text_get(rd, rl, "AuthMethod", v, sizeof(v)) && !strcmp(v, "None"), "AuthMethod");
	CHECK(text_get(rd, rl, "TargetPortalGroupTag", v, sizeof(v)) && !strcmp(v, "1"),
	      "TargetPortalGroupTag=1 in the first response");
	CHECK((rb[1] & 0x80) && (rb[1] & 3) == 1, "transit to operational stage");
	uint32_t tsih = (uint32_t)rb[14] << 8 | rb[15];
	CHECK(tsih == 0, "TSIH stays 0 until the final response");
	const char *op[] = {digests ? "HeaderDigest=CRC32C,None" : "HeaderDigest=None",
			    digests ? "DataDigest=CRC32C" : "DataDigest=None,CRC32C",
			    "MaxConnections=4",
			    "InitialR2T=No",
			    "ImmediateData=Yes",
			    "MaxRecvDataSegmentLength=4096",
			    g_burst_kv,
			    "FirstBurstLength=400000",
			    "DefaultTime2Wait=0",
			    "DefaultTime2Retain=10",
			    g_r2t_kv,
			    "DataPDUInOrder=No",
			    "DataSequenceInOrder=No",
			    "ErrorRecoveryLevel=2",
			    "IFMarker=No",
			    "X-org.example.Private=1",
			    "MadeUpKey=3",
			    NULL};
	st = login_pdu(l, 1, 3, true, op, rb, rd, &rl, 0, 0);
	CHECK(st == 0, "operational stage status 0x%04x", st);
	const struct {
		const char *key, *want;
	} answers[] = {
	    {"MaxConnections", "1"},
	    {"InitialR2T", "No"},
	    {"ImmediateData", "Yes"},
	    {"MaxBurstLength", g_burst},
	    {"DefaultTime2Wait", "2"},
	    {"DefaultTime2Retain", "0"},
	    {"MaxOutstandingR2T", g_r2t},
	    {"DataPDUInOrder", "Yes"},
	    {"DataSequenceInOrder", "Yes"},
	    {"ErrorRecoveryLevel", "0"},
	    {"IFMarker", "No"},
	    {"X-org.example.Private", "NotUnderstood"},
	    {"MadeUpKey", "NotUnderstood"},
	};
	for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++)
		CHECK(text_get(rd, rl, answers[i].key, v, sizeof(v)) && !strcmp(v, answers[i].want),
		      "%s answered '%s', expected '%s'", answers[i].key,
		      text_get(rd, rl, answers[i].key, v, sizeof(v)) ? v : "(none)",
		      answers[i].want);
	CHECK(text_get(rd, rl, "HeaderDigest", v, sizeof(v)) &&
		  !strcmp(v, digests ? "CRC32C" : "None"),
	      "HeaderDigest");
	CHECK(text_get(rd, rl, "DataDigest", v, sizeof(v)) &&
		  !strcmp(v, digests ? "CRC32C" : "None"),
	      "DataDigest");
	CHECK(text_get(rd, rl, "FirstBurstLength", v, sizeof(v)) && atoi(v) <= atoi(g_burst) &&
		  atoi(v) >= 512,
	      "FirstBurstLength min() and not above MaxBurstLength");
	CHECK(text_get(rd, rl, "MaxRecvDataSegmentLength", v, sizeof(v)) && atoi(v) >= 512,
	      "target declares MaxRecvDataSegmentLength");
	CHECK((rb[1] & 0x80) && (rb[1] & 3) == 3, "transit to full feature phase");
	CHECK(((uint32_t)rb[14] << 8 | rb[15]) != 0, "TSIH assigned in the final response");
	l->hd = l->dd = digests;
	return st == 0;
}

/* Sends a SCSI command; returns after the SCSI Response (or Data-In with S). */
static int scsi(struct link *l, const uint8_t *cdb, uint32_t edtl, bool wr, const void *imm,
		uint32_t immlen, uint8_t *in, uint32_t *inlen, uint32_t cmdsn_override)
{
	uint8_t bhs[48] = {0x01}, rb[48], rd[65536];
	uint32_t rl, got = 0;
	bhs[1] = (uint8_t)(0x80 | (wr ? 0x20 : (edtl ? 0x40 : 0)));
	fl_put_be32(bhs + 16, ++l->itt);
	fl_put_be32(bhs + 20, edtl);
	fl_put_be32(bhs + 24, cmdsn_override ? cmdsn_override : l->cmdsn);
	fl_put_be32(bhs + 28, l->expstatsn);
	memcpy(bhs + 32, cdb, 16);
	if (!cmdsn_override)
		l->cmdsn++;
	send_pdu(l, bhs, imm, immlen, false);
	for (;;) {
		if (!recv_pdu(l, rb, rd, &rl, 2000))
			return -1;
		uint8_t op = rb[0] & 0x3f;
		if (op == 0x25) {
			uint32_t off = fl_get_be32(rb + 40);
			if (in && off + rl <= 65536)
				memcpy(in + off, rd, rl);
			got += rl;
			if (rb[1] & 1) {
				if (inlen)
					*inlen = got;
				return rb[3];
			}
			continue;
		}
		if (op == 0x21) {
			if (inlen)
				*inlen = got;
			return rb[3];
		}
		fprintf(stderr, "unexpected opcode 0x%02x\n", op);
		return -2;
	}
}

/* Sends a Logout Request (close the session) with the link's next ITT. */
static void send_logout(struct link *l)
{
	uint8_t lo[48] = {0x46, 0x80};

	fl_put_be32(lo + 16, ++l->itt);
	fl_put_be32(lo + 24, l->cmdsn);
	send_pdu(l, lo, NULL, 0, false);
}

/* An immediate NOP-Out ping (reply wanted, TTT ffffffffh) with this ITT and CmdSN. */
static void nop_ping(uint8_t bhs[48], uint32_t itt, uint32_t cmdsn)
{
	memset(bhs, 0, 48);
	bhs[0] = 0x40;
	bhs[1] = 0x80;
	fl_put_be32(bhs + 16, itt);
	fl_put_be32(bhs + 20, 0xffffffff);
	fl_put_be32(bhs + 24, cmdsn);
}

/* Digests on both PDUs and data; a bad header digest closes the connection. */
static void check_digests(void)
{
	struct link l;
	uint8_t cdb[16] = {0}, out[4096], in[65536];
	uint32_t n = 0;
	if (!full_login(&l, true))
		return;
	int st = scsi(&l, cdb, 0, false, NULL, 0, NULL, NULL, 0); /* TUR */
	CHECK(st == 0 || st == 2, "TUR with digests: %d", st);
	for (int i = 0; i < 4096; i++)
		out[i] = (uint8_t)(i * 7 + 3);
	uint8_t w10[16] = {0x2a, 0, 0, 0, 0, 8, 0, 0, 8};
	st = scsi(&l, w10, 4096, true, out, 4096, NULL, NULL, 0); /* immediate data */
	CHECK(st == 0, "WRITE(10) with immediate data and data digest: %d", st);
	uint8_t r10[16] = {0x28, 0, 0, 0, 0, 8, 0, 0, 8};
	st = scsi(&l, r10, 4096, false, NULL, 0, in, &n, 0); /* Data-In split at 4096 */
	CHECK(st == 0 && n == 4096 && !memcmp(in, out, 4096), "READ(10) back: st %d n %u", st, n);
	uint8_t bhs[48];
	nop_ping(bhs, ++l.itt, l.cmdsn);
	send_pdu(&l, bhs, NULL, 0, true);
	CHECK(closed_by_peer(&l, 3000), "a header digest error closes the connection");
	close(l.fd);
	/* A data digest error: Reject (data digest error), then the connection closes. */
	if (!full_login(&l, true))
		return;
	uint8_t ping[48], rb[48], rd[8192];
	uint32_t rl;
	nop_ping(ping, ++l.itt, l.cmdsn);
	g_corrupt_dd = 1;
	send_pdu(&l, ping, "abcd", 4, false);
	g_corrupt_dd = 0;
	CHECK(recv_pdu(&l, rb, rd, &rl, 2000) && (rb[0] & 0x3f) == 0x3f && rb[2] == 0x02,
	      "Reject with reason data digest error");
	CHECK(closed_by_peer(&l, 3000), "then the connection closes");
	close(l.fd);
}

/* CmdSN window; NOP ping; SNACK and unknown opcodes rejected. */
static void check_sequencing(void)
{
	struct link l;
	uint8_t cdb[16] = {0}, rb[48], rd[8192];
	uint32_t rl;
	if (!full_login(&l, false))
		return;
	int st = scsi(&l, cdb, 0, false, NULL, 0, NULL, NULL, l.cmdsn + 1000);
	CHECK(st == -1, "a command above MaxCmdSN is ignored (got %d)", st);
	st = scsi(&l, cdb, 0, false, NULL, 0, NULL, NULL, l.cmdsn - 5);
	CHECK(st == -1, "a command below ExpCmdSN is ignored (got %d)", st);
	st = scsi(&l, cdb, 0, false, NULL, 0, NULL, NULL, 0);
	CHECK(st == 0 || st == 2, "the in-window command is answered (%d)", st);
	/* NOP-Out ping, immediate */
	uint8_t bhs[48];
	nop_ping(bhs, 0x4242, l.cmdsn);
	send_pdu(&l, bhs, "ping", 4, false);
	CHECK(recv_pdu(&l, rb, rd, &rl, 2000) && (rb[0] & 0x3f) == 0x20 &&
		  fl_get_be32(rb + 16) == 0x4242 && rl == 4 && !memcmp(rd, "ping", 4),
	      "NOP-In echoes the ping");
	CHECK(fl_get_be32(rb + 28) == l.cmdsn, "ExpCmdSN %u after an immediate ping, expected %u",
	      fl_get_be32(rb + 28), l.cmdsn);
	CHECK((int32_t)(fl_get_be32(rb + 32) - fl_get_be32(rb + 28)) >= 0, "MaxCmdSN >= ExpCmdSN");
	/* SNACK at ERL 0 */
	uint8_t snack[48] = {0x10, 0x80};
	fl_put_be32(snack + 16, 0xffffffff);
	send_pdu(&l, snack, NULL, 0, false);
	CHECK(recv_pdu(&l, rb, rd, &rl, 2000) && (rb[0] & 0x3f) == 0x3f && rb[2] == 0x04 &&
		  rl == 48 && rd[0] == 0x10,
	      "SNACK rejected (protocol error) with its header");
	uint8_t unk[48] = {0x1c, 0x80};
	send_pdu(&l, unk, NULL, 0, false);
	CHECK(recv_pdu(&l, rb, rd, &rl, 2000) && (rb[0] & 0x3f) == 0x3f && rb[2] == 0x05,
	      "unknown opcode rejected (command not supported)");
	/* Logout */
	send_logout(&l);
	CHECK(recv_pdu(&l, rb, rd, &rl, 2000) && (rb[0] & 0x3f) == 0x26 && rb[2] == 0,
	      "logout response");
	CHECK(closed_by_peer(&l, 3000), "closed after logout");
	close(l.fd);
}

/* Unsolicited Data-Out with a wrong DataSN closes the connection. */
static void check_dataout(void)
{
	struct link l;
	uint8_t buf[1024] = {0}, rb[48], rd[8192];
	uint32_t rl;
	if (!full_login(&l, false))
		return;
	/* InitialR2T=No: 1024 bytes, 512 immediate, then 512 unsolicited with DataSN 5. */
	uint8_t bhs[48] = {0x01, 0x20}; /* W, F clear: unsolicited data follows */
	uint8_t w10[16] = {0x2a, 0, 0, 0, 0, 16, 0, 0, 2};
	fl_put_be32(bhs + 16, ++l.itt);
	fl_put_be32(bhs + 20, 1024);
	fl_put_be32(bhs + 24, l.cmdsn++);
	memcpy(bhs + 32, w10, 16);
	send_pdu(&l, bhs, buf, 512, false);
	uint8_t d[48] = {0x05, 0x80};
	fl_put_be32(d + 16, l.itt);
	fl_put_be32(d + 20, 0xffffffff);
	fl_put_be32(d + 36, 5);
	fl_put_be32(d + 40, 512);
	send_pdu(&l, d, buf, 512, false);
	CHECK(closed_by_peer(&l, 3000), "wrong DataSN closes the connection");
	close(l.fd);
	/* The same with DataSN 0 completes. */
	if (!full_login(&l, false))
		return;
	fl_put_be32(bhs + 16, ++l.itt);
	fl_put_be32(bhs + 24, l.cmdsn++);
	send_pdu(&l, bhs, buf, 512, false);
	fl_put_be32(d + 16, l.itt);
	fl_put_be32(d + 36, 0);
	send_pdu(&l, d, buf, 512, false);
	/* GOOD, or the power-on unit attention of a new nexus. */
	CHECK(recv_pdu(&l, rb, rd, &rl, 2000) && (rb[0] & 0x3f) == 0x21 &&
		  (rb[3] == 0 || rb[3] == 2),
	      "unsolicited write is answered");
	close(l.fd);
}

/* Discovery session: Irrelevant keys and SendTargets. */
static void check_discovery(void)
{
	struct link l;
	uint8_t rb[48], rd[8192];
	uint32_t rl;
	char v[256];
	CHECK(link_open(&l), "connect");
	const char *kv[] = {"InitiatorName=iqn.2026-12.test:raw-disc",
			    "SessionType=Discovery",
			    "InitialR2T=Yes",
			    "MaxBurstLength=4096",
			    "HeaderDigest=None",
			    NULL};
	int st = login_pdu(&l, 1, 3, true, kv, rb, rd, &rl, 0, 0);
	CHECK(st == 0, "discovery login 0x%04x", st);
	CHECK(text_get(rd, rl, "InitialR2T", v, sizeof(v)) && !strcmp(v, "Irrelevant"),
	      "InitialR2T Irrelevant in discovery");
	CHECK(text_get(rd, rl, "MaxBurstLength", v, sizeof(v)) && !strcmp(v, "Irrelevant"),
	      "MaxBurstLength Irrelevant in discovery");
	uint8_t bhs[48] = {0x04, 0x80};
	fl_put_be32(bhs + 16, ++l.itt);
	fl_put_be32(bhs + 20, 0xffffffff);
	fl_put_be32(bhs + 24, l.cmdsn);
	send_pdu(&l, bhs, "SendTargets=All", 16, false);
	CHECK(recv_pdu(&l, rb, rd, &rl, 2000) && (rb[0] & 0x3f) == 0x24, "text response");
	CHECK(text_get(rd, rl, "TargetName", v, sizeof(v)) && !strcmp(v, getenv("FAULTLUN_IQN")),
	      "SendTargets lists the target");
	CHECK(text_get(rd, rl, "TargetAddress", v, sizeof(v)) && strstr(v, ",1"),
	      "TargetAddress with the portal group tag");
	/* SCSI commands are not allowed in a discovery session. */
	uint8_t cmd[48] = {0x01, 0x80};
	fl_put_be32(cmd + 16, ++l.itt);
	fl_put_be32(cmd + 24, l.cmdsn);
	send_pdu(&l, cmd, NULL, 0, false);
	CHECK(recv_pdu(&l, rb, rd, &rl, 2000) && (rb[0] & 0x3f) == 0x3f, "SCSI command rejected");
	close(l.fd);
}

/* Target pings (NOP-In with a TTT) and an Async Message asking for logout. */
static void check_async(void)
{
	struct link l;
	uint8_t rb[48], rd[8192];
	uint32_t rl;
	int pings = 0, asyncs = 0;
	if (!full_login(&l, false))
		return;
	for (int i = 0; i < 40 && !(pings >= 2 && asyncs); i++) {
		if (!recv_pdu(&l, rb, rd, &rl, 3000))
			break;
		uint8_t op = rb[0] & 0x3f;
		if (op == 0x20 && fl_get_be32(rb + 16) == 0xffffffff && fl_get_be32(rb + 20) != 0xffffffff) {
			pings++;
			uint8_t no[48] = {0x40, 0x80};
			fl_put_be32(no + 16, 0xffffffff);
			memcpy(no + 20, rb + 20, 4); /* echo the TTT */
			fl_put_be32(no + 24, l.cmdsn);
			fl_put_be32(no + 28, l.expstatsn);
			send_pdu(&l, no, NULL, 0, false);
		} else if (op == 0x32) {
			asyncs++;
			CHECK(rb[36] == 1, "AsyncEvent %u, expected 1 (logout request)", rb[36]);
			CHECK((rb[42] << 8 | rb[43]) == 7, "Parameter3 %u, expected 7",
			      rb[42] << 8 | rb[43]);
		}
	}
	CHECK(pings >= 2, "target pings seen: %d", pings);
	CHECK(asyncs == 1, "logout requests seen: %d", asyncs);
	send_logout(&l);
	bool got = false;
	while (recv_pdu(&l, rb, rd, &rl, 2000))
		if ((rb[0] & 0x3f) == 0x26) {
			got = rb[2] == 0;
			break;
		}
	CHECK(got, "logout answered");
	close(l.fd);
}

/* ABORT TASK of a write still waiting for its Data-Out (RFC 7143 11.5.1). */
static void check_abort_pending(void)
{
	struct link l;
	uint8_t rb[48], rd[8192], buf[4096] = {0}, cdb[16] = {0};
	uint32_t rl;
	if (!full_login(&l, false))
		return;
	scsi(&l, cdb, 0, false, NULL, 0, NULL, NULL, 0); /* eat the power-on UA */
	/* WRITE(10) of 8 blocks, F set: no unsolicited data, so the target sends an R2T. */
	uint8_t bhs[48] = {0x01, 0xa0};
	uint8_t w10[16] = {0x2a, 0, 0, 0, 0, 32, 0, 0, 8};
	uint32_t witt = ++l.itt, wsn = l.cmdsn++;
	fl_put_be32(bhs + 16, witt);
	fl_put_be32(bhs + 20, 4096);
	fl_put_be32(bhs + 24, wsn);
	memcpy(bhs + 32, w10, 16);
	send_pdu(&l, bhs, NULL, 0, false);
	CHECK(recv_pdu(&l, rb, rd, &rl, 2000) && (rb[0] & 0x3f) == 0x31 && fl_get_be32(rb + 16) == witt &&
		  fl_get_be32(rb + 44) == 4096 && fl_get_be32(rb + 40) == 0,
	      "R2T for the whole write");
	uint32_t ttt = fl_get_be32(rb + 20);
	uint8_t tmf[48] = {0x42, 0x81}; /* immediate ABORT TASK */
	fl_put_be32(tmf + 16, ++l.itt);
	fl_put_be32(tmf + 20, witt);
	fl_put_be32(tmf + 24, l.cmdsn);
	fl_put_be32(tmf + 32, wsn);
	send_pdu(&l, tmf, NULL, 0, false);
	CHECK(recv_pdu(&l, rb, rd, &rl, 2000) && (rb[0] & 0x3f) == 0x22 && rb[2] == 0,
	      "ABORT TASK complete (got opcode 0x%02x response %u)", rb[0] & 0x3f, rb[2]);
	/* Data-Out for the aborted task is discarded, not answered. */
	uint8_t d[48] = {0x05, 0x80};
	fl_put_be32(d + 16, witt);
	fl_put_be32(d + 20, ttt);
	send_pdu(&l, d, buf, 4096, false);
	int st = scsi(&l, cdb, 0, false, NULL, 0, NULL, NULL, 0);
	CHECK(st == 0, "the next command is answered GOOD, nothing for the aborted write (%d)", st);
	close(l.fd);
}

/* xorshift64: a seeded stream for the robustness check. */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;
/* Next value of the stream. */
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* Drains whatever the target sent, without blocking. */
static void drain(struct link *l)
{
	uint8_t buf[65536];
	struct pollfd pfd = {.fd = l->fd, .events = POLLIN};
	while (poll(&pfd, 1, 0) == 1 && read(l->fd, buf, sizeof(buf)) > 0)
		;
}

/*
 * Robustness: many connections send random PDUs (random opcodes, flags,
 * lengths, fields; before and after login); the target must keep serving a
 * well-behaved session afterwards.
 */
static void check_garbage(void)
{
	static const uint8_t ops[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x10, 0x1c, 0x3f};
	uint8_t data[4096];
	for (int conn = 0; conn < 60; conn++) {
		struct link l;
		bool logged = conn % 2 ? full_login(&l, conn % 4 == 1) : link_open(&l);
		if (!logged) {
			if (l.fd >= 0)
				close(l.fd);
			continue;
		}
		for (int k = 0; k < 40; k++) {
			uint8_t bhs[48];
			for (int i = 0; i < 48; i++)
				bhs[i] = (uint8_t)rnd();
			bhs[0] = ops[rnd() % sizeof(ops)] | (rnd() & 1 ? 0x40 : 0);
			bhs[4] = rnd() % 4 ? 0 : (uint8_t)(rnd() % 3);
			if (rnd() % 2)
				fl_put_be32(bhs + 24, l.cmdsn++);
			uint32_t dlen = (uint32_t)(rnd() % 3 ? rnd() % 1024 : rnd() % sizeof(data));
			for (uint32_t i = 0; i < dlen; i++)
				data[i] = (uint8_t)rnd();
			if (bhs[4]) { /* AHS bytes ride in front of the data in this crude sender */
				dlen = dlen < bhs[4] * 4u ? bhs[4] * 4u : dlen;
			}
			send_pdu(&l, bhs, data, dlen, rnd() % 16 == 0);
			drain(&l);
		}
		close(l.fd);
	}
	/* A healthy session still works. */
	struct link l;
	uint8_t cdb[16] = {0};
	CHECK(full_login(&l, false), "login after the garbage");
	int st = scsi(&l, cdb, 0, false, NULL, 0, NULL, NULL, 0);
	CHECK(st == 0 || st == 2, "TUR answered after the garbage (%d)", st);
	close(l.fd);
}

/* A peer that never reads its responses does not stall another session. */
static void check_slow_reader(void)
{
	struct link lazy, ok;
	uint8_t cdb[16] = {0};
	if (!full_login(&lazy, false))
		return;
	int rcv = 4096;
	setsockopt(lazy.fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	for (int i = 0; i < 100; i++) {
		uint8_t bhs[48] = {0x01, 0xc0};
		uint8_t r10[16] = {0x28, 0, 0, 0, 0, 0, 0, 0x02, 0x00}; /* 512 blocks */
		fl_put_be32(bhs + 16, ++lazy.itt);
		fl_put_be32(bhs + 20, 512 * 512);
		fl_put_be32(bhs + 24, lazy.cmdsn++);
		memcpy(bhs + 32, r10, 16);
		send_pdu(&lazy, bhs, NULL, 0, false);
	}
	/* 25 MiB of Data-In is now stuck behind the lazy reader's socket. */
	bool logged = full_login(&ok, false);
	CHECK(logged, "a second session logs in while the first does not read");
	if (logged) {
		int st = scsi(&ok, cdb, 0, false, NULL, 0, NULL, NULL, 0);
		CHECK(st == 0 || st == 2, "the second session is answered (%d)", st);
		uint8_t in[4096];
		uint32_t n = 0;
		uint8_t r8[16] = {0x28, 0, 0, 0, 0, 0, 0, 0, 8};
		st = scsi(&ok, r8, 4096, false, NULL, 0, in, &n, 0);
		CHECK(st == 0 && n == 4096, "the second session reads (%d, %u bytes)", st, n);
		close(ok.fd);
	}
	close(lazy.fd);
}

/* Logout reasons, text continuation, an extended CDB, TARGET COLD RESET. */
static void check_misc(void)
{
	struct link a, b;
	uint8_t rb[48], rd[8192];
	uint32_t rl;
	char v[256];
	if (!full_login(&a, false) || !full_login(&b, false))
		return;
	/* Logout "remove the connection for recovery": not supported at ERL 0. */
	uint8_t lo[48] = {0x46, 0x82};
	fl_put_be32(lo + 16, ++a.itt);
	fl_put_be32(lo + 24, a.cmdsn);
	send_pdu(&a, lo, NULL, 0, false);
	CHECK(recv_pdu(&a, rb, rd, &rl, 2000) && (rb[0] & 0x3f) == 0x26 && rb[2] == 2,
	      "logout reason 2 answered 'recovery not supported' (%u)", rb[2]);
	/* Close connection with a CID we do not have. */
	lo[1] = 0x81;
	lo[20] = 0x77;
	fl_put_be32(lo + 16, ++a.itt);
	send_pdu(&a, lo, NULL, 0, false);
	CHECK(recv_pdu(&a, rb, rd, &rl, 2000) && (rb[0] & 0x3f) == 0x26 && rb[2] == 1,
	      "logout of an unknown CID answered 'CID not found' (%u)", rb[2]);
	/* A text request in two parts (C bit). */
	uint8_t tx[48] = {0x44, 0x40};
	fl_put_be32(tx + 16, ++a.itt);
	fl_put_be32(tx + 20, 0xffffffff);
	fl_put_be32(tx + 24, a.cmdsn);
	send_pdu(&a, tx, "SendTar", 7, false);
	CHECK(recv_pdu(&a, rb, rd, &rl, 2000) && (rb[0] & 0x3f) == 0x24 && !(rb[1] & 0x80) &&
		  fl_get_be32(rb + 20) != 0xffffffff,
	      "continued text request answered with an empty response and a TTT");
	tx[1] = 0x80;
	memcpy(tx + 20, rb + 20, 4);
	send_pdu(&a, tx, "gets=All", 9, false);
	CHECK(recv_pdu(&a, rb, rd, &rl, 2000) && (rb[0] & 0x3f) == 0x24 && (rb[1] & 0x80) &&
		  text_get(rd, rl, "TargetName", v, sizeof(v)),
	      "the whole text request is answered");
	/* A 32-byte CDB in an extended CDB AHS (RFC 7143 11.2.1.5): answered. */
	uint8_t cmd[48 + 20] = {0x41, 0x80};
	cmd[4] = 5; /* TotalAHSLength: 5 words */
	fl_put_be32(cmd + 16, ++a.itt);
	fl_put_be32(cmd + 24, a.cmdsn);
	cmd[32] = 0x7f;				/* VARIABLE LENGTH CDB */
	cmd[48] = 0, cmd[49] = 17, cmd[50] = 1; /* AHSLength 17, type 1 */
	CHECK(write(a.fd, cmd, sizeof(cmd)) == (ssize_t)sizeof(cmd), "write");
	CHECK(recv_pdu(&a, rb, rd, &rl, 2000) && (rb[0] & 0x3f) == 0x21 && fl_get_be32(rb + 16) == a.itt,
	      "a command with an extended CDB gets a SCSI Response (status %u)", rb[3]);
	close(a.fd);
	/* TARGET COLD RESET on b: answered, then the target closes its connections. */
	struct link c2;
	bool have_c = full_login(&c2, false);
	uint8_t tmf[48] = {0x42, 0x87};
	fl_put_be32(tmf + 16, ++b.itt);
	fl_put_be32(tmf + 20, 0xffffffff);
	fl_put_be32(tmf + 24, b.cmdsn);
	send_pdu(&b, tmf, NULL, 0, false);
	CHECK(recv_pdu(&b, rb, rd, &rl, 2000) && (rb[0] & 0x3f) == 0x22 && rb[2] == 0,
	      "TARGET COLD RESET complete");
	CHECK(closed_by_peer(&b, 3000), "the resetting connection is closed after the response");
	CHECK(!have_c || closed_by_peer(&c2, 3000), "every other connection is closed too");
	close(b.fd);
	if (have_c)
		close(c2.fd);
}

/* An initiator that ignores the logout request loses its connection. */
static void check_logout_ignored(void)
{
	struct link l;
	uint8_t rb[48], rd[8192];
	uint32_t rl;
	bool seen = false;
	if (!full_login(&l, false))
		return;
	while (!seen && recv_pdu(&l, rb, rd, &rl, 2000))
		seen = (rb[0] & 0x3f) == 0x32 && rb[36] == 1;
	CHECK(seen, "logout request received");
	int64_t t0 = time(NULL);
	CHECK(closed_by_peer(&l, 4000), "connection dropped after Parameter3 seconds");
	CHECK(time(NULL) - t0 <= 3, "dropped in time");
	close(l.fd);
}

/* Runs the CHECK named on the command line. */
/* R2Ts never exceed MaxBurstLength, nor MaxOutstandingR2T at a time (RFC 7143 11.8). */
static void check_r2t(void)
{
	struct link l;
	uint8_t rb[48], rd[8192], cdb[16] = {0}, buf[8192] = {0};
	uint32_t rl;
	g_burst = "8192", g_burst_kv = "MaxBurstLength=8192";
	g_r2t = "2", g_r2t_kv = "MaxOutstandingR2T=2";
	if (!full_login(&l, false))
		return;
	scsi(&l, cdb, 0, false, NULL, 0, NULL, NULL, 0); /* the power-on UA */
	/* WRITE(10) of 64 KiB, no unsolicited data (F set). */
	uint8_t bhs[48] = {0x01, 0xa0};
	uint8_t w10[16] = {0x2a, 0, 0, 0, 0x10, 0, 0, 0, 128};
	uint32_t itt = ++l.itt;
	fl_put_be32(bhs + 16, itt);
	fl_put_be32(bhs + 20, 65536);
	fl_put_be32(bhs + 24, l.cmdsn++);
	memcpy(bhs + 32, w10, 16);
	send_pdu(&l, bhs, NULL, 0, false);
	uint32_t got = 0, next_r2tsn = 0;
	int outstanding = 0, max_out = 0, status = -1;
	struct {
		uint32_t ttt, off, len;
	} pend[16];
	int npend = 0;
	while (status < 0) {
		/* Read until nothing more arrives for a moment, then answer one R2T. */
		while (recv_pdu(&l, rb, rd, &rl, npend ? 100 : 2000)) {
			uint8_t op = rb[0] & 0x3f;
			if (op == 0x31) {
				CHECK(fl_get_be32(rb + 36) == next_r2tsn, "R2TSN %u, expected %u",
				      fl_get_be32(rb + 36), next_r2tsn);
				next_r2tsn++;
				CHECK(fl_get_be32(rb + 44) <= 8192,
				      "R2T asks %u bytes, MaxBurstLength 8192", fl_get_be32(rb + 44));
				if (npend < 16) {
					pend[npend].ttt = fl_get_be32(rb + 20);
					pend[npend].off = fl_get_be32(rb + 40);
					pend[npend].len = fl_get_be32(rb + 44);
					npend++;
				}
				outstanding++;
				if (outstanding > max_out)
					max_out = outstanding;
			} else if (op == 0x21) {
				status = rb[3];
				break;
			}
		}
		if (status >= 0 || !npend)
			break;
		/* Answer the oldest R2T with one Data-Out sequence. */
		uint8_t d[48] = {0x05, 0x80};
		fl_put_be32(d + 16, itt);
		fl_put_be32(d + 20, pend[0].ttt);
		fl_put_be32(d + 40, pend[0].off);
		send_pdu(&l, d, buf, pend[0].len, false);
		got += pend[0].len;
		memmove(pend, pend + 1, (size_t)--npend * sizeof(pend[0]));
		outstanding--;
	}
	CHECK(status == 0, "the write completes GOOD (%d)", status);
	CHECK(got == 65536, "all 64 KiB solicited (%u)", got);
	CHECK(max_out == 2, "at most MaxOutstandingR2T (2) R2Ts at a time, saw %d", max_out);
	CHECK(next_r2tsn == 8, "8 R2Ts of 8 KiB, saw %u", next_r2tsn);
	close(l.fd);
}

/* Data-In: at most MaxRecvDataSegmentLength each, F at every MaxBurstLength, S last. */
static void check_datain(void)
{
	struct link l;
	uint8_t rb[48], rd[8192], cdb[16] = {0};
	uint32_t rl;
	g_burst = "8192", g_burst_kv = "MaxBurstLength=8192";
	if (!full_login(&l, false)) /* declares MaxRecvDataSegmentLength=4096 */
		return;
	scsi(&l, cdb, 0, false, NULL, 0, NULL, NULL, 0); /* the power-on UA */
	uint8_t bhs[48] = {0x01, 0xc0};
	uint8_t r10[16] = {0x28, 0, 0, 0, 0, 0, 0, 0, 64}; /* 32 KiB */
	uint32_t itt = ++l.itt;
	fl_put_be32(bhs + 16, itt);
	fl_put_be32(bhs + 20, 32768);
	fl_put_be32(bhs + 24, l.cmdsn++);
	memcpy(bhs + 32, r10, 16);
	send_pdu(&l, bhs, NULL, 0, false);
	uint32_t off = 0, sn = 0;
	bool status = false;
	while (!status && recv_pdu(&l, rb, rd, &rl, 2000)) {
		if ((rb[0] & 0x3f) != 0x25)
			break;
		CHECK(fl_get_be32(rb + 16) == itt, "ITT");
		CHECK(fl_get_be32(rb + 36) == sn, "DataSN %u, expected %u", fl_get_be32(rb + 36), sn);
		CHECK(fl_get_be32(rb + 40) == off, "Buffer Offset %u, expected %u", fl_get_be32(rb + 40), off);
		CHECK(rl <= 4096, "Data-In of %u bytes above MaxRecvDataSegmentLength 4096", rl);
		off += rl;
		sn++;
		bool f = rb[1] & 0x80;
		CHECK(f == (off % 8192 == 0), "F bit %d at offset %u (MaxBurstLength 8192)", f,
		      off);
		status = rb[1] & 0x01;
		CHECK(!status || off == 32768, "status before the last Data-In");
	}
	CHECK(status && off == 32768 && rb[3] == 0, "32 KiB then GOOD in the last Data-In");
	close(l.fd);
}

/* Runs the CHECK named on the command line. */
/*
 * Persistent reservations follow the initiator port across logins (SPC-4
 * r37 5.12.1, RFC 7143 4.4.3): one port registers and takes a Write
 * Exclusive reservation, logs out, logs in again with the same ISID and
 * InitiatorName and writes: GOOD, it still holds the reservation; another
 * port (another ISID) is refused RESERVATION CONFLICT; the holder's
 * unregistration ends it.
 */
/* TEST UNIT READY until GOOD (a new nexus's unit attentions); false after 4 tries. */
static bool clear_ua(struct link *l)
{
	static const uint8_t tur[16] = {0}; /* scsi() copies a whole 16-byte CDB field */

	for (int i = 0; i < 4; i++)
		if (scsi(l, tur, 0, false, NULL, 0, NULL, NULL, 0) == 0)
			return true;
	return false;
}

static void check_pr_relogin(void)
{
	static const uint8_t reg[16] = {0x5f, 0x00, 0, 0, 0, 0, 0, 0, 24, 0},
			     res[16] = {0x5f, 0x01, 0x01, 0, 0, 0, 0, 0, 24, 0},
			     wr[16] = {0x2a, 0, 0, 0, 0, 8, 0, 0, 1, 0};
	uint8_t p[24] = {0}, blk[512] = {0}, rb[48], rd[256];
	uint32_t rl;
	struct link a, b, c;

	CHECK(full_login(&a, false) && clear_ua(&a), "first login");
	p[15] = 0x22; /* SERVICE ACTION RESERVATION KEY 0x22 */
	CHECK(scsi(&a, reg, 24, true, p, 24, NULL, NULL, 0) == 0, "REGISTER");
	memset(p, 0, sizeof(p));
	p[7] = 0x22; /* RESERVATION KEY */
	CHECK(scsi(&a, res, 24, true, p, 24, NULL, NULL, 0) == 0, "RESERVE Write Exclusive");
	send_logout(&a);
	CHECK(recv_pdu(&a, rb, rd, &rl, 2000) && (rb[0] & 0x3f) == 0x26, "Logout Response");
	close(a.fd);
	g_same_q = a.isid_q;
	CHECK(full_login(&b, false) && clear_ua(&b), "second login, the same initiator port");
	g_same_q = 0;
	CHECK(scsi(&b, wr, 512, true, blk, 512, NULL, NULL, 0) == 0,
	      "WRITE by the holder after its new login");
	CHECK(full_login(&c, false) && clear_ua(&c), "login of another initiator port");
	CHECK(scsi(&c, wr, 512, true, blk, 512, NULL, NULL, 0) == 0x18,
	      "WRITE by another port: RESERVATION CONFLICT");
	memset(p, 0, sizeof(p));
	p[7] = 0x22; /* unregister (SERVICE ACTION RESERVATION KEY 0): the reservation ends */
	CHECK(scsi(&b, reg, 24, true, p, 24, NULL, NULL, 0) == 0, "unregister");
	CHECK(scsi(&c, wr, 512, true, blk, 512, NULL, NULL, 0) == 0, "WRITE by the other port");
	close(b.fd);
	close(c.fd);
}

int main(int argc, char **argv)
{
	if (argc < 2 || !getenv("FAULTLUN_PORT") || !getenv("FAULTLUN_ADDR") ||
	    !getenv("FAULTLUN_IQN")) {
		fprintf(stderr, "usage: iscsi_raw CHECK (under faultlun serve --run)\n");
		return 2;
	}
	const char *c = argv[1];
	signal(SIGPIPE, SIG_IGN); /* the target closes connections we still write to */
	if (!strcmp(c, "login-status"))
		check_login_status();
	else if (!strcmp(c, "digests"))
		check_digests();
	else if (!strcmp(c, "sequencing"))
		check_sequencing();
	else if (!strcmp(c, "dataout"))
		check_dataout();
	else if (!strcmp(c, "discovery"))
		check_discovery();
	else if (!strcmp(c, "abort-pending"))
		check_abort_pending();
	else if (!strcmp(c, "logout-ignored"))
		check_logout_ignored();
	else if (!strcmp(c, "misc"))
		check_misc();
	else if (!strcmp(c, "datain"))
		check_datain();
	else if (!strcmp(c, "r2t"))
		check_r2t();
	else if (!strcmp(c, "slow-reader"))
		check_slow_reader();
	else if (!strcmp(c, "garbage"))
		check_garbage();
	else if (!strcmp(c, "async"))
		check_async();
	else if (!strcmp(c, "pr-relogin"))
		check_pr_relogin();
	else {
		fprintf(stderr, "unknown check %s\n", c);
		return 2;
	}
	if (!fl_failures)
		printf("%s: ok\n", c);
	return fl_test_exit(c);
}
