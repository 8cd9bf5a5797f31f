// SPDX-License-Identifier: MIT
/*
 * check.c - the "check" section: JSON -> struct fl_check (fl_check.h).
 *
 * Every value of the section is read here once, with the value rules of the
 * rest of the scenario (numbers, sizes, sense names), and every default is
 * applied here, so that both runners see the same steps and expectations.
 * Problems are reported as FILE:LINE:COL like any other scenario error.
 */
#include "scenario_internal.h"

#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const op_names[FL_OP_NR + 1] = {
    [FL_OP_READ] = "read",
    [FL_OP_WRITE] = "write",
    [FL_OP_DISCARD] = "discard",
    [FL_OP_FSYNC] = "fsync",
    [FL_OP_SYNC] = "sync",
    [FL_OP_TUR] = "tur",
    [FL_OP_INQUIRY] = "inquiry",
    [FL_OP_SG_RAW] = "sg_raw",
    [FL_OP_CTL] = "ctl",
    [FL_OP_SLEEP] = "sleep",
    [FL_OP_MKFS] = "mkfs",
    [FL_OP_MOUNT] = "mount",
    [FL_OP_UMOUNT] = "umount",
    [FL_OP_WRITE_FILE] = "write_file",
    [FL_OP_READ_FILE] = "read_file",
    [FL_OP_RESCAN] = "rescan",
    [FL_OP_SHELL] = "shell",
    [FL_OP_UNMAP] = "unmap",
    [FL_OP_WRITE_SAME] = "write_same",
    [FL_OP_ABORT_TASK] = "abort_task",
    [FL_OP_LUN_RESET] = "lun_reset",
    [FL_OP_TARGET_RESET] = "target_reset",
    [FL_OP_NR] = NULL,
};

/* TMF response codes (RFC 7143 11.6.1), as a tmf_response expectation names them. */
static const char *const tmf_responses[] = {
    [0] = "function_complete",	  [1] = "task_does_not_exist",	      [2] = "lun_does_not_exist",
    [3] = "task_still_allegiant", [4] = "reassignment_not_supported", [5] = "not_supported",
    [6] = "authorization_failed",
};
#define TMF_RESPONSE_REJECTED 255 /* "Function rejected" */

const char *const fl_eh_names[FL_EH_NR] = {
    [FL_EH_ABORT] = "abort",
    [FL_EH_LUN_RESET] = "lun_reset",
    [FL_EH_TARGET_RESET] = "target_reset",
    [FL_EH_BUS_RESET] = "bus_reset",
    [FL_EH_HOST_RESET] = "host_reset",
    [FL_EH_CONN_ERROR] = "conn_error",
    [FL_EH_SESSION_RESET] = "session_reset",
    [FL_EH_SESSION_RECOVERY_TIMEOUT] = "session_recovery_timeout",
    [FL_EH_OFFLINE] = "offline",
    [FL_EH_IO_ERROR] = "io_error",
};

static const char *const checker_words[] = {"tur", "directio", NULL};
static const char *const no_path_retry_words[] = {"queue", "fail", NULL};
#define KNOB(n)                                                                                    \
	{                                                                                          \
#n, offsetof(struct fl_knobs, n), NULL, false                                      \
	}
const struct fl_knob_desc fl_knob_descs[] = {
    KNOB(timeout_s),
    KNOB(eh_timeout_s),
    KNOB(abort_tmo_s),
    KNOB(lu_reset_tmo_s),
    KNOB(tgt_reset_tmo_s),
    KNOB(recovery_tmo_s),
    KNOB(noop_interval_s),
    KNOB(noop_timeout_s),
    KNOB(scsi_logging_level),
    KNOB(debug_libiscsi_eh),
    KNOB(cmd_time_out_s),
    KNOB(queue_depth),
    KNOB(multipath),
    KNOB(polling_interval_s),
    KNOB(reset_wait_ms),
    {"path_checker", offsetof(struct fl_knobs, path_checker), checker_words, true},
    {"no_path_retry", offsetof(struct fl_knobs, no_path_retry), no_path_retry_words, false},
    KNOB(hung_task_timeout_s),
};
#undef KNOB
const size_t fl_knob_count = sizeof(fl_knob_descs) / sizeof(fl_knob_descs[0]);

/* A knob's value as text: its number or its word. */
bool fl_knob_text(const struct fl_knob_desc *d, const struct fl_knobs *k, char *buf, size_t len)
{
	int v = *(const int *)((const char *)k + d->offset);

	if (v == -1)
		return false;
	if (v >= 0)
		snprintf(buf, len, "%d", v);
	else if (d->words)
		snprintf(buf, len, "%s", d->words[FL_KNOB_WORD_INDEX(v)]);
	else
		return false;
	return true;
}

static const struct {
	const char *name;
	uint8_t status;
} status_names[] = {
    {"GOOD", 0x00},	  {"CHECK_CONDITION", 0x02},	  {"CONDITION_MET", 0x04},
    {"BUSY", 0x08},	  {"RESERVATION_CONFLICT", 0x18}, {"TASK_SET_FULL", 0x28},
    {"ACA_ACTIVE", 0x30}, {"TASK_ABORTED", 0x40},
};

/* The name of an op. */
const char *fl_step_op_name(enum fl_step_op op)
{
	return op < FL_OP_NR ? op_names[op] : "?";
}

/* SCSI pass-through ops: the VM lab sends them through SG_IO and sees their status. */
bool fl_step_op_is_passthrough(enum fl_step_op op)
{
	return op == FL_OP_TUR || op == FL_OP_INQUIRY || op == FL_OP_SG_RAW || op == FL_OP_UNMAP ||
	       op == FL_OP_WRITE_SAME;
}

unsigned fl_step_sgio_timeout_s(const struct fl_step *s)
{
	return s->timeout_s < FL_SGIO_TIMEOUT_MAX_S ? s->timeout_s : FL_SGIO_TIMEOUT_MAX_S;
}

/* Task-management steps. */
bool fl_step_op_is_tmf(enum fl_step_op op)
{
	return op == FL_OP_ABORT_TASK || op == FL_OP_LUN_RESET || op == FL_OP_TARGET_RESET;
}

/* Ops the VM lab's agent (vm/agent/workload.c) carries out. */
bool fl_step_op_in_vm(enum fl_step_op op)
{
	return op < FL_OP_NR && op != FL_OP_UNMAP && op != FL_OP_WRITE_SAME &&
	       !fl_step_op_is_tmf(op);
}

/* The name of a TMF response code, or NULL. */
const char *fl_tmf_response_name(uint8_t resp)
{
	if (resp == TMF_RESPONSE_REJECTED)
		return "rejected";
	return resp < sizeof(tmf_responses) / sizeof(tmf_responses[0]) ? tmf_responses[resp] : NULL;
}

/* The name of a SAM-5 status byte, or NULL. */
const char *fl_status_name(uint8_t status)
{
	for (size_t i = 0; i < sizeof(status_names) / sizeof(status_names[0]); i++)
		if (status_names[i].status == status)
			return status_names[i].name;
	return NULL;
}

/* Parses a status name, any case. */
int fl_status_by_name(const char *name, uint8_t *status)
{
	for (size_t i = 0; i < sizeof(status_names) / sizeof(status_names[0]); i++)
		if (!strcasecmp(status_names[i].name, name)) {
			*status = status_names[i].status;
			return 0;
		}
	return -ENOENT;
}

/* Sense key name of the one table. */
const char *fl_sense_key_name(uint8_t key)
{
	return sense_key_name_of(key);
}

/* ASC/ASCQ name of the one table. */
const char *fl_sense_asc_name(uint8_t asc, uint8_t ascq)
{
	return sense_asc_name_of(asc, ascq);
}

