/* SPDX-License-Identifier: MIT */
/*
 * import_net.c - `faultlun import`: link, IP and TCP headers of a captured
 * frame, and TCP reassembly per direction (RFC 9293 3.10.7.4: a segment's
 * bytes before the next expected sequence number are old and dropped, later
 * ones wait for the gap to fill). A gap that does not fill within
 * IMP_MAX_OOO_SEGS segments, a frame cut by the snapshot length and a
 * capture that starts mid-connection hand the stream to the iSCSI layer's
 * resynchronisation. Every header length is checked against the bytes
 * captured.
 */
#include "import_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* DLT_ values (pcap/dlt.h) of the link types read here. */
#define LT_NULL 0
#define LT_EN10MB 1
#define LT_RAW 12
#define LT_RAW2 14
#define LT_LOOP 108
#define LT_RAW3 101
#define LT_LINUX_SLL 113
#define LT_LINUX_SLL2 276

/* Serial comparison of TCP sequence numbers. */
static int seq_cmp(uint32_t a, uint32_t b)
{
	return a == b ? 0 : ((int32_t)(a - b) < 0 ? -1 : 1);
}

/* Where the IP packet starts in a frame of this link type; -1 not readable. */
static int net_l3(int lt, const uint8_t *p, uint32_t n, uint32_t *off, unsigned *ethertype)
{
	switch (lt) {
	case LT_EN10MB:
		if (n < 14)
			return -1;
		*off = 14;
		*ethertype = fl_get_be16(p + 12);
		while ((*ethertype == 0x8100 || *ethertype == 0x88a8) && n >= *off + 4) {
			*ethertype = fl_get_be16(p + *off + 2);
			*off += 4;
		}
		return 0;
	case LT_LINUX_SLL:
		if (n < 16)
			return -1;
		*off = 16;
		*ethertype = fl_get_be16(p + 14);
		return 0;
	case LT_LINUX_SLL2:
		if (n < 20)
			return -1;
		*off = 20;
		*ethertype = fl_get_be16(p);
		return 0;
	case LT_NULL:
	case LT_LOOP:
		if (n < 4)
			return -1;
		*off = 4;
		*ethertype = (n > 4 && (p[4] >> 4) == 6) ? 0x86dd : 0x0800;
		return 0;
	case LT_RAW:
	case LT_RAW2:
	case LT_RAW3:
		if (n < 1)
			return -1;
		*off = 0;
		*ethertype = (p[0] >> 4) == 6 ? 0x86dd : 0x0800;
		return 0;
	default:
		return -2;
	}
}

/* The connection with these endpoints (either way round); *ep = the sender's index. */
static struct imp_conn *net_conn(struct fl_import *im, int fam, const uint8_t *sip, uint16_t sport,
				 const uint8_t *dip, uint16_t dport, int *ep, bool create)
{
	size_t al = fam == 4 ? 4 : 16;

	for (struct imp_conn *c = im->conns; c; c = c->next) {
		if (c->family != fam || c->closed)
			continue;
		for (int e = 0; e < 2; e++)
			if (c->port[e] == sport && c->port[!e] == dport &&
			    !memcmp(c->ip[e], sip, al) && !memcmp(c->ip[!e], dip, al)) {
				*ep = e;
				return c;
			}
	}
	if (!create)
		return NULL;
	if (im->nconns >= IMP_MAX_CONNS) {
		im->st.conns_over++;
		return NULL;
	}
	struct imp_conn *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->id = ++im->next_id;
	c->family = fam;
	memcpy(c->ip[0], sip, al);
	memcpy(c->ip[1], dip, al);
	c->port[0] = sport;
	c->port[1] = dport;
	c->target_ep = -1;
	c->tpgt = -1;
	c->portal = -1;
	c->nexus = -1;
	if (im->o.port)
		c->target_ep = dport == im->o.port ? 1 : sport == im->o.port ? 0 : -1;
	else if (dport == 3260 || dport == 860)
		c->target_ep = 1;
	else if (sport == 3260 || sport == 860)
		c->target_ep = 0;
	c->next = im->conns;
	im->conns = c;
	im->nconns++;
	*ep = 0;
	return c;
}

/* Frees a direction's out-of-order queue. */
static void net_drop_ooo(struct imp_dir *d)
{
	while (d->ooo) {
		struct imp_seg *s = d->ooo;
		d->ooo = s->next;
		free(s);
	}
	d->nooo = 0;
	d->ooo_bytes = 0;
}

