/* SPDX-License-Identifier: MIT */
/*
 * tcmu_abi.h - the parts of the tcmu-runner 1.5.4 handler ABI that faultlun uses.
 *
 * Debian ships no tcmu-runner headers, so the project declares the structures
 * and functions of the runner's handler contract itself, written from the
 * documented contract and pinned to the x86-64 layout of tcmu-runner 1.5.4
 * (Debian 12 package 1.5.4-4.1) by the static asserts at the end. The layout
 * was checked against the installed binaries, not only against documentation:
 *
 *   tcmur_cmd_complete      is `jmp *0x58(%rsi)`       -> tcmur_cmd.done @ 88
 *   tcmur_register_handler  reads 0x8(%rdi), 0xb8(..)  -> subtype @ 8, init @ 184
 *   cmdproc thread          tcmulib_get_next_command(dev, 0x60)
 *                                                      -> sizeof(struct tcmur_cmd) == 96
 *                           call *0x48(..)             -> handle_cmd @ 72
 *                           call *0x80(..) .. *0xa0(..) -> report_event @ 128 .. get_lock_state @
 * 160 libtcmu tcmulib_get_next_command allocates 0x88 + hm size, stores hm_private @ 0x80
 *                                                      -> sizeof(struct tcmulib_cmd) == 136
 *   libtcmu tcmulib_command_complete reads cmd_id @ 0 (movzwl), copies sense from 0x20
 *                                                      -> sense_buf @ 32, 96 bytes
 *
 * Symbols resolve from the process at dlopen time (the runner binary exports
 * tcmur_*, libtcmu.so.2 exports tcmu_* / tcmulib_*); the handler has no
 * DT_NEEDED on libtcmu.
 */
#ifndef FL_TCMU_ABI_H
#define FL_TCMU_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

struct tcmu_device; /* opaque, owned by libtcmu */

/* Status codes a callout returns (libtcmu_common.h of 1.5.4, same values). */
enum tcmu_sts {
	TCMU_STS_ASYNC_HANDLED = -2,
	TCMU_STS_NOT_HANDLED = -1,
	TCMU_STS_OK = 0,
	TCMU_STS_NO_RESOURCE = 1,     /* SAM status TASK SET FULL */
	TCMU_STS_PASSTHROUGH_ERR = 2, /* CHECK CONDITION with the handler's sense_buf */
	TCMU_STS_BUSY = 3,	      /* SAM status BUSY */
	TCMU_STS_WR_ERR = 4,
	TCMU_STS_RD_ERR = 5,
	TCMU_STS_MISCOMPARE = 6,
	TCMU_STS_INVALID_CMD = 7,
	TCMU_STS_INVALID_CDB = 8,
	TCMU_STS_INVALID_PARAM_LIST = 9,
	TCMU_STS_INVALID_PARAM_LIST_LEN = 10,
	TCMU_STS_TIMEOUT = 11, /* SAM status BUSY */
	TCMU_STS_FENCED = 12,
	TCMU_STS_HW_ERR = 13, /* HARDWARE ERROR 44/00 */
	TCMU_STS_RANGE = 14,  /* ILLEGAL REQUEST 21/00 */
};

/* Sense bytes the kernel's ring entry carries (TCMU_SENSE_BUFFERSIZE). */
#define TCMU_SENSE_BUFFERSIZE 96

/* The ring command as libtcmu hands it over; freed by the runner on completion. */
struct tcmulib_cmd {
	uint16_t cmd_id;
	uint8_t *cdb;
	struct iovec *iovec;
	size_t iov_cnt;
	uint8_t sense_buf[TCMU_SENSE_BUFFERSIZE];
	void *hm_private; /* the runner's struct tcmur_cmd */
};

/* A doubly linked list node as the runner embeds it (ccan list_node). */
struct tcmu_abi_list_node {
	struct tcmu_abi_list_node *next, *prev;
};

/* The runner's per-command state; lives in the same allocation as lib_cmd. */
struct tcmur_cmd {
	struct tcmulib_cmd *lib_cmd;
	struct iovec *iovec;
	size_t iov_cnt;
	void *iov_base_copy;
	void *cmd_state;
	size_t requested;
	struct tcmu_abi_list_node cmds_list_entry;
	struct timespec start_time;
	bool timed_out;
	void (*done)(struct tcmu_device *dev, struct tcmur_cmd *cmd, int ret);
};

/* What a reconfig request carries (netlink TCMU_CMD_RECONFIG_DEVICE). */
enum tcmulib_cfg_type {
	TCMULIB_CFG_DEV_CFGSTR = 0,
	TCMULIB_CFG_DEV_SIZE = 1,
	TCMULIB_CFG_WRITE_CACHE = 2,
};
struct tcmulib_cfg_info {
	enum tcmulib_cfg_type type;
	union {
		uint64_t dev_size;
		char *dev_cfgstring;
		bool write_cache;
	} data;
};

