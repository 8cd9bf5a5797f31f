// SPDX-License-Identifier: MIT
/*
 * cmd_send.c - `faultlun send URL ITEM...`: one iSCSI session that sends SCSI
 * commands and task-management functions in order and prints, for each, what
 * came back: status, sense decoded (key, ASC/ASCQ with names, fixed or
 * descriptor format, INFORMATION; SPC-4 r37 4.5), residual, time, the data-in
 * decoded (decode.c) and as a hexdump with -x. JSON lines with --json. It is
 * to a faultlun target what sg_raw and sg_inq are to a local disk.
 *
 * Nothing is sent that the items do not ask for, but one READ CAPACITY(10)
 * before the first item to each LUN that a read or write item without bs=
 * addresses (the length of a transfer in bytes needs the block size); an
 * answer to it other than GOOD is printed on stderr. Everything the target says is bounded before
 * use: block sizes, transfer lengths, received byte counts, time (also at logout).
 *
 * Items (docs/send.md): read, write, tur, inquiry, readcap, sync,
 * report-luns, request-sense, raw:HEX; abort-task[:last|:N], abort-task-set,
 * clear-task-set, lun-reset, target-reset, cold-reset; sleep:ms=N. Options
 * follow a colon, comma-separated: read:lba=2048,blocks=8. Every SCSI item
 * takes lun=N and nowait (send and go on: the answer is printed when it
 * comes, or as never answered at the end).
 */
#include "cli.h"
#include "cli_opts.h"
#include "decode.h"
#include "fl_byteorder.h"
#include "fl_scenario.h"
#include "fl_target.h"
#include "initiator.h"

#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

/* Item kinds. */
enum item_kind { IT_SCSI, IT_TMF, IT_SLEEP };

/* One parsed item and, once sent, what came back. */
struct item {
	int n; /* 1-based, as printed */
	const char *text;
	enum item_kind kind;
	char name[24];
	int lun;
	bool nowait;
	uint8_t cdb[16];
	int cdb_len;
	uint32_t in_len, out_len;
	bool rw;	 /* read/write: in_len/out_len are blocks * the LUN's block size */
	uint32_t blocks; /* read/write */
	uint32_t bs;	 /* read/write: bs=N, else 0 (asked of the LUN) */
	uint8_t pattern;
	/* raw data=HEX: the first data_len bytes of data-out (the rest is pattern) */
	uint8_t data[256];
	uint32_t data_len;
	int tmf;      /* enum iscsi_task_mgmt_funcs */
	int abort_of; /* abort-task: the item whose task to abort (0: the last SCSI item) */
	uint32_t ms;  /* sleep */
	/* outcome */
	bool sent, done;
	int status;
	uint32_t tmf_resp;
	struct scsi_task *task;
	/* data-out: libiscsi sends it from this buffer, kept until the session ends */
	uint8_t *out_buf;
	double t_sent, t_done;
};

struct send_opts {
	bool json, hex, ignore_status, clear_ua;
	int timeout_ms;
};

/* Exit status (docs/send.md): the worst outcome of the items. */
enum {
	SEND_OK = 0,	    /* every item answered, every SCSI status GOOD */
	SEND_STATUS = 1,    /* a SCSI item ended in CHECK CONDITION or another status */
	SEND_USAGE = 2,	    /* a bad item or option, or no session */
	SEND_NO_ANSWER = 3, /* an item got no answer, the session failed, or it was not sent */
};

/* Bounds on what a target's block size may make send move (docs/send.md). */
#define SEND_BS_MIN 512u
#define SEND_BS_MAX 65536u
#define SEND_MAX_XFER (16u << 20)

static struct iscsi_context *ctx;
static int url_lun;
/* block size by LUN: 0 not asked yet, 1 the target's was refused */
static uint32_t lun_bs[256];

/* Prints the usage of `faultlun send`. */
static void send_usage(FILE *out)
{
	fprintf(out,
		"usage: faultlun send [OPTIONS] URL ITEM...\n"
		"Sends SCSI commands and task-management functions over one iSCSI session, in\n"
		"order, and prints what came back for each.\n\n"
		"  URL    iscsi://HOST[:PORT]/IQN/LUN (the LUN items address by default)\n"
		"  ITEM   read[:lba=N,blocks=N]   write[:lba=N,blocks=N,pattern=N]   tur\n"
		"         inquiry[:vpd=0xNN,len=N]   readcap   sync   report-luns   request-sense\n"
		"         (read and write also take bs=N: the block size, else asked of the LUN)\n"
		"         raw:'HEX BYTES'[,in=N|out=N,pattern=N,data=HEX]\n"
		"         abort-task[:last|:ITEM_NUMBER]   abort-task-set   clear-task-set\n"
		"         lun-reset   target-reset   cold-reset   sleep:ms=N\n"
		"         every SCSI item and TMF also takes lun=N; a SCSI item takes nowait\n"
		"         (send it and go on; its answer is printed when it comes)\n\n"
		"  -x, --hex            hexdump of data-in (besides its decoding)\n"
		"  -j, --json           one JSON object per item\n"
		"  -t, --timeout S      seconds to wait for each answer (default 30)\n"
		"  -i, --ignore-status  exit 0 although an item ended in CHECK CONDITION\n"
		"  -u, --clear-ua       before the items, TEST UNIT READY to each LUN they\n"
		"                       address until no unit attention is left (on stderr)\n"
		"  -h, --help\n"
		"  -V, --version\n"
		"Options may come before or after the URL and the items.\n"
		"Exit 0 when every item was answered with GOOD, 1 when one ended in CHECK\n"
		"CONDITION or another status, 2 on a usage error or when no session could be\n"
		"made, 3 when an item got no answer (timeout, the session failed).\n");
}

