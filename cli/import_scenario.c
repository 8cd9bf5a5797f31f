/* SPDX-License-Identifier: MIT */
/*
 * import_scenario.c - `faultlun import`: the scenario written from what the
 * capture showed (docs/scenario-format.md): the target's name, its LUNs and
 * their identity, one rule per non-GOOD answer class or unanswered command,
 * and in "emulates" where each came from (frames, seconds) and what could
 * not be reproduced. Only keys lint accepts are written.
 */
#include "fl_action.h"
#include "import_internal.h"
#include "iscsi_digest.h"

#include "fl_target.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A new import (import.h). */
struct fl_import *fl_import_new(const struct fl_import_opts *o)
{
	struct fl_import *im = calloc(1, sizeof(*im));

	if (!im)
		return NULL;
	im->o = *o;
	im->image_fd = -1;
	iscsi_crc32c_init();
	return im;
}

/* The name of a sense key as scenarios spell it. */
static const char *key_name(uint8_t k)
{
	static const char *const names[16] = {"NO_SENSE",
					      "RECOVERED_ERROR",
					      "NOT_READY",
					      "MEDIUM_ERROR",
					      "HARDWARE_ERROR",
					      "ILLEGAL_REQUEST",
					      "UNIT_ATTENTION",
					      "DATA_PROTECT",
					      "BLANK_CHECK",
					      "VENDOR_SPECIFIC",
					      "COPY_ABORTED",
					      "ABORTED_COMMAND",
					      NULL,
					      "VOLUME_OVERFLOW",
					      "MISCOMPARE",
					      "COMPLETED"};
	return names[k & 15] ? names[k & 15] : "NO_SENSE";
}

/* The scenario's name for a status byte. */
static const char *status_name(uint8_t s)
{
	const char *name = fl_action_status_name(s);

	return name ? name : "task_aborted";
}

/* Whether LUN l's VPD page code is kept whole (its "vpd"). */
static bool lun_vpd_kept(const struct imp_lun *l, uint8_t code)
{
	for (unsigned i = 0; l->vpd && i < l->vpd->n; i++)
		if (l->vpd->code[i] == code)
			return true;
	return false;
}

/* A LUN's "vpd": the pages kept whole, each answered as captured; with a reference line. */
static void lun_vpd(int n, const struct imp_lun *l, json_t *o, json_t *refs)
{
	static const char hex[] = "0123456789abcdef";
	char name[8], text[3 * FL_VPD_RAW_MAX_LEN + 1], codes[FL_VPD_RAW_MAX * 6 + 1] = "";
	json_t *vpd;
	size_t cl = 0;

	if (!l->vpd || !l->vpd->n || !(vpd = json_object()))
		return;
	for (unsigned i = 0; i < l->vpd->n; i++) {
		size_t t = 0;
		for (unsigned b = 0; b < l->vpd->len[i]; b++) {
			if (b)
				text[t++] = ' ';
			text[t++] = hex[l->vpd->data[i][b] >> 4];
			text[t++] = hex[l->vpd->data[i][b] & 15];
		}
		text[t] = 0;
		snprintf(name, sizeof(name), "0x%02x", l->vpd->code[i]);
		json_object_set_new(vpd, name, json_string(text));
		cl += (size_t)snprintf(codes + cl, sizeof(codes) - cl, " %02Xh", l->vpd->code[i]);
	}
	json_object_set_new(o, "vpd", vpd);
	snprintf(text, sizeof(text),
		 "LUN %d: VPD pages%s answered as captured (the first whole answer of each, the "
		 "first in frame %" PRIu64 ")",
		 n, codes, l->vpd->frame[0]);
	json_array_append_new(refs, json_string(text));
}

