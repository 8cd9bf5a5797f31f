/* SPDX-License-Identifier: MIT */
/*
 * sense.c - THE sense table: a sense reason becomes status + key/ASC/ASCQ.
 *
 * Handlers return an enum sense_reason; this file alone builds sense bytes,
 * in fixed format (SPC-4 r37 4.5.3) or, when the control mode page's D_SENSE
 * bit is set, descriptor format (SPC-4 r37 4.5.2) with an information
 * descriptor (4.5.2.2) and a sense-key-specific descriptor (4.5.2.4) carrying
 * the field pointer of INVALID FIELD IN CDB / PARAMETER LIST (4.5.2.4.2).
 * It also holds the initiator side's one sense reader (fl_sense_decode),
 * which the tools that receive sense use instead of parsing it themselves.
 */
#include "fl_byteorder.h"
#include "target_internal.h"

#include <string.h>

struct sense_row {
	uint8_t status, key, asc, ascq;
};

/* Indexed by enum sense_reason. */
static const struct sense_row sense_table[SENSE_REASON_NR] = {
    [SENSE_OK] = {FL_STATUS_GOOD, 0, 0, 0},
    [SENSE_INVALID_OPCODE] = {FL_STATUS_CHECK_CONDITION, FL_KEY_ILLEGAL_REQUEST, 0x20, 0x00},
    [SENSE_INVALID_FIELD_IN_CDB] = {FL_STATUS_CHECK_CONDITION, FL_KEY_ILLEGAL_REQUEST, 0x24, 0x00},
    [SENSE_LBA_OUT_OF_RANGE] = {FL_STATUS_CHECK_CONDITION, FL_KEY_ILLEGAL_REQUEST, 0x21, 0x00},
    [SENSE_PARAM_LIST_LENGTH_ERROR] = {FL_STATUS_CHECK_CONDITION, FL_KEY_ILLEGAL_REQUEST, 0x1a,
				       0x00},
    [SENSE_INVALID_FIELD_IN_PARAM] = {FL_STATUS_CHECK_CONDITION, FL_KEY_ILLEGAL_REQUEST, 0x26,
				      0x00},
    [SENSE_LUN_NOT_SUPPORTED] = {FL_STATUS_CHECK_CONDITION, FL_KEY_ILLEGAL_REQUEST, 0x25, 0x00},
    [SENSE_SAVING_NOT_SUPPORTED] = {FL_STATUS_CHECK_CONDITION, FL_KEY_ILLEGAL_REQUEST, 0x39, 0x00},
    [SENSE_MISCOMPARE] = {FL_STATUS_CHECK_CONDITION, FL_KEY_MISCOMPARE, 0x1d, 0x00},
    [SENSE_SPACE_ALLOC_FAILED] = {FL_STATUS_CHECK_CONDITION, FL_KEY_DATA_PROTECT, 0x27, 0x07},
    [SENSE_WRITE_PROTECTED] = {FL_STATUS_CHECK_CONDITION, FL_KEY_DATA_PROTECT, 0x27, 0x00},
    [SENSE_NOT_READY_STOPPED] = {FL_STATUS_CHECK_CONDITION, FL_KEY_NOT_READY, 0x04, 0x02},
    [SENSE_ALUA_TRANSITIONING] = {FL_STATUS_CHECK_CONDITION, FL_KEY_NOT_READY, 0x04, 0x0a},
    [SENSE_ALUA_STANDBY] = {FL_STATUS_CHECK_CONDITION, FL_KEY_NOT_READY, 0x04, 0x0b},
    [SENSE_ALUA_UNAVAILABLE] = {FL_STATUS_CHECK_CONDITION, FL_KEY_NOT_READY, 0x04, 0x0c},
    [SENSE_MEDIUM_REMOVAL_PREVENTED] = {FL_STATUS_CHECK_CONDITION, FL_KEY_ILLEGAL_REQUEST, 0x53,
					0x02},
    [SENSE_WRITE_ERROR] = {FL_STATUS_CHECK_CONDITION, FL_KEY_MEDIUM_ERROR, 0x0c, 0x00},
    [SENSE_READ_ERROR] = {FL_STATUS_CHECK_CONDITION, FL_KEY_MEDIUM_ERROR, 0x11, 0x00},
    [SENSE_INTERNAL_FAILURE] = {FL_STATUS_CHECK_CONDITION, FL_KEY_HARDWARE_ERROR, 0x44, 0x00},
    [SENSE_INSUFFICIENT_RESOURCES] = {FL_STATUS_CHECK_CONDITION, FL_KEY_ILLEGAL_REQUEST, 0x55,
				      0x03},
    [SENSE_RESERVATION_CONFLICT] = {FL_STATUS_RESERVATION_CONFLICT, 0, 0, 0},
    [SENSE_UNIT_ATTENTION] = {FL_STATUS_CHECK_CONDITION, FL_KEY_UNIT_ATTENTION, 0, 0},
    [SENSE_CONDITION_MET] = {FL_STATUS_CONDITION_MET, 0, 0, 0},
    [SENSE_BUSY] = {FL_STATUS_BUSY, 0, 0, 0},
    [SENSE_ALUA_OFFLINE] = {FL_STATUS_CHECK_CONDITION, FL_KEY_NOT_READY, 0x04, 0x12},
    [SENSE_PARAM_NOT_SUPPORTED] = {FL_STATUS_CHECK_CONDITION, FL_KEY_ILLEGAL_REQUEST, 0x26, 0x01},
    [SENSE_MEDIUM_NOT_PRESENT] = {FL_STATUS_CHECK_CONDITION, FL_KEY_NOT_READY, 0x3a, 0x00},
    [SENSE_INVALID_RELEASE] = {FL_STATUS_CHECK_CONDITION, FL_KEY_ILLEGAL_REQUEST, 0x26, 0x04},
    [SENSE_VENDOR] = {FL_STATUS_CHECK_CONDITION, 0, 0, 0}, /* key/ASC/ASCQ from the personality */
    [SENSE_INSUFFICIENT_REG_RESOURCES] = {FL_STATUS_CHECK_CONDITION, FL_KEY_ILLEGAL_REQUEST, 0x55,
					  0x04},
};