/* Monotonic milliseconds as a double. */
static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Parses a number (decimal, or 0x hex) into *out; false if it is not one. */
static bool num(const char *s, uint64_t max, uint64_t *out)
{
	bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	char *end;

	if (!*s || *s == '-' || isspace((unsigned char)*s))
		return false;
	errno = 0;
	*out = strtoull(hex ? s + 2 : s, &end, hex ? 16 : 10);
	return !errno && !*end && end != s + (hex ? 2 : 0) && *out <= max;
}

/* Parses hex bytes ("28 00 ...", "28:00", "2800...") into cdb; its length or -1. */
static int hex_cdb(const char *s, uint8_t *cdb)
{
	int n = 0;

	while (*s) {
		int digits = 0;
		unsigned v = 0;

		while (*s == ' ' || *s == ':')
			s++;
		if (!*s)
			break;
		while (digits < 2 && isxdigit((unsigned char)*s)) {
			v = v * 16 + (unsigned)(isdigit((unsigned char)*s)
						    ? *s - '0'
						    : tolower((unsigned char)*s) - 'a' + 10);
			digits++;
			s++;
		}
		if (!digits || (digits == 1 && *s && *s != ' ' && *s != ':') || n == 16)
			return -1;
		cdb[n++] = (uint8_t)v;
	}
	return n >= 6 ? n : -1;
}

/* Parses data=HEX (contiguous hex digits, 1 to 256 bytes) into it->data. */
static bool hex_data(const char *s, struct item *it)
{
	size_t n = strlen(s);

	if (n == 0 || n % 2 || n / 2 > sizeof(it->data))
		return false;
	for (size_t i = 0; i < n; i += 2) {
		char two[3] = {s[i], s[i + 1], 0};

		if (!isxdigit((unsigned char)s[i]) || !isxdigit((unsigned char)s[i + 1]))
			return false;
		it->data[i / 2] = (uint8_t)strtoul(two, NULL, 16);
	}
	it->data_len = (uint32_t)(n / 2);
	return true;
}

/* Fills a CDB's LBA and length for READ(16) / WRITE(16) (SBC-3 5.16, 5.40). */
static void rw16(struct item *it, uint8_t op, uint64_t lba, uint32_t blocks)
{
	memset(it->cdb, 0, sizeof(it->cdb));
	it->cdb[0] = op;
	fl_put_be64(it->cdb + 2, lba);
	fl_put_be32(it->cdb + 10, blocks);
	it->cdb_len = 16;
	it->rw = true;
	it->blocks = blocks;
}

/* True for a block size send accepts: a power of two, SEND_BS_MIN..SEND_BS_MAX. */
static bool bs_ok(uint64_t bs)
{
	return bs >= SEND_BS_MIN && bs <= SEND_BS_MAX && !(bs & (bs - 1));
}

/*
 * Sets a read/write item's transfer length for block size bs, computed in
 * 64 bits: false with a message when it is over SEND_MAX_XFER.
 */
static bool rw_length(struct item *it, uint32_t bs)
{
	uint64_t bytes = (uint64_t)it->blocks * bs;

	if (bytes > SEND_MAX_XFER) {
		fprintf(stderr,
			"faultlun send: '%s': %u blocks of %u bytes is %" PRIu64
			" bytes, more than one command may move (%u)\n",
			it->text, it->blocks, bs, bytes, SEND_MAX_XFER);
		return false;
	}
	it->in_len = it->cdb[0] == SBC_OP_READ_16 ? (uint32_t)bytes : 0;
	it->out_len = it->cdb[0] == SBC_OP_WRITE_16 ? (uint32_t)bytes : 0;
	return true;
}

/* Where an item's options put what the CDB is built from. */
struct item_args {
	uint64_t lba, blocks;
	int vpd;	/* inquiry's VPD page, or -1 */
	uint64_t alloc; /* inquiry's allocation length, 0 = 255 */
};

/* Reads an item's comma-separated options; false with a message naming the bad one. */
static bool item_options(const char *text, const char *word, char *opts, struct item *it,
			 struct item_args *ia)
{
	char *kv, *save = NULL;
	uint64_t v;

