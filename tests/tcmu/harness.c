/* SPDX-License-Identifier: MIT */
/*
 * harness.c - drives handler_faultlun.so the way tcmu-runner 1.5.4 does,
 * without a kernel.
 *
 * The executable exports stand-ins for the tcmu-runner / libtcmu symbols the
 * handler imports (built with ENABLE_EXPORTS, so dlopen resolves them here),
 * dlopens the built handler, calls handler_init and drives the registered
 * struct tcmur_handler: check_config (good and bad strings, a scenario with
 * errors), open, handle_cmd, and the runner's own READ/WRITE/SYNC path that
 * calls the read/write/flush callouts and waits for tcmur_cmd_complete. It
 * checks status, sense, data, delays, holds (released by the watchdog after
 * the device's cmd_time_out) and that a held or delayed command does not block
 * unrelated commands on the same LUN, and that read_only=1 write-protects the
 * device (SBC-3 r36 6.4.1: WP in MODE SENSE, DATA PROTECT 27/00 on writes),
 * that a configfs resize goes through the engine (crosses_end rules follow the
 * new capacity) and that log lines reach the runner's log at their level.
 *
 *   tcmu_harness HANDLER.so [TEST...]     exit 0 pass, 1 fail, 77 skip
 */
#include "fl_byteorder.h"
#include "fl_test.h"
#include "standin.h"
#include "tcmu_abi.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static void *dl;
static char tmpdir[256];
static bool verbose;
static uint8_t last_sense[TCMU_SENSE_BUFFERSIZE]; /* sense of the last run() */

/* Milliseconds since an arbitrary monotonic origin. */
static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the runner's command path, as tcmu-runner 1.5.4 runs it ---- */

/* One command in flight, with the allocation layout the runner uses. */
struct hcmd {
	struct tcmulib_cmd lib;
	struct tcmur_cmd tc;
	uint8_t cdb[16];
	struct iovec iov[2];
	uint8_t *data;
	size_t len;
	pthread_mutex_t m;
	pthread_cond_t c;
	bool completed;
	bool async;
	int status;
	int64_t t_submit, t_done;
};

/* tcmur_cmd.done as the runner's handle_generic_cbk would use it. */
static void hcmd_done(struct tcmu_device *dev, struct tcmur_cmd *tc, int rc)
{
	struct hcmd *h = (struct hcmd *)((uint8_t *)tc - offsetof(struct hcmd, tc));

	(void)dev;
	pthread_mutex_lock(&h->m);
	h->status = rc;
	h->completed = true;
	h->t_done = now_ms();
	pthread_cond_broadcast(&h->c);
	pthread_mutex_unlock(&h->m);
}

/* Builds a command over a data buffer split into two iovecs (checks scatter/gather). */
static struct hcmd *hcmd_new(const uint8_t *cdb, size_t cdb_len, size_t len)
{
	struct hcmd *h = calloc(1, sizeof(*h));

	memcpy(h->cdb, cdb, cdb_len);
	h->data = calloc(1, len ? len : 1);
	h->len = len;
	h->iov[0].iov_base = h->data;
	h->iov[0].iov_len = len / 3;
	h->iov[1].iov_base = h->data + len / 3;
	h->iov[1].iov_len = len - len / 3;
	h->lib.cdb = h->cdb;
	h->lib.iovec = h->iov;
	h->lib.iov_cnt = len ? 2 : 0;
	h->lib.hm_private = &h->tc;
	h->tc.lib_cmd = &h->lib;
	pthread_mutex_init(&h->m, NULL);
	pthread_cond_init(&h->c, NULL);
	return h;
}

/* Frees a command that has completed (or was never started). */
static void hcmd_free(struct hcmd *h)
{
	pthread_mutex_destroy(&h->m);
	pthread_cond_destroy(&h->c);
	free(h->data);
	free(h);
}

/*
 * Starts a command as tcmu-runner's generic path does: handle_cmd first; on
 * NOT_HANDLED the READ/WRITE/SYNCHRONIZE CACHE callouts, which may answer later.
 */
static void hcmd_start(struct tcmu_device *dev, struct hcmd *h)
{
	int rc;

	h->t_submit = now_ms();
	rc = standin_handler->handle_cmd(dev, &h->tc);
	if (rc == TCMU_STS_NOT_HANDLED) {
		uint64_t lba = 0;

		h->tc.done = hcmd_done;
		switch (h->cdb[0]) {
		case 0x28:
		case 0x2a:
			lba = (uint64_t)h->cdb[2] << 24 | h->cdb[3] << 16 | h->cdb[4] << 8 |
			      h->cdb[5];
			break;
		default:
			break;
		}
		h->async = true;
		switch (h->cdb[0]) {
		case 0x28:
		case 0xa8:
		case 0x88:
			rc = standin_handler->read(dev, &h->tc, h->iov, h->lib.iov_cnt, h->len,
						   (off_t)(lba * dev->block_size));
			break;
		case 0x2a:
		case 0xaa:
		case 0x8a:
			rc = standin_handler->write(dev, &h->tc, h->iov, h->lib.iov_cnt, h->len,
						    (off_t)(lba * dev->block_size));
			break;
		case 0x35:
		case 0x91:
			rc = standin_handler->flush(dev, &h->tc);
			break;
		default:
			rc = TCMU_STS_INVALID_CMD; /* the runner's emulation is not modelled */
			break;
		}
		if (rc == TCMU_STS_OK)
			return; /* queued: tcmur_cmd_complete answers */
	}
	hcmd_done(dev, &h->tc, rc);
}

/* Waits up to ms for a command's answer; returns whether it came. */
static bool hcmd_wait(struct hcmd *h, int ms)
{
	struct timespec until;
	bool done;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&h->m);
	while (!h->completed)
		if (pthread_cond_timedwait(&h->c, &h->m, &until) == ETIMEDOUT)
			break;
	done = h->completed;
	pthread_mutex_unlock(&h->m);
	return done;
}

/* Runs one command to completion (at most 5 s); returns its status or -100 on timeout. */
static int run(struct tcmu_device *dev, const uint8_t *cdb, size_t cdb_len, uint8_t *data,
	       size_t len)
{
	struct hcmd *h = hcmd_new(cdb, cdb_len, len);
	int rc;

	if (data)
		memcpy(h->data, data, len);
	hcmd_start(dev, h);
	if (!hcmd_wait(h, 5000))
		return -100; /* leaks h on purpose: the handler may still own it */
	rc = h->status;
	if (data)
		memcpy(data, h->data, len);
	memcpy(last_sense, h->lib.sense_buf, sizeof(last_sense));
	if (verbose && rc == TCMU_STS_PASSTHROUGH_ERR)
		fprintf(stderr, "  cdb %02x: CHECK CONDITION, sense %02x %02x .. %02x %02x %02x\n",
			cdb[0], last_sense[0], last_sense[2], last_sense[12], last_sense[13],
			last_sense[1]);
	hcmd_free(h);
	return rc;
}

/* ---- fixtures ---- */