/* "KEY/NAME (AA/QQ)". */
void fl_sense_text(uint8_t key, uint8_t asc, uint8_t ascq, char *buf, size_t len)
{
	const char *k = sense_key_name_of(key), *a = sense_asc_name_of(asc, ascq);
	char kb[8];

	if (!k) {
		snprintf(kb, sizeof(kb), "0x%x", key);
		k = kb;
	}
	if (a)
		snprintf(buf, len, "%s/%s (%02X/%02X)", k, a, asc, ascq);
	else
		snprintf(buf, len, "%s/%02X/%02X", k, asc, ascq);
}

/* The check section of a scenario, or NULL. */
const struct fl_check *fl_scenario_check(const struct fl_scenario *sc)
{
	return sc->check;
}

/* True when the scenario has a LUN with this number. */
static bool lun_exists(const struct fl_scenario *sc, uint64_t lun)
{
	for (size_t i = 0; i < sc->nluns; i++)
		if (sc->luns[i].id == lun)
			return true;
	return false;
}

/* Parses a LUN key that must name a LUN of the scenario. */
static bool plun(struct pctx *c, const char *path, json_t *v, int *out)
{
	uint64_t n;
	char q[80];

	if (!pnum(c, path, v, 255, &n))
		return false;
	if (!lun_exists(c->sc, n)) {
		perr(c, path, false, "\"lun\": the scenario has no LUN %s",
		     pquote(v, q, sizeof(q)));
		return false;
	}
	*out = (int)n;
	return true;
}

/* Parses a number into a uint32_t within [lo, hi]. */
static bool pu32(struct pctx *c, const char *path, json_t *v, uint32_t lo, uint32_t hi,
		 uint32_t *out)
{
	uint64_t n;
	char q[80];

	if (!pnum(c, path, v, hi, &n))
		return false;
	if (n < lo) {
		perr(c, path, false, "%s is below the least allowed value %u",
		     pquote(v, q, sizeof(q)), lo);
		return false;
	}
	*out = (uint32_t)n;
	return true;
}

/* Parses a byte count: an integer or a size string ("4KiB"), at most max. */
static bool pbytes(struct pctx *c, const char *path, json_t *v, uint64_t max, uint64_t *out)
{
	bool in_blocks = false;
	char q[80];

	if (!psize(c, path, v, out, &in_blocks))
		return false;
	if (in_blocks) {
		perr(c, path, false, "%s: give bytes here, not blocks", pquote(v, q, sizeof(q)));
		return false;
	}
	if (*out > max) {
		perr(c, path, false, "%s is too large (at most %llu bytes)",
		     pquote(v, q, sizeof(q)), (unsigned long long)max);
		return false;
	}
	return true;
}

/* Parses a CDB in hex: "28 00 ..", "28:00:..", or "2800.."; 6 to 16 bytes. */
static bool pcdb(struct pctx *c, const char *path, json_t *v, struct fl_step *s)
{
	const char *p;
	char q[80];
	size_t n = 0;

	if (!json_is_string(v))
		goto bad;
	p = json_string_value(v);
	while (*p) {
		size_t digits = 0;
		unsigned val = 0;

		while (*p == ' ' || *p == ':' || *p == '\t')
			p++;
		if (!*p)
			break;
		/* a byte: one or two hex digits ended by a separator, or two digits */
		while (digits < 2 && isxdigit((unsigned char)*p)) {
			val = val * 16 + (unsigned)(isdigit((unsigned char)*p)
							? *p - '0'
							: (tolower((unsigned char)*p) - 'a' + 10));
			digits++;
			p++;
		}
		if (!digits)
			goto bad;
		if (digits == 1 && *p && *p != ' ' && *p != ':' && *p != '\t')
			goto bad;
		if (n == FL_STEP_CDB_MAX) {
			perr(c, path, false, "\"cdb\": %s has more than %d bytes",
			     pquote(v, q, sizeof(q)), FL_STEP_CDB_MAX);
			return false;
		}
		s->cdb[n++] = (uint8_t)val;
	}
	if (n < 6) {
		perr(c, path, false, "\"cdb\": %s has %zu bytes; a CDB has 6 to %d",
		     pquote(v, q, sizeof(q)), n, FL_STEP_CDB_MAX);
		return false;
	}
	s->cdb_len = (uint8_t)n;
	return true;
bad:
	perr(c, path, false,
	     "\"cdb\": expected hex bytes such as \"28 00 00 00 10 00 00 00 08 00\", got %s",
	     pquote(v, q, sizeof(q)));
	return false;
}

/* Looks an op name up; -1 when unknown. */
static int op_by_name(const char *s)
{
	for (int i = 0; i < FL_OP_NR; i++)
		if (!strcmp(op_names[i], s))
			return i;
	return -1;
}

/* Keys each op takes besides the common ones (op, lun, timeout_s, repeat, background). */
static const char *const *op_keys(enum fl_step_op op)
{
	static const char *const rw[] = {"lba", "blocks", "direct", "pattern", "stamp", NULL};
	static const char *const rd[] = {"lba", "blocks", "direct", "stamp", NULL};
	static const char *const range[] = {"lba", "blocks", NULL};
	static const char *const same[] = {"lba", "blocks", "unmap", "pattern", NULL};
	static const char *const path[] = {"path", NULL};
	static const char *const none[] = {NULL};
	static const char *const raw[] = {"cdb", "size", "data", "pattern", NULL};
	static const char *const ctl[] = {"args", NULL};
	static const char *const sleep[] = {"ms", NULL};
	static const char *const fs[] = {"fs", NULL};
	static const char *const wf[] = {"path", "size", NULL};
	static const char *const sh[] = {"command", NULL};

	switch (op) {
	case FL_OP_READ:
		return rd;
	case FL_OP_WRITE:
		return rw;
	case FL_OP_DISCARD:
	case FL_OP_UNMAP:
		return range;
	case FL_OP_WRITE_SAME:
		return same;
	case FL_OP_FSYNC:
	case FL_OP_READ_FILE:
		return path;
	case FL_OP_SG_RAW:
		return raw;
	case FL_OP_CTL:
		return ctl;
	case FL_OP_SLEEP:
		return sleep;
	case FL_OP_MKFS:
	case FL_OP_MOUNT:
		return fs;
	case FL_OP_WRITE_FILE:
		return wf;
	case FL_OP_SHELL:
		return sh;
	default:
		return none;
	}
}

/* The index in the scenario's ports of a port's "id" or relative port number, or -1. */
static int port_index(const struct fl_scenario *sc, json_t *v)
{
	for (size_t i = 0; i < sc->nports; i++) {
		const struct sc_port *p = &sc->ports[i];

		if ((json_is_string(v) && p->name && !strcmp(p->name, json_string_value(v))) ||
		    (json_is_integer(v) && json_integer_value(v) == p->rel_port_id))
			return (int)i;
	}
	return -1;
}

/* The error for a "port" that names no port of the scenario, listing the ports there are. */
static void port_unknown(struct pctx *c, const char *path, json_t *v)
{
	const struct fl_scenario *sc = c->sc;
	char q[80], names[256] = "";
	size_t len = 0;

	for (size_t i = 0; i < sc->nports && len < sizeof(names); i++)
		len += (size_t)snprintf(names + len, sizeof(names) - len, "%s\"%s\" (%u)",
					i ? ", " : "", sc->ports[i].name ? sc->ports[i].name : "?",
					sc->ports[i].rel_port_id);
	if (!sc->nports)
		perr(c, path, false,
		     "\"port\": %s names no port: the scenario has no \"ports\" (its one portal "
		     "is the step's without \"port\")",
		     pquote(v, q, sizeof(q)));
	else
		perr(c, path, false,
		     "\"port\": %s is not a port of the scenario (its ports, by \"id\" or relative "
		     "port: %s)",
		     pquote(v, q, sizeof(q)), names);
}

/*
 * Parses a step's "port": a port's "id" or its relative port number, into
 * its index in the scenario's ports. An unknown one is an error that lists
 * the ports there are.
 */
static bool pstep_port(struct pctx *c, const char *path, json_t *v, int *out)
{
	int i = port_index(c->sc, v);

	if (i < 0) {
		port_unknown(c, path, v);
		return false;
	}
	*out = i;
	return true;
}

