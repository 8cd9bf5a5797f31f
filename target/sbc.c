/* SPDX-License-Identifier: MIT */
/*
 * sbc.c - SBC-3 media commands: READ / WRITE (6, 10, 12, 16), WRITE AND
 * VERIFY (10, 12, 16), VERIFY (10, 12, 16), COMPARE AND WRITE, SYNCHRONIZE
 * CACHE (10, 16), PRE-FETCH (10, 16), READ CAPACITY (10, 16), READ DEFECT
 * DATA (10, 12), START STOP UNIT, ORWRITE(16), WRITE ATOMIC(16), and the
 * write path every medium-changing command goes through.
 *
 * lun.c has already checked the LBA range (x->lba, x->nblk), the ALUA /
 * stopped state and reservations. Clauses: SBC-3 r36 5.2 (COMPARE AND
 * WRITE), 5.9/5.10 (PRE-FETCH), 5.11-5.16 (READ), 5.17/5.18 (READ DEFECT
 * DATA), 5.19/5.20 (READ CAPACITY), 5.22/5.23 (SYNCHRONIZE CACHE), 5.25
 * (START STOP UNIT), 5.27-5.29 (VERIFY), 5.32-5.41 (WRITE, WRITE AND
 * VERIFY). UNMAP, WRITE SAME and GET LBA STATUS are in sbc_prov.c.
 */
#include "fl_byteorder.h"
#include "target_internal.h"
#include "vendor.h"

#include <stdlib.h>
#include <string.h>

/* Byte offset of the TRANSFER LENGTH field of a READ/WRITE-style CDB. */
static uint16_t len_field(const struct exec_ctx *x)
{
	switch (x->desc->cdb_len) {
	case 6:
		return 4;
	case 10:
		return 7;
	case 12:
		return 6;
	default:
		/* COMPARE AND WRITE: byte 13; WRITE ATOMIC(16): bytes 12-13 */
		return x->desc->opcode == SBC_OP_COMPARE_AND_WRITE ? 13
		       : x->desc->opcode == SBC_OP_WRITE_ATOMIC_16 ? 12
								   : 10;
	}
}

/* Refuses protection information fields (PROTECT=0 in INQUIRY). */
static enum sense_reason no_protect(struct exec_ctx *x)
{
	if (x->desc->cdb_len > 6 && (x->cmd->cdb[1] & 0xe0))
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 1, 7);
	return SENSE_OK;
}

/* Checks the transfer length against the block limits. */
static enum sense_reason xfer_limit(struct exec_ctx *x, uint64_t nblk)
{
	if (nblk > lun_max_xfer_blocks(x->lun))
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, len_field(x), -1);
	return SENSE_OK;
}

/*
 * Checks that the data-out buffer carries `bytes` (data to compare with:
 * VERIFY). Less is refused with 24/00 on the transfer length; more is
 * accepted and the excess ignored (negative residual).
 */
static enum sense_reason need_data_out(struct exec_ctx *x, uint64_t bytes)
{
	struct fl_cmd *cmd = x->cmd;

	if (bytes && (!cmd->data_out || cmd->data_out_len < bytes))
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, len_field(x), -1);
	cmd->residual = (int64_t)bytes - (int64_t)cmd->data_out_len;
	return SENSE_OK;
}

/*
 * Whole blocks of the n a WRITE asks for that the data-out buffer carries.
 * When the transport delivered less (iSCSI EDTL below the SCSI transfer
 * length) only what arrived is written and the residual says how much is
 * missing, as libiscsi's residual tests expect of a target; more is ignored
 * (negative residual).
 */
static uint64_t covered_blocks(struct exec_ctx *x, uint64_t n)
{
	struct fl_cmd *cmd = x->cmd;
	uint64_t have = cmd->data_out ? cmd->data_out_len : 0;

	cmd->residual = (int64_t)(n << x->lun->block_shift) - (int64_t)have;
	have >>= x->lun->block_shift;
	return have < n ? have : n;
}

/* Raises UA 38/07 once when mapped blocks reach the soft threshold. */
static void soft_threshold_check(struct fl_lun *lun)
{
	uint64_t mapped = thin_mapped_count(lun->thin);

	if (!lun->cfg.soft_threshold)
		return;
	if (mapped >= lun->cfg.soft_threshold && !lun->soft_threshold_reported) {
		/* SBC-3 r36 4.7.3.7: THIN PROVISIONING SOFT THRESHOLD REACHED */
		lun->soft_threshold_reported = true;
		lun_ua_all(lun, FL_ALL_NEXUS, ASC_THIN_PROVISIONING, ASCQ_SOFT_THRESHOLD_REACHED);
	} else if (mapped < lun->cfg.soft_threshold) {
		lun->soft_threshold_reported = false; /* re-armed once below */
	}
}