/* Notes the VPD and mode pages LUN n answered that the scenario does not carry. */
static void note_pages(struct fl_import *im, int n, const struct imp_lun *l)
{
	char pages[256 * 6] = "";
	size_t pl = 0;

	for (int p = 0; p < 256; p++)
		if ((l->vpd_seen[p / 8] >> (p % 8) & 1) && fl_vpd_own_page((uint8_t)p) &&
		    p != 0x00 && p != 0x80 && p != 0x83)
			pl += snprintf(pages + pl, sizeof(pages) - pl, " %02Xh", p);
	if (pl)
		fl_import_note(im,
			       "LUN %d: VPD pages%s were answered; faultlun's LUN builds those "
			       "itself (its limits, characteristics, provisioning)",
			       n, pages);
	pl = 0;
	for (int p = 0; p < 256; p++)
		if ((l->vpd_seen[p / 8] >> (p % 8) & 1) && !fl_vpd_own_page((uint8_t)p) &&
		    !lun_vpd_kept(l, (uint8_t)p))
			pl += snprintf(pages + pl, sizeof(pages) - pl, " %02Xh", p);
	if (pl)
		fl_import_note(im,
			       "LUN %d: VPD pages%s were answered, none whole (cut short by the "
			       "allocation length) or past the %d pages (%d bytes each) kept",
			       n, pages, FL_VPD_RAW_MAX, FL_VPD_RAW_MAX_LEN);
	pl = 0;
	for (int p = 0; p < 64; p++)
		if ((l->mode_seen[p / 8] >> (p % 8) & 1) && p != 0x08 && p != 0x0a)
			pl += snprintf(pages + pl, sizeof(pages) - pl, " %02Xh", p);
	if (pl)
		fl_import_note(im,
			       "LUN %d: mode pages%s were answered; only WCE (08h), D_SENSE "
			       "(0Ah) and WP are imported",
			       n, pages);
}

/*
 * A LUN's ALUA identity: TPGS of its INQUIRY (implicit, explicit) and, from
 * the first REPORT TARGET PORT GROUPS answer, its port's group and that
 * group's state. A later change of the state is reproduced by the rule of
 * the UNIT ATTENTION that announced it (link_alua), else noted.
 */
static void lun_alua(struct fl_import *im, int n, json_t *o)
{
	const struct imp_lun *l = &im->luns[n];
	json_t *a = json_object();

	if (imp_ports(im)) {
		/* the states are the port groups'; the LUN names its default group */
		if (l->have_rtpg && imp_ports_have_group(im, l->rtpg_group))
			json_object_set_new(a, "group",
					    json_integer(imp_group_id(im, l->rtpg_group)));
	} else {
		if (l->have_rtpg && l->rtpg_group >= 1)
			json_object_set_new(a, "group", json_integer(l->rtpg_group));
		else if (l->have_rtpg)
			fl_import_note(
			    im,
			    "LUN %d: target port group 0 (LIO's default group); faultlun "
			    "numbers its groups from 1: group 1",
			    n);
		if (l->have_rtpg && strcmp(fl_alua_state_text(l->alua_first), "reserved"))
			json_object_set_new(a, "state",
					    json_string(fl_alua_state_text(l->alua_first)));
	}
	json_object_set_new(a, "implicit", json_boolean((l->tpgs & 1) || !(l->tpgs & 2)));
	json_object_set_new(a, "explicit", json_boolean(l->tpgs & 2));
	json_object_set_new(o, "alua", a);
	if (!l->have_rtpg)
		fl_import_note(im,
			       "LUN %d: TPGS %u (ALUA) in INQUIRY and no REPORT TARGET PORT GROUPS "
			       "answer: group 1, active/optimized",
			       n, l->tpgs);
	for (unsigned i = 0; i < im->nalua; i++)
		if (im->alua[i].lun == n && !im->alua[i].reproduced)
			fl_import_note(im,
				       "LUN %d: frame %" PRIu64
				       " (%.3f s): REPORT TARGET PORT GROUPS "
				       "answered %s where it had answered %s, with no single UNIT "
				       "ATTENTION 2A/06 before it to carry the change",
				       n, im->alua[i].frame, imp_secs(im, im->alua[i].t_us),
				       fl_alua_state_text(im->alua[i].to),
				       fl_alua_state_text(im->alua[i].from));
}

/*
 * True when class x's answer, NOT READY 04/xx, is what the LUN's group gives
 * in the state a reproduced change (an earlier class with alua) left it in:
 * the state answers it, a rule of its own would be redundant.
 */
