// SPDX-License-Identifier: MIT
/*
 * fl_harness.c - the robustness test programs' shared harness (fl_harness.h).
 */
#include "fl_harness.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* See fl_harness.h. */
long fl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* See fl_harness.h. */
long fl_proc_kib(pid_t pid, const char *field)
{
	char path[64], line[256];
	size_t n = strlen(field);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

/* See fl_harness.h. */
long fl_proc_ticks(pid_t pid)
{
	char path[64], buf[1024];
	long ut = 0, st = 0;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* the fields after the command name, which may hold anything but ends at the last ')' */
	char *p = strrchr(buf, ')');
	if (!p ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld", &ut, &st) != 2)
		return -1;
	return ut + st;
}

/* See fl_harness.h. */
void fl_proc_stop(pid_t pid, long grace_ms, long poll_ms)
{
	long t0 = fl_now_ms();
	int st;

	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (fl_now_ms() - t0 > grace_ms) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			break;
		}
		usleep((useconds_t)poll_ms * 1000);
	}
}

/* See fl_harness.h. */
long fl_file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : (long)st.st_size;
}

/* Lines of the file at path holding text, stopping at the first when first_only. */
static long file_lines(const char *path, const char *text, bool first_only)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	long n = 0;

	if (!f)
		return 0;
	while ((!first_only || !n) && fgets(line, sizeof(line), f))
		n += strstr(line, text) != NULL;
	fclose(f);
	return n;
}

/* See fl_harness.h. */
long fl_file_count(const char *path, const char *text)
{
	return file_lines(path, text, false);
}

/* See fl_harness.h. */
bool fl_file_has(const char *path, const char *text)
{
	return file_lines(path, text, true) > 0;
}

/* See fl_harness.h. */
int fl_dial(const struct sockaddr_in *to, const char *src_ip)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	if (src_ip) {
		struct sockaddr_in sa = {.sin_family = AF_INET};

		if (inet_pton(AF_INET, src_ip, &sa.sin_addr) != 1 ||
		    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
			close(fd);
			return -1;
		}
	}
	if (connect(fd, (const struct sockaddr *)to, sizeof(*to)) != 0) {
		close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* See fl_harness.h. */
void fl_drop(int fd)
{
	struct linger lg = {.l_onoff = 1, .l_linger = 0};

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

/* See fl_harness.h. */
bool fl_put(int fd, const void *buf, size_t n, int ms)
{
	const uint8_t *p = buf;

	while (n > 0) {
		ssize_t w;

		if (ms >= 0) {
			struct pollfd pf = {.fd = fd, .events = POLLOUT};

			if (poll(&pf, 1, ms) <= 0)
				return false;
			w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (w < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
		} else {
			w = send(fd, p, n, MSG_NOSIGNAL);
		}
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* See fl_harness.h. */
int fl_get(int fd, void *buf, size_t n, int ms)
{
	uint8_t *p = buf;

	while (n > 0) {
		struct pollfd pf = {.fd = fd, .events = POLLIN};

		if (poll(&pf, 1, ms) <= 0)
			return -1;
		ssize_t r = recv(fd, p, n, 0);
		if (r <= 0)
			return 0;
		p += r;
		n -= (size_t)r;
	}
	return 1;
}

/* See fl_harness.h. */
int fl_get_pdu_data(int fd, uint8_t bhs[48], uint8_t *data, size_t cap, int ms)
{
	static uint8_t junk[1 << 18];
	int r = fl_get(fd, bhs, 48, ms);

	if (r <= 0)
		return r == 0 ? -2 : -1;
	uint32_t dlen = ((uint32_t)bhs[5] << 16) | ((uint32_t)bhs[6] << 8) | bhs[7];
	size_t rest = (size_t)bhs[4] * 4 + ((dlen + 3) & ~3u);
	if (rest > sizeof(junk))
		return -2;
	if (rest && fl_get(fd, junk, rest, ms) <= 0)
		return -2;
	if (data && cap) {
		size_t n = dlen < cap - 1 ? dlen : cap - 1;

		memcpy(data, junk + (size_t)bhs[4] * 4, n);
		data[n] = 0;
	}
	return bhs[0] & 0x3f;
}

/* See fl_harness.h. */
int fl_get_pdu(int fd, uint8_t bhs[48], int ms)
{
	return fl_get_pdu_data(fd, bhs, NULL, 0, ms);
}

/* See fl_harness.h. */
bool fl_closed_within(int fd, int ms)
{
	uint8_t bhs[48];
	long t0 = fl_now_ms();

	for (;;) {
		long left = ms - (fl_now_ms() - t0);

		if (left <= 0)
			return false;
		int r = fl_get_pdu(fd, bhs, (int)left);
		if (r == -2)
			return true;
		if (r == -1)
			return false;
	}
}

/* See fl_harness.h. */
bool fl_put_pdu(int fd, uint8_t bhs[48], const void *data, uint32_t dlen, int ms)
{
	static const uint8_t pad[4];

	bhs[5] = (uint8_t)(dlen >> 16);
	bhs[6] = (uint8_t)(dlen >> 8);
	bhs[7] = (uint8_t)dlen;
	return fl_put(fd, bhs, 48, ms) && (!dlen || fl_put(fd, data, dlen, ms)) &&
	       fl_put(fd, pad, (4 - dlen % 4) % 4, ms);
}

/* A Login Request of the operational stage that asks for full feature. */
bool fl_put_login(int fd, uint32_t id, const void *keys, uint32_t len, int ms)
{
	uint8_t bhs[48] = {0x43, 0x80 | (1 << 2) | 3};

	bhs[8] = 0x80;
	for (int i = 0; i < 4; i++) {
		bhs[10 + i] = (uint8_t)(id >> (24 - 8 * i));
		bhs[16 + i] = (uint8_t)((0x1000 + id) >> (24 - 8 * i));
	}
	return fl_put_pdu(fd, bhs, keys, len, ms);
}
