/* SPDX-License-Identifier: MIT */
/*
 * lun.c - a logical unit: life cycle, the submit path, unit attentions.
 *
 * fl_lun_submit never blocks. With the memory store a command executes inline
 * under the LUN lock and done() runs before submit returns; with the file
 * store the command is queued to a small per-LUN worker pool and done() runs
 * on a worker. Either way execution is the same: the nexus is looked up
 * (SAM-5 r21 5.14: a new nexus first sees 29/00), a pending unit attention is
 * reported unless the opcode is exempt (SPC-4 r37 5.14 / 4.5.5), the opcode
 * table decides the rest, the LBA range is checked here and only here
 * (SBC-3 r36 4.5), media commands are refused without a medium (3A/00),
 * while stopped (04/02) or in a non-active ALUA state (SPC-4 r37 5.15.2.4;
 * TRANSITIONING refuses all but the OPF_ALUA_ANY commands), and the
 * handler's sense reason becomes status + sense in sense.c. The order of
 * checks: CDB length, UA, opcode / service action, CDB length for the
 * opcode, control byte, ALUA / medium / stopped, reservations, LBA range.
 */
#include "fl_log.h"
#include "target_internal.h"
#include "vendor.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LUN_WORKERS 4

/* A queued command of a LUN with an asynchronous store. */
struct work_item {
	struct fl_cmd *cmd;
	struct work_item *next;
};
struct work_queue {
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct work_item *head, *tail;
	bool stop;
};

/* Fills *cfg with a 1 GiB, 512-byte-block, memory-backed disk. */
void fl_lun_config_default(struct fl_lun_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->num_blocks = (1ull << 30) / 512;
	cfg->block_size = 512;
	cfg->vendor = "FAULTLUN";
	cfg->product = "VIRTUAL DISK";
	cfg->revision = "0001";
	cfg->serial = "FL0000000001";
	cfg->write_cache = true;
	cfg->tpg_id = 1;
	cfg->alua_state = FL_ALUA_ACTIVE_OPTIMIZED;
	cfg->alua_implicit = true;
	cfg->store = FL_STORE_MEMORY;
}

/* Maximum transfer length of a LUN in blocks. */
uint32_t lun_max_xfer_blocks(const struct fl_lun *lun)
{
	if (lun->cfg.max_xfer_blocks)
		return lun->cfg.max_xfer_blocks;
	return SBC_DEFAULT_MAX_XFER_BYTES >> lun->block_shift;
}

/* Copies parameter data to data-in, bounded by allocation length and buffer. */
void exec_data_in(struct exec_ctx *x, const void *buf, uint32_t avail, uint32_t alloc_len)
{
	struct fl_cmd *cmd = x->cmd;
	uint32_t n = avail < alloc_len ? avail : alloc_len;

	if (n > cmd->data_in_cap)
		n = cmd->data_in_cap;
	if (n && cmd->data_in)
		memcpy(cmd->data_in, buf, n);
	else
		n = 0;
	cmd->data_in_len = n;
	cmd->residual = (int64_t)alloc_len - n;
}

/* SAM-5 r21 5.14 precedence: lower ranks are reported first. */
static int ua_rank(uint8_t asc, uint8_t ascq)
{
	if (asc == ASC_POWER_ON_RESET)
		return ascq == ASCQ_POWER_ON_OCCURRED	      ? 0
		       : ascq == ASCQ_POWER_ON_RESET_OCCURRED ? 1
							      : 2;
	return 3;
}

/* Queues a UA on one nexus, in precedence order, without duplicates. */
void ua_push(struct nexus_state *ns, uint8_t asc, uint8_t ascq)
{
	int rank = ua_rank(asc, ascq);
	unsigned pos;

	for (unsigned i = 0; i < ns->ua_count; i++)
		if (ns->ua[i].asc == asc && ns->ua[i].ascq == ascq)
			return;
	/*
	 * A power-on or reset condition supersedes what was pending: the state
	 * those conditions reported no longer exists (SAM-5 r21 5.14).
	 */
	if (rank < 3) {
		unsigned k = 0;

		for (unsigned i = 0; i < ns->ua_count; i++)
			if (ua_rank(ns->ua[i].asc, ns->ua[i].ascq) <= rank)
				ns->ua[k++] = ns->ua[i];
		ns->ua_count = k;
	}
	for (pos = 0; pos < ns->ua_count; pos++)
		if (ua_rank(ns->ua[pos].asc, ns->ua[pos].ascq) > rank)
			break;
	if (ns->ua_count == UA_QUEUE_MAX) {
		if (pos == UA_QUEUE_MAX)
			return; /* full of conditions at least as important */
		ns->ua_count--;
	}
	memmove(&ns->ua[pos + 1], &ns->ua[pos], (ns->ua_count - pos) * sizeof(ns->ua[0]));
	ns->ua[pos].asc = asc;
	ns->ua[pos].ascq = ascq;
	ns->ua_count++;
}

