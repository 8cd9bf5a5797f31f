/* SPDX-License-Identifier: MIT */
/*
 * fl_iscsi_hold.c - many sessions, many outstanding commands, for the scale
 * benchmark. Logs in SESSIONS sessions (libiscsi, asynchronous API after a
 * synchronous login), submits PER 4 KiB READ(16)s on each, spread over LUNs
 * FIRST..LAST round-robin, and keeps every session serviced (so NOP-In pings are
 * answered, RFC 7143 11.19) for SECONDS without waiting for the commands, which
 * a scenario is expected to hold. Prints how many were submitted and how many
 * completed, then closes the sessions.
 *
 *   fl_iscsi_hold -n SESSIONS -p PER -f FIRST -l LAST -t SECONDS PORTAL TARGET_IQN
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

static unsigned long completed;

/* Completion of a command that was not held (counted, then freed). */
static void done(struct iscsi_context *iscsi, int status, void *command_data, void *priv)
{
	(void)iscsi;
	(void)status;
	(void)priv;
	completed++;
	if (command_data)
		scsi_free_scsi_task(command_data);
}

/* Monotonic seconds. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int nsess = 64, per = 157, first = 1, last = 255, opt;
	double secs = 10;

	while ((opt = getopt(argc, argv, "n:p:f:l:t:")) != -1) {
		switch (opt) {
		case 'n':
			nsess = atoi(optarg);
			break;
		case 'p':
			per = atoi(optarg);
			break;
		case 'f':
			first = atoi(optarg);
			break;
		case 'l':
			last = atoi(optarg);
			break;
		case 't':
			secs = atof(optarg);
			break;
		default:
			return 2;
		}
	}
	if (optind != argc - 2 || nsess < 1 || per < 0 || last < first) {
		fprintf(stderr, "usage: fl_iscsi_hold -n SESSIONS -p PER -f FIRST -l LAST "
				"-t SECONDS PORTAL TARGET_IQN\n");
		return 2;
	}
	const char *portal = argv[optind], *iqn = argv[optind + 1];
	struct iscsi_context **ctx = calloc((size_t)nsess, sizeof(*ctx));
	struct pollfd *pfd = calloc((size_t)nsess, sizeof(*pfd));
	if (!ctx || !pfd)
		return 1;
	unsigned long submitted = 0;
	int lun = first;
	for (int i = 0; i < nsess; i++) {
		char name[96];
		snprintf(name, sizeof(name), "iqn.2024-01.org.faultlun:hold-%d", i);
		ctx[i] = iscsi_create_context(name);
		iscsi_set_targetname(ctx[i], iqn);
		iscsi_set_session_type(ctx[i], ISCSI_SESSION_NORMAL);
		iscsi_set_header_digest(ctx[i], ISCSI_HEADER_DIGEST_NONE);
		if (iscsi_full_connect_sync(ctx[i], portal, first) != 0) {
			fprintf(stderr, "fl_iscsi_hold: login %d: %s\n", i,
				iscsi_get_error(ctx[i]));
			return 1;
		}
		for (int k = 0; k < per; k++) {
			if (!iscsi_read16_task(ctx[i], lun, (uint64_t)k * 8, 4096, 512, 0, 0, 0, 0,
					       0, done, NULL)) {
				fprintf(stderr, "fl_iscsi_hold: submit: %s\n",
					iscsi_get_error(ctx[i]));
				return 1;
			}
			submitted++;
			lun = lun == last ? first : lun + 1;
		}
	}
	printf("submitted=%lu sessions=%d\n", submitted, nsess);
	fflush(stdout);
	double end = now_s() + secs;
	while (now_s() < end) {
		for (int i = 0; i < nsess; i++) {
			pfd[i].fd = iscsi_get_fd(ctx[i]);
			pfd[i].events = (short)iscsi_which_events(ctx[i]);
			pfd[i].revents = 0;
		}
		if (poll(pfd, (nfds_t)nsess, 100) < 0)
			return 1;
		for (int i = 0; i < nsess; i++) {
			if (iscsi_service(ctx[i], pfd[i].revents) < 0) {
				fprintf(stderr, "fl_iscsi_hold: session %d: %s\n", i,
					iscsi_get_error(ctx[i]));
				return 1;
			}
		}
	}
	printf("completed=%lu\n", completed);
	for (int i = 0; i < nsess; i++)
		iscsi_destroy_context(ctx[i]);
	free(ctx);
	free(pfd);
	return 0;
}
