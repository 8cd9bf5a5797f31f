/* SPDX-License-Identifier: MIT */
/*
 * iscsi_proto.h - iSCSI wire constants (RFC 7143) used by the embedded target.
 *
 * Opcodes (RFC 7143 11.1.1), the layout of the 48-byte Basic Header Segment
 * (11.2.1) and of each PDU's opcode-specific fields, login status classes
 * (11.13.5), reject reasons (11.17.1), TMF function and response codes
 * (11.5.1, 11.6.1), logout reasons (11.14.1) and async events (11.9.1).
 * Nothing here allocates or has state; it is only the spec in C names.
 */
#ifndef ISCSI_PROTO_H
#define ISCSI_PROTO_H

#include "fl_byteorder.h"

#include <stdint.h>

/* RFC 7143 11.2.1: every PDU starts with a 48-byte BHS. */
#define ISCSI_BHS_LEN 48
#define ISCSI_DIGEST_LEN 4
#define ISCSI_RSVD_TAG 0xffffffffu

/* Byte 0: I bit and opcode (RFC 7143 11.2.1.2). */
#define ISCSI_FLAG_IMMEDIATE 0x40
#define ISCSI_OPCODE_MASK 0x3f

/* Initiator opcodes (RFC 7143 11.1.1). */
#define ISCSI_OP_NOP_OUT 0x00
#define ISCSI_OP_SCSI_CMD 0x01
#define ISCSI_OP_TMF_REQ 0x02
#define ISCSI_OP_LOGIN_REQ 0x03
#define ISCSI_OP_TEXT_REQ 0x04
#define ISCSI_OP_DATA_OUT 0x05
#define ISCSI_OP_LOGOUT_REQ 0x06
#define ISCSI_OP_SNACK 0x10

/* Target opcodes. */
#define ISCSI_OP_NOP_IN 0x20
#define ISCSI_OP_SCSI_RESP 0x21
#define ISCSI_OP_TMF_RESP 0x22
#define ISCSI_OP_LOGIN_RESP 0x23
#define ISCSI_OP_TEXT_RESP 0x24
#define ISCSI_OP_DATA_IN 0x25
#define ISCSI_OP_LOGOUT_RESP 0x26
#define ISCSI_OP_R2T 0x31
#define ISCSI_OP_ASYNC 0x32
#define ISCSI_OP_REJECT 0x3f

/* Byte 1 flags. */
#define ISCSI_FLAG_FINAL 0x80
/* SCSI Command (11.3.1): Read, Write, task attributes. */
#define ISCSI_CMD_READ 0x40
#define ISCSI_CMD_WRITE 0x20
#define ISCSI_CMD_ATTR_MASK 0x07
/* SCSI Response (11.4.1) and Data-In (11.7): residual flags. */
#define ISCSI_RESP_BIDI_OVERFLOW 0x10
#define ISCSI_RESP_BIDI_UNDERFLOW 0x08
#define ISCSI_RESP_OVERFLOW 0x04
#define ISCSI_RESP_UNDERFLOW 0x02
#define ISCSI_DATAIN_ACK 0x40
#define ISCSI_DATAIN_STATUS 0x01
/* Login (11.12.1): Transit, Continue, CSG, NSG. */
#define ISCSI_LOGIN_TRANSIT 0x80
#define ISCSI_LOGIN_CONTINUE 0x40
#define ISCSI_LOGIN_CSG(b) (((b) >> 2) & 3)
#define ISCSI_LOGIN_NSG(b) ((b)&3)
/* Text (11.10.1): Continue. */
#define ISCSI_TEXT_CONTINUE 0x40

/* Login stages (RFC 7143 11.12.3). */
#define ISCSI_STAGE_SECURITY 0
#define ISCSI_STAGE_OPERATIONAL 1
#define ISCSI_STAGE_FULL_FEATURE 3

/* SCSI Response "Response" field (11.4.3). */
#define ISCSI_RESPONSE_COMPLETED 0x00
#define ISCSI_RESPONSE_TARGET_FAILURE 0x01

/* Login status class/detail (RFC 7143 11.13.5). */
#define ISCSI_LOGIN_SUCCESS 0x0000
#define ISCSI_LOGIN_INITIATOR_ERROR 0x0200
#define ISCSI_LOGIN_AUTH_FAILED 0x0201
#define ISCSI_LOGIN_AUTHORIZATION_FAILED 0x0202
#define ISCSI_LOGIN_NOT_FOUND 0x0203
#define ISCSI_LOGIN_UNSUPPORTED_VERSION 0x0205
#define ISCSI_LOGIN_TOO_MANY_CONNECTIONS 0x0206
#define ISCSI_LOGIN_MISSING_PARAMETER 0x0207
#define ISCSI_LOGIN_CANT_INCLUDE 0x0208
#define ISCSI_LOGIN_SESSION_TYPE_UNSUPPORTED 0x0209
#define ISCSI_LOGIN_SESSION_NOT_EXIST 0x020a
#define ISCSI_LOGIN_INVALID_DURING_LOGIN 0x020b
#define ISCSI_LOGIN_TARGET_ERROR 0x0300
#define ISCSI_LOGIN_SERVICE_UNAVAILABLE 0x0301
#define ISCSI_LOGIN_OUT_OF_RESOURCES 0x0302

