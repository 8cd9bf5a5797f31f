/* SPDX-License-Identifier: MIT */
/*
 * handler.c - handler_faultlun.so: a tcmu-runner 1.5.4 handler serving a LUN
 * whose behaviour a faultlun scenario decides.
 *
 * Every SCSI command reaches the logical unit only through the fault engine
 * (fl_engine_submit). tcmu-runner 1.5.4 offers two ways in, and the handler
 * uses both (docs/tcmu.md, "Command routing", explains the choice):
 *
 *  - handle_cmd sees every CDB first and is synchronous: the device's command
 *    thread waits for its return value. READ/WRITE(10/12/16) inside the
 *    runner's idea of the capacity and SYNCHRONIZE CACHE(10/16) are declined
 *    (TCMU_STS_NOT_HANDLED) so that the runner's own path calls the read /
 *    write / flush callouts below. Everything else is submitted to the
 *    engine here and waited for (a delay or hold on such a command stalls the
 *    device's command thread, as it would stall a single-queue array).
 *  - the read/write/flush callouts (nr_threads == 0) run on the command
 *    thread, submit the original CDB to the engine and return TCMU_STS_OK at
 *    once; the engine's completion (inline, on its timer thread or on a store
 *    worker) calls tcmur_cmd_complete. A delayed or held READ therefore blocks
 *    nothing else on the LUN.
 *
 * A command the engine never answers (hold, drop, drop_response) stays with
 * the handler. LIO fails it after the device's attrib/cmd_time_out with
 * NOT READY 08/00 and a LUN reset waits until then (target_core_user); once
 * that time plus a grace period has passed the watchdog completes it towards
 * the runner (the kernel ignores the late answer), so that the ring slot and
 * the runner's in-flight count are released and the device can be removed.
 * With cmd_time_out = 0 such commands stay until `faultlun ctl release`.
 *
 * Statuses map onto libtcmu 1.5.4's TCMU_STS codes: GOOD -> OK, CHECK
 * CONDITION -> PASSTHROUGH_ERR with the engine's sense (first 96 bytes), BUSY
 * -> BUSY, TASK SET FULL -> NO_RESOURCE. RESERVATION CONFLICT has no code in
 * 1.5.4 and is reported as BUSY (with a warning in the runner's log). Data-in is copied into the
 * ring's iovec; a short transfer zero-fills the rest, since 1.5.4 cannot
 * report a residual.
 *
 * Log lines of the core and the engine (fl_log) go to tcmu-runner's own log
 * at their level, like the handler's own lines.
 *
 * read_only=1 in the cfgstring write-protects every LUN of the scenario, as
 * `faultlun serve --read-only` does; the core then answers WP in MODE SENSE
 * and DATA PROTECT 27/00 to every command that changes the medium (SBC-3 r36
 * 6.4.1), on either path.
 */
#include "fl_faults.h"
#include "fl_log.h"
#include "tcmu_abi.h"
#include "tcmu_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

/* Default directory of per-device control sockets and traces. */
#define RUN_DIR "/run/faultlun"
/* After the kernel's cmd_time_out, wait this long before answering an abandoned command. */
#define WATCHDOG_GRACE_MS 2000
/* How often the watchdog looks. */
#define WATCHDOG_TICK_MS 100
/* The clock of command start times: milliseconds are enough, and it costs less per command. */
#define WATCHDOG_CLOCK CLOCK_MONOTONIC_COARSE

struct dev_state;

/* Who answered a command towards the runner. */
enum req_answer {
	REQ_PENDING = 0,
	REQ_BY_ENGINE,	 /* the engine completed it with a response */
	REQ_BY_WATCHDOG, /* abandoned after cmd_time_out; answered with TIMEOUT */
};

/* One command in flight; two references: the engine's and the answering side's. */
struct req {
	struct fl_cmd fc;
	struct dev_state *d;
	struct tcmur_cmd *tcmur_cmd;
	bool async;	  /* came through a read/write/flush callout */
	bool engine_done; /* fc.done has run */
	enum req_answer answer;
	int refs;
	struct timespec start;
	struct req *prev, *next; /* on d->pending while answer == REQ_PENDING */
	uint8_t *buf;		 /* data of the command: points into data[], or NULL */
	uint32_t buf_len;
	uint8_t data[]; /* the bounce buffer, in the same allocation */
};

/* Which way a request's data moves; the callouts know it, handle_cmd decodes the CDB. */
enum req_dir {
	DIR_FROM_CDB = 0,
	DIR_NONE,
	DIR_IN,	 /* data-in: the engine fills buf, the answer copies it to the ring */
	DIR_OUT, /* data-out: the ring's data is copied to buf before submitting */
};