static const char scenario_good[] =
    "{\n"
    "  \"faultlun\": 1,\n"
    "  \"name\": \"tcmu-harness\",\n"
    "  \"frontends\": [\"tcmu\"],\n"
    "  \"seed\": 7,\n"
    "  \"luns\": [ { \"lun\": 0, \"size\": \"8MiB\", \"block_size\": 512,\n"
    "              \"vendor\": \"FLHARN\", \"product\": \"TCMU-HARNESS\",\n"
    "              \"serial\": \"H0001\", \"store\": { \"kind\": \"memory\" } } ],\n"
    "  \"rules\": [\n"
    "    { \"id\": \"bad-sectors\", \"match\": { \"class\": [\"read\"],\n"
    "        \"lba\": { \"first\": 100, \"last\": 107 } },\n"
    "      \"action\": { \"sense\": \"MEDIUM_ERROR/UNRECOVERED_READ_ERROR\", \"info\": \"lba\" } "
    "},\n"
    "    { \"id\": \"slow-read\", \"match\": { \"class\": [\"read\"],\n"
    "        \"lba\": { \"first\": 200, \"last\": 200 } },\n"
    "      \"action\": { \"delay_ms\": 1000 } },\n"
    "    { \"id\": \"hung-write\", \"match\": { \"class\": [\"write\"],\n"
    "        \"lba\": { \"first\": 300, \"last\": 300 } },\n"
    "      \"action\": { \"hold\": \"until_release\" } },\n"
    "    { \"id\": \"busy-flush\", \"match\": { \"class\": [\"flush\"], \"times\": 1 },\n"
    "      \"action\": { \"status\": \"busy\" } },\n"
    "    { \"id\": \"full-verify\", \"match\": { \"opcode\": \"0x2f\" },\n"
    "      \"action\": { \"status\": \"task_set_full\" } },\n"
    "    { \"id\": \"hung-prefetch\", \"match\": { \"opcode\": \"0x34\" },\n"
    "      \"action\": { \"hold\": \"until_release\" } }\n"
    "  ]\n"
    "}\n";

static const char scenario_bad[] =
    "{\n"
    "  \"faultlun\": 1,\n"
    "  \"name\": \"broken\",\n"
    "  \"luns\": [ { \"lun\": 0, \"size\": \"lots\" } ],\n"
    "  \"rules\": [ { \"id\": \"x\", \"match\": { \"class\": [\"read\"] },\n"
    "               \"action\": { \"explode\": true } } ]\n"
    "}\n";

static const char scenario_tmf[] =
    "{ \"faultlun\": 1, \"name\": \"hung-reset\", \"frontends\": [\"tcmu\"],\n"
    "  \"luns\": [ { \"lun\": 0, \"size\": \"8MiB\" } ],\n"
    "  \"tmf\": { \"lun_reset\": { \"respond\": \"never\" } } }\n";

static const char scenario_resize[] =
    "{ \"faultlun\": 1, \"name\": \"grow\", \"frontends\": [\"tcmu\"],\n"
    "  \"luns\": [ { \"lun\": 0, \"size\": \"8MiB\" } ],\n"
    "  \"rules\": [ { \"id\": \"grow\", \"match\": { \"opcode\": \"0x00\", \"nth\": 2 },\n"
    "                \"action\": { \"resize\": \"16MiB\" } } ] }\n";

/* A crosses_end rule on reads: the engine must test it against the LUN's current capacity. */
static const char scenario_eod[] =
    "{ \"faultlun\": 1, \"name\": \"eod\", \"frontends\": [\"tcmu\"],\n"
    "  \"luns\": [ { \"lun\": 0, \"size\": \"8MiB\", \"block_size\": 512 } ],\n"
    "  \"rules\": [ { \"id\": \"eod\", \"match\": { \"class\": [\"read\"],\n"
    "                \"lba\": { \"crosses_end\": true } },\n"
    "                \"action\": { \"sense\": \"MEDIUM_ERROR/UNRECOVERED_READ_ERROR\" } } ] }\n";

/* Two plain LUNs: read_only=1 must protect whichever one the device serves. */
static const char scenario_two_luns[] =
    "{ \"faultlun\": 1, \"name\": \"two-luns\", \"frontends\": [\"tcmu\"],\n"
    "  \"luns\": [ { \"lun\": 0, \"size\": \"8MiB\", \"block_size\": 512 },\n"
    "            { \"lun\": 1, \"size\": \"8MiB\", \"block_size\": 512 } ] }\n";

/* A LUN the scenario itself write-protects; read_only=0 does not lift that. */
static const char scenario_ro[] =
    "{ \"faultlun\": 1, \"name\": \"ro\", \"frontends\": [\"tcmu\"],\n"
    "  \"luns\": [ { \"lun\": 0, \"size\": \"8MiB\", \"read_only\": true } ] }\n";

static char good_path[300], bad_path[300], tmf_path[300], resize_path[300], eod_path[300];
static char two_luns_path[300], ro_path[300];

