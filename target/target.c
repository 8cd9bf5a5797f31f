/* SPDX-License-Identifier: MIT */
/*
 * target.c - a SCSI target device: LUNs by number, REPORT LUNS, absent LUNs.
 *
 * SPC-4 r37 4.8 (absent logical units): INQUIRY answers with peripheral
 * qualifier 3 / device type 1Fh, REQUEST SENSE returns sense data saying
 * LOGICAL UNIT NOT SUPPORTED, REPORT LUNS works, everything else is CHECK
 * CONDITION ILLEGAL REQUEST 25/00. SPC-4 r37 6.33 (REPORT LUNS) with
 * peripheral device addressing below 256 (SAM-5 r21 4.7.7). Adding a LUN
 * raises 3F/0E REPORTED LUNS DATA HAS CHANGED on the others (SPC-4 r37 6.33).
 *
 * Lock order: a LUN's lock may be held while taking the target's lock, never
 * the other way round.
 */
#include "target_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct fl_target {
	pthread_mutex_t lock;
	struct fl_lun *luns[FL_MAX_LUNS];
};

/* Creates an empty target. */
int fl_target_create(struct fl_target **out)
{
	struct fl_target *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	*out = t;
	return 0;
}

/* Adds a LUN under `lun_id`; the others hear 3F/0E. */
int fl_target_add_lun(struct fl_target *tgt, uint16_t lun_id, struct fl_lun *lun)
{
	struct fl_lun *others[FL_MAX_LUNS];
	unsigned n = 0;

	if (lun_id >= FL_MAX_LUNS || !lun)
		return -ERANGE;
	pthread_mutex_lock(&tgt->lock);
	if (tgt->luns[lun_id]) {
		pthread_mutex_unlock(&tgt->lock);
		return -EEXIST;
	}
	for (unsigned i = 0; i < FL_MAX_LUNS; i++)
		if (tgt->luns[i])
			others[n++] = tgt->luns[i];
	tgt->luns[lun_id] = lun;
	pthread_mutex_unlock(&tgt->lock);
	/* not under the target lock: LUN before target is the lock order */
	pthread_mutex_lock(&lun->lock);
	lun->target = tgt;
	lun->lun_id = lun_id;
	pthread_mutex_unlock(&lun->lock);
	for (unsigned i = 0; i < n; i++)
		fl_lun_queue_ua(others[i], FL_ALL_NEXUS, ASC_TARGET_CONDITIONS_CHANGED,
				ASCQ_REPORTED_LUNS_DATA_HAS_CHANGED);
	return 0;
}

/* The LUN with that number, or NULL. */
struct fl_lun *fl_target_lun(struct fl_target *tgt, uint16_t lun_id)
{
	struct fl_lun *lun;

	if (lun_id >= FL_MAX_LUNS)
		return NULL;
	pthread_mutex_lock(&tgt->lock);
	lun = tgt->luns[lun_id];
	pthread_mutex_unlock(&tgt->lock);
	return lun;
}

/* LUN numbers in ascending order. */
unsigned fl_target_lun_ids(struct fl_target *tgt, uint16_t *ids, unsigned max)
{
	unsigned n = 0;

	pthread_mutex_lock(&tgt->lock);
	for (unsigned i = 0; i < FL_MAX_LUNS && n < max; i++)
		if (tgt->luns[i])
			ids[n++] = (uint16_t)i;
	pthread_mutex_unlock(&tgt->lock);
	return n;
}

/* REPORT LUNS parameter data (SPC-4 r37 6.33). */
enum sense_reason target_report_luns(struct exec_ctx *x)
{
	const uint8_t *cdb = x->cmd->cdb;
	uint32_t alloc =
	    (uint32_t)cdb[6] << 24 | (uint32_t)cdb[7] << 16 | (uint32_t)cdb[8] << 8 | cdb[9];
	uint8_t buf[8 + 8 * FL_MAX_LUNS];
	uint16_t ids[FL_MAX_LUNS];
	unsigned n;