/* Makes a range durable (FUA / WCE=0): sync the store, drop dirty records. */
static enum sense_reason make_durable(struct exec_ctx *x, uint64_t lba, uint64_t n)
{
	struct fl_lun *lun = x->lun;

	if (lun->store->ops->sync(lun->store))
		return SENSE_WRITE_ERROR;
	dirty_clear(lun, lba, n);
	return SENSE_OK;
}

/* The write path of every medium-changing command. */
enum sense_reason sbc_write_blocks(struct exec_ctx *x, uint64_t lba, uint64_t n, const uint8_t *buf,
				   bool fua)
{
	struct fl_lun *lun = x->lun;
	bool cached = lun->mode.wce && !fua;
	int rc;

	if (n == 0)
		return SENSE_OK;
	if (lun->thin) {
		uint64_t need = thin_count_unmapped(lun->thin, lba, n);

		/* SBC-3 r36 4.7.3.6: nothing is written when the pool cannot hold it */
		if (need && thin_mapped_count(lun->thin) + need > lun->cfg.pool_blocks)
			return SENSE_SPACE_ALLOC_FAILED;
	}
	if (cached) {
		rc = dirty_note(lun, lba, n);
		if (rc < 0)
			return SENSE_BUSY;
		cached = rc == 0;
	}
	if (lun->store->ops->write(lun->store, buf, lba << lun->block_shift, n << lun->block_shift))
		return SENSE_WRITE_ERROR;
	if (lun->thin) {
		thin_map_range(lun->thin, lba, n);
		soft_threshold_check(lun);
	}
	return cached ? SENSE_OK : make_durable(x, lba, n);
}

/* Deallocates a range (thin LUN): discard the store, return pool space. */
enum sense_reason sbc_unmap_blocks(struct exec_ctx *x, uint64_t lba, uint64_t n)
{
	struct fl_lun *lun = x->lun;
	bool cached = lun->mode.wce;
	int rc;

	if (n == 0)
		return SENSE_OK;
	if (cached) {
		rc = dirty_note(lun, lba, n);
		if (rc < 0)
			return SENSE_BUSY;
		cached = rc == 0;
	}
	if (lun->store->ops->discard(lun->store, lba << lun->block_shift, n << lun->block_shift))
		return SENSE_WRITE_ERROR;
	if (lun->thin) {
		thin_unmap_range(lun->thin, lba, n);
		soft_threshold_check(lun);
	}
	return cached ? SENSE_OK : make_durable(x, lba, n);
}

/* READ (6, 10, 12, 16). */
enum sense_reason sbc_read(struct exec_ctx *x)
{
	struct fl_cmd *cmd = x->cmd;
	struct fl_lun *lun = x->lun;
	uint64_t want = x->nblk << lun->block_shift, got;
	enum sense_reason r;

	r = no_protect(x);
	if (r == SENSE_OK)
		r = xfer_limit(x, x->nblk);
	if (r != SENSE_OK)
		return r;
	got = want < cmd->data_in_cap ? want : cmd->data_in_cap;
	if (!cmd->data_in)
		got = 0;
	if (got) {
		int rc;

		/*
		 * A blocking store is read without the LUN lock so that the worker
		 * pool serves reads in parallel; overlapping simple tasks have no
		 * order (SAM-5 r21 8.6), and the store outlives every in-flight
		 * command.
		 */
		if (lun->store->async) {
			lun->unlocked_reads++;
			pthread_mutex_unlock(&lun->lock);
		}
		rc = lun->store->ops->read(lun->store, cmd->data_in, x->lba << lun->block_shift,
					   got);
		if (lun->store->async) {
			pthread_mutex_lock(&lun->lock);
			if (--lun->unlocked_reads == 0)
				pthread_cond_broadcast(&lun->reads_done);
		}
		if (rc)
			return SENSE_READ_ERROR;
	}
	cmd->data_in_len = (uint32_t)got;
	cmd->residual = (int64_t)(want - got);
	return SENSE_OK;
}