/* Writes a file into the temporary directory. */
static void write_file(char *path, size_t cap, const char *name, const char *text)
{
	FILE *f;

	snprintf(path, cap, "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* A device as the runner's dev_added leaves it before calling open. */
static struct tcmu_device *dev_new(const char *cfg, uint64_t dev_size, int cmd_time_out)
{
	struct tcmu_device *dev = calloc(1, sizeof(*dev));

	snprintf(dev->cfgstring, sizeof(dev->cfgstring), "%s", cfg);
	snprintf(dev->uio, sizeof(dev->uio), "uio7");
	dev->block_size = 512;
	dev->num_lbas = dev_size / 512;
	dev->cmd_time_out = cmd_time_out;
	return dev;
}

/* A 10-byte READ/WRITE/VERIFY/PRE-FETCH-style CDB. */
static void cdb10(uint8_t *cdb, uint8_t op, uint32_t lba, uint16_t blocks)
{
	memset(cdb, 0, 10);
	cdb[0] = op;
	fl_put_be32(cdb + 2, lba);
	cdb[7] = (uint8_t)(blocks >> 8);
	cdb[8] = (uint8_t)blocks;
}

/* Sense key / ASC / ASCQ of fixed or descriptor sense. */
static void sense_kcq(const uint8_t *s, int *key, int *asc, int *ascq)
{
	if ((s[0] & 0x7f) >= 0x72) {
		*key = s[1] & 0xf, *asc = s[2], *ascq = s[3];
	} else {
		*key = s[2] & 0xf, *asc = s[12], *ascq = s[13];
	}
}

/* Returns a malloc'ed check_config reason for cfg, or NULL when accepted. */
static char *check(const char *cfg, bool *ok)
{
	char *reason = NULL;

	*ok = standin_handler->check_config(cfg, &reason);
	return reason;
}

/* ---- tests ---- */

/* handler_init registered a handler whose callouts fit the routing design. */
static void test_register(void)
{
	CHECK(standin_handler != NULL, "handler_init did not register");
	if (!standin_handler)
		return;
	CHECK(!strcmp(standin_handler->subtype, "faultlun"), "subtype %s",
	      standin_handler->subtype);
	CHECK(standin_handler->nr_threads == 0, "nr_threads %d", standin_handler->nr_threads);
	CHECK(standin_handler->handle_cmd && standin_handler->read && standin_handler->write &&
		  standin_handler->flush,
	      "handle_cmd/read/write/flush must all be set");
	CHECK(!standin_handler->unmap && !standin_handler->writesame && !standin_handler->caw,
	      "unmap/writesame/caw must stay NULL (handle_cmd takes those commands)");
	CHECK(standin_handler->check_config && standin_handler->open && standin_handler->close,
	      "missing callouts");
	CHECK(dlsym(dl, "handler_init") != NULL, "handler_init not exported");
	CHECK(dlsym(dl, "fl_engine_submit") == NULL, "engine symbols must not be exported");
	CHECK(dlsym(dl, "fl_lun_submit") == NULL, "core symbols must not be exported");
	CHECK(dlsym(dl, "cfgstr_parse") == NULL, "internal symbols must not be exported");
}

/* check_config accepts good strings and refuses bad ones with a reason saying why. */
static void test_check_config(void)
{
	struct {
		const char *fmt; /* %s = good scenario path, %b = bad one, %t = TMF one */
		bool ok;
		const char *reason;
	} cases[] = {
	    {"faultlun/scenario=%s", true, NULL},
	    {"faultlun/%s", true, NULL},
	    {"faultlun/scenario=%s;store=memory:16MiB;lun=0;seed=0x10;trace=none;ctl=none;"
	     "tcmur_cmd_time_out=30",
	     true, NULL},
	    {"faultlun/scenario=%s;store=file:/tmp/x.img", true, NULL},
	    {"faultlun/scenario=relative.json", false, "absolute"},
	    {"faultlun/scenario=%s;colour=red", false, "unknown option 'colour'"},
	    {"faultlun/scenario=%s;lun=0;lun=0", false, "twice"},
	    {"faultlun/scenario=%s;store=tape", false, "store"},
	    {"faultlun/scenario=%s;store=memory:12XB", false, "bad size"},
	    {"faultlun/scenario=%s;lun=3", false, "no LUN 3"},
	    {"faultlun/scenario=%s;lun=300", false, "0..255"},
	    {"faultlun/scenario=%s;store=file:/nonexistent-dir/x.img", false, "does not exist"},
	    {"faultlun/scenario=/nonexistent/x.json", false, "cannot read scenario"},
	    {"faultlun/scenario=%b", false, "%b:"},
	    {"faultlun/scenario=%t", false, "cannot be carried out under the tcmu front end"},
	    {"faultlun/store=memory", false, "missing scenario"},
	    {"rbd/pool/image", false, "must start with"},
	    {"faultlun/", false, "empty"},
	    {"faultlun/scenario=%s;read_only=1", true, NULL},
	    {"faultlun/scenario=%s;read_only=true", true, NULL},
	    {"faultlun/scenario=%s;read_only=0", true, NULL},
	    {"faultlun/scenario=%s;read_only=false;store=memory", true, NULL},
	    {"faultlun/scenario=%s;read_only=yes", false,
	     "read_only: 'yes' is not 1, true, 0 or false"},
	    {"faultlun/scenario=%s;read_only=TRUE", false, "read_only: 'TRUE' is not"},
	    {"faultlun/scenario=%s;read_only=2", false, "read_only: '2' is not"},
	    {"faultlun/scenario=%s;read_only= 1", false, "read_only: ' 1' is not"},
	    {"faultlun/scenario=%s;read_only=", false, "option 'read_only' has an empty value"},
	    {"faultlun/scenario=%s;read_only", false, "option 'read_only' is not key=value"},
	    {"faultlun/scenario=%s;read_only=1;read_only=0", false,
	     "option 'read_only' given twice"},
	    {"faultlun/scenario=%s;ro=1", false,
	     "unknown option 'ro' (known: scenario, store, lun, seed, trace, ctl, read_only)"},
	};
	char cfg[1200], want[400];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *f = cases[i].fmt;
		char *o = cfg;
		bool ok;
		char *reason;

		for (; *f; f++) {
			if (f[0] == '%' && (f[1] == 's' || f[1] == 'b' || f[1] == 't')) {
				o += sprintf(o, "%s",
					     f[1] == 's'   ? good_path
					     : f[1] == 'b' ? bad_path
							   : tmf_path);
				f++;
			} else {
				*o++ = *f;
			}
		}
		*o = '\0';
		reason = check(cfg, &ok);
		CHECK(ok == cases[i].ok, "'%s' -> %s (reason: %s)", cfg,
		      ok ? "accepted" : "refused", reason ? reason : "none");
		if (!cases[i].ok) {
			snprintf(want, sizeof(want), "%s", cases[i].reason);
			if (!strcmp(want, "%b:"))
				snprintf(want, sizeof(want), "%s:", bad_path);
			CHECK(reason && strstr(reason, want), "'%s': reason '%s' lacks '%s'", cfg,
			      reason ? reason : "(none)", want);
		}
		if (verbose && reason)
			fprintf(stderr, "  reason for '%s': %s\n", cfg, reason);
		free(reason);
	}
	/* 256 bytes: one more than configfs allows. */
	memset(cfg, 'a', 256);
	memcpy(cfg, "faultlun/scenario=/", 19);
	cfg[256] = '\0';
	{
		bool ok;
		char *reason = check(cfg, &ok);

		CHECK(!ok && reason && strstr(reason, "at most 255"), "256-byte string: %s",
		      reason ? reason : "accepted");
		free(reason);
	}
}

static struct tcmu_device *dev_main;

/* Opens the main device; INQUIRY, TUR and READ CAPACITY come from the scenario's LUN. */
static void test_open_and_identity(void)
{
	uint8_t cdb[16] = {0}, data[96];
	char cfg[1200];
	int rc;

	snprintf(cfg, sizeof(cfg), "faultlun/scenario=%s;ctl=%s/ctl.sock;trace=%s/trace.jsonl",
		 good_path, tmpdir, tmpdir);
	dev_main = dev_new(cfg, 8u << 20, 1);
	rc = standin_handler->open(dev_main, false);
	CHECK(rc == 0, "open rc %d", rc);
	if (rc) {
		free(dev_main);
		dev_main = NULL;
		return;
	}
	CHECK(dev_main->runner_private != NULL, "open did not set the device's private data");
	{
		char path[400];
		struct stat st;

		snprintf(path, sizeof(path), "%s/ctl.sock", tmpdir);
		CHECK(stat(path, &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_mode & 0777) == 0600,
		      "control socket %s missing or not mode 0600", path);
	}

	/* SAM-5 5.14: the first command after power-on reports UA 29/xx; TCMU passes it on. */
	rc = run(dev_main, cdb, 6, NULL, 0);
	{
		int key, asc, ascq;

		sense_kcq(last_sense, &key, &asc, &ascq);
		CHECK(rc == TCMU_STS_PASSTHROUGH_ERR && key == 6 && asc == 0x29,
		      "first TEST UNIT READY: status %d sense %x/%02x/%02x, want UA 6/29/xx", rc,
		      key, asc, ascq);
	}

	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x12, cdb[4] = sizeof(data);
	memset(data, 0, sizeof(data));
	rc = run(dev_main, cdb, 6, data, sizeof(data));
	CHECK(rc == TCMU_STS_OK, "INQUIRY status %d", rc);
	CHECK(!memcmp(data + 8, "FLHARN  ", 8), "vendor '%.8s'", data + 8);
	CHECK(!memcmp(data + 16, "TCMU-HARNESS", 12), "product '%.16s'", data + 16);

	memset(cdb, 0, sizeof(cdb));
	rc = run(dev_main, cdb, 6, NULL, 0);
	CHECK(rc == TCMU_STS_OK, "TEST UNIT READY status %d", rc);

	memset(cdb, 0, sizeof(cdb));
	cdb[0] = 0x9e, cdb[1] = 0x10, cdb[13] = 32;
	memset(data, 0, sizeof(data));
	rc = run(dev_main, cdb, 16, data, 32);
	CHECK(rc == TCMU_STS_OK, "READ CAPACITY(16) status %d", rc);
	CHECK(fl_get_be64(data) == (8u << 20) / 512 - 1, "last LBA %llu",
	      (unsigned long long)fl_get_be64(data));
	CHECK(data[10] == 0x02 && data[11] == 0x00, "block length %02x%02x", data[10], data[11]);
}

/* A mismatching dev_size is overridden by the scenario's; a mismatching block size refuses open. */
static void test_open_geometry(void)
{
	char cfg[1200];
	struct tcmu_device *dev;
	int rc;

	snprintf(cfg, sizeof(cfg), "faultlun/scenario=%s;ctl=none;trace=none", good_path);
	dev = dev_new(cfg, 4u << 20, 0);
	rc = standin_handler->open(dev, false);
	CHECK(rc == 0, "open rc %d", rc);
	if (!rc) {
		CHECK(dev->num_lbas == (8u << 20) / 512, "runner capacity %llu blocks",
		      (unsigned long long)dev->num_lbas);
		for (int i = 0; i < 20 && dev->dev_size_written == 0; i++)
			usleep(50000);
		CHECK(dev->dev_size_written == 8u << 20, "kernel dev_size written %llu",
		      (unsigned long long)dev->dev_size_written);
		standin_handler->close(dev);
		CHECK(dev->runner_private == NULL, "close left private data");
	}
	free(dev);

	dev = dev_new(cfg, 8u << 20, 0);
	dev->block_size = 4096;
	dev->num_lbas = (8u << 20) / 4096;
	rc = standin_handler->open(dev, false);
	CHECK(rc != 0, "open with hw_block_size 4096 against a 512-byte scenario succeeded");
	CHECK(dev->runner_private == NULL, "failed open left private data");
	if (!rc)
		standin_handler->close(dev);
	free(dev);
}

/* WRITE(10) and READ(10) take the asynchronous callouts and round-trip data. */
static void test_write_read(void)
{
	uint8_t cdb[10], out[4096], in[4096];
	struct hcmd *h;
	int rc;

	if (!dev_main)
		return;
	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(i * 7 + 3);
	cdb10(cdb, 0x2a, 10, 8);
	h = hcmd_new(cdb, 10, sizeof(out));
	memcpy(h->data, out, sizeof(out));
	hcmd_start(dev_main, h);
	CHECK(h->async, "WRITE(10) in range was not left to the write callout");
	CHECK(hcmd_wait(h, 5000) && h->status == TCMU_STS_OK, "WRITE status %d", h->status);
	hcmd_free(h);

	cdb10(cdb, 0x28, 10, 8);
	memset(in, 0, sizeof(in));
	rc = run(dev_main, cdb, 10, in, sizeof(in));
	CHECK(rc == TCMU_STS_OK, "READ status %d", rc);
	CHECK(!memcmp(in, out, sizeof(in)), "read back differs from what was written");
}

/* A medium-error rule gives CHECK CONDITION 03/11/00 with INFORMATION = the LBA. */
static void test_sense(void)
{
	uint8_t cdb[10], data[4096];
	int rc, key, asc, ascq;

	if (!dev_main)
		return;
	cdb10(cdb, 0x28, 100, 8);
	rc = run(dev_main, cdb, 10, data, sizeof(data));
	CHECK(rc == TCMU_STS_PASSTHROUGH_ERR, "status %d, want PASSTHROUGH_ERR", rc);
	sense_kcq(last_sense, &key, &asc, &ascq);
	CHECK(key == 3 && asc == 0x11 && ascq == 0, "sense %x/%02x/%02x", key, asc, ascq);
	if ((last_sense[0] & 0x7f) == 0x70) {
		uint32_t info = (uint32_t)last_sense[3] << 24 | last_sense[4] << 16 |
				last_sense[5] << 8 | last_sense[6];

		CHECK(last_sense[0] & 0x80, "INFORMATION not marked valid");
		CHECK(info == 100, "INFORMATION %u, want 100", info);
	}
}

/* A READ past the end never reaches the runner's range check: the engine answers 21/00. */
static void test_out_of_range(void)
{
	uint8_t cdb[10], data[1024];
	struct hcmd *h;
	int key, asc, ascq;

	if (!dev_main)
		return;
	cdb10(cdb, 0x28, (uint32_t)(dev_main->num_lbas - 1), 2);
	h = hcmd_new(cdb, 10, sizeof(data));
	hcmd_start(dev_main, h);
	CHECK(!h->async, "a READ past the end was left to the runner's range check");
	CHECK(hcmd_wait(h, 5000) && h->status == TCMU_STS_PASSTHROUGH_ERR, "status %d", h->status);
	sense_kcq(h->lib.sense_buf, &key, &asc, &ascq);
	CHECK(key == 5 && asc == 0x21, "sense %x/%02x/%02x, want 5/21/00", key, asc, ascq);
	hcmd_free(h);
}

/* BUSY and TASK SET FULL map onto TCMU_STS_BUSY and TCMU_STS_NO_RESOURCE. */
static void test_status_mapping(void)
{
	uint8_t cdb[10] = {0x35};
	int rc;

	if (!dev_main)
		return;
	rc = run(dev_main, cdb, 10, NULL, 0);
	CHECK(rc == TCMU_STS_BUSY, "first SYNCHRONIZE CACHE status %d, want BUSY", rc);
	rc = run(dev_main, cdb, 10, NULL, 0);
	CHECK(rc == TCMU_STS_OK, "second SYNCHRONIZE CACHE status %d, want OK (times: 1)", rc);
	cdb10(cdb, 0x2f, 0, 1);
	rc = run(dev_main, cdb, 10, NULL, 0);
	CHECK(rc == TCMU_STS_NO_RESOURCE, "VERIFY status %d, want NO_RESOURCE", rc);
}

/* A delayed READ completes late, while other commands on the LUN complete at once. */
static void test_delay_does_not_block(void)
{
	uint8_t cdb[10], tur[6] = {0}, data[512];
	struct hcmd *slow, *fast;
	int64_t t0;
	int rc;

	if (!dev_main)
		return;
	cdb10(cdb, 0x28, 200, 1);
	slow = hcmd_new(cdb, 10, 512);
	hcmd_start(dev_main, slow);
	CHECK(slow->async && !slow->completed, "delayed READ answered before its delay");
	CHECK(now_ms() - slow->t_submit < 300, "read callout blocked for %lld ms",
	      (long long)(now_ms() - slow->t_submit));

	t0 = now_ms();
	cdb10(cdb, 0x28, 0, 1);
	fast = hcmd_new(cdb, 10, 512);
	hcmd_start(dev_main, fast);
	CHECK(hcmd_wait(fast, 5000) && fast->status == TCMU_STS_OK, "unrelated READ status %d",
	      fast->status);
	rc = run(dev_main, tur, 6, NULL, 0);
	CHECK(rc == TCMU_STS_OK, "TUR status %d", rc);
	CHECK(now_ms() - t0 < 500, "unrelated commands took %lld ms behind a delayed READ",
	      (long long)(now_ms() - t0));
	CHECK(!slow->completed, "delayed READ completed within %lld ms",
	      (long long)(now_ms() - slow->t_submit));
	hcmd_free(fast);

	CHECK(hcmd_wait(slow, 5000), "delayed READ never completed");
	CHECK(slow->status == TCMU_STS_OK, "delayed READ status %d", slow->status);
	CHECK(slow->t_done - slow->t_submit >= 950 && slow->t_done - slow->t_submit < 4000,
	      "delayed READ took %lld ms, want ~1000", (long long)(slow->t_done - slow->t_submit));
	(void)data;
	hcmd_free(slow);
}

/* Runs a held PRE-FETCH through handle_cmd on its own thread (it blocks, as the device thread
 * would). */
static void *prefetch_thread(void *arg)
{
	struct hcmd *h = arg;

	hcmd_start(dev_main, h);
	return NULL;
}

/*
 * A held WRITE stays unanswered without blocking other commands; once the
 * device's cmd_time_out (1 s here) plus the grace period has passed the
 * watchdog answers it (and a held handle_cmd command) with TIMEOUT.
 */
static void test_hold(void)
{
	uint8_t cdb[10], data[512];
	struct hcmd *held, *pf;
	pthread_t th;
	int64_t t0;
	int rc;

	if (!dev_main)
		return;
	cdb10(cdb, 0x2a, 300, 1);
	held = hcmd_new(cdb, 10, 512);
	hcmd_start(dev_main, held);
	CHECK(held->async, "held WRITE not on the asynchronous path");

	cdb10(cdb, 0x34, 0, 1);
	pf = hcmd_new(cdb, 10, 0);
	pthread_create(&th, NULL, prefetch_thread, pf);

	CHECK(!hcmd_wait(held, 500), "held WRITE answered (status %d)", held->status);
	t0 = now_ms();
	cdb10(cdb, 0x2a, 301, 1);
	memset(data, 0x5a, sizeof(data));
	rc = run(dev_main, cdb, 10, data, sizeof(data));
	CHECK(rc == TCMU_STS_OK, "unrelated WRITE status %d", rc);
	cdb10(cdb, 0x28, 301, 1);
	memset(data, 0, sizeof(data));
	rc = run(dev_main, cdb, 10, data, sizeof(data));
	CHECK(rc == TCMU_STS_OK && data[0] == 0x5a, "unrelated READ status %d", rc);
	CHECK(now_ms() - t0 < 1000, "unrelated commands took %lld ms behind a held WRITE",
	      (long long)(now_ms() - t0));

	CHECK(hcmd_wait(held, 6000), "held WRITE was never given up after cmd_time_out");
	CHECK(held->status == TCMU_STS_TIMEOUT, "held WRITE answered %d, want TIMEOUT",
	      held->status);
	CHECK(held->t_done - held->t_submit >= 2500, "held WRITE given up after %lld ms (< 3 s)",
	      (long long)(held->t_done - held->t_submit));
	pthread_join(th, NULL);
	CHECK(pf->completed && pf->status == TCMU_STS_TIMEOUT && !pf->async,
	      "held PRE-FETCH: completed %d status %d", pf->completed, pf->status);
	CHECK(pf->t_done - pf->t_submit >= 2500, "held PRE-FETCH returned after %lld ms",
	      (long long)(pf->t_done - pf->t_submit));
	hcmd_free(held);
	hcmd_free(pf);
}

/*
 * A scenario's resize reaches the initiator as UA 2A/09 and the runner's
 * capacity (its range check) and the kernel's dev_size follow it.
 */
static void test_resize(void)
{
	uint8_t tur[6] = {0}, cdb[10], data[512];
	char cfg[1200];
	struct tcmu_device *dev;
	struct hcmd *h;
	int rc, key, asc, ascq;

	snprintf(cfg, sizeof(cfg), "faultlun/scenario=%s;ctl=none;trace=none", resize_path);
	dev = dev_new(cfg, 8u << 20, 0);
	rc = standin_handler->open(dev, false);
	CHECK(rc == 0, "open rc %d", rc);
	if (rc) {
		free(dev);
		return;
	}
	rc = run(dev, tur, 6, NULL, 0); /* power-on UA */
	rc = run(dev, tur, 6, NULL, 0); /* the 2nd TUR resizes, then reports the UA */
	sense_kcq(last_sense, &key, &asc, &ascq);
	CHECK(rc == TCMU_STS_PASSTHROUGH_ERR && key == 6 && asc == 0x2a && ascq == 0x09,
	      "TUR after resize: status %d sense %x/%02x/%02x, want UA 6/2A/09", rc, key, asc,
	      ascq);
	CHECK(dev->num_lbas == (16u << 20) / 512, "runner capacity %llu blocks after resize",
	      (unsigned long long)dev->num_lbas);
	for (int i = 0; i < 20 && dev->dev_size_written != 16u << 20; i++)
		usleep(50000);
	CHECK(dev->dev_size_written == 16u << 20, "kernel dev_size written %llu",
	      (unsigned long long)dev->dev_size_written);
	cdb10(cdb, 0x28, 20000, 1);
	h = hcmd_new(cdb, 10, sizeof(data));
	hcmd_start(dev, h);
	CHECK(h->async, "READ in the grown range not on the asynchronous path");
	CHECK(hcmd_wait(h, 5000) && h->status == TCMU_STS_OK, "READ at LBA 20000: status %d",
	      h->status);
	hcmd_free(h);
	standin_handler->close(dev);
	free(dev);
}

/* store=file: the LUN lives in a sparse file; completions come from the store's workers. */
static void test_file_store(void)
{
	uint8_t cdb[10], out[4096], in[4096];
	char cfg[1200], img[400];
	struct tcmu_device *dev;
	struct stat st;
	int rc;

	snprintf(img, sizeof(img), "%s/lun.img", tmpdir);
	snprintf(cfg, sizeof(cfg), "faultlun/scenario=%s;store=file:%s;ctl=none;trace=none",
		 good_path, img);
	dev = dev_new(cfg, 8u << 20, 0);
	rc = standin_handler->open(dev, false);
	CHECK(rc == 0, "open rc %d", rc);
	if (rc) {
		free(dev);
		return;
	}
	CHECK(stat(img, &st) == 0 && st.st_size == 8 << 20, "store file %s missing or not 8 MiB",
	      img);
	memset(cdb, 0, sizeof(cdb));
	run(dev, cdb, 6, NULL, 0); /* power-on UA */
	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)(i ^ 0x3c);
	cdb10(cdb, 0x2a, 4000, 8);
	rc = run(dev, cdb, 10, out, sizeof(out));
	CHECK(rc == TCMU_STS_OK, "WRITE status %d", rc);
	cdb10(cdb, 0x28, 4000, 8);
	memset(in, 0, sizeof(in));
	rc = run(dev, cdb, 10, in, sizeof(in));
	CHECK(rc == TCMU_STS_OK && !memcmp(in, out, sizeof(in)), "READ status %d or data differs",
	      rc);
	cdb10(cdb, 0x28, 100, 8); /* the scenario's rules apply to the file store too */
	rc = run(dev, cdb, 10, in, sizeof(in));
	CHECK(rc == TCMU_STS_PASSTHROUGH_ERR, "READ of a bad sector: status %d", rc);
	standin_handler->close(dev);
	free(dev);
}

