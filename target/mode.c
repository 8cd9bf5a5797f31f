/* SPDX-License-Identifier: MIT */
/*
 * mode.c - MODE SENSE (6, 10) and MODE SELECT (6, 10) of the logical unit.
 *
 * Pages: caching 08h (SBC-3 r36 6.4.5: WCE, RCD changeable), control 0Ah
 * (SPC-4 r37 7.5.8: D_SENSE and SWP changeable; TST, QErr, QAM reported;
 * SWP set write-protects the medium as `read_only` does, WP in the header),
 * informational exceptions control 1Ch (SPC-4 r37 7.5.12: PERF, DEXCPT,
 * TEST, LOGERR, MRIE, INTERVAL TIMER, REPORT COUNT changeable), and 3Fh
 * for all of them (SPC-4 r37 7.5.1), plus the pages of a vendor personality
 * (vendor.h), which may have subpages. No standard subpages exist. Page control
 * (SPC-4 r37 6.11, Table 159): current, changeable, default, saved.
 *
 * Saving is supported: every page reports PS=1, MODE SENSE with PC=11b
 * returns the saved values, and MODE SELECT with SP=1 makes the new values
 * the saved ones. Saved values are what a LUN RESET and a power-loss event
 * restore (lun.c); they live as long as the LUN object, not across a restart
 * of the process.
 *
 * MODE SELECT (SPC-4 r37 6.9, 6.10) is all or nothing: the parameter list is
 * checked completely (1A/00 for a list that ends inside a header, descriptor
 * or page; 26/00 with the field pointer for an unknown page, a wrong page
 * length, a bad block descriptor or a changed bit the page reports as not
 * changeable) before anything is applied. When values change, every other
 * I_T nexus gets UA 2A/01 MODE PARAMETERS CHANGED (SPC-4 r37 5.14 / 6.9).
 * Changing D_SENSE switches the format of the very next sense data, because
 * sense.c reads the current control page.
 */
#include "spc_internal.h"
#include "vendor.h"

#include <string.h>

#define MODE_PAGE_ALL 0x3f
/* room for the vendor pages of a personality in one MODE SENSE */
#define MODE_VENDOR_MAX 512

/* One mode page: how to show a state, which bits change, how to read it back. */
struct mode_page {
	uint8_t code;
	uint8_t len; /* PAGE LENGTH field: bytes after the first two */
	void (*build)(const struct mode_state *m, uint8_t *p);
	void (*changeable)(uint8_t *p);
	void (*parse)(struct mode_state *m, const uint8_t *p);
	/* value checks beyond changeability: byte offset in the page, or -1 */
	int (*check)(const uint8_t *p, int8_t *bit);
};

/* Caching page 08h (SBC-3 r36 6.4.5, Table 189). */
static void caching_build(const struct mode_state *m, uint8_t *p)
{
	p[2] = (uint8_t)((m->wce ? 0x04 : 0) | (m->rcd ? 0x01 : 0));
}

/* Caching page: WCE and RCD are changeable. */
static void caching_changeable(uint8_t *p)
{
	p[2] = 0x04 | 0x01;
}

/* Caching page: reads WCE and RCD. */
static void caching_parse(struct mode_state *m, const uint8_t *p)
{
	m->wce = p[2] & 0x04;
	m->rcd = p[2] & 0x01;
}

/* Control page 0Ah (SPC-4 r37 7.5.8, Table 405). */
static void control_build(const struct mode_state *m, uint8_t *p)
{
	p[2] = (uint8_t)((m->tst & 7) << 5 | (m->d_sense ? 0x04 : 0));
	/* QUEUE ALGORITHM MODIFIER 1h: the store workers may reorder SIMPLE tasks */
	p[3] = (uint8_t)(0x10 | (m->qerr & 3) << 1);
	p[4] = m->swp ? 0x08 : 0;
	fl_put_be16(p + 8, 0xffff); /* BUSY TIMEOUT PERIOD: unlimited */
}