/* Encodes sense data; returns its length. sks3: 3 sense-key-specific bytes or NULL. */
uint8_t sense_encode(uint8_t *buf, bool descriptor, uint8_t key, uint8_t asc, uint8_t ascq,
		     bool info_valid, uint64_t info, const uint8_t *sks3)
{
	if (descriptor) {
		uint8_t len = 8;

		memset(buf, 0, 8 + 12 + 8);
		buf[0] = 0x72; /* current error, descriptor format */
		buf[1] = key & 0x0f;
		buf[2] = asc;
		buf[3] = ascq;
		if (info_valid) {
			/* SPC-4 r37 4.5.2.2: information sense data descriptor */
			buf[len] = 0x00;
			buf[len + 1] = 0x0a;
			buf[len + 2] = 0x80; /* VALID */
			for (int i = 0; i < 8; i++)
				buf[len + 4 + i] = (uint8_t)(info >> (56 - 8 * i));
			len += 12;
		}
		if (sks3) {
			/* SPC-4 r37 4.5.2.4: sense key specific sense data descriptor */
			buf[len] = 0x02;
			buf[len + 1] = 0x06;
			memcpy(buf + len + 4, sks3, 3);
			len += 8;
		}
		buf[7] = len - 8;
		return len;
	}
	memset(buf, 0, 18);
	buf[0] = 0x70; /* current error, fixed format */
	/* SPC-4 r37 4.5.3: VALID only when INFORMATION fits its 4 bytes */
	if (info_valid && info <= UINT32_MAX) {
		buf[0] |= 0x80;
		buf[3] = (uint8_t)(info >> 24);
		buf[4] = (uint8_t)(info >> 16);
		buf[5] = (uint8_t)(info >> 8);
		buf[6] = (uint8_t)info;
	}
	buf[2] = key & 0x0f;
	buf[7] = 10; /* additional sense length */
	buf[12] = asc;
	buf[13] = ascq;
	if (sks3)
		memcpy(buf + 15, sks3, 3);
	return 18;
}

/* Fills cmd with CHECK CONDITION and sense in an explicit format (fl_target.h). */
void fl_cmd_set_sense(struct fl_cmd *cmd, bool descriptor, uint8_t key, uint8_t asc, uint8_t ascq,
		      bool info_valid, uint64_t info)
{
	cmd->status = FL_STATUS_CHECK_CONDITION;
	cmd->sense_len =
	    sense_encode(cmd->sense, descriptor, key, asc, ascq, info_valid, info, NULL);
}

/* Sets the field pointer for a 24/00 or 26/00 and returns `reason`. */
enum sense_reason exec_invalid_field(struct exec_ctx *x, enum sense_reason reason, uint16_t byte,
				     int8_t bit)
{
	x->sks_valid = true;
	x->sks_cdb = reason != SENSE_INVALID_FIELD_IN_PARAM &&
		     reason != SENSE_PARAM_NOT_SUPPORTED && reason != SENSE_PARAM_LIST_LENGTH_ERROR;
	x->sks_field = byte;
	x->sks_bit = bit;
	return reason;
}

