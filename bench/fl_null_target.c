/* SPDX-License-Identifier: MIT */
/*
 * fl_null_target.c - the least an iSCSI target must do, for the benchmarks.
 *
 * One thread, one epoll set (level-triggered, as faultlun's portal), TCP
 * connections on a loopback portal. A connection logs in (RFC 7143 6, 11.12:
 * every offered key answered, no authentication, no digests, ERL 0), then
 * every SCSI command is answered GOOD: commands that read get the Data-In
 * their Expected Data Transfer Length asks for, from one static buffer, with
 * the status in the last Data-In (11.7.4, "phase collapse"); INQUIRY, READ
 * CAPACITY(10/16) and REPORT LUNS get answers a libiscsi initiator can start
 * with. Writes take immediate data and unsolicited Data-Out as negotiated
 * (ImmediateData, InitialR2T, FirstBurstLength: 13.10, 13.11, 13.14) and
 * one R2T at a time for the rest (MaxOutstandingR2T=1, 13.17); the data is
 * dropped. NOP-Out is answered, Logout ends the connection, task management
 * answers "function complete", Text gets an empty answer.
 *
 * It keeps no per-block state and copies no data: a read of a connection
 * reads as many PDUs as the socket holds and their answers leave in one
 * writev. That is the ceiling bench/ceiling.sh measures faultlun against:
 * the same client, the same kernel, the same TCP path, and nothing else.
 * Bounded: MAX_CONNS connections, MAX_TASKS writes in flight per
 * connection, PDUs of at most OUR_MAX_RECV_DSL data bytes (anything outside
 * that ends the connection with a line on stderr), and a read gets at most
 * MAX_DATAIN_PDUS Data-In PDUs (2 MiB with libiscsi's 256 KiB
 * MaxRecvDataSegmentLength), the rest reported as residual underflow.
 *
 *   fl_null_target [-l ADDR:PORT] [-s BYTES]
 *     -l  portal (default 127.0.0.1:0, a free port)  -s  LUN size (default 256 MiB)
 * Prints "listening on ADDR:PORT" once it accepts; stops on SIGINT or SIGTERM.
 */
#include "iscsi_proto.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_CONNS 16
#define MAX_TASKS 256		/* writes waiting for data, per connection */
#define CMD_WINDOW 128		/* MaxCmdSN - ExpCmdSN + 1 */
#define OUR_MAX_RECV_DSL 262144 /* what we declare (RFC 7143 13.12) */
#define OUR_MAX_BURST 262144	/* 13.13 */
#define OUR_FIRST_BURST 65536	/* 13.14 */
#define BLOCK_SIZE 512
#define RX_BUF (2 * OUR_MAX_RECV_DSL + 4096)
#define TX_IOV 1024
#define TX_ARENA (TX_IOV * 64)
#define MAX_DATAIN_PDUS 8		  /* per command: longer reads end in an underflow */
#define TX_ROOM_IOV (3 * MAX_DATAIN_PDUS) /* iovecs one PDU's answer may take at most */
#define TX_ROOM_ARENA 4096		  /* arena bytes one PDU's answer may take at most */
#define ZERO_BYTES (256u << 10)		  /* the static data-in buffer */

/* A write waiting for its data. */
struct task {
	bool used;
	uint32_t itt, ttt, edtl, received, asked, r2tsn;
	uint8_t lun[8];
};

struct conn {
	int fd;
	bool full_feature, logout, declared_dsl;
	bool want_out; /* epoll interest is EPOLLOUT (answers wait), else EPOLLIN */
	uint32_t stat_sn, exp_cmd_sn;
	uint32_t peer_max_dsl; /* the initiator's MaxRecvDataSegmentLength */
	uint32_t max_burst, first_burst;
	bool initial_r2t, immediate_data;
	uint32_t next_ttt;
	uint16_t tsih;
	struct task tasks[MAX_TASKS];
	unsigned ntasks;
	uint8_t rx[RX_BUF];
	size_t rx_len;
	struct iovec iov[TX_IOV];
	unsigned niov, iov_done;
	uint8_t arena[TX_ARENA];
	size_t arena_len;
};

static const uint8_t zeroes[ZERO_BYTES];
static uint64_t lun_bytes = 256ull << 20;
static volatile sig_atomic_t stopping;
static struct conn *conns[MAX_CONNS];
static uint16_t next_tsih = 1;

