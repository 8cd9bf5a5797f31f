/* SPDX-License-Identifier: MIT */
/*
 * scsi.c - SCSI tasks over iSCSI: command, data transfer and status.
 *
 * RFC 7143 11.3 (SCSI Command: R/W bits, Expected Data Transfer Length,
 * immediate data, extended CDB AHS), 4.2.5.2 / 13.10 / 13.11 / 13.14
 * (unsolicited data: immediate data and the first burst when InitialR2T=No),
 * 11.7 (Data-Out checks: DataSN per sequence, Buffer Offset, Target Transfer
 * Tag), 11.8 (R2T: at most MaxOutstandingR2T outstanding, each at most
 * MaxBurstLength), 11.7 / 13.12 / 13.13 (Data-In split at the initiator's
 * MaxRecvDataSegmentLength, sequences of MaxBurstLength, status collapsed
 * into the last Data-In when there is no sense data, 11.7.4), 11.4 (SCSI
 * Response with sense data and residual counts against the Expected Data
 * Transfer Length: overflow O / underflow U, 11.4.5.1).
 *
 * The command itself goes to the SCSI layer through backend.c only; this
 * file never looks at an opcode (fl_cdb_decode gives what it must know).
 * A task the engine still holds outlives its connection (it is orphaned and
 * freed on completion); an aborted task gets no response (RFC 7143 4.2.3.3).
 */
#include "iscsi_internal.h"

#include <stdlib.h>
#include <string.h>

/* Removes a task from its connection's list (drops the list's reference). */
static void task_unlink(struct task *t)
{
	struct conn *c = t->conn;

	if (!c)
		return;
	if (t->prev)
		t->prev->next = t->next;
	else
		c->tasks = t->next;
	if (t->next)
		t->next->prev = t->prev;
	t->next = t->prev = NULL;
	c->ntasks--;
	conn_mem(c, &c->task_bytes, -(int64_t)t->buf_len);
	t->conn = NULL;
	task_put(t);
}

/* Finds a task of this connection by its Initiator Task Tag. */
struct task *task_find(struct conn *c, uint32_t itt)
{
	for (struct task *t = c->tasks; t; t = t->next)
		if (t->itt == itt && !t->aborted)
			return t;
	return NULL;
}

/* Aborts a task: no response will ever be sent for it (RFC 7143 4.2.3.3). */
void task_abort(struct task *t)
{
	t->aborted = true;
	if (!t->submitted)
		task_unlink(t);
}

/* When x's oldest R2T still waiting for its Data-Out went out (0: none waits). */
uint64_t conn_oldest_r2t(const struct conn *x)
{
	uint64_t oldest = 0;

	for (const struct task *t = x->tasks; t; t = t->next)
		for (unsigned i = 0; t->r2t_active && i < ISCSI_MAX_R2T; i++)
			if (t->r2t[i].active && (!oldest || t->r2t[i].sent_ns < oldest))
				oldest = t->r2t[i].sent_ns;
	return oldest;
}

/* Detaches every task of a closing connection; the engine's ones become orphans. */
void conn_drop_tasks(struct conn *c)
{
	while (c->tasks)
		task_unlink(c->tasks);
}

/*
 * Residual flags and count against the EDTL (RFC 7143 11.4.5.1). SPDTL, the
 * length the SCSI command itself transferred, is data_in_len for reads (the
 * buffer holds the whole transfer); for writes it is the data-out length plus
 * the core's residual (negative: data it did not need; positive: data the CDB
 * wanted but the initiator did not send).
 */
static void task_residual(const struct task *t, uint8_t *flags, uint32_t *count)
{
	uint64_t spdtl;

	*flags = 0;
	*count = 0;
	if (t->write) {
		/* The core reports what the CDB wanted beyond (or short of) the data. */
		int64_t want = (int64_t)t->received + t->cmd.residual;
		spdtl = want > 0 ? (uint64_t)want : 0;
	} else
		spdtl = t->cmd.data_in_len;
	if (spdtl > t->edtl) {
		*flags = ISCSI_RESP_OVERFLOW;
		*count = (uint32_t)(spdtl - t->edtl);
	} else if (spdtl < t->edtl) {
		*flags = ISCSI_RESP_UNDERFLOW;
		*count = (uint32_t)(t->edtl - spdtl);
	}
}

