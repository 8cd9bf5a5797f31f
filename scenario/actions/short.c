/* SPDX-License-Identifier: MIT */
/*
 * short.c - the action "short": the command executes but returns less data
 * than asked, with the residual set (docs/faults/short.md; iSCSI RFC 7143
 * 11.4.5.2 underflow).
 */
#include "../scenario_internal.h"

static const char *const no_keys[] = {NULL};

static const struct fl_action_param short_params[] = {
    {"short/blocks", FL_PARAM_UINT, "blocks", 0, UINT32_MAX, NULL, NULL,
     "data-in kept, in blocks of the LUN", 1},
    {"short/bytes", FL_PARAM_UINT, "bytes", 0, UINT32_MAX, NULL, NULL, "data-in kept, in bytes", 1},
};

/* The parameters of a short action. */
struct short_args {
	bool in_blocks;
	uint32_t len;
};
FL_ACTION_ARGS(short_args)

/* Parses "short": {"blocks": N} or {"bytes": N}. */
static void short_parse(struct pctx *c, const char *path, json_t *v, struct sc_action *a)
{
	static const char *const skeys[] = {"blocks", "bytes", NULL};
	json_t *e = json_object_get(v, "short"), *b, *y;
	char sub[512], q[80];
	uint64_t n = 0;

	if (!e)
		return;
	b = json_object_get(e, "blocks");
	y = json_object_get(e, "bytes");
	SUBP(sub, path, "short");
	if (!json_is_object(e) || !!b + !!y != 1) {
		perr(c, sub, false,
		     "\"short\": expected {\"blocks\": N} or {\"bytes\": N}, "
		     "got %s",
		     pquote(e, q, sizeof(q)));
	} else {
		pkeys(c, sub, e, "short", skeys);
		char s2[600];

		snprintf(s2, sizeof(s2), "%s/%s", sub, b ? "blocks" : "bytes");
		if (pnum(c, s2, b ? b : y, UINT32_MAX, &n))
			short_args_set(a, &(struct short_args){b != NULL, (uint32_t)n});
	}
}

/* Cuts a good command's data-in to the length kept; the rest is residual. */
static void short_after(const struct fl_action_env *x)
{
	const struct short_args s = short_args_of(x->a);
	struct fl_cmd *cmd = x->cmd;
	uint64_t keep;

	if (cmd->status != FL_STATUS_GOOD || !cmd->data_in_len)
		return;
	keep = s.in_blocks ? (uint64_t)s.len * x->block_size : s.len;
	if (keep < cmd->data_in_len) {
		cmd->residual += (int64_t)(cmd->data_in_len - keep);
		cmd->data_in_len = (uint32_t)keep;
	}
}

const struct fl_action fl_action_short = {
    .name = "short",
    .verb = VERB_SHORT,
    .trace_action = "short",
    .doc = "short",
    .keys = no_keys,
    .params = short_params,
    .nparams = sizeof(short_params) / sizeof(short_params[0]),
    .phase = FL_PHASE_AFTER,
    .observed = FL_OBS_CHANGES_DATA,
    .observed_as = "answered with less data",
    .frontends = FL_FE_ALL,
    .with_delay = true,
    .parse = short_parse,
    .after = short_after,
};