/* FUA bit of a 10/12/16-byte READ/WRITE-style CDB (none in the 6-byte ones). */
static bool fua_bit(const struct exec_ctx *x)
{
	return x->desc->cdb_len > 6 && (x->cmd->cdb[1] & 0x08);
}

/* Common body of WRITE and WRITE AND VERIFY: checks, then writes the covered blocks. */
static enum sense_reason write_common(struct exec_ctx *x, bool durable)
{
	enum sense_reason r;

	r = no_protect(x);
	if (r == SENSE_OK)
		r = xfer_limit(x, x->nblk);
	if (r != SENSE_OK)
		return r;
	return sbc_write_blocks(x, x->lba, covered_blocks(x, x->nblk), x->cmd->data_out, durable);
}

/* WRITE (6, 10, 12, 16). */
enum sense_reason sbc_write(struct exec_ctx *x)
{
	return write_common(x, fua_bit(x));
}

/* WRITE AND VERIFY (10, 12, 16): the medium verification cannot fail here. */
enum sense_reason sbc_write_verify(struct exec_ctx *x)
{
	/* SBC-3 r36 5.36: written data must be on the medium to be verified */
	return write_common(x, true);
}

/*
 * ORWRITE(16) (SBC-3 r36 ORWRITE (16), opcode 8Bh): the medium gets the
 * bitwise OR of what it holds and the Data-Out Buffer, under the LUN lock so
 * that the read-modify-write is atomic against every other command. Short
 * data-out is handled as for WRITE (whole blocks that arrived).
 */
enum sense_reason sbc_orwrite(struct exec_ctx *x)
{
	struct fl_lun *lun = x->lun;
	const uint8_t *data = x->cmd->data_out;
	enum sense_reason r;
	uint64_t n, bytes;
	uint8_t *buf;

	r = no_protect(x);
	if (r == SENSE_OK)
		r = xfer_limit(x, x->nblk);
	if (r != SENSE_OK)
		return r;
	n = covered_blocks(x, x->nblk);
	if (n == 0)
		return SENSE_OK;
	bytes = n << lun->block_shift;
	buf = malloc(bytes);
	if (!buf)
		return SENSE_BUSY;
	if (lun->store->ops->read(lun->store, buf, x->lba << lun->block_shift, bytes)) {
		free(buf);
		return SENSE_READ_ERROR;
	}
	for (uint64_t i = 0; i < bytes; i++)
		buf[i] |= data[i];
	r = sbc_write_blocks(x, x->lba, n, buf, fua_bit(x));
	free(buf);
	return r;
}

/*
 * WRITE ATOMIC(16) (SBC-4, opcode 9Ch): a WRITE whose blocks are
 * all or none on the medium and never seen half written. The LUN lock keeps
 * other commands out; READs of a blocking store that run without it are
 * waited for first. ATOMIC BOUNDARY must be 0 (no boundaries supported).
 */
enum sense_reason sbc_write_atomic(struct exec_ctx *x)
{
	struct fl_lun *lun = x->lun;
	const uint8_t *cdb = x->cmd->cdb;
	enum sense_reason r;

	r = no_protect(x);
	if (r != SENSE_OK)
		return r;
	if (cdb[10] | cdb[11])
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 10, -1);
	r = xfer_limit(x, x->nblk);
	if (r != SENSE_OK)
		return r;
	/* all or nothing: a short Data-Out Buffer writes nothing */
	if (x->nblk && (!x->cmd->data_out || x->cmd->data_out_len < x->nblk << lun->block_shift))
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 12, -1);
	x->cmd->residual = (int64_t)(x->nblk << lun->block_shift) - (int64_t)x->cmd->data_out_len;
	while (lun->unlocked_reads)
		pthread_cond_wait(&lun->reads_done, &lun->lock);
	return sbc_write_blocks(x, x->lba, x->nblk, x->cmd->data_out, fua_bit(x));
}

/* Offset of the first byte where a and b differ, or -1. */
static int64_t first_diff(const uint8_t *a, const uint8_t *b, uint64_t len)
{
	for (uint64_t i = 0; i < len; i++)
		if (a[i] != b[i])
			return (int64_t)i;
	return -1;
}

