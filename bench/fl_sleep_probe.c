/* SPDX-License-Identifier: MIT */
/*
 * fl_sleep_probe.c - what the machine itself allows a delay to be: the floor
 * the delay-accuracy benchmark compares faultlun against. Two probes, run for
 * a fixed time beside the load:
 *   sleep  a thread sleeps USEC (clock_nanosleep, CLOCK_MONOTONIC, absolute
 *          deadline) over and over and records how late it woke up: the error
 *          any timer-driven delay on this machine pays at least once (with
 *          the 1 us timer slack faultlun's event loop sets for itself);
 *   spin   a thread busy-reads the clock for USEC at a time and records the
 *          largest gap between two reads in each window: time the CPU was
 *          taken away from a running thread (a hypervisor's steal, or other
 *          runnable work), which no design in user space can avoid.
 * Prints one key=value line (microseconds), like fl_iscsi_load:
 *   probe=sleep n= p50_us= p90_us= p99_us= p999_us= max_us=
 *
 *   fl_sleep_probe [-m sleep|spin] [-u USEC] [-t SECONDS]   (sleep, 5000, 5)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/* CLOCK_MONOTONIC in nanoseconds. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* qsort order for uint64_t. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The value at fraction q of the sorted samples, in microseconds. */
static double pct_us(const uint64_t *v, size_t n, double q)
{
	size_t i = (size_t)(q * (double)n);

	if (i >= n)
		i = n - 1;
	return (double)v[i] / 1000.0;
}

/* One sleep to an absolute deadline; returns how late it woke up (ns). */
static uint64_t one_sleep(uint64_t usec)
{
	uint64_t due = now_ns() + usec * 1000u;
	struct timespec ts = {.tv_sec = (time_t)(due / 1000000000ull),
			      .tv_nsec = (long)(due % 1000000000ull)};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	uint64_t t = now_ns();
	return t > due ? t - due : 0;
}

/* One busy window of usec; returns the largest gap between two clock reads (ns). */
static uint64_t one_spin(uint64_t usec)
{
	uint64_t start = now_ns(), end = start + usec * 1000u, prev = start, gap = 0;

	for (uint64_t t = start; t < end; t = now_ns()) {
		if (t - prev > gap)
			gap = t - prev;
		prev = t;
	}
	return gap;
}

/* Prints usage and exits 2. */
static void usage(void)
{
	fprintf(stderr, "usage: fl_sleep_probe [-m sleep|spin] [-u USEC] [-t SECONDS]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *mode = "sleep";
	uint64_t usec = 5000;
	double secs = 5;
	int o;

	while ((o = getopt(argc, argv, "m:u:t:")) != -1) {
		switch (o) {
		case 'm':
			mode = optarg;
			break;
		case 'u':
			usec = strtoull(optarg, NULL, 10);
			break;
		case 't':
			secs = atof(optarg);
			break;
		default:
			usage();
		}
	}
	int spin = !strcmp(mode, "spin");
	if ((!spin && strcmp(mode, "sleep")) || usec == 0 || usec > 10000000 || secs <= 0 ||
	    secs > 3600)
		usage();
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	size_t cap = (size_t)(secs * 1e6 / (double)usec) + 16, n = 0;
	uint64_t *v = malloc(cap * sizeof(*v));
	if (!v) {
		fprintf(stderr, "fl_sleep_probe: out of memory\n");
		return 1;
	}
	uint64_t stop = now_ns() + (uint64_t)(secs * 1e9);
	while (n < cap && now_ns() < stop)
		v[n++] = spin ? one_spin(usec) : one_sleep(usec);
	qsort(v, n, sizeof(*v), cmp_u64);
	printf("probe=%s n=%zu p50_us=%.0f p90_us=%.0f p99_us=%.0f p999_us=%.0f max_us=%.0f\n",
	       mode, n, pct_us(v, n, 0.5), pct_us(v, n, 0.9), pct_us(v, n, 0.99),
	       pct_us(v, n, 0.999), pct_us(v, n, 1.0));
	free(v);
	return 0;
}
