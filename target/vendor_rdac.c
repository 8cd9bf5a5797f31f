/* SPDX-License-Identifier: MIT */
/*
 * vendor_rdac.c - the RDAC personality: LSI / Engenio / NetApp E-Series
 * arrays (also sold as Dell MD3xxx, IBM DS3000-5000, SGI IS, Sun/STK
 * 2500-6000): two controllers, each LUN owned by one of them, ownership moved
 * by the host with MODE SELECT of the redundant controller page 2Ch.
 *
 * What a host reads and sends, as Linux's scsi_dh_rdac and multipath-tools'
 * rdac checker and prioritizer use it:
 *   VPD C2h "swr4"  software version; MAXIMUM LUNS SUPPORTED (byte 15): 32 or
 *                   more means the host uses the expanded (MODE SELECT(10),
 *                   page 2Ch subpage 01h) form, else the legacy MODE SELECT(6)
 *   VPD C4h "subs"  subsystem id (16 bytes at 8), revision, slot id (28-29):
 *                   which controller answers ('1' second byte = controller A)
 *   VPD C8h "edid"  volume unique id, volume label, array unique id (89-105),
 *                   array label in UTF-16 (106-166), LUN number (174)
 *   VPD C9h "vace"  volume access control: byte 8 AVTE (7), IOSHIP (5),
 *                   TPGDE (4), CVP (0: this controller owns the volume);
 *                   byte 9 preferred path (1 preferred, 2 secondary);
 *                   bytes 10-13 access state of this / the other controller
 *   mode page 2Ch   redundant controller page: controller serials, RDAC
 *                   MODE (02h in byte 1: transfer the LUNs marked in the LUN
 *                   table), quiescence timeout, options, LUN table (81h:
 *                   move that LUN to the controller receiving the command)
 * Sense vocabulary: ILLEGAL REQUEST 94/01 (the LUN is not owned by this
 * controller; I/O on the alternate controller), NOT READY 04/A1
 * (quiescence in progress), UNIT ATTENTION 8B/02 (quiescence), ILLEGAL
 * REQUEST 91/36 (command lock contention), NOT READY 04/01.
 *
 * The LUN's controllers are its target port groups: the first group of
 * cfg.tpgs is controller A, the second B. Only the LUN a MODE SELECT is
 * addressed to moves; entries of other LUNs in its table are accepted and
 * left alone (each LUN is its own object here).
 */
#include "spc_internal.h"
#include "vendor.h"

#include <stdio.h>
#include <string.h>

/* RDAC sense vocabulary (as scsi_dh_rdac.c reacts to it). */
#define RDAC_ASC_NOT_OWNED 0x94
#define RDAC_ASCQ_NOT_OWNED 0x01
#define RDAC_ASC_NOT_READY 0x04
#define RDAC_ASCQ_QUIESCING 0xa1

/* Redundant controller mode page. */
#define RDAC_PAGE 0x2c
#define RDAC_SUBPAGE_EXPANDED 0x01
#define RDAC_LEGACY_LEN 0x68	/* PAGE LENGTH of the legacy page */
#define RDAC_EXPANDED_LEN 0x128 /* PAGE LENGTH of the expanded page */
#define RDAC_COMMON_LEN 38	/* serials, modes, quiescence timeout, options */
#define RDAC_MODE_TRANSFER 0x02 /* RDAC MODE byte 1: transfer the LUNs of the table */
#define RDAC_LUN_TRANSFER 0x81	/* a LUN table entry: move it here */

static const uint8_t rdac_vpd_codes[] = {0xc2, 0xc4, 0xc8, 0xc9};

/* Index of the command's controller among the LUN's groups (0 = A). */
static unsigned rdac_ctlr(const struct exec_ctx *x)
{
	return lun_tpg_index(x->lun, x->cmd->nexus.rel_port_id);
}

/* The 16-byte subsystem identifier, the same through both controllers. */
static void rdac_subsys_id(const struct fl_lun *lun, uint8_t *out)
{
	uint64_t naa;
	char s[17];

	fl_lun_identity(lun, &naa, NULL, 0);
	snprintf(s, sizeof(s), "%016llx", (unsigned long long)(naa ^ lun->lun_id));
	memcpy(out, s, 16);
}

/* Copies ASCII text as UTF-16BE (high byte 0) into n characters at out. */
static void rdac_utf16(uint8_t *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s && s[i]; i++)
		out[2 * i + 1] = (uint8_t)s[i];
}

/* Access state of one controller for C9h: owner active/optimized, else standby. */
static uint8_t rdac_aas(const struct fl_lun *lun, unsigned idx)
{
	if (vendor_quiescing(lun))
		return FL_ALUA_TRANSITIONING;
	return lun->cfg.tpgs[idx].id == lun->vstate->owner ? FL_ALUA_ACTIVE_OPTIMIZED
							   : FL_ALUA_STANDBY;
}