/* Compares n blocks at lba with `data` (one block repeated when `same`). */
static enum sense_reason compare_medium(struct exec_ctx *x, uint64_t lba, uint64_t n,
					const uint8_t *data, bool same)
{
	struct fl_lun *lun = x->lun;
	uint32_t bs = lun->block_size;
	uint8_t *blk = malloc(bs);

	if (!blk)
		return SENSE_BUSY;
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *want = same ? data : data + (i << lun->block_shift);
		int64_t d;

		if (lun->store->ops->read(lun->store, blk, (lba + i) << lun->block_shift, bs)) {
			free(blk);
			return SENSE_READ_ERROR;
		}
		d = first_diff(blk, want, bs);
		if (d >= 0) {
			free(blk);
			/* SBC-3 r36 5.2: INFORMATION = offset of the first miscompare */
			x->info_valid = true;
			x->information = (i << lun->block_shift) + (uint64_t)d;
			return SENSE_MISCOMPARE;
		}
	}
	free(blk);
	return SENSE_OK;
}

/* VERIFY (10, 12, 16): BYTCHK 00b medium only, 01b compare, 11b one block vs all. */
enum sense_reason sbc_verify(struct exec_ctx *x)
{
	uint8_t bytchk = (x->cmd->cdb[1] >> 1) & 3;
	enum sense_reason r = no_protect(x);

	if (r != SENSE_OK)
		return r;
	if (bytchk == 2)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 1, 2);
	if (bytchk == 0 || x->nblk == 0)
		return SENSE_OK;
	r = xfer_limit(x, bytchk == 3 ? 1 : x->nblk);
	if (r == SENSE_OK)
		r = need_data_out(x, (bytchk == 3 ? 1 : x->nblk) << x->lun->block_shift);
	if (r != SENSE_OK)
		return r;
	return compare_medium(x, x->lba, x->nblk, x->cmd->data_out, bytchk == 3);
}

/* COMPARE AND WRITE: verify n blocks, then write n blocks, atomically. */
enum sense_reason sbc_compare_and_write(struct exec_ctx *x)
{
	struct fl_lun *lun = x->lun;
	uint64_t n = x->nblk;
	enum sense_reason r = no_protect(x);

	if (r != SENSE_OK)
		return r;
	if (n > SBC_MAX_CAW_BLOCKS || n > lun_max_xfer_blocks(lun))
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 13, -1);
	/*
	 * SBC-3 r36 5.2: the Data-Out Buffer holds exactly 2 x n blocks. Any
	 * other amount (e.g. a 256-block request truncated to 0 in the one-byte
	 * field) is refused rather than half-understood, as LIO does.
	 */
	if (x->cmd->data_out_len != (2 * n) << lun->block_shift || (n && !x->cmd->data_out))
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 13, -1);
	if (n == 0)
		return SENSE_OK;
	/* the LUN lock makes compare + write atomic against every other command */
	r = compare_medium(x, x->lba, n, x->cmd->data_out, false);
	if (r != SENSE_OK)
		return r;
	return sbc_write_blocks(x, x->lba, n, x->cmd->data_out + (n << lun->block_shift),
				fua_bit(x));
}

/* SYNCHRONIZE CACHE (10, 16): the range (0 = to the end) becomes durable. */
enum sense_reason sbc_sync_cache(struct exec_ctx *x)
{
	return make_durable(x, x->lba, x->nblk);
}

/* PRE-FETCH (10, 16): CONDITION MET when the range fits the cache (and the LUN has one). */
enum sense_reason sbc_prefetch(struct exec_ctx *x)
{
	/*
	 * SBC-3 r36 5.9: CONDITION MET when the blocks were (IMMED=0) or can be
	 * (IMMED=1) transferred to the cache, GOOD when the cache is too small.
	 */
	if (!x->lun->cfg.prefetch_good && x->nblk <= (SBC_CACHE_BYTES >> x->lun->block_shift))
		return SENSE_CONDITION_MET;
	return SENSE_OK;
}

/* READ CAPACITY (10): 0xFFFFFFFF when the last LBA needs 64 bits. */
enum sense_reason sbc_read_capacity10(struct exec_ctx *x)
{
	const uint8_t *cdb = x->cmd->cdb;
	uint64_t last = x->lun->num_blocks - 1;
	uint8_t buf[8];

	/* SBC-3 r36 5.19: PMI=0 requires LOGICAL BLOCK ADDRESS 0 */
	if (!(cdb[8] & 1) && (cdb[2] | cdb[3] | cdb[4] | cdb[5]))
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 2, -1);
	fl_put_be32(buf, last > 0xffffffffull ? 0xffffffffu : (uint32_t)last);
	fl_put_be32(buf + 4, x->lun->block_size);
	exec_data_in(x, buf, sizeof(buf), sizeof(buf));
	return SENSE_OK;
}