/* Sends the SCSI Response PDU (RFC 7143 11.4). */
static void send_response(struct conn *c, struct task *t)
{
	struct txpdu *pdu = txpdu_new(ISCSI_OP_SCSI_RESP);
	uint8_t rflags;
	uint32_t resid;

	if (!pdu) {
		conn_close(c, "out of memory");
		return;
	}
	task_residual(t, &rflags, &resid);
	pdu->hdr[1] = ISCSI_FLAG_FINAL | rflags;
	pdu->hdr[2] = ISCSI_RESPONSE_COMPLETED;
	pdu->hdr[3] = t->cmd.status;
	fl_put_be32(pdu->hdr + BHS_ITT, t->itt);
	fl_put_be32(pdu->hdr + BHS_STATSN, c->stat_sn++);
	fl_put_be32(pdu->hdr + BHS_DATASN, t->read ? t->datain_pdus : t->r2tsn);
	fl_put_be32(pdu->hdr + BHS_RESIDUAL, resid);
	if (t->cmd.sense_len) {
		/* RFC 7143 11.4.7.2: SenseLength (2 bytes), then the sense data. */
		uint8_t buf[2 + FL_SENSE_MAX];
		fl_put_be16(buf, t->cmd.sense_len);
		memcpy(buf + 2, t->cmd.sense, t->cmd.sense_len);
		txpdu_set_data(pdu, buf, 2u + t->cmd.sense_len, true);
	}
	conn_send(c, pdu, FL_PDU_SCSI_RESP, t, 0, 0);
}

/* Sends the Data-In PDUs of a completed read, then status (collapsed if allowed). */
static void send_data_in(struct conn *c, struct task *t)
{
	uint32_t len = t->cmd.data_in_len < t->edtl ? t->cmd.data_in_len : t->edtl;
	/* RFC 7143 11.7.4: status may ride on the last Data-In only without sense. */
	bool collapse = len > 0 && t->cmd.sense_len == 0;
	uint32_t mrdsl = c->p.max_recv_dsl ? c->p.max_recv_dsl : 8192;
	uint32_t burst = c->p.max_burst ? c->p.max_burst : 262144;
	uint32_t off = 0, sn = 0, in_burst = 0;

	while (off < len && !c->dead) {
		uint32_t n = len - off;
		if (n > mrdsl)
			n = mrdsl;
		if (n > burst - in_burst)
			n = burst - in_burst;
		struct txpdu *pdu = txpdu_new(ISCSI_OP_DATA_IN);
		if (!pdu) {
			conn_close(c, "out of memory");
			return;
		}
		bool last = off + n == len;
		in_burst += n;
		uint8_t flags = 0;
		if (last || in_burst == burst) {
			flags |= ISCSI_FLAG_FINAL; /* end of a Data-In sequence */
			in_burst = 0;
		}
		if (last && collapse) {
			uint8_t rflags;
			uint32_t resid;
			task_residual(t, &rflags, &resid);
			flags |= ISCSI_DATAIN_STATUS | rflags;
			pdu->hdr[3] = t->cmd.status;
			fl_put_be32(pdu->hdr + BHS_STATSN, c->stat_sn++);
			fl_put_be32(pdu->hdr + BHS_RESIDUAL, resid);
		}
		pdu->hdr[1] = flags;
		memcpy(pdu->hdr + BHS_LUN, t->lun_raw, 8);
		fl_put_be32(pdu->hdr + BHS_ITT, t->itt);
		fl_put_be32(pdu->hdr + BHS_TTT, ISCSI_RSVD_TAG);
		fl_put_be32(pdu->hdr + BHS_DATASN, sn);
		fl_put_be32(pdu->hdr + BHS_OFFSET, off);
		txpdu_set_data(pdu, t->buf + off, n, false);
		pdu->task = t;
		t->refs++;
		conn_send(c, pdu, FL_PDU_DATA_IN, t, sn, off);
		sn++;
		off += n;
	}
	t->datain_pdus = sn;
	if (!collapse && !c->dead)
		send_response(c, t);
}

