/* SPDX-License-Identifier: MIT */
/*
 * import_internal.h - the state `faultlun import` keeps while it reads a
 * capture, shared by its three layers (import.h says which does what).
 * Everything here is bounded by the IMP_MAX_* ceilings of import.h.
 */
#ifndef FL_IMPORT_INTERNAL_H
#define FL_IMPORT_INTERNAL_H

#include "import.h"
#include "fl_target.h"
#include "iscsi_proto.h"

#include <stdio.h>

/* A TCP segment that came before the bytes it follows. */
struct imp_seg {
	struct imp_seg *next;
	uint32_t seq, len;
	uint64_t frame;
	int64_t t_us;
	uint8_t data[];
};

/* Where a direction's PDU reader is. */
enum imp_mode {
	IMP_HDR,    /* collecting a BHS (and AHS and header digest) */
	IMP_DATA,   /* inside a data segment */
	IMP_RESYNC, /* lost: looking for a plausible BHS */
};

/* One direction of a TCP connection: reassembly, then PDU framing. */
struct imp_dir {
	bool seen, synced;
	uint32_t next_seq;
	struct imp_seg *ooo;
	unsigned nooo;
	size_t ooo_bytes;
	enum imp_mode mode;
	uint8_t hdr[ISCSI_BHS_LEN + 255 * 4 + ISCSI_DIGEST_LEN];
	uint32_t hdr_have, hdr_need;
	uint32_t data_left; /* bytes of the data segment, padding and digest still to come */
	uint32_t data_len;  /* DataSegmentLength of the PDU being read */
	uint8_t *data;	    /* its first data_keep bytes, when wanted */
	uint32_t data_have, data_keep;
	uint8_t *rs; /* resynchronisation window */
	uint32_t rs_len;
	uint64_t pdu_frame; /* the frame that brought the PDU's first byte */
	int64_t pdu_t;
	uint64_t cur_frame;
	int64_t cur_t;
};

/* A SCSI command waiting for its answer. */
struct imp_cmd {
	struct imp_cmd *next;
	uint32_t itt;
	int lun; /* -1: a LUN the scenario format cannot name */
	uint8_t cdb[16];
	uint32_t edtl;
	uint64_t frame;
	int64_t t_us;
	bool want_data; /* identity command: its data-in is kept */
	uint8_t *data;
	uint32_t data_len;
	bool aborted, reset; /* an ABORT TASK / LUN RESET covered it */
	bool gap;	     /* the target's stream had a gap while it was outstanding */
	uint8_t flags;	     /* the command PDU's byte 1: F, R, W, ATTR */
	uint64_t seq;	     /* its place among the capture's commands */
	uint64_t op_nth;     /* its place among the imported target's commands of its opcode */
	uint64_t datain_len; /* data-in seen: the end of the furthest Data-In segment */
	bool keep;	     /* --keep-data: a read whose data goes into the image */
	bool data_cmp;	     /* --keep-data: every block of it known (--verify compares it) */
	uint64_t dhash;	     /* --keep-data: FNV-1a of its data-in so far (in offset order) */
	uint32_t dnext;	     /* the offset the next Data-In must have to be hashed in order */
	bool want_param;     /* --verify: its data-out is a parameter list, kept */
	uint8_t *param;	     /* its first bytes (up to IMP_MAX_PARAM and the EDTL) */
	uint32_t param_len;
	uint32_t unruled; /* commands of its LUN and opcode no rule answered, when it was sent */
};

/* Why a command kept for --verify is not compared. */
enum imp_vskip {
	IMP_VS_NONE = 0,
	IMP_VS_BIG_LUN,	 /* a LUN above 255 or of another addressing method */
	IMP_VS_AT_END,	 /* outstanding when the capture ended (under 2 s) */
	IMP_VS_RESPONSE, /* an iSCSI response other than "command completed" */
	IMP_VS_GAP, /* unanswered after a gap in the target's stream: its answer may be in it */
};

/*
 * What changes a LUN's state besides commands, replayed by --verify after the
 * command numbered after_seq: the end of a connection (its I_T nexus lost;
 * tmf 0) or a reset the target answered Function complete (tmf: LUN RESET or
 * TARGET WARM / COLD RESET, on lun).
 */