/* Opens a device with no control socket and no trace; NULL (and a failure) if open fails. */
static struct tcmu_device *open_quiet(const char *scenario, const char *extra)
{
	char cfg[1200];
	struct tcmu_device *dev;
	int rc;

	snprintf(cfg, sizeof(cfg), "faultlun/scenario=%s;ctl=none;trace=none%s", scenario, extra);
	dev = dev_new(cfg, 8u << 20, 0);
	rc = standin_handler->open(dev, false);
	CHECK(rc == 0, "open '%s': rc %d", cfg, rc);
	if (rc) {
		free(dev);
		return NULL;
	}
	return dev;
}

/* The runner's reconfig with a new dev_size (configfs), as its DEV_SIZE event delivers it. */
static int reconfig_size(struct tcmu_device *dev, uint64_t bytes)
{
	struct tcmulib_cfg_info ci;
	int rc;

	memset(&ci, 0, sizeof(ci));
	ci.type = TCMULIB_CFG_DEV_SIZE;
	ci.data.dev_size = bytes;
	rc = standin_handler->reconfig(dev, &ci);
	if (rc == 0)
		dev->num_lbas = bytes / dev->block_size; /* the runner's size follows */
	return rc;
}

/* Status and sense key of a READ(10) of blocks at lba, run through whichever path it takes. */
static int read_key(struct tcmu_device *dev, uint32_t lba, uint16_t blocks, int *key)
{
	uint8_t cdb[10], data[1024];
	int rc, asc, ascq;

	cdb10(cdb, 0x28, lba, blocks);
	rc = run(dev, cdb, 10, data, (size_t)blocks * 512);
	*key = 0;
	if (rc == TCMU_STS_PASSTHROUGH_ERR)
		sense_kcq(last_sense, key, &asc, &ascq);
	return rc;
}