/* Called on the loop thread once the SCSI layer has completed a task. */
void scsi_task_completed(struct portal *p, struct task *t)
{
	struct conn *c = t->conn;

	t->completed = true;
	if (!c || c->dead || t->aborted || t->cmd.no_response) {
		if (c && !c->dead && t->cmd.no_response && !t->aborted)
			iscsi_log(p, LOG_INFO, c, "fault: no response for ITT 0x%08x", t->itt);
		task_unlink(t);
		task_put(t); /* the backend's reference */
		return;
	}
	if (t->read && t->cmd.data_in_len)
		send_data_in(c, t);
	else
		send_response(c, t);
	task_unlink(t);
	task_put(t);
}

/* Hands a task whose data is complete to the SCSI layer. */
static void task_submit(struct conn *c, struct task *t)
{
	t->cmd.data_out = t->write ? t->buf : NULL;
	t->cmd.data_out_len = t->write ? t->received : 0;
	t->refs++;
	t->submitted = true;
	be_submit(c->portal, t);
}

/* Sends R2Ts while MaxOutstandingR2T allows (RFC 7143 11.8, 13.17). */
static void task_solicit(struct conn *c, struct task *t)
{
	uint32_t max_r2t = c->p.max_outstanding_r2t ? c->p.max_outstanding_r2t : 1;

	if (max_r2t > ISCSI_MAX_R2T)
		max_r2t = ISCSI_MAX_R2T;
	while (t->r2t_active < max_r2t && t->r2t_next < t->edtl && !c->dead) {
		struct r2t_seq *s = NULL;
		for (unsigned i = 0; i < ISCSI_MAX_R2T; i++)
			if (!t->r2t[i].active) {
				s = &t->r2t[i];
				break;
			}
		if (!s)
			return;
		uint32_t len = t->edtl - t->r2t_next;
		if (len > c->p.max_burst)
			len = c->p.max_burst;
		s->active = true;
		s->ttt = ++c->portal->next_ttt;
		if (s->ttt == ISCSI_RSVD_TAG)
			s->ttt = ++c->portal->next_ttt;
		s->offset = t->r2t_next;
		s->len = len;
		s->got = 0;
		s->next_datasn = 0;
		s->r2tsn = t->r2tsn++;
		s->sent_ns = fl_mono_ns();
		t->r2t_next += len;
		t->r2t_active++;
		struct txpdu *pdu = txpdu_new(ISCSI_OP_R2T);
		if (!pdu) {
			conn_close(c, "out of memory");
			return;
		}
		pdu->hdr[1] = ISCSI_FLAG_FINAL;
		memcpy(pdu->hdr + BHS_LUN, t->lun_raw, 8);
		fl_put_be32(pdu->hdr + BHS_ITT, t->itt);
		fl_put_be32(pdu->hdr + BHS_TTT, s->ttt);
		fl_put_be32(pdu->hdr + BHS_STATSN, c->stat_sn); /* not advanced by an R2T */
		fl_put_be32(pdu->hdr + BHS_DATASN, s->r2tsn);
		fl_put_be32(pdu->hdr + BHS_OFFSET, s->offset);
		fl_put_be32(pdu->hdr + BHS_RESIDUAL, s->len);
		conn_send(c, pdu, FL_PDU_R2T, t, s->r2tsn, s->offset);
	}
}