	for (kv = opts ? strtok_r(opts, ",", &save) : NULL; kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		const char *val = eq ? eq + 1 : "";

		if (eq)
			*eq = 0;
		if (!strcmp(kv, "nowait") && !eq) {
			it->nowait = true;
		} else if (!strcmp(kv, "last") && !eq && !strcmp(word, "abort-task")) {
			it->abort_of = 0;
		} else if (!eq && !strcmp(word, "abort-task") && num(kv, 100000, &v) && v) {
			it->abort_of = (int)v;
		} else if (!strcmp(kv, "lun") && num(val, 255, &v)) {
			it->lun = (int)v;
		} else if (!strcmp(kv, "lba") && num(val, UINT64_MAX, &ia->lba)) {
		} else if (!strcmp(kv, "blocks") && num(val, 65536, &ia->blocks) && ia->blocks) {
		} else if (!strcmp(kv, "bs") && num(val, SEND_BS_MAX, &v) && bs_ok(v) &&
			   (!strcmp(word, "read") || !strcmp(word, "write"))) {
			it->bs = (uint32_t)v;
		} else if (!strcmp(kv, "pattern") && num(val, 255, &v)) {
			it->pattern = (uint8_t)v;
		} else if (!strcmp(kv, "vpd") && num(val, 255, &v)) {
			ia->vpd = (int)v;
		} else if (!strcmp(kv, "len") && num(val, 65535, &ia->alloc)) {
		} else if (!strcmp(kv, "in") && num(val, 16u << 20, &v)) {
			it->in_len = (uint32_t)v;
		} else if (!strcmp(kv, "out") && num(val, 16u << 20, &v)) {
			it->out_len = (uint32_t)v;
		} else if (!strcmp(kv, "data") && !strcmp(word, "raw") && hex_data(val, it)) {
		} else if (!strcmp(kv, "ms") && num(val, 86400000, &v)) {
			it->ms = (uint32_t)v;
		} else {
			fprintf(stderr, "faultlun send: '%s': bad option '%s%s%s'\n", text, kv,
				eq ? "=" : "", val);
			return false;
		}
	}
	return true;
}

/* Checks a raw item's data direction and data against its lengths. */
static bool raw_lengths(const char *text, struct item *it)
{
	if (it->data_len && !it->out_len)
		it->out_len = it->data_len;
	if (it->in_len && it->out_len) {
		fprintf(stderr, "faultlun send: '%s': in= or out=, not both\n", text);
		return false;
	}
	if (it->data_len > it->out_len) {
		fprintf(stderr, "faultlun send: '%s': data= longer than out=\n", text);
		return false;
	}
	return true;
}

/* Builds the CDB of a named SCSI item: 1 built, 0 not a SCSI word, -1 refused (message). */
static int named_cdb(const char *word, const struct item_args *ia, struct item *it)
{
	if (!strcmp(word, "read") || !strcmp(word, "write")) {
		rw16(it, word[0] == 'r' ? SBC_OP_READ_16 : SBC_OP_WRITE_16, ia->lba,
		     (uint32_t)ia->blocks);
		return it->bs && !rw_length(it, it->bs) ? -1 : 1;
	} else if (!strcmp(word, "tur")) {
		it->cdb[0] = SPC_OP_TEST_UNIT_READY;
		it->cdb_len = 6;
	} else if (!strcmp(word, "inquiry")) {
		it->cdb[0] = SPC_OP_INQUIRY;
		if (ia->vpd >= 0) {
			it->cdb[1] = 1;
			it->cdb[2] = (uint8_t)ia->vpd;
		}
		it->in_len = ia->alloc ? (uint32_t)ia->alloc : 255;
		fl_put_be16(it->cdb + 3, (uint16_t)it->in_len);
		it->cdb_len = 6;
	} else if (!strcmp(word, "readcap")) {
		it->cdb[0] = SBC_OP_SERVICE_ACTION_IN_16;
		it->cdb[1] = SBC_SA_READ_CAPACITY_16;
		fl_put_be32(it->cdb + 10, 32);
		it->in_len = 32;
		it->cdb_len = 16;
	} else if (!strcmp(word, "sync")) {
		it->cdb[0] = SBC_OP_SYNC_CACHE_10;
		it->cdb_len = 10;
	} else if (!strcmp(word, "report-luns")) {
		it->cdb[0] = SPC_OP_REPORT_LUNS;
		fl_put_be32(it->cdb + 6, 4096);
		it->in_len = 4096;
		it->cdb_len = 12;
	} else if (!strcmp(word, "request-sense")) {
		it->cdb[0] = SPC_OP_REQUEST_SENSE;
		it->cdb[4] = 252;
		it->in_len = 252;
		it->cdb_len = 6;
	} else {
		return 0;
	}
	return 1;
}

/* A sleep or task-management item; false with the list of items for an unknown word. */
static bool other_item(const char *text, const char *word, struct item *it)
{
	static const struct {
		const char *name;
		int fn;
	} tmfs[] = {
	    {"abort-task", ISCSI_TM_ABORT_TASK},
	    {"abort-task-set", ISCSI_TM_ABORT_TASK_SET},
	    {"clear-task-set", ISCSI_TM_CLEAR_TASK_SET},
	    {"lun-reset", ISCSI_TM_LUN_RESET},
	    {"target-reset", ISCSI_TM_TARGET_WARM_RESET},
	    {"cold-reset", ISCSI_TM_TARGET_COLD_RESET},
	};

	if (!strcmp(word, "sleep")) {
		it->kind = IT_SLEEP;
		return true;
	}
	for (size_t i = 0; i < sizeof(tmfs) / sizeof(tmfs[0]); i++)
		if (!strcmp(word, tmfs[i].name)) {
			it->kind = IT_TMF;
			it->tmf = tmfs[i].fn;
			return true;
		}
	fprintf(stderr,
		"faultlun send: unknown item '%s' (read, write, tur, inquiry, readcap, "
		"sync, report-luns, request-sense, raw, abort-task, abort-task-set, "
		"clear-task-set, lun-reset, target-reset, cold-reset, sleep)\n",
		text);
	return false;
}

