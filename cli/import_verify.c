/* SPDX-License-Identifier: MIT */
/*
 * import_verify.c - `faultlun import --verify`: fidelity measured. Each SCSI
 * command the capture holds (CDB, data-out length, LUN, connection) is kept
 * with its answer; after the import the commands are replayed in capture
 * order against a scenario, in process, through the fault engine (the one
 * serve runs, memory stores whatever the scenario says), and every answer is
 * compared with the capture's: status, sense key/ASC/ASCQ, data-in length
 * where it is reproduced, and the identity fields the scenario carries
 * (docs/import.md, "Verify" says exactly which). A command the capture never
 * saw answered must be held (or dropped) by the engine: that is read from
 * its counters, without waiting. Everything is bounded: the commands kept
 * (IMP_MAX_VERIFY), the identity data kept (IMP_MAX_VERIFY_DATA), each
 * transfer (IMP_MAX_XFER), the time waited for an answer.
 */
#include "import_internal.h"

#include "fl_faults.h"
#include "fl_target.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define VERIFY_WAIT_MS 2000	     /* for one answer the engine delays */
#define VERIFY_WAIT_TOTAL_MS 30000   /* for all of them */
#define VERIFY_MAX_PRINTED 200	     /* differences printed (all are counted) */
#define VERIFY_UA_RETRIES 4	     /* power-on / reset unit attentions cleared per command */
#define VERIFY_MAX_HELD (256u << 20) /* data-in buffers of commands the engine keeps */

/* The I_T nexus of connection c (import_internal.h). */
unsigned imp_nexus_of(struct fl_import *im, struct imp_conn *c)
{
	char iport[256] = "";
	unsigned i;

	if (c->nexus >= 0)
		return (unsigned)c->nexus;
	if (c->iname[0])
		snprintf(iport, sizeof(iport), "%s,i,0x%02x%02x%02x%02x%02x%02x", c->iname,
			 c->isid[0], c->isid[1], c->isid[2], c->isid[3], c->isid[4], c->isid[5]);
	for (i = 0; iport[0] && i < im->nnexus; i++)
		if (im->nexus[i].portal == c->portal && !strcmp(im->nexus[i].iport, iport))
			return (unsigned)(c->nexus = (int)i);
	if (im->nnexus >= IMP_MAX_NEXUS)
		return IMP_MAX_NEXUS; /* past them: a nexus per connection (replay_nexus) */
	if (!(im->nnexus % 64)) {
		struct imp_nexus *n = realloc(im->nexus, (im->nnexus + 64) * sizeof(*n));
		if (!n)
			return IMP_MAX_NEXUS;
		im->nexus = n;
	}
	i = im->nnexus++;
	snprintf(im->nexus[i].iport, sizeof(im->nexus[i].iport), "%s", iport);
	im->nexus[i].portal = c->portal;
	im->nexus[i].conn = c->id;
	return (unsigned)(c->nexus = (int)i);
}

/* Keeps a command and its answer (import_internal.h). */
void imp_verify_keep(struct fl_import *im, struct imp_conn *c, const struct imp_cmd *m,
		     bool answered, uint8_t status, const uint8_t *sense, size_t sense_len,
		     uint64_t frame, enum imp_vskip skip)
{
	struct imp_vrec *v;

	if (im->nvrecs >= IMP_MAX_VERIFY) {
		im->vrecs_over++;
		return;
	}
	if (!(im->nvrecs % 256)) {
		struct imp_vrec *n = realloc(im->vrecs, (im->nvrecs + 256) * sizeof(*n));
		if (!n) {
			im->vrecs_over++;
			return;
		}
		im->vrecs = n;
	}
	v = &im->vrecs[im->nvrecs++];
	memset(v, 0, sizeof(*v));
	v->seq = m->seq;
	v->frame = m->frame;
	v->answer_frame = frame;
	v->conn = c->id;
	v->nexus = imp_nexus_of(im, c);
	v->portal = c->portal;
	v->lun = m->lun;
	memcpy(v->cdb, m->cdb, sizeof(v->cdb));
	v->flags = m->flags;
	v->edtl = m->edtl;
	v->datain_len = m->datain_len;
	if (m->param && m->param_len && im->vdata_bytes + m->param_len <= IMP_MAX_VERIFY_DATA &&
	    (v->param = malloc(m->param_len))) {
		memcpy(v->param, m->param, m->param_len);
		v->param_len = m->param_len;
		im->vdata_bytes += m->param_len;
	}
	v->answered = answered;
	v->status = status;
	v->skip = skip;
	if (m->data_cmp && answered && status == FL_STATUS_GOOD) {
		struct fl_cdb_info ci;
		v->data_cmp = !fl_cdb_decode(m->cdb, 16, &ci) &&
			      m->datain_len == (uint64_t)ci.nblocks * im->luns[m->lun].block_size &&
			      m->dnext == m->datain_len;
		v->dhash = m->dhash;
	}
	if (sense && sense_len) {
		v->sense_len = sense_len < sizeof(v->sense) ? (uint8_t)sense_len : sizeof(v->sense);
		memcpy(v->sense, sense, v->sense_len);
	}
	if (m->data && m->data_len && im->vdata_bytes + m->data_len <= IMP_MAX_VERIFY_DATA &&
	    (v->data = malloc(m->data_len))) {
		memcpy(v->data, m->data, m->data_len);
		v->data_len = m->data_len;
		im->vdata_bytes += m->data_len;
	}
}

