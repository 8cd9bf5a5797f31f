/* SPDX-License-Identifier: MIT */
/*
 * import.h - `faultlun import`: a scenario from an iSCSI packet capture.
 *
 * Three layers, each fed by the one below, all streaming and bounded:
 *   import_net.c    link, IPv4/IPv6 and TCP headers of one frame; TCP
 *                   reassembly per direction (retransmissions, overlaps,
 *                   out-of-order segments; a gap or a capture that starts
 *                   mid-session leaves the stream to resynchronise)
 *   import_iscsi.c  iSCSI framing per direction (RFC 7143 11.2: BHS, AHS,
 *                   digests as negotiated at login), resynchronisation on a
 *                   plausible BHS, login keys, commands paired with answers
 *   import_scsi.c   what the answers say about the target (identity per
 *                   LUN, every non-GOOD answer, commands never answered)
 *                   and the scenario built from it (docs/import.md)
 * cmd_import.c reads the capture with libpcap and hands each frame in.
 * Nothing here trusts the capture: every length is checked against what is
 * there, and every table has a ceiling (IMP_MAX_*); what goes past one is
 * counted and said in the scenario's notes.
 */
#ifndef FL_IMPORT_H
#define FL_IMPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Ceilings: memory is bounded per connection and in total. */
#define IMP_MAX_CONNS 1024	     /* TCP connections followed at once */
#define IMP_MAX_OOO_SEGS 256	     /* out-of-order segments held per direction */
#define IMP_MAX_OOO_BYTES (4u << 20) /* ... and their bytes */
#define IMP_MAX_CMDS 4096	     /* outstanding commands per connection */
#define IMP_MAX_DATA (64u << 10)     /* data-in kept of an identity command */
#define IMP_MAX_TEXT (64u << 10)     /* login / text data kept per PDU */
#define IMP_MAX_RESYNC (256u << 10)  /* bytes searched for a BHS before giving up some */
#define IMP_MAX_DSL (16u << 20)	     /* largest DataSegmentLength believed */
#define IMP_MAX_CLASSES 16384 /* answer classes told apart (most are the LUN's own answers) */
#define IMP_MAX_RULES 1024    /* rules written (the scenario format's limit) */
#define IMP_CLASS_BUCKETS 4096
#define IMP_MAX_NORULE_REFS 256 /* "no rule" reference lines (the rest counted in one) */
#define IMP_MAX_NOTES 256
#define IMP_MAX_PORTALS 16
#define IMP_MAX_NEXUS 4096   /* I_T nexuses told apart by --verify (then one per connection) */
#define IMP_MAX_VERIFY 65536 /* commands kept for --verify (the rest are not replayed) */
#define IMP_MAX_VERIFY_DATA (16u << 20) /* identity data-in kept for --verify, in total */
#define IMP_MAX_XFER (16u << 20)	/* largest transfer a replayed command is given */
#define IMP_MAX_PARAM 4096     /* data-out kept of a command other than a write (--verify) */
#define IMP_MAX_LAT 16384      /* latencies kept per command class (a uniform sample of them all) */
#define IMP_MAX_TMF_PENDING 16 /* TMF requests awaiting their answer per connection */
#define IMP_MAX_TMF_MS 1024    /* answer times kept per TMF function (the first ones) */
#define IMP_MAX_CUTS 64	       /* connections the target cut, reproduced (the rest noted) */
#define IMP_MAX_ALUA 64	       /* ALUA state changes reproduced (the rest noted) */
#define IMP_MAX_KEEP_RUNS 4096 /* --keep-data: runs of blocks known, and written, per LUN */

struct fl_import;

/* What the user asked for. */
struct fl_import_opts {
	bool keep_data;	      /* copy read data into a file store per LUN */
	const char *image;    /* their paths' prefix as the scenario names them (relative) */
	const char *image_fs; /* their paths' prefix to write (next to the scenario) */
	const char *target;   /* import this target (IQN); NULL = the first seen */
	uint16_t port;	      /* the target's TCP port; 0 = guess (3260, 860, SYN) */
	bool verbose;
	bool verify; /* keep each command and its answer for fl_import_verify */
};

/* A new import; NULL when out of memory. */
struct fl_import *fl_import_new(const struct fl_import_opts *o);
/*
 * Hands in one captured frame: linktype is the capture's DLT_ value, frame
 * counts from 1, t_us is the capture's time stamp, caplen bytes are at data
 * (len on the wire). Frames that are not TCP are counted and skipped.
 * Returns 0, or -ENOTSUP for a link type it cannot read (once, at frame 1).
 */
int fl_import_frame(struct fl_import *im, int linktype, uint64_t frame, int64_t t_us,
		    const uint8_t *data, uint32_t caplen, uint32_t len);
/* Adds a note to the scenario's "what could not be reproduced" list. */
void fl_import_note(struct fl_import *im, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/*
 * Ends the capture (commands still unanswered are judged) and builds the
 * scenario; *out is a new reference. Returns 0, or -ENOENT when no iSCSI
 * traffic was found (the message says what was seen).
 */
int fl_import_finish(struct fl_import *im, const char *name, json_t **out);
/* Frees everything. */
void fl_import_free(struct fl_import *im);

/*
 * import_scsi_debug.c: the scenario of scsi_debug's error rules and module
 * options read from in (src names it in messages), for LUN lun, named name
 * (docs/import.md, "From scsi_debug's rules"); a new reference, or NULL with
 * the reason (file and line) in err.
 */
json_t *fl_import_scsi_debug(FILE *in, const char *src, int lun, const char *name, char *err,
			     size_t errlen);

struct fl_scenario;
/*
 * import_verify.c: replays the commands of the capture (kept when
 * opts.verify was set; call after fl_import_finish) against sc in
 * process, on the fault engine with memory stores, and prints each
 * difference from the capture's answers and the summary line on out
 * (docs/import.md, "Verify"). *ncmds and *ndiff get the counts. Returns
 * 0, or -errno when the engine cannot be built (the message is printed).
 */
int fl_import_verify(struct fl_import *im, const struct fl_scenario *sc, const char *scenario_file,
		     FILE *out, unsigned *ncmds, unsigned *ndiff);

/* Inside the import: one layer to the next. */
struct imp_conn;
struct imp_cmd;

/* import_net.c: totals for the summary. */
struct imp_stats {
	uint64_t frames, tcp, non_tcp, undecodable, fragments, cut_short;
	uint64_t retransmitted, out_of_order, gaps, conns_over;
	uint64_t pdus, resyncs, skipped_bytes, digest_errors;
	uint64_t cmds, answers, orphan_answers, cmds_over;
	uint64_t lost_answers; /* unanswered after a gap in the target's stream: no hold */
};

#endif
