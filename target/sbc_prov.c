/* SPDX-License-Identifier: MIT */
/*
 * sbc_prov.c - SBC-3 logical block provisioning commands: WRITE SAME (10,
 * 16) with the UNMAP and NDOB bits, UNMAP and GET LBA STATUS.
 *
 * Clauses: SBC-3 r36 4.7 (logical block provisioning), 5.42/5.43 (WRITE
 * SAME), 5.28 (UNMAP, parameter list 5.28.2), 5.7 (GET LBA STATUS). Pool
 * accounting and the map itself are in thin.c; the write path in sbc.c.
 */
#include "fl_byteorder.h"
#include "target_internal.h"

#include <stdlib.h>
#include <string.h>

#define WS_CHUNK_BYTES (1u << 20)
#define GLS_MAX_DESCRIPTORS 1024u

/* True when len bytes are zero. */
static bool is_zero(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/* WRITE SAME (10, 16): one block written to a range, or the range unmapped. */
enum sense_reason sbc_write_same(struct exec_ctx *x)
{
	struct fl_lun *lun = x->lun;
	const uint8_t *cdb = x->cmd->cdb;
	bool ws16 = x->desc->cdb_len == 16;
	uint16_t lenf = ws16 ? 10 : 7;
	bool ndob = ws16 && (cdb[1] & 0x01);
	uint32_t bs = lun->block_size;
	const uint8_t *block;
	uint8_t *buf;
	uint64_t per, done = 0;
	enum sense_reason r = SENSE_OK;

	if (cdb[1] & 0xe0)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 1, 7);
	if (cdb[1] & 0x10) /* ANCHOR: ANC_SUP is 0 */
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 1, 4);
	if (!ws16 && (cdb[1] & 0x06)) /* PBDATA / LBDATA are not supported */
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 1, cdb[1] & 0x04 ? 2 : 1);
	/* SBC-3 r36 5.42: WSNZ=1, and the block limits page's maximum */
	if (x->nblk == 0 || x->nblk > SBC_MAX_WS_BLOCKS)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, lenf, -1);
	if (!ndob && (!x->cmd->data_out || x->cmd->data_out_len < bs))
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, lenf, -1);
	block = ndob ? NULL : x->cmd->data_out;
	if (!ndob)
		x->cmd->residual = (int64_t)bs - (int64_t)x->cmd->data_out_len;
	/* SBC-3 r36 5.42: without LBPWS / LBPWS10 the UNMAP bit is an invalid field */
	if ((cdb[1] & 0x08) && !lun->thin)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 1, 3);
	/* UNMAP bit on a thin LUN with a zero block: deallocate (reads stay zero) */
	if ((cdb[1] & 0x08) && lun->thin && (ndob || is_zero(block, bs)))
		return sbc_unmap_blocks(x, x->lba, x->nblk);
	if (lun->thin) {
		uint64_t need = thin_count_unmapped(lun->thin, x->lba, x->nblk);

		if (need && thin_mapped_count(lun->thin) + need > lun->cfg.pool_blocks)
			return SENSE_SPACE_ALLOC_FAILED;
	}
	per = WS_CHUNK_BYTES / bs;
	if (per > x->nblk)
		per = x->nblk;
	buf = calloc(per, bs);
	if (!buf)
		return SENSE_BUSY;
	for (uint64_t i = 0; i < per && block; i++)
		memcpy(buf + i * bs, block, bs);
	while (done < x->nblk && r == SENSE_OK) {
		uint64_t n = x->nblk - done < per ? x->nblk - done : per;

		r = sbc_write_blocks(x, x->lba + done, n, buf, false);
		done += n;
	}
	free(buf);
	return r;
}

/* UNMAP: validates every descriptor, then deallocates them all. */
enum sense_reason sbc_unmap(struct exec_ctx *x)
{
	struct fl_lun *lun = x->lun;
	struct fl_cmd *cmd = x->cmd;
	const uint8_t *p = cmd->data_out;
	uint32_t plen = fl_get_be16(cmd->cdb + 7), dl, bdl, ndesc;
	uint64_t total = 0;
	enum sense_reason r = SENSE_OK;

	/* SBC-3 r36 4.7.3.3: without LBPU there is no UNMAP command */
	if (!lun->thin)
		return SENSE_INVALID_OPCODE;
	if (cmd->cdb[1] & 0x01) /* ANCHOR */
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 1, 0);
	if (plen == 0)
		return SENSE_OK;
	/* SBC-3 r36 5.28.1: a parameter list shorter than its header */
	if (plen < 8)
		return SENSE_PARAM_LIST_LENGTH_ERROR;
	if (!p || cmd->data_out_len < plen)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 7, -1);
	dl = fl_get_be16(p);
	bdl = fl_get_be16(p + 2);
	if (dl + 2 > plen)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM, 0, -1);
	if (bdl + 8 > plen)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM, 2, -1);
	ndesc = bdl / 16; /* an incomplete last descriptor is ignored */
	if (ndesc > SBC_MAX_UNMAP_DESCRIPTORS)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM, 2, -1);
	for (uint32_t i = 0; i < ndesc; i++) {
		const uint8_t *d = p + 8 + 16 * i;
		uint64_t lba = fl_get_be64(d);
		uint32_t n = fl_get_be32(d + 8);

		if (lba > lun->num_blocks || n > lun->num_blocks - lba)
			return SENSE_LBA_OUT_OF_RANGE;
		total += n;
		if (n > SBC_MAX_UNMAP_LBA_COUNT || total > SBC_MAX_UNMAP_LBA_COUNT)
			return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM,
						  (uint16_t)(8 + 16 * i + 8), -1);
	}
	for (uint32_t i = 0; i < ndesc && r == SENSE_OK; i++) {
		const uint8_t *d = p + 8 + 16 * i;

		r = sbc_unmap_blocks(x, fl_get_be64(d), fl_get_be32(d + 8));
	}
	return r;
}

/* GET LBA STATUS: mapped / deallocated extents from the starting LBA. */
enum sense_reason sbc_get_lba_status(struct exec_ctx *x)
{
	struct fl_lun *lun = x->lun;
	uint32_t alloc = fl_get_be32(x->cmd->cdb + 10);
	uint32_t max_desc = alloc < 24 ? 1 : (alloc - 8) / 16;
	uint64_t lba = x->lba;
	uint8_t *buf;
	uint32_t n = 0;

	if (max_desc > GLS_MAX_DESCRIPTORS)
		max_desc = GLS_MAX_DESCRIPTORS;
	buf = calloc(1, 8 + 16 * (size_t)max_desc);
	if (!buf)
		return SENSE_BUSY;
	while (n < max_desc && lba < lun->num_blocks) {
		uint8_t *d = buf + 8 + 16 * n;
		uint64_t len;
		bool mapped = true;

		if (lun->thin)
			len = thin_extent(lun->thin, lba, 0xffffffffu, &mapped);
		else
			len = lun->num_blocks - lba;
		if (len > 0xffffffffu)
			len = 0xffffffffu;
		for (int i = 0; i < 8; i++)
			d[i] = (uint8_t)(lba >> (56 - 8 * i));
		fl_put_be32(d + 8, (uint32_t)len);
		/* SBC-3 r36 Table 41: 0 mapped, 1 deallocated */
		d[12] = mapped ? 0 : 1;
		lba += len;
		n++;
	}
	fl_put_be32(buf, 4 + 16 * n);
	exec_data_in(x, buf, 8 + 16 * n, alloc);
	free(buf);
	return SENSE_OK;
}