/*
 * A resize from configfs (reconfig DEV_SIZE) goes through the engine: a
 * crosses_end rule then tests against the new capacity, growing (a read past
 * the old end but inside the new one succeeds, one crossing the new end hits
 * the rule) and shrinking (a read crossing the new end hits the rule, not the
 * core's 21/00); the trace has a resize event for each.
 */
static void test_resize_reconfig_rules(void)
{
	uint8_t tur[6] = {0};
	char cfg[1200], trace[400], *text = NULL;
	struct tcmu_device *dev;
	size_t cap = 0;
	int rc, key;
	FILE *f;

	snprintf(trace, sizeof(trace), "%s/resize-trace.jsonl", tmpdir);
	snprintf(cfg, sizeof(cfg), "faultlun/scenario=%s;ctl=none;trace=%s", eod_path, trace);
	dev = dev_new(cfg, 8u << 20, 0);
	rc = standin_handler->open(dev, false);
	CHECK(rc == 0, "open '%s': rc %d", cfg, rc);
	if (rc) {
		free(dev);
		return;
	}
	run(dev, tur, 6, NULL, 0); /* power-on UA */
	rc = read_key(dev, 16383, 2, &key);
	CHECK(rc == TCMU_STS_PASSTHROUGH_ERR && key == 3,
	      "READ crossing the 8 MiB end: status %d key %x, want the rule's 3/11/00", rc, key);

	rc = reconfig_size(dev, 16u << 20);
	CHECK(rc == 0, "reconfig dev_size 16 MiB: rc %d", rc);
	run(dev, tur, 6, NULL, 0); /* UA 2A/09 CAPACITY DATA HAS CHANGED */
	rc = read_key(dev, 20000, 1, &key);
	CHECK(rc == TCMU_STS_OK,
	      "READ at LBA 20000 inside the grown 16 MiB: status %d key %x, "
	      "want OK (the rule tested the old capacity)",
	      rc, key);
	rc = read_key(dev, 32767, 2, &key);
	CHECK(rc == TCMU_STS_PASSTHROUGH_ERR && key == 3,
	      "READ crossing the new 16 MiB end: status %d key %x, want the rule's 3/11/00", rc,
	      key);

	rc = reconfig_size(dev, 4u << 20);
	CHECK(rc == 0, "reconfig dev_size 4 MiB: rc %d", rc);
	run(dev, tur, 6, NULL, 0);
	rc = read_key(dev, 8191, 2, &key);
	CHECK(rc == TCMU_STS_PASSTHROUGH_ERR && key == 3,
	      "READ crossing the shrunk 4 MiB end: status %d key %x, want the rule's 3/11/00", rc,
	      key);
	rc = read_key(dev, 8000, 1, &key);
	CHECK(rc == TCMU_STS_OK, "READ at LBA 8000 inside 4 MiB: status %d key %x", rc, key);
	/* sizes the LUN cannot take are refused and change nothing */
	rc = reconfig_size(dev, (4u << 20) + 100);
	CHECK(rc == -EINVAL, "reconfig dev_size 4 MiB + 100 (not a multiple of 512): rc %d", rc);
	rc = reconfig_size(dev, 0);
	CHECK(rc == -EINVAL, "reconfig dev_size 0: rc %d", rc);
	rc = read_key(dev, 8191, 2, &key);
	CHECK(rc == TCMU_STS_PASSTHROUGH_ERR && key == 3,
	      "READ crossing the 4 MiB end after refused resizes: status %d key %x", rc, key);
	standin_handler->close(dev);
	free(dev);

	/* the engine traced both changes as resize events */
	f = fopen(trace, "r");
	if (f && getdelim(&text, &cap, '\0', f) < 0) {
		free(text);
		text = NULL;
	}
	if (f)
		fclose(f);
	CHECK(text && strstr(text, "\"event\":\"resize\",\"lun\":0,\"from_blocks\":16384,"
				   "\"blocks\":32768,\"why\":\"frontend\""),
	      "no resize event 16384 -> 32768 blocks in %s", trace);
	CHECK(text && strstr(text, "\"from_blocks\":32768,\"blocks\":8192"),
	      "no resize event 32768 -> 8192 blocks in %s", trace);
	free(text);
}