/* Removes and returns the first pending UA. */
bool ua_pop(struct nexus_state *ns, struct ua_entry *out)
{
	if (ns->ua_count == 0)
		return false;
	*out = ns->ua[0];
	ns->ua_count--;
	memmove(&ns->ua[0], &ns->ua[1], ns->ua_count * sizeof(ns->ua[0]));
	return true;
}

/* Drops every pending asc/ascq of one nexus. */
void ua_clear(struct nexus_state *ns, uint8_t asc, uint8_t ascq)
{
	unsigned k = 0;

	for (unsigned i = 0; i < ns->ua_count; i++)
		if (ns->ua[i].asc != asc || ns->ua[i].ascq != ascq)
			ns->ua[k++] = ns->ua[i];
	ns->ua_count = k;
}

/* Queues a UA on every known nexus except `except`. */
void lun_ua_all(struct fl_lun *lun, uint64_t except, uint8_t asc, uint8_t ascq)
{
	for (struct nexus_state *ns = lun->nexuses; ns; ns = ns->next)
		if (ns->id != except || except == FL_ALL_NEXUS)
			ua_push(ns, asc, ascq);
}

/* Finds or creates a nexus; a new one starts with 29/00 pending. */
struct nexus_state *lun_nexus(struct fl_lun *lun, const struct fl_nexus *n)
{
	struct nexus_state *ns;

	for (ns = lun->nexuses; ns; ns = ns->next)
		if (ns->id == n->id)
			return ns;
	ns = calloc(1, sizeof(*ns));
	if (!ns)
		return NULL;
	ns->id = n->id;
	ns->rel_port_id = n->rel_port_id;
	if (n->initiator) {
		ns->initiator = strdup(n->initiator);
		if (!ns->initiator) {
			free(ns);
			return NULL;
		}
	}
	/* SAM-5 r21 6.3.1: power on / I_T nexus loss is the first thing it hears */
	ua_push(ns, ASC_POWER_ON_RESET, ASCQ_POWER_ON_RESET_OCCURRED);
	ns->next = lun->nexuses;
	lun->nexuses = ns;
	return ns;
}

/* Index of group tpg_id in cfg.tpgs, or -1. */
static int tpg_find(const struct fl_lun *lun, uint16_t tpg_id)
{
	for (unsigned i = 0; i < lun->cfg.ntpgs; i++)
		if (lun->cfg.tpgs[i].id == tpg_id)
			return (int)i;
	return -1;
}

/* Index in cfg.tpgs of the group of a relative target port (SPC-4 r37 5.15.2.3). */
unsigned lun_tpg_index(const struct fl_lun *lun, uint16_t rel_port)
{
	uint16_t tpg = lun->cfg.tpg_id;

	if (rel_port == 0)
		rel_port = 1;
	for (unsigned i = 0; i < lun->cfg.nports; i++)
		if (lun->cfg.ports[i].rel_port_id == rel_port) {
			tpg = lun->cfg.ports[i].tpg_id;
			break;
		}
	for (unsigned i = 0; i < lun->cfg.ntpgs; i++)
		if (lun->cfg.tpgs[i].id == tpg)
			return i;
	return 0;
}

/* The state of the LUN as seen through a port: that of the port's group. */
enum fl_alua_state lun_port_state(const struct fl_lun *lun, uint16_t rel_port)
{
	return lun->tpg_state[lun_tpg_index(lun, rel_port)];
}

/* Sets a group's state; SPC-4 r37 5.15.2.5: UA 2A/06 on a change. */
void lun_set_tpg_state(struct fl_lun *lun, unsigned idx, enum fl_alua_state state, uint64_t except)
{
	if (lun->tpg_state[idx] == state)
		return;
	lun->tpg_state[idx] = state;
	lun_ua_all(lun, except, ASC_PARAMETERS_CHANGED, ASCQ_ASYMMETRIC_ACCESS_STATE_CHANGED);
}

/* READ CAPACITY (10) or (16): a standby port answers it (as LIO does), so a passive path has a
 * size. */