/* Parses one item; false with a message naming it and the valid forms. */
static bool parse_item(const char *text, struct item *it)
{
	char buf[512], *opts;
	struct item_args ia = {.blocks = 1, .vpd = -1};
	int built;

	snprintf(buf, sizeof(buf), "%s", text);
	opts = strchr(buf, ':');
	if (opts)
		*opts++ = 0;
	snprintf(it->name, sizeof(it->name), "%.23s", buf);
	it->text = text;
	it->lun = -1; /* the URL's, once the login has read it */
	it->pattern = 0xa5;
	if (!strcmp(buf, "raw")) {
		/* raw:HEX[,in=N|,out=N|,pattern=N]: the options follow the first comma */
		char *comma = opts ? strchr(opts, ',') : NULL;

		if (comma)
			*comma++ = 0;
		it->kind = IT_SCSI;
		it->cdb_len = opts ? hex_cdb(opts, it->cdb) : -1;
		if (it->cdb_len < 0) {
			fprintf(stderr,
				"faultlun send: '%s': raw needs 6 to 16 hex bytes, e.g. "
				"raw:'28 00 00 00 08 00 00 00 08 00',in=4096\n",
				text);
			return false;
		}
		return item_options(text, buf, comma, it, &ia) && raw_lengths(text, it);
	}
	if (!item_options(text, buf, opts, it, &ia))
		return false;
	it->kind = IT_SCSI;
	memset(it->cdb, 0, sizeof(it->cdb));
	built = named_cdb(buf, &ia, it);
	if (built < 0 || (!built && !other_item(text, buf, it)))
		return false;
	if (it->nowait && it->kind != IT_SCSI) {
		fprintf(stderr, "faultlun send: '%s': nowait is for SCSI items\n", text);
		return false;
	}
	return true;
}

/* Completion of a SCSI item. */
static void scsi_cb(struct iscsi_context *iscsi, int status, void *data, void *priv)
{
	struct item *it = priv;

	(void)iscsi;
	(void)data;
	it->done = true;
	it->status = status;
	it->t_done = now();
}

/* Completion of a TMF item. */
static void tmf_cb(struct iscsi_context *iscsi, int status, void *data, void *priv)
{
	struct item *it = priv;

	(void)iscsi;
	it->done = true;
	it->status = status;
	if (data && status == SCSI_STATUS_GOOD)
		it->tmf_resp = *(uint32_t *)data;
	else
		it->tmf_resp = 0xff;
	it->t_done = now();
}

/* Name of an RFC 7143 11.6.1 TMF response. */
static const char *tmf_resp_name(uint32_t r)
{
	switch (r) {
	case 0:
		return "FUNCTION COMPLETE";
	case 1:
		return "TASK DOES NOT EXIST";
	case 2:
		return "LUN DOES NOT EXIST";
	case 3:
		return "TASK STILL ALLEGIANT";
	case 4:
		return "TASK ALLEGIANCE REASSIGNMENT NOT SUPPORTED";
	case 5:
		return "FUNCTION NOT SUPPORTED";
	case 6:
		return "FUNCTION AUTHORIZATION FAILED";
	case 255:
		return "FUNCTION REJECTED";
	default:
		return "?";
	}
}

/* The sense of an answer, as fl_sense_decode reads it, and its bytes. */
struct sense {
	bool valid; /* 8 bytes or more of sense */
	struct fl_sense_data d;
	const uint8_t *raw;
	size_t len;
};

/* Decodes the sense bytes libiscsi keeps (2-byte length, then the sense) in datain. */
static void decode_sense(const struct scsi_task *t, struct sense *s)
{
	size_t len;

	memset(s, 0, sizeof(*s));
	if (t->status != SCSI_STATUS_CHECK_CONDITION || t->datain.size < 4)
		return;
	len = fl_get_be16(t->datain.data);
	if (len + 2 > (size_t)t->datain.size)
		len = (size_t)t->datain.size - 2;
	s->raw = t->datain.data + 2;
	s->len = len;
	if (len < 8)
		return;
	s->valid = true;
	fl_sense_decode(s->raw, len, &s->d);
}

/* Hexdump of data, 16 bytes a line, with offsets. */
static void hexdump(FILE *out, const uint8_t *d, size_t n)
{
	for (size_t o = 0; o < n; o += 16) {
		fprintf(out, "    %04zx ", o);
		for (size_t i = o; i < o + 16; i++)
			if (i < n)
				fprintf(out, " %02x", d[i]);
			else
				fputs("   ", out);
		fputs("  ", out);
		for (size_t i = o; i < o + 16 && i < n; i++)
			fputc(isprint(d[i]) ? d[i] : '.', out);
		fputc('\n', out);
	}
}

/* Writes s as a JSON string. */
static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(out, "\\u%04x", *s);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

/* True when a SCSI item got a status (libiscsi's own codes are 0x0f000000 and up). */
static bool answered(const struct item *it)
{
	return it->done && it->task && (unsigned)it->status < 0x0f000000u;
}

/*
 * The data-in bytes that count: what arrived, at most the allocation length
 * (in_len) and, with an underflow, at most in_len less the residual. *sent:
 * what arrived (more than in_len: the target overran the allocation length).
 */
static size_t received(const struct scsi_task *t, uint32_t in_len, size_t *sent)
{
	size_t n = t->datain.size > 0 ? (size_t)t->datain.size : 0;

	*sent = n;
	if (n > in_len)
		n = in_len;
	if (t->residual_status == SCSI_RESIDUAL_UNDERFLOW && t->residual <= in_len &&
	    n > in_len - t->residual)
		n = in_len - t->residual;
	return n;
}