/* MODE SENSE(6), all pages: the WP bit of the header, or -1 when the command fails. */
static int mode_sense_wp(struct tcmu_device *dev)
{
	uint8_t cdb[6] = {0x1a, 0, 0x3f, 0, 255, 0}, data[255];
	int rc;

	memset(data, 0, sizeof(data));
	rc = run(dev, cdb, 6, data, sizeof(data));
	if (rc != TCMU_STS_OK)
		return -1;
	return data[2] >> 7; /* SBC-3 r36 6.4.1: device-specific parameter, bit 7 */
}

/*
 * Each spelling of read_only, on either LUN of a two-LUN scenario, decides
 * WP and whether a WRITE(10) lands; read_only=0 keeps a scenario's own
 * protection. The rows without the key show the same checks see a writable LUN.
 */
static void test_read_only_config(void)
{
	static const struct {
		bool two_luns; /* else the scenario with "read_only": true */
		const char *extra;
		bool protected;
	} cases[] = {
	    {true, "", false},
	    {true, ";lun=1", false},
	    {true, ";read_only=1", true},
	    {true, ";read_only=true;lun=1", true},
	    {true, ";lun=1;read_only=1", true},
	    {true, ";read_only=0", false},
	    {true, ";read_only=false;lun=1", false},
	    {false, "", true},
	    {false, ";read_only=0", true},
	    {false, ";read_only=1", true},
	};
	uint8_t tur[6] = {0}, cdb[10], data[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *extra = cases[i].extra;
		struct tcmu_device *dev =
		    open_quiet(cases[i].two_luns ? two_luns_path : ro_path, extra);
		int rc, wp, key, asc, ascq;

		if (!dev)
			continue;
		run(dev, tur, 6, NULL, 0); /* power-on UA */
		wp = mode_sense_wp(dev);
		CHECK(wp == cases[i].protected, "'%s' (%s): MODE SENSE WP %d, want %d", extra,
		      cases[i].two_luns ? "two LUNs" : "read-only scenario", wp,
		      cases[i].protected);
		cdb10(cdb, 0x2a, 8, 1);
		memset(data, 0x77, sizeof(data));
		rc = run(dev, cdb, 10, data, sizeof(data));
		sense_kcq(last_sense, &key, &asc, &ascq);
		if (cases[i].protected)
			CHECK(rc == TCMU_STS_PASSTHROUGH_ERR && key == 7 && asc == 0x27 &&
				  ascq == 0,
			      "'%s': WRITE(10) status %d sense %x/%02x/%02x, want 7/27/00", extra,
			      rc, key, asc, ascq);
		else
			CHECK(rc == TCMU_STS_OK, "'%s': WRITE(10) status %d, want OK", extra, rc);
		cdb10(cdb, 0x28, 8, 1);
		memset(data, 0, sizeof(data));
		rc = run(dev, cdb, 10, data, sizeof(data));
		CHECK(rc == TCMU_STS_OK && data[0] == (cases[i].protected ? 0 : 0x77),
		      "'%s': READ(10) status %d, first byte %02x", extra, rc, data[0]);
		standin_handler->close(dev);
		free(dev);
	}
}

/*
 * Log lines reach tcmu-runner's log at their level: the core's (a file
 * store that cannot be opened) and the engine's (a trace that cannot be
 * created) through the handler's fl_log sink, and the handler's own.
 */
static void test_log_lines(void)
{
	char cfg[1200], want[400];
	struct tcmu_device *dev;
	int rc;

	standin_log_clear();
	/* the store is a directory: the core's file store refuses it */
	snprintf(cfg, sizeof(cfg), "faultlun/scenario=%s;ctl=none;trace=none;store=file:%s",
		 good_path, tmpdir);
	dev = dev_new(cfg, 8u << 20, 0);
	rc = standin_handler->open(dev, false);
	CHECK(rc != 0, "open with a directory as the file store succeeded");
	if (!rc)
		standin_handler->close(dev);
	free(dev);
	snprintf(want, sizeof(want), "faultlun: cannot open %s: ", tmpdir);
	CHECK(standin_log_has(1, want), "no runner error line '%s' from the core", want);
	CHECK(!standin_log_has(2, want) && !standin_log_has(3, want),
	      "the core's error also logged at another level");
	CHECK(standin_log_has(1, "faultlun: cannot build the LUNs of"),
	      "no runner error line from the handler itself");

	/* the engine cannot create its trace */
	snprintf(cfg, sizeof(cfg), "faultlun/scenario=%s;ctl=none;trace=%s/no-such-dir/t.jsonl",
		 good_path, tmpdir);
	dev = dev_new(cfg, 8u << 20, 0);
	rc = standin_handler->open(dev, false);
	CHECK(rc != 0, "open with an impossible trace path succeeded");
	if (!rc)
		standin_handler->close(dev);
	free(dev);
	CHECK(standin_log_has(1, "faultlun: cannot open trace "),
	      "no runner error line from the engine");

	/* a good open says so at info level */
	dev = open_quiet(good_path, "");
	if (!dev)
		return;
	CHECK(standin_log_has(3, "tcmu-harness LUN 0, 16384 blocks of 512"),
	      "no runner info line for the open");
	standin_handler->close(dev);
	free(dev);
}