static bool is_read_capacity(const uint8_t *cdb)
{
	return cdb[0] == SBC_OP_READ_CAPACITY_10 || (cdb[0] == SBC_OP_SERVICE_ACTION_IN_16 &&
						     (cdb[1] & 0x1f) == SBC_SA_READ_CAPACITY_16);
}

/* Refusal of a media command in the ALUA state of its port / start-stop state. */
static enum sense_reason media_state_check(struct fl_lun *lun, const struct fl_cmd *cmd)
{
	switch (lun_port_state(lun, cmd->nexus.rel_port_id)) {
	case FL_ALUA_STANDBY:
		if (is_read_capacity(cmd->cdb))
			break;
		return SENSE_ALUA_STANDBY;
	case FL_ALUA_UNAVAILABLE:
		return SENSE_ALUA_UNAVAILABLE;
	case FL_ALUA_TRANSITIONING:
		return SENSE_ALUA_TRANSITIONING;
	case FL_ALUA_OFFLINE:
		return SENSE_ALUA_OFFLINE;
	default:
		break;
	}
	if (lun->medium_ejected)
		return SENSE_MEDIUM_NOT_PRESENT;
	if (lun->stopped)
		return SENSE_NOT_READY_STOPPED;
	return SENSE_OK;
}

/* The one LBA range check of the core (SBC-3 r36 4.5). */
static enum sense_reason range_check(struct exec_ctx *x)
{
	const struct fl_opcode_desc *d = x->desc;
	uint64_t cap = x->lun->num_blocks;
	uint64_t lba = x->info.lba, n = x->info.nblocks;

	if (n == 0 && (d->flags & OPF_ZERO_TO_END)) {
		if (lba >= cap)
			return SENSE_LBA_OUT_OF_RANGE;
		n = cap - lba;
	}
	if (n == 0 && (d->flags & OPF_LBA_EXISTS) && lba >= cap)
		return SENSE_LBA_OUT_OF_RANGE;
	/* lba + n cannot overflow once lba <= cap is known */
	if (lba > cap || n > cap - lba)
		return SENSE_LBA_OUT_OF_RANGE;
	x->lba = lba;
	x->nblk = n;
	return SENSE_OK;
}

/* Decides what a command does (LUN locked); returns the sense reason. */
static enum sense_reason lun_dispatch(struct exec_ctx *x)
{
	struct fl_cmd *cmd = x->cmd;
	struct fl_lun *lun = x->lun;
	const struct fl_opcode_desc *d;
	struct ua_entry ua;
	enum sense_reason r;
	size_t len = cmd->cdb_len;

	if (len == 0 || len > FL_CDB_MAX)
		return SENSE_INVALID_OPCODE;
	x->ns = lun_nexus(lun, &cmd->nexus);
	if (!x->ns)
		return SENSE_BUSY;
	d = cdb_lookup(cmd->cdb, len);
	/* SPC-4 r37 5.14: everything but the exempt commands reports a pending UA */
	if ((!d || !(d->flags & OPF_NO_UA)) && ua_pop(x->ns, &ua)) {
		x->ua_asc = ua.asc;
		x->ua_ascq = ua.ascq;
		return SENSE_UNIT_ATTENTION;
	}
	if (!d) {
		if (len >= 2 && cdb_opcode_has_sa(cmd->cdb[0]))
			return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 1, 4);
		return SENSE_INVALID_OPCODE;
	}
	if (len < d->cdb_len)
		return SENSE_INVALID_OPCODE;
	x->desc = d;
	/* SAM-5 r21 5.2: NACA is not supported (NormACA=0), LINK is obsolete */
	if (cmd->cdb[d->cdb_len - 1] & 0x05)
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, d->cdb_len - 1,
					  cmd->cdb[d->cdb_len - 1] & 0x04 ? 2 : 0);
	x->info = *fl_cmd_decode(cmd); /* decoded once: a front end or the engine may have */
	/* a vendor personality's own refusals (vendor.h); a plain LUN pays this test */
	if (lun->vops && lun->vops->check) {
		r = lun->vops->check(x);
		if (r != SENSE_OK)
			return r;
	}
	/* SPC-4 r37 5.15.2.4.6: a transitioning port serves almost nothing */
	if (lun_port_state(lun, cmd->nexus.rel_port_id) == FL_ALUA_TRANSITIONING &&
	    !(d->flags & OPF_ALUA_ANY))
		return SENSE_ALUA_TRANSITIONING;
	if (d->flags & OPF_MEDIA) {
		r = media_state_check(lun, cmd);
		if (r != SENSE_OK)
			return r;
	}
	/*
	 * An SPC-2 reservation (RESERVE (6) / (10)) refuses every command of
	 * another nexus but INQUIRY, REPORT LUNS, REQUEST SENSE (OPF_NO_UA) and
	 * RELEASE, TEST UNIT READY included, as LIO and tgtd answer; a
	 * persistent reservation only those its type names (OPF_CONFLICT).
	 */
	if ((d->flags & OPF_CONFLICT) || (lun->pr.legacy_reserved && !(d->flags & OPF_NO_UA))) {
		r = pr_check_conflict(x);
		if (r != SENSE_OK)
			return r;
	}
	/* SBC-3 r36 6.4.1 (WP): a write-protected medium refuses every change to
	 * it, the LUN's (read_only) or the host's (the control page's SWP) */
	if ((d->flags & OPF_MODIFIES) && (lun->cfg.read_only || lun->mode.swp))
		return SENSE_WRITE_PROTECTED;
	if (x->info.has_lba) {
		r = range_check(x);
		if (r != SENSE_OK)
			return r;
	}
	return d->exec(x);
}