/* A workload step's defaults, before its keys are read. */
static void step_defaults(struct fl_step *s)
{
	s->lun = -1;
	s->port = -1;
	s->timeout_s = FL_STEP_TIMEOUT_S;
	s->repeat = 1;
	s->blocks = 1;
	s->direct = true;
	s->pattern = FL_STEP_PATTERN;
	s->size = FL_STEP_FILE_SIZE;
	s->ms = FL_STEP_SLEEP_MS;
}

/* The op of a workload step, or -1 (said) when it has none or an unknown one. */
static int step_op(struct pctx *c, const char *path, json_t *v)
{
	json_t *e = json_object_get(v, "op");
	int op = json_is_string(e) ? op_by_name(json_string_value(e)) : -1;
	char sub[512], q[80];

	if (op >= 0)
		return op;
	const char *near = json_is_string(e) ? closest_word(json_string_value(e), op_names,
							    FL_OP_NR, sizeof(op_names[0]))
					     : NULL;

	if (near)
		perr(c, SUBP(sub, path, "op"), false, "unknown op %s (did you mean \"%s\"?)",
		     pquote(e, q, sizeof(q)), near);
	else
		perr(c, e ? SUBP(sub, path, "op") : path, false,
		     "workload step needs \"op\" (%s, %s, %s, %s, %s, %s, ...), got %s",
		     op_names[0], op_names[1], op_names[3], op_names[5], op_names[7], op_names[8],
		     pquote(e, q, sizeof(q)));
	return -1;
}

/* Parses an sg_raw step's CDB and its data-in size or data-out length. */
static void step_sg_raw(struct pctx *c, const char *path, json_t *v, struct fl_step *s)
{
	char sub[512];
	json_t *e;
	uint64_t n;

	if (!(e = json_object_get(v, "cdb")))
		perr(c, path, false, "sg_raw needs \"cdb\"");
	else
		pcdb(c, SUBP(sub, path, "cdb"), e, s);
	if ((e = json_object_get(v, "size")) &&
	    pbytes(c, SUBP(sub, path, "size"), e, 16u << 20, &n))
		s->data_in = (uint32_t)n;
	if ((e = json_object_get(v, "data")) &&
	    pbytes(c, SUBP(sub, path, "data"), e, 16u << 20, &n))
		s->data_out = (uint32_t)n;
	if (s->data_in && s->data_out)
		perr(c, path, false,
		     "sg_raw: give \"size\" (data-in) or \"data\" (data-out), not both");
}

/* Parses a step's file path (relative to the mount point) and, for mkfs and mount, its fs. */
static void step_path_fs(struct pctx *c, const char *path, json_t *v, struct fl_step *s)
{
	char sub[512], q[80];
	json_t *e;

	if ((e = json_object_get(v, "path"))) {
		if (pstr(c, SUBP(sub, path, "path"), e, 255, &s->path) &&
		    (!s->path[0] || s->path[0] == '/' || strstr(s->path, "..")))
			perr(c, sub, false,
			     "\"path\": %s must be relative to the mount point, without \"..\"",
			     pquote(e, q, sizeof(q)));
	} else if (s->op == FL_OP_WRITE_FILE || s->op == FL_OP_READ_FILE) {
		s->path = xstrdup("file");
	}
	if (s->op == FL_OP_MKFS || s->op == FL_OP_MOUNT) {
		static const char *const fss[] = {"ext4", "ext3", "ext2", NULL};

		if ((e = json_object_get(v, "fs"))) {
			size_t k = 0;

			if (pstr(c, SUBP(sub, path, "fs"), e, 16, &s->fs)) {
				for (k = 0; fss[k] && strcmp(fss[k], s->fs); k++)
					;
				if (!fss[k])
					perr(c, sub, false,
					     "\"fs\": %s is not one the VM lab has (ext4, ext3, "
					     "ext2)",
					     pquote(e, q, sizeof(q)));
			}
		} else {
			s->fs = xstrdup("ext4");
		}
	}
}

/* Parses a ctl step's "args": the words after the socket in `faultlun ctl SOCKET ...`. */
static void step_ctl(struct pctx *c, const char *path, json_t *v, struct fl_step *s)
{
	json_t *e = json_object_get(v, "args"), *a;
	char sub[512], q[80];
	size_t i;

	if (!json_is_array(e) || !json_array_size(e) || json_array_size(e) > FL_CTL_ARGS_MAX) {
		perr(c, e ? SUBP(sub, path, "args") : path, false,
		     "ctl needs \"args\": a list of 1 to %d strings (the words after the "
		     "socket in `faultlun ctl SOCKET ...`), got %s",
		     FL_CTL_ARGS_MAX, pquote(e, q, sizeof(q)));
		return;
	}
	s->args = calloc(json_array_size(e), sizeof(*s->args));
	json_array_foreach(e, i, a)
	{
		snprintf(sub, sizeof(sub), "%s/args/%zu", path, i);
		if (s->args && pstr(c, sub, a, 4096, &s->args[s->nargs]))
			s->nargs++;
	}
}

/* Parses one workload step. */
static void parse_step(struct pctx *c, const char *path, json_t *v, struct fl_step *s)
{
	static const char *const common[] = {"op",     "lun",	     "timeout_s",
					     "repeat", "background", "port"};
	const char *allowed[24];
	const char *const *extra;
	size_t na = 0;
	char sub[512], q[80];
	json_t *e;
	uint64_t n;
	int op;

	step_defaults(s);
	if (!json_is_object(v)) {
		perr(c, path, false, "each workload step must be an object, got %s",
		     pquote(v, q, sizeof(q)));
		return;
	}
	if ((op = step_op(c, path, v)) < 0)
		return;
	s->op = (enum fl_step_op)op;
	for (size_t i = 0; i < sizeof(common) / sizeof(common[0]); i++)
		allowed[na++] = common[i];
	for (extra = op_keys(s->op); *extra; extra++)
		allowed[na++] = *extra;
	allowed[na] = NULL;
	pkeys(c, path, v, fl_step_op_name(s->op), allowed);

	if ((e = json_object_get(v, "lun")))
		plun(c, SUBP(sub, path, "lun"), e, &s->lun);
	if ((e = json_object_get(v, "port")))
		pstep_port(c, SUBP(sub, path, "port"), e, &s->port);
	if ((e = json_object_get(v, "timeout_s")))
		pu32(c, SUBP(sub, path, "timeout_s"), e, 1, 86400, &s->timeout_s);
	if ((e = json_object_get(v, "repeat")))
		pu32(c, SUBP(sub, path, "repeat"), e, 1, 1000000, &s->repeat);
	if ((e = json_object_get(v, "background")))
		pbool(c, SUBP(sub, path, "background"), e, &s->background);
	if ((e = json_object_get(v, "lba")))
		pnum(c, SUBP(sub, path, "lba"), e, UINT64_MAX, &s->lba);
	if ((e = json_object_get(v, "blocks")) &&
	    pnum(c, SUBP(sub, path, "blocks"), e, 1u << 24, &n)) {
		if (!n)
			perr(c, sub, false, "\"blocks\": at least 1");
		s->blocks = n;
	}
	if ((e = json_object_get(v, "direct")))
		pbool(c, SUBP(sub, path, "direct"), e, &s->direct);
	if ((e = json_object_get(v, "stamp")))
		pbool(c, SUBP(sub, path, "stamp"), e, &s->stamp);
	if (s->stamp && json_object_get(v, "pattern"))
		perr(c, SUBP(sub, path, "pattern"), true,
		     "\"pattern\" and \"stamp\": a stamped write's blocks describe themselves");
	if (s->op == FL_OP_WRITE_SAME) {
		/* zeros by default: a block of zeros with UNMAP is what the target may unmap */
		s->pattern = 0;
		s->unmap = true;
		if ((e = json_object_get(v, "unmap")))
			pbool(c, SUBP(sub, path, "unmap"), e, &s->unmap);
	}
	if ((e = json_object_get(v, "pattern")) && pnum(c, SUBP(sub, path, "pattern"), e, 255, &n))
		s->pattern = (uint8_t)n;
	if (s->op == FL_OP_SG_RAW)
		step_sg_raw(c, path, v, s);
	if (s->op == FL_OP_WRITE_FILE && (e = json_object_get(v, "size")))
		pbytes(c, SUBP(sub, path, "size"), e, 1ull << 40, &s->size);
	step_path_fs(c, path, v, s);
	if (s->op == FL_OP_SHELL) {
		if ((e = json_object_get(v, "command")))
			pstr(c, SUBP(sub, path, "command"), e, 4096, &s->command);
		else
			s->command = xstrdup("true");
	}
	if ((e = json_object_get(v, "ms")))
		pu32(c, SUBP(sub, path, "ms"), e, 0, 86400000, &s->ms);
	if (s->op == FL_OP_CTL)
		step_ctl(c, path, v, s);
}