static bool implied_by_alua(const struct fl_import *im, const struct imp_class *x)
{
	const struct imp_class *last = NULL;

	if (x->kind != IMP_SENSE || x->key != 0x02 || x->asc != 0x04)
		return false;
	for (unsigned k = 0; k < im->nclasses; k++) {
		const struct imp_class *c = &im->classes[k];

		if (c->alua && c->lun == x->lun && c->frames[0] < x->frames[0] &&
		    (!last || c->frames[0] > last->frames[0]))
			last = c;
	}
	if (last)
		return imp_alua_not_ready(last->alua_to) == x->ascq;
	return imp_ports_implied(im, x);
}

/*
 * Ties each ALUA state change (a REPORT TARGET PORT GROUPS answer unlike the
 * one before) to the UNIT ATTENTION 2A/06 ASYMMETRIC ACCESS STATE CHANGED
 * that announced it: the latest class of that UA on the LUN answered once,
 * before the answer that showed the change, and not tied yet. Its rule then
 * makes the change (the "alua" action changes the group's state before the
 * command executes and queues 2A/06 for every nexus, the command included),
 * so the replay reports the new state where the capture did.
 */
static void link_alua(struct fl_import *im)
{
	for (unsigned i = 0; i < im->nalua; i++) {
		struct imp_alua *a = &im->alua[i];
		struct imp_class *best = NULL;

		for (unsigned k = 0; k < im->nclasses; k++) {
			struct imp_class *x = &im->classes[k];

			if (x->kind != IMP_SENSE || x->lun != a->lun || x->key != 0x06 ||
			    x->asc != 0x2A || x->ascq != 0x06 || x->count != 1 || x->alua ||
			    x->frames[0] >= a->frame || (best && best->frames[0] > x->frames[0]))
				continue;
			best = x;
		}
		if (!best || !strcmp(fl_alua_state_text(a->to), "reserved"))
			continue;
		best->alua = true;
		best->alua_group = imp_group_id(im, im->luns[a->lun].rtpg_group);
		best->alua_to = a->to;
		a->reproduced = true;
	}
	for (unsigned k = 0; k < im->nclasses; k++)
		im->classes[k].implied = implied_by_alua(im, &im->classes[k]);
}

/*
 * A LUN's store: with --keep-data and read data kept, its image (a file
 * store next to the scenario) and a reference line; else memory.
 */
static void lun_store(struct fl_import *im, int n, json_t *o, json_t *refs)
{
	const struct imp_keep *k = im->luns[n].keep;
	char path[4096], line[4096 + 512];

	if (!k || k->fd < 0 || !im->luns[n].have_cap) {
		json_object_set_new(o, "store", json_pack("{s:s}", "kind", "memory"));
		return;
	}
	imp_data_path(im->o.image, n, path, sizeof(path));
	json_object_set_new(o, "store", json_pack("{s:s, s:s}", "kind", "file", "path", path));
	snprintf(line, sizeof(line),
		 "LUN %d: data kept: %" PRIu64 " block(s) as the capture's reads returned them "
		 "(the first in frame %" PRIu64 ") in %s; blocks the capture wrote before reading "
		 "them, or never read, are zeros",
		 n, k->blocks, k->first_frame, path);
	json_array_append_new(refs, json_string(line));
	if (k->inconsistent)
		fl_import_note(im,
			       "LUN %d: %" PRIu64 " read(s) returned other data than an earlier "
			       "read of the same blocks with no write between (another initiator "
			       "the capture does not hold?): the first data kept, those reads not "
			       "compared",
			       n, k->inconsistent);
	if (k->full)
		fl_import_note(im,
			       "LUN %d: more than %d runs of blocks read or written (or the image "
			       "could not be written): later data not kept",
			       n, IMP_MAX_KEEP_RUNS);
	if (k->unmapped)
		fl_import_note(im, "LUN %d: an UNMAP came: the data of later reads not kept", n);
	if (k->no_capacity)
		fl_import_note(im,
			       "LUN %d: %" PRIu64 " piece(s) of read data came before the LUN's "
			       "capacity was seen: not kept",
			       n, k->no_capacity);
}

/*
 * A LUN's serial (VPD 80h) and NAA designator (VPD 83h): the 16-byte one
 * when the capture has it, as Linux names the disk (its wwid) by it first.
 */