/* True for a status that ends a command well (GOOD, CONDITION MET; SAM-5 5.3). */
static bool status_good(int status)
{
	return status == SCSI_STATUS_GOOD || status == SCSI_STATUS_CONDITION_MET;
}

/* Prints a sleep or task-management item's outcome. */
static void report_other(const struct item *it, const struct send_opts *o, double ms)
{
	FILE *out = stdout;

	if (it->kind == IT_SLEEP) {
		if (o->json)
			fprintf(out, "{\"item\": %d, \"op\": \"sleep\", \"ms\": %u}\n", it->n,
				it->ms);
		else
			printf("#%d sleep %u ms\n", it->n, it->ms);
		return;
	}
	if (o->json) {
		fprintf(out, "{\"item\": %d, \"op\": ", it->n);
		json_str(out, it->name);
		if (it->done)
			fprintf(out,
				", \"response\": %u, \"response_name\": \"%s\", \"ms\": %.3f}\n",
				it->tmf_resp, tmf_resp_name(it->tmf_resp), ms);
		else
			fputs(", \"answered\": false}\n", out);
	} else if (it->done) {
		printf("#%d %s: %s (%u), %.3f ms\n", it->n, it->text, tmf_resp_name(it->tmf_resp),
		       it->tmf_resp, ms);
	} else {
		printf("#%d %s: no answer\n", it->n, it->text);
	}
}

/* What a SCSI item's answer says, read once for either report. */
struct answer {
	struct scsi_task *t;
	struct sense s;
	const char *st;	      /* status name, or NULL */
	char sense_text[128]; /* key and ASC/ASCQ in words, when s.valid */
	size_t got, sent;     /* data-in that counts, data-in that arrived */
	double ms;
};

/* Writes the sense object of the JSON report. */
static void report_json_sense(FILE *out, const struct answer *a)
{
	const struct fl_sense_data *d = &a->s.d;

	fprintf(out, ", \"sense\": {\"key\": %u, \"asc\": %u, \"ascq\": %u, \"text\": ", d->key,
		d->asc, d->ascq);
	json_str(out, a->sense_text);
	fprintf(out, ", \"format\": \"%s\"", fl_sense_format_name(d->format));
	if (d->info_valid)
		fprintf(out, ", \"information\": %" PRIu64, d->info);
	fputs(", \"bytes\": \"", out);
	for (size_t i = 0; i < a->s.len; i++)
		fprintf(out, "%s%02x", i ? " " : "", a->s.raw[i]);
	fputs("\"}", out);
}

/* Prints a SCSI item's outcome as one JSON line. */
static void report_json(const struct item *it, const struct send_opts *o, const struct answer *a)
{
	FILE *out = stdout;
	struct scsi_task *t = a->t;

	fprintf(out, "{\"item\": %d, \"op\": ", it->n);
	json_str(out, it->name);
	fputs(", \"cdb\": \"", out);
	for (int i = 0; i < it->cdb_len; i++)
		fprintf(out, "%s%02x", i ? " " : "", it->cdb[i]);
	fprintf(out, "\", \"lun\": %d", it->lun);
	if (!answered(it)) {
		fprintf(out, ", \"answered\": false}\n");
		return;
	}
	fprintf(out, ", \"status\": %d, \"status_name\": \"%s\"", t->status, a->st ? a->st : "?");
	if (a->s.valid)
		report_json_sense(out, a);
	fprintf(out, ", \"residual\": %zu, \"data_in\": %zu, \"ms\": %.3f",
		t->residual_status ? t->residual : 0, a->got, a->ms);
	if (a->sent > it->in_len)
		fprintf(out, ", \"overrun\": %zu", a->sent);
	if (o->hex && a->got > 0) {
		fputs(", \"data\": \"", out);
		for (size_t i = 0; i < a->got; i++)
			fprintf(out, "%02x", t->datain.data[i]);
		fputc('"', out);
	}
	if (status_good(t->status) && t->xfer_dir == SCSI_XFER_READ)
		fl_decode(out, true, it->cdb, it->cdb_len, t->datain.data, a->got);
	fputs("}\n", out);
}

/* Prints a SCSI item's outcome as text: one line, then sense and data when asked. */
static void report_text(const struct item *it, const struct send_opts *o, const struct answer *a)
{
	FILE *out = stdout;
	struct scsi_task *t = a->t;
	const struct fl_sense_data *d = &a->s.d;

	if (!answered(it)) {
		printf("#%d %s: no answer%s\n", it->n, it->text,
		       it->done ? " (the session failed)" : "");
		return;
	}
	printf("#%d %s: %s", it->n, it->text, a->st ? a->st : "?");
	if (a->s.valid) {
		printf(", sense %s, %s", a->sense_text, fl_sense_format_name(d->format));
		if (d->info_valid)
			printf(", INFORMATION %" PRIu64 " (0x%" PRIx64 ")", d->info, d->info);
	}
	if (t->residual_status == SCSI_RESIDUAL_UNDERFLOW)
		printf(", residual %zu (underflow)", t->residual);
	else if (t->residual_status == SCSI_RESIDUAL_OVERFLOW)
		printf(", residual %zu (overflow)", t->residual);
	if (a->got)
		printf(", %zu bytes in", a->got);
	if (a->sent > it->in_len)
		printf(" (the target sent %zu: overrun of the allocation length %u)", a->sent,
		       it->in_len);
	printf(", %.3f ms\n", a->ms);
	if (a->s.valid && o->hex) {
		printf("  sense:\n");
		hexdump(out, a->s.raw, a->s.len);
	}
	if (status_good(t->status) && t->xfer_dir == SCSI_XFER_READ)
		fl_decode(out, false, it->cdb, it->cdb_len, t->datain.data, a->got);
	if (o->hex && a->got > 0)
		hexdump(out, t->datain.data, a->got);
}

