/* SPDX-License-Identifier: MIT */
/*
 * import_cut.c - `faultlun import`: connections the target cut.
 *
 * A connection of the imported target's normal session, in full feature
 * phase, that the target ends with a FIN or an RST before any Logout
 * Request (RFC 7143 7.1.1: at ERL 0 the initiator must recover the session)
 * is a cut. When the last command the target received on it was still
 * unanswered then, the cut is reproduced as a transport rule closing the
 * connection on that command, counted among the target's commands of its
 * opcode ({"pdu": "scsi_command", "opcode", "nth"}, action "close"), so a
 * host sending the capture's commands in order meets the cut at the same
 * one; the other unanswered commands of the connection stay holds. A cut
 * with no command in hand (the target closed an idle connection) is noted,
 * not reproduced: the format has no time-triggered close. A close by the
 * host, or after a logout, is not a fault.
 */
#include "import_internal.h"

#include "fl_target.h"

#include <inttypes.h>
#include <stdio.h>

struct imp_cmd *imp_cut_close(struct fl_import *im, struct imp_conn *c, const struct imp_end *end)
{
	struct imp_cmd *in_hand = NULL;
	unsigned outstanding = 0;

	if (!end->by_target || !c->ffp || c->discovery || c->logged_out ||
	    !imp_scsi_target_is(im, c))
		return NULL;
	for (unsigned i = 0; i < IMP_CMD_BUCKETS; i++)
		for (struct imp_cmd *m = c->cmds[i]; m; m = m->next) {
			outstanding++;
			if (m->seq == c->last_seq)
				in_hand = m;
		}
	const char *how = end->rst ? "reset (RST)" : "closed (FIN)";
	if (!in_hand || !in_hand->op_nth) {
		fl_import_note(im,
			       "frame %" PRIu64 ": the target %s the connection with %s: a close "
			       "at a time rather than at a command is not reproduced",
			       end->frame, how,
			       outstanding ? "only older commands unanswered"
					   : "no command in hand");
		return NULL;
	}
	if (im->ncuts == IMP_MAX_CUTS) {
		fl_import_note(im,
			       "frame %" PRIu64 ": the target %s the connection: more than %u cuts",
			       end->frame, how, IMP_MAX_CUTS);
		return NULL;
	}
	struct imp_cut *k = &im->cuts[im->ncuts++];
	*k = (struct imp_cut){.frame = end->frame,
			      .cmd_frame = in_hand->frame,
			      .t_us = end->t_us,
			      .opcode = in_hand->cdb[0],
			      .sa = (uint16_t)(in_hand->cdb[1] & 0x1f),
			      .op_nth = in_hand->op_nth,
			      .outstanding = outstanding,
			      .rst = end->rst};
	return in_hand;
}

unsigned imp_cut_rules(struct fl_import *im, json_t *rules, json_t *refs)
{
	char id[32], buf[320];

	for (unsigned i = 0; i < im->ncuts; i++) {
		const struct imp_cut *k = &im->cuts[i];
		uint64_t nth = k->op_nth;
		const char *name = fl_opcode_name(k->opcode, k->sa);

		/*
		 * The first transport rule that holds decides, and only the rules
		 * looked at count a PDU: an earlier cut of the same opcode did not
		 * count the command it fired on.
		 */
		for (unsigned j = 0; j < i; j++)
			if (im->cuts[j].opcode == k->opcode)
				nth--;
		snprintf(id, sizeof(id), "cut-%u", i + 1);
		snprintf(buf, sizeof(buf), "0x%02x", k->opcode);
		json_array_append_new(rules,
				      json_pack("{s:s,s:{s:s,s:s,s:I},s:s}", "id", id, "match",
						"pdu", "scsi_command", "opcode", buf, "nth",
						(json_int_t)nth, "action", "close"));
		snprintf(buf, sizeof(buf),
			 "%s: frame %" PRIu64 " (%.3f s): the target %s the connection on the "
			 "command of frame %" PRIu64 " (%s number %" PRIu64
			 " of the target's), %u command(s) unanswered",
			 id, k->frame, imp_secs(im, k->t_us), k->rst ? "reset" : "closed",
			 k->cmd_frame, name ? name : "its opcode", k->op_nth, k->outstanding);
		json_array_append_new(refs, json_string(buf));
	}
	return im->ncuts;
}