static void lun_ids(struct fl_import *im, int n, json_t *o)
{
	const struct imp_lun *l = &im->luns[n];
	char buf[40];

	if (l->have_serial)
		json_object_set_new(o, "serial", json_string(l->serial));
	if (l->naa16) {
		snprintf(buf, sizeof(buf), "0x%016" PRIx64 "%016" PRIx64, l->naa16_hi, l->naa16_lo);
		json_object_set_new(o, "naa", json_string(buf));
		if (l->have_naa)
			fl_import_note(im,
				       "LUN %d: VPD 83h has an 8-byte NAA designator (0x%016" PRIx64
				       ") besides the 16-byte one: the scenario's LUN has one, the "
				       "16-byte",
				       n, l->naa);
	} else if (l->have_naa) {
		snprintf(buf, sizeof(buf), "0x%016" PRIx64, l->naa);
		json_object_set_new(o, "naa", json_string(buf));
	}
}

/* A LUN's "prefetch": "good" when PRE-FETCH was answered GOOD and never CONDITION MET. */
static void lun_prefetch(struct fl_import *im, int n, json_t *o, json_t *refs)
{
	const struct imp_lun *l = &im->luns[n];

	if (l->prefetch_good && !l->prefetch_met) {
		json_object_set_new(o, "prefetch", json_string("good"));
		json_array_append_new(refs,
				      json_sprintf("LUN %d: PRE-FETCH answered GOOD %" PRIu64
						   " time(s) (the first command frame %" PRIu64
						   "), never CONDITION MET: \"prefetch\": \"good\"",
						   n, l->prefetch_good, l->prefetch_frame));
	} else if (l->prefetch_good) {
		fl_import_note(im,
			       "LUN %d: PRE-FETCH answered GOOD %" PRIu64
			       " time(s) and CONDITION MET %" PRIu64
			       " time(s): faultlun's LUN answers CONDITION MET",
			       n, l->prefetch_good, l->prefetch_met);
	}
}

/* The LUN object of one LUN. */
static json_t *lun_json(struct fl_import *im, int n, json_t *refs)
{
	struct imp_lun *l = &im->luns[n];
	json_t *o = json_object();
	char buf[40];

	json_object_set_new(o, "lun", json_integer(n));
	if (l->have_cap && l->block_size >= 512 && l->block_size <= 65536 &&
	    !(l->block_size & (l->block_size - 1)) && l->blocks && l->blocks < (1ull << 47)) {
		snprintf(buf, sizeof(buf), "%" PRIu64 "blocks", l->blocks);
		json_object_set_new(o, "size", json_string(buf));
		json_object_set_new(o, "block_size", json_integer(l->block_size));
	} else if (l->have_cap) {
		fl_import_note(im,
			       "LUN %d: capacity %" PRIu64 " blocks of %u bytes: outside what "
			       "faultlun serves; default size",
			       n, l->blocks, l->block_size);
	} else {
		fl_import_note(im, "LUN %d: no READ CAPACITY answer in the capture; default size",
			       n);
	}
	if (l->have_inq) {
		if (l->vendor[0])
			json_object_set_new(o, "vendor", json_string(l->vendor));
		if (l->product[0])
			json_object_set_new(o, "product", json_string(l->product));
		if (l->revision[0])
			json_object_set_new(o, "revision", json_string(l->revision));
		if (l->rmb)
			json_object_set_new(o, "removable", json_true());
		if (l->pdt)
			fl_import_note(im,
				       "LUN %d: peripheral device type 0x%02x; faultlun serves "
				       "direct-access (0x00) devices",
				       n, l->pdt);
		if (l->tpgs || l->have_rtpg)
			lun_alua(im, n, o);
	} else {
		fl_import_note(im,
			       "LUN %d: no standard INQUIRY answer in the capture; faultlun's "
			       "default identity",
			       n);
	}
	lun_ids(im, n, o);
	lun_vpd(n, l, o, refs);
	lun_prefetch(im, n, o, refs);
	if (l->have_wce)
		json_object_set_new(o, "write_cache", json_boolean(l->wce));
	if (l->have_dsense && l->dsense)
		json_object_set_new(o, "d_sense", json_true());
	if (l->have_wp && l->wp)
		json_object_set_new(o, "read_only", json_true());
	if (l->lbpme) {
		json_t *t = json_object();
		if (l->lbprz)
			json_object_set_new(t, "lbprz", json_true());
		json_object_set_new(o, "thin", t);
	}
	note_pages(im, n, l);
	lun_store(im, n, o, refs);
	return o;
}

