/* SPDX-License-Identifier: MIT */
/*
 * vendor.h - the hooks a vendor personality implements (private to target/).
 *
 * A personality is one table row (struct vendor_ops) in vendor.c and its
 * code in vendor_NAME.c. The core calls a hook only when the LUN has a
 * personality (lun->vops != NULL) and the row fills that hook, so a plain
 * LUN pays one NULL check per command. Every hook runs with the LUN locked
 * and returns a sense reason (vendor sense through vendor_sense()).
 *
 * Ownership state common to all personalities lives in struct vendor_state:
 * the owning target port group, when it last moved, and a quiescence window;
 * the helpers below keep the unit attentions and the trace of it in one place.
 */
#ifndef FL_VENDOR_H
#define FL_VENDOR_H

#include "target_internal.h"

#include <time.h>

struct vendor_state {
	uint16_t owner;		   /* target port group that owns the LUN */
	uint64_t moved_ns;	   /* CLOCK_MONOTONIC of the last transfer; 0 = never */
	uint64_t quiesce_until_ns; /* media commands refused until then; UINT64_MAX = ever */
	unsigned transfers;	   /* ownership transfers so far */
	void *priv;		   /* the personality's own state */
};

struct vendor_ops {
	const char *name;
	/* identity when the LUN sets none */
	const char *vendor, *product, *revision;
	/* after the LUN is built: allocate priv, adjust cfg (LUN not yet shared) */
	int (*init)(struct fl_lun *lun);
	void (*fini)(struct fl_lun *lun);
	/*
	 * Before execution of every command, after the pending UA and the opcode
	 * lookup (x->desc, x->info set), before ALUA / medium / reservation
	 * checks. SENSE_OK lets the core execute the command.
	 */
	enum sense_reason (*check)(struct exec_ctx *x);
	/*
	 * Standard INQUIRY data past the SPC-4 fields: fills buf[96..] (cap
	 * bytes in all, bytes 0-95 set) and returns the data's whole length (at
	 * most cap, ADDITIONAL LENGTH follows it), or 0 to keep the standard one.
	 */
	uint32_t (*inquiry)(struct exec_ctx *x, uint8_t *buf, uint32_t cap);
	/* vendor VPD pages: their codes (ascending, all >= 0xC0) listed in page 00h */
	const uint8_t *vpd_codes;
	size_t nvpd;
	/* builds page `page` (one of vpd_codes) into buf (cap bytes); returns its length */
	uint32_t (*vpd)(struct exec_ctx *x, uint8_t page, uint8_t *buf, uint32_t cap);
	/*
	 * MODE SENSE of a vendor page: writes page code/subpage for page control
	 * pc at p (cap bytes) and returns its length, 0 when it is no page of the
	 * personality. code 3Fh asks for every vendor page with subpage `sub`.
	 */
	uint32_t (*mode_sense)(struct exec_ctx *x, uint8_t code, uint8_t sub, uint8_t pc,
			       uint8_t *p, uint32_t cap);
	/*
	 * MODE SELECT of a page that is the personality's (p[0] & 3Fh is one of
	 * its codes; false from is_mode_page otherwise). Called twice: with
	 * apply false while the list is checked (sets *used, returns a reason),
	 * then with apply true once the whole list is valid.
	 */
	bool (*is_mode_page)(uint8_t code);
	enum sense_reason (*mode_select)(struct exec_ctx *x, const uint8_t *p, uint32_t off,
					 uint32_t avail, uint32_t *used, bool apply);
	/* MODE SELECT with PF=0 is taken as page format (the array's firmware does) */
	bool select_without_pf;
	/* START STOP UNIT: sets *handled when the personality answered it */
	enum sense_reason (*start_stop)(struct exec_ctx *x, bool *handled);
	/* ownership moved (by any cause); the personality's own effects */
	void (*moved)(struct fl_lun *lun, uint16_t from, uint16_t to);
};

/* The row of a personality, or NULL. */
const struct vendor_ops *vendor_find(const char *name);
/* Sets lun->vops / lun->vstate from cfg.personality (fl_lun_create). */
int vendor_attach(struct fl_lun *lun);
void vendor_detach(struct fl_lun *lun);

/* SENSE_VENDOR with this key/ASC/ASCQ (sense.c encodes it). */
static inline enum sense_reason vendor_sense(struct exec_ctx *x, uint8_t key, uint8_t asc,
					     uint8_t ascq)
{
	x->vkey = key;
	x->vasc = asc;
	x->vascq = ascq;
	return SENSE_VENDOR;
}

/* CLOCK_MONOTONIC in ns. */
uint64_t vendor_now_ns(void);
/* The target port group of the port a command came in on. */
uint16_t vendor_port_group(const struct exec_ctx *x);
/* True when the group of the command's port owns the LUN. */
bool vendor_port_owns(const struct exec_ctx *x);
/*
 * Moves ownership to group `to` (LUN locked): records the time, starts the
 * quiescence window, queues UA 2A/06 for every nexus but `except` when the
 * personality says so, and calls the personality's moved hook and the
 * config's moved listener with `cause` (fl_target.h). No-op when `to`
 * already owns the LUN.
 */
void vendor_move(struct fl_lun *lun, uint16_t to, uint64_t except, const char *cause);
/* True while the quiescence after a transfer lasts. */
bool vendor_quiescing(const struct fl_lun *lun);
/* Carries out a due rebalance to the preferred group (LUN locked). */
void vendor_rebalance(struct fl_lun *lun);

/* The table rows of vendor_NAME.c. */
extern const struct vendor_ops vendor_rdac_ops;
extern const struct vendor_ops vendor_emc_ops;
extern const struct vendor_ops vendor_hpsw_ops;

#endif