/* Everything a device owns; set with tcmur_dev_set_private. */
struct dev_state {
	struct tcmu_device *dev;
	struct cfgstr cfg;
	struct fl_scenario *sc;
	struct fl_stack stack; /* the engine and the control socket */
	struct fl_lun *lun;
	uint16_t lun_id;
	uint64_t nexus_id;
	char initiator[64];
	uint32_t block_size;
	uint64_t lun_blocks; /* capacity last told to the runner */
	bool size_dirty;     /* the kernel's dev_size still has to follow */
	int cmd_time_out_s;  /* the kernel's attrib/cmd_time_out; 0 = never */
	uint64_t next_tag;

	pthread_mutex_t lock;
	/*
	 * Answers for waiting handle_cmd calls. The watchdog sleeps on its own
	 * wd_cond: sharing one would make every synchronous completion wake the
	 * watchdog thread, which then fights the command thread for the lock.
	 */
	pthread_cond_t cond;
	pthread_cond_t wd_cond; /* watchdog stop */
	struct req pending;	/* list head */
	bool stop;
	bool watchdog_started;
	pthread_t watchdog;
};

static uint64_t nexus_counter;

/* Milliseconds between two CLOCK_MONOTONIC times. */
static int64_t ms_between(const struct timespec *a, const struct timespec *b)
{
	return (int64_t)(b->tv_sec - a->tv_sec) * 1000 + (b->tv_nsec - a->tv_nsec) / 1000000;
}

/* CDB length from the group code (SPC-4 4.2.5.1); 0 for reserved groups. */
static unsigned cdb_length(const uint8_t *cdb)
{
	switch (cdb[0] >> 5) {
	case 0:
		return 6;
	case 1:
	case 2:
		return 10;
	case 4:
		return 16;
	case 5:
		return 12;
	case 3:
		if (cdb[0] == SPC_OP_VARIABLE_LENGTH)
			return 8u + cdb[7];
		return 0;
	default:
		return 0;
	}
}

/* Total bytes described by an iovec. */
static size_t iov_total(const struct iovec *iov, size_t cnt)
{
	size_t n = 0;

	for (size_t i = 0; i < cnt; i++)
		n += iov[i].iov_len;
	return n;
}

/* Copies up to len bytes from an iovec into buf. */
static void iov_gather(uint8_t *buf, size_t len, const struct iovec *iov, size_t cnt)
{
	for (size_t i = 0; i < cnt && len; i++) {
		size_t n = iov[i].iov_len < len ? iov[i].iov_len : len;

		memcpy(buf, iov[i].iov_base, n);
		buf += n;
		len -= n;
	}
}

/* Copies len bytes of buf into an iovec and zero-fills the rest of it. */
static void iov_scatter(const struct iovec *iov, size_t cnt, const uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < cnt; i++) {
		size_t n = iov[i].iov_len < len ? iov[i].iov_len : len;

		memcpy(iov[i].iov_base, buf, n);
		memset((uint8_t *)iov[i].iov_base + n, 0, iov[i].iov_len - n);
		buf += n;
		len -= n;
	}
}