struct imp_vend {
	uint64_t after_seq;
	unsigned conn, nexus;
	uint8_t tmf;
	int lun;
};

/* A command of the capture and its answer, kept for --verify. */
struct imp_vrec {
	uint64_t seq, frame, answer_frame;
	unsigned conn, nexus; /* its connection, and the I_T nexus (imp_nexus_of) */
	int portal;	      /* the connection's portal (fl_import.portals), -1 not known */
	int lun;
	uint8_t cdb[16];
	uint8_t flags;
	uint32_t edtl;
	uint64_t datain_len;
	bool answered;
	uint8_t status;
	uint8_t sense_len;
	uint8_t sense[32]; /* the first bytes: enough for key, ASC, ASCQ, INFORMATION */
	enum imp_vskip skip;
	bool data_cmp;	/* --keep-data: its data is compared (import_data.c) */
	uint64_t dhash; /* FNV-1a of the data-in the capture holds */
	uint8_t *data;	/* identity data-in, data_len bytes */
	uint32_t data_len;
	uint8_t *param; /* parameter list, param_len bytes (the rest of data-out is zeros) */
	uint32_t param_len;
};

#define IMP_CMD_BUCKETS 64

/* A TMF request waiting for its answer (import_tmf.c). */
struct imp_tmf_req {
	uint32_t itt;
	uint8_t fn;
	int lun;
	uint64_t frame;
	int64_t t_us;
};

/* What the target did with the TMFs of one function. */
struct imp_tmf_fn {
	uint64_t seen, answered, never, dropped; /* dropped: past IMP_MAX_TMF_PENDING */
	uint64_t resp[9];			 /* by response: 0..6, [7] rejected, [8] other */
	double ms[IMP_MAX_TMF_MS];		 /* the first answers' times */
	unsigned n;
	double max_ms;
	uint64_t frame; /* the first request's */
};

/* A TCP connection carrying iSCSI (or not yet known not to). */
struct imp_conn {
	struct imp_conn *next;
	unsigned id;
	int family; /* 4 or 6 */
	uint8_t ip[2][16];
	uint16_t port[2];
	struct imp_dir dir[2]; /* dir[i]: what endpoint i sent */
	int target_ep;	       /* which endpoint is the target; -1 not known yet */
	bool ffp;	       /* full feature phase: digests in force */
	bool hdigest, ddigest, login_hd, login_dd, digests_known;
	bool discovery;
	char target_name[224];
	char iname[224]; /* InitiatorName of the login ("": not captured) */
	uint8_t isid[6]; /* the login's ISID */
	int nexus;	 /* its I_T nexus in fl_import.nexus (imp_nexus_of); -1 not yet */
	int tpgt;	 /* TargetPortalGroupTag from the login response; -1 */
	int portal;
	struct imp_cmd *cmds[IMP_CMD_BUCKETS];
	unsigned ncmds;
	struct imp_tmf_req tmfs[IMP_MAX_TMF_PENDING];
	unsigned ntmfs;
	uint64_t first_frame, last_frame;
	int64_t last_t;
	bool closed, iscsi, at_end;
	bool logged_out;   /* a Logout Request was seen: a close after it is orderly */
	uint64_t last_seq; /* the seq of the last command received (0: none) */
};

/* A connection the target cut (FIN or RST) with a command in hand (import_cut.c). */
struct imp_cut {
	uint64_t frame, cmd_frame; /* the FIN / RST, and the command in hand */
	int64_t t_us;
	uint8_t opcode;
	uint16_t sa;
	uint64_t op_nth;      /* the command's place among the target's of its opcode */
	unsigned outstanding; /* commands without an answer on the connection then */
	bool rst;
};

