/* SPDX-License-Identifier: MIT */
/*
 * vendor_emc.c - the EMC CLARiiON / VNX personality ("emc"), in the
 * active/passive mode the arrays call PNR (passive not ready), as Linux's
 * scsi_dh_emc and multipath-tools' emc_clariion checker and emc prioritizer
 * use it.
 *
 * Ownership model: each target port group is a storage processor (the
 * scenario's first group is SP A, the second SP B); one SP owns the LUN.
 *  - Standard INQUIRY carries the array's extended information after the
 *    SPC fields: the length of the SP model name at byte 99, the length of
 *    the array serial number at byte 160, then the serial number and the
 *    model name from byte 161. Linux reads the model from there ("detected
 *    Clariion MODEL") and sends the long trespass (MODE SELECT(10)); an
 *    array without it gets the short one (MODE SELECT(6)).
 *  - VPD page C0h (unit path report), as seen through the command's port:
 *    byte 4 LUN state (2 owned by this SP, 1 bound to the other), byte 5
 *    default SP, byte 7 SP port, byte 8 current SP (0 = A, 1 = B), bytes
 *    10-25 the LUN's WWN, byte 27 effective initiator type 3, byte 28
 *    failover mode 4, byte 30 ARRAYCOMMPATH (bit 2), byte 48 LUN operations
 *    (0 = normal).
 *  - Mode page 22h (trespass) in MODE SELECT(6) (page length 2) or MODE
 *    SELECT(10) (page length 9): byte 2 bits 0-6 trespass code (1 =
 *    trespass), bit 7 the host's reservation-handling flag (accepted and
 *    ignored), then the trespass target (FFh / FFFFh: the addressed LUN).
 *    It moves the LUN to the SP of the port the command came through. PF
 *    zero is accepted: Linux sends the long form with PF zero.
 *  - Through the other SP's ports, TEST UNIT READY and every medium access
 *    command get NOT READY 04/03 (LOGICAL UNIT NOT READY, MANUAL
 *    INTERVENTION REQUIRED), the array's "this SP does not own the LUN";
 *    INQUIRY, READ CAPACITY, MODE SENSE / SELECT and the rest are answered.
 */
#include "vendor.h"

#include "fl_byteorder.h"

#include <string.h>

#define EMC_VPD_UNIT_PATH 0xc0
#define EMC_MODE_TRESPASS 0x22
#define EMC_TRESPASS_CODE 0x01
#define EMC_MODEL "VNX5300"
#define EMC_ARRAY_SERIAL "APM00112233445"
/* standard INQUIRY with the extended information section */
#define EMC_INQ_LEN (161 + sizeof(EMC_ARRAY_SERIAL) - 1 + sizeof(EMC_MODEL) - 1)
#define EMC_VPD_C0_LEN 64

static const uint8_t emc_vpd_codes[] = {EMC_VPD_UNIT_PATH};

/* The SP (0 = A, 1 = B, ...) of target port group `tpg`: its place in cfg.tpgs. */
static uint8_t emc_sp_of(const struct fl_lun *lun, uint16_t tpg)
{
	for (unsigned g = 0; g < lun->cfg.ntpgs; g++)
		if (lun->cfg.tpgs[g].id == tpg)
			return (uint8_t)g;
	return 0;
}

/* The port's number on its SP: its place among the ports of its group. */
static uint8_t emc_sp_port(const struct fl_lun *lun, uint16_t rel_port, uint16_t tpg)
{
	uint8_t n = 0;

	for (unsigned p = 0; p < lun->cfg.nports; p++) {
		if (lun->cfg.ports[p].rel_port_id == rel_port)
			return n;
		if (lun->cfg.ports[p].tpg_id == tpg)
			n++;
	}
	return 0;
}

/* Standard INQUIRY bytes 96..EMC_INQ_LEN-1: model and serial lengths and text. */
static uint32_t emc_inquiry(struct exec_ctx *x, uint8_t *buf, uint32_t cap)
{
	const size_t slen = sizeof(EMC_ARRAY_SERIAL) - 1, mlen = sizeof(EMC_MODEL) - 1;

	(void)x;
	if (cap < EMC_INQ_LEN)
		return 0;
	memset(buf + 96, 0, EMC_INQ_LEN - 96);
	buf[99] = (uint8_t)mlen;
	buf[160] = (uint8_t)slen;
	memcpy(buf + 161, EMC_ARRAY_SERIAL, slen);
	memcpy(buf + 161 + slen, EMC_MODEL, mlen);
	return EMC_INQ_LEN;
}