/* Prints one item's outcome. */
static void report(const struct item *it, const struct send_opts *o)
{
	struct answer a = {.t = it->task, .ms = it->done ? it->t_done - it->t_sent : -1};

	if (it->kind == IT_SLEEP || it->kind == IT_TMF) {
		report_other(it, o, a.ms);
		return;
	}
	if (answered(it)) {
		decode_sense(a.t, &a.s);
		a.st = fl_status_name((uint8_t)a.t->status);
		if (status_good(a.t->status))
			a.got = received(a.t, it->in_len, &a.sent);
	}
	if (a.s.valid)
		fl_sense_text(a.s.d.key, a.s.d.asc, a.s.d.ascq, a.sense_text, sizeof(a.sense_text));
	if (o->json)
		report_json(it, o, &a);
	else
		report_text(it, o, &a);
}

/* Sends one SCSI item. */
static int send_scsi(struct item *it)
{
	struct scsi_task *t = calloc(1, sizeof(*t));
	struct iscsi_data d = {0};
	uint8_t *buf = NULL;

	if (!t)
		return -ENOMEM;
	memcpy(t->cdb, it->cdb, (size_t)it->cdb_len);
	t->cdb_size = it->cdb_len;
	t->xfer_dir = it->in_len ? SCSI_XFER_READ : it->out_len ? SCSI_XFER_WRITE : SCSI_XFER_NONE;
	t->expxferlen = (int)(it->in_len ? it->in_len : it->out_len);
	if (it->out_len) {
		buf = malloc(it->out_len);
		if (!buf) {
			free(t);
			return -ENOMEM;
		}
		memset(buf, it->pattern, it->out_len);
		memcpy(buf, it->data, it->data_len);
		d.data = buf;
		d.size = it->out_len;
	}
	it->task = t;
	it->t_sent = now();
	it->sent = true;
	if (iscsi_scsi_command_async(ctx, it->lun, t, scsi_cb, it->out_len ? &d : NULL, it)) {
		free(buf);
		it->task = NULL;
		scsi_free_scsi_task(t);
		return -EIO;
	}
	it->out_buf = buf; /* libiscsi writes data-out from it, up to the last R2T */
	return 0;
}

/*
 * The block size of lun for read and write items: READ CAPACITY(10), asked
 * once per LUN (up to three times while it ends in CHECK CONDITION, as a
 * pending unit attention does). An answer other than GOOD is printed on
 * stderr (a unit attention it took is shown, not lost). 512 when no GOOD
 * answer came; 0 (with a message) when the target's block size is out of
 * SEND_BS_MIN..SEND_BS_MAX or not a power of two.
 */
static uint32_t block_size(int lun, const struct send_opts *o)
{
	uint32_t bs = 512;

	if (lun_bs[lun & 255])
		return lun_bs[lun & 255] == 1 ? 0 : lun_bs[lun & 255];
	for (int i = 0; i < 3; i++) {
		struct item *it = calloc(1, sizeof(*it));
		bool good = false, ans;

		if (!it)
			break;
		*it = (struct item){.text = "block size (READ CAPACITY(10))",
				    .name = "block-size",
				    .lun = lun,
				    .cdb = {SBC_OP_READ_CAPACITY_10},
				    .cdb_len = 10,
				    .in_len = 8};
		if (send_scsi(it)) {
			free(it);
			break;
		}
		if (!ini_wait(ctx, &it->done, o->timeout_ms)) {
			fprintf(stderr, "faultlun send: LUN %d: %s: no answer\n", lun, it->text);
			iscsi_scsi_cancel_task(ctx, it->task); /* libiscsi lets go of it */
			scsi_free_scsi_task(it->task);
			free(it);
			break;
		}
		ans = answered(it);
		if (ans && status_good(it->task->status)) {
			size_t sent;
			if (received(it->task, 8, &sent) >= 8) {
				uint32_t v = fl_get_be32(it->task->datain.data + 4);
				good = true;
				if (!bs_ok(v)) {
					fprintf(
					    stderr,
					    "faultlun send: LUN %d: the target's block size %u is "
					    "out of range (a power of two, %u to %u)\n",
					    lun, v, SEND_BS_MIN, SEND_BS_MAX);
					bs = 0;
				} else {
					bs = v;
				}
			}
		}
		bool ua = false;
		if (!good) {
			struct sense sn;
			char text[128] = "";

			if (ans)
				decode_sense(it->task, &sn);
			else
				memset(&sn, 0, sizeof(sn));
			if (sn.valid)
				fl_sense_text(sn.d.key, sn.d.asc, sn.d.ascq, text, sizeof(text));
			ua = sn.valid && sn.d.key == SCSI_SENSE_UNIT_ATTENTION;
			fprintf(stderr, "faultlun send: LUN %d: %s: %s%s%s\n", lun, it->text,
				ans ? fl_status_name((uint8_t)it->task->status) : "no answer",
				sn.valid ? ", sense " : "", text);
		}
		scsi_free_scsi_task(it->task);
		free(it);
		if (!ua)
			break;
	}
	lun_bs[lun & 255] = bs ? bs : 1;
	return bs;
}