/* The handler contract. The runner keeps the pointer: the struct must be static. */
struct tcmur_handler {
	const char *name;
	const char *subtype;
	const char *cfg_desc;
	void *opaque;
	bool (*check_config)(const char *cfgstring, char **reason);
	int (*reconfig)(struct tcmu_device *dev, struct tcmulib_cfg_info *cfg);
	int (*open)(struct tcmu_device *dev, bool reopen);
	void (*close)(struct tcmu_device *dev);
	int nr_threads;
	int (*handle_cmd)(struct tcmu_device *dev, struct tcmur_cmd *cmd);
	int (*read)(struct tcmu_device *dev, struct tcmur_cmd *cmd, struct iovec *iovec,
		    size_t iov_cnt, size_t len, off_t off);
	int (*write)(struct tcmu_device *dev, struct tcmur_cmd *cmd, struct iovec *iovec,
		     size_t iov_cnt, size_t len, off_t off);
	int (*flush)(struct tcmu_device *dev, struct tcmur_cmd *cmd);
	int (*unmap)(struct tcmu_device *dev, struct tcmur_cmd *cmd, uint64_t off, uint64_t len);
	int (*writesame)(struct tcmu_device *dev, struct tcmur_cmd *cmd, uint64_t off, uint64_t len,
			 struct iovec *iovec, size_t iov_cnt);
	int (*caw)(struct tcmu_device *dev, struct tcmur_cmd *cmd, uint64_t off, uint64_t len,
		   struct iovec *iovec, size_t iov_cnt);
	int (*report_event)(struct tcmu_device *dev);
	int (*lock)(struct tcmu_device *dev, uint16_t tag);
	int (*unlock)(struct tcmu_device *dev);
	int (*get_lock_tag)(struct tcmu_device *dev, uint16_t *tag);
	int (*get_lock_state)(struct tcmu_device *dev);
	bool _is_dbus_handler;
	bool (*update_logdir)(void);
	int (*init)(void);
	void (*destroy)(void);
};

/* Exported by the tcmu-runner executable. */
int tcmur_register_handler(struct tcmur_handler *handler);
void tcmur_cmd_complete(struct tcmu_device *dev, void *data, int rc);
void tcmur_dev_set_private(struct tcmu_device *dev, void *priv);
void *tcmur_dev_get_private(struct tcmu_device *dev);

/* Exported by libtcmu.so.2. */
char *tcmu_dev_get_cfgstring(struct tcmu_device *dev);
const char *tcmu_dev_get_uio_name(struct tcmu_device *dev);
uint64_t tcmu_dev_get_num_lbas(struct tcmu_device *dev);
void tcmu_dev_set_num_lbas(struct tcmu_device *dev, uint64_t num_lbas);
uint32_t tcmu_dev_get_block_size(struct tcmu_device *dev);
int tcmu_cfgfs_dev_get_attr_int(struct tcmu_device *dev, const char *name);
int tcmu_cfgfs_dev_set_ctrl_u64(struct tcmu_device *dev, const char *key, uint64_t val);
void tcmu_err_message(struct tcmu_device *dev, const char *funcname, int linenr, const char *fmt,
		      ...) __attribute__((format(printf, 4, 5)));
void tcmu_warn_message(struct tcmu_device *dev, const char *funcname, int linenr, const char *fmt,
		       ...) __attribute__((format(printf, 4, 5)));
void tcmu_info_message(struct tcmu_device *dev, const char *funcname, int linenr, const char *fmt,
		       ...) __attribute__((format(printf, 4, 5)));
void tcmu_dbg_message(struct tcmu_device *dev, const char *funcname, int linenr, const char *fmt,
		      ...) __attribute__((format(printf, 4, 5)));

/* Logging through the runner's log file, with the device name prefixed. */
#define tcmu_abi_err(dev, ...) tcmu_err_message(dev, __func__, __LINE__, __VA_ARGS__)
#define tcmu_abi_warn(dev, ...) tcmu_warn_message(dev, __func__, __LINE__, __VA_ARGS__)
#define tcmu_abi_info(dev, ...) tcmu_info_message(dev, __func__, __LINE__, __VA_ARGS__)
#define tcmu_abi_dbg(dev, ...) tcmu_dbg_message(dev, __func__, __LINE__, __VA_ARGS__)

/* Pinned layout of 1.5.4 on x86-64 (see the top of this file for the evidence). */
#if defined(__x86_64__)
_Static_assert(sizeof(struct tcmulib_cmd) == 136, "tcmulib_cmd size");
_Static_assert(offsetof(struct tcmulib_cmd, cmd_id) == 0, "tcmulib_cmd.cmd_id");
_Static_assert(offsetof(struct tcmulib_cmd, cdb) == 8, "tcmulib_cmd.cdb");
_Static_assert(offsetof(struct tcmulib_cmd, iovec) == 16, "tcmulib_cmd.iovec");
_Static_assert(offsetof(struct tcmulib_cmd, iov_cnt) == 24, "tcmulib_cmd.iov_cnt");
_Static_assert(offsetof(struct tcmulib_cmd, sense_buf) == 32, "tcmulib_cmd.sense_buf");
_Static_assert(offsetof(struct tcmulib_cmd, hm_private) == 128, "tcmulib_cmd.hm_private");