/* Builds one of the RDAC VPD pages; returns its length. */
static uint32_t rdac_vpd(struct exec_ctx *x, uint8_t page, uint8_t *buf, uint32_t cap)
{
	const struct fl_lun *lun = x->lun;
	const struct fl_vendor_config *p = &lun->cfg.personality;
	unsigned me = rdac_ctlr(x), other = me == 0 && lun->cfg.ntpgs > 1 ? 1 : 0;
	char label[32];
	uint64_t naa;
	uint32_t len;

	(void)cap; /* the longest page is 4 + 251 bytes, the caller's buffer 512 */
	buf[1] = page;
	switch (page) {
	case 0xc2: /* software version */
		len = 255;
		memcpy(buf + 4, "swr4", 4);
		buf[8] = 0x08; /* software version 08.20.00 */
		buf[9] = 0x20;
		buf[11] = 0x15; /* date 2015-01-01 (BCD-ish, informational) */
		buf[12] = 0x01;
		buf[13] = 0x01;
		buf[15] = (uint8_t)(p->max_luns > 255 ? 255 : p->max_luns);
		break;
	case 0xc4: /* subsystem identifier */
		len = 32;
		memcpy(buf + 4, "subs", 4);
		rdac_subsys_id(lun, buf + 8);
		memcpy(buf + 24, "0820", 4);
		buf[28] = '0';
		buf[29] = (uint8_t)('1' + me); /* "01": controller A, "02": B */
		break;
	case 0xc8: /* extended device identification */
		len = 175;
		memcpy(buf + 4, "edid", 4);
		fl_lun_identity(lun, &naa, NULL, 0);
		buf[11] = 16; /* volume unique id */
		fl_put_be64(buf + 12, naa);
		fl_put_be64(buf + 20, naa ^ 0xffffffffffffffffull);
		snprintf(label, sizeof(label), "LUN%u", (unsigned)lun->lun_id);
		buf[28] = (uint8_t)(2 * strlen(label)); /* volume label, UTF-16 */
		rdac_utf16(buf + 29, label, 30);
		buf[89] = 16; /* array unique id */
		rdac_subsys_id(lun, buf + 90);
		buf[106] = 2 * 8; /* array label, UTF-16 */
		rdac_utf16(buf + 107, "faultlun", 30);
		buf[174] = (uint8_t)lun->lun_id; /* LUN, last byte of 8 */
		break;
	default: /* 0xc9: volume access control */
		len = 48;
		memcpy(buf + 4, "vace", 4);
		buf[8] = (uint8_t)((p->avt ? 0x80 : 0) | 0x10 |
				   (lun->cfg.tpgs[me].id == lun->vstate->owner ? 0x01 : 0));
		buf[9] = lun->cfg.tpgs[me].id == p->preferred_tpg ? 0x01 : 0x02;
		buf[10] = rdac_aas(lun, me);
		buf[12] = lun->cfg.ntpgs > 1 ? rdac_aas(lun, other) : FL_ALUA_UNAVAILABLE;
		break;
	}
	fl_put_be16(buf + 2, (uint16_t)(len - 4));
	return len;
}

/* True for the redundant controller page. */
static bool rdac_is_mode_page(uint8_t code)
{
	return code == RDAC_PAGE;
}

/* Fills the common part (controller serials, modes, timeouts) at c. */
static void rdac_common(const struct exec_ctx *x, uint8_t *c)
{
	const struct fl_lun *lun = x->lun;
	unsigned me = rdac_ctlr(x);

	memset(c, ' ', 32);
	rdac_subsys_id(lun, c);
	c[15] = (uint8_t)('A' + me);
	rdac_subsys_id(lun, c + 16);
	c[31] = (uint8_t)('A' + (me ? 0 : 1));
	c[33] = 0x01; /* RDAC MODE: active (dual active controllers) */
	c[35] = 0x01; /* alternate controller's mode */
	c[36] = 20;   /* QUIESCENCE TIMEOUT, s */
}

/* MODE SENSE of page 2Ch (legacy, subpage 00h) or 2Ch/01h (expanded). */
static uint32_t rdac_mode_sense(struct exec_ctx *x, uint8_t code, uint8_t sub, uint8_t pc,
				uint8_t *p, uint32_t cap)
{
	bool owned = x->lun->cfg.tpgs[rdac_ctlr(x)].id == x->lun->vstate->owner;
	uint32_t len;

	if (code == 0x3f && sub == 0xff)
		sub = 0x00; /* one form in a list of every page */
	if (sub != 0x00 && sub != RDAC_SUBPAGE_EXPANDED)
		return 0;
	len = sub ? 4u + RDAC_EXPANDED_LEN : 2u + RDAC_LEGACY_LEN;
	if (len > cap)
		return 0;
	memset(p, 0, len);
	if (sub) {
		p[0] = 0x40 | RDAC_PAGE; /* SPF: subpage format */
		p[1] = RDAC_SUBPAGE_EXPANDED;
		fl_put_be16(p + 2, RDAC_EXPANDED_LEN);
	} else {
		p[0] = RDAC_PAGE;
		p[1] = RDAC_LEGACY_LEN;
	}
	if (pc == 1) {
		/* changeable: RDAC MODE and the LUN table */
		uint8_t *c = p + (sub ? 4 : 2);

		c[33] = 0xff;
		memset(c + RDAC_COMMON_LEN, 0xff, sub ? 256 : 32);
		return len;
	}
	rdac_common(x, p + (sub ? 4 : 2));
	if (owned && (sub || x->lun->lun_id < 32))
		p[(sub ? 4 : 2) + RDAC_COMMON_LEN + x->lun->lun_id] = RDAC_LUN_TRANSFER;
	return len;
}

