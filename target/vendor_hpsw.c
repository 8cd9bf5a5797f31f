/* SPDX-License-Identifier: MIT */
/*
 * vendor_hpsw.c - the HP / Compaq active/passive personality ("hp_sw"): the
 * MSA1000 and the older EVA (HSV100/110) firmware that Linux's scsi_dh_hp_sw
 * and multipath-tools' hp_sw checker and prioritizer drive.
 *
 * Ownership model: each target port group is a controller; one controller
 * is active for the LUN, the other passive. Through a passive controller's
 * ports TEST UNIT READY and every medium access command get NOT READY 04/02
 * (LOGICAL UNIT NOT READY, INITIALIZING COMMAND REQUIRED); INQUIRY, READ
 * CAPACITY, MODE SENSE and the rest are answered. START STOP UNIT with
 * START set through a passive controller's port makes that controller active
 * (the other one becomes passive); through the active controller it is
 * GOOD and changes nothing. START STOP UNIT with START clear is answered
 * GOOD without stopping the LUN (the array does not spin its LUNs down on a
 * host's request).
 */
#include "vendor.h"

/* The passive controller answers TEST UNIT READY and medium access with 04/02. */
static enum sense_reason hpsw_check(struct exec_ctx *x)
{
	/* READ CAPACITY and READ DEFECT DATA (medium commands of class "other") are served */
	bool media = x->desc && (x->desc->flags & OPF_MEDIA) && x->desc->cls != FL_CLASS_OTHER;

	if (media && !vendor_port_owns(x))
		return vendor_sense(x, FL_KEY_NOT_READY, 0x04, 0x02);
	return SENSE_OK;
}

/* START STOP UNIT (SBC-3 r36 5.25): START through a passive port activates it. */
static enum sense_reason hpsw_start_stop(struct exec_ctx *x, bool *handled)
{
	*handled = true;
	if ((x->cmd->cdb[4] & 0x01) && !vendor_port_owns(x))
		vendor_move(x->lun, vendor_port_group(x), x->cmd->nexus.id, "start_stop");
	return SENSE_OK;
}

const struct vendor_ops vendor_hpsw_ops = {
    .name = "hp_sw",
    .vendor = "COMPAQ",
    .product = "MSA1000 VOLUME",
    .revision = "4.48",
    .check = hpsw_check,
    .start_stop = hpsw_start_stop,
};