/* What one LUN showed of itself. */
struct imp_lun {
	bool seen, in_report_luns;
	bool have_inq, have_serial, have_naa, have_cap, have_wce, have_wp, have_dsense;
	char vendor[9], product[17], revision[5], serial[65];
	uint8_t pdt, rmb, tpgs;
	uint64_t naa;
	uint32_t block_size;
	uint64_t blocks;
	bool lbpme, lbprz, wce, wp, dsense;
	uint64_t inq_frame, cap_frame;
	uint8_t vpd_seen[32]; /* bitmap of VPD pages answered */
	uint8_t mode_seen[8]; /* bitmap of mode pages answered */
	bool naa16;	      /* VPD 0x83 has a 16-byte NAA designator (NAA 6): */
	uint64_t naa16_hi, naa16_lo;
	bool have_tpg; /* VPD 0x83 names the target port group of the port */
	uint16_t tpg;
	bool have_rtpg;		       /* a REPORT TARGET PORT GROUPS answer was read */
	uint16_t rtpg_group;	       /* the group it reported for the LUN's port */
	uint8_t alua_first, alua_last; /* that group's first and last state seen */
	uint64_t rtpg_frame;
	uint64_t resv_frame; /* the first GOOD RESERVE or PERSISTENT RESERVE OUT (0: none) */
	/* the first whole answer of each VPD page the LUN does not build itself (NULL: none) */
	struct imp_vpd *vpd;
	struct imp_keep *keep; /* --keep-data (NULL: nothing kept) */
	/* PRE-FETCH answers to ranges that fit faultlun's cache: GOOD, CONDITION MET */
	uint64_t prefetch_good, prefetch_met, prefetch_frame;
};

/* Runs of blocks [start, end), ascending, apart. */
struct imp_runs {
	unsigned n;
	struct {
		uint64_t start, end;
	} r[IMP_MAX_KEEP_RUNS];
};

/* --keep-data: a LUN's image (import_data.c). */
struct imp_keep {
	int fd; /* the image; -1 not opened yet */
	bool open_failed;
	struct imp_runs known;	 /* blocks whose first content the image holds */
	struct imp_runs written; /* blocks the capture wrote */
	bool full;		 /* past IMP_MAX_KEEP_RUNS or a write error: nothing more kept */
	bool unmapped;		 /* an UNMAP came: later reads are not kept */
	uint64_t blocks;	 /* blocks kept */
	uint64_t first_frame;	 /* the first read kept */
	uint64_t inconsistent;	 /* reads of known blocks with other data, no write between */
	uint64_t no_capacity;	 /* Data-In segments of reads before the LUN's capacity was seen */
};

/* A LUN's VPD pages kept as answered (the scenario's "vpd"), at most FL_VPD_RAW_MAX. */
struct imp_vpd {
	unsigned n;
	uint8_t code[FL_VPD_RAW_MAX];
	uint16_t len[FL_VPD_RAW_MAX];
	uint8_t data[FL_VPD_RAW_MAX][FL_VPD_RAW_MAX_LEN];
	uint64_t frame[FL_VPD_RAW_MAX];
	unsigned over; /* pages past the cap or too long */
};

/* An ALUA state change: a REPORT TARGET PORT GROUPS answer unlike the one before. */
struct imp_alua {
	int lun;
	uint8_t from, to;
	uint64_t frame;
	int64_t t_us;
	bool reproduced; /* a class's UA 2A/06 before it carries the change (link_alua) */
};

/* Rule kinds. */
enum imp_kind { IMP_SENSE, IMP_STATUS, IMP_HOLD };

/* One non-GOOD answer (or unanswered command) class: becomes one rule. */
struct imp_class {
	enum imp_kind kind;
	int lun;
	uint8_t opcode;
	uint16_t sa;
	bool has_lba, crosses_end;
	unsigned hnext; /* the next class of its hash bucket, + 1 (0: none) */
	uint64_t first, last;
	uint8_t status, key, asc, ascq;
	bool descriptor, info_lba;
	const char *hold; /* forever, until_abort, until_reset */
	unsigned count, good_after, written_after;
	uint32_t good_before; /* no LBA: unruled answers to the LUN's opcode before the first */
	uint64_t frames[4];   /* the first commands' frames */
	uint64_t answer_frame;
	bool implied;	     /* NOT READY the imported ALUA state gives anyway: no rule */
	uint64_t resv_frame; /* RESERVATION CONFLICT after the reservation of that frame: no rule */
	bool native;	 /* faultlun's LUN gives that answer itself (imp_verify_native): no rule */
	uint8_t cdb[16]; /* the first command's CDB, */
	uint8_t flags;	 /* its PDU's byte 1 (R, W) */
	uint32_t edtl;	 /* and its Expected Data Transfer Length */
	bool alua;	 /* UA 2A/06 that carries an ALUA state change (link_alua): */
	uint16_t alua_group; /* the group */
	uint8_t alua_to;     /* and its new state */
	int64_t t_us;
	uint16_t portals; /* the portals its commands came through (bit i: portals[i]) */
};