/* Bytes of padding after a data segment of len bytes. */
static uint32_t pad4(uint32_t len)
{
	return (4 - (len & 3)) & 3;
}

/* Logs a connection's end and closes it. */
static void conn_end(struct conn *c, const char *why)
{
	if (why)
		fprintf(stderr, "fl_null_target: connection closed: %s\n", why);
	for (unsigned i = 0; i < MAX_CONNS; i++)
		if (conns[i] == c)
			conns[i] = NULL;
	close(c->fd);
	free(c);
}

/* True when the transmit side has room for one more PDU's answer. */
static bool tx_room(const struct conn *c)
{
	return c->niov + TX_ROOM_IOV <= TX_IOV && c->arena_len + TX_ROOM_ARENA <= TX_ARENA;
}

/* Takes len bytes of the arena (len <= TX_ROOM_ARENA, room checked by the caller). */
static uint8_t *tx_alloc(struct conn *c, size_t len)
{
	uint8_t *p = c->arena + c->arena_len;

	c->arena_len += (len + 7) & ~(size_t)7;
	memset(p, 0, len);
	return p;
}

/* Queues an iovec. */
static void tx_iov(struct conn *c, const void *p, size_t len)
{
	if (len)
		c->iov[c->niov++] = (struct iovec){(void *)p, len};
}

/*
 * A new target PDU header with ExpCmdSN and MaxCmdSN, and the data segment
 * (data may be NULL for none); returns the header for the caller's fields.
 */
static uint8_t *tx_pdu(struct conn *c, uint8_t opcode, const void *data, uint32_t dlen)
{
	uint8_t *h = tx_alloc(c, ISCSI_BHS_LEN);

	h[BHS_OPCODE] = opcode;
	fl_put_be24(h + BHS_DSL, dlen);
	fl_put_be32(h + BHS_EXPCMDSN, c->exp_cmd_sn);
	fl_put_be32(h + BHS_MAXCMDSN, c->exp_cmd_sn + CMD_WINDOW - 1);
	tx_iov(c, h, ISCSI_BHS_LEN);
	tx_iov(c, data, dlen);
	tx_iov(c, zeroes, pad4(dlen));
	return h;
}

/* Writes what the socket takes; 0 (maybe some left), -1 on a dead socket. */
static int tx_flush(struct conn *c)
{
	while (c->iov_done < c->niov) {
		unsigned n = c->niov - c->iov_done;
		ssize_t w = writev(c->fd, c->iov + c->iov_done, n > 1024 ? 1024 : (int)n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
		}
		while (w > 0) {
			struct iovec *v = &c->iov[c->iov_done];

			if ((size_t)w >= v->iov_len) {
				w -= (ssize_t)v->iov_len;
				c->iov_done++;
			} else {
				v->iov_base = (uint8_t *)v->iov_base + w;
				v->iov_len -= (size_t)w;
				w = 0;
			}
		}
	}
	c->niov = c->iov_done = 0;
	c->arena_len = 0;
	return 0;
}

/* Appends "key=value\0" to a text segment of at most max bytes; false when full. */
static bool kv_add(char *seg, size_t max, size_t *len, const char *key, const char *value)
{
	int n = snprintf(seg + *len, max - *len, "%s=%s", key, value);

	if (n < 0 || (size_t)n + 1 > max - *len)
		return false;
	*len += (size_t)n + 1;
	return true;
}

/* The decimal value of s bounded to [lo, hi]; def when it is not a number. */
static uint32_t num(const char *s, uint32_t lo, uint32_t hi, uint32_t def)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (end == s || *end)
		return def;
	return v < lo ? lo : v > hi ? hi : (uint32_t)v;
}

/*
 * The answer to one login key (RFC 7143 13): NULL when none is due. buf
 * holds numbers. Records what the session needs.
 */