/*
 * Arms (ms > 0) or disarms (0) send's watchdog (ini_watchdog: a loop inside
 * libiscsi that never returns to send's waits).
 */
static void watchdog(int64_t ms)
{
#ifdef FL_FUZZ_CLIENT
	const int rc = -1; /* tests/fuzz/fuzz_client.c: a finding, with its input kept */
#else
	const int rc = SEND_NO_ANSWER;
#endif
	ini_watchdog(ms,
		     "faultlun send: no progress within the deadline: the session is stuck "
		     "(e.g. a target's MaxRecvDataSegmentLength=0)",
		     rc, false);
}

/* The exit status an item's outcome asks for (SEND_OK when it went well). */
static int item_rc(const struct item *it, const struct send_opts *o)
{
	if (it->kind == IT_SLEEP)
		return SEND_OK;
	if (!it->done)
		return SEND_NO_ANSWER; /* not sent, or no answer */
	if (it->kind == IT_TMF)
		return it->status == SCSI_STATUS_GOOD ? SEND_OK : SEND_NO_ANSWER;
	if (!answered(it))
		return SEND_NO_ANSWER; /* the session failed */
	return status_good(it->task->status) || o->ignore_status ? SEND_OK : SEND_STATUS;
}

/* The worse of two exit statuses (no answer over a bad status over success). */
static int worse(int a, int b)
{
	static const int rank[] = {
	    [SEND_OK] = 0, [SEND_STATUS] = 1, [SEND_USAGE] = 3, [SEND_NO_ANSWER] = 2};
	return rank[b] > rank[a] ? b : a;
}

/* Logs out within ms at most (a target that never answers must not hold send). */
static void logout(int ms)
{
	switch (ini_logout(ctx, ms)) {
	case 1:
		fprintf(stderr, "faultlun send: the connection closed before the logout answer\n");
		break;
	case 2:
		fprintf(stderr, "faultlun send: no answer to the logout within %d ms\n", ms);
		break;
	default:
		break;
	}
}

/* --clear-ua: the unit attentions of every LUN the items address, cleared. */
static int clear_uas(struct item *items, int n, const struct send_opts *o)
{
	bool seen[256] = {false};

	for (int i = 0; i < n; i++) {
		int lun = items[i].lun < 0 ? url_lun : items[i].lun;

		if (items[i].kind != IT_SCSI || seen[lun & 255])
			continue;
		seen[lun & 255] = true;
		if (ini_clear_ua(ctx, lun, o->timeout_ms, "faultlun send") < 0) {
			fprintf(stderr, "faultlun send: LUN %d: no answer to TEST UNIT READY\n",
				lun);
			return SEND_NO_ANSWER;
		}
	}
	return SEND_OK;
}

/*
 * Waits for its answer; when the connection is gone for good the item ends
 * at once as "no answer (the session failed)".
 */
static void session_wait(struct item *it, int ms)
{
	if (!ini_wait(ctx, &it->done, ms) && ini_gone(ctx)) {
		it->done = true;
		it->status = SCSI_STATUS_ERROR;
	}
}

/* Sends the TMF item it (an ABORT TASK names its item, else the last SCSI item, 1-based
 * last_scsi). Returns 0, or -1 (said on stderr) when libiscsi cannot queue it. */
static int send_tmf(struct item *it, const struct item *items, int last_scsi)
{
	const struct item *target = it->abort_of ? &items[it->abort_of - 1]
				    : last_scsi	 ? &items[last_scsi - 1]
						 : NULL;
	struct scsi_task *tt = it->tmf == ISCSI_TM_ABORT_TASK && target ? target->task : NULL;

	it->t_sent = now();
	it->sent = true;
	if (iscsi_task_mgmt_async(ctx, it->lun, (enum iscsi_task_mgmt_funcs)it->tmf,
				  tt ? tt->itt : 0xffffffff, tt ? tt->cmdsn : 0, tmf_cb, it)) {
		fprintf(stderr, "faultlun send: %s: %s\n", it->text, iscsi_get_error(ctx));
		return -1;
	}
	return 0;
}

/* Sends the items in order and waits for each; the exit status. */
static int run_items(struct item *items, int n, const struct send_opts *o)
{
	int rc = SEND_OK, last_scsi = 0;

	/*
	 * read/write lengths in the LUN's own blocks, asked before the first item
	 * (asked later, the question would take a unit attention that an item
	 * between, e.g. a sleep, let the target establish)
	 */
	for (int i = 0; i < n; i++) {
		struct item *it = &items[i];

		watchdog(3 * (int64_t)o->timeout_ms + 5000);
		if (it->lun < 0)
			it->lun = url_lun;
		if (it->rw && !it->bs) {
			uint32_t bs = block_size(it->lun, o);

			if (!bs)
				return SEND_NO_ANSWER;
			if (!rw_length(it, bs))
				return SEND_USAGE;
		}
	}
	for (int i = 0; i < n; i++) {
		struct item *it = &items[i];

		watchdog((int64_t)it->ms + o->timeout_ms + 5000);
		if (it->kind == IT_SLEEP) {
			ini_wait(ctx, NULL, it->ms);
			report(it, o);
			continue;
		}
		if (it->kind == IT_TMF) {
			if (send_tmf(it, items, last_scsi))
				return worse(rc, SEND_NO_ANSWER);
		} else {
			if (send_scsi(it)) {
				fprintf(stderr, "faultlun send: %s: %s\n", it->text,
					iscsi_get_error(ctx));
				return worse(rc, SEND_NO_ANSWER);
			}
			last_scsi = it->n;
			if (it->nowait)
				continue;
		}
		session_wait(it, o->timeout_ms);
		/* answers to earlier nowait items that came meanwhile, in order */
		for (int k = 0; k < i; k++)
			if (items[k].nowait && items[k].done && items[k].sent) {
				report(&items[k], o);
				rc = worse(rc, item_rc(&items[k], o));
				items[k].sent = false;
			}
		report(it, o);
		rc = worse(rc, item_rc(it, o));
	}
	/* nowait items still open: wait for them once more, then report */
	for (int i = 0; i < n; i++) {
		if (!items[i].nowait || !items[i].sent)
			continue;
		watchdog((int64_t)o->timeout_ms + 5000);
		session_wait(&items[i], o->timeout_ms);
		report(&items[i], o);
		rc = worse(rc, item_rc(&items[i], o));
	}
	return rc;
}

