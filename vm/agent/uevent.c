/* SPDX-License-Identifier: MIT */
/*
 * uevent.c - fl-vm-uevent, the VM lab's kernel-uevent observer (runs in the
 * guest). Joins the kernel's uevent multicast group on a
 * NETLINK_KOBJECT_UEVENT socket (through libnl) and writes one JSON line per
 * event to stdout: {"t": CLOCK_MONOTONIC seconds, "action", "devpath",
 * "subsystem", "env": {KEY: VALUE...}}. The SCSI midlayer's events
 * (SDEV_MEDIA_CHANGE, SDEV_UA=..., capacity changes) and block / iSCSI
 * session add / remove / change events arrive here. Runs until killed.
 */
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include <errno.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Prints s as a JSON string literal. */
static void put_json_string(FILE *out, const char *s, size_t n)
{
	fputc('"', out);
	for (size_t i = 0; i < n && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* Writes one uevent (the kernel's "action@devpath\0KEY=VALUE\0..." form). */
static void print_event(const char *buf, size_t len, double t)
{
	const char *action = NULL, *devpath = NULL, *subsystem = NULL;
	size_t off = strnlen(buf, len) + 1;

	/* Skip udev's re-broadcasts ("libudev" magic header); keep kernel ones. */
	if (len >= 8 && !memcmp(buf, "libudev", 7))
		return;
	for (size_t o = off; o < len; o += strnlen(buf + o, len - o) + 1) {
		if (!strncmp(buf + o, "ACTION=", 7))
			action = buf + o + 7;
		else if (!strncmp(buf + o, "DEVPATH=", 8))
			devpath = buf + o + 8;
		else if (!strncmp(buf + o, "SUBSYSTEM=", 10))
			subsystem = buf + o + 10;
	}
	printf("{\"t\":%.6f,\"action\":", t);
	put_json_string(stdout, action ? action : "", 256);
	printf(",\"devpath\":");
	put_json_string(stdout, devpath ? devpath : "", 1024);
	printf(",\"subsystem\":");
	put_json_string(stdout, subsystem ? subsystem : "", 256);
	printf(",\"env\":{");
	int first = 1;
	for (size_t o = off; o < len; o += strnlen(buf + o, len - o) + 1) {
		const char *kv = buf + o, *eq = memchr(kv, '=', strnlen(kv, len - o));
		if (!eq)
			continue;
		if (!first)
			fputc(',', stdout);
		first = 0;
		put_json_string(stdout, kv, (size_t)(eq - kv));
		fputc(':', stdout);
		put_json_string(stdout, eq + 1, strnlen(eq + 1, len - o));
	}
	printf("}}\n");
	fflush(stdout);
}

int main(void)
{
	struct nl_sock *sk = nl_socket_alloc();
	if (!sk) {
		fprintf(stderr, "fl-vm-uevent: out of memory\n");
		return 1;
	}
	nl_socket_disable_seq_check(sk);
	nl_join_groups(sk, 1);
	int rc = nl_connect(sk, NETLINK_KOBJECT_UEVENT);
	if (rc < 0) {
		fprintf(stderr, "fl-vm-uevent: nl_connect: %s\n", nl_geterror(rc));
		nl_socket_free(sk);
		return 1;
	}
	nl_socket_set_buffer_size(sk, 1 << 20, 0);
	fprintf(stderr, "fl-vm-uevent: listening\n");
	for (;;) {
		struct sockaddr_nl peer;
		unsigned char *buf = NULL;
		int n = nl_recv(sk, &peer, &buf, NULL);
		if (n <= 0) {
			free(buf);
			if (n == -NLE_INTR || n == -NLE_AGAIN || n == 0)
				continue;
			fprintf(stderr, "fl-vm-uevent: nl_recv: %s\n", nl_geterror(n));
			continue;
		}
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		print_event((const char *)buf, (size_t)n, ts.tv_sec + ts.tv_nsec / 1e9);
		free(buf);
	}
}