static const char *login_key(struct conn *c, const char *key, const char *val, char *buf,
			     size_t bufsz, bool *normal)
{
	if (!strcmp(key, "SessionType")) {
		*normal = strcmp(val, "Discovery") != 0;
		return NULL;
	}
	if (!strcmp(key, "InitiatorName") || !strcmp(key, "InitiatorAlias") ||
	    !strcmp(key, "TargetName"))
		return NULL;
	if (!strcmp(key, "MaxRecvDataSegmentLength")) {
		c->peer_max_dsl = num(val, 512, 16777215, 8192);
		return NULL;
	}
	if (!strcmp(key, "AuthMethod"))
		return "None";
	if (!strcmp(key, "HeaderDigest") || !strcmp(key, "DataDigest"))
		return "None";
	if (!strcmp(key, "MaxConnections") || !strcmp(key, "MaxOutstandingR2T"))
		return "1";
	if (!strcmp(key, "ErrorRecoveryLevel"))
		return "0";
	if (!strcmp(key, "IFMarker") || !strcmp(key, "OFMarker"))
		return "No";
	if (!strcmp(key, "DataPDUInOrder") || !strcmp(key, "DataSequenceInOrder"))
		return "Yes";
	if (!strcmp(key, "InitialR2T")) { /* OR: we take No */
		c->initial_r2t = strcmp(val, "No") != 0;
		return c->initial_r2t ? "Yes" : "No";
	}
	if (!strcmp(key, "ImmediateData")) { /* AND: we take Yes */
		c->immediate_data = !strcmp(val, "Yes");
		return c->immediate_data ? "Yes" : "No";
	}
	if (!strcmp(key, "MaxBurstLength")) {
		c->max_burst = num(val, 512, OUR_MAX_BURST, OUR_MAX_BURST);
		snprintf(buf, bufsz, "%u", c->max_burst);
		return buf;
	}
	if (!strcmp(key, "FirstBurstLength")) {
		c->first_burst = num(val, 512, OUR_FIRST_BURST, OUR_FIRST_BURST);
		snprintf(buf, bufsz, "%u", c->first_burst);
		return buf;
	}
	if (!strcmp(key, "DefaultTime2Wait") || !strcmp(key, "DefaultTime2Retain")) {
		snprintf(buf, bufsz, "%u", num(val, 0, 3600, 0));
		return buf;
	}
	return "NotUnderstood";
}

/* Answers a Login Request: accepts every transition asked for. */
static int on_login(struct conn *c, const uint8_t *h, const uint8_t *data, uint32_t dlen)
{
	char seg[2048], buf[32];
	size_t len = 0, at = 0;
	bool normal = true, ok = true;
	uint8_t flags = h[BHS_FLAGS];

	if (c->full_feature)
		return -1;
	/* key=value pairs, each NUL-terminated (RFC 7143 6.1) */
	while (at < dlen) {
		const char *kv = (const char *)data + at;
		size_t n = strnlen(kv, dlen - at);
		char pair[ISCSI_KEY_MAX + ISCSI_VALUE_MAX + 2];
		char *eq;
		const char *ans;

		at += n + 1;
		if (n == 0 || n >= sizeof(pair))
			continue;
		memcpy(pair, kv, n);
		pair[n] = 0;
		if (!(eq = strchr(pair, '=')))
			continue;
		*eq = 0;
		ans = login_key(c, pair, eq + 1, buf, sizeof(buf), &normal);
		if (ans)
			ok &= kv_add(seg, sizeof(seg), &len, pair, ans);
	}
	if (ISCSI_LOGIN_CSG(flags) == ISCSI_STAGE_SECURITY && normal && !c->declared_dsl)
		ok &= kv_add(seg, sizeof(seg), &len, "TargetPortalGroupTag", "1");
	if (ISCSI_LOGIN_CSG(flags) == ISCSI_STAGE_OPERATIONAL && !c->declared_dsl) {
		snprintf(buf, sizeof(buf), "%u", OUR_MAX_RECV_DSL);
		ok &= kv_add(seg, sizeof(seg), &len, "MaxRecvDataSegmentLength", buf);
		c->declared_dsl = true;
	}
	if (!ok)
		return -1;
	c->exp_cmd_sn = fl_get_be32(h + BHS_CMDSN);
	uint8_t *d = tx_alloc(c, len);
	memcpy(d, seg, len);
	uint8_t *r = tx_pdu(c, ISCSI_OP_LOGIN_RESP, d, (uint32_t)len);
	bool final =
	    (flags & ISCSI_LOGIN_TRANSIT) && ISCSI_LOGIN_NSG(flags) == ISCSI_STAGE_FULL_FEATURE;
	r[BHS_FLAGS] = flags & (ISCSI_LOGIN_TRANSIT | 0x0f);
	memcpy(r + 8, h + 8, 6); /* ISID */
	if (final && !c->tsih) {
		c->tsih = next_tsih++;
		if (!next_tsih)
			next_tsih = 1;
	}
	fl_put_be16(r + 14, c->tsih);
	memcpy(r + BHS_ITT, h + BHS_ITT, 4);
	fl_put_be32(r + BHS_STATSN, c->stat_sn++);
	if (final)
		c->full_feature = true;
	return 0;
}