/* Reject reasons (RFC 7143 11.17.1). */
#define ISCSI_REJECT_DATA_DIGEST 0x02
#define ISCSI_REJECT_SNACK 0x03
#define ISCSI_REJECT_PROTOCOL_ERROR 0x04
#define ISCSI_REJECT_CMD_NOT_SUPPORTED 0x05
#define ISCSI_REJECT_IMMEDIATE_REJECT 0x06
#define ISCSI_REJECT_TASK_IN_PROGRESS 0x07
#define ISCSI_REJECT_INVALID_DATA_ACK 0x08
#define ISCSI_REJECT_INVALID_PDU_FIELD 0x09
#define ISCSI_REJECT_OUT_OF_RESOURCES 0x0a
#define ISCSI_REJECT_WAITING_FOR_LOGOUT 0x0c

/* Task management functions (RFC 7143 11.5.1). */
#define ISCSI_TMF_ABORT_TASK 1
#define ISCSI_TMF_ABORT_TASK_SET 2
#define ISCSI_TMF_CLEAR_ACA 3
#define ISCSI_TMF_CLEAR_TASK_SET 4
#define ISCSI_TMF_LUN_RESET 5
#define ISCSI_TMF_TARGET_WARM_RESET 6
#define ISCSI_TMF_TARGET_COLD_RESET 7
#define ISCSI_TMF_TASK_REASSIGN 8
#define ISCSI_TMF_FUNC_MASK 0x7f

/* TMF responses (RFC 7143 11.6.1). */
#define ISCSI_TMF_RSP_COMPLETE 0
#define ISCSI_TMF_RSP_NO_TASK 1
#define ISCSI_TMF_RSP_NO_LUN 2
#define ISCSI_TMF_RSP_TASK_ALLEGIANT 3
#define ISCSI_TMF_RSP_NO_REASSIGN 4
#define ISCSI_TMF_RSP_NOT_SUPPORTED 5
#define ISCSI_TMF_RSP_AUTH_FAILED 6
#define ISCSI_TMF_RSP_REJECTED 255

/* Logout reasons and responses (RFC 7143 11.14.1, 11.15.1). */
#define ISCSI_LOGOUT_CLOSE_SESSION 0
#define ISCSI_LOGOUT_CLOSE_CONNECTION 1
#define ISCSI_LOGOUT_REMOVE_FOR_RECOVERY 2
#define ISCSI_LOGOUT_RSP_OK 0
#define ISCSI_LOGOUT_RSP_CID_NOT_FOUND 1
#define ISCSI_LOGOUT_RSP_RECOVERY_UNSUPPORTED 2

/* Async events (RFC 7143 11.9.1). */
#define ISCSI_ASYNC_SCSI_EVENT 0
#define ISCSI_ASYNC_LOGOUT_REQUEST 1
#define ISCSI_ASYNC_DROP_CONNECTION 2
#define ISCSI_ASYNC_DROP_SESSION 3
#define ISCSI_ASYNC_NEGOTIATE 4

/* Field offsets within the BHS common to several PDUs (RFC 7143 11.2). */
#define BHS_OPCODE 0
#define BHS_FLAGS 1
#define BHS_TOTAL_AHS 4
#define BHS_DSL 5 /* 3 bytes */
#define BHS_LUN 8 /* 8 bytes */
#define BHS_ITT 16
#define BHS_TTT 20   /* also EDTL (command), RTT (TMF), CID (login/logout) */
#define BHS_CMDSN 24 /* initiator PDUs; StatSN in target PDUs */
#define BHS_STATSN 24
#define BHS_EXPSTATSN 28 /* initiator PDUs; ExpCmdSN in target PDUs */
#define BHS_EXPCMDSN 28
#define BHS_MAXCMDSN 32
#define BHS_DATASN 36	/* Data-In/Out DataSN, R2T R2TSN, response ExpDataSN */
#define BHS_OFFSET 40	/* Data buffer offset */
#define BHS_RESIDUAL 44 /* SCSI response / Data-In residual count; R2T DDTL */
#define BHS_CDB 32	/* SCSI Command: 16-byte CDB */

/* AHS types (RFC 7143 11.2.1.5). */
#define ISCSI_AHS_EXTENDED_CDB 1
#define ISCSI_AHS_BIDI_READ_LENGTH 2

/* Text limits (RFC 7143 6.1): key names up to 63 bytes, values up to 255. */
#define ISCSI_KEY_MAX 63
#define ISCSI_VALUE_MAX 255

/* RFC 7143 11.2.1: bytes of padding after a data segment of len bytes. */
static inline uint32_t iscsi_pad4(uint32_t len)
{
	return (4 - (len & 3)) & 3;
}

/* RFC 1982 serial number arithmetic on 32-bit sequence numbers (RFC 7143 4.2.2.1). */
static inline int sn_cmp(uint32_t a, uint32_t b)
{
	return a == b ? 0 : ((int32_t)(a - b) < 0 ? -1 : 1);
}

#endif