/* Parses an errno name or a list of them. */
static void perrnos(struct pctx *c, const char *path, json_t *v, struct fl_expect *x)
{
	json_t *one[1] = {v}, *w;
	size_t n = json_is_array(v) ? json_array_size(v) : 1;
	char q[80], sub[512];

	if (!n || (!json_is_array(v) && !json_is_string(v))) {
		perr(c, path, false,
		     "\"errno\": expected a name (\"OK\", \"EIO\", ...) or a list of "
		     "names, got %s",
		     pquote(v, q, sizeof(q)));
		return;
	}
	x->errnos = calloc(n, sizeof(*x->errnos));
	for (size_t i = 0; i < n && x->errnos; i++) {
		bool ok;
		const char *s;

		w = json_is_array(v) ? json_array_get(v, i) : one[0];
		snprintf(sub, sizeof(sub), json_is_array(v) ? "%s/%zu" : "%s", path, i);
		s = json_string_value(w);
		ok = s && (!strcmp(s, "OK") || !strcmp(s, "TIMEOUT") || !strcmp(s, "CRASHED") ||
			   (s[0] == 'E' && s[1]));
		for (const char *p = s ? s + 1 : ""; ok && *p; p++)
			ok = isupper((unsigned char)*p) || isdigit((unsigned char)*p);
		if (!ok) {
			perr(c, sub, false,
			     "\"errno\": %s is not an errno name (\"OK\", \"TIMEOUT\", \"EIO\", "
			     "\"ENOSPC\", ...)",
			     pquote(w, q, sizeof(q)));
			continue;
		}
		x->errnos[x->nerrnos++] = xstrdup(s);
	}
}

/* Parses an expectation's "sense": "KEY", "KEY/ASC_NAME" or "KEY/AA/QQ". */
static void pexpect_sense(struct pctx *c, const char *path, json_t *v, struct fl_expect *x)
{
	char q[80];

	if (json_is_string(v) && !strchr(json_string_value(v), '/')) {
		const char *s = json_string_value(v);

		if (!sense_key_by_name(s, &x->key)) {
			x->sense_any_asc = true;
			x->kinds |= FL_EX_SENSE;
			return;
		}
		const char *near = closest_word(s, &sense_key_names[0].name, sense_key_count,
						sizeof(sense_key_names[0]));
		perr(c, path, false, "unknown sense key %s%s%s%s", pquote(v, q, sizeof(q)),
		     near ? " (did you mean \"" : "", near ? near : "", near ? "\"?)" : "");
		return;
	}
	if (psense(c, path, v, &x->key, &x->asc, &x->ascq))
		x->kinds |= FL_EX_SENSE;
}

/* Parses an expectation's "tmf_response": a response name (RFC 7143 11.6.1). */
static void pexpect_tmf_response(struct pctx *c, const char *path, json_t *v, struct fl_expect *x)
{
	const char *s = json_string_value(v);
	char q[80];

	for (unsigned r = 0; s && r < 256; r++) {
		const char *n = fl_tmf_response_name((uint8_t)r);

		if (n && !strcmp(n, s)) {
			x->tmf_response = (uint8_t)r;
			x->kinds |= FL_EX_TMF_RESPONSE;
			return;
		}
	}
	perr(c, path, false,
	     "\"tmf_response\": unknown response %s (function_complete, task_does_not_exist, "
	     "lun_does_not_exist, task_still_allegiant, reassignment_not_supported, "
	     "not_supported, authorization_failed, rejected)",
	     pquote(v, q, sizeof(q)));
}

/*
 * A trace expectation's "port": on a scenario with "ports" the trace names
 * every command's relative target port, so a port's "id" or number is
 * matched as that number (stored here; false: an error, or stored already);
 * without "ports" the trace names none, and the member never matches.
 */
static bool ptrace_port(struct pctx *c, const char *path, json_t *m, struct fl_expect *x)
{
	char q[80];
	int i;

	if (!c->sc->nports) {
		pwarn(c, path,
		      "trace member \"port\": %s never matches: the trace names a command's target "
		      "port only on a scenario with \"ports\"",
		      pquote(m, q, sizeof(q)));
		return true;
	}
	i = port_index(c->sc, m);
	if (i < 0) {
		port_unknown(c, path, m);
		return false;
	}
	if (x->trace) {
		json_t *num = json_integer(c->sc->ports[i].rel_port_id);

		x->trace[x->ntrace].key = xstrdup("port");
		x->trace[x->ntrace++].json = json_dumps(num, JSON_COMPACT | JSON_ENCODE_ANY);
		json_decref(num);
	}
	return false;
}

/* Parses a trace expectation: members to match, min/max bounds. */
static void pexpect_trace(struct pctx *c, const char *path, json_t *v, struct fl_expect *x)
{
	const char *k;
	json_t *m;
	char q[80], sub[512];
	uint64_t n;

	if (!json_is_object(v) || !json_object_size(v)) {
		perr(c, path, false,
		     "\"trace\": expected an object of event members ({\"event\": \"inject\", "
		     "\"rule\": ...}), got %s",
		     pquote(v, q, sizeof(q)));
		return;
	}
	x->kinds |= FL_EX_TRACE;
	x->trace = calloc(json_object_size(v), sizeof(*x->trace));
	json_object_foreach(v, k, m)
	{
		snprintf(sub, sizeof(sub), "%s/%s", path, k);
		if (!strcmp(k, "min") || !strcmp(k, "max")) {
			if (!pnum(c, sub, m, UINT32_MAX, &n))
				continue;
			if (k[1] == 'i') {
				x->has_count_min = true;
				x->count_min = n;
			} else {
				x->has_count_max = true;
				x->count_max = n;
			}
			continue;
		}
		if (!json_is_string(m) && !json_is_number(m) && !json_is_boolean(m) &&
		    !json_is_null(m)) {
			perr(c, sub, false,
			     "trace member \"%s\": expected a string, number or "
			     "boolean, got %s",
			     k, pquote(m, q, sizeof(q)));
			continue;
		}
		if (!strcmp(k, "port") && !ptrace_port(c, sub, m, x))
			continue;
		if (!x->trace)
			continue;
		x->trace[x->ntrace].key = xstrdup(k);
		x->trace[x->ntrace++].json = json_dumps(m, JSON_COMPACT | JSON_ENCODE_ANY);
	}
}

/* Parses "count" or "min" / "max" of a kernel_log or path expectation. */
static void pcount(struct pctx *c, const char *path, json_t *v, struct fl_expect *x)
{
	json_t *cnt = json_object_get(v, "count"), *e;
	char sub[512];
	uint64_t n;

	if (cnt && (json_object_get(v, "min") || json_object_get(v, "max")))
		perr(c, path, false, "\"count\" is exact: give it or \"min\"/\"max\"");
	if (cnt && pnum(c, SUBP(sub, path, "count"), cnt, UINT32_MAX, &n)) {
		x->has_count_min = x->has_count_max = true;
		x->count_min = x->count_max = n;
	}
	if ((e = json_object_get(v, "min")) &&
	    pnum(c, SUBP(sub, path, "min"), e, UINT32_MAX, &x->count_min))
		x->has_count_min = true;
	if ((e = json_object_get(v, "max")) &&
	    pnum(c, SUBP(sub, path, "max"), e, UINT32_MAX, &x->count_max))
		x->has_count_max = true;
}