/* Executes one command to completion (takes the LUN lock); done() not called. */
static void lun_execute(struct fl_lun *lun, struct fl_cmd *cmd)
{
	struct exec_ctx x;
	enum sense_reason r;

	memset(&x, 0, sizeof(x));
	x.lun = lun;
	x.cmd = cmd;
	x.sks_bit = -1;
	pthread_mutex_lock(&lun->lock);
	x.tgt = lun->target;
	r = lun_dispatch(&x);
	if (r != SENSE_OK && r != SENSE_CONDITION_MET) {
		cmd->data_in_len = 0;
		cmd->residual = 0;
	}
	sense_complete(&x, r);
	pthread_mutex_unlock(&lun->lock);
	cmd->decoded = false; /* the decode lives for one submission (fl_target.h) */
}

/* Worker of a LUN with an asynchronous store. */
static void *lun_worker(void *arg)
{
	struct fl_lun *lun = arg;
	struct work_queue *wq = lun->wq;

	for (;;) {
		struct work_item *it;

		pthread_mutex_lock(&wq->lock);
		while (!wq->head && !wq->stop)
			pthread_cond_wait(&wq->more, &wq->lock);
		it = wq->head;
		if (!it) {
			pthread_mutex_unlock(&wq->lock);
			return NULL;
		}
		wq->head = it->next;
		if (!wq->head)
			wq->tail = NULL;
		pthread_mutex_unlock(&wq->lock);

		lun_execute(lun, it->cmd);
		it->cmd->done(it->cmd);
		free(it);

		pthread_mutex_lock(&wq->lock);
		if (--lun->inflight == 0)
			pthread_cond_broadcast(&lun->idle);
		pthread_mutex_unlock(&wq->lock);
	}
}

/* Submits a command; completes inline (memory) or on a worker (file). */
void fl_lun_submit(struct fl_lun *lun, struct fl_cmd *cmd)
{
	struct work_item *it;

	cmd->status = FL_STATUS_GOOD;
	cmd->sense_len = 0;
	cmd->data_in_len = 0;
	cmd->residual = 0;
	/* a length without a buffer is no buffer: no handler may trust it */
	if (!cmd->data_in)
		cmd->data_in_cap = 0;
	if (!cmd->data_out)
		cmd->data_out_len = 0;
	if (!lun->wq) {
		lun_execute(lun, cmd);
		cmd->done(cmd);
		return;
	}
	it = malloc(sizeof(*it));
	if (!it) {
		cmd->status = FL_STATUS_TASK_SET_FULL;
		cmd->decoded = false;
		cmd->done(cmd);
		return;
	}
	it->cmd = cmd;
	it->next = NULL;
	pthread_mutex_lock(&lun->wq->lock);
	if (lun->wq->tail)
		lun->wq->tail->next = it;
	else
		lun->wq->head = it;
	lun->wq->tail = it;
	lun->inflight++;
	pthread_cond_signal(&lun->wq->more);
	pthread_mutex_unlock(&lun->wq->lock);
}