/*
 * The answer of the commands a libiscsi initiator needs to start (INQUIRY,
 * READ CAPACITY, REPORT LUNS); NULL for every other command (zeroes).
 */
static const uint8_t *scsi_answer(struct conn *c, const uint8_t *cdb, uint32_t *len)
{
	uint64_t last = lun_bytes / BLOCK_SIZE - 1;
	uint8_t *d;

	switch (cdb[0]) {
	case 0x12: /* INQUIRY (SPC-4 6.6) */
		d = tx_alloc(c, 64);
		if (cdb[1] & 1) {
			d[1] = cdb[2];
			if (cdb[2] == 0x00) { /* supported VPD pages */
				d[3] = 2;
				d[5] = 0x80;
			} else if (cdb[2] == 0x80) { /* unit serial number */
				d[3] = 4;
				memcpy(d + 4, "NULL", 4);
			}
			*len = 4 + d[3];
			return d;
		}
		d[2] = 6; /* SPC-4 */
		d[3] = 2;
		d[4] = 31;
		d[7] = 0x02; /* CmdQue */
		memcpy(d + 8, "FAULTLUNNULL-TARGET     0001", 28);
		*len = 36;
		return d;
	case 0x25: /* READ CAPACITY(10) (SBC-4 5.20) */
		d = tx_alloc(c, 8);
		fl_put_be32(d, last > 0xfffffffe ? 0xffffffffu : (uint32_t)last);
		fl_put_be32(d + 4, BLOCK_SIZE);
		*len = 8;
		return d;
	case 0x9e: /* READ CAPACITY(16) (SBC-4 5.21), service action 10h */
		if ((cdb[1] & 0x1f) != 0x10)
			return NULL;
		d = tx_alloc(c, 32);
		fl_put_be32(d, (uint32_t)(last >> 32));
		fl_put_be32(d + 4, (uint32_t)last);
		fl_put_be32(d + 8, BLOCK_SIZE);
		*len = 32;
		return d;
	case 0xa0: /* REPORT LUNS (SPC-4 6.33): LUN 0 */
		d = tx_alloc(c, 16);
		fl_put_be32(d, 8);
		*len = 16;
		return d;
	default:
		return NULL;
	}
}

/* Sends a SCSI Response: GOOD, with the residual of a command that moved less. */
static void send_status(struct conn *c, const uint8_t *lun, uint32_t itt, uint32_t residual,
			bool under)
{
	uint8_t *r = tx_pdu(c, ISCSI_OP_SCSI_RESP, NULL, 0);

	r[BHS_FLAGS] = ISCSI_FLAG_FINAL |
		       (residual ? (under ? ISCSI_RESP_UNDERFLOW : ISCSI_RESP_OVERFLOW) : 0);
	memcpy(r + BHS_LUN, lun, 8);
	fl_put_be32(r + BHS_ITT, itt);
	fl_put_be32(r + BHS_TTT, ISCSI_RSVD_TAG);
	fl_put_be32(r + BHS_STATSN, c->stat_sn++);
	fl_put_be32(r + BHS_RESIDUAL, residual);
}

/* Sends the R2T for the next burst of task t. */
static void send_r2t(struct conn *c, struct task *t)
{
	uint32_t want = t->edtl - t->received;
	uint8_t *r = tx_pdu(c, ISCSI_OP_R2T, NULL, 0);

	if (want > c->max_burst)
		want = c->max_burst;
	r[BHS_FLAGS] = ISCSI_FLAG_FINAL;
	memcpy(r + BHS_LUN, t->lun, 8);
	fl_put_be32(r + BHS_ITT, t->itt);
	fl_put_be32(r + BHS_TTT, t->ttt);
	fl_put_be32(r + BHS_STATSN, c->stat_sn);
	fl_put_be32(r + BHS_DATASN, t->r2tsn++);
	fl_put_be32(r + BHS_OFFSET, t->received);
	fl_put_be32(r + BHS_RESIDUAL, want);
	t->asked = t->received + want;
}