/*
 * An estimate of how many nodes a POSIX ERE compiles to once its repetitions
 * are expanded, saturated at limit + 1. glibc's regcomp copies the repeated
 * element for "+" and for each count of an interval, so stacked or nested
 * repetitions ("a+++...", "((a{99}){99}){99}") grow exponentially and
 * exhaust memory before regcomp returns. POSIX.1-2017 XBD 9.4.6 leaves
 * adjacent duplication symbols undefined anyway.
 */
/* Bound of ere_size for a kernel_log regex: real ones need a few hundred. */
#define KERNEL_LOG_MAX_NODES 10000

static unsigned long ere_size(const char *re, unsigned long limit)
{
	enum { MAX_DEPTH = 64 };
	unsigned long sum[MAX_DEPTH], last[MAX_DEPTH];
	int d = 0;

	sum[0] = last[0] = 0;
	for (const char *p = re; *p; p++) {
		unsigned long atom = 1, factor = 0;

		if (*p == '(') {
			if (++d == MAX_DEPTH)
				return limit + 1;
			sum[d] = last[d] = 0;
			continue;
		} else if (*p == ')' && d > 0) {
			atom = sum[d] + last[d] + 1;
			d--;
		} else if (*p == '|') {
			sum[d] += last[d];
			last[d] = 0;
			continue;
		} else if (*p == '+') {
			factor = 2;
		} else if (*p == '*' || *p == '?') {
			factor = 1;
		} else if (*p == '{') {
			char *end;
			unsigned long m = strtoul(p + 1, &end, 10), n = m;

			if (*end == ',')
				n = isdigit((unsigned char)end[1]) ? strtoul(end + 1, &end, 10)
								   : m + 1;
			factor = n > m ? n : m;
			factor = factor == 0 ? 1 : factor > limit ? limit + 1 : factor;
			p = end + strcspn(end, "}");
			if (!*p)
				break;
		} else if (*p == '\\' && p[1]) {
			p++;
		} else if (*p == '[') {
			p++;
			p += (*p == '^');
			p += (*p == ']');
			while (*p && *p != ']') {
				if (*p == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
					const char *e = strchr(p + 2, ']');

					p = e ? e : p + strlen(p) - 1;
				}
				p++;
			}
			if (!*p)
				break;
		}
		if (factor) {
			last[d] = last[d] * factor + 1;
		} else {
			sum[d] += last[d];
			last[d] = atom;
		}
		if (sum[d] > limit || last[d] > limit)
			return limit + 1;
	}
	return sum[d] + last[d];
}

/* See fl_check.h. */
const char *fl_check_path_name(enum fl_check_path p)
{
	return p == FL_PATH_ISCSI  ? "iscsi"
	       : p == FL_PATH_TCMU ? "tcmu"
	       : p == FL_PATH_LIO  ? "lio"
				   : NULL;
}

/* See fl_check.h. */
enum fl_check_path fl_check_path_by_name(const char *name)
{
	static const enum fl_check_path all[] = {FL_PATH_ISCSI, FL_PATH_TCMU, FL_PATH_LIO};

	for (size_t i = 0; name && i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(name, fl_check_path_name(all[i])))
			return all[i];
	return 0;
}

/* Parses an expectation's "vm_path" scope: a path's name or a non-empty list of them. */
static void pvm_paths(struct pctx *c, const char *path, json_t *v, unsigned *out)
{
	char sub[512], q[80];
	size_t i;
	json_t *w;

	if (json_is_string(v)) {
		if (!(*out = fl_check_path_by_name(json_string_value(v))))
			perr(c, path, false,
			     "\"vm_path\": unknown path %s (expected \"iscsi\", \"tcmu\" or "
			     "\"lio\", or a list of them)",
			     pquote(v, q, sizeof(q)));
		return;
	}
	if (!json_is_array(v) || !json_array_size(v)) {
		perr(c, path, false,
		     "\"vm_path\": expected a path (\"iscsi\", \"tcmu\", \"lio\") or a non-empty "
		     "list of them, got %s",
		     pquote(v, q, sizeof(q)));
		return;
	}
	json_array_foreach(v, i, w)
	{
		enum fl_check_path p = fl_check_path_by_name(json_string_value(w));

		snprintf(sub, sizeof(sub), "%s/%zu", path, i);
		if (!p)
			perr(c, sub, false,
			     "unknown path %s (expected \"iscsi\", \"tcmu\" or \"lio\")",
			     pquote(w, q, sizeof(q)));
		*out |= p;
	}
}

/* Parses an expectation's scope: "why", "runner", "kernel" and "vm_path". */
static void expect_scope(struct pctx *c, const char *path, json_t *v, struct fl_expect *x)
{
	char sub[512], q[80];
	json_t *e;

	if ((e = json_object_get(v, "why")) && !json_is_string(e))
		perr(c, SUBP(sub, path, "why"), false, "\"why\": expected a string, got %s",
		     pquote(e, q, sizeof(q)));
	if ((e = json_object_get(v, "runner"))) {
		const char *r = json_string_value(e);

		if (r && !strcmp(r, "vm"))
			x->runners = FL_RUNNER_VM;
		else if (r && !strcmp(r, "libiscsi"))
			x->runners = FL_RUNNER_LIBISCSI;
		else
			perr(c, SUBP(sub, path, "runner"), false,
			     "unknown runner %s (expected \"vm\" or \"libiscsi\")",
			     pquote(e, q, sizeof(q)));
	}
	if ((e = json_object_get(v, "kernel")) &&
	    pstr(c, SUBP(sub, path, "kernel"), e, 64, &x->kernel) &&
	    fl_kernel_in_range(x->kernel, "0") < 0)
		perr(c, sub, false,
		     "\"kernel\": %s is not a kernel range (e.g. \">=6.12\", \"<6.12\", "
		     "\"6.1\", \">=6.1,<6.12\")",
		     pquote(e, q, sizeof(q)));
	if ((e = json_object_get(v, "vm_path")))
		pvm_paths(c, SUBP(sub, path, "vm_path"), e, &x->vm_paths);
}