/* Starts the worker pool of an asynchronous store. */
static int lun_start_workers(struct fl_lun *lun)
{
	int rc;

	lun->wq = calloc(1, sizeof(*lun->wq));
	lun->workers = calloc(LUN_WORKERS, sizeof(pthread_t));
	if (!lun->wq || !lun->workers)
		return -ENOMEM;
	pthread_mutex_init(&lun->wq->lock, NULL);
	pthread_cond_init(&lun->wq->more, NULL);
	for (unsigned i = 0; i < LUN_WORKERS; i++) {
		rc = pthread_create(&lun->workers[i], NULL, lun_worker, lun);
		if (rc) {
			fl_log(FL_LOG_ERR, "cannot start a store worker: %s\n", strerror(rc));
			return -rc;
		}
		lun->nworkers++;
	}
	return 0;
}

/* Stops and joins the worker pool after the queue drained. */
static void lun_stop_workers(struct fl_lun *lun)
{
	if (!lun->wq)
		return;
	pthread_mutex_lock(&lun->wq->lock);
	while (lun->inflight)
		pthread_cond_wait(&lun->idle, &lun->wq->lock);
	lun->wq->stop = true;
	pthread_cond_broadcast(&lun->wq->more);
	pthread_mutex_unlock(&lun->wq->lock);
	for (unsigned i = 0; i < lun->nworkers; i++)
		pthread_join(lun->workers[i], NULL);
	pthread_mutex_destroy(&lun->wq->lock);
	pthread_cond_destroy(&lun->wq->more);
	free(lun->wq);
	lun->wq = NULL;
}

/* Copies a config string (NULL stays NULL); false on ENOMEM. */
static bool dup_str(const char **dst, const char *src)
{
	if (!src) {
		*dst = NULL;
		return true;
	}
	*dst = strdup(src);
	return *dst != NULL;
}

/* Validates a LUN config; returns a message or NULL. */
const char *fl_lun_config_problem(const struct fl_lun_config *cfg)
{
	if (cfg->block_size < 512 || cfg->block_size > 65536 ||
	    (cfg->block_size & (cfg->block_size - 1)))
		return "block size must be a power of two between 512 and 65536";
	if (cfg->num_blocks == 0)
		return "a LUN needs at least one block";
	if (cfg->num_blocks > FL_LUN_MAX_BLOCKS)
		return "more blocks than a LUN can have (at most 2^47 - 1)";
	if (cfg->store == FL_STORE_FILE && !cfg->store_path)
		return "the file store needs a path";
	if (cfg->store != FL_STORE_FILE && cfg->store != FL_STORE_MEMORY &&
	    cfg->store != FL_STORE_NULL)
		return "unknown store kind";
	if (cfg->nports > FL_MAX_PORTS || cfg->ntpgs > FL_MAX_PORTS)
		return "too many target ports or port groups";
	if (cfg->personality.name && !fl_vendor_known(cfg->personality.name))
		return "unknown vendor personality";
	for (unsigned i = 0; i < cfg->nports; i++) {
		bool found = cfg->ntpgs == 0 && cfg->ports[i].tpg_id == cfg->tpg_id;

		for (unsigned j = 0; j < cfg->ntpgs; j++)
			found |= cfg->tpgs[j].id == cfg->ports[i].tpg_id;
		if (!found || cfg->ports[i].rel_port_id == 0)
			return "a target port in no known target port group";
	}
	return NULL;
}

/* Copies cfg into the LUN, its strings owned and a personality's identity filled in. */
static int lun_copy_config(struct fl_lun *lun, const struct fl_lun_config *cfg)
{
	lun->cfg = *cfg;
	/* a personality's identity where the LUN sets none (vendor.c) */
	if (cfg->personality.name) {
		const char *v = NULL, *pr = NULL, *rev = NULL;

		fl_vendor_identity(cfg->personality.name, &v, &pr, &rev);
		lun->cfg.vendor = cfg->vendor ? cfg->vendor : v;
		lun->cfg.product = cfg->product ? cfg->product : pr;
		lun->cfg.revision = cfg->revision ? cfg->revision : rev;
		cfg = &lun->cfg; /* the strings copied below */
	}
	if (!dup_str(&lun->cfg.vendor, cfg->vendor) || !dup_str(&lun->cfg.product, cfg->product) ||
	    !dup_str(&lun->cfg.revision, cfg->revision) ||
	    !dup_str(&lun->cfg.serial, cfg->serial) ||
	    !dup_str(&lun->cfg.store_path, cfg->store_path))
		return -ENOMEM;
	if (cfg->vpd_raw_len) {
		uint8_t *raw = malloc(cfg->vpd_raw_len);
		if (!raw)
			return -ENOMEM;
		memcpy(raw, cfg->vpd_raw, cfg->vpd_raw_len);
		lun->cfg.vpd_raw = raw;
	} else {
		lun->cfg.vpd_raw = NULL;
	}
	return 0;
}

