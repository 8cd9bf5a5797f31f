// SPDX-License-Identifier: MIT
/*
 * fuzz_cdb.c - libFuzzer target for the logical-unit core: the CDB decoder
 * (fl_cdb_decode) and command execution (fl_target_submit on a small memory
 * LUN), SBC-3 / SPC-4 commands from two I_T nexuses, and to a LUN that does
 * not exist (SPC-4 4.8).
 *
 * Input: a sequence of commands, each
 *   u8 flags (bit0 nexus 1 or 2, bit1 LUN 0 or 1, bits 2..7 CDB length 1..32)
 *   CDB bytes, u16 data-out length (big endian), data-out bytes,
 *   u16 data-in capacity (big endian; capped at 64 KiB).
 * A fresh LUN per input keeps every run reproducible from its input alone.
 */
#include "fl_target.h"

#include <stdlib.h>
#include <string.h>

#define DIN_MAX 65536

/* Completion: the memory store completes inline, so only count. */
static void on_done(struct fl_cmd *cmd)
{
	*(int *)cmd->priv += 1;
}

/* Takes n bytes from the input, or fewer at its end. */
static size_t take(const uint8_t **p, size_t *left, size_t n)
{
	if (n > *left)
		n = *left;
	*p += n;
	*left -= n;
	return n;
}

/* Reads a big-endian u16 from the input (0 at its end). */
static uint32_t take16(const uint8_t **p, size_t *left)
{
	uint32_t v = 0;
	if (*left >= 2)
		v = ((uint32_t)(*p)[0] << 8) | (*p)[1];
	take(p, left, 2);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One input: builds a target with LUN 0, runs every command in it, tears down. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t din[DIN_MAX];
	struct fl_lun_config cfg;
	struct fl_target *tgt;
	struct fl_lun *lun;
	int n = 0;

	fl_lun_config_default(&cfg);
	cfg.num_blocks = 2048;
	cfg.thin = (size & 1) != 0;
	cfg.d_sense = (size & 2) != 0;
	if (fl_target_create(&tgt) != 0)
		abort();
	if (fl_lun_create(&cfg, &lun) != 0 || fl_target_add_lun(tgt, 0, lun) != 0)
		abort();

	const uint8_t *p = data;
	size_t left = size;
	for (int i = 0; left > 0 && i < 64; i++) {
		uint8_t flags = p[0];
		take(&p, &left, 1);
		struct fl_cmd cmd;
		memset(&cmd, 0, sizeof(cmd));
		size_t cdb_len = (flags >> 2) % FL_CDB_MAX + 1;
		const uint8_t *cdb = p;
		cdb_len = take(&p, &left, cdb_len);
		memcpy(cmd.cdb, cdb, cdb_len);
		cmd.cdb_len = (uint8_t)cdb_len;
		struct fl_cdb_info info;
		(void)fl_cdb_decode(cmd.cdb, cmd.cdb_len, &info);
		(void)fl_opcode_name(info.opcode, info.service_action);

		uint32_t dout_len = take16(&p, &left);
		const uint8_t *dout = p;
		dout_len = (uint32_t)take(&p, &left, dout_len);
		/* A private copy so that ASan sees reads past its end. */
		uint8_t *dcopy = dout_len ? malloc(dout_len) : NULL;
		if (dout_len)
			memcpy(dcopy, dout, dout_len);
		uint32_t din_cap = take16(&p, &left);
		if (din_cap == 0xffff)
			din_cap = DIN_MAX;
		uint8_t *dbuf = din_cap ? malloc(din_cap) : NULL;

		cmd.nexus.id = (flags & 1) ? 2 : 1;
		cmd.nexus.initiator =
		    (flags & 1) ? "iqn.2026-12.org.fuzz:b,i,0x1" : "iqn.2026-12.org.fuzz:a,i,0x1";
		cmd.nexus.rel_port_id = (flags & 1) ? 2 : 1;
		cmd.tag = (uint64_t)i;
		cmd.data_out = dcopy;
		cmd.data_out_len = dout_len;
		cmd.data_in = dbuf;
		cmd.data_in_cap = din_cap;
		cmd.done = on_done;
		cmd.priv = &n;
		int before = n;
		fl_target_submit(tgt, (flags & 2) ? 1 : 0, &cmd);
		/* Every command completes exactly once, inline with a memory store. */
		if (n != before + 1)
			abort();
		if (cmd.data_in_len > din_cap || cmd.sense_len > FL_SENSE_MAX)
			abort();
		if (cmd.data_in_len)
			memcpy(din, dbuf, cmd.data_in_len);
		free(dcopy);
		free(dbuf);
	}
	fl_target_destroy(tgt);
	return 0;
}