/* The n items of words (checked before anything is sent), or NULL (said why). */
static struct item *parse_items(char **words, int n)
{
	struct item *items = calloc((size_t)n, sizeof(*items));

	if (!items)
		return NULL;
	for (int i = 0; i < n; i++) {
		items[i].n = i + 1;
		if (!parse_item(words[i], &items[i])) {
			free(items);
			return NULL;
		}
		if (items[i].kind == IT_TMF && items[i].tmf == ISCSI_TM_ABORT_TASK &&
		    items[i].abort_of >= i + 1) {
			fprintf(stderr, "faultlun send: '%s': item %d comes later\n", items[i].text,
				items[i].abort_of);
			free(items);
			return NULL;
		}
	}
	return items;
}

/*
 * Logs in to url, sends the n items (after clearing unit attentions if asked), logs out and
 * frees the items; returns the exit status of `faultlun send`.
 */
static int send_items(const char *url, struct item *items, int n, const struct send_opts *o)
{
	int rc;

	/* a target that closes the connection must not kill send with SIGPIPE */
	signal(SIGPIPE, SIG_IGN);
	watchdog((int64_t)o->timeout_ms + 5000);
	ctx = ini_login(url, "iqn.2026-12.org.faultlun:send", &url_lun, o->timeout_ms);
	if (!ctx) {
		watchdog(0);
		free(items);
		return SEND_USAGE;
	}
	/*
	 * No session renewal: libiscsi would log in again and resend the open
	 * commands, unseen; a failed session ends them as "no answer (the
	 * session failed)".
	 */
	iscsi_set_noautoreconnect(ctx, 1);
	memset(lun_bs, 0, sizeof(lun_bs));
	rc = SEND_OK;
	if (o->clear_ua)
		rc = clear_uas(items, n, o);
	if (rc == SEND_OK)
		rc = run_items(items, n, o);
	watchdog(10000);
	logout(o->timeout_ms < 5000 ? o->timeout_ms : 5000);
	watchdog(0);
	/*
	 * The context frees every PDU it still holds (libiscsi 1.19
	 * iscsi_cancel_pdus), never a task: the items' tasks, answered or not,
	 * are freed here.
	 */
	iscsi_destroy_context(ctx);
	ctx = NULL;
	for (int i = 0; i < n; i++) {
		if (items[i].task)
			scsi_free_scsi_task(items[i].task);
		free(items[i].out_buf);
	}
	free(items);
	return rc;
}

/* `faultlun send`. */
int cmd_send(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"hex", no_argument, NULL, 'x'},	       {"json", no_argument, NULL, 'j'},
	    {"timeout", required_argument, NULL, 't'}, {"ignore-status", no_argument, NULL, 'i'},
	    {"clear-ua", no_argument, NULL, 'u'},      {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},       {NULL, 0, NULL, 0},
	};
	struct send_opts o = {.timeout_ms = 30000};
	struct item *items;
	int c, n;
	uint64_t v;

	/* options anywhere: before, between or after the URL and the items */
	optind = 0;
	while ((c = cli_getopt("send", argc, argv, "xjt:iuhV", longopts)) != -1) {
		switch (c) {
		case 'x':
			o.hex = true;
			break;
		case 'j':
			o.json = true;
			break;
		case 't':
			if (cli_opt_uint("send", "--timeout", optarg, 1, 86400, &v))
				return SEND_USAGE;
			o.timeout_ms = (int)v * 1000;
			break;
		case 'i':
			o.ignore_status = true;
			break;
		case 'u':
			o.clear_ua = true;
			break;
		case 'V':
			cli_print_version(stdout);
			return 0;
		case 'h':
			send_usage(stdout);
			return 0;
		default:
			cli_try_help("send");
			return SEND_USAGE;
		}
	}
	if (argc - optind < 2) {
		fprintf(stderr, "faultlun send: give a URL and at least one item\n");
		send_usage(stderr);
		return SEND_USAGE;
	}
	if (strncmp(argv[optind], "iscsi://", 8)) {
		fprintf(stderr, "faultlun send: '%s' is not an iscsi://HOST[:PORT]/IQN/LUN URL\n",
			argv[optind]);
		return SEND_USAGE;
	}
	n = argc - optind - 1;
	/* Items are checked before anything is sent. */
	if (!(items = parse_items(argv + optind + 1, n)))
		return SEND_USAGE;
	return send_items(argv[optind], items, n, &o);
}