/* Parses the checks of an expectation about one step ("step" given). */
static void expect_step(struct pctx *c, const char *path, json_t *v, struct fl_expect *x,
			size_t nsteps, int nwhole)
{
	char sub[512], q[80];
	json_t *e = json_object_get(v, "step");
	uint64_t n;

	if (pnum(c, SUBP(sub, path, "step"), e, UINT32_MAX, &n)) {
		if (n >= nsteps)
			perr(c, sub, false, "\"step\": %s names no step (the workload has %zu)",
			     pquote(e, q, sizeof(q)), nsteps);
		x->step = (int)(n < nsteps ? n : 0);
	}
	if (nwhole)
		perr(c, path, false,
		     "an entry with \"step\" is about that step: kernel_log, eh, "
		     "device_state, max_stall_ms, trace, path and dh_state go in entries "
		     "of their own");
	if ((e = json_object_get(v, "errno"))) {
		perrnos(c, SUBP(sub, path, "errno"), e, x);
		x->kinds |= FL_EX_ERRNO;
	}
	if ((e = json_object_get(v, "status"))) {
		if (!json_is_string(e) || fl_status_by_name(json_string_value(e), &x->status))
			perr(c, SUBP(sub, path, "status"), false,
			     "\"status\": unknown status %s (GOOD, CHECK_CONDITION, "
			     "CONDITION_MET, BUSY, RESERVATION_CONFLICT, TASK_SET_FULL, "
			     "ACA_ACTIVE, TASK_ABORTED)",
			     pquote(e, q, sizeof(q)));
		else
			x->kinds |= FL_EX_STATUS;
	}
	if ((e = json_object_get(v, "sense")))
		pexpect_sense(c, SUBP(sub, path, "sense"), e, x);
	if ((e = json_object_get(v, "ua")) &&
	    pascq(c, SUBP(sub, path, "ua"), e, &x->ua_asc, &x->ua_ascq))
		x->kinds |= FL_EX_UA;
	if ((e = json_object_get(v, "tmf_response")))
		pexpect_tmf_response(c, SUBP(sub, path, "tmf_response"), e, x);
	if ((e = json_object_get(v, "within_ms")) &&
	    pnum(c, SUBP(sub, path, "within_ms"), e, UINT32_MAX, &x->within_ms))
		x->kinds |= FL_EX_WITHIN;
	if ((e = json_object_get(v, "min_ms")) &&
	    pnum(c, SUBP(sub, path, "min_ms"), e, UINT32_MAX, &x->min_ms))
		x->kinds |= FL_EX_MIN_MS;
	if (!x->kinds && !json_object_get(v, "errno") && !json_object_get(v, "status") &&
	    !json_object_get(v, "sense") && !json_object_get(v, "within_ms") &&
	    !json_object_get(v, "min_ms") && !json_object_get(v, "ua") &&
	    !json_object_get(v, "tmf_response"))
		x->kinds = FL_EX_RAN;
	if ((e = json_object_get(v, "count")) || (e = json_object_get(v, "min")) ||
	    (e = json_object_get(v, "max")) || (e = json_object_get(v, "lun")))
		perr(c, path, false,
		     "\"count\", \"min\", \"max\" and \"lun\" belong to whole-run "
		     "expectations, not to a step's");
}

/* Parses a kernel_log expectation: a bounded POSIX extended regular expression. */
static void expect_kernel_log(struct pctx *c, const char *path, json_t *v, json_t *e,
			      struct fl_expect *x)
{
	char sub[512], q[80];
	regex_t re;

	if (pstr(c, SUBP(sub, path, "kernel_log"), e, 1024, &x->kernel_log)) {
		int r = 0;

		if (ere_size(x->kernel_log, KERNEL_LOG_MAX_NODES) > KERNEL_LOG_MAX_NODES)
			perr(c, sub, false,
			     "\"kernel_log\": %s repeats too much (stacked or "
			     "nested repetitions expand past %d elements)",
			     pquote(e, q, sizeof(q)), KERNEL_LOG_MAX_NODES);
		else if ((r = regcomp(&re, x->kernel_log, REG_EXTENDED | REG_NOSUB)) == 0)
			regfree(&re);
		if (r) {
			char msg[128];

			regerror(r, &re, msg, sizeof(msg));
			perr(c, sub, false,
			     "\"kernel_log\": %s is not a POSIX extended "
			     "regular expression: %s",
			     pquote(e, q, sizeof(q)), msg);
		}
		x->kinds |= FL_EX_KERNEL_LOG;
	}
	pcount(c, path, v, x);
}

/* Parses an "eh" expectation: the list of error-handler steps the kernel takes. */
static void expect_eh(struct pctx *c, const char *path, json_t *e, struct fl_expect *x)
{
	char sub[512], q[80];
	size_t i;
	json_t *w;

	if (!json_is_array(e)) {
		perr(c, SUBP(sub, path, "eh"), false,
		     "\"eh\": expected a list of error-handler steps, got %s",
		     pquote(e, q, sizeof(q)));
		return;
	}
	x->kinds |= FL_EX_EH;
	x->eh = calloc(json_array_size(e) + 1, sizeof(*x->eh));
	json_array_foreach(e, i, w)
	{
		int k;

		for (k = 0; k < FL_EH_NR &&
			    (!json_is_string(w) || strcmp(fl_eh_names[k], json_string_value(w)));
		     k++)
			;
		snprintf(sub, sizeof(sub), "%s/eh/%zu", path, i);
		if (k == FL_EH_NR)
			perr(c, sub, false,
			     "unknown error-handler step %s (abort, lun_reset, "
			     "target_reset, bus_reset, host_reset, conn_error, "
			     "session_reset, session_recovery_timeout, offline, io_error)",
			     pquote(w, q, sizeof(q)));
		else if (x->eh)
			x->eh[x->neh++] = (enum fl_eh_step)k;
	}
}

/*
 * A whole-run expectation about a multipath path ("path" + "state") or a
 * device handler ("dh_state" [+ "access_state"]); false when v is neither.
 */
static bool expect_path_dh(struct pctx *c, const char *path, json_t *v, struct fl_expect *x)
{
	char sub[512];
	json_t *e, *st;

	if (json_object_get(v, "state") && !json_object_get(v, "path"))
		perr(c, path, false, "\"state\" goes with \"path\" only");
	if ((e = json_object_get(v, "path"))) {
		st = json_object_get(v, "state");
		if (pstr(c, SUBP(sub, path, "path"), e, 64, &x->path_port) && !st)
			perr(c, path, false,
			     "\"path\" needs \"state\": a dm path state (active, failed) or a "
			     "checker state (ready, ghost, faulty, shaky, delayed, pending)");
		if (st && pstr(c, SUBP(sub, path, "state"), st, 32, &x->path_state) && x->path_port)
			x->kinds |= FL_EX_PATH;
		pcount(c, path, v, x);
		return true;
	}
	if (json_object_get(v, "access_state") && !json_object_get(v, "dh_state"))
		perr(c, path, false, "\"access_state\" goes with \"dh_state\" only");
	if ((e = json_object_get(v, "dh_state"))) {
		st = json_object_get(v, "access_state");
		if (pstr(c, SUBP(sub, path, "dh_state"), e, 32, &x->dh_handler) &&
		    (!st || pstr(c, SUBP(sub, path, "access_state"), st, 32, &x->dh_access)))
			x->kinds |= FL_EX_DH_STATE;
		pcount(c, path, v, x);
		return true;
	}
	return false;
}

/* Parses an expectation about the whole run: exactly one of kernel_log, eh, device_state,
 * max_stall_ms, trace, path or dh_state. */
static void expect_whole(struct pctx *c, const char *path, json_t *v, struct fl_expect *x,
			 int nwhole)
{
	char sub[512];
	json_t *e;

	if (json_object_get(v, "errno") || json_object_get(v, "status") ||
	    json_object_get(v, "sense") || json_object_get(v, "within_ms") ||
	    json_object_get(v, "min_ms") || json_object_get(v, "ua") ||
	    json_object_get(v, "tmf_response"))
		perr(c, path, false,
		     "errno, status, sense, ua, tmf_response, within_ms and min_ms are about a "
		     "step: give \"step\"");
	if (nwhole != 1) {
		if (!nwhole)
			perr(c, path, false,
			     "an expectation needs \"step\" or one of kernel_log, eh, "
			     "device_state, max_stall_ms, trace, path, dh_state");
		else
			perr(c, path, false,
			     "one of kernel_log, eh, device_state, max_stall_ms, trace, path, "
			     "dh_state per entry (give each its own entry)");
		return;
	}
	if (expect_path_dh(c, path, v, x))
		return;
	if ((e = json_object_get(v, "kernel_log"))) {
		expect_kernel_log(c, path, v, e, x);
		return;
	}
	if (json_object_get(v, "count") || (json_object_get(v, "max")) ||
	    (json_object_get(v, "min") && !json_object_get(v, "max_stall_ms")))
		perr(c, path, false,
		     "\"count\", \"min\" and \"max\" bound a kernel_log or path count (min also "
		     "a max_stall_ms); for trace they go inside the \"trace\" object");
	if ((e = json_object_get(v, "eh"))) {
		expect_eh(c, path, e, x);
		return;
	}
	if ((e = json_object_get(v, "device_state"))) {
		if (pstr(c, SUBP(sub, path, "device_state"), e, 64, &x->device_state))
			x->kinds |= FL_EX_DEVICE_STATE;
		if ((e = json_object_get(v, "lun")))
			plun(c, SUBP(sub, path, "lun"), e, &x->lun);
		return;
	}
	if (json_object_get(v, "lun"))
		perr(c, path, false, "\"lun\" goes with \"device_state\" only");
	if ((e = json_object_get(v, "max_stall_ms"))) {
		if (pnum(c, SUBP(sub, path, "max_stall_ms"), e, UINT32_MAX, &x->stall_max_ms))
			x->kinds |= FL_EX_STALL;
		if ((e = json_object_get(v, "min")))
			pnum(c, SUBP(sub, path, "min"), e, x->stall_max_ms, &x->stall_min_ms);
		return;
	}
	if ((e = json_object_get(v, "trace")))
		pexpect_trace(c, SUBP(sub, path, "trace"), e, x);
}