/* Fills the command's status and sense for `reason` in the LUN's format. */
void sense_complete(struct exec_ctx *x, enum sense_reason reason)
{
	struct fl_cmd *cmd = x->cmd;
	const struct sense_row *row;
	uint8_t sks[3], key, asc, ascq;

	if ((unsigned)reason >= SENSE_REASON_NR)
		reason = SENSE_INTERNAL_FAILURE;
	row = &sense_table[reason];
	cmd->status = row->status;
	cmd->sense_len = 0;
	if (row->status != FL_STATUS_CHECK_CONDITION)
		return;
	asc = row->asc;
	ascq = row->ascq;
	if (reason == SENSE_UNIT_ATTENTION) {
		asc = x->ua_asc;
		ascq = x->ua_ascq;
	}
	key = row->key;
	if (reason == SENSE_VENDOR && x->vkey) {
		key = x->vkey;
		asc = x->vasc;
		ascq = x->vascq;
	} else if (reason == SENSE_VENDOR) {
		/* a personality that named no sense: the core's own failure */
		key = FL_KEY_HARDWARE_ERROR;
		asc = sense_table[SENSE_INTERNAL_FAILURE].asc;
		ascq = sense_table[SENSE_INTERNAL_FAILURE].ascq;
	}
	if (x->sks_valid) {
		/* SPC-4 r37 4.5.2.4.2: SKSV, C/D, BPV + bit pointer, field pointer */
		sks[0] = 0x80 | (x->sks_cdb ? 0x40 : 0);
		if (x->sks_bit >= 0)
			sks[0] |= 0x08 | (x->sks_bit & 7);
		sks[1] = (uint8_t)(x->sks_field >> 8);
		sks[2] = (uint8_t)x->sks_field;
	}
	cmd->sense_len = sense_encode(cmd->sense, x->lun && x->lun->mode.d_sense, key, asc, ascq,
				      x->info_valid, x->information, x->sks_valid ? sks : NULL);
}

/* Reads a descriptor-format sense (SPC-4 r37 4.5.2): header, then the information descriptor. */
static void sense_decode_descriptor(const uint8_t *p, size_t len, struct fl_sense_data *s)
{
	if (len < 4)
		return;
	s->key = p[1] & 0xf;
	s->asc = p[2];
	s->ascq = p[3];
	/* descriptors from byte 8; type 00h is INFORMATION (SPC-4 r37 4.5.2.2) */
	for (size_t o = 8; o + 1 < len && o + 2 + p[o + 1] <= len; o += 2u + p[o + 1])
		if (p[o] == 0 && p[o + 1] >= 0x0a) {
			s->info_valid = p[o + 2] & 0x80;
			s->info = fl_get_be64(p + o + 4);
		}
}

/* Reads a fixed-format sense (SPC-4 r37 4.5.3), as far as its bytes go. */
static void sense_decode_fixed(const uint8_t *p, size_t len, struct fl_sense_data *s)
{
	if (len >= 3)
		s->key = p[2] & 0xf;
	if (len >= 7) {
		s->info_valid = p[0] & 0x80;
		s->info = fl_get_be32(p + 3);
	}
	if (len >= 13)
		s->asc = p[12];
	if (len >= 14)
		s->ascq = p[13];
}

/* Decodes sense data as an initiator receives it (fl_target.h). */
enum fl_sense_format fl_sense_decode(const uint8_t *p, size_t len, struct fl_sense_data *s)
{
	memset(s, 0, sizeof(*s));
	if (!len)
		return s->format;
	s->response_code = p[0] & 0x7f;
	switch (s->response_code) {
	case 0x70:
	case 0x71:
		s->format = FL_SENSE_FORMAT_FIXED;
		sense_decode_fixed(p, len, s);
		break;
	case 0x72:
	case 0x73:
		s->format = FL_SENSE_FORMAT_DESCRIPTOR;
		sense_decode_descriptor(p, len, s);
		break;
	default:
		break;
	}
	return s->format;
}

/* The format's word in the tools' output. */
const char *fl_sense_format_name(enum fl_sense_format f)
{
	switch (f) {
	case FL_SENSE_FORMAT_FIXED:
		return "fixed";
	case FL_SENSE_FORMAT_DESCRIPTOR:
		return "descriptor";
	default:
		return "unknown";
	}
}