/* Sends data-in of len bytes from data (NULL: zeroes), status in the last PDU. */
static void send_data_in(struct conn *c, const uint8_t *h, const uint8_t *data, uint32_t len,
			 uint32_t edtl)
{
	uint32_t off = 0, sn = 0, max = c->peer_max_dsl < ZERO_BYTES ? c->peer_max_dsl : ZERO_BYTES;

	if (len > edtl)
		len = edtl;
	if (len > max * MAX_DATAIN_PDUS)
		len = max * MAX_DATAIN_PDUS;
	do {
		uint32_t n = len - off < max ? len - off : max;
		bool last = off + n == len;
		uint8_t *r = tx_pdu(c, ISCSI_OP_DATA_IN, data ? data + off : zeroes, n);

		memcpy(r + BHS_LUN, h + BHS_LUN, 8);
		memcpy(r + BHS_ITT, h + BHS_ITT, 4);
		fl_put_be32(r + BHS_TTT, ISCSI_RSVD_TAG);
		fl_put_be32(r + BHS_DATASN, sn++);
		fl_put_be32(r + BHS_OFFSET, off);
		if (last) {
			r[BHS_FLAGS] = ISCSI_FLAG_FINAL | ISCSI_DATAIN_STATUS |
				       (len < edtl ? ISCSI_RESP_UNDERFLOW : 0);
			fl_put_be32(r + BHS_STATSN, c->stat_sn++);
			fl_put_be32(r + BHS_RESIDUAL, edtl - len);
		}
		off += n;
	} while (off < len);
}

/* Answers a SCSI Command. */
static int on_scsi_cmd(struct conn *c, const uint8_t *h, uint32_t dlen)
{
	uint32_t edtl = fl_get_be32(h + BHS_TTT), itt = fl_get_be32(h + BHS_ITT);
	uint8_t flags = h[BHS_FLAGS];

	if (!(h[BHS_OPCODE] & ISCSI_FLAG_IMMEDIATE))
		c->exp_cmd_sn++;
	if (flags & ISCSI_CMD_WRITE) {
		struct task *t = NULL;

		if (dlen >= edtl) {
			send_status(c, h + BHS_LUN, itt, dlen > edtl ? dlen - edtl : 0, false);
			return 0;
		}
		for (unsigned i = 0; i < MAX_TASKS && !t; i++)
			if (!c->tasks[i].used)
				t = &c->tasks[i];
		if (!t)
			return -1;
		*t = (struct task){.used = true, .itt = itt, .edtl = edtl, .received = dlen};
		t->ttt = c->next_ttt++;
		if (t->ttt == ISCSI_RSVD_TAG)
			t->ttt = c->next_ttt++;
		memcpy(t->lun, h + BHS_LUN, 8);
		c->ntasks++;
		/* unsolicited Data-Out follows unless F is set (RFC 7143 11.3.1, 13.11) */
		t->asked = (flags & ISCSI_FLAG_FINAL) || c->initial_r2t
			       ? dlen
			       : (edtl < c->first_burst ? edtl : c->first_burst);
		if (t->asked <= t->received)
			send_r2t(c, t);
		return 0;
	}
	if (flags & ISCSI_CMD_READ) {
		uint32_t len = edtl;
		const uint8_t *d = scsi_answer(c, h + BHS_CDB, &len);

		if (len == 0)
			send_status(c, h + BHS_LUN, itt, edtl, true);
		else
			send_data_in(c, h, d, len, edtl);
		return 0;
	}
	send_status(c, h + BHS_LUN, itt, 0, false);
	return 0;
}

/* Takes a Data-Out: counts it; the status or the next R2T when a burst is whole. */
static int on_data_out(struct conn *c, const uint8_t *h, uint32_t dlen)
{
	uint32_t itt = fl_get_be32(h + BHS_ITT);
	struct task *t = NULL;

	for (unsigned i = 0; i < MAX_TASKS && !t; i++)
		if (c->tasks[i].used && c->tasks[i].itt == itt)
			t = &c->tasks[i];
	if (!t)
		return -1;
	if (dlen > t->edtl - t->received)
		return -1;
	t->received += dlen;
	if (t->received == t->edtl) {
		send_status(c, t->lun, t->itt, 0, false);
		t->used = false;
		c->ntasks--;
	} else if ((h[BHS_FLAGS] & ISCSI_FLAG_FINAL) && t->received >= t->asked) {
		send_r2t(c, t);
	}
	return 0;
}