/* Parses one expectation. */
static void parse_expect(struct pctx *c, const char *path, json_t *v, struct fl_expect *x,
			 size_t nsteps)
{
	static const char *const keys[] = {
	    "step",   "errno",	      "status", "sense",	"within_ms",
	    "min_ms", "kernel_log",   "count",	"min",		"max",
	    "eh",     "device_state", "lun",	"max_stall_ms", "trace",
	    "runner", "kernel",	      "path",	"state",	"vm_path",
	    "ua",     "tmf_response", "why",	"dh_state",	"access_state",
	    NULL};
	static const char *const whole[] = {"kernel_log", "eh",	  "device_state", "max_stall_ms",
					    "trace",	  "path", "dh_state"};
	char q[80];
	int nwhole = 0;

	x->step = -1;
	x->lun = -1;
	x->runners = FL_RUNNER_ALL;
	if (!json_is_object(v)) {
		perr(c, path, false, "each expectation must be an object, got %s",
		     pquote(v, q, sizeof(q)));
		return;
	}
	pkeys(c, path, v, "expect", keys);
	expect_scope(c, path, v, x);
	for (size_t i = 0; i < sizeof(whole) / sizeof(whole[0]); i++)
		nwhole += json_object_get(v, whole[i]) != NULL;
	if (json_object_get(v, "step"))
		expect_step(c, path, v, x, nsteps, nwhole);
	else
		expect_whole(c, path, v, x, nwhole);
}

/* Parses "knobs". */
static void parse_knobs(struct pctx *c, json_t *v, struct fl_knobs *k)
{
	const char *names[32];
	char sub[512], q[80];
	size_t i;

	for (i = 0; i < fl_knob_count; i++) {
		names[i] = fl_knob_descs[i].name;
		*(int *)((char *)k + fl_knob_descs[i].offset) = -1;
	}
	names[i] = NULL;
	if (!v)
		return;
	if (!json_is_object(v)) {
		perr(c, "/check/knobs", false, "\"knobs\": expected an object, got %s",
		     pquote(v, q, sizeof(q)));
		return;
	}
	pkeys(c, "/check/knobs", v, "knobs", names);
	for (i = 0; i < fl_knob_count; i++) {
		json_t *e = json_object_get(v, fl_knob_descs[i].name);
		int *dst = (int *)((char *)k + fl_knob_descs[i].offset);
		uint64_t n;
		bool b;

		if (!e)
			continue;
		snprintf(sub, sizeof(sub), "/check/knobs/%s", fl_knob_descs[i].name);
		if (fl_knob_descs[i].words && (json_is_string(e) || fl_knob_descs[i].words_only)) {
			const char *const *w = fl_knob_descs[i].words;
			const char *s = json_string_value(e);
			size_t wi;

			for (wi = 0; s && w[wi]; wi++)
				if (!strcmp(w[wi], s))
					break;
			if (s && w[wi]) {
				*dst = FL_KNOB_WORD(wi);
				continue;
			}
			char list[128] = "";
			for (wi = 0; w[wi]; wi++)
				snprintf(list + strlen(list), sizeof(list) - strlen(list),
					 "%s\"%s\"", wi ? ", " : "", w[wi]);
			perr(c, sub, false, "\"%s\": expected %s%s, got %s", fl_knob_descs[i].name,
			     fl_knob_descs[i].words_only ? "one of " : "a number or one of ", list,
			     pquote(e, q, sizeof(q)));
			continue;
		}
		if (json_is_boolean(e) && pbool(c, sub, e, &b))
			*dst = b;
		else if (!json_is_boolean(e) && pnum(c, sub, e, 86400, &n))
			*dst = (int)n;
	}
}

/* True when the op sends one SCSI command (and so may go through the runner's error handling). */
static bool op_sends_command(enum fl_step_op op)
{
	switch (op) {
	case FL_OP_READ:
	case FL_OP_WRITE:
	case FL_OP_DISCARD:
	case FL_OP_FSYNC:
	case FL_OP_SYNC:
	case FL_OP_TUR:
	case FL_OP_INQUIRY:
	case FL_OP_SG_RAW:
	case FL_OP_UNMAP:
	case FL_OP_WRITE_SAME:
		return true;
	default:
		return false;
	}
}

/* A port's name for messages (ports without an "id" are named port1, port2, ...). */
static const char *port_name(const struct fl_scenario *sc, int i)
{
	return i >= 0 && (size_t)i < sc->nports && sc->ports[i].name ? sc->ports[i].name : "?";
}

/* Whether every expectation of step i is the libiscsi runner's alone (none: false). */
static bool step_libiscsi_only(const struct fl_check *ck, size_t i)
{
	bool any = false;

	for (size_t k = 0; k < ck->nexpects; k++) {
		const struct fl_expect *x = &ck->expects[k];

		if (x->step != (int)i)
			continue;
		if (x->runners & FL_RUNNER_VM)
			return false;
		any = true;
	}
	return any;
}

/*
 * What the whole check says about its steps: an abort_task needs a command
 * before it; a step the VM lab cannot run, in a check for VM-lab paths, is
 * pointed out, as is a step's port the lab's one path cannot reach, and a
 * block step's port that picks no path under knobs.multipath; a step
 * whose deadline cuts the libiscsi runner's error handling short, and a
 * min_ms past its step's deadline, are warned about.
 */
/* The block ops: the ones dm-multipath carries in the VM lab and the libiscsi runner's model. */
static bool op_is_block(enum fl_step_op op)
{
	return op == FL_OP_READ || op == FL_OP_WRITE || op == FL_OP_SYNC || op == FL_OP_FSYNC ||
	       op == FL_OP_DISCARD;
}

/*
 * Warns of step i (s) whose deadline is shorter than the libiscsi runner's
 * error handling of one command: its timer, then ABORT TASK and two LUN
 * RESETs. Not of a background step (that runner does not run it), nor of a
 * pass-through step whose deadline is its SG_IO timeout (up to
 * FL_SGIO_TIMEOUT_MAX_S: it meets no error handling before the deadline,
 * by design).
 */
static void warn_step_deadline(struct pctx *c, const char *path, const struct fl_check *ck,
			       const struct fl_step *s, size_t i)
{
	int64_t cmd_ms = (ck->knobs.timeout_s > 0 ? ck->knobs.timeout_s : 30) * 1000LL;
	int64_t wait_ms = ck->knobs.reset_wait_ms >= 0 ? ck->knobs.reset_wait_ms : FL_RESET_WAIT_MS;
	/* the command's timer: two timeouts with the pings on (the NOP-Out check) */
	bool pings = ck->knobs.noop_interval_s != 0 || ck->knobs.noop_timeout_s != 0;
	bool sgio = fl_step_op_is_passthrough(s->op);
	int64_t timer_ms = (pings ? 2 : 1) * (sgio ? FL_SGIO_TIMEOUT_MAX_S * 1000LL : cmd_ms);

	if (s->background || !op_sends_command(s->op) ||
	    (sgio && s->timeout_s <= FL_SGIO_TIMEOUT_MAX_S) ||
	    (int64_t)s->timeout_s * 1000 >= timer_ms + 3 * wait_ms)
		return;
	pwarn(c, path,
	      "step %zu's deadline (timeout_s %u s) is shorter than the libiscsi "
	      "runner's error handling of one command (%lld ms: the command's timer "
	      "%lld ms, %s%s %s, then ABORT TASK and two LUN RESETs, each waited "
	      "up to knobs.reset_wait_ms %lld ms): a command left unanswered ends "
	      "as TIMEOUT before its recovery",
	      i, s->timeout_s, (long long)(timer_ms + 3 * wait_ms), (long long)timer_ms,
	      pings ? "twice " : "", sgio ? "SG_IO's timeout" : "the command timeout",
	      pings ? "with the pings on" : "with the pings off", (long long)wait_ms);
}