/*
 * The action of class x's rule (the answer it gives, or the ALUA change it
 * makes), with the answer put in words in what.
 */
static json_t *rule_action(const struct imp_class *x, const struct imp_lun *l, char *what,
			   size_t len)
{
	json_t *a = json_object();
	char buf[64];

	switch (x->kind) {
	case IMP_SENSE:
		snprintf(what, len, "CHECK CONDITION %s/%02X/%02X%s", key_name(x->key), x->asc,
			 x->ascq, x->info_lba ? " (INFORMATION = the LBA)" : "");
		if (x->alua) {
			json_t *al = json_pack("{s:s}", "state", fl_alua_state_text(x->alua_to));

			if (x->alua_group >= 1)
				json_object_set_new(al, "group", json_integer(x->alua_group));
			json_object_set_new(a, "alua", al);
			break;
		}
		snprintf(buf, sizeof(buf), "%s/%02X/%02X", key_name(x->key), x->asc, x->ascq);
		json_object_set_new(a, "sense", json_string(buf));
		if (x->info_lba)
			json_object_set_new(a, "info", json_string("lba"));
		if (x->descriptor != l->dsense)
			json_object_set_new(a, "format",
					    json_string(x->descriptor ? "descriptor" : "fixed"));
		break;
	case IMP_STATUS:
		json_object_set_new(a, "status", json_string(status_name(x->status)));
		snprintf(what, len, "status %s", status_name(x->status));
		break;
	case IMP_HOLD:
		json_object_set_new(a, "hold", json_string(x->hold));
		snprintf(what, len, "no answer (hold %s)", x->hold);
		break;
	}
	return a;
}

/* The reference lines of class x's rule id: where in the capture it came from. */
static void rule_refs(struct fl_import *im, const struct imp_class *x, const char *id,
		      const char *what, json_t *refs)
{
	const char *opname = fl_opcode_name(x->opcode, x->sa);
	char line[700], lba[64] = "", frames[96] = "";
	size_t fl = 0;

	for (unsigned f = 0; f < x->count && f < 4; f++)
		fl += snprintf(frames + fl, sizeof(frames) - fl, "%s%" PRIu64, f ? ", " : "",
			       x->frames[f]);
	if (x->has_lba && x->crosses_end)
		snprintf(lba, sizeof(lba), ", LBA %" PRIu64 "-%" PRIu64 " (past the end)", x->first,
			 x->last);
	else if (x->has_lba)
		snprintf(lba, sizeof(lba), ", LBA %" PRIu64 "-%" PRIu64, x->first, x->last);
	snprintf(
	    line, sizeof(line),
	    "rule %s: %s to %s on LUN %d%s, %u time(s) (command frame(s) %s%s), first at %.6f s",
	    id, what, opname ? opname : "an unknown opcode", x->lun, lba, x->count, frames,
	    x->count > 4 ? ", ..." : "", imp_secs(im, x->t_us));
	json_array_append_new(refs, json_string(line));
	if (x->answer_frame) {
		snprintf(line, sizeof(line), "rule %s: the first answer is frame %" PRIu64, id,
			 x->answer_frame);
		json_array_append_new(refs, json_string(line));
	}
	if (x->alua) {
		snprintf(line, sizeof(line),
			 "rule %s: its UNIT ATTENTION announced the change of the ALUA state to %s "
			 "(a later REPORT TARGET PORT GROUPS answer): the rule makes the change",
			 id, fl_alua_state_text(x->alua_to));
		json_array_append_new(refs, json_string(line));
	}
}