/* Moves a write forward: submit when all data is in, else solicit more. */
static void task_progress(struct conn *c, struct task *t)
{
	if (t->received == t->edtl && !t->unsol_open && !t->r2t_active) {
		task_submit(c, t);
		return;
	}
	task_solicit(c, t);
}

/* Sends a status-only response for a command that got no task (resources). */
static void respond_status_only(struct conn *c, const uint8_t *bhs, uint8_t status)
{
	struct txpdu *pdu = txpdu_new(ISCSI_OP_SCSI_RESP);

	if (!pdu) {
		conn_close(c, "out of memory");
		return;
	}
	uint32_t edtl = fl_get_be32(bhs + BHS_TTT);
	pdu->hdr[1] = ISCSI_FLAG_FINAL | (edtl ? ISCSI_RESP_UNDERFLOW : 0);
	pdu->hdr[3] = status;
	memcpy(pdu->hdr + BHS_ITT, bhs + BHS_ITT, 4);
	fl_put_be32(pdu->hdr + BHS_STATSN, c->stat_sn++);
	fl_put_be32(pdu->hdr + BHS_RESIDUAL, edtl);
	conn_queue(c, pdu);
}

/* Reads a command's AHS into its CDB; 0 to go on, 1 when rejected, -1 when closed. */
static int cmd_read_ahs(struct conn *c, const uint8_t *bhs, const uint8_t *ahs, uint32_t ahs_len,
			uint8_t *cdb, size_t *cdb_len)
{
	/* AHS: extended CDB (type 1); bidirectional (type 2) is not supported. */
	for (uint32_t off = 0; off + 4 <= ahs_len;) {
		uint16_t alen = fl_get_be16(ahs + off);
		uint8_t type = ahs[off + 2];
		if (off + 3 + alen > ahs_len) {
			conn_close(c, "malformed PDU: AHS length beyond the header");
			return -1;
		}
		if (type == ISCSI_AHS_EXTENDED_CDB && alen >= 1) {
			size_t extra = alen - 1u;
			if (16 + extra > FL_CDB_MAX) {
				conn_send_reject(c, bhs, ISCSI_REJECT_INVALID_PDU_FIELD);
				return 1;
			}
			memcpy(cdb + 16, ahs + off + 4, extra);
			*cdb_len = 16 + extra;
		} else if (type == ISCSI_AHS_BIDI_READ_LENGTH) {
			conn_send_reject(c, bhs, ISCSI_REJECT_CMD_NOT_SUPPORTED);
			return 1;
		}
		off += (3u + alen + 3u) & ~3u;
	}
	return 0;
}

/* Checks a command's flags, data and tag; 0 to go on, 1 when answered, -1 when closed. */
static int cmd_check_flags(struct conn *c, const uint8_t *bhs, uint32_t dlen)
{
	uint8_t flags = bhs[1];
	bool rd = flags & ISCSI_CMD_READ, wr = flags & ISCSI_CMD_WRITE;
	bool final = flags & ISCSI_FLAG_FINAL;
	uint32_t itt = fl_get_be32(bhs + BHS_ITT);
	uint32_t edtl = fl_get_be32(bhs + BHS_TTT);

	if (rd && wr) {
		conn_send_reject(c, bhs, ISCSI_REJECT_CMD_NOT_SUPPORTED);
		return 1;
	}
	if (dlen && (!wr || !c->p.immediate_data || dlen > edtl || dlen > c->p.first_burst)) {
		conn_close(c, "protocol error: immediate data not allowed or too long");
		return -1;
	}
	if (!final && (!wr || c->p.initial_r2t)) {
		conn_close(c, "protocol error: unsolicited Data-Out announced but not allowed");
		return -1;
	}
	if (task_find(c, itt)) {
		conn_send_reject(c, bhs, ISCSI_REJECT_TASK_IN_PROGRESS);
		return 1;
	}
	/* Bounded memory: refuse with TASK SET FULL rather than allocate without limit. */
	if (edtl > ISCSI_MAX_EDTL || c->ntasks >= 2 * ISCSI_CMD_WINDOW) {
		iscsi_log(c->portal, LOG_INFO, c,
			  "TASK SET FULL for ITT 0x%08x (EDTL %u, %u tasks)", itt, edtl, c->ntasks);
		respond_status_only(c, bhs, FL_STATUS_TASK_SET_FULL);
		return 1;
	}
	return 0;
}