/* The answer times of one command class (import_latency.c). */
struct imp_lat {
	double *ms;	/* a uniform sample (reservoir) of at most IMP_MAX_LAT of them */
	unsigned n;	/* in ms[] */
	uint64_t seen;	/* answers timed */
	uint64_t frame; /* the first timed command's frame */
	double max_ms;	/* the longest */
};

struct fl_import {
	struct fl_import_opts o;
	struct imp_stats st;
	struct imp_conn *conns;
	unsigned nconns, next_id;
	int bad_linktype;
	int64_t t0_us, tlast_us;
	uint64_t last_frame;
	char target[224];
	unsigned other_targets;
	struct imp_lun luns[256];
	unsigned big_luns, power_on_uas;
	uint64_t power_on_frame;
	uint64_t miscompares, miscompare_frame; /* MISCOMPARE answers: the LUN's own (no rule) */
	struct imp_class *classes;
	unsigned nclasses, classes_over, rules_over;
	unsigned norule_refs, norule_over; /* "no rule" reference lines written, and the rest */
	unsigned class_head[IMP_CLASS_BUCKETS]; /* the first class of each bucket, + 1 */
	char *notes[IMP_MAX_NOTES];
	unsigned nnotes, notes_over;
	struct {
		int family;
		uint8_t ip[16];
		uint16_t port;
		int tpgt;
		uint64_t frame; /* the first command through it */
		/* VPD 0x83 answered through it: the port's relative port and group */
		bool have_rel, have_tpg;
		uint16_t rel, tpg;
		unsigned tport; /* its target port (imp_ports_assign) */
	} portals[IMP_MAX_PORTALS];
	unsigned ntports; /* target ports: portals grouped by TargetPortalGroupTag */
	/* the groups of the first GOOD REPORT TARGET PORT GROUPS answer and their states */
	struct {
		uint16_t id;
		uint8_t state;
	} groups[IMP_MAX_PORTALS];
	unsigned ngroups;
	bool have_groups;
	unsigned nportals, portals_over; /* the imported target's portals commands went through */
	/*
	 * I_T nexuses as the iSCSI front end keys them (handlers/iscsi/nexus.c):
	 * an initiator port ("InitiatorName,i,0xISID") through a portal, so that
	 * a new login of the same port is the same nexus (its persistent
	 * reservations with it); a connection whose login is not captured is
	 * a nexus of its own.
	 */
	struct imp_nexus {
		char iport[256]; /* the initiator port name ("": not known) */
		int portal;
		unsigned conn; /* without a port name: its connection */
	} * nexus;
	unsigned nnexus;
	int image_fd;
	uint64_t image_bytes;
	uint64_t cmd_seq;
	struct imp_vend *vends; /* --verify: the connections' ends, in capture order */
	unsigned nvends;
	struct imp_vrec *vrecs; /* --verify: the commands, in the order answered */
	unsigned nvrecs, vrecs_over;
	size_t vdata_bytes;
	struct imp_lat lat[FL_CLASS_NR];
	uint64_t lat_rng;
	struct imp_tmf_fn tmf[ISCSI_TMF_TASK_REASSIGN + 1]; /* by function, 1..8 */
	uint64_t op_count[256]; /* the imported target's commands per opcode */
	struct imp_cut cuts[IMP_MAX_CUTS];
	unsigned ncuts;
	struct imp_alua alua[IMP_MAX_ALUA];
	unsigned nalua, alua_over;
	/* per LUN and opcode, commands without an LBA no rule answers (count_unruled) */
	uint32_t unruled_nolba[256][256];
	uint32_t unruled_sa[256][8][32]; /* the same per service action (imp_sa_slot) */
};