static void check_workload(struct pctx *c, const struct fl_check *ck)
{
	bool libiscsi = !ck->paths || (ck->paths & FL_PATH_ISCSI);
	/* the VM lab is named: VM-lab paths, or "vm" written in "frontends" */
	bool vm =
	    ck->paths || (json_object_get(c->root, "frontends") && (c->sc->frontends & FL_FE_VM));
	char path[64];

	for (size_t i = 0; i < ck->nsteps; i++) {
		const struct fl_step *s = &ck->steps[i];

		snprintf(path, sizeof(path), "/check/workload/%zu", i);
		if (s->op == FL_OP_ABORT_TASK && (!i || !op_sends_command(ck->steps[i - 1].op)))
			perr(c, path, false,
			     "abort_task aborts the previous step's command: step %zu %s", i,
			     i ? "does not follow a step that sends one" : "has no step before it");
		if (vm && !fl_step_op_in_vm(s->op))
			pwarn(
			    c, path,
			    "the VM lab cannot run %s steps: its expectations of step %zu are N/A "
			    "there (the scenario names the VM lab: \"vm\" in \"frontends\" or "
			    "VM-lab \"paths\")",
			    fl_step_op_name(s->op), i);
		if (vm && ck->knobs.multipath != 1 && s->port > 0 && !step_libiscsi_only(ck, i))
			pwarn(
			    c, path,
			    "the VM lab logs in through the first port only (no knobs.multipath): "
			    "step %zu's port \"%s\" is not reached there, its commands go through "
			    "\"%s\"; give knobs.multipath (one path per port) or scope the step's "
			    "expectations to \"runner\": \"libiscsi\"",
			    i, port_name(c->sc, s->port), port_name(c->sc, 0));
		if (ck->knobs.multipath == 1 && s->port >= 0 && op_is_block(s->op) &&
		    fl_scenario_port_count(c->sc) > 1)
			pwarn(
			    c, path,
			    "step %zu's port \"%s\" picks no path: with knobs.multipath a %s goes "
			    "where dm-multipath sends it, in the VM lab and in the libiscsi "
			    "runner's "
			    "multipath model alike; remove the key",
			    i, port_name(c->sc, s->port), fl_step_op_name(s->op));
		if (libiscsi)
			warn_step_deadline(c, path, ck, s, i);
	}
	for (size_t i = 0; i < ck->nexpects; i++) {
		const struct fl_expect *x = &ck->expects[i];

		if (!(x->kinds & FL_EX_MIN_MS) || x->step < 0 || (size_t)x->step >= ck->nsteps)
			continue;
		if (x->min_ms > (uint64_t)ck->steps[x->step].timeout_s * 1000) {
			snprintf(path, sizeof(path), "/check/expect/%zu/min_ms", i);
			pwarn(c, path,
			      "min_ms %llu is past step %d's deadline (timeout_s %u s): the step "
			      "ends "
			      "as TIMEOUT before",
			      (unsigned long long)x->min_ms, x->step, ck->steps[x->step].timeout_s);
		}
	}
}

/* Parses "check" into the typed model. */
void parse_check(struct pctx *c, json_t *v)
{
	static const char *const keys[] = {"paths", "knobs", "arm", "workload", "expect", NULL};
	struct fl_check *ck;
	char q[80], sub[512];
	json_t *e, *w;
	size_t i;

	if (!json_is_object(v)) {
		perr(c, "/check", false, "\"check\": expected an object, got %s",
		     pquote(v, q, sizeof(q)));
		return;
	}
	ck = calloc(1, sizeof(*ck));
	if (!ck) {
		perr(c, "/check", false, "out of memory");
		return;
	}
	c->sc->check = ck;
	pkeys(c, "/check", v, "check", keys);
	if ((e = json_object_get(v, "paths"))) {
		if (!json_is_array(e))
			perr(c, "/check/paths", false, "\"paths\": expected a list, got %s",
			     pquote(e, q, sizeof(q)));
		json_array_foreach(e, i, w)
		{
			const char *p = json_string_value(w);

			snprintf(sub, sizeof(sub), "/check/paths/%zu", i);
			if (fl_check_path_by_name(p))
				ck->paths |= fl_check_path_by_name(p);
			else
				perr(c, sub, false,
				     "unknown path %s (expected \"iscsi\", \"tcmu\" or \"lio\")",
				     pquote(w, q, sizeof(q)));
		}
	}
	parse_knobs(c, json_object_get(v, "knobs"), &ck->knobs);
	if ((e = json_object_get(v, "arm"))) {
		const char *a = json_string_value(e);

		if (a && !strcmp(a, "workload"))
			ck->arm_at_workload = true;
		else if (!a || strcmp(a, "serve"))
			perr(c, "/check/arm", false,
			     "\"arm\": expected \"serve\" or \"workload\", got %s",
			     pquote(e, q, sizeof(q)));
	}
	if ((e = json_object_get(v, "workload"))) {
		if (!json_is_array(e)) {
			perr(c, "/check/workload", false, "\"workload\": expected a list, got %s",
			     pquote(e, q, sizeof(q)));
		} else if (json_array_size(e)) {
			ck->steps = calloc(json_array_size(e), sizeof(*ck->steps));
			json_array_foreach(e, i, w)
			{
				snprintf(sub, sizeof(sub), "/check/workload/%zu", i);
				if (ck->steps)
					parse_step(c, sub, w, &ck->steps[ck->nsteps++]);
			}
		}
	}
	if ((e = json_object_get(v, "expect"))) {
		if (!json_is_array(e)) {
			perr(c, "/check/expect", false, "\"expect\": expected a list, got %s",
			     pquote(e, q, sizeof(q)));
		} else if (json_array_size(e)) {
			ck->expects = calloc(json_array_size(e), sizeof(*ck->expects));
			json_array_foreach(e, i, w)
			{
				snprintf(sub, sizeof(sub), "/check/expect/%zu", i);
				if (ck->expects)
					parse_expect(c, sub, w, &ck->expects[ck->nexpects++],
						     ck->nsteps);
			}
		}
	}
	check_workload(c, ck);
}

/* Frees a check section. */
void check_free(struct fl_check *ck)
{
	if (!ck)
		return;
	for (size_t i = 0; i < ck->nsteps; i++) {
		struct fl_step *s = &ck->steps[i];

		free(s->path);
		free(s->fs);
		free(s->command);
		for (size_t k = 0; k < s->nargs; k++)
			free(s->args[k]);
		free(s->args);
	}
	free(ck->steps);
	for (size_t i = 0; i < ck->nexpects; i++) {
		struct fl_expect *x = &ck->expects[i];

		for (size_t k = 0; k < x->nerrnos; k++)
			free(x->errnos[k]);
		free(x->errnos);
		free(x->kernel_log);
		free(x->eh);
		free(x->device_state);
		free(x->kernel);
		free(x->path_port);
		free(x->path_state);
		free(x->dh_handler);
		free(x->dh_access);
		for (size_t k = 0; k < x->ntrace; k++) {
			free(x->trace[k].key);
			free(x->trace[k].json);
		}
		free(x->trace);
	}
	free(ck->expects);
	free(ck);
}