_Static_assert(sizeof(struct tcmur_cmd) == 96, "tcmur_cmd size");
_Static_assert(offsetof(struct tcmur_cmd, lib_cmd) == 0, "tcmur_cmd.lib_cmd");
_Static_assert(offsetof(struct tcmur_cmd, iovec) == 8, "tcmur_cmd.iovec");
_Static_assert(offsetof(struct tcmur_cmd, iov_cnt) == 16, "tcmur_cmd.iov_cnt");
_Static_assert(offsetof(struct tcmur_cmd, iov_base_copy) == 24, "tcmur_cmd.iov_base_copy");
_Static_assert(offsetof(struct tcmur_cmd, cmd_state) == 32, "tcmur_cmd.cmd_state");
_Static_assert(offsetof(struct tcmur_cmd, requested) == 40, "tcmur_cmd.requested");
_Static_assert(offsetof(struct tcmur_cmd, cmds_list_entry) == 48, "tcmur_cmd.cmds_list_entry");
_Static_assert(offsetof(struct tcmur_cmd, start_time) == 64, "tcmur_cmd.start_time");
_Static_assert(offsetof(struct tcmur_cmd, timed_out) == 80, "tcmur_cmd.timed_out");
_Static_assert(offsetof(struct tcmur_cmd, done) == 88, "tcmur_cmd.done");

_Static_assert(sizeof(struct tcmulib_cfg_info) == 16, "tcmulib_cfg_info size");
_Static_assert(offsetof(struct tcmulib_cfg_info, data) == 8, "tcmulib_cfg_info.data");

_Static_assert(sizeof(struct tcmur_handler) == 200, "tcmur_handler size");
_Static_assert(offsetof(struct tcmur_handler, name) == 0, "tcmur_handler.name");
_Static_assert(offsetof(struct tcmur_handler, subtype) == 8, "tcmur_handler.subtype");
_Static_assert(offsetof(struct tcmur_handler, cfg_desc) == 16, "tcmur_handler.cfg_desc");
_Static_assert(offsetof(struct tcmur_handler, opaque) == 24, "tcmur_handler.opaque");
_Static_assert(offsetof(struct tcmur_handler, check_config) == 32, "tcmur_handler.check_config");
_Static_assert(offsetof(struct tcmur_handler, reconfig) == 40, "tcmur_handler.reconfig");
_Static_assert(offsetof(struct tcmur_handler, open) == 48, "tcmur_handler.open");
_Static_assert(offsetof(struct tcmur_handler, close) == 56, "tcmur_handler.close");
_Static_assert(offsetof(struct tcmur_handler, nr_threads) == 64, "tcmur_handler.nr_threads");
_Static_assert(offsetof(struct tcmur_handler, handle_cmd) == 72, "tcmur_handler.handle_cmd");
_Static_assert(offsetof(struct tcmur_handler, read) == 80, "tcmur_handler.read");
_Static_assert(offsetof(struct tcmur_handler, write) == 88, "tcmur_handler.write");
_Static_assert(offsetof(struct tcmur_handler, flush) == 96, "tcmur_handler.flush");
_Static_assert(offsetof(struct tcmur_handler, unmap) == 104, "tcmur_handler.unmap");
_Static_assert(offsetof(struct tcmur_handler, writesame) == 112, "tcmur_handler.writesame");
_Static_assert(offsetof(struct tcmur_handler, caw) == 120, "tcmur_handler.caw");
_Static_assert(offsetof(struct tcmur_handler, report_event) == 128, "tcmur_handler.report_event");
_Static_assert(offsetof(struct tcmur_handler, lock) == 136, "tcmur_handler.lock");
_Static_assert(offsetof(struct tcmur_handler, unlock) == 144, "tcmur_handler.unlock");
_Static_assert(offsetof(struct tcmur_handler, get_lock_tag) == 152, "tcmur_handler.get_lock_tag");
_Static_assert(offsetof(struct tcmur_handler, get_lock_state) == 160,
	       "tcmur_handler.get_lock_state");
_Static_assert(offsetof(struct tcmur_handler, _is_dbus_handler) == 168,
	       "tcmur_handler._is_dbus_handler");
_Static_assert(offsetof(struct tcmur_handler, update_logdir) == 176, "tcmur_handler.update_logdir");
_Static_assert(offsetof(struct tcmur_handler, init) == 184, "tcmur_handler.init");
_Static_assert(offsetof(struct tcmur_handler, destroy) == 192, "tcmur_handler.destroy");
#else
#error "the tcmu-runner 1.5.4 layout is pinned for x86-64 only"
#endif

#endif