/* import_net.c -> import_iscsi.c: in-order bytes of one direction. */
void imp_iscsi_bytes(struct fl_import *im, struct imp_conn *c, int d, const uint8_t *p, size_t n);
/* Bytes of direction d are missing (lost segment, capture cut short). */
void imp_iscsi_gap(struct fl_import *im, struct imp_conn *c, int d);
/* How a connection ended. */
struct imp_end {
	bool by_target; /* the target sent the FIN or RST */
	bool rst;
	uint64_t frame; /* 0: the capture ended */
	int64_t t_us;
};
/* The connection ended (FIN, RST) or the capture did. */
void imp_iscsi_close(struct fl_import *im, struct imp_conn *c, const struct imp_end *end);
/* Gives back a closed connection's buffers. */
void imp_iscsi_release(struct imp_conn *c);
/* Frees a connection's iSCSI state. */
void imp_iscsi_free(struct imp_conn *c);

/* import_iscsi.c -> import_scsi.c. */
void imp_scsi_answer(struct fl_import *im, struct imp_conn *c, struct imp_cmd *cmd,
		     uint8_t response, uint8_t status, const uint8_t *sense, size_t sense_len,
		     uint64_t frame, int64_t t_us);
void imp_scsi_unanswered(struct fl_import *im, struct imp_conn *c, struct imp_cmd *cmd, bool cut);
void imp_scsi_data_in(struct fl_import *im, struct imp_cmd *cmd, uint32_t offset, const uint8_t *p,
		      size_t n);
bool imp_scsi_wants_data(const uint8_t *cdb);
/* Commands of m's LUN and opcode (service action) no imported rule answered so far. */
uint32_t imp_scsi_unruled(const struct fl_import *im, const struct imp_cmd *m);
/* Whether the target this connection logged in to is the one imported (the
 * first one logged in to chooses it); _ok also counts an answer from another. */
bool imp_scsi_target_is(struct fl_import *im, const struct imp_conn *c);
bool imp_scsi_target_ok(struct fl_import *im, struct imp_conn *c);
/* An address as text. */
void imp_addr_text(int family, const uint8_t *ip, uint16_t port, char *buf, size_t len);
/* Seconds since the capture's first frame, for messages. */
double imp_secs(const struct fl_import *im, int64_t t_us);

/* import_verify.c: keeps a command and its answer (answered false: none came). */
void imp_verify_keep(struct fl_import *im, struct imp_conn *c, const struct imp_cmd *m,
		     bool answered, uint8_t status, const uint8_t *sense, size_t sense_len,
		     uint64_t frame, enum imp_vskip skip);
/* Frees what was kept. */
void imp_verify_free(struct fl_import *im);
/* Marks the ILLEGAL REQUEST classes the LUNs of base (a scenario without rules) answer alike. */
void imp_verify_native(struct fl_import *im, json_t *base);
/* --verify: the connection c ended here (tmf 0), or a reset of it was done (struct imp_vend). */
void imp_verify_event(struct fl_import *im, struct imp_conn *c, uint8_t tmf, int lun);
/* The LUN number of an 8-byte LUN field (SAM-5 peripheral or flat addressing); -1 another. */
int imp_lun_number(const uint8_t *l);

/* import_latency.c: the answer to a command of class cls came ms after it (frame: the command's).
 */
void imp_lat_add(struct fl_import *im, enum fl_cmd_class cls, double ms, uint64_t frame);
/* Appends the latency rules to rules and their lines to refs; returns how many rules. */
unsigned imp_lat_rules(struct fl_import *im, json_t *rules, json_t *refs, unsigned room);
void imp_lat_free(struct fl_import *im);

/*
 * import_cut.c: the command in hand when the target cut c (end), recorded as
 * a cut, or NULL (an orderly close, the host's, or no command in hand: noted).
 */
struct imp_cmd *imp_cut_close(struct fl_import *im, struct imp_conn *c, const struct imp_end *end);
/* Appends the cuts' transport rules to rules and their lines to refs; how many. */
unsigned imp_cut_rules(struct fl_import *im, json_t *rules, json_t *refs);
/* import_tmf.c: a TMF request (bhs) on c, its answer, and the connection's end. */
void imp_tmf_request(struct fl_import *im, struct imp_conn *c, const uint8_t *bhs, uint64_t frame,
		     int64_t t_us);