/* Sets the geometry, the thin pool, the target port groups and the mode pages' defaults. */
static void lun_apply_defaults(struct fl_lun *lun, const struct fl_lun_config *cfg)
{
	lun->num_blocks = cfg->num_blocks;
	lun->block_size = cfg->block_size;
	while ((1u << lun->block_shift) < cfg->block_size)
		lun->block_shift++;
	if (lun->cfg.thin && lun->cfg.pool_blocks == 0)
		lun->cfg.pool_blocks = cfg->num_blocks;
	if (lun->cfg.tpg_id == 0)
		lun->cfg.tpg_id = 1;
	if (lun->cfg.ntpgs == 0) {
		lun->cfg.ntpgs = 1;
		lun->cfg.tpgs[0].id = lun->cfg.tpg_id;
		lun->cfg.tpgs[0].state = cfg->alua_state;
	}
	for (unsigned i = 0; i < lun->cfg.ntpgs; i++)
		lun->tpg_state[i] = lun->cfg.tpgs[i].state;
	if (tpg_find(lun, lun->cfg.tpg_id) < 0)
		lun->cfg.tpg_id = lun->cfg.tpgs[0].id; /* a default group that is not listed */
	lun->mode.wce = cfg->write_cache;
	lun->mode.d_sense = cfg->d_sense;
	lun->mode_saved = lun->mode;
}

/* Opens the LUN's store of the configured kind; returns 0 or -errno (the store logs). */
static int lun_open_store(struct fl_lun *lun, const struct fl_lun_config *cfg)
{
	uint64_t bytes = cfg->num_blocks << lun->block_shift;
	int rc;

	if (cfg->store == FL_STORE_FILE)
		rc = store_file_open(cfg->store_path, cfg->store_dir, bytes, &lun->store);
	else if (cfg->store == FL_STORE_NULL)
		rc = store_null_open(bytes, &lun->store);
	else
		rc = store_mem_open(bytes, &lun->store);
	lun->cfg.store_dir = NULL; /* used only here; the caller's string */
	return rc;
}

/* Creates a thin LUN's map, with what a file store already holds mapped. */
static int lun_setup_thin(struct fl_lun *lun)
{
	int rc = thin_create(lun->cfg.num_blocks, &lun->thin);

	if (rc)
		return rc;
	/* a file store keeps its data: what it holds is mapped */
	if (lun->store->ops->mapped)
		return lun->store->ops->mapped(lun->store, lun->thin, lun->block_shift);
	return 0;
}

/* Creates a logical unit. */
int fl_lun_create(const struct fl_lun_config *cfg, struct fl_lun **out)
{
	const char *problem = fl_lun_config_problem(cfg);
	struct fl_lun *lun;
	int rc;

	*out = NULL;
	if (problem) {
		fl_log(FL_LOG_ERR, "bad LUN config: %s\n", problem);
		return -EINVAL;
	}
	lun = calloc(1, sizeof(*lun));
	if (!lun)
		return -ENOMEM;
	pthread_mutex_init(&lun->lock, NULL);
	pthread_cond_init(&lun->idle, NULL);
	pthread_cond_init(&lun->reads_done, NULL);
	rc = lun_copy_config(lun, cfg);
	if (rc)
		goto fail;
	cfg = &lun->cfg; /* the same settings, its strings the LUN's own */
	lun_apply_defaults(lun, cfg);
	rc = vendor_attach(lun);
	if (rc)
		goto fail;
	rc = lun_open_store(lun, cfg);
	if (rc)
		goto fail;
	if (lun->cfg.thin) {
		rc = lun_setup_thin(lun);
		if (rc)
			goto fail;
	}
	if (lun->store->async) {
		rc = lun_start_workers(lun);
		if (rc)
			goto fail;
	}
	*out = lun;
	return 0;
fail:
	/* the store logged its own errors; what is left is out of memory */
	if (rc == -ENOMEM)
		fl_log(FL_LOG_ERR, "cannot create LUN: out of memory\n");
	fl_lun_destroy(lun);
	return rc;
}