/* The rule of one class, and its reference lines. */
static json_t *rule_json(struct fl_import *im, unsigned i, json_t *refs)
{
	struct imp_class *x = &im->classes[i];
	const struct imp_lun *l = &im->luns[x->lun];
	json_t *r = json_object(), *m = json_object(), *a;
	char id[96], buf[160], what[160] = "";
	int only;

	snprintf(id, sizeof(id), "f%" PRIu64 "-lun%d-op%02x", x->frames[0], x->lun, x->opcode);
	json_object_set_new(r, "id", json_string(id));
	json_object_set_new(m, "lun", json_integer(x->lun));
	snprintf(buf, sizeof(buf), "0x%02x", x->opcode);
	json_object_set_new(m, "opcode", json_string(buf));
	if (fl_opcode_has_sa(x->opcode))
		json_object_set_new(m, "service_action", json_integer(x->sa));
	if (x->has_lba && x->crosses_end)
		json_object_set_new(m, "lba", json_pack("{s:b}", "crosses_end", 1));
	else if (x->has_lba && (!l->have_cap || x->last < l->blocks))
		json_object_set_new(m, "lba",
				    json_pack("{s:I,s:I}", "first", (json_int_t)x->first, "last",
					      (json_int_t)x->last));
	a = rule_action(x, l, what, sizeof(what));
	/* Transient: GOOD answers to the same command came after. */
	if (x->kind != IMP_HOLD && x->written_after && x->kind == IMP_SENSE && x->has_lba &&
	    !x->crosses_end)
		json_object_set_new(r, "until", json_string("written"));
	else if (x->good_after || x->kind == IMP_HOLD || x->key == 0x06)
		json_object_set_new(m, "times", json_integer(x->count));
	/* In order: the GOOD answers to the LUN's same command before the first (no LBA). */
	if (x->good_before)
		json_object_set_new(m, "after", json_integer(x->good_before));
	/*
	 * Seen through one target port only: that port's (another port's same
	 * command got another answer). Not with after, which counted the
	 * commands of every port.
	 */
	else if ((only = imp_ports_only(im, x)) >= 0) {
		snprintf(buf, sizeof(buf), "p%d", only + 1);
		json_object_set_new(m, "port", json_string(buf));
	}
	json_object_set_new(r, "match", m);
	json_object_set_new(r, "action", a);
	rule_refs(im, x, id, what, refs);
	return r;
}

/*
 * Says in refs why class i has no rule: the imported ALUA state answers it,
 * or the LUN's reservations do.
 */
static void implied_note(struct fl_import *im, unsigned i, json_t *refs)
{
	const struct imp_class *x = &im->classes[i];
	const char *op = fl_opcode_name(x->opcode, x->sa);
	char line[400];

	if (im->norule_refs >= IMP_MAX_NORULE_REFS) {
		im->norule_over++;
		return;
	}
	im->norule_refs++;
	if (x->native)
		snprintf(line, sizeof(line),
			 "no rule: %s/%02X/%02X to %s on LUN %d, %u time(s) (first command frame "
			 "%" PRIu64 "): faultlun's LUN gives that command that answer itself",
			 key_name(x->key), x->asc, x->ascq, op ? op : "an unknown opcode", x->lun,
			 x->count, x->frames[0]);
	else if (x->resv_frame && x->kind == IMP_SENSE)
		snprintf(
		    line, sizeof(line),
		    "no rule: UNIT ATTENTION 2A/%02X to %s on LUN %d, %u time(s) (first command "
		    "frame %" PRIu64 "): after the reservation taken in frame %" PRIu64
		    ", faultlun's LUNs raise the reservation unit attentions themselves",
		    x->ascq, op ? op : "an unknown opcode", x->lun, x->count, x->frames[0],
		    x->resv_frame);
	else if (x->resv_frame)
		snprintf(line, sizeof(line),
			 "no rule: RESERVATION CONFLICT to %s on LUN %d, %u time(s) (first command "
			 "frame %" PRIu64 "): the reservation taken in frame %" PRIu64
			 " (RESERVE or PERSISTENT RESERVE OUT) answers it; faultlun's LUNs keep "
			 "reservations per I_T nexus themselves",
			 op ? op : "an unknown opcode", x->lun, x->count, x->frames[0],
			 x->resv_frame);
	else
		snprintf(line, sizeof(line),
			 "no rule: NOT READY/04/%02X to %s on LUN %d, %u time(s) (first command "
			 "frame %" PRIu64
			 "): the ALUA state the group of the port it came through is in by then "
			 "answers it",
			 x->ascq, op ? op : "an unknown opcode", x->lun, x->count, x->frames[0]);
	json_array_append_new(refs, json_string(line));
}