/* Delivers what the queue now holds in order. */
static void net_drain(struct fl_import *im, struct imp_conn *c, int e)
{
	struct imp_dir *d = &c->dir[e];

	while (d->ooo && seq_cmp(d->ooo->seq, d->next_seq) <= 0) {
		struct imp_seg *s = d->ooo;
		uint32_t skip = d->next_seq - s->seq;
		d->ooo = s->next;
		d->nooo--;
		d->ooo_bytes -= s->len;
		if (skip < s->len) {
			d->cur_frame = s->frame;
			d->cur_t = s->t_us;
			imp_iscsi_bytes(im, c, e, s->data + skip, s->len - skip);
			d->next_seq = s->seq + s->len;
		}
		free(s);
	}
}

/*
 * Gives up the hole before the first queued segment of direction e (bytes the
 * capture lost): a gap, then what is queued after it is read.
 */
static void net_skip_hole(struct fl_import *im, struct imp_conn *c, int e)
{
	struct imp_dir *d = &c->dir[e];

	im->st.gaps++;
	d->next_seq = d->ooo->seq;
	imp_iscsi_gap(im, c, e);
	net_drain(im, c, e);
}

/* Reads what both directions still queue behind holes (the connection ends). */
static void net_flush_holes(struct fl_import *im, struct imp_conn *c)
{
	for (int e = 0; e < 2; e++)
		while (c->dir[e].ooo)
			net_skip_hole(im, c, e);
}

/* Queues a segment that came early (sorted by sequence number, bounded). */
static void net_queue(struct fl_import *im, struct imp_conn *c, int e, uint32_t seq,
		      const uint8_t *p, uint32_t n, uint64_t frame, int64_t t)
{
	struct imp_dir *d = &c->dir[e];
	struct imp_seg **pp = &d->ooo, *s;

	im->st.out_of_order++;
	if (d->nooo >= IMP_MAX_OOO_SEGS || d->ooo_bytes + n > IMP_MAX_OOO_BYTES) {
		/* The gap is not going to fill: give its bytes up and read on. */
		net_skip_hole(im, c, e);
		if (seq_cmp(seq, d->next_seq) <= 0)
			return;
	}
	s = malloc(sizeof(*s) + n);
	if (!s)
		return;
	s->seq = seq;
	s->len = n;
	s->frame = frame;
	s->t_us = t;
	memcpy(s->data, p, n);
	while (*pp && seq_cmp((*pp)->seq, seq) <= 0)
		pp = &(*pp)->next;
	s->next = *pp;
	*pp = s;
	d->nooo++;
	d->ooo_bytes += n;
}

/* One TCP segment of connection c sent by endpoint e. */
static void net_segment(struct fl_import *im, struct imp_conn *c, int e, uint32_t seq,
			uint8_t flags, const uint8_t *p, uint32_t n, bool cut, uint64_t frame,
			int64_t t)
{
	struct imp_dir *d = &c->dir[e];

	c->last_frame = frame;
	c->last_t = t;
	if (!c->first_frame)
		c->first_frame = frame;
	if (flags & 0x02) { /* SYN */
		if (!(flags & 0x10) && c->target_ep < 0)
			c->target_ep = !e;
		d->seen = d->synced = true;
		d->next_seq = seq + 1;
		d->mode = IMP_HDR;
		return;
	}
	if (n && !d->seen) {
		/* The capture starts inside this connection: find a PDU start. */
		d->seen = d->synced = true;
		d->next_seq = seq;
		d->mode = IMP_RESYNC;
	}
	if (n) {
		d->cur_frame = frame;
		d->cur_t = t;
		int cmp = seq_cmp(seq, d->next_seq);
		if (cmp > 0) {
			net_queue(im, c, e, seq, p, n, frame, t);
		} else {
			uint32_t skip = d->next_seq - seq;
			if (skip >= n) {
				im->st.retransmitted++;
			} else {
				if (skip)
					im->st.retransmitted++;
				imp_iscsi_bytes(im, c, e, p + skip, n - skip);
				d->next_seq = seq + n;
				if (cut) { /* the rest of the frame was not captured */
					imp_iscsi_gap(im, c, e);
				}
				net_drain(im, c, e);
			}
		}
	}
	if (flags & 0x05) { /* FIN or RST */
		struct imp_end end = {c->target_ep == e, (flags & 0x04) != 0, frame, t};
		net_flush_holes(im, c);
		imp_iscsi_close(im, c, &end);
		net_drop_ooo(&c->dir[0]);
		net_drop_ooo(&c->dir[1]);
		imp_iscsi_release(c);
		c->closed = true;
		im->nconns--; /* a closed connection no longer counts against the ceiling */
	}
}