/* VPD page C0h, unit path report, as the command's port sees the LUN. */
static uint32_t emc_vpd(struct exec_ctx *x, uint8_t page, uint8_t *buf, uint32_t cap)
{
	const struct fl_lun *lun = x->lun;
	uint16_t port_tpg = vendor_port_group(x);
	uint16_t preferred = lun->cfg.personality.preferred_tpg; /* set by vendor_attach */
	uint64_t naa;

	if (page != EMC_VPD_UNIT_PATH || cap < EMC_VPD_C0_LEN)
		return 0;
	memset(buf, 0, EMC_VPD_C0_LEN);
	buf[1] = EMC_VPD_UNIT_PATH;
	fl_put_be16(buf + 2, EMC_VPD_C0_LEN - 4);
	buf[4] = vendor_port_owns(x) ? 2 : 1; /* owned / bound */
	buf[5] = emc_sp_of(lun, preferred);
	buf[7] = emc_sp_port(lun, x->cmd->nexus.rel_port_id, port_tpg);
	buf[8] = emc_sp_of(lun, lun->vstate->owner);
	buf[9] = 0; /* page format revision */
	fl_lun_identity(lun, &naa, NULL, 0);
	fl_put_be64(buf + 10, naa); /* bytes 18-25 stay zero */
	buf[27] = 0x03;		    /* effective initiator type */
	buf[28] = 0x04;		    /* failover mode */
	buf[30] = 0x04;		    /* ARRAYCOMMPATH */
	buf[48] = 0;		    /* LUN operations: normal */
	return EMC_VPD_C0_LEN;
}

/* Page 22h is the trespass page. */
static bool emc_is_mode_page(uint8_t code)
{
	return code == EMC_MODE_TRESPASS;
}

/*
 * MODE SELECT of page 22h at p (byte off of the parameter list, avail bytes
 * left): checks its length, trespass code and target, and with apply moves
 * the LUN to the SP of the command's port.
 */
static enum sense_reason emc_mode_select(struct exec_ctx *x, const uint8_t *pg, uint32_t off,
					 uint32_t avail, uint32_t *used, bool apply)
{
	uint32_t len, target;

	if (avail < 2)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM, (uint16_t)off, -1);
	len = pg[1];
	if ((len != 2 && len != 9) || avail < len + 2u)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM, (uint16_t)(off + 1), -1);
	if ((pg[2] & 0x7f) != EMC_TRESPASS_CODE)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM, (uint16_t)(off + 2), -1);
	target = len == 2 ? pg[3] : fl_get_be16(pg + 3);
	if (target != (len == 2 ? 0xffu : 0xffffu) && target != x->lun->lun_id)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_PARAM, (uint16_t)(off + 3), -1);
	*used = len + 2;
	if (apply)
		vendor_move(x->lun, vendor_port_group(x), x->cmd->nexus.id, "mode_select");
	return SENSE_OK;
}

/* A non-owning SP answers TEST UNIT READY and medium access with 04/03. */
static enum sense_reason emc_check(struct exec_ctx *x)
{
	/* READ CAPACITY and READ DEFECT DATA (medium commands of class "other") are served */
	bool media = x->desc && (x->desc->flags & OPF_MEDIA) && x->desc->cls != FL_CLASS_OTHER;

	if (media && !vendor_port_owns(x))
		return vendor_sense(x, FL_KEY_NOT_READY, 0x04, 0x03);
	return SENSE_OK;
}

const struct vendor_ops vendor_emc_ops = {
    .name = "emc",
    .vendor = "DGC",
    .product = "VRAID",
    .revision = "0533",
    .check = emc_check,
    .inquiry = emc_inquiry,
    .vpd_codes = emc_vpd_codes,
    .nvpd = sizeof(emc_vpd_codes),
    .vpd = emc_vpd,
    .is_mode_page = emc_is_mode_page,
    .mode_select = emc_mode_select,
    .select_without_pf = true,
};