/* Notes what the reading itself met: what it left out, could not read or does not import. */
static void reading_notes(struct fl_import *im)
{
	if (im->other_targets)
		fl_import_note(im,
			       "%u answers from other targets than %s were left out "
			       "(faultlun import --target IQN picks one)",
			       im->other_targets, im->target);
	if (im->big_luns)
		fl_import_note(im,
			       "%u commands or REPORT LUNS entries named LUNs above 255 or of "
			       "another addressing method: left out",
			       im->big_luns);
	if (im->classes_over)
		fl_import_note(im, "%u answers past the %u answer classes told apart: left out",
			       im->classes_over, IMP_MAX_CLASSES);
	if (im->rules_over)
		fl_import_note(im, "%u rules past the %u a scenario may hold: left out",
			       im->rules_over, IMP_MAX_RULES);
	if (im->st.resyncs || im->st.gaps || im->st.cut_short)
		fl_import_note(im,
			       "%" PRIu64 " gaps in TCP streams, %" PRIu64 " frames cut by the "
			       "snapshot length, %" PRIu64 " resynchronisations (%" PRIu64 " bytes "
			       "skipped): PDUs there were not read",
			       im->st.gaps, im->st.cut_short, im->st.resyncs, im->st.skipped_bytes);
	if (im->st.lost_answers)
		fl_import_note(im,
			       "%" PRIu64 " command(s) left unanswered after a gap in the target's "
			       "stream (their answers may be in it): no hold",
			       im->st.lost_answers);
	if (im->st.orphan_answers)
		fl_import_note(im, "%" PRIu64 " answers to commands the capture does not hold",
			       im->st.orphan_answers);
	if (im->st.cmds_over)
		fl_import_note(im,
			       "%" PRIu64 " commands past %u outstanding on one connection: "
			       "not followed",
			       im->st.cmds_over, IMP_MAX_CMDS);
	if (im->power_on_uas)
		fl_import_note(im,
			       "%u UNIT ATTENTION 29/xx answers (reset or power on, the first "
			       "at frame %" PRIu64
			       "): faultlun's LUNs start every new I_T nexus with "
			       "29/00 pending themselves; no rule",
			       im->power_on_uas, im->power_on_frame);
	if (im->miscompares)
		fl_import_note(
		    im,
		    "%" PRIu64 " MISCOMPARE answers (VERIFY or COMPARE AND WRITE comparing "
		    "the medium with the command's data, the first command frame %" PRIu64
		    "): no rule; faultlun's LUN compares the data itself, and the "
		    "capture's data-out is not kept",
		    im->miscompares, im->miscompare_frame);
	if (im->st.digest_errors)
		fl_import_note(im, "%" PRIu64 " header digests did not match",
			       im->st.digest_errors);
	if (im->alua_over)
		fl_import_note(im, "%u more ALUA state changes", im->alua_over);
	if (!im->o.keep_data)
		fl_import_note(im, "data payloads are never copied (only sizes; --keep-data "
				   "keeps what the reads returned)");
}

/* The "emulates" object: what the import reproduces, and refs with the reading's notes. */
static json_t *emulates_json(struct fl_import *im, json_t *refs)
{
	char buf[512];

	reading_notes(im);
	for (unsigned i = 0; i < im->nnotes; i++) {
		snprintf(buf, sizeof(buf), "not reproduced: %s", im->notes[i]);
		json_array_append_new(refs, json_string(buf));
	}
	if (im->notes_over) {
		snprintf(buf, sizeof(buf), "not reproduced: %u more notes", im->notes_over);
		json_array_append_new(refs, json_string(buf));
	}
	return json_pack(
	    "{s:s, s:o}", "behaviour",
	    "What the target in the capture answered: its identity, its non-GOOD "
	    "answers, how long it took to answer, the commands it never answered, the "
	    "connections it cut and how it answered task management (faultlun import; "
	    "references: where each rule comes from and what could not be reproduced).",
	    "references", refs);
}

/* Sets s[key] to v when any is true, else drops v. */
static void set_if(json_t *s, const char *key, json_t *v, unsigned any)
{
	if (any)
		json_object_set_new(s, key, v);
	else
		json_decref(v);
}