/* Waits for in-flight commands, closes the store, frees the LUN. */
void fl_lun_destroy(struct fl_lun *lun)
{
	struct nexus_state *ns, *next;

	if (!lun)
		return;
	lun_stop_workers(lun);
	free(lun->workers);
	if (lun->store) {
		/* an orderly shutdown destages the write cache, as a disk does */
		lun->store->ops->sync(lun->store);
		lun->store->ops->close(lun->store);
	}
	thin_destroy(lun->thin);
	vendor_detach(lun);
	dirty_clear(lun, 0, UINT64_MAX);
	dirty_free(lun);
	for (ns = lun->nexuses; ns; ns = next) {
		next = ns->next;
		free(ns->initiator);
		free(ns);
	}
	for (unsigned i = 0; i < lun->pr.nreg; i++)
		free(lun->pr.reg[i].initiator);
	free((char *)lun->cfg.vendor);
	free((char *)lun->cfg.product);
	free((char *)lun->cfg.revision);
	free((char *)lun->cfg.serial);
	free((char *)lun->cfg.store_path);
	free((uint8_t *)lun->cfg.vpd_raw);
	pthread_cond_destroy(&lun->idle);
	pthread_cond_destroy(&lun->reads_done);
	pthread_mutex_destroy(&lun->lock);
	free(lun);
}

/* CHECK CONDITION with the given sense in the LUN's current format. */
void fl_lun_set_sense(struct fl_lun *lun, struct fl_cmd *cmd, uint8_t key, uint8_t asc,
		      uint8_t ascq, bool info_valid, uint64_t info)
{
	bool desc = false;

	if (lun) {
		pthread_mutex_lock(&lun->lock);
		desc = lun->mode.d_sense;
		pthread_mutex_unlock(&lun->lock);
	}
	cmd->status = FL_STATUS_CHECK_CONDITION;
	cmd->sense_len = sense_encode(cmd->sense, desc, key, asc, ascq, info_valid, info, NULL);
}

/* Queues a UA for one nexus or all. */
void fl_lun_queue_ua(struct fl_lun *lun, uint64_t nexus_id, uint8_t asc, uint8_t ascq)
{
	pthread_mutex_lock(&lun->lock);
	if (nexus_id == FL_ALL_NEXUS) {
		lun_ua_all(lun, FL_ALL_NEXUS, asc, ascq);
	} else {
		for (struct nexus_state *ns = lun->nexuses; ns; ns = ns->next)
			if (ns->id == nexus_id)
				ua_push(ns, asc, ascq);
	}
	pthread_mutex_unlock(&lun->lock);
}

/* Whether lun_dispatch would report a pending UA for cmd (see fl_target.h). */
bool fl_lun_ua_pending(struct fl_lun *lun, const struct fl_cmd *cmd)
{
	const struct fl_opcode_desc *d;
	struct nexus_state *ns;
	bool pending = true; /* a nexus never seen starts with 29/00 (lun_nexus) */

	if (cmd->cdb_len == 0 || cmd->cdb_len > FL_CDB_MAX)
		return false;
	d = cdb_lookup(cmd->cdb, cmd->cdb_len);
	if (d && (d->flags & OPF_NO_UA))
		return false;
	pthread_mutex_lock(&lun->lock);
	for (ns = lun->nexuses; ns; ns = ns->next)
		if (ns->id == cmd->nexus.id) {
			pending = ns->ua_count > 0;
			break;
		}
	pthread_mutex_unlock(&lun->lock);
	return pending;
}

/* LUN RESET as seen by the logical unit (SAM-5 r21 6.3.3, SPC-4 r37 5.12.?). */
void fl_lun_reset(struct fl_lun *lun, uint64_t from_nexus, uint8_t asc, uint8_t ascq)
{
	pthread_mutex_lock(&lun->lock);
	/* SPC-2 reservations are released; persistent reservations survive */
	lun->pr.legacy_reserved = false;
	lun->mode = lun->mode_saved;
	lun->removal_prevented = false;
	for (struct nexus_state *ns = lun->nexuses; ns; ns = ns->next)
		ns->prevent_removal = false;
	lun_ua_all(lun, from_nexus, asc, ascq);
	pthread_mutex_unlock(&lun->lock);
}

/* Forgets a nexus and its pending UAs. */
void fl_lun_nexus_gone(struct fl_lun *lun, uint64_t nexus_id)
{
	pthread_mutex_lock(&lun->lock);
	for (struct nexus_state **pp = &lun->nexuses; *pp; pp = &(*pp)->next) {
		struct nexus_state *ns = *pp;

		if (ns->id == nexus_id) {
			*pp = ns->next;
			free(ns->initiator);
			free(ns);
			break;
		}
	}
	/* SPC-2 reservations do not outlive the I_T nexus that made them */
	if (lun->pr.legacy_reserved && lun->pr.legacy_holder == nexus_id)
		lun->pr.legacy_reserved = false;
	/* SPC-4 r37 6.13: an I_T nexus loss ends that nexus's prevention */
	lun->removal_prevented = false;
	for (struct nexus_state *ns = lun->nexuses; ns; ns = ns->next)
		lun->removal_prevented |= ns->prevent_removal;
	pthread_mutex_unlock(&lun->lock);
}