/* READ CAPACITY (16): LBPME / LBPRZ when thin (SBC-3 r36 5.20). */
enum sense_reason sbc_read_capacity16(struct exec_ctx *x)
{
	const uint8_t *cdb = x->cmd->cdb;
	uint32_t alloc =
	    (uint32_t)cdb[10] << 24 | (uint32_t)cdb[11] << 16 | (uint32_t)cdb[12] << 8 | cdb[13];
	uint8_t buf[32];

	if (!(cdb[14] & 1) &&
	    (cdb[2] | cdb[3] | cdb[4] | cdb[5] | cdb[6] | cdb[7] | cdb[8] | cdb[9]))
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 2, -1);
	memset(buf, 0, sizeof(buf));
	fl_put_be64(buf, x->lun->num_blocks - 1);
	fl_put_be32(buf + 8, x->lun->block_size);
	if (x->lun->cfg.thin) {
		buf[14] |= 0x80;
		if (x->lun->cfg.lbprz)
			buf[14] |= 0x40;
	}
	exec_data_in(x, buf, sizeof(buf), alloc);
	return SENSE_OK;
}

/*
 * READ DEFECT DATA (10, 12): the emulated medium has no defects, so the
 * answer is an empty list in the format asked for. SBC-3 r36 5.17 / 5.18:
 * PLISTV / GLISTV say which lists the data holds (the ones requested), the
 * DEFECT LIST FORMAT field echoes the request and DEFECT LIST LENGTH is 0.
 * Formats 000b-101b are the address descriptor formats (Table 15); the
 * vendor-specific 110b and reserved 111b are refused with 24/00.
 */
enum sense_reason sbc_read_defect_data(struct exec_ctx *x)
{
	const uint8_t *cdb = x->cmd->cdb;
	bool twelve = x->desc->cdb_len == 12;
	uint16_t flags_byte = twelve ? 1 : 2;
	uint8_t flags = cdb[flags_byte], buf[8];
	uint32_t alloc = twelve ? (uint32_t)cdb[6] << 24 | (uint32_t)cdb[7] << 16 |
				      (uint32_t)cdb[8] << 8 | cdb[9]
				: (uint32_t)cdb[7] << 8 | cdb[8];

	if ((flags & 0x07) > 5)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, flags_byte, 2);
	memset(buf, 0, sizeof(buf));
	/* byte 1: PLISTV (bit 4), GLISTV (bit 3), DEFECT LIST FORMAT (bits 2-0) */
	buf[1] = flags & 0x1f;
	/* (12): GENERATION CODE 0 (bytes 2-3), DEFECT LIST LENGTH 0 (bytes 4-7) */
	exec_data_in(x, buf, twelve ? 8 : 4, alloc);
	return SENSE_OK;
}

/* START STOP UNIT: START=0 stops (media commands then get 04/02); LOEJ ejects / loads. */
enum sense_reason sbc_start_stop(struct exec_ctx *x)
{
	const uint8_t *cdb = x->cmd->cdb;
	struct fl_lun *lun = x->lun;
	uint8_t power_condition = cdb[4] >> 4;
	bool loej = cdb[4] & 0x02, start = cdb[4] & 0x01;

	/* a vendor personality may give START STOP UNIT its own meaning (vendor.h) */
	if (lun->vops && lun->vops->start_stop) {
		bool handled = false;
		enum sense_reason r = lun->vops->start_stop(x, &handled);

		if (handled)
			return r;
	}
	/*
	 * SBC-3 r36 5.25: with a POWER CONDITION other than 0h (START_VALID)
	 * START and LOEJ are ignored; power conditions are not modelled.
	 */
	if (power_condition)
		return SENSE_OK;
	if (loej) {
		/* a fixed medium cannot be ejected or loaded */
		if (!lun->cfg.removable)
			return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 4, 1);
		/* SPC-4 r37 6.13: PREVENT keeps the medium where it is */
		if (lun->removal_prevented)
			return SENSE_MEDIUM_REMOVAL_PREVENTED;
		lun->medium_ejected = !start;
		lun->stopped = !start;
		return SENSE_OK;
	}
	if (start && lun->medium_ejected)
		return SENSE_MEDIUM_NOT_PRESENT;
	lun->stopped = !start;
	return SENSE_OK;
}