/* Builds the scenario (import.h). */
int fl_import_finish(struct fl_import *im, const char *name, json_t **out)
{
	json_t *s, *luns, *rules, *refs, *tmf, *xrules;
	unsigned nconn = 0, nlun = 0, nrules, nlat, ntmf, ncuts;
	char buf[512];

	imp_net_finish(im);
	imp_data_finish(im);
	imp_ports_assign(im);
	imp_ports_note_shared(im);
	link_alua(im);
	for (struct imp_conn *c = im->conns; c; c = c->next)
		if (c->iscsi)
			nconn++;
	if (!nconn) {
		fprintf(stderr,
			"faultlun import: no iSCSI traffic found (%" PRIu64 " frames, %" PRIu64
			" TCP segments, %" PRIu64 " other)\n",
			im->st.frames, im->st.tcp, im->st.non_tcp + im->st.undecodable);
		return -ENOENT;
	}
	for (int n = 0; n < 256; n++)
		if (im->luns[n].seen)
			nlun++;
	s = json_object();
	luns = json_array();
	rules = json_array();
	refs = json_array();
	json_object_set_new(s, "faultlun", json_integer(1));
	json_object_set_new(s, "name", json_string(name));
	json_object_set_new(s, "description", json_string("")); /* its place; written below */
	if (im->target[0] && strlen(im->target) <= 223)
		json_object_set_new(s, "target", json_pack("{s:s}", "iqn", im->target));
	for (int n = 0; n < 256; n++)
		if (im->luns[n].seen)
			json_array_append_new(luns, lun_json(im, n, refs));
	if (imp_ports(im))
		imp_ports_json(im, s, refs);
	if (!nlun)
		fl_import_note(im, "no LUN answered a command in the capture: one default LUN");
	else {
		json_t *base = json_pack("{s:i,s:s,s:[s],s:O}", "faultlun", 1, "name", "probe",
					 "frontends", "iscsi", "luns", luns);
		if (base)
			imp_verify_native(im, base);
		json_decref(base);
	}
	for (unsigned i = 0; i < im->nclasses; i++)
		if (im->classes[i].implied || im->classes[i].resv_frame || im->classes[i].native)
			implied_note(im, i, refs);
		else if (json_array_size(rules) < IMP_MAX_RULES)
			json_array_append_new(rules, rule_json(im, i, refs));
		else
			im->rules_over++;
	if (im->norule_over)
		json_array_append_new(refs, json_sprintf("no rule: %u more answer classes (the "
							 "LUN's own answers, as the lines above)",
							 im->norule_over));
	nrules = (unsigned)json_array_size(rules);
	nlat = imp_lat_rules(im, rules, refs, IMP_MAX_RULES - nrules);
	tmf = json_object();
	ntmf = imp_tmf_behaviours(im, tmf, refs);
	xrules = json_array();
	ncuts = imp_cut_rules(im, xrules, refs);
	snprintf(buf, sizeof(buf),
		 "Imported from a capture of %" PRIu64 " frames (%.3f s): %u iSCSI connection(s), "
		 "%" PRIu64 " SCSI commands, %u LUN(s), %u rule(s), %u TMF behaviour(s), "
		 "%u connection cut(s).",
		 im->st.frames, imp_secs(im, im->tlast_us), nconn, im->st.cmds, nlun, nrules + nlat,
		 ntmf, ncuts);
	json_object_set_new(s, "description", json_string(buf));
	json_object_set_new(s, "emulates", emulates_json(im, refs));
	json_object_set_new(s, "frontends", json_pack("[s]", "iscsi"));
	set_if(s, "luns", luns, nlun);
	set_if(s, "rules", rules, nrules + nlat);
	set_if(s, "tmf", tmf, ntmf);
	set_if(s, "transport", json_pack("{s:o}", "rules", xrules), ncuts);
	*out = s;
	return 0;
}

/* Frees everything (import.h). */
void fl_import_free(struct fl_import *im)
{
	if (!im)
		return;
	for (unsigned i = 0; i < 256; i++)
		free(im->luns[i].vpd);
	imp_data_free(im);
	imp_net_free(im);
	imp_verify_free(im);
	for (unsigned i = 0; i < im->nnotes; i++)
		free(im->notes[i]);
	free(im->classes);
	imp_lat_free(im);
	free(im);
}