/* Control page: D_SENSE and SWP are changeable. */
static void control_changeable(uint8_t *p)
{
	p[2] = 0x04;
	p[4] = 0x08;
}

/* Control page: reads D_SENSE and SWP (the rest cannot differ from current). */
static void control_parse(struct mode_state *m, const uint8_t *p)
{
	m->d_sense = p[2] & 0x04;
	m->swp = p[4] & 0x08;
}

/* Informational exceptions control page 1Ch (SPC-4 r37 7.5.12, Table 420). */
static void iec_build(const struct mode_state *m, uint8_t *p)
{
	p[2] = (uint8_t)((m->perf ? 0x80 : 0) | (m->dexcpt ? 0x08 : 0) | (m->test ? 0x04 : 0) |
			 (m->logerr ? 0x01 : 0));
	p[3] = m->mrie & 0x0f;
	fl_put_be32(p + 4, m->interval_timer);
	fl_put_be32(p + 8, m->report_count);
}

/* Informational exceptions: PERF, DEXCPT, TEST, LOGERR, MRIE, timer, count. */
static void iec_changeable(uint8_t *p)
{
	p[2] = 0x80 | 0x08 | 0x04 | 0x01;
	p[3] = 0x0f;
	memset(p + 4, 0xff, 8);
}

/* Informational exceptions: reads the changeable fields. */
static void iec_parse(struct mode_state *m, const uint8_t *p)
{
	m->perf = p[2] & 0x80;
	m->dexcpt = p[2] & 0x08;
	m->test = p[2] & 0x04;
	m->logerr = p[2] & 0x01;
	m->mrie = p[3] & 0x0f;
	m->interval_timer = fl_get_be32(p + 4);
	m->report_count = fl_get_be32(p + 8);
}

/*
 * SPC-4 r37 7.5.12: MRIE values 7h..Bh are reserved, Ch..Fh vendor
 * specific (none here); "If both the TEST bit and the DEXCPT bit are set
 * to one, then the MODE SELECT command shall be terminated with CHECK
 * CONDITION status ... INVALID FIELD IN PARAMETER LIST".
 */
static int iec_check(const uint8_t *p, int8_t *bit)
{
	if ((p[3] & 0x0f) > 6) {
		*bit = 3;
		return 3;
	}
	if ((p[2] & 0x0c) == 0x0c) {
		*bit = 2;
		return 2;
	}
	return -1;
}

/* The pages, in the order page 3Fh returns them (ascending page code). */
static const struct mode_page mode_pages[] = {
    {0x08, 0x12, caching_build, caching_changeable, caching_parse, NULL},
    {0x0a, 0x0a, control_build, control_changeable, control_parse, NULL},
    {0x1c, 0x0a, iec_build, iec_changeable, iec_parse, iec_check},
};

#define NPAGES (sizeof(mode_pages) / sizeof(mode_pages[0]))

/* The page with that code, or NULL. */
static const struct mode_page *mode_page_find(uint8_t code)
{
	for (size_t i = 0; i < NPAGES; i++)
		if (mode_pages[i].code == code)
			return &mode_pages[i];
	return NULL;
}

/* The default values: the LUN's configuration, everything else off. */
static void mode_defaults(const struct fl_lun *lun, struct mode_state *m)
{
	memset(m, 0, sizeof(*m));
	m->wce = lun->cfg.write_cache;
	m->d_sense = lun->cfg.d_sense;
}

/* True when two sets of values are the same (no memcmp: padding). */
static bool mode_equal(const struct mode_state *a, const struct mode_state *b)
{
	return a->wce == b->wce && a->rcd == b->rcd && a->d_sense == b->d_sense &&
	       a->swp == b->swp && a->qerr == b->qerr && a->tst == b->tst && a->mrie == b->mrie &&
	       a->dexcpt == b->dexcpt && a->perf == b->perf && a->test == b->test &&
	       a->logerr == b->logerr && a->interval_timer == b->interval_timer &&
	       a->report_count == b->report_count;
}