/* Answers one whole PDU; -1 ends the connection. */
static int on_pdu(struct conn *c, const uint8_t *h, const uint8_t *data, uint32_t dlen)
{
	uint8_t op = h[BHS_OPCODE] & ISCSI_OPCODE_MASK;
	uint8_t *r;

	if (op == ISCSI_OP_LOGIN_REQ)
		return on_login(c, h, data, dlen);
	if (!c->full_feature)
		return -1;
	switch (op) {
	case ISCSI_OP_SCSI_CMD:
		return on_scsi_cmd(c, h, dlen);
	case ISCSI_OP_DATA_OUT:
		return on_data_out(c, h, dlen);
	case ISCSI_OP_NOP_OUT:
		if (!(h[BHS_OPCODE] & ISCSI_FLAG_IMMEDIATE))
			c->exp_cmd_sn++;
		if (fl_get_be32(h + BHS_ITT) == ISCSI_RSVD_TAG)
			return 0; /* an answer to our NOP-In: we send none */
		{
			uint8_t *d = NULL;
			uint32_t n = dlen > TX_ROOM_ARENA / 2 ? TX_ROOM_ARENA / 2 : dlen;

			if (n) {
				d = tx_alloc(c, n);
				memcpy(d, data, n);
			}
			r = tx_pdu(c, ISCSI_OP_NOP_IN, d, n);
		}
		r[BHS_FLAGS] = ISCSI_FLAG_FINAL;
		memcpy(r + BHS_LUN, h + BHS_LUN, 8);
		memcpy(r + BHS_ITT, h + BHS_ITT, 4);
		fl_put_be32(r + BHS_TTT, ISCSI_RSVD_TAG);
		fl_put_be32(r + BHS_STATSN, c->stat_sn++);
		return 0;
	case ISCSI_OP_TMF_REQ:
	case ISCSI_OP_TEXT_REQ:
	case ISCSI_OP_LOGOUT_REQ:
		if (!(h[BHS_OPCODE] & ISCSI_FLAG_IMMEDIATE))
			c->exp_cmd_sn++;
		r = tx_pdu(c,
			   op == ISCSI_OP_TMF_REQ    ? ISCSI_OP_TMF_RESP
			   : op == ISCSI_OP_TEXT_REQ ? ISCSI_OP_TEXT_RESP
						     : ISCSI_OP_LOGOUT_RESP,
			   NULL, 0);
		r[BHS_FLAGS] = ISCSI_FLAG_FINAL; /* Response 0: complete, logged out */
		memcpy(r + BHS_ITT, h + BHS_ITT, 4);
		if (op == ISCSI_OP_TEXT_REQ)
			fl_put_be32(r + BHS_TTT, ISCSI_RSVD_TAG);
		fl_put_be32(r + BHS_STATSN, c->stat_sn++);
		c->logout = op == ISCSI_OP_LOGOUT_REQ;
		return 0;
	default:
		fprintf(stderr, "fl_null_target: opcode 0x%02x not handled\n", op);
		return -1;
	}
}

/* Sets one connection's epoll interest: input unless output waits. */
static void conn_events(int ep, struct conn *c)
{
	struct epoll_event e = {.events = c->niov ? EPOLLOUT : EPOLLIN, .data.ptr = c};

	if (c->want_out == (c->niov != 0))
		return;
	c->want_out = c->niov != 0;
	epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &e);
}

/* Reads what the socket holds; -1 when the peer closed or the socket failed. */
static int conn_fill(struct conn *c)
{
	ssize_t n;

	if (c->rx_len == RX_BUF)
		return 0; /* whole PDUs wait for room to answer them */
	n = read(c->fd, c->rx + c->rx_len, RX_BUF - c->rx_len);
	if (n == 0)
		return -1;
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	c->rx_len += (size_t)n;
	return 0;
}