/* What the IP header of one packet says. */
struct ip_pkt {
	int fam;		  /* 4 or 6 */
	uint32_t hl;		  /* the IP header's length */
	uint32_t iplen;		  /* the packet's length, as the IP header gives it */
	const uint8_t *sip, *dip; /* source and destination addresses */
};

/*
 * Decodes the IP header (ethertype et) at p into ip; false, with the reason
 * counted, when it is not a whole TCP packet's header (undecodable, a
 * fragment, not TCP).
 */
static bool net_ip(struct fl_import *im, unsigned et, const uint8_t *p, uint32_t caplen,
		   struct ip_pkt *ip)
{
	uint8_t proto;

	if (et == 0x0800) {
		if (caplen < 20 || (p[0] >> 4) != 4 || (p[0] & 15) < 5) {
			im->st.undecodable++;
			return false;
		}
		ip->hl = (p[0] & 15) * 4u;
		ip->iplen = fl_get_be16(p + 2);
		if (ip->iplen < ip->hl || caplen < ip->hl) {
			im->st.undecodable++;
			return false;
		}
		if (fl_get_be16(p + 6) & 0x3fff) { /* MF or a fragment offset */
			im->st.fragments++;
			return false;
		}
		ip->fam = 4;
		proto = p[9];
		ip->sip = p + 12;
		ip->dip = p + 16;
	} else if (et == 0x86dd) {
		if (caplen < 40 || (p[0] >> 4) != 6) {
			im->st.undecodable++;
			return false;
		}
		ip->hl = 40;
		ip->iplen = 40u + fl_get_be16(p + 4);
		ip->fam = 6;
		proto = p[6]; /* extension headers are not followed */
		ip->sip = p + 8;
		ip->dip = p + 24;
	} else {
		im->st.non_tcp++;
		return false;
	}
	if (proto != 6) {
		im->st.non_tcp++;
		return false;
	}
	return true;
}

/* Hands in one frame (import.h). */
int fl_import_frame(struct fl_import *im, int lt, uint64_t frame, int64_t t_us, const uint8_t *p,
		    uint32_t caplen, uint32_t len)
{
	uint32_t off = 0, iplen, hl, tl;
	unsigned et = 0;
	int r, ep;
	struct ip_pkt ip;

	im->st.frames++;
	im->last_frame = frame;
	if (!im->t0_us)
		im->t0_us = t_us;
	im->tlast_us = t_us;
	r = net_l3(lt, p, caplen, &off, &et);
	if (r == -2) {
		if (!im->bad_linktype++)
			return -ENOTSUP;
		return 0;
	}
	if (r < 0) {
		im->st.undecodable++;
		return 0;
	}
	p += off;
	caplen -= off;
	len = len > off ? len - off : 0;
	if (!net_ip(im, et, p, caplen, &ip))
		return 0;
	hl = ip.hl;
	iplen = ip.iplen;
	(void)len;
	/* The IP length says how much is the packet (Ethernet pads short ones). */
	bool cut = iplen > caplen;
	uint32_t have = cut ? caplen : iplen;
	if (have < hl + 20) {
		im->st.undecodable++;
		return 0;
	}
	const uint8_t *tcp = p + hl;
	tl = (tcp[12] >> 4) * 4u;
	if (tl < 20 || hl + tl > have) {
		im->st.undecodable++;
		return 0;
	}
	im->st.tcp++;
	if (cut)
		im->st.cut_short++;
	struct imp_conn *c =
	    net_conn(im, ip.fam, ip.sip, fl_get_be16(tcp), ip.dip, fl_get_be16(tcp + 2), &ep, true);
	if (!c)
		return 0;
	net_segment(im, c, ep, fl_get_be32(tcp + 4), tcp[13], tcp + tl, have - hl - tl, cut, frame,
		    t_us);
	return 0;
}

/* Frees a connection: its queues and its iSCSI state. */
static void net_free_conn(struct imp_conn *c)
{
	net_drop_ooo(&c->dir[0]);
	net_drop_ooo(&c->dir[1]);
	imp_iscsi_free(c);
	free(c);
}

/* Ends every connection still open at the end of the capture; frees them all. */
void imp_net_finish(struct fl_import *im)
{
	for (struct imp_conn *c = im->conns; c; c = c->next)
		if (!c->closed) {
			struct imp_end end = {false, false, 0, im->tlast_us};
			net_flush_holes(im, c);
			c->at_end = true;
			imp_iscsi_close(im, c, &end);
			c->closed = true;
		}
}

/* Frees every connection. */
void imp_net_free(struct fl_import *im)
{
	while (im->conns) {
		struct imp_conn *c = im->conns;
		im->conns = c->next;
		net_free_conn(c);
	}
}
