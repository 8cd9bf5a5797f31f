/* SPDX-License-Identifier: MIT */
/*
 * fl_harness.h - the shared harness of the robustness test programs
 * (the .c files of tests/robustness/): the monotonic clock, what /proc says of the target
 * (memory, CPU time), stopping it, searching its log, and raw iSCSI over a
 * loopback TCP connection (dial, bounded reads, whole PDUs). Every wait is
 * bounded by a time the caller gives; nothing here decides a test's outcome
 * (the checks stay in the programs, with fl_test.h's CHECK).
 */
#ifndef FL_HARNESS_H
#define FL_HARNESS_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* 1 in an AddressSanitizer build (its bounds on time and memory are looser), else 0. */
#if defined(__SANITIZE_ADDRESS__)
#define FL_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FL_SANITIZED 1
#endif
#endif
#ifndef FL_SANITIZED
#define FL_SANITIZED 0
#endif

/* Milliseconds of the monotonic clock. */
long fl_now_ms(void);

/* A field ("VmRSS", "VmHWM", ...) of /proc/PID/status in KiB, or -1. */
long fl_proc_kib(pid_t pid, const char *field);

/* CPU time (user + system clock ticks) process pid has used, or -1. */
long fl_proc_ticks(pid_t pid);

/* Stops pid: SIGTERM, then SIGKILL after grace_ms (polling every poll_ms); reaps it. */
void fl_proc_stop(pid_t pid, long grace_ms, long poll_ms);

/* Size of the file at path, or -1. */
long fl_file_size(const char *path);

/* Lines of the file at path that hold text (0 when it cannot be read). */
long fl_file_count(const char *path, const char *text);

/* True if a line of the file at path holds text. */
bool fl_file_has(const char *path, const char *text);

/* A new TCP connection to `to` (from src_ip when not NULL), TCP_NODELAY; -1 on failure. */
int fl_dial(const struct sockaddr_in *to, const char *src_ip);

/* Closes fd with a reset (no TIME_WAIT on our side). */
void fl_drop(int fd);

/* Sends all of buf; false on error, or when ms >= 0 and the peer takes more than ms a send. */
bool fl_put(int fd, const void *buf, size_t n, int ms);

/* Reads exactly n bytes, each read within ms; 1 ok, 0 EOF/reset, -1 timeout. */
int fl_get(int fd, void *buf, size_t n, int ms);

/*
 * Reads one PDU (up to 256 KiB of AHS and data); its data, NUL-terminated, into data[cap]
 * when data is not NULL. Returns its opcode, -2 on EOF/reset (or a larger PDU), -1 on timeout.
 */
int fl_get_pdu_data(int fd, uint8_t bhs[48], uint8_t *data, size_t cap, int ms);

/* fl_get_pdu_data, discarding the PDU's data. */
int fl_get_pdu(int fd, uint8_t bhs[48], int ms);

/* True if the peer closed fd within ms (PDUs read meanwhile are discarded). */
bool fl_closed_within(int fd, int ms);

/* Sends a PDU: BHS, then data padded to 4 bytes (DataSegmentLength set here); ms as fl_put. */
bool fl_put_pdu(int fd, uint8_t bhs[48], const void *data, uint32_t dlen, int ms);

/* Sends a Login Request (Transit, CSG 1 to NSG 3) whose ISID qualifier is id and ITT
 * 0x1000 + id, with the text keys; ms as fl_put. */
bool fl_put_login(int fd, uint32_t id, const void *keys, uint32_t len, int ms);

#endif