/* Answers the whole PDUs received while there is room; the count, -1 on an error. */
static int conn_parse(struct conn *c)
{
	size_t at = 0;
	int done = 0;

	while (c->rx_len - at >= ISCSI_BHS_LEN && tx_room(c) && !c->logout) {
		const uint8_t *h = c->rx + at;
		uint32_t dlen = fl_get_be24(h + BHS_DSL);
		size_t total = ISCSI_BHS_LEN + 4u * h[BHS_TOTAL_AHS] + dlen + pad4(dlen);

		if (dlen > OUR_MAX_RECV_DSL) {
			fprintf(stderr, "fl_null_target: data segment of %u bytes\n", dlen);
			return -1;
		}
		if (c->rx_len - at < total)
			break;
		if (on_pdu(c, h, h + total - dlen - pad4(dlen), dlen)) {
			fprintf(stderr, "fl_null_target: protocol error (opcode 0x%02x)\n", h[0]);
			return -1;
		}
		at += total;
		done++;
	}
	memmove(c->rx, c->rx + at, c->rx_len - at);
	c->rx_len -= at;
	return done;
}

/* Serves one readiness event of c: read, answer, write. -1: c is ended. */
static int conn_event(int ep, struct conn *c, uint32_t events)
{
	int n;

	if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && conn_fill(c))
		goto end;
	do {
		if (tx_flush(c))
			goto end;
		if (c->niov)
			break; /* the socket is full: wait for EPOLLOUT */
		if ((n = conn_parse(c)) < 0)
			goto end;
	} while (n > 0 || c->niov);
	if (c->logout && !c->niov)
		goto end;
	conn_events(ep, c);
	return 0;
end:
	conn_end(c, NULL);
	return -1;
}

/* Stops the loop on a signal. */
static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

/* Accepts one connection when there is room. */
static void on_accept(int ep, int lfd)
{
	int one = 1, fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	unsigned i;
	struct conn *c;

	if (fd < 0)
		return;
	for (i = 0; i < MAX_CONNS && conns[i]; i++)
		;
	if (i == MAX_CONNS || !(c = calloc(1, sizeof(*c)))) {
		fprintf(stderr, "fl_null_target: connection refused (at most %u)\n", MAX_CONNS);
		close(fd);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->fd = fd;
	c->peer_max_dsl = 8192;
	c->max_burst = OUR_MAX_BURST;
	c->first_burst = OUR_FIRST_BURST;
	c->initial_r2t = true;
	conns[i] = c;
	struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
}

/* Parses ADDR:PORT (IPv4). */
static int parse_portal(const char *s, struct sockaddr_in *sa)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	char *end;
	unsigned long port;

	if (!colon || (size_t)(colon - s) >= sizeof(host))
		return -1;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = 0;
	port = strtoul(colon + 1, &end, 10);
	if (*end || end == colon + 1 || port > 65535)
		return -1;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	const char *portal = "127.0.0.1:0";
	int opt, one = 1, lfd, ep;
	char *end;
	char host[INET_ADDRSTRLEN];

	while ((opt = getopt(argc, argv, "l:s:")) != -1) {
		switch (opt) {
		case 'l':
			portal = optarg;
			break;
		case 's':
			lun_bytes = strtoull(optarg, &end, 10);
			if (*end || lun_bytes < BLOCK_SIZE || lun_bytes > (1ull << 50)) {
				fprintf(stderr, "fl_null_target: -s: bytes, 512 to 2^50\n");
				return 2;
			}
			break;
		default:
			fprintf(stderr, "usage: fl_null_target [-l ADDR:PORT] [-s BYTES]\n");
			return 2;
		}
	}
	if (parse_portal(portal, &sa)) {
		fprintf(stderr, "fl_null_target: -l %s: not IPv4ADDR:PORT\n", portal);
		return 2;
	}
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		return perror("socket"), 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 64) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl))
		return perror("fl_null_target: listen"), 1;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return perror("epoll_create1"), 1;
	struct epoll_event le = {.events = EPOLLIN, .data.ptr = NULL};
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &le);
	inet_ntop(AF_INET, &sa.sin_addr, host, sizeof(host));
	printf("fl_null_target: listening on %s:%u\n", host, ntohs(sa.sin_port));
	fflush(stdout);
	while (!stopping) {
		struct epoll_event evs[MAX_CONNS + 1];
		int n = epoll_wait(ep, evs, MAX_CONNS + 1, 1000);

		for (int i = 0; i < n; i++) {
			if (evs[i].data.ptr)
				conn_event(ep, evs[i].data.ptr, evs[i].events);
			else
				on_accept(ep, lfd);
		}
	}
	for (unsigned i = 0; i < MAX_CONNS; i++)
		if (conns[i])
			conn_end(conns[i], NULL);
	close(ep);
	close(lfd);
	return 0;
}