/* Fills a new task from the command's BHS and CDB, and decodes the CDB. */
static const struct fl_cdb_info *task_init(struct task *t, struct conn *c, const uint8_t *bhs,
					   const uint8_t *cdb, size_t cdb_len)
{
	t->refs = 1;
	t->portal = c->portal;
	t->itt = fl_get_be32(bhs + BHS_ITT);
	t->edtl = fl_get_be32(bhs + BHS_TTT);
	t->cmd_sn = fl_get_be32(bhs + BHS_CMDSN);
	t->read = bhs[1] & ISCSI_CMD_READ;
	t->write = bhs[1] & ISCSI_CMD_WRITE;
	t->immediate = bhs[0] & ISCSI_FLAG_IMMEDIATE;
	memcpy(t->lun_raw, bhs + BHS_LUN, 8);
	lun_decode(t->lun_raw, &t->lun_id);
	memcpy(t->cmd.cdb, cdb, cdb_len);
	t->cmd.cdb_len = (uint8_t)cdb_len;
	/* decoded once here; the engine, the core and the PDU verdicts reuse t->cmd.info */
	return fl_cmd_decode(&t->cmd);
}

/* The size of a task's buffer: the EDTL, or a read's whole SCSI transfer if larger. */
static uint64_t task_buffer_size(struct portal *p, const struct task *t,
				 const struct fl_cdb_info *ci)
{
	/* A read gets room for the whole SCSI transfer, so overflow is measurable. */
	uint64_t want = t->edtl;
	if (t->read && ci->has_lba && ci->data_in) {
		uint64_t spdtl = (uint64_t)ci->nblocks * be_block_size(p, t->lun_id);
		if (spdtl > want && spdtl <= ISCSI_MAX_EDTL)
			want = spdtl;
	}
	return want;
}

/* Whether a buffer of want bytes would exceed the connection's or the process's budget. */
static bool task_over_budget(struct conn *c, uint32_t itt, uint64_t want)
{
	struct portal *p = c->portal;
	/*
	 * One budget for what the connection holds (command buffers and unsent
	 * responses), and one for the process: a connection with nothing queued
	 * may always have a command of ISCSI_MIN_SHARE.
	 */
	uint64_t q = conn_queued(c);
	if ((q && q + want > ISCSI_CONN_BUDGET) ||
	    (p->queued_bytes + want > p->budget && (q || want > ISCSI_MIN_SHARE))) {
		iscsi_log(p, LOG_INFO, c,
			  "TASK SET FULL for ITT 0x%08x: %llu bytes queued here, %llu in all", itt,
			  (unsigned long long)q, (unsigned long long)p->queued_bytes);
		return true;
	}
	return false;
}

/* Creates a command's task with its buffer and nexus; NULL when answered TASK SET FULL. */
static struct task *task_create(struct conn *c, const uint8_t *bhs, const uint8_t *cdb,
				size_t cdb_len)
{
	struct task *t = calloc(1, sizeof(*t));
	if (!t) {
		respond_status_only(c, bhs, FL_STATUS_TASK_SET_FULL);
		return NULL;
	}
	const struct fl_cdb_info *ci = task_init(t, c, bhs, cdb, cdb_len);
	uint64_t want = task_buffer_size(c->portal, t, ci);
	if (task_over_budget(c, t->itt, want)) {
		free(t);
		respond_status_only(c, bhs, FL_STATUS_TASK_SET_FULL);
		return NULL;
	}
	t->buf_len = (uint32_t)want;
	if (want && !(t->buf = malloc(want))) {
		free(t);
		respond_status_only(c, bhs, FL_STATUS_TASK_SET_FULL);
		return NULL;
	}
	t->cmd.nexus.id = c->nexus_id;
	t->initiator = strdup(c->initiator_port ? c->initiator_port : "");
	if (!t->initiator) {
		free(t->buf);
		free(t);
		respond_status_only(c, bhs, FL_STATUS_TASK_SET_FULL);
		return NULL;
	}
	t->cmd.nexus.initiator = t->initiator;
	t->cmd.nexus.rel_port_id = c->rel_port_id ? c->rel_port_id : 1;
	t->cmd.tag = t->itt;
	t->cmd.data_in = t->read ? t->buf : NULL;
	t->cmd.data_in_cap = t->read ? t->buf_len : 0;
	t->cmd.priv = t;
	return t;
}