/* Frees what was kept (import_internal.h). */
void imp_verify_free(struct fl_import *im)
{
	for (unsigned i = 0; i < im->nvrecs; i++) {
		free(im->vrecs[i].data);
		free(im->vrecs[i].param);
	}
	free(im->vrecs);
	im->vrecs = NULL;
	im->nvrecs = 0;
	free(im->vends);
	im->vends = NULL;
	im->nvends = 0;
	free(im->nexus);
	im->nexus = NULL;
	im->nnexus = 0;
}

/* A connection of the imported target ended, or a reset was done (import_internal.h). */
void imp_verify_event(struct fl_import *im, struct imp_conn *c, uint8_t tmf, int lun)
{
	if (im->nvends >= IMP_MAX_VERIFY)
		return;
	if (!(im->nvends % 256)) {
		struct imp_vend *n = realloc(im->vends, (im->nvends + 256) * sizeof(*n));
		if (!n)
			return;
		im->vends = n;
	}
	im->vends[im->nvends++] =
	    (struct imp_vend){im->cmd_seq, c->id, imp_nexus_of(im, c), tmf, lun};
}

/* One replayed command: owned here until the engine is gone. */
struct vcmd {
	struct fl_cmd cmd;
	atomic_bool done;
	uint8_t *out_buf;  /* a parameter list as captured, zeros after it */
	struct vcmd *next; /* still with the engine (held, or not answered in time) */
};

/* Completion of a replayed command. */
static void vcmd_done(struct fl_cmd *cmd)
{
	struct vcmd *x = (struct vcmd *)cmd;

	atomic_store(&x->done, true);
}

/* Why a command is not compared, as the summary counts it. */
enum vs_reason {
	VS_UA29,      /* a reset / power-on unit attention: faultlun's LUNs raise their own */
	VS_BIG_LUN,   /* a LUN the scenario format cannot name */
	VS_AT_END,    /* outstanding when the capture ended */
	VS_RESPONSE,  /* an iSCSI target failure */
	VS_GAP,	      /* unanswered after a gap in the target's stream */
	VS_NO_SENSE,  /* CHECK CONDITION without readable sense */
	VS_STATUS,    /* a status the scenario format cannot give */
	VS_TOO_LARGE, /* a transfer over IMP_MAX_XFER */
	VS_HELD_MEM,  /* its buffer would take the held commands' past VERIFY_MAX_HELD */
	VS_DATA,      /* its answer depends on data the capture's writes carried (not kept) */
	VS_NR
};

/* The summary's words for each reason. */
static const char *const vs_words[VS_NR] = {
    "unit attention 29h",
    "LUN above 255",
    "outstanding at the capture's end",
    "iSCSI target failure",
    "unanswered after a capture gap",
    "no readable sense",
    "status not reproduced",
    "transfer over 16 MiB",
    "past 256 MiB of buffers held",
    "comparing data not kept",
};

/* The state of one replay. */
struct verify {
	struct fl_import *im;
	const struct fl_scenario *sc;
	struct fl_engine *e;
	FILE *out;
	unsigned ncmds, ndiff, skipped, waited_ms;
	unsigned skip_why[VS_NR]; /* not compared, by reason */
	struct vtmf *tmfs;	  /* the resets replayed */
	struct vcmd *pending;
	size_t pending_bytes; /* their data-in buffers */
	uint8_t *zeros;	      /* data-out, IMP_MAX_XFER bytes of zeros, made when first needed */
	unsigned data_cmps;   /* --keep-data: reads whose data was compared */
	char tmpdir[64];      /* --keep-data: the replay's copies of the images ("": none) */
};

/*
 * --keep-data: the replay's LUNs are file stores, copies of the images (the
 * replay writes into them; a LUN without an image gets an empty file), in a
 * temporary folder: eo is pointed at them. 0, or -errno.
 */
static int images_copy(struct verify *vf, const struct fl_scenario *sc, struct fl_engine_opts *eo,
		       char *prefix, size_t len)
{
	unsigned n = fl_scenario_lun_count(sc);
	bool any = false;
	char path[128];

	for (int l = 0; l < 256; l++)
		any |= vf->im->luns[l].keep && vf->im->luns[l].keep->fd >= 0;
	if (!any)
		return 0;
	snprintf(vf->tmpdir, sizeof(vf->tmpdir), "%s", "/tmp/faultlun-verify-XXXXXX");
	if (!mkdtemp(vf->tmpdir)) {
		vf->tmpdir[0] = 0;
		return -errno;
	}
	snprintf(prefix, len, "%s/lun", vf->tmpdir);
	for (unsigned i = 0; i < n; i++) {
		struct fl_lun_config cfg;
		uint16_t id;
		int r;

		if (fl_scenario_lun(sc, i, &id, &cfg))
			continue;
		/* engine_life.c's naming: PATH, or PATH.ID with several LUNs */
		if (n > 1)
			snprintf(path, sizeof(path), "%s.%u", prefix, id);
		else
			snprintf(path, sizeof(path), "%s", prefix);
		r = imp_data_copy(vf->im, id, path);
		if (r && r != -ENOENT)
			return r;
	}
	eo->store = FL_STORE_FILE;
	eo->store_path = prefix;
	return 0;
}

