/* SPDX-License-Identifier: MIT */
/*
 * vendor.c - vendor personalities: the table of them, attaching one to a LUN,
 * and the ownership model they share.
 *
 * A personality makes a LUN answer as a particular array does beyond SPC-4
 * and SBC-3: its INQUIRY identity (what the host's device-handler table
 * matches), vendor VPD pages, vendor mode pages, its sense vocabulary and
 * which controller owns the LUN. The hooks are in vendor.h; each
 * personality's code is in vendor_NAME.c and has one row here.
 *
 * Ownership: one target port group (a controller) owns the LUN; the group of
 * the port a command came in on is its controller, as for ALUA (lun.c
 * lun_tpg_index). A transfer records its time, may start a quiescence window
 * and may queue UA 2A/06 (the personality's options, fl_target.h).
 */
#include "vendor.h"

#include "fl_log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Every personality, one row each. */
static const struct vendor_ops *const vendor_table[] = {
    &vendor_rdac_ops,
    &vendor_emc_ops,
    &vendor_hpsw_ops,
};
#define NVENDORS (sizeof(vendor_table) / sizeof(vendor_table[0]))

static const char *vendor_name_list[NVENDORS + 1];

/* The row of a personality, or NULL. */
const struct vendor_ops *vendor_find(const char *name)
{
	for (size_t i = 0; name && i < NVENDORS; i++)
		if (!strcmp(vendor_table[i]->name, name))
			return vendor_table[i];
	return NULL;
}

/* True when name is a personality of the table. */
bool fl_vendor_known(const char *name)
{
	return vendor_find(name) != NULL;
}

/* The names of the personalities, NULL-terminated. */
const char *const *fl_vendor_names(void)
{
	for (size_t i = 0; i < NVENDORS; i++)
		vendor_name_list[i] = vendor_table[i]->name;
	vendor_name_list[NVENDORS] = NULL;
	return vendor_name_list;
}

/* The default INQUIRY identity of a personality. */
bool fl_vendor_identity(const char *name, const char **vendor, const char **product,
			const char **revision)
{
	const struct vendor_ops *v = vendor_find(name);

	if (!v)
		return false;
	if (vendor)
		*vendor = v->vendor;
	if (product)
		*product = v->product;
	if (revision)
		*revision = v->revision;
	return true;
}

/* CLOCK_MONOTONIC in ns. */
uint64_t vendor_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The group of the port the command came in on. */
uint16_t vendor_port_group(const struct exec_ctx *x)
{
	return x->lun->cfg.tpgs[lun_tpg_index(x->lun, x->cmd->nexus.rel_port_id)].id;
}

/* True when the command's controller owns the LUN. */
bool vendor_port_owns(const struct exec_ctx *x)
{
	return vendor_port_group(x) == x->lun->vstate->owner;
}

/* True while the quiescence after a transfer lasts. */
bool vendor_quiescing(const struct fl_lun *lun)
{
	uint64_t until = lun->vstate->quiesce_until_ns;

	return until && (until == UINT64_MAX || vendor_now_ns() < until);
}

/* Moves ownership to group `to` (LUN locked). */
void vendor_move(struct fl_lun *lun, uint16_t to, uint64_t except, const char *cause)
{
	struct vendor_state *vs = lun->vstate;
	const struct fl_vendor_config *p = &lun->cfg.personality;
	uint16_t from = vs->owner;

	if (from == to)
		return;
	vs->owner = to;
	vs->moved_ns = vendor_now_ns();
	vs->transfers++;
	if (p->quiesce_ms == UINT32_MAX)
		vs->quiesce_until_ns = UINT64_MAX;
	else if (p->quiesce_ms)
		vs->quiesce_until_ns = vs->moved_ns + (uint64_t)p->quiesce_ms * 1000000ull;
	/* SPC-4 r37 5.15.2.5: the access state of both groups changed */
	if (p->transfer_ua)
		lun_ua_all(lun, except, ASC_PARAMETERS_CHANGED,
			   ASCQ_ASYMMETRIC_ACCESS_STATE_CHANGED);
	fl_log(FL_LOG_INFO, "LUN %u: ownership moved from port group %u to %u\n",
	       (unsigned)lun->lun_id, (unsigned)from, (unsigned)to);
	if (lun->vops->moved)
		lun->vops->moved(lun, from, to);
	if (p->moved)
		p->moved(p->moved_arg, lun->lun_id, from, to, cause);
}

/* Carries out a due rebalance to the preferred group (LUN locked). */
void vendor_rebalance(struct fl_lun *lun)
{
	struct vendor_state *vs = lun->vstate;
	const struct fl_vendor_config *p = &lun->cfg.personality;

	if (!p->rebalance_ms || vs->owner == p->preferred_tpg || !vs->moved_ns)
		return;
	if (vendor_now_ns() - vs->moved_ns < (uint64_t)p->rebalance_ms * 1000000ull)
		return;
	vendor_move(lun, p->preferred_tpg, FL_ALL_NEXUS, "rebalance");
}

/* Index of group id in cfg.tpgs, or -1. */
static int vendor_tpg_find(const struct fl_lun *lun, uint16_t id)
{
	for (unsigned i = 0; i < lun->cfg.ntpgs; i++)
		if (lun->cfg.tpgs[i].id == id)
			return (int)i;
	return -1;
}

/* Sets lun->vops / lun->vstate from cfg.personality (fl_lun_create). */
int vendor_attach(struct fl_lun *lun)
{
	struct fl_vendor_config *p = &lun->cfg.personality;
	const struct vendor_ops *v;

	if (!p->name)
		return 0;
	v = vendor_find(p->name);
	if (!v) {
		fl_log(FL_LOG_ERR, "unknown vendor personality \"%s\"\n", p->name);
		return -EINVAL;
	}
	p->name = v->name; /* the table's string: the caller's may go away */
	lun->vstate = calloc(1, sizeof(*lun->vstate));
	if (!lun->vstate)
		return -ENOMEM;
	if (!p->owner_tpg || vendor_tpg_find(lun, p->owner_tpg) < 0)
		p->owner_tpg = lun->cfg.tpg_id;
	if (!p->preferred_tpg || vendor_tpg_find(lun, p->preferred_tpg) < 0)
		p->preferred_tpg = p->owner_tpg;
	lun->vstate->owner = p->owner_tpg;
	lun->vops = v;
	if (v->init)
		return v->init(lun);
	return 0;
}

/* Frees the personality's state. */
void vendor_detach(struct fl_lun *lun)
{
	if (lun->vops && lun->vops->fini)
		lun->vops->fini(lun);
	free(lun->vstate);
	lun->vstate = NULL;
	lun->vops = NULL;
}

/* Moves ownership by the array's own management (fl_target.h). */
int fl_lun_set_owner(struct fl_lun *lun, uint16_t tpg_id)
{
	int rc = 0;

	pthread_mutex_lock(&lun->lock);
	if (!lun->vops)
		rc = -ENOTSUP;
	else if (vendor_tpg_find(lun, tpg_id) < 0)
		rc = -ENOENT;
	else
		vendor_move(lun, tpg_id, FL_ALL_NEXUS, "management");
	pthread_mutex_unlock(&lun->lock);
	return rc;
}

/* The group owning the LUN now. */
int fl_lun_owner(struct fl_lun *lun, uint16_t *tpg_id)
{
	int rc = 0;

	pthread_mutex_lock(&lun->lock);
	if (!lun->vops)
		rc = -ENOTSUP;
	else
		*tpg_id = lun->vstate->owner;
	pthread_mutex_unlock(&lun->lock);
	return rc;
}