/* What a read_only_commands row checks beyond status and sense. */
enum ro_extra {
	RO_NONE,
	RO_PATTERN, /* data-in is the image's pattern at LBA 5 */
	RO_WP6,	    /* MODE SENSE(6) header: WP */
	RO_WP10,    /* MODE SENSE(10) header: WP */
};

/* LBA 5 of the read-only image holds this byte; writes in the table carry another. */
#define RO_PATTERN_BYTE 0xc3
#define RO_LBA 5

/*
 * read_only=1 on a file-backed LUN: every command that changes the medium
 * ends in CHECK CONDITION DATA PROTECT 27/00 (WRITE(10/16) through the write
 * callout, the rest in handle_cmd), reads and flushes succeed, MODE SENSE
 * shows WP, and the image is unchanged afterwards.
 */
static void test_read_only_commands(void)
{
	static const uint8_t unmap_param[24] = {0, 22, 0, 16,	  0, 0, 0, 0, 0, 0, 0, 0,
						0, 0,  0, RO_LBA, 0, 0, 0, 1, 0, 0, 0, 0};
	static const struct {
		const char *name;
		uint8_t cdb[16];
		uint8_t cdb_len;
		uint32_t len;
		bool async; /* the runner's path through a read/write callout */
		int sts, key, asc, ascq;
		enum ro_extra extra;
	} cases[] = {
	    {"WRITE(10)",
	     {0x2a, 0, 0, 0, 0, RO_LBA, 0, 0, 1},
	     10,
	     512,
	     true,
	     TCMU_STS_PASSTHROUGH_ERR,
	     7,
	     0x27,
	     0,
	     RO_NONE},
	    {"WRITE(16)",
	     {0x8a, 0, 0, 0, 0, 0, 0, 0, 0, RO_LBA, 0, 0, 0, 1},
	     16,
	     512,
	     true,
	     TCMU_STS_PASSTHROUGH_ERR,
	     7,
	     0x27,
	     0,
	     RO_NONE},
	    {"WRITE(10) FUA",
	     {0x2a, 0x08, 0, 0, 0, RO_LBA, 0, 0, 1},
	     10,
	     512,
	     true,
	     TCMU_STS_PASSTHROUGH_ERR,
	     7,
	     0x27,
	     0,
	     RO_NONE},
	    {"WRITE(6)",
	     {0x0a, 0, 0, RO_LBA, 1},
	     6,
	     512,
	     false,
	     TCMU_STS_PASSTHROUGH_ERR,
	     7,
	     0x27,
	     0,
	     RO_NONE},
	    {"WRITE SAME(10)",
	     {0x41, 0, 0, 0, 0, RO_LBA, 0, 0, 1},
	     10,
	     512,
	     false,
	     TCMU_STS_PASSTHROUGH_ERR,
	     7,
	     0x27,
	     0,
	     RO_NONE},
	    {"WRITE AND VERIFY(10)",
	     {0x2e, 0, 0, 0, 0, RO_LBA, 0, 0, 1},
	     10,
	     512,
	     false,
	     TCMU_STS_PASSTHROUGH_ERR,
	     7,
	     0x27,
	     0,
	     RO_NONE},
	    {"COMPARE AND WRITE",
	     {0x89, 0, 0, 0, 0, 0, 0, 0, 0, RO_LBA, 0, 0, 0, 1},
	     16,
	     1024,
	     false,
	     TCMU_STS_PASSTHROUGH_ERR,
	     7,
	     0x27,
	     0,
	     RO_NONE},
	    {"UNMAP",
	     {0x42, 0, 0, 0, 0, 0, 0, 0, 24},
	     10,
	     24,
	     false,
	     TCMU_STS_PASSTHROUGH_ERR,
	     7,
	     0x27,
	     0,
	     RO_NONE},
	    {"READ(10)",
	     {0x28, 0, 0, 0, 0, RO_LBA, 0, 0, 1},
	     10,
	     512,
	     true,
	     TCMU_STS_OK,
	     0,
	     0,
	     0,
	     RO_PATTERN},
	    {"READ(16)",
	     {0x88, 0, 0, 0, 0, 0, 0, 0, 0, RO_LBA, 0, 0, 0, 1},
	     16,
	     512,
	     true,
	     TCMU_STS_OK,
	     0,
	     0,
	     0,
	     RO_PATTERN},
	    {"READ(6)", {0x08, 0, 0, RO_LBA, 1}, 6, 512, false, TCMU_STS_OK, 0, 0, 0, RO_PATTERN},
	    {"SYNCHRONIZE CACHE(10)", {0x35}, 10, 0, true, TCMU_STS_OK, 0, 0, 0, RO_NONE},
	    {"MODE SENSE(6)", {0x1a, 0, 0x3f, 0, 255}, 6, 255, false, TCMU_STS_OK, 0, 0, 0, RO_WP6},
	    {"MODE SENSE(10)",
	     {0x5a, 0, 0x3f, 0, 0, 0, 0, 0, 255},
	     10,
	     255,
	     false,
	     TCMU_STS_OK,
	     0,
	     0,
	     0,
	     RO_WP10},
	};
	char img[400], extra[500];
	uint8_t block[512], tur[6] = {0};
	struct tcmu_device *dev;
	FILE *f;

	/* lun=1 of a two-LUN scenario lives in IMG.1 (the engine's per-LUN file name) */
	snprintf(img, sizeof(img), "%s/ro.img", tmpdir);
	snprintf(extra, sizeof(extra), "%s.1", img);
	memset(block, RO_PATTERN_BYTE, sizeof(block));
	f = fopen(extra, "w");
	CHECK(f && fseek(f, RO_LBA * 512, SEEK_SET) == 0 && fwrite(block, 512, 1, f) == 1 &&
		  ftruncate(fileno(f), 8 << 20) == 0,
	      "cannot prepare %s", extra);
	if (!f)
		return;
	fclose(f);
	snprintf(extra, sizeof(extra), ";store=file:%s;lun=1;read_only=1", img);
	dev = open_quiet(two_luns_path, extra);
	if (!dev)
		return;
	run(dev, tur, 6, NULL, 0); /* power-on UA */

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hcmd *h = hcmd_new(cases[i].cdb, cases[i].cdb_len, cases[i].len);
		int key = 0, asc = 0, ascq = 0;
		bool ok;

		if (cases[i].cdb[0] == 0x42)
			memcpy(h->data, unmap_param, sizeof(unmap_param));
		else if (cases[i].extra == RO_NONE)
			memset(h->data, 0x3c, h->len); /* what a write would leave behind */
		hcmd_start(dev, h);
		ok = hcmd_wait(h, 5000);
		CHECK(ok, "%s: no answer", cases[i].name);
		if (!ok)
			continue; /* the handler may still own h */
		CHECK(h->async == cases[i].async, "%s: %s path, want %s", cases[i].name,
		      h->async ? "callout" : "handle_cmd",
		      cases[i].async ? "callout" : "handle_cmd");
		if (h->status == TCMU_STS_PASSTHROUGH_ERR)
			sense_kcq(h->lib.sense_buf, &key, &asc, &ascq);
		CHECK(h->status == cases[i].sts && key == cases[i].key && asc == cases[i].asc &&
			  ascq == cases[i].ascq,
		      "%s: status %d sense %x/%02x/%02x, want %d %x/%02x/%02x", cases[i].name,
		      h->status, key, asc, ascq, cases[i].sts, cases[i].key, cases[i].asc,
		      cases[i].ascq);
		switch (cases[i].extra) {
		case RO_PATTERN:
			CHECK(h->data[0] == RO_PATTERN_BYTE && h->data[511] == RO_PATTERN_BYTE,
			      "%s: data %02x..%02x, want %02x", cases[i].name, h->data[0],
			      h->data[511], RO_PATTERN_BYTE);
			break;
		case RO_WP6:
			CHECK(h->data[2] & 0x80, "%s: WP not set (byte 2 = %02x)", cases[i].name,
			      h->data[2]);
			break;
		case RO_WP10:
			CHECK(h->data[3] & 0x80, "%s: WP not set (byte 3 = %02x)", cases[i].name,
			      h->data[3]);
			break;
		case RO_NONE:
			break;
		}
		hcmd_free(h);
	}
	standin_handler->close(dev);
	free(dev);

	/* nothing reached the image */
	snprintf(extra, sizeof(extra), "%s.1", img);
	f = fopen(extra, "r");
	memset(block, 0, sizeof(block));
	CHECK(f && fseek(f, RO_LBA * 512, SEEK_SET) == 0 && fread(block, 512, 1, f) == 1,
	      "cannot read %s back", extra);
	if (f)
		fclose(f);
	CHECK(block[0] == RO_PATTERN_BYTE && block[511] == RO_PATTERN_BYTE,
	      "image changed at LBA %d: %02x..%02x", RO_LBA, block[0], block[511]);
}