/* Removes the replay's copies of the images and their folder. */
static void images_remove(struct verify *vf)
{
	char path[128];

	if (!vf->tmpdir[0])
		return;
	for (int l = 0; l < 256; l++) {
		snprintf(path, sizeof(path), "%s/lun.%d", vf->tmpdir, l);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/lun", vf->tmpdir);
	unlink(path);
	rmdir(vf->tmpdir);
}

/* Milliseconds of CLOCK_MONOTONIC. */
static uint64_t verify_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Orders kept commands as the capture sent them. */
static int vrec_cmp(const void *a, const void *b)
{
	const struct imp_vrec *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The CDB length of an opcode's group (SPC-4 r37 4.2.5.1); 16 for the rest. */
static uint8_t cdb_len(uint8_t op)
{
	switch (op >> 5) {
	case 0:
		return 6;
	case 1:
	case 2:
		return 10;
	case 5:
		return 12;
	default:
		return 16;
	}
}

/* An answer as text: "GOOD", "CHECK CONDITION 03/11/00", "no answer". */
static void answer_text(char *buf, size_t len, bool answered, uint8_t status, const uint8_t *sense,
			size_t sense_len)
{
	struct fl_sense_data sd;

	if (!answered)
		snprintf(buf, len, "no answer");
	else if (status == FL_STATUS_CHECK_CONDITION &&
		 fl_sense_decode(sense, sense_len, &sd) != FL_SENSE_FORMAT_UNKNOWN)
		snprintf(buf, len, "CHECK CONDITION %X/%02X/%02X", sd.key, sd.asc, sd.ascq);
	else if (status == FL_STATUS_CHECK_CONDITION)
		snprintf(buf, len, "CHECK CONDITION (no readable sense)");
	else
		snprintf(buf, len, "status 0x%02x%s", status, status ? "" : " GOOD");
}

/* Prints one difference of command v (what, then the capture's and the replay's). */
static void differ(struct verify *vf, const struct imp_vrec *v, const char *what, const char *cap,
		   const char *rep)
{
	struct fl_cdb_info ci;

	vf->ndiff++;
	if (vf->ndiff > VERIFY_MAX_PRINTED) {
		if (vf->ndiff == VERIFY_MAX_PRINTED + 1)
			fprintf(vf->out, "verify: more differences are counted, not printed\n");
		return;
	}
	fl_cdb_decode(v->cdb, cdb_len(v->cdb[0]), &ci);
	const char *name = fl_opcode_name(v->cdb[0], ci.service_action);
	fprintf(vf->out, "frame %" PRIu64 ": LUN %d %s", v->frame, v->lun, name ? name : "");
	if (!name)
		fprintf(vf->out, "opcode 0x%02x", v->cdb[0]);
	if (ci.has_lba)
		fprintf(vf->out, " LBA %" PRIu64 "+%u", ci.lba, ci.nblocks);
	fprintf(vf->out, ": %s: capture %s, replay %s\n", what, cap, rep);
}

/* An INQUIRY text field as import reads it: trailing (and, when lead, leading) blanks dropped. */
static void field_text(char *dst, const uint8_t *src, size_t n, bool lead)
{
	size_t l = n, s = 0, o = 0;

	while (l && (src[l - 1] == ' ' || src[l - 1] == 0))
		l--;
	while (lead && s < l && src[s] == ' ')
		s++;
	for (size_t i = s; i < l; i++)
		dst[o++] = (src[i] >= 0x20 && src[i] < 0x7f && src[i] != '"' && src[i] != '\\')
			       ? (char)src[i]
			       : '?';
	dst[o] = 0;
}

/* Compares one text field of both answers. */
static void cmp_field(struct verify *vf, const struct imp_vrec *v, const char *what,
		      const uint8_t *a, const uint8_t *b, size_t n, bool lead)
{
	char x[80], y[80], qx[84], qy[84];

	if (n > 64)
		n = 64;
	field_text(x, a, n, lead);
	field_text(y, b, n, lead);
	if (strcmp(x, y)) {
		snprintf(qx, sizeof(qx), "\"%s\"", x);
		snprintf(qy, sizeof(qy), "\"%s\"", y);
		differ(vf, v, what, qx, qy);
	}
}

/* Compares one number of both answers. */
static void cmp_num(struct verify *vf, const struct imp_vrec *v, const char *what, uint64_t a,
		    uint64_t b)
{
	char x[24], y[24];

	if (a == b)
		return;
	snprintf(x, sizeof(x), "%" PRIu64, a);
	snprintf(y, sizeof(y), "%" PRIu64, b);
	differ(vf, v, what, x, y);
}

/* One mode page bit of MODE SENSE data (-1: the page is not there). */
static int mode_bit(const uint8_t *p, uint32_t n, bool ten, uint8_t page, uint8_t mask)
{
	uint32_t hl = ten ? 8 : 4, bdl;

	if (n < hl)
		return -1;
	bdl = ten ? fl_get_be16(p + 6) : p[3];
	for (uint32_t o = hl + bdl; o + 2 <= n;) {
		bool spf = p[o] & 0x40;
		uint32_t pl = spf ? (o + 4 <= n ? fl_get_be16(p + o + 2) + 4u : n) : p[o + 1] + 2u;
		if (!spf && (p[o] & 0x3f) == page && o + 3 <= n)
			return !!(p[o + 2] & mask);
		o += pl;
	}
	return -1;
}

/* Compares the unit serial number of both VPD page 0x80 answers (c: the capture's, cn >= 4). */
static void cmp_serial(struct verify *vf, const struct imp_vrec *v, const uint8_t *c, uint32_t cn,
		       const uint8_t *r, uint32_t rn)
{
	uint32_t cl = fl_get_be16(c + 2), rl = rn >= 4 ? fl_get_be16(r + 2) : 0;
	char x[80], y[80] = "", qx[84], qy[84];
	cl = cl > cn - 4 ? cn - 4 : cl;
	rl = rn >= 4 ? (rl > rn - 4 ? rn - 4 : rl) : 0;
	field_text(x, c + 4, cl > 64 ? 64 : cl, true);
	if (rn >= 4)
		field_text(y, r + 4, rl > 64 ? 64 : rl, true);
	/* an empty serial is not reproduced: faultlun makes its own */
	if (x[0] && strcmp(x, y)) {
		snprintf(qx, sizeof(qx), "\"%s\"", x);
		snprintf(qy, sizeof(qy), "\"%s\"", y);
		differ(vf, v, "serial", qx, qy);
	}
}

/* Compares the identity in both INQUIRY answers: standard data, serial, NAA designator. */
static void cmp_inquiry(struct verify *vf, const struct imp_vrec *v, const uint8_t *r, uint32_t rn)
{
	const uint8_t *c = v->data, *cdb = v->cdb;
	uint32_t cn = v->data_len;
	uint64_t a, b;

	if (!(cdb[1] & 1)) {
		if (cn < 36 || rn < 36) {
			if (cn >= 36)
				cmp_num(vf, v, "INQUIRY length", cn, rn);
			return;
		}
		cmp_field(vf, v, "vendor", c + 8, r + 8, 8, false);
		cmp_field(vf, v, "product", c + 16, r + 16, 16, false);
		cmp_field(vf, v, "revision", c + 32, r + 32, 4, false);
		cmp_num(vf, v, "RMB", c[1] >> 7, r[1] >> 7);
	} else if (cdb[2] == 0x80 && cn >= 4) {
		cmp_serial(vf, v, c, cn, r, rn);
	} else if (cdb[2] == 0x83 && imp_vpd83_naa16(c, cn, &a, &b)) {
		char x[40], y[40] = "none";
		snprintf(x, sizeof(x), "0x%016" PRIx64 "%016" PRIx64, a, b);
		if (imp_vpd83_naa16(r, rn, &a, &b))
			snprintf(y, sizeof(y), "0x%016" PRIx64 "%016" PRIx64, a, b);
		if (strcmp(x, y))
			differ(vf, v, "NAA designator", x, y);
	} else if (cdb[2] == 0x83 && imp_vpd83_naa(c, cn, &a)) {
		char x[24], y[24] = "none";
		snprintf(x, sizeof(x), "0x%016" PRIx64, a);
		if (imp_vpd83_naa(r, rn, &b))
			snprintf(y, sizeof(y), "0x%016" PRIx64, b);
		if (strcmp(x, y))
			differ(vf, v, "NAA designator", x, y);
	}
}

/* Compares WP, WCE and D_SENSE in both MODE SENSE(6) or (10) answers (current values only). */
static void cmp_mode_sense(struct verify *vf, const struct imp_vrec *v, const uint8_t *r,
			   uint32_t rn)
{
	const uint8_t *c = v->data, *cdb = v->cdb;
	uint32_t cn = v->data_len;
	bool ten = cdb[0] != 0x1a;

	if (cdb[2] >> 6) /* changeable, default or saved values: not reproduced */
		return;
	if (cn >= (ten ? 8u : 4u) && rn >= (ten ? 8u : 4u))
		cmp_num(vf, v, "WP", (c[ten ? 3 : 2] >> 7) & 1, (r[ten ? 3 : 2] >> 7) & 1);
	int x = mode_bit(c, cn, ten, 0x08, 0x04), y = mode_bit(r, rn, ten, 0x08, 0x04);
	if (x >= 0 && y >= 0)
		cmp_num(vf, v, "WCE", (uint64_t)x, (uint64_t)y);
	x = mode_bit(c, cn, ten, 0x0a, 0x04);
	y = mode_bit(r, rn, ten, 0x0a, 0x04);
	if (x >= 0 && y >= 0)
		cmp_num(vf, v, "D_SENSE", (uint64_t)x, (uint64_t)y);
}

/* Compares the identity a GOOD answer carries, as far as the scenario reproduces it. */
static void cmp_identity(struct verify *vf, const struct imp_vrec *v, const uint8_t *r, uint32_t rn)
{
	const uint8_t *c = v->data, *cdb = v->cdb;
	uint32_t cn = v->data_len;

	if (!c)
		return;
	switch (cdb[0]) {
	case SPC_OP_INQUIRY:
		cmp_inquiry(vf, v, r, rn);
		return;
	case SBC_OP_READ_CAPACITY_10:
		if (cn >= 8 && rn >= 8) {
			cmp_num(vf, v, "returned LBA", fl_get_be32(c), fl_get_be32(r));
			cmp_num(vf, v, "block length", fl_get_be32(c + 4), fl_get_be32(r + 4));
		}
		return;
	case SBC_OP_SERVICE_ACTION_IN_16:
		if (cn >= 16 && rn >= 16) {
			cmp_num(vf, v, "returned LBA",
				(uint64_t)fl_get_be32(c) << 32 | fl_get_be32(c + 4),
				(uint64_t)fl_get_be32(r) << 32 | fl_get_be32(r + 4));
			cmp_num(vf, v, "block length", fl_get_be32(c + 8), fl_get_be32(r + 8));
			cmp_num(vf, v, "LBPME", c[14] >> 7, r[14] >> 7);
			cmp_num(vf, v, "LBPRZ", (c[14] >> 6) & 1, (r[14] >> 6) & 1);
		}
		return;
	case SPC_OP_REPORT_LUNS:
		if (cn >= 8 && rn >= 8) {
			cmp_num(vf, v, "LUN LIST LENGTH", fl_get_be32(c), fl_get_be32(r));
			uint32_t n = cn < rn ? cn : rn;
			if (memcmp(c + 8, r + 8, n - 8))
				differ(vf, v, "LUN list", "(as captured)", "(other LUNs)");
		}
		return;
	case 0x1a: /* MODE SENSE(6) */
	case SPC_OP_MODE_SENSE_10:
		cmp_mode_sense(vf, v, r, rn);
		return;
	default:
		return;
	}
}

/* Whether a command's data-in length is reproduced (docs/import.md, "Verify"). */
static bool length_reproduced(const uint8_t *cdb, const struct fl_cdb_info *ci)
{
	if (ci->cls == FL_CLASS_READ && ci->data_in)
		return true;
	return cdb[0] == SBC_OP_READ_CAPACITY_10 || cdb[0] == SPC_OP_REPORT_LUNS ||
	       (cdb[0] == SBC_OP_SERVICE_ACTION_IN_16 && (cdb[1] & 0x1f) == 0x10);
}

/* Whether the capture's answer is one the scenario format says it reproduces; else *why. */
static bool answer_reproduced(const struct imp_vrec *v, struct fl_sense_data *sd,
			      enum vs_reason *why)
{
	memset(sd, 0, sizeof(*sd));
	switch (v->skip) {
	case IMP_VS_NONE:
		break;
	case IMP_VS_BIG_LUN:
		*why = VS_BIG_LUN;
		return false;
	case IMP_VS_AT_END:
		*why = VS_AT_END;
		return false;
	case IMP_VS_RESPONSE:
		*why = VS_RESPONSE;
		return false;
	case IMP_VS_GAP:
		*why = VS_GAP;
		return false;
	}
	if (v->edtl > IMP_MAX_XFER) {
		*why = VS_TOO_LARGE;
		return false;
	}
	/* VERIFY with BYTCHK, COMPARE AND WRITE: the medium's data against data-out */
	if (((v->cdb[0] == 0x2f || v->cdb[0] == 0x8f || v->cdb[0] == 0xaf) && (v->cdb[1] & 0x06)) ||
	    v->cdb[0] == 0x89) {
		*why = VS_DATA;
		return false;
	}
	if (!v->answered)
		return true;
	switch (v->status) {
	case FL_STATUS_GOOD:
	case FL_STATUS_CONDITION_MET:
	case FL_STATUS_BUSY:
	case FL_STATUS_RESERVATION_CONFLICT:
	case FL_STATUS_TASK_SET_FULL:
	case FL_STATUS_ACA_ACTIVE:
	case FL_STATUS_TASK_ABORTED:
		return true;
	case FL_STATUS_CHECK_CONDITION:
		if (fl_sense_decode(v->sense, v->sense_len, sd) == FL_SENSE_FORMAT_UNKNOWN) {
			*why = VS_NO_SENSE;
			return false;
		}
		*why = VS_UA29;
		return !(sd->key == FL_KEY_UNIT_ATTENTION && sd->asc == 0x29);
	default:
		*why = VS_STATUS;
		return false;
	}
}

/* Whether a replayed answer is a reset / power-on unit attention (29h/xx). */
static bool is_reset_ua(const struct fl_cmd *cmd)
{
	struct fl_sense_data sd;

	return cmd->status == FL_STATUS_CHECK_CONDITION &&
	       fl_sense_decode(cmd->sense, cmd->sense_len, &sd) != FL_SENSE_FORMAT_UNKNOWN &&
	       sd.key == FL_KEY_UNIT_ATTENTION && sd.asc == 0x29;
}

/* The replay's I_T nexus id of nexus n (import_internal.h) of connection conn. */
static uint64_t replay_nexus(unsigned n, unsigned conn)
{
	return n < IMP_MAX_NEXUS ? (uint64_t)n + 1 : (uint64_t)IMP_MAX_NEXUS + 1 + conn;
}

/* Its initiator port name as the front end passes it (the verify's own when not captured). */
static const char *replay_initiator(const struct verify *vf, unsigned n)
{
	if (n < vf->im->nnexus && vf->im->nexus[n].iport[0])
		return vf->im->nexus[n].iport;
	return "iqn.2026-12.org.faultlun:verify";
}

/*
 * The relative port v's connection came through in the replay: the
 * scenario's port of the same place as its portal's target port (import
 * writes a port per target port, in the order the capture first used
 * them), else the first port.
 */
static uint16_t vrel_port(const struct verify *vf, const struct imp_vrec *v)
{
	if (!vf->sc || !vf->sc->nports)
		return 1;
	if (v->portal >= 0 && (unsigned)v->portal < vf->im->nportals &&
	    vf->im->portals[v->portal].tport < vf->sc->nports)
		return vf->sc->ports[vf->im->portals[v->portal].tport].rel_port_id;
	return vf->sc->ports[0].rel_port_id;
}

/*
 * Submits v's command once: 1 answered, 0 held or dropped by the engine
 * (no answer), -ENOMEM. *xp is the command when answered (the caller frees it).
 */
static int replay_once(struct verify *vf, const struct imp_vrec *v, bool reading, bool writing,
		       struct vcmd **xp)
{
	struct vcmd *x = calloc(1, sizeof(*x));
	struct fl_engine_counters before, after;

	*xp = NULL;
	if (!x)
		return -ENOMEM;
	memcpy(x->cmd.cdb, v->cdb, sizeof(v->cdb));
	x->cmd.cdb_len = cdb_len(v->cdb[0]);
	x->cmd.nexus.id = replay_nexus(v->nexus, v->conn);
	x->cmd.nexus.initiator = replay_initiator(vf, v->nexus);
	x->cmd.nexus.rel_port_id = vrel_port(vf, v);
	x->cmd.tag = v->seq;
	x->cmd.done = vcmd_done;
	if (reading && v->edtl && !(x->cmd.data_in = malloc(v->edtl))) {
		free(x);
		return -ENOMEM;
	}
	x->cmd.data_in_cap = reading ? v->edtl : 0;
	if (writing && v->edtl && v->param) {
		if (!(x->out_buf = calloc(1, v->edtl))) {
			free(x->cmd.data_in);
			free(x);
			return -ENOMEM;
		}
		memcpy(x->out_buf, v->param, v->param_len < v->edtl ? v->param_len : v->edtl);
		x->cmd.data_out = x->out_buf;
		x->cmd.data_out_len = v->edtl;
	} else if (writing && v->edtl) {
		if (!vf->zeros && !(vf->zeros = calloc(1, IMP_MAX_XFER))) {
			free(x->cmd.data_in);
			free(x);
			return -ENOMEM;
		}
		x->cmd.data_out = vf->zeros;
		x->cmd.data_out_len = v->edtl;
	}
	fl_engine_get_counters(vf->e, &before);
	fl_engine_submit(vf->e, (uint16_t)v->lun, &x->cmd);
	fl_engine_get_counters(vf->e, &after);
	/* A hold is told by the engine's counter, not by waiting for it. */
	bool held = after.held > before.held || after.dropped > before.dropped;
	uint64_t t0 = verify_ms();
	while (!held && !atomic_load(&x->done) && vf->waited_ms < VERIFY_WAIT_TOTAL_MS &&
	       verify_ms() - t0 < VERIFY_WAIT_MS) {
		usleep(1000);
		vf->waited_ms++;
	}
	if (!atomic_load(&x->done) || x->cmd.no_response) {
		/* The engine still owns it (or completes it as aborted at the end). */
		x->next = vf->pending;
		vf->pending = x;
		vf->pending_bytes += x->cmd.data_in_cap + (x->out_buf ? v->edtl : 0);
		return 0;
	}
	*xp = x;
	return 1;
}

/* Frees a replayed command that the engine is done with. */
static void vcmd_free(struct vcmd *x)
{
	if (x) {
		free(x->cmd.data_in);
		free(x->out_buf);
		free(x);
	}
}

/*
 * Whether the scenario's transport rules end v's SCSI Command PDU (close the
 * connection, or drop it): then it has no answer. Asked once per command,
 * in capture order, as the iSCSI front end asks once per PDU received, so
 * the rules' counts run as they would against the host.
 */
static bool pdu_stopped(struct verify *vf, const struct imp_vrec *v)
{
	struct fl_pdu_info pdu = {.kind = FL_PDU_SCSI_CMD,
				  .nexus_id = replay_nexus(v->nexus, v->conn),
				  .lun_id = v->lun < 0 ? 0 : (uint16_t)v->lun,
				  .raw_cdb = v->cdb,
				  .raw_cdb_len = (uint8_t)cdb_len(v->cdb[0]),
				  .rel_port_id = vrel_port(vf, v)};
	struct fl_xport_verdict out;

	fl_engine_pdu(vf->e, &pdu, &out);
	return out.action == FL_XPORT_CLOSE || out.action == FL_XPORT_DROP;
}

/* Replays one kept command and compares its answer; 0 or -ENOMEM. */
/*
 * --keep-data: a read's data-in against the capture's (their FNV-1a hashes;
 * import_data.c); where they differ, the first block that differs from the
 * image (the capture's data placed) is named.
 */
static void cmp_data(struct verify *vf, const struct imp_vrec *v, const struct fl_cdb_info *ci,
		     const uint8_t *r, uint32_t rn)
{
	uint32_t bs = vf->im->luns[v->lun].block_size;
	uint8_t buf[65536];
	char cap[80], rep[80];

	vf->data_cmps++;
	if (r && rn == (uint64_t)ci->nblocks * bs && imp_fnv1a(FL_FNV_START, r, rn) == v->dhash)
		return;
	snprintf(cap, sizeof(cap), "%" PRIu64 " bytes", (uint64_t)ci->nblocks * bs);
	snprintf(rep, sizeof(rep), "%u other bytes", r ? rn : 0);
	for (uint32_t b = 0;
	     r && rn == (uint64_t)ci->nblocks * bs && bs <= sizeof(buf) && b < ci->nblocks; b++)
		if (imp_data_read(vf->im, v->lun, (ci->lba + b) * bs, buf, bs) &&
		    memcmp(buf, r + (size_t)b * bs, bs)) {
			snprintf(rep, sizeof(rep), "other bytes from LBA %" PRIu64, ci->lba + b);
			break;
		}
	differ(vf, v, "data", cap, rep);
}

static int replay(struct verify *vf, const struct imp_vrec *v)
{
	struct fl_sense_data sd, rd;
	struct fl_cdb_info ci;
	struct vcmd *x = NULL;
	char cap[64], rep[64];
	int r = 0;

	fl_cdb_decode(v->cdb, cdb_len(v->cdb[0]), &ci);
	bool writing = (v->flags & 0x20) != 0, reading = (v->flags & 0x40) || (!writing && v->edtl);
	enum vs_reason why = VS_STATUS;
	bool stopped = pdu_stopped(vf, v);
	bool fits = vf->pending_bytes + (reading ? v->edtl : 0) + (v->param ? v->edtl : 0) <=
		    VERIFY_MAX_HELD;
	if (!fits || !answer_reproduced(v, &sd, &why)) {
		why = fits ? why : VS_HELD_MEM;
		vf->skipped++;
		vf->skip_why[why]++;
		if (fits && why == VS_UA29 && !stopped) {
			/* the LUN's own 29h/00 is consumed here, as the host's was */
			r = replay_once(vf, v, reading, writing, &x);
			vcmd_free(x);
			return r < 0 ? r : 0;
		}
		return 0;
	}
	vf->ncmds++;
	for (int i = 0; i <= VERIFY_UA_RETRIES && !stopped; i++) {
		vcmd_free(x);
		r = replay_once(vf, v, reading, writing, &x);
		if (r <= 0 || !is_reset_ua(&x->cmd))
			break;
	}
	if (r < 0)
		return r;
	answer_text(cap, sizeof(cap), v->answered, v->status, v->sense, v->sense_len);
	answer_text(rep, sizeof(rep), r == 1, x ? x->cmd.status : 0, x ? x->cmd.sense : NULL,
		    x ? x->cmd.sense_len : 0);
	if (!v->answered || r != 1) {
		if (v->answered != (r == 1))
			differ(vf, v, "answer", cap, rep);
		vcmd_free(x);
		return 0;
	}
	if (v->status != x->cmd.status) {
		differ(vf, v, "status", cap, rep);
	} else if (v->status == FL_STATUS_CHECK_CONDITION) {
		fl_sense_decode(x->cmd.sense, x->cmd.sense_len, &rd);
		if (rd.key != sd.key || rd.asc != sd.asc || rd.ascq != sd.ascq)
			differ(vf, v, "sense", cap, rep);
	} else if (v->status == FL_STATUS_GOOD) {
		if (length_reproduced(v->cdb, &ci))
			cmp_num(vf, v, "data-in length", v->datain_len, x->cmd.data_in_len);
		cmp_identity(vf, v, x->cmd.data_in, x->cmd.data_in_len);
		if (v->data_cmp)
			cmp_data(vf, v, &ci, x->cmd.data_in, x->cmd.data_in_len);
	}
	vcmd_free(x);
	return 0;
}

/*
 * Marks the classes whose answer faultlun's LUNs give themselves: each
 * ILLEGAL REQUEST class's first command (its CDB, zeros for data-out) goes to
 * the LUNs of base, a scenario with the imported LUNs and no rules, on a nexus
 * of its own (its power-on unit attention taken first); the same sense key,
 * ASC and ASCQ make the class native, and a rule of its own would only be
 * broader than the answer (it matches by opcode and LBA, not by the CDB's
 * other fields). Nothing is marked when base does not load.
 */
void imp_verify_native(struct fl_import *im, json_t *base)
{
	struct fl_engine_opts eo = {.frontend = FL_FE_ISCSI,
				    .store_override = true,
				    .store = FL_STORE_MEMORY,
				    .delays_now = true};
	struct verify vf = {.im = im};
	struct fl_scenario *sc = NULL;
	struct fl_diags d = {0};
	char *text = json_dumps(base, JSON_COMPACT);

	if (!text || fl_scenario_load_string("(imported LUNs)", text, 0, &sc, &d) ||
	    fl_engine_create(sc, &eo, &vf.e))
		goto out;
	vf.sc = sc;
	for (unsigned i = 0; i < im->nclasses; i++) {
		struct imp_class *c = &im->classes[i];
		struct imp_vrec v = {.lun = c->lun,
				     .conn = i,
				     .nexus = IMP_MAX_NEXUS,
				     .portal = -1,
				     .flags = c->flags,
				     .edtl = c->edtl};
		struct fl_sense_data sd;
		struct vcmd *x = NULL;
		int r = 0;

		if (c->kind != IMP_SENSE || c->key != 0x05 || c->implied || c->alua ||
		    c->edtl > IMP_MAX_XFER)
			continue;
		memcpy(v.cdb, c->cdb, sizeof(v.cdb));
		bool writing = (v.flags & 0x20) != 0,
		     reading = (v.flags & 0x40) || (!writing && v.edtl);
		for (int k = 0; k <= VERIFY_UA_RETRIES; k++) {
			vcmd_free(x);
			x = NULL;
			r = replay_once(&vf, &v, reading, writing, &x);
			if (r <= 0 || !is_reset_ua(&x->cmd))
				break;
		}
		if (r == 1 && x->cmd.status == FL_STATUS_CHECK_CONDITION &&
		    fl_sense_decode(x->cmd.sense, x->cmd.sense_len, &sd) !=
			FL_SENSE_FORMAT_UNKNOWN &&
		    sd.key == c->key && sd.asc == c->asc && sd.ascq == c->ascq)
			c->native = true;
		vcmd_free(x);
		if (r < 0)
			break;
	}
out:
	if (vf.e)
		fl_engine_destroy(vf.e);
	while (vf.pending) {
		struct vcmd *x = vf.pending;
		vf.pending = x->next;
		vcmd_free(x);
	}
	free(vf.zeros);
	fl_scenario_free(sc);
	fl_diags_free(&d);
	free(text);
}

/* A reset replayed: done when the engine answers it. */
struct vtmf {
	struct fl_tmf tmf;
	atomic_bool done;
	struct vtmf *next;
};

static void vtmf_done(struct fl_tmf *tmf, enum fl_tmf_resp resp)
{
	(void)resp;
	atomic_store(&((struct vtmf *)tmf)->done, true);
}

/*
 * Replays e: a connection's end loses its I_T nexus (an SPC-2 reservation
 * with it); a reset goes to the engine as the scenario's tmf behaviours say,
 * its answer waited for as a command's (VERIFY_WAIT_MS).
 */
static void replay_event(struct verify *vf, const struct imp_vend *e)
{
	uint64_t nexus = replay_nexus(e->nexus, e->conn);
	struct vtmf *t;

	if (!e->tmf) {
		fl_engine_conn_event(vf->e, FL_CONN_CLOSED, nexus, NULL);
		return;
	}
	if ((e->tmf == ISCSI_TMF_LUN_RESET && e->lun < 0) || !(t = calloc(1, sizeof(*t))))
		return;
	t->tmf.fn = (enum fl_tmf_fn)e->tmf;
	t->tmf.lun_id = e->lun < 0 ? 0 : (uint16_t)e->lun;
	t->tmf.nexus_id = nexus;
	t->tmf.done = vtmf_done;
	t->next = vf->tmfs; /* the engine may answer late: freed after it is gone */
	vf->tmfs = t;
	fl_engine_tmf(vf->e, &t->tmf);
	for (uint64_t t0 = verify_ms();
	     !atomic_load(&t->done) && vf->waited_ms < VERIFY_WAIT_TOTAL_MS &&
	     verify_ms() - t0 < VERIFY_WAIT_MS;
	     vf->waited_ms++)
		usleep(1000);
}

/* Replays the capture's commands against sc (import.h). */
int fl_import_verify(struct fl_import *im, const struct fl_scenario *sc, const char *scenario_file,
		     FILE *out, unsigned *ncmds, unsigned *ndiff)
{
	struct fl_engine_opts eo = {
	    .frontend = FL_FE_ISCSI,
	    .store_override = true,
	    .store = FL_STORE_MEMORY,
	    .scenario_file = scenario_file,
	    .delays_now = true, /* answers are compared, not times (the latency rules) */
	};
	struct verify vf = {.im = im, .sc = sc, .out = out};
	char prefix[96];
	int r;

	*ncmds = *ndiff = 0;
	r = images_copy(&vf, sc, &eo, prefix, sizeof(prefix));
	if (r) {
		fprintf(stderr, "faultlun import: verify: cannot copy the images: %s\n",
			strerror(-r));
		images_remove(&vf);
		return r;
	}
	r = fl_engine_create(sc, &eo, &vf.e);
	if (r) {
		fprintf(stderr,
			"faultlun import: verify: the scenario's LUNs cannot be built: %s\n",
			strerror(-r));
		images_remove(&vf);
		return r;
	}
	qsort(im->vrecs, im->nvrecs, sizeof(*im->vrecs), vrec_cmp);
	for (unsigned i = 0, k = 0; i < im->nvrecs && !r; i++) {
		/* connections ended and resets done before this command */
		for (; k < im->nvends && im->vends[k].after_seq < im->vrecs[i].seq; k++)
			replay_event(&vf, &im->vends[k]);
		r = replay(&vf, &im->vrecs[i]);
	}
	fl_engine_destroy(vf.e); /* completes what it still holds */
	images_remove(&vf);
	while (vf.tmfs) {
		struct vtmf *t = vf.tmfs;
		vf.tmfs = t->next;
		free(t);
	}
	while (vf.pending) {
		struct vcmd *x = vf.pending;
		vf.pending = x->next;
		vcmd_free(x);
	}
	free(vf.zeros);
	if (r) {
		fprintf(stderr, "faultlun import: verify: out of memory\n");
		return r;
	}
	fprintf(out, "verify: %u commands, %u differences", vf.ncmds, vf.ndiff);
	if (im->o.keep_data)
		fprintf(out, " (the data of %u reads compared)", vf.data_cmps);
	if (vf.skipped || im->vrecs_over) {
		const char *sep = "";
		fprintf(out, "; not compared:");
		for (int i = 0; i < VS_NR; i++)
			if (vf.skip_why[i]) {
				fprintf(out, "%s %u %s", sep, vf.skip_why[i], vs_words[i]);
				sep = ",";
			}
		if (im->vrecs_over)
			fprintf(out, "%s %u past the %u commands kept", sep, im->vrecs_over,
				IMP_MAX_VERIFY);
	}
	fputc('\n', out);
	*ncmds = vf.ncmds;
	*ndiff = vf.ndiff;
	return 0;
}