/* Writes one page for page control pc at p; returns its length. */
static uint32_t mode_page_put(const struct fl_lun *lun, const struct mode_page *pg, uint8_t pc,
			      uint8_t *p)
{
	struct mode_state def;

	memset(p, 0, 2u + pg->len);
	p[0] = 0x80 | pg->code; /* PS: the page is savable */
	p[1] = pg->len;
	switch (pc) {
	case 0:
		pg->build(&lun->mode, p);
		break;
	case 1:
		pg->changeable(p);
		break;
	case 2:
		mode_defaults(lun, &def);
		pg->build(&def, p);
		break;
	default:
		pg->build(&lun->mode_saved, p);
		break;
	}
	return 2u + pg->len;
}

/* Writes the block descriptor (SBC-3 r36 6.4.2) for pc; returns its length. */
static uint32_t mode_block_descriptor(const struct fl_lun *lun, bool longlba, uint8_t pc,
				      uint8_t *p)
{
	uint32_t len = longlba ? 16 : 8;

	memset(p, 0, len);
	if (pc == 1)
		return len; /* nothing in it is changeable */
	if (longlba) {
		fl_put_be64(p, lun->num_blocks);
		fl_put_be32(p + 12, lun->block_size);
	} else {
		/* "If the number of logical blocks ... exceeds FFFFFFFFh ... FFFFFFFFh" */
		fl_put_be32(p, lun->num_blocks > 0xffffffffull ? 0xffffffffu
							       : (uint32_t)lun->num_blocks);
		p[5] = (uint8_t)(lun->block_size >> 16);
		p[6] = (uint8_t)(lun->block_size >> 8);
		p[7] = (uint8_t)lun->block_size;
	}
	return len;
}

/*
 * MODE SENSE (6) / (10) (SPC-4 r37 6.11, 6.12). DBD suppresses the block
 * descriptor, LLBAA (10 only) asks for the long one. PAGE CODE 3Fh returns
 * every page; SUBPAGE CODE must be 00h, or FFh (all subpages, of which there
 * are none besides subpage 0).
 */
enum sense_reason spc_mode_sense(struct exec_ctx *x)
{
	const uint8_t *cdb = x->cmd->cdb;
	const struct fl_lun *lun = x->lun;
	bool ten = cdb[0] == SPC_OP_MODE_SENSE_10;
	uint8_t b1_ok = ten ? 0x18 : 0x08;
	bool dbd = cdb[1] & 0x08, llbaa = ten && (cdb[1] & 0x10);
	uint8_t pc = cdb[2] >> 6, code = cdb[2] & 0x3f, sub = cdb[3];
	uint32_t alloc = ten ? fl_get_be16(cdb + 7) : cdb[4];
	uint8_t buf[8 + 16 + 64 * NPAGES + MODE_VENDOR_MAX];
	uint32_t hdr = ten ? 8 : 4, len;
	const struct mode_page *one = NULL;
	/* a vendor page asked for by its code (vendor.h) */
	bool vendor_one = code != MODE_PAGE_ALL && lun->vops && lun->vops->is_mode_page &&
			  lun->vops->is_mode_page(code);