/*
 * MODE SELECT of page 2Ch: checks the page length and form; when applied,
 * RDAC MODE 02h with this LUN's table entry 81h moves the LUN to the
 * controller receiving the command (the handler's activate path).
 */
static enum sense_reason rdac_mode_select(struct exec_ctx *x, const uint8_t *p, uint32_t off,
					  uint32_t avail, uint32_t *used, bool apply)
{
	bool spf = p[0] & 0x40;
	uint32_t len, hdr = spf ? 4 : 2, ntab = spf ? 256 : 32;
	const uint8_t *c;

	if (avail < hdr)
		return SENSE_PARAM_LIST_LENGTH_ERROR;
	if (spf && p[1] != RDAC_SUBPAGE_EXPANDED)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM, (uint16_t)(off + 1), 7);
	len = spf ? fl_get_be16(p + 2) : p[1];
	if (len != (spf ? RDAC_EXPANDED_LEN : RDAC_LEGACY_LEN))
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM,
					  (uint16_t)(off + (spf ? 2 : 1)), 7);
	if (avail < hdr + len)
		return SENSE_PARAM_LIST_LENGTH_ERROR;
	*used = hdr + len;
	if (!apply)
		return SENSE_OK;
	c = p + hdr;
	if (c[33] == RDAC_MODE_TRANSFER && x->lun->lun_id < ntab &&
	    c[RDAC_COMMON_LEN + x->lun->lun_id] == RDAC_LUN_TRANSFER)
		vendor_move(x->lun, vendor_port_group(x), x->ns->id, "mode_select");
	return SENSE_OK;
}

/*
 * True for the I/O a controller serves only for the LUNs it owns: reads,
 * writes, cache flushes, unmaps. TEST UNIT READY, READ CAPACITY, INQUIRY,
 * MODE SENSE / SELECT and the like are answered by both controllers (the
 * host reads a passive path's capacity and pages too).
 */
static bool rdac_io(const struct exec_ctx *x)
{
	switch (x->info.cls) {
	case FL_CLASS_READ:
	case FL_CLASS_WRITE:
	case FL_CLASS_FLUSH:
	case FL_CLASS_UNMAP:
		return true;
	default:
		return false;
	}
}

/*
 * Before every command: a due rebalance happens first; then I/O commands
 * meet the quiescence after a transfer, and on the controller that does not
 * own the LUN "not owned" (or, with AVT, the LUN moves to it).
 */
static enum sense_reason rdac_check(struct exec_ctx *x)
{
	struct fl_lun *lun = x->lun;

	vendor_rebalance(lun);
	if (!rdac_io(x))
		return SENSE_OK;
	if (vendor_quiescing(lun))
		return vendor_sense(x, FL_KEY_NOT_READY, RDAC_ASC_NOT_READY, RDAC_ASCQ_QUIESCING);
	if (vendor_port_owns(x))
		return SENSE_OK;
	if (lun->cfg.personality.avt) {
		vendor_move(lun, vendor_port_group(x), x->ns->id, "avt");
		return vendor_quiescing(lun) ? vendor_sense(x, FL_KEY_NOT_READY, RDAC_ASC_NOT_READY,
							    RDAC_ASCQ_QUIESCING)
					     : SENSE_OK;
	}
	return vendor_sense(x, FL_KEY_ILLEGAL_REQUEST, RDAC_ASC_NOT_OWNED, RDAC_ASCQ_NOT_OWNED);
}

/* RDAC mode reports no ALUA support in standard INQUIRY (TPGS 00b). */
static int rdac_init(struct fl_lun *lun)
{
	lun->cfg.alua_implicit = false;
	lun->cfg.alua_explicit = false;
	if (!lun->cfg.personality.max_luns)
		lun->cfg.personality.max_luns = 256;
	return 0;
}

const struct vendor_ops vendor_rdac_ops = {
    .name = "rdac",
    .vendor = "NETAPP",
    .product = "INF-01-00",
    .revision = "0820",
    .init = rdac_init,
    .check = rdac_check,
    .vpd_codes = rdac_vpd_codes,
    .nvpd = sizeof(rdac_vpd_codes),
    .vpd = rdac_vpd,
    .mode_sense = rdac_mode_sense,
    .is_mode_page = rdac_is_mode_page,
    .mode_select = rdac_mode_select,
    /* scsi_dh_rdac sends its MODE SELECT (6) / (10) with byte 1 zero: no PF */
    .select_without_pf = true,
};