void imp_tmf_response(struct fl_import *im, struct imp_conn *c, const uint8_t *bhs, int64_t t_us);
void imp_tmf_close(struct fl_import *im, struct imp_conn *c);
/*
 * Fills tmf (the scenario's "tmf" object) with how the target answered each
 * function, when that is not faultlun's own way (complete, at once), and
 * appends a line per function seen to refs; returns how many behaviours.
 */
unsigned imp_tmf_behaviours(struct fl_import *im, json_t *tmf, json_t *refs);

/* import_net.c: the end of the capture; freeing. */
void imp_net_finish(struct fl_import *im);
void imp_net_free(struct fl_import *im);

/*
 * import_scsi.c: the NAA designator (binary, association: the logical unit, 8 bytes) of VPD page
 * 83h data of n bytes into *naa; whether there is one. The page's length is bounded by n.
 */
bool imp_vpd83_naa(const uint8_t *p, uint32_t n, uint64_t *naa);
/* The 16-byte NAA designator (NAA 6) of the logical unit in a VPD 0x83 answer, in halves. */
bool imp_vpd83_naa16(const uint8_t *p, uint32_t n, uint64_t *hi, uint64_t *lo);

/* --keep-data (import_data.c). */
/* LUN lun's image path, "PREFIX.lunN.img", into buf. */
void imp_data_path(const char *prefix, int lun, char *buf, size_t len);
/* A command seen: a write's blocks are no longer known; a read's data is to be kept. */
void imp_data_command(struct fl_import *im, struct imp_cmd *m);
/* n bytes of m's data-in at offset (whole: the segment's every byte is at p). */
void imp_data_in(struct fl_import *im, struct imp_cmd *m, uint32_t offset, const uint8_t *p,
		 uint32_t n, bool whole);
/* The capture has ended: each image sized to its LUN's capacity. */
void imp_data_finish(struct fl_import *im);
/* n bytes of LUN lun's image at off into buf; false when it has none or a read fails. */
bool imp_data_read(const struct fl_import *im, int lun, uint64_t off, uint8_t *buf, uint32_t n);
/* FNV-1a 64 of n bytes at p, continuing from h (FL_FNV_START to begin). */
#define FL_FNV_START 0xcbf29ce484222325ull
uint64_t imp_fnv1a(uint64_t h, const uint8_t *p, size_t n);
/* Copies LUN lun's image to a new file at path to (its holes kept); 0 or -errno. */
int imp_data_copy(const struct fl_import *im, int lun, const char *to);
/* Closes and frees the images' state. */
void imp_data_free(struct fl_import *im);

/* The I_T nexus of connection c (an index into im->nexus), made when first asked. */
unsigned imp_nexus_of(struct fl_import *im, struct imp_conn *c);

/* import_ports.c: a port per target port. Groups the portals into target ports. */
void imp_ports_assign(struct fl_import *im);
/* Whether the scenario gets ports (several target ports). */
bool imp_ports(const struct fl_import *im);
/* The scenario's number for the target's group g (0, LIO's default group, renumbered). */
uint16_t imp_group_id(const struct fl_import *im, uint16_t g);
/* The scenario's relative port of target port p. */
uint16_t imp_port_rel(const struct fl_import *im, unsigned p);
/* Whether a port's group is the target's group g. */
bool imp_ports_have_group(const struct fl_import *im, uint16_t g);
/* The NOT READY ASCQ (ASC 04) of ALUA state st for media access; 0: none. */
uint8_t imp_alua_not_ready(int st);
/* Whether class x is the NOT READY its ports' groups answer with themselves. */
bool imp_ports_implied(const struct fl_import *im, const struct imp_class *x);
/* The one target port class x came through (ports only), or -1. */
int imp_ports_only(const struct fl_import *im, const struct imp_class *x);
/* Notes portals that share one target port. */
void imp_ports_note_shared(struct fl_import *im);
/* Writes "ports" and "port_groups" into s, a reference line per port into refs. */
void imp_ports_json(struct fl_import *im, json_t *s, json_t *refs);

#endif