	if (cdb[1] & ~b1_ok)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 1,
					  spc_top_bit(cdb[1] & ~b1_ok));
	if (code != MODE_PAGE_ALL && !vendor_one) {
		one = mode_page_find(code);
		if (!one)
			return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 2, 5);
	}
	if (sub != 0x00 && sub != 0xff && !vendor_one)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 3, 7);
	memset(buf, 0, sizeof(buf));
	len = hdr;
	if (!dbd) {
		uint32_t bdl = mode_block_descriptor(lun, llbaa, pc, buf + len);

		len += bdl;
		if (ten)
			fl_put_be16(buf + 6, bdl);
		else
			buf[3] = (uint8_t)bdl;
		if (llbaa)
			buf[4] = 0x01; /* LONGLBA */
	}
	if (vendor_one) {
		uint32_t n = lun->vops->mode_sense(x, code, sub, pc, buf + len, MODE_VENDOR_MAX);

		if (!n)
			return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 3, 7);
		len += n;
	} else if (one) {
		len += mode_page_put(lun, one, pc, buf + len);
	} else {
		for (size_t i = 0; i < NPAGES; i++)
			len += mode_page_put(lun, &mode_pages[i], pc, buf + len);
		if (lun->vops && lun->vops->mode_sense)
			len += lun->vops->mode_sense(x, MODE_PAGE_ALL, sub, pc, buf + len,
						     MODE_VENDOR_MAX);
	}
	/* MODE SENSE (6) reports at most 255 bytes of mode data */
	if (!ten && len > 256)
		len = 256;
	/* SBC-3 r36 6.4.1: device-specific parameter, WP and DPOFUA */
	buf[ten ? 3 : 2] = (uint8_t)((lun->mode.swp || lun->cfg.read_only ? 0x80 : 0) | 0x10);
	if (ten)
		fl_put_be16(buf, len - 2);
	else
		buf[0] = (uint8_t)(len - 1);
	exec_data_in(x, buf, len, alloc);
	return SENSE_OK;
}

/* Checks a block descriptor of MODE SELECT: it may not change the geometry. */
static enum sense_reason select_block_descriptor(struct exec_ctx *x, const uint8_t *p, uint32_t off,
						 bool longlba)
{
	const struct fl_lun *lun = x->lun;
	uint64_t nblocks = longlba ? fl_get_be64(p) : fl_get_be32(p);
	uint32_t bs = longlba ? fl_get_be32(p + 12) : (uint32_t)p[5] << 16 | fl_get_be16(p + 6);
	uint64_t shown =
	    longlba || lun->num_blocks <= 0xffffffffull ? lun->num_blocks : 0xffffffffull;

	/* SBC-3 r36 6.4.2: NUMBER OF LOGICAL BLOCKS 0 means "no change" */
	if (nblocks != 0 && nblocks != shown)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM, (uint16_t)off, 7);
	if (bs != lun->block_size)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM,
					  (uint16_t)(off + (longlba ? 12 : 5)), 7);
	return SENSE_OK;
}

/* Checks one page of MODE SELECT at p (offset off) and reads it into m. */
static enum sense_reason select_page(struct exec_ctx *x, const uint8_t *p, uint32_t off,
				     uint32_t avail, struct mode_state *m, uint32_t *used)
{
	uint8_t cur[2 + 255], mask[2 + 255];
	const struct mode_page *pg;
	int8_t bit = -1;
	int bad;

	if (avail < 2)
		return SENSE_PARAM_LIST_LENGTH_ERROR;
	/*
	 * SPC-4 r37 7.5.7: PS is reserved in MODE SELECT but hosts send back
	 * what MODE SENSE gave them, so it is ignored. SPF=1 would be a
	 * subpage, and there are none.
	 */
	if (p[0] & 0x40)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM, (uint16_t)off, 6);
	pg = mode_page_find(p[0] & 0x3f);
	if (!pg)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM, (uint16_t)off, 5);
	if (p[1] != pg->len)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM, (uint16_t)(off + 1), 7);
	if (avail < 2u + pg->len)
		return SENSE_PARAM_LIST_LENGTH_ERROR;
	mode_page_put(x->lun, pg, 0, cur);
	mode_page_put(x->lun, pg, 1, mask);
	/*
	 * SPC-4 r37 6.9: "If the application client sets any field that is
	 * reported as not changeable by the device server to a value other than
	 * its current value, ... INVALID FIELD IN PARAMETER LIST".
	 */
	for (uint32_t i = 2; i < 2u + pg->len; i++) {
		uint8_t diff = (uint8_t)((p[i] ^ cur[i]) & ~mask[i]);

		if (diff)
			return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM,
						  (uint16_t)(off + i), spc_top_bit(diff));
	}
	if (pg->check) {
		bad = pg->check(p, &bit);
		if (bad >= 0)
			return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM,
						  (uint16_t)(off + (uint32_t)bad), bit);
	}
	pg->parse(m, p);
	*used = 2u + pg->len;
	return SENSE_OK;
}