	/* SELECT REPORT 00h all, 01h well known only (none), 02h all */
	if (cdb[2] > 2)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 2, -1);
	if (alloc < 16)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 6, -1);
	if (x->tgt) {
		n = fl_target_lun_ids(x->tgt, ids, FL_MAX_LUNS);
	} else {
		ids[0] = 0;
		n = 1;
	}
	if (cdb[2] == 1)
		n = 0;
	memset(buf, 0, sizeof(buf));
	buf[0] = (uint8_t)((8 * n) >> 24);
	buf[1] = (uint8_t)((8 * n) >> 16);
	buf[2] = (uint8_t)((8 * n) >> 8);
	buf[3] = (uint8_t)(8 * n);
	for (unsigned i = 0; i < n; i++) {
		/* peripheral device addressing below 256, flat space above */
		buf[8 + 8 * i] = ids[i] < 256 ? 0 : (uint8_t)(0x40 | (ids[i] >> 8));
		buf[9 + 8 * i] = (uint8_t)ids[i];
	}
	if (x->ns)
		ua_clear(x->ns, ASC_TARGET_CONDITIONS_CHANGED, ASCQ_REPORTED_LUNS_DATA_HAS_CHANGED);
	exec_data_in(x, buf, 8 + 8 * n, alloc);
	return SENSE_OK;
}

/* Answers a command addressed to a LUN that does not exist. */
static enum sense_reason absent_lun(struct exec_ctx *x)
{
	const uint8_t *cdb = x->cmd->cdb;
	size_t len = x->cmd->cdb_len;
	uint8_t buf[FL_SENSE_MAX];

	if (len == 0 || len > FL_CDB_MAX)
		return SENSE_INVALID_OPCODE;
	if (cdb[0] == SPC_OP_INQUIRY && len >= 6) {
		uint32_t alloc = (uint32_t)cdb[3] << 8 | cdb[4];

		memset(buf, 0, 36);
		buf[0] = 0x7f; /* peripheral qualifier 3, device type 1Fh */
		if (cdb[1] & 0x01) {
			buf[1] = cdb[2];
			exec_data_in(x, buf, 4, alloc);
			return SENSE_OK;
		}
		if (cdb[2])
			return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 2, -1);
		buf[2] = 0x06; /* SPC-4 */
		buf[3] = 0x02;
		buf[4] = 31;
		memcpy(buf + 8, "FAULTLUN", 8);
		memcpy(buf + 16, "NO LUN          ", 16);
		memcpy(buf + 32, "0001", 4);
		exec_data_in(x, buf, 36, alloc);
		return SENSE_OK;
	}
	if (cdb[0] == SPC_OP_REPORT_LUNS && len >= 12)
		return target_report_luns(x);
	if (cdb[0] == SPC_OP_REQUEST_SENSE && len >= 6) {
		/* SPC-4 r37 6.29: the sense data is the parameter data, status GOOD */
		uint8_t n =
		    sense_encode(buf, cdb[1] & 0x01, FL_KEY_ILLEGAL_REQUEST, ASC_LUN_NOT_SUPPORTED,
				 ASCQ_LUN_NOT_SUPPORTED, false, 0, NULL);

		exec_data_in(x, buf, n, cdb[4]);
		return SENSE_OK;
	}
	return SENSE_LUN_NOT_SUPPORTED;
}

/* Submits to LUN `lun_id`, or answers for an absent one. */
void fl_target_submit(struct fl_target *tgt, uint16_t lun_id, struct fl_cmd *cmd)
{
	struct fl_lun *lun = fl_target_lun(tgt, lun_id);
	struct exec_ctx x;

	if (lun) {
		fl_lun_submit(lun, cmd);
		return;
	}
	cmd->status = FL_STATUS_GOOD;
	cmd->sense_len = 0;
	cmd->data_in_len = 0;
	cmd->residual = 0;
	if (!cmd->data_in)
		cmd->data_in_cap = 0;
	memset(&x, 0, sizeof(x));
	x.cmd = cmd;
	x.tgt = tgt;
	x.sks_bit = -1;
	sense_complete(&x, absent_lun(&x));
	cmd->decoded = false; /* the decode lives for one submission (fl_target.h) */
	cmd->done(cmd);
}

/* Destroys every LUN and the target. */
void fl_target_destroy(struct fl_target *tgt)
{
	if (!tgt)
		return;
	for (unsigned i = 0; i < FL_MAX_LUNS; i++)
		fl_lun_destroy(tgt->luns[i]);
	pthread_mutex_destroy(&tgt->lock);
	free(tgt);
}