/* Drops one reference; the last one frees the request. Called without d->lock. */
static void req_put(struct req *r)
{
	if (__atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(r);
}

/* Unlinks r from the pending list and records who answered. Needs d->lock. */
static void req_claim(struct req *r, enum req_answer who)
{
	r->answer = who;
	r->prev->next = r->next;
	r->next->prev = r->prev;
	r->prev = r->next = r;
}

/*
 * Turns the engine's result into a TCMU status: sense into the ring command's
 * sense buffer, data-in into its iovec.
 */
static int req_result(struct req *r)
{
	struct tcmulib_cmd *lib = r->tcmur_cmd->lib_cmd;
	const struct fl_cmd *fc = &r->fc;

	if (fc->data_in && lib->iovec) {
		uint32_t n = fc->data_in_len < r->buf_len ? fc->data_in_len : r->buf_len;

		iov_scatter(lib->iovec, lib->iov_cnt, r->buf, n);
	}
	switch (fc->status) {
	case FL_STATUS_GOOD:
	case FL_STATUS_CONDITION_MET:
		return TCMU_STS_OK;
	case FL_STATUS_CHECK_CONDITION: {
		size_t n =
		    fc->sense_len < TCMU_SENSE_BUFFERSIZE ? fc->sense_len : TCMU_SENSE_BUFFERSIZE;

		memset(lib->sense_buf, 0, sizeof(lib->sense_buf));
		memcpy(lib->sense_buf, fc->sense, n);
		if (n > 7 && 8u + lib->sense_buf[7] > n)
			lib->sense_buf[7] =
			    (uint8_t)(n - 8); /* trim ADDITIONAL LENGTH to what fits */
		return TCMU_STS_PASSTHROUGH_ERR;
	}
	case FL_STATUS_TASK_SET_FULL:
		return TCMU_STS_NO_RESOURCE;
	case FL_STATUS_RESERVATION_CONFLICT:
		tcmu_abi_warn(r->d->dev, "RESERVATION CONFLICT cannot be reported by "
					 "tcmu-runner 1.5.4; answering BUSY\n");
		return TCMU_STS_BUSY;
	default:
		return TCMU_STS_BUSY;
	}
}

/* After any completion: if a scenario action changed the capacity, tell the runner. */
static void sync_capacity(struct dev_state *d)
{
	struct fl_lun_info info;

	fl_lun_get_info(d->lun, &info);
	/* the common case, unchanged, needs no lock; a change is checked again under it */
	if (info.num_blocks == __atomic_load_n(&d->lun_blocks, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&d->lock);
	if (info.num_blocks != d->lun_blocks) {
		__atomic_store_n(&d->lun_blocks, info.num_blocks, __ATOMIC_RELAXED);
		d->size_dirty = true;
		tcmu_dev_set_num_lbas(d->dev, info.num_blocks);
		pthread_cond_broadcast(&d->wd_cond); /* the watchdog writes dev_size */
	}
	pthread_mutex_unlock(&d->lock);
}

/* fl_cmd.done: runs inline in fl_engine_submit, on the engine's timer thread or a store worker. */
static void req_engine_done(struct fl_cmd *fc)
{
	struct req *r = fc->priv;
	struct dev_state *d = r->d;
	bool answer_now = false, stopping;

	pthread_mutex_lock(&d->lock);
	stopping = d->stop;
	r->engine_done = true;
	if (r->answer == REQ_PENDING && !fc->no_response) {
		req_claim(r, REQ_BY_ENGINE);
		answer_now = true;
		if (!r->async)
			pthread_cond_broadcast(&d->cond);
	}
	pthread_mutex_unlock(&d->lock);

	if (!stopping)
		sync_capacity(d);
	if (answer_now && r->async) {
		int sts = req_result(r);
		struct tcmur_cmd *tc = r->tcmur_cmd;

		r->tcmur_cmd = NULL;
		tcmur_cmd_complete(d->dev, tc, sts);
		req_put(r); /* the answering side's reference */
	}
	req_put(r); /* the engine's reference */
}

/*
 * Builds a request for a ring command; NULL when out of memory. The data is
 * always copied through the request's own buffer, never used in place: a
 * command the engine holds or delays may run after the watchdog has answered
 * it and the runner has reused the ring's data area.
 */
static struct req *req_new(struct dev_state *d, struct tcmur_cmd *tc, bool async, enum req_dir dir)
{
	struct tcmulib_cmd *lib = tc->lib_cmd;
	unsigned len = cdb_length(lib->cdb);
	size_t xfer = iov_total(lib->iovec, lib->iov_cnt);
	struct req *r;

	if (len == 0 || len > FL_CDB_MAX)
		len = len == 0 ? 6 : FL_CDB_MAX; /* the core answers 20/00 for these */
	struct fl_cdb_info info;
	bool decoded = false;

	if (dir == DIR_FROM_CDB) {
		(void)fl_cdb_decode(lib->cdb, len, &info); /* as fl_cmd_decode: known or not */
		decoded = true;
		dir = info.data_out ? DIR_OUT : info.data_in ? DIR_IN : DIR_NONE;
	}
	if (xfer > UINT32_MAX)
		xfer = UINT32_MAX;
	if (dir == DIR_NONE)
		xfer = 0;
	r = malloc(sizeof(*r) + xfer);
	if (!r)
		return NULL;
	memset(r, 0, sizeof(*r));
	r->d = d;
	r->tcmur_cmd = tc;
	r->async = async;
	r->refs = 2;
	r->prev = r->next = r;
	memcpy(r->fc.cdb, lib->cdb, len);
	r->fc.cdb_len = (uint8_t)len;
	if (decoded) {
		/* the decode travels with the command: the engine and core reuse it */
		r->fc.info = info;
		r->fc.decoded = true;
	}
	r->fc.nexus.id = d->nexus_id;
	r->fc.nexus.initiator = d->initiator;
	r->fc.nexus.rel_port_id = 1;
	r->fc.done = req_engine_done;
	r->fc.priv = r;
	if (xfer) {
		r->buf = r->data;
		r->buf_len = (uint32_t)xfer;
		if (dir == DIR_OUT) {
			iov_gather(r->buf, xfer, lib->iovec, lib->iov_cnt);
			r->fc.data_out = r->buf;
			r->fc.data_out_len = r->buf_len;
		} else {
			r->fc.data_in = r->buf;
			r->fc.data_in_cap = r->buf_len;
		}
	}
	clock_gettime(WATCHDOG_CLOCK, &r->start);
	pthread_mutex_lock(&d->lock);
	r->fc.tag = ++d->next_tag;
	r->next = &d->pending;
	r->prev = d->pending.prev;
	d->pending.prev->next = r;
	d->pending.prev = r;
	pthread_mutex_unlock(&d->lock);
	return r;
}

/* Unlocks a mutex; cleanup handler for a cancelled wait. */
static void unlock_mutex(void *m)
{
	pthread_mutex_unlock(m);
}

/* Submits a command through the engine and waits for its answer (handle_cmd path). */
static int submit_and_wait(struct dev_state *d, struct tcmur_cmd *tc)
{
	struct req *r = req_new(d, tc, false, DIR_FROM_CDB);
	int sts;

	if (!r)
		return TCMU_STS_NO_RESOURCE;
	fl_engine_submit(d->stack.engine, d->lun_id, &r->fc);

	pthread_mutex_lock(&d->lock);
	pthread_cleanup_push(unlock_mutex, &d->lock);
	while (r->answer == REQ_PENDING)
		pthread_cond_wait(&d->cond, &d->lock);
	pthread_cleanup_pop(0);
	pthread_mutex_unlock(&d->lock);

	sts = r->answer == REQ_BY_ENGINE ? req_result(r) : TCMU_STS_TIMEOUT;
	r->tcmur_cmd = NULL;
	req_put(r);
	return sts;
}

/*
 * Submits a command through the engine; the completion answers it (callout
 * path). The runner calls a callout only for the CDBs takes_async_path lets
 * through, so the callout says which way the data goes.
 */
static int submit_async(struct tcmu_device *dev, struct tcmur_cmd *tc, enum req_dir dir)
{
	struct dev_state *d = tcmur_dev_get_private(dev);
	struct req *r = req_new(d, tc, true, dir);

	if (!r)
		return TCMU_STS_NO_RESOURCE;
	fl_engine_submit(d->stack.engine, d->lun_id, &r->fc);
	return TCMU_STS_OK; /* r and tc may already be gone */
}

/* True when the runner's own READ/WRITE/SYNC path will hand this CDB to a callout unchanged. */
static bool takes_async_path(struct dev_state *d, const struct tcmulib_cmd *lib)
{
	struct fl_cdb_info info;
	unsigned len = cdb_length(lib->cdb);

	switch (lib->cdb[0]) {
	case SBC_OP_SYNC_CACHE_10:
	case SBC_OP_SYNC_CACHE_16:
		return true; /* handle_flush: no checks before the callout */
	case SBC_OP_READ_10:
	case SBC_OP_READ_12:
	case SBC_OP_READ_16:
	case SBC_OP_WRITE_10:
	case SBC_OP_WRITE_12:
	case SBC_OP_WRITE_16:
		break;
	default:
		return false;
	}
	if (fl_cdb_decode(lib->cdb, len, &info) || !info.has_lba)
		return false;
	/*
	 * The runner refuses a range past its capacity (21/00) or an iovec that
	 * disagrees with the transfer length (44/00) before any callout: such
	 * commands go through the engine here, so that rules on them still apply.
	 */
	if (info.lba + info.nblocks < info.lba ||
	    info.lba + info.nblocks > tcmu_dev_get_num_lbas(d->dev))
		return false;
	return iov_total(lib->iovec, lib->iov_cnt) == (uint64_t)info.nblocks * d->block_size;
}

/* handle_cmd: everything but the asynchronous READ/WRITE/SYNC is executed here. */
static int fl_tcmu_handle_cmd(struct tcmu_device *dev, struct tcmur_cmd *tc)
{
	struct dev_state *d = tcmur_dev_get_private(dev);

	if (takes_async_path(d, tc->lib_cmd))
		return TCMU_STS_NOT_HANDLED;
	return submit_and_wait(d, tc);
}

/* read callout: the original READ CDB goes through the engine. */
static int fl_tcmu_read(struct tcmu_device *dev, struct tcmur_cmd *tc, struct iovec *iov,
			size_t iov_cnt, size_t len, off_t off)
{
	(void)iov, (void)iov_cnt, (void)len, (void)off;
	return submit_async(dev, tc, DIR_IN);
}

/* write callout: the original WRITE CDB (FUA included) goes through the engine. */
static int fl_tcmu_write(struct tcmu_device *dev, struct tcmur_cmd *tc, struct iovec *iov,
			 size_t iov_cnt, size_t len, off_t off)
{
	(void)iov, (void)iov_cnt, (void)len, (void)off;
	return submit_async(dev, tc, DIR_OUT);
}

/* flush callout: the original SYNCHRONIZE CACHE CDB goes through the engine. */
static int fl_tcmu_flush(struct tcmu_device *dev, struct tcmur_cmd *tc)
{
	return submit_async(dev, tc, DIR_NONE);
}

/*
 * Watchdog: answers commands abandoned past the kernel's cmd_time_out and
 * brings the kernel's dev_size in line after a capacity change.
 */
static void *watchdog_main(void *arg)
{
	struct dev_state *d = arg;

	pthread_mutex_lock(&d->lock);
	while (!d->stop) {
		struct timespec now, until;
		struct req *r, *next;
		struct req *expired = NULL;

		clock_gettime(WATCHDOG_CLOCK, &now);
		for (r = d->pending.next; d->cmd_time_out_s > 0 && r != &d->pending; r = next) {
			next = r->next;
			if (ms_between(&r->start, &now) <
			    (int64_t)d->cmd_time_out_s * 1000 + WATCHDOG_GRACE_MS)
				continue;
			req_claim(r, REQ_BY_WATCHDOG);
			tcmu_abi_warn(d->dev,
				      "command tag %" PRIu64 " given up after cmd_time_out %d s\n",
				      r->fc.tag, d->cmd_time_out_s);
			if (r->async) {
				r->next = expired; /* singly linked; off the pending list now */
				expired = r;
			} else {
				pthread_cond_broadcast(&d->cond);
			}
		}
		if (d->size_dirty) {
			uint64_t bytes = d->lun_blocks * d->block_size;

			d->size_dirty = false;
			pthread_mutex_unlock(&d->lock);
			if (tcmu_cfgfs_dev_set_ctrl_u64(d->dev, "dev_size", bytes)) {
				tcmu_abi_warn(d->dev, "could not set dev_size=%" PRIu64 "\n",
					      bytes);
			}
			pthread_mutex_lock(&d->lock);
		}
		while (expired) {
			struct tcmur_cmd *tc;

			r = expired;
			expired = r->next;
			r->prev = r->next = r;
			tc = r->tcmur_cmd;
			r->tcmur_cmd = NULL;
			pthread_mutex_unlock(&d->lock);
			tcmur_cmd_complete(d->dev, tc, TCMU_STS_TIMEOUT);
			req_put(r);
			pthread_mutex_lock(&d->lock);
		}
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += WATCHDOG_TICK_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&d->wd_cond, &d->lock, &until);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

/* Formats a scenario's problems as one line each, into a malloc'ed reason. */
static char *diags_reason(const char *what, const struct fl_diags *dg)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	fprintf(f, "%s", what);
	for (size_t i = 0; i < dg->n; i++)
		fprintf(f, "%s%s:%d:%d: %s", i ? "; " : ": ", dg->v[i].file ? dg->v[i].file : "?",
			dg->v[i].line, dg->v[i].col, dg->v[i].msg ? dg->v[i].msg : "");
	fclose(f);
	return text;
}

/*
 * Loads the scenario a configuration names, for TCMU, and picks the LUN.
 * Returns 0, or -errno with *reason set (malloc'ed).
 */
static int load_config(const struct cfgstr *cfg, struct fl_scenario **out, uint16_t *lun_id,
		       char **reason)
{
	struct fl_diags dg = {0};
	struct fl_scenario *sc = NULL;
	struct fl_lun_config lc;
	unsigned i, n;
	int rc;

	rc = fl_scenario_load_file(cfg->scenario, FL_FE_TCMU, &sc, &dg);
	if (rc == -EINVAL) {
		*reason = diags_reason("scenario is not valid for tcmu", &dg);
		fl_diags_free(&dg);
		return rc;
	}
	fl_diags_free(&dg);
	if (rc) {
		if (asprintf(reason, "cannot read scenario %s: %s", cfg->scenario, strerror(-rc)) <
		    0)
			*reason = NULL;
		return rc;
	}
	n = fl_scenario_lun_count(sc);
	for (i = 0; i < n; i++) {
		uint16_t id;

		if (fl_scenario_lun(sc, i, &id, &lc))
			continue;
		if (!cfg->lun_set || id == cfg->lun) {
			*lun_id = id;
			*out = sc;
			return 0;
		}
	}
	if (asprintf(reason, "scenario %s has no LUN %u", cfg->scenario, cfg->lun) < 0)
		*reason = NULL;
	fl_scenario_free(sc);
	return -ENOENT;
}

/* Checks that the directory holding path exists. */
static int parent_dir_exists(const char *path)
{
	char dir[CFGSTR_MAX + 1];
	char *slash;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return 0;
	if (slash == dir)
		slash[1] = '\0';
	else
		*slash = '\0';
	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode);
}

/* check_config: refuses a configuration that could not open, saying why. */
static bool fl_tcmu_check_config(const char *cfgstring, char **reason)
{
	struct cfgstr cfg;
	struct fl_scenario *sc = NULL;
	uint16_t lun_id;

	*reason = NULL;
	if (cfgstr_parse(cfgstring, &cfg, reason))
		return false;
	if (load_config(&cfg, &sc, &lun_id, reason))
		return false;
	fl_scenario_free(sc);
	if (cfg.store == FL_STORE_FILE && cfg.store_set && !parent_dir_exists(cfg.store_path)) {
		if (asprintf(reason, "store: directory of %s does not exist", cfg.store_path) < 0)
			*reason = NULL;
		return false;
	}
	if (cfg.trace[0] && !parent_dir_exists(cfg.trace)) {
		if (asprintf(reason, "trace: directory of %s does not exist", cfg.trace) < 0)
			*reason = NULL;
		return false;
	}
	return true;
}

/* Frees a device's state (engine first: it completes what it still holds). */
static void dev_state_free(struct dev_state *d)
{
	pthread_mutex_lock(&d->lock);
	d->stop = true;
	pthread_cond_broadcast(&d->wd_cond);
	pthread_mutex_unlock(&d->lock);
	if (d->watchdog_started)
		pthread_join(d->watchdog, NULL);
	if (d->stack.engine && d->watchdog_started)
		fl_engine_conn_event(d->stack.engine, FL_CONN_DEVICE_CLOSE, d->nexus_id,
				     d->initiator);
	fl_stack_close(&d->stack);
	if (d->sc)
		fl_scenario_free(d->sc);
	/* The runner drained its commands before close; anything left was never answered. */
	while (d->pending.next != &d->pending) {
		struct req *r = d->pending.next;

		req_claim(r, REQ_BY_WATCHDOG);
		tcmu_abi_warn(d->dev, "command tag %" PRIu64 " still pending at close\n",
			      r->fc.tag);
		if (r->engine_done)
			free(r);
	}
	pthread_cond_destroy(&d->wd_cond);
	pthread_cond_destroy(&d->cond);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

/* Makes the default run directory (mode 0700) when a default path needs it. */
static void ensure_run_dir(void)
{
	if (mkdir(RUN_DIR, 0700) && errno != EEXIST)
		tcmu_abi_warn(NULL, "cannot create %s: %s\n", RUN_DIR, strerror(errno));
}

/* A device's state before its configuration is read: locks, nexus, initiator name. */
static struct dev_state *dev_state_new(struct tcmu_device *dev, const char *uio)
{
	struct dev_state *d = calloc(1, sizeof(*d));
	pthread_condattr_t ca;

	if (!d)
		return NULL;
	d->dev = dev;
	d->pending.next = d->pending.prev = &d->pending;
	pthread_mutex_init(&d->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->cond, &ca);
	pthread_cond_init(&d->wd_cond, &ca);
	pthread_condattr_destroy(&ca);
	d->nexus_id = __atomic_add_fetch(&nexus_counter, 1, __ATOMIC_RELAXED);
	snprintf(d->initiator, sizeof(d->initiator), "tcmu:%s", uio ? uio : "?");
	return d;
}

/*
 * The stack's accept hook: the device's LUN in the built engine, its block
 * size checked against the device's and its capacity served as the
 * scenario's, before the control socket opens.
 */
static int dev_take_lun(struct fl_engine *e, void *arg)
{
	struct dev_state *d = arg;
	struct tcmu_device *dev = d->dev;
	struct fl_lun_info info;

	d->lun = fl_target_lun(fl_engine_target(e), d->lun_id);
	if (!d->lun) {
		tcmu_abi_err(dev, "faultlun: engine has no LUN %u\n", d->lun_id);
		return -ENOENT;
	}
	fl_lun_get_info(d->lun, &info);
	d->block_size = tcmu_dev_get_block_size(dev);
	if (info.block_size != d->block_size) {
		tcmu_abi_err(dev,
			     "faultlun: scenario block_size %u but the device's hw_block_size is "
			     "%u; set attrib/hw_block_size=%u before enabling the device\n",
			     info.block_size, d->block_size, info.block_size);
		return -EINVAL;
	}
	/* The LUN's capacity is the scenario's; the runner's range checks follow it. */
	d->lun_blocks = info.num_blocks;
	if (tcmu_dev_get_num_lbas(dev) != info.num_blocks) {
		tcmu_abi_info(dev,
			      "faultlun: dev_size %" PRIu64 " differs from the scenario's %" PRIu64
			      " bytes; serving the scenario's\n",
			      tcmu_dev_get_num_lbas(dev) * d->block_size,
			      info.num_blocks * d->block_size);
		tcmu_dev_set_num_lbas(dev, info.num_blocks);
		d->size_dirty = true;
	}
	d->cmd_time_out_s = tcmu_cfgfs_dev_get_attr_int(dev, "cmd_time_out");
	if (d->cmd_time_out_s < 0)
		d->cmd_time_out_s = 0;
	return 0;
}

/*
 * The device's stack options from its cfgstring: seed, store, the trace and
 * control socket paths (default ones under RUN_DIR, named after the uio
 * device; each buffer CFGSTR_MAX + 64 bytes).
 */
static void dev_stack_options(struct dev_state *d, const char *uio, char *trace_path,
			      char *ctl_path, struct fl_stack_opts *so)
{
	struct fl_engine_opts *opts = &so->engine;
	const size_t len = CFGSTR_MAX + 64;

	memset(so, 0, sizeof(*so));
	opts->frontend = FL_FE_TCMU;
	opts->scenario_file = d->cfg.scenario; /* its store paths: beneath its directory */
	opts->seed_set = d->cfg.seed_set;
	opts->seed = d->cfg.seed;
	if (d->cfg.store_set) {
		opts->store_override = true;
		opts->store = d->cfg.store;
		opts->store_path = d->cfg.store == FL_STORE_FILE ? d->cfg.store_path : NULL;
		opts->size_override = d->cfg.store_size;
	}
	if (!d->cfg.trace_off) {
		if (d->cfg.trace[0]) {
			snprintf(trace_path, len, "%s", d->cfg.trace);
		} else {
			ensure_run_dir();
			snprintf(trace_path, len, RUN_DIR "/%s.trace", uio);
		}
		opts->trace_path = trace_path;
	}
	if (!d->cfg.ctl_off) {
		if (d->cfg.ctl[0]) {
			snprintf(ctl_path, len, "%s", d->cfg.ctl);
		} else {
			ensure_run_dir();
			snprintf(ctl_path, len, RUN_DIR "/%s.sock", uio);
		}
		so->ctl_path = ctl_path;
	}
	so->accept = dev_take_lun;
	so->accept_arg = d;
}

/* Opens the device's stack, saying what failed in the runner's log; 0 or -errno. */
static int dev_open_stack(struct dev_state *d, const struct fl_stack_opts *so)
{
	int rc = fl_stack_open(d->sc, so, &d->stack);

	if (rc && d->stack.failed == FL_STACK_ENGINE)
		tcmu_abi_err(d->dev, "faultlun: cannot build the LUNs of %s: %s\n", d->cfg.scenario,
			     strerror(-rc));
	else if (rc && d->stack.failed == FL_STACK_CTL)
		tcmu_abi_err(d->dev, "faultlun: control socket %s: %s\n", so->ctl_path,
			     strerror(-rc));
	return rc;
}

/* open: builds the engine and the LUN for this device, its trace and control socket. */
static int fl_tcmu_open(struct tcmu_device *dev, bool reopen)
{
	struct dev_state *d;
	struct fl_stack_opts so;
	struct fl_lun_info info;
	char trace_path[CFGSTR_MAX + 64], ctl_path[CFGSTR_MAX + 64];
	const char *uio = tcmu_dev_get_uio_name(dev);
	char *reason = NULL;
	int rc;

	d = dev_state_new(dev, uio);
	if (!d)
		return -ENOMEM;
	rc = cfgstr_parse(tcmu_dev_get_cfgstring(dev), &d->cfg, &reason);
	if (!rc)
		rc = load_config(&d->cfg, &d->sc, &d->lun_id, &reason);
	if (rc) {
		tcmu_abi_err(dev, "faultlun: %s\n", reason ? reason : "bad configuration");
		free(reason);
		goto fail;
	}
	if (d->cfg.read_only)
		fl_scenario_set_read_only(d->sc);
	dev_stack_options(d, uio, trace_path, ctl_path, &so);
	rc = dev_open_stack(d, &so);
	if (rc)
		goto fail;
	rc = -pthread_create(&d->watchdog, NULL, watchdog_main, d);
	if (rc)
		goto fail;
	d->watchdog_started = true;

	tcmur_dev_set_private(dev, d);
	fl_engine_conn_event(d->stack.engine, FL_CONN_DEVICE_OPEN, d->nexus_id, d->initiator);
	fl_lun_get_info(d->lun, &info);
	tcmu_abi_info(dev,
		      "faultlun: %s%s LUN %u%s, %" PRIu64 " blocks of %u, cmd_time_out %d s, "
		      "ctl %s\n",
		      reopen ? "reopened " : "", fl_scenario_name(d->sc), d->lun_id,
		      info.read_only ? " (write-protected)" : "", info.num_blocks, info.block_size,
		      d->cmd_time_out_s, d->cfg.ctl_off ? "none" : ctl_path);
	return 0;
fail:
	dev_state_free(d);
	return rc ? rc : -EINVAL;
}

/* close: the runner has drained the device; tear everything down. */
static void fl_tcmu_close(struct tcmu_device *dev)
{
	struct dev_state *d = tcmur_dev_get_private(dev);

	if (!d)
		return;
	tcmur_dev_set_private(dev, NULL);
	dev_state_free(d);
}

/*
 * reconfig: a new dev_size from configfs resizes the LUN through the engine
 * (its crosses_end rules follow; the core queues UA 2A/09). A new cfgstring
 * or write-cache setting is refused: load another scenario through the
 * control socket instead.
 */
static int fl_tcmu_reconfig(struct tcmu_device *dev, struct tcmulib_cfg_info *cfg)
{
	struct dev_state *d = tcmur_dev_get_private(dev);

	if (!d)
		return -ENODEV;
	switch (cfg->type) {
	case TCMULIB_CFG_DEV_SIZE: {
		uint64_t blocks = cfg->data.dev_size / d->block_size;
		int rc;

		if (cfg->data.dev_size % d->block_size) {
			tcmu_abi_err(dev,
				     "faultlun: dev_size %llu is not a multiple of the block size "
				     "%u; the size is unchanged\n",
				     (unsigned long long)cfg->data.dev_size, d->block_size);
			return -EINVAL;
		}
		pthread_mutex_lock(&d->lock);
		if (blocks == d->lun_blocks) {
			pthread_mutex_unlock(&d->lock);
			return 0;
		}
		pthread_mutex_unlock(&d->lock);
		rc = fl_engine_resize(d->stack.engine, d->lun_id, blocks);
		if (rc)
			return rc;
		pthread_mutex_lock(&d->lock);
		__atomic_store_n(&d->lun_blocks, blocks, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&d->lock);
		return 0;
	}
	default:
		return -EOPNOTSUPP;
	}
}

static struct tcmur_handler faultlun_handler = {
    .name = "faultlun: SCSI target emulator with fault injection",
    .subtype = CFGSTR_SUBTYPE,
    .cfg_desc = "scenario=/abs/path.json[;store=memory|memory:SIZE|file:/abs/path]"
		"[;lun=N][;seed=N][;trace=/abs/path|none][;ctl=/abs/path|none][;read_only=1|0]",
    .check_config = fl_tcmu_check_config,
    .reconfig = fl_tcmu_reconfig,
    .open = fl_tcmu_open,
    .close = fl_tcmu_close,
    .nr_threads = 0,
    .handle_cmd = fl_tcmu_handle_cmd,
    .read = fl_tcmu_read,
    .write = fl_tcmu_write,
    .flush = fl_tcmu_flush,
};

/*
 * fl_log sink: the core's and the engine's lines go to tcmu-runner's log at
 * their own level (the runner's log_level setting filters them, not fl_log).
 */
static void tcmu_log_sink(enum fl_log_level level, const char *msg, void *arg)
{
	(void)arg;
	switch (level) {
	case FL_LOG_ERR:
		tcmu_abi_err(NULL, "faultlun: %s\n", msg);
		break;
	case FL_LOG_WARN:
		tcmu_abi_warn(NULL, "faultlun: %s\n", msg);
		break;
	case FL_LOG_INFO:
		tcmu_abi_info(NULL, "faultlun: %s\n", msg);
		break;
	default:
		tcmu_abi_dbg(NULL, "faultlun: %s\n", msg);
		break;
	}
}

/* Entry point called by tcmu-runner after dlopen; the only exported symbol. */
EXPORT int handler_init(void)
{
	fl_log_set_sink(tcmu_log_sink, NULL);
	fl_log_set_level(FL_LOG_DEBUG);
	return tcmur_register_handler(&faultlun_handler);
}