/* Puts a task on its connection's list (the list holds the first reference). */
static void task_link(struct conn *c, struct task *t)
{
	t->conn = c;
	t->next = c->tasks;
	if (c->tasks)
		c->tasks->prev = t;
	c->tasks = t;
	c->ntasks++;
	conn_mem(c, &c->task_bytes, (int64_t)t->buf_len);
}

/* Starts a write with its immediate data and opens the unsolicited burst if announced. */
static void task_start_write(struct conn *c, struct task *t, const uint8_t *data, uint32_t dlen,
			     bool final)
{
	if (dlen)
		memcpy(t->buf, data, dlen);
	t->received = dlen;
	/* RFC 7143 13.14: unsolicited data up to FirstBurstLength, immediate included. */
	uint32_t first = t->edtl < c->p.first_burst ? t->edtl : c->p.first_burst;
	if (!final && first > dlen) {
		t->unsol_open = true;
		t->unsol_end = first;
	} else {
		t->unsol_end = dlen;
	}
	t->r2t_next = t->unsol_end;
	task_progress(c, t);
}

/* Handles a SCSI Command PDU (RFC 7143 11.3). */
int scsi_cmd(struct conn *c, const uint8_t *bhs, const uint8_t *ahs, uint32_t ahs_len,
	     const uint8_t *data, uint32_t dlen)
{
	uint8_t cdb[FL_CDB_MAX];
	size_t cdb_len = 16;
	int rc;

	memcpy(cdb, bhs + BHS_CDB, 16);
	rc = cmd_read_ahs(c, bhs, ahs, ahs_len, cdb, &cdb_len);
	if (rc)
		return rc < 0 ? -1 : 0;
	rc = cmd_check_flags(c, bhs, dlen);
	if (rc)
		return rc < 0 ? -1 : 0;
	struct task *t = task_create(c, bhs, cdb, cdb_len);
	if (!t)
		return 0;
	task_link(c, t);
	if (t->write)
		task_start_write(c, t, data, dlen, bhs[1] & ISCSI_FLAG_FINAL);
	else
		task_submit(c, t);
	return 0;
}

/* Takes unsolicited Data-Out (the first burst); 0, or -1 with why set. */
static int data_out_unsolicited(struct task *t, const uint8_t *bhs, const uint8_t *data,
				uint32_t dlen, char *why, size_t why_len)
{
	uint32_t itt = fl_get_be32(bhs + BHS_ITT);
	uint32_t datasn = fl_get_be32(bhs + BHS_DATASN), off = fl_get_be32(bhs + BHS_OFFSET);
	bool final = bhs[1] & ISCSI_FLAG_FINAL;

	if (!t->unsol_open) {
		snprintf(why, why_len,
			 "protocol error: unsolicited Data-Out not expected "
			 "(ITT 0x%08x)",
			 itt);
		return -1;
	}
	if (datasn != t->unsol_datasn) {
		snprintf(why, why_len, "protocol error: DataSN %u, expected %u (ITT 0x%08x)",
			 datasn, t->unsol_datasn, itt);
		return -1;
	}
	if (off != t->received || off + dlen > t->unsol_end) {
		snprintf(why, why_len,
			 "protocol error: Buffer Offset %u+%u outside unsolicited range (ITT "
			 "0x%08x)",
			 off, dlen, itt);
		return -1;
	}
	memcpy(t->buf + off, data, dlen);
	t->received += dlen;
	t->unsol_datasn++;
	if (final) {
		if (t->received != t->unsol_end) {
			snprintf(why, why_len,
				 "protocol error: unsolicited burst ended at %u, expected %u",
				 t->received, t->unsol_end);
			return -1;
		}
		t->unsol_open = false;
	}
	return 0;
}

