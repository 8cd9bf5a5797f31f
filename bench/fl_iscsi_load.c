/* SPDX-License-Identifier: MIT */
/*
 * fl_iscsi_load.c - a small iSCSI load generator for the benchmarks. One
 * session (libiscsi's asynchronous API) keeps QD READ(16) or WRITE(16)
 * commands of one size outstanding against one LUN for a fixed time,
 * random or sequential, and prints IOPS, MB/s and completion latency
 * percentiles (1 us buckets) on one key=value line, so that scripts can
 * parse it. Commands that end in anything but GOOD status are counted as
 * errors (SAM-5 5.3.1 status codes).
 *
 *   fl_iscsi_load [-w] [-s] [-q QD] [-b BYTES] [-t SECONDS] URL
 *     -w  write (default read)     -s  sequential (default random)
 *     -q  queue depth (default 32) -b  bytes per command (default 4096)
 *     -t  seconds (default 5)      -R  confine the LBAs to the first BYTES of the LUN
 */
#include <iscsi/iscsi.h>
#include <iscsi/scsi-lowlevel.h>

#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LAT_BUCKETS 2000000 /* 1 us each: up to 2 s */

struct load {
	struct iscsi_context *iscsi;
	int lun;
	int write;
	int seq;
	uint32_t block_size;
	uint64_t blocks;
	uint32_t xfer_blocks;
	unsigned char *buf;
	uint64_t next_lba;
	int outstanding;
	int stopping;
	uint64_t done;
	uint64_t errors;
	uint32_t *lat;
	uint64_t lat_max;
	uint64_t seed;
};

struct slot {
	struct load *ld;
	uint64_t start_ns;
};

/* Monotonic nanoseconds. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* xorshift64: a cheap random LBA source. */
static uint64_t rnd(struct load *ld)
{
	ld->seed ^= ld->seed << 13;
	ld->seed ^= ld->seed >> 7;
	ld->seed ^= ld->seed << 17;
	return ld->seed;
}

static int submit(struct load *ld, struct slot *s);

/* Completion: record latency and status, then issue the next command. */
static void complete(struct iscsi_context *iscsi, int status, void *command_data, void *priv)
{
	struct slot *s = priv;
	struct load *ld = s->ld;
	struct scsi_task *task = command_data;
	uint64_t us = (now_ns() - s->start_ns) / 1000;

	(void)iscsi;
	if (status != SCSI_STATUS_GOOD)
		ld->errors++;
	if (task)
		scsi_free_scsi_task(task);
	if (us >= LAT_BUCKETS)
		us = LAT_BUCKETS - 1;
	ld->lat[us]++;
	if (us > ld->lat_max)
		ld->lat_max = us;
	ld->done++;
	ld->outstanding--;
	if (!ld->stopping && submit(ld, s) != 0)
		ld->stopping = 1;
}

/* Issues one command for slot s. */
static int submit(struct load *ld, struct slot *s)
{
	uint64_t span = ld->blocks / ld->xfer_blocks;
	uint64_t lba;
	uint32_t len = ld->xfer_blocks * ld->block_size;
	struct scsi_task *t;

	if (ld->seq) {
		lba = ld->next_lba;
		ld->next_lba += ld->xfer_blocks;
		if (ld->next_lba + ld->xfer_blocks > ld->blocks)
			ld->next_lba = 0;
	} else {
		lba = (rnd(ld) % span) * ld->xfer_blocks;
	}
	s->start_ns = now_ns();
	if (ld->write)
		t = iscsi_write16_task(ld->iscsi, ld->lun, lba, ld->buf, len, (int)ld->block_size,
				       0, 0, 0, 0, 0, complete, s);
	else
		t = iscsi_read16_task(ld->iscsi, ld->lun, lba, len, (int)ld->block_size, 0, 0, 0, 0,
				      0, complete, s);
	if (!t) {
		fprintf(stderr, "fl_iscsi_load: submit: %s\n", iscsi_get_error(ld->iscsi));
		return -1;
	}
	ld->outstanding++;
	return 0;
}

/* Latency at quantile q (0..1) in microseconds. */
static uint64_t pct(const struct load *ld, double q)
{
	uint64_t want = (uint64_t)(q * (double)ld->done);
	uint64_t seen = 0;

	if (want >= ld->done && ld->done)
		want = ld->done - 1;
	for (uint64_t i = 0; i < LAT_BUCKETS; i++) {
		seen += ld->lat[i];
		if (seen > want)
			return i;
	}
	return ld->lat_max;
}

/* Runs the event loop until the deadline and the drain. */
static int run_loop(struct load *ld, uint64_t end_ns)
{
	while (ld->outstanding > 0 || !ld->stopping) {
		struct pollfd pfd = {.fd = iscsi_get_fd(ld->iscsi),
				     .events = (short)iscsi_which_events(ld->iscsi)};
		int n = poll(&pfd, 1, 100);

		if (n < 0)
			return -1;
		if (iscsi_service(ld->iscsi, n > 0 ? pfd.revents : 0) < 0) {
			fprintf(stderr, "fl_iscsi_load: service: %s\n", iscsi_get_error(ld->iscsi));
			return -1;
		}
		if (!ld->stopping && now_ns() >= end_ns)
			ld->stopping = 1;
		if (now_ns() > end_ns + 30000000000ull) {
			fprintf(stderr, "fl_iscsi_load: %d commands never completed\n",
				ld->outstanding);
			return -1;
		}
	}
	return 0;
}