/* True when a MODE SELECT page (first byte b) is a vendor personality's. */
static bool select_is_vendor(const struct fl_lun *lun, uint8_t b)
{
	return lun->vops && lun->vops->is_mode_page && lun->vops->is_mode_page(b & 0x3f);
}

/*
 * MODE SELECT (6) / (10) (SPC-4 r37 6.9, 6.10). PF must be one (only the
 * page format is understood); "A PARAMETER LIST LENGTH field set to zero
 * specifies that no data shall be transferred. This shall not be considered
 * an error."
 */
enum sense_reason spc_mode_select(struct exec_ctx *x)
{
	struct fl_cmd *cmd = x->cmd;
	const uint8_t *cdb = cmd->cdb, *p = cmd->data_out;
	struct fl_lun *lun = x->lun;
	bool ten = cdb[0] == SPC_OP_MODE_SELECT_10, sp = cdb[1] & 0x01, longlba;
	uint32_t plen = ten ? fl_get_be16(cdb + 7) : cdb[4];
	uint32_t hdr = ten ? 8 : 4, bdl, off, used;
	struct mode_state m;
	enum sense_reason r;

	if (cdb[1] & 0xee)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 1,
					  spc_top_bit(cdb[1] & 0xee));
	if (plen == 0)
		return SENSE_OK;
	/* a personality may take its vendor pages without PF, as its array does */
	if (!(cdb[1] & 0x10) && !(lun->vops && lun->vops->select_without_pf))
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 1, 4);
	if (!p || cmd->data_out_len < plen)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, ten ? 7 : 4, 7);
	cmd->residual = (int64_t)plen - (int64_t)cmd->data_out_len;
	if (plen < hdr)
		return SENSE_PARAM_LIST_LENGTH_ERROR;
	/* mode parameter header (Table 453/454): MEDIUM TYPE 00h only */
	if (p[1 + (ten ? 1 : 0)])
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM, ten ? 2 : 1, 7);
	longlba = ten && (p[4] & 0x01);
	bdl = ten ? fl_get_be16(p + 6) : p[3];
	if (bdl != 0 && bdl != (longlba ? 16u : 8u))
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM, ten ? 6 : 3, 7);
	if (hdr + bdl > plen)
		return SENSE_PARAM_LIST_LENGTH_ERROR;
	if (bdl) {
		r = select_block_descriptor(x, p + hdr, hdr, longlba);
		if (r != SENSE_OK)
			return r;
	}
	m = lun->mode;
	for (off = hdr + bdl; off < plen; off += used) {
		if (select_is_vendor(lun, p[off]))
			r = lun->vops->mode_select(x, p + off, off, plen - off, &used, false);
		else
			r = select_page(x, p + off, off, plen - off, &m, &used);
		if (r != SENSE_OK)
			return r;
	}
	/* the whole list is valid: the vendor pages take effect, in order */
	for (off = hdr + bdl; off < plen; off += used) {
		if (select_is_vendor(lun, p[off]))
			r = lun->vops->mode_select(x, p + off, off, plen - off, &used, true);
		else
			r = select_page(x, p + off, off, plen - off, &m, &used);
		if (r != SENSE_OK)
			return r;
	}
	if (!mode_equal(&m, &lun->mode)) {
		/*
		 * SPC-4 r37 7.5.8: with SWP set the medium takes no more writes
		 * "after writing all cached or buffered write operations": the
		 * write cache destages first.
		 */
		if (m.swp && !lun->mode.swp) {
			if (lun->store->ops->sync(lun->store))
				return SENSE_WRITE_ERROR;
			dirty_clear(lun, 0, UINT64_MAX);
		}
		lun->mode = m;
		/* SPC-4 r37 5.14 (Table 50): MODE PARAMETERS CHANGED for the others */
		lun_ua_all(lun, x->ns->id, ASC_PARAMETERS_CHANGED, ASCQ_MODE_PARAMETERS_CHANGED);
	}
	if (sp)
		lun->mode_saved = lun->mode;
	return SENSE_OK;
}