/*
 * Whether the LU keeps state of a nexus that a transport must not forget the
 * identity of: a persistent-reservation registration or reservation (SPC-4
 * r37 5.12), or a pending unit attention.
 */
bool fl_lun_nexus_in_use(struct fl_lun *lun, uint64_t nexus_id)
{
	bool used = false;

	pthread_mutex_lock(&lun->lock);
	for (unsigned i = 0; i < lun->pr.nreg && !used; i++)
		used = lun->pr.reg[i].nexus_id == nexus_id;
	if (lun->pr.reserved && lun->pr.holder_nexus == nexus_id)
		used = true;
	for (struct nexus_state *ns = lun->nexuses; ns && !used; ns = ns->next)
		used = ns->id == nexus_id && ns->ua_count;
	pthread_mutex_unlock(&lun->lock);
	return used;
}

/* Changes the capacity; UA 2A/09 for all. */
int fl_lun_resize(struct fl_lun *lun, uint64_t num_blocks)
{
	int rc;

	if (num_blocks == 0 || num_blocks > FL_LUN_MAX_BLOCKS)
		return -EINVAL;
	pthread_mutex_lock(&lun->lock);
	rc = lun->store->ops->resize(lun->store, num_blocks << lun->block_shift);
	if (rc == 0 && lun->thin)
		rc = thin_resize(lun->thin, num_blocks);
	if (rc == 0) {
		if (num_blocks < lun->num_blocks)
			dirty_clear(lun, num_blocks, UINT64_MAX - num_blocks);
		lun->num_blocks = num_blocks;
		/* SBC-3 r36 4.11: CAPACITY DATA HAS CHANGED */
		lun_ua_all(lun, FL_ALL_NEXUS, ASC_PARAMETERS_CHANGED,
			   ASCQ_CAPACITY_DATA_HAS_CHANGED);
	} else {
		fl_log(FL_LOG_ERR, "resize failed: %s\n", strerror(-rc));
	}
	pthread_mutex_unlock(&lun->lock);
	return rc;
}

/* Sets the ALUA state of the default group; UA 2A/06 for all. */
void fl_lun_set_alua_state(struct fl_lun *lun, enum fl_alua_state state)
{
	fl_lun_set_tpg_state(lun, lun->cfg.tpg_id, state);
}

/* Sets one group's state; UA 2A/06 for every nexus (SPC-4 r37 5.15.2.5). */
int fl_lun_set_tpg_state(struct fl_lun *lun, uint16_t tpg_id, enum fl_alua_state state)
{
	int i;

	pthread_mutex_lock(&lun->lock);
	i = tpg_find(lun, tpg_id);
	if (i >= 0)
		lun_set_tpg_state(lun, (unsigned)i, state, FL_ALL_NEXUS);
	pthread_mutex_unlock(&lun->lock);
	return i >= 0 ? 0 : -ENOENT;
}

/* The current state of one group. */
int fl_lun_tpg_state(struct fl_lun *lun, uint16_t tpg_id, enum fl_alua_state *state)
{
	int i;

	pthread_mutex_lock(&lun->lock);
	i = tpg_find(lun, tpg_id);
	if (i >= 0)
		*state = lun->tpg_state[i];
	pthread_mutex_unlock(&lun->lock);
	return i >= 0 ? 0 : -ENOENT;
}

/* Read-only facts about a LUN. */
void fl_lun_get_info(struct fl_lun *lun, struct fl_lun_info *info)
{
	pthread_mutex_lock(&lun->lock);
	info->num_blocks = lun->num_blocks;
	info->block_size = lun->block_size;
	info->thin = lun->cfg.thin;
	info->pool_blocks = lun->cfg.pool_blocks;
	info->mapped_blocks = lun->thin ? thin_mapped_count(lun->thin) : lun->num_blocks;
	info->write_cache = lun->mode.wce;
	info->alua_state = lun->tpg_state[tpg_find(lun, lun->cfg.tpg_id)]; /* the default group */
	info->read_only = lun->cfg.read_only;
	pthread_mutex_unlock(&lun->lock);
}