/* Prints usage and exits. */
static void usage(void)
{
	fprintf(stderr,
		"usage: fl_iscsi_load [-w] [-s] [-q QD] [-b BYTES] [-t SECONDS] [-R BYTES] URL\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct load ld = {.seed = 0x9e3779b97f4a7c15ull};
	int qd = 32, opt;
	uint32_t bytes = 4096;
	double secs = 5;
	uint64_t region = 0;

	while ((opt = getopt(argc, argv, "wsq:b:t:R:")) != -1) {
		switch (opt) {
		case 'w':
			ld.write = 1;
			break;
		case 's':
			ld.seq = 1;
			break;
		case 'q':
			qd = atoi(optarg);
			break;
		case 'b':
			bytes = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'R':
			region = strtoull(optarg, NULL, 0);
			break;
		case 't':
			secs = atof(optarg);
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1 || qd < 1 || bytes == 0 || secs <= 0)
		usage();

	ld.iscsi = iscsi_create_context("iqn.2024-01.org.faultlun:load");
	struct iscsi_url *url = iscsi_parse_full_url(ld.iscsi, argv[optind]);
	if (!url) {
		fprintf(stderr, "fl_iscsi_load: bad URL: %s\n", iscsi_get_error(ld.iscsi));
		return 1;
	}
	iscsi_set_targetname(ld.iscsi, url->target);
	iscsi_set_session_type(ld.iscsi, ISCSI_SESSION_NORMAL);
	iscsi_set_header_digest(ld.iscsi, ISCSI_HEADER_DIGEST_NONE);
	ld.lun = url->lun;
	if (iscsi_full_connect_sync(ld.iscsi, url->portal, url->lun) != 0) {
		fprintf(stderr, "fl_iscsi_load: login: %s\n", iscsi_get_error(ld.iscsi));
		return 1;
	}
	struct scsi_task *rc = iscsi_readcapacity16_sync(ld.iscsi, ld.lun);
	struct scsi_readcapacity16 *cap = rc ? scsi_datain_unmarshall(rc) : NULL;
	if (!rc || rc->status != SCSI_STATUS_GOOD || !cap) {
		fprintf(stderr, "fl_iscsi_load: READ CAPACITY(16) failed\n");
		return 1;
	}
	ld.block_size = cap->block_length;
	ld.blocks = cap->returned_lba + 1;
	scsi_free_scsi_task(rc);
	if (bytes % ld.block_size || bytes / ld.block_size > ld.blocks) {
		fprintf(stderr, "fl_iscsi_load: -b must be a multiple of %u\n", ld.block_size);
		return 1;
	}
	ld.xfer_blocks = bytes / ld.block_size;
	if (region && region / ld.block_size < ld.blocks)
		ld.blocks = region / ld.block_size;
	if (ld.blocks < ld.xfer_blocks) {
		fprintf(stderr, "fl_iscsi_load: -R smaller than -b\n");
		return 1;
	}
	ld.buf = calloc(1, bytes);
	ld.lat = calloc(LAT_BUCKETS, sizeof(*ld.lat));
	struct slot *slots = calloc((size_t)qd, sizeof(*slots));
	if (!ld.buf || !ld.lat || !slots)
		return 1;
	memset(ld.buf, 0xa5, bytes);

	uint64_t t0 = now_ns();
	for (int i = 0; i < qd; i++) {
		slots[i].ld = &ld;
		if (submit(&ld, &slots[i]) != 0)
			return 1;
	}
	int err = run_loop(&ld, t0 + (uint64_t)(secs * 1e9));
	double el = (double)(now_ns() - t0) / 1e9;

	printf("ios=%llu errors=%llu secs=%.3f iops=%.0f mbps=%.1f p50_us=%llu p90_us=%llu "
	       "p99_us=%llu p999_us=%llu max_us=%llu\n",
	       (unsigned long long)ld.done, (unsigned long long)ld.errors, el, (double)ld.done / el,
	       (double)ld.done * bytes / el / 1e6, (unsigned long long)pct(&ld, 0.5),
	       (unsigned long long)pct(&ld, 0.9), (unsigned long long)pct(&ld, 0.99),
	       (unsigned long long)pct(&ld, 0.999), (unsigned long long)ld.lat_max);
	if (!err)
		iscsi_logout_sync(ld.iscsi);
	iscsi_destroy_url(url);
	iscsi_destroy_context(ld.iscsi);
	free(slots);
	free(ld.lat);
	free(ld.buf);
	return err || ld.errors ? 1 : 0;
}