/* Sends one request line to a control socket and reads one answer line (2 s at most). */
static int ctl_request(const char *path, const char *req, char *resp, size_t cap)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = 2};
	size_t len = 0;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	resp[0] = '\0';
	if (fd < 0)
		return -1;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		close(fd);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    write(fd, req, strlen(req)) != (ssize_t)strlen(req) || write(fd, "\n", 1) != 1) {
		close(fd);
		return -1;
	}
	while (len + 1 < cap) {
		ssize_t n = read(fd, resp + len, cap - 1 - len);

		if (n <= 0)
			break;
		len += (size_t)n;
		resp[len] = '\0';
		if (strchr(resp, '\n'))
			break;
	}
	close(fd);
	return len ? 0 : -1;
}

/*
 * `release` on the device's control socket executes held commands: a held
 * WRITE then completes GOOD at once, and the WRITE and PRE-FETCH the watchdog
 * gave up on in test_hold are released too (their late completions must be
 * swallowed): three in all.
 */
static void test_ctl_release(void)
{
	uint8_t cdb[10];
	char path[400], resp[512];
	struct hcmd *held;

	if (!dev_main)
		return;
	cdb10(cdb, 0x2a, 300, 1);
	held = hcmd_new(cdb, 10, 512);
	memset(held->data, 0xa5, 512);
	hcmd_start(dev_main, held);
	CHECK(!hcmd_wait(held, 200), "held WRITE answered before release (status %d)",
	      held->status);
	snprintf(path, sizeof(path), "%s/ctl.sock", tmpdir);
	CHECK(ctl_request(path, "{\"cmd\": \"release\", \"all\": true}", resp, sizeof(resp)) == 0,
	      "no answer on %s", path);
	CHECK(strstr(resp, "\"ok\":true") && strstr(resp, "\"released\":3"),
	      "release answered '%s', want ok and released 3", resp);
	CHECK(hcmd_wait(held, 2000) && held->status == TCMU_STS_OK,
	      "released WRITE: completed %d status %d", held->completed, held->status);
	if (held->completed)
		hcmd_free(held);
}

/* close tears the device down, including commands the engine still holds; the trace has the faults.
 */
static void test_close(void)
{
	char path[400], *text = NULL;
	size_t cap = 0;
	FILE *f;

	if (!dev_main)
		return;
	standin_handler->close(dev_main);
	CHECK(dev_main->runner_private == NULL, "close left private data");
	free(dev_main);
	dev_main = NULL;

	snprintf(path, sizeof(path), "%s/trace.jsonl", tmpdir);
	f = fopen(path, "r");
	CHECK(f != NULL, "no trace file %s", path);
	if (!f)
		return;
	if (getdelim(&text, &cap, '\0', f) < 0) {
		free(text);
		text = NULL;
	}
	fclose(f);
	CHECK(text && strstr(text, "bad-sectors"), "trace does not mention rule bad-sectors");
	CHECK(text && strstr(text, "hung-write"), "trace does not mention rule hung-write");
	free(text);
}

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
    {"register", test_register},
    {"check_config", test_check_config},
    {"open_and_identity", test_open_and_identity},
    {"open_geometry", test_open_geometry},
    {"write_read", test_write_read},
    {"sense", test_sense},
    {"out_of_range", test_out_of_range},
    {"status_mapping", test_status_mapping},
    {"delay_does_not_block", test_delay_does_not_block},
    {"hold", test_hold},
    {"ctl_release", test_ctl_release},
    {"resize", test_resize},
    {"resize_reconfig_rules", test_resize_reconfig_rules},
    {"file_store", test_file_store},
    {"read_only_config", test_read_only_config},
    {"read_only_commands", test_read_only_commands},
    {"log_lines", test_log_lines},
    {"close", test_close},
};

/* Removes the temporary directory and what the tests left in it. */
static void cleanup_tmp(void)
{
	char cmd[400];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", tmpdir);
}

int main(int argc, char **argv)
{
	const char *so = NULL;
	const char *tmp = getenv("TMPDIR");
	int (*init)(void);
	int argi;

	for (argi = 1; argi < argc && argv[argi][0] == '-'; argi++)
		if (!strcmp(argv[argi], "-v")) {
			verbose = true;
			standin_log_level = 4;
		}
	if (argi >= argc) {
		fprintf(stderr, "usage: %s [-v] HANDLER.so [TEST...]\n", argv[0]);
		return 2;
	}
	so = argv[argi++];
	dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		fprintf(stderr, "dlopen %s: %s\n", so, dlerror());
		return 1;
	}
	init = (int (*)(void))dlsym(dl, "handler_init");
	if (!init || init() != 0) {
		fprintf(stderr, "handler_init missing or failed\n");
		return 1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s/fl-tcmu-XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	write_file(good_path, sizeof(good_path), "good.json", scenario_good);
	write_file(bad_path, sizeof(bad_path), "bad.json", scenario_bad);
	write_file(tmf_path, sizeof(tmf_path), "tmf.json", scenario_tmf);
	write_file(resize_path, sizeof(resize_path), "resize.json", scenario_resize);
	write_file(eod_path, sizeof(eod_path), "eod.json", scenario_eod);
	write_file(two_luns_path, sizeof(two_luns_path), "two-luns.json", scenario_two_luns);
	write_file(ro_path, sizeof(ro_path), "ro.json", scenario_ro);

	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		bool want = argi >= argc;
		int before = fl_failures;

		for (int j = argi; j < argc && !want; j++)
			want = !strcmp(argv[j], tests[i].name);
		if (!want)
			continue;
		tests[i].fn();
		printf("%s %s\n", fl_failures == before ? "ok  " : "FAIL", tests[i].name);
	}
	if (dev_main)
		test_close();
	cleanup_tmp();
	dlclose(dl);
	printf("%d failure(s)\n", fl_failures);
	return fl_failures ? 1 : 0;
}