/* Finds a task's outstanding R2T sequence by its Target Transfer Tag. */
static struct r2t_seq *task_r2t_find(struct task *t, uint32_t ttt)
{
	for (unsigned i = 0; i < ISCSI_MAX_R2T; i++)
		if (t->r2t[i].active && t->r2t[i].ttt == ttt)
			return &t->r2t[i];
	return NULL;
}

/* Takes Data-Out answering an R2T (RFC 7143 11.7, 11.8); 0, or -1 with why set. */
static int data_out_solicited(struct task *t, const uint8_t *bhs, const uint8_t *data,
			      uint32_t dlen, char *why, size_t why_len)
{
	uint32_t itt = fl_get_be32(bhs + BHS_ITT), ttt = fl_get_be32(bhs + BHS_TTT);
	uint32_t datasn = fl_get_be32(bhs + BHS_DATASN), off = fl_get_be32(bhs + BHS_OFFSET);
	bool final = bhs[1] & ISCSI_FLAG_FINAL;
	struct r2t_seq *s = task_r2t_find(t, ttt);

	if (!s) {
		snprintf(why, why_len, "protocol error: unknown Target Transfer Tag 0x%08x", ttt);
		return -1;
	}
	if (datasn != s->next_datasn) {
		snprintf(why, why_len, "protocol error: DataSN %u, expected %u (ITT 0x%08x)",
			 datasn, s->next_datasn, itt);
		return -1;
	}
	if (off != s->offset + s->got || s->got + dlen > s->len) {
		snprintf(why, why_len,
			 "protocol error: Buffer Offset %u+%u outside R2T %u+%u (ITT 0x%08x)", off,
			 dlen, s->offset, s->len, itt);
		return -1;
	}
	memcpy(t->buf + off, data, dlen);
	s->got += dlen;
	s->next_datasn++;
	t->received += dlen;
	if (final || s->got == s->len) {
		if (s->got != s->len) {
			snprintf(why, why_len,
				 "protocol error: R2T sequence ended short (%u of %u)", s->got,
				 s->len);
			return -1;
		}
		s->active = false;
		t->r2t_active--;
	}
	return 0;
}

/* Handles a Data-Out PDU (RFC 7143 11.7) with the ERL 0 checks. */
int scsi_data_out(struct conn *c, const uint8_t *bhs, const uint8_t *data, uint32_t dlen)
{
	uint32_t itt = fl_get_be32(bhs + BHS_ITT), ttt = fl_get_be32(bhs + BHS_TTT);
	struct task *t = task_find(c, itt);
	char why[160];
	int rc;

	if (!t || !t->write || t->submitted) {
		/* Data for a task already answered or aborted: discard it. */
		iscsi_log(c->portal, LOG_DEBUG, c, "Data-Out for unknown ITT 0x%08x dropped", itt);
		return 0;
	}
	if (ttt == ISCSI_RSVD_TAG) /* unsolicited data (first burst) */
		rc = data_out_unsolicited(t, bhs, data, dlen, why, sizeof(why));
	else
		rc = data_out_solicited(t, bhs, data, dlen, why, sizeof(why));
	if (rc < 0) {
		/* ERL 0 cannot recover a broken data sequence (RFC 7143 7.1.4): close. */
		conn_close(c, why);
		return -1;
	}
	task_progress(c, t);
	return 0;
}
