// SPDX-License-Identifier: MIT
/*
 * decode.c - data-in decoded field by field for `faultlun send` (see
 * decode.h for the commands and clauses). One writer (struct out) serves
 * both forms: text lines "  name: value" indented by depth, or JSON members.
 * The data is hostile: every read is checked against the received length n,
 * whatever the lengths inside the data say.
 */
#include "decode.h"

#include "fl_byteorder.h"
#include "fl_check.h"
#include "fl_target.h"

#include <ctype.h>
#include <inttypes.h>
#include <string.h>

/* The writer: text or JSON, nesting depth, whether a member was written at each level. */
struct out {
	FILE *f;
	bool json;
	int depth;
	bool any[16];
	bool in_array[16];
	bool started; /* text: a line was written */
};

/* Starts a member named k (NULL in an array): separator, indent, key. */
static void put_key(struct out *o, const char *k)
{
	int d = o->depth < 15 ? o->depth : 15;

	if (o->json) {
		if (o->any[d])
			fputs(", ", o->f);
		if (k && !o->in_array[d])
			fprintf(o->f, "\"%s\": ", k);
	} else {
		fprintf(o->f, "%s%*s%s%s", o->started ? "\n" : "", 2 * (o->depth + 1), "",
			k && !o->in_array[d] ? k : "-", k && !o->in_array[d] ? ":" : "");
		o->started = true;
	}
	o->any[d] = true;
}

/* A number member. */
static void put_u(struct out *o, const char *k, uint64_t v)
{
	put_key(o, k);
	fprintf(o->f, o->json ? "%" PRIu64 : " %" PRIu64, v);
}

/* A number shown in hex in text (JSON has it as a number). */
static void put_x(struct out *o, const char *k, uint64_t v)
{
	put_key(o, k);
	fprintf(o->f, o->json ? "%" PRIu64 : " 0x%" PRIx64, v);
}

/* A flag member. */
static void put_b(struct out *o, const char *k, bool v)
{
	put_key(o, k);
	fprintf(o->f, o->json ? "%s" : " %s", v ? "true" : "false");
}

/* A string member from a C string. */
static void put_s(struct out *o, const char *k, const char *s)
{
	put_key(o, k);
	if (!o->json) {
		fprintf(o->f, " %s", s);
		return;
	}
	fputc('"', o->f);
	for (; *s; s++)
		if (*s == '"' || *s == '\\')
			fprintf(o->f, "\\%c", *s);
		else
			fputc(*s, o->f);
	fputc('"', o->f);
}

/* A string member from n bytes of ASCII data: trailing spaces and NULs dropped, others as '.'. */
static void put_ascii(struct out *o, const char *k, const uint8_t *p, size_t n)
{
	char s[512];
	size_t m = n < sizeof(s) - 1 ? n : sizeof(s) - 1;

	for (size_t i = 0; i < m; i++)
		s[i] =
		    p[i] >= 0x20 && p[i] < 0x7f && p[i] != '"' && p[i] != '\\' ? (char)p[i] : '.';
	while (m && (s[m - 1] == ' ' || p[m - 1] == 0))
		m--;
	s[m] = 0;
	put_s(o, k, s);
}

/* A byte string member in hex ("00 01 ..." in text, "0001.." in JSON). */
static void put_hex(struct out *o, const char *k, const uint8_t *p, size_t n)
{
	put_key(o, k);
	fputs(o->json ? "\"" : " ", o->f);
	for (size_t i = 0; i < n; i++)
		fprintf(o->f, o->json || !i ? "%02x" : " %02x", p[i]);
	if (o->json)
		fputc('"', o->f);
}

/* Opens an object ('{') or array ('[') member. */
static void open_(struct out *o, const char *k, char kind)
{
	put_key(o, k);
	if (o->json)
		fputc(kind, o->f);
	if (o->depth < 15) {
		o->depth++;
		o->any[o->depth] = false;
		o->in_array[o->depth] = kind == '[';
	}
}

/* Closes what open_ opened. */
static void close_(struct out *o, char kind)
{
	if (o->json)
		fputc(kind == '[' ? ']' : '}', o->f);
	if (o->depth > 0)
		o->depth--;
}

/* Marks a list that ended before its own length said (the data was cut short). */
static void put_truncated(struct out *o, size_t want, size_t got)
{
	if (want > got)
		put_b(o, "truncated", true);
}

/* READ CAPACITY(10) parameter data (SBC-3 r36 5.15.2). */
static void dec_readcap10(struct out *o, const uint8_t *d, size_t n)
{
	if (n < 8)
		return;
	uint32_t lba = fl_get_be32(d), bs = fl_get_be32(d + 4);
	put_u(o, "last_lba", lba);
	put_u(o, "block_size", bs);
	if (lba != 0xffffffffu) {
		put_u(o, "blocks", (uint64_t)lba + 1);
		put_u(o, "bytes", ((uint64_t)lba + 1) * bs);
	}
}

/* READ CAPACITY(16) parameter data (SBC-3 r36 5.16.2). */
static void dec_readcap16(struct out *o, const uint8_t *d, size_t n)
{
	if (n < 12)
		return;
	uint64_t lba = fl_get_be64(d);
	uint32_t bs = fl_get_be32(d + 8);
	put_u(o, "last_lba", lba);
	put_u(o, "block_size", bs);
	if (lba < UINT64_MAX) {
		put_u(o, "blocks", lba + 1);
		if (bs && lba + 1 <= UINT64_MAX / bs)
			put_u(o, "bytes", (lba + 1) * bs);
	}
	if (n >= 13) {
		put_b(o, "prot_en", d[12] & 1);
		put_u(o, "p_type", d[12] >> 1 & 7);
	}
	if (n >= 14) {
		put_u(o, "p_i_exponent", d[13] >> 4);
		put_u(o, "lbppbe", d[13] & 15);
	}
	if (n >= 16) {
		put_b(o, "lbpme", d[14] & 0x80);
		put_b(o, "lbprz", d[14] & 0x40);
		put_u(o, "lowest_aligned_lba", fl_get_be16(d + 14) & 0x3fff);
	}
}

/* One 8-byte LUN (SAM-5 4.7): the number for peripheral and flat addressing. */
static void put_lun(struct out *o, const uint8_t *l)
{
	unsigned method = l[0] >> 6;

	if (method == 0 && !(l[0] & 0x3f) && !l[2] && !l[3])
		put_u(o, NULL, l[1]);
	else if (method == 1 && !l[2] && !l[3])
		put_u(o, NULL, (unsigned)(l[0] & 0x3f) << 8 | l[1]);
	else
		put_hex(o, NULL, l, 8);
}

/* REPORT LUNS parameter data (SPC-4 r37 6.33.2). */
static void dec_report_luns(struct out *o, const uint8_t *d, size_t n)
{
	if (n < 4)
		return;
	size_t len = fl_get_be32(d), got = n >= 8 ? (n - 8) / 8 * 8 : 0;
	put_u(o, "list_length", len);
	open_(o, "luns", '[');
	for (size_t i = 0; i + 8 <= got && i < len; i += 8)
		put_lun(o, d + 8 + i);
	close_(o, '[');
	put_truncated(o, len, got);
}

/* Standard INQUIRY data (SPC-4 r37 6.6.2). */
static void dec_inquiry(struct out *o, const uint8_t *d, size_t n)
{
	if (n < 1)
		return;
	put_u(o, "peripheral_qualifier", d[0] >> 5);
	put_x(o, "peripheral_device_type", d[0] & 0x1f);
	if (n < 5)
		return;
	put_b(o, "rmb", d[1] & 0x80);
	put_x(o, "version", d[2]);
	put_b(o, "normaca", d[3] & 0x20);
	put_b(o, "hisup", d[3] & 0x10);
	put_u(o, "response_data_format", d[3] & 15);
	put_u(o, "additional_length", d[4]);
	if (n >= 6) {
		put_b(o, "sccs", d[5] & 0x80);
		put_b(o, "acc", d[5] & 0x40);
		put_u(o, "tpgs", d[5] >> 4 & 3);
		put_b(o, "3pc", d[5] & 8);
		put_b(o, "protect", d[5] & 1);
	}
	if (n >= 8) {
		put_b(o, "encserv", d[6] & 0x40);
		put_b(o, "multip", d[6] & 0x10);
		put_b(o, "cmdque", d[7] & 2);
	}
	if (n >= 16)
		put_ascii(o, "vendor", d + 8, 8);
	if (n >= 32)
		put_ascii(o, "product", d + 16, 16);
	if (n >= 36)
		put_ascii(o, "revision", d + 32, 4);
	if (n >= 60) {
		open_(o, "version_descriptors", '[');
		for (size_t i = 58; i + 2 <= n && i < 74; i += 2)
			if (fl_get_be16(d + i))
				put_x(o, NULL, fl_get_be16(d + i));
		close_(o, '[');
	}
}

/* Name of a designator type (SPC-4 r37 7.8.6.1, table 592). */
static const char *designator_type(unsigned t)
{
	static const char *const names[16] = {"vendor_specific",
					      "t10_vendor_id",
					      "eui64",
					      "naa",
					      "relative_target_port",
					      "target_port_group",
					      "logical_unit_group",
					      "md5_logical_unit",
					      "scsi_name_string",
					      "protocol_specific"};
	return names[t & 15] ? names[t & 15] : "reserved";
}

/* VPD page 83h, device identification (SPC-4 r37 7.8.6). */
static void dec_vpd83(struct out *o, const uint8_t *d, size_t n, size_t len)
{
	size_t end = 4 + len < n ? 4 + len : n, off = 4;
	static const char *const assoc[4] = {"logical_unit", "target_port", "target_device",
					     "reserved"};

	open_(o, "designators", '[');
	while (off + 4 <= end) {
		const uint8_t *p = d + off;
		size_t dl = p[3], have = off + 4 + dl <= end ? dl : end - off - 4;
		unsigned type = p[1] & 15, codeset = p[0] & 15;

		open_(o, NULL, '{');
		put_s(o, "type", designator_type(type));
		put_s(o, "association", assoc[p[1] >> 4 & 3]);
		put_u(o, "code_set", codeset);
		if (p[1] & 0x80)
			put_u(o, "protocol_identifier", p[0] >> 4);
		if ((type == 4 || type == 5 || type == 6) && have >= 4)
			put_u(o,
			      type == 4	  ? "relative_port"
			      : type == 5 ? "group"
					  : "lu_group",
			      fl_get_be16(p + 6));
		else if (codeset == 2 || codeset == 3)
			put_ascii(o, "id", p + 4, have);
		else
			put_hex(o, "id", p + 4, have);
		if (have < dl)
			put_b(o, "truncated", true);
		close_(o, '{');
		off += 4 + dl;
	}
	close_(o, '[');
}

/* VPD page 86h, extended INQUIRY data (SPC-4 r37 7.8.7). */
static void dec_vpd86(struct out *o, const uint8_t *d, size_t n)
{
	static const struct {
		const char *name;
		unsigned byte, mask;
	} f[] = {
	    {"activate_microcode", 4, 0xc0},
	    {"spt", 4, 0x38},
	    {"grd_chk", 4, 4},
	    {"app_chk", 4, 2},
	    {"ref_chk", 4, 1},
	    {"uask_sup", 5, 0x20},
	    {"group_sup", 5, 0x10},
	    {"prior_sup", 5, 8},
	    {"headsup", 5, 4},
	    {"ordsup", 5, 2},
	    {"simpsup", 5, 1},
	    {"wu_sup", 6, 8},
	    {"crd_sup", 6, 4},
	    {"nv_sup", 6, 2},
	    {"v_sup", 6, 1},
	    {"p_i_i_sup", 7, 0x10},
	    {"luiclr", 7, 1},
	    {"r_sup", 8, 0x10},
	    {"cbcs", 8, 1},
	    {"multi_it_nexus_microcode_download", 9, 15},
	};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (f[i].byte >= n)
			continue;
		unsigned v = d[f[i].byte] & f[i].mask, m = f[i].mask;
		while (!(m & 1)) {
			m >>= 1;
			v >>= 1;
		}
		if (m == 1)
			put_b(o, f[i].name, v);
		else
			put_u(o, f[i].name, v);
	}
	if (n >= 12)
		put_u(o, "extended_self_test_completion_minutes", fl_get_be16(d + 10));
}

/* VPD page B0h, block limits (SBC-3 r36 6.6.4). */
static void dec_vpdb0(struct out *o, const uint8_t *d, size_t n)
{
	static const struct {
		const char *name;
		unsigned off, size;
	} f[] = {
	    {"max_compare_and_write_length", 5, 1},
	    {"optimal_transfer_length_granularity", 6, 2},
	    {"maximum_transfer_length", 8, 4},
	    {"optimal_transfer_length", 12, 4},
	    {"maximum_prefetch_length", 16, 4},
	    {"maximum_unmap_lba_count", 20, 4},
	    {"maximum_unmap_block_descriptor_count", 24, 4},
	    {"optimal_unmap_granularity", 28, 4},
	    {"maximum_write_same_length", 36, 8},
	};
	if (n > 4)
		put_b(o, "wsnz", d[4] & 1);
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (f[i].off + f[i].size > n)
			break;
		const uint8_t *p = d + f[i].off;
		put_u(o, f[i].name,
		      f[i].size == 1   ? p[0]
		      : f[i].size == 2 ? fl_get_be16(p)
		      : f[i].size == 4 ? fl_get_be32(p)
				       : fl_get_be64(p));
		if (f[i].off == 28 && n >= 36) {
			put_b(o, "ugavalid", d[32] & 0x80);
			put_u(o, "unmap_granularity_alignment", fl_get_be32(d + 32) & 0x7fffffffu);
		}
	}
}

/* VPD page B1h, block device characteristics (SBC-3 r36 6.6.2). */
static void dec_vpdb1(struct out *o, const uint8_t *d, size_t n)
{
	if (n >= 6) {
		unsigned r = fl_get_be16(d + 4);
		put_u(o, "medium_rotation_rate", r);
		if (r == 1)
			put_s(o, "medium", "non-rotating");
	}
	if (n >= 7)
		put_u(o, "product_type", d[6]);
	if (n >= 8) {
		put_u(o, "wabereq", d[7] >> 6);
		put_u(o, "wacereq", d[7] >> 4 & 3);
		put_u(o, "nominal_form_factor", d[7] & 15);
	}
	if (n >= 9) {
		put_b(o, "fuab", d[8] & 2);
		put_b(o, "vbuls", d[8] & 1);
	}
}

/* VPD page B2h, logical block provisioning (SBC-3 r36 6.6.5). */
static void dec_vpdb2(struct out *o, const uint8_t *d, size_t n)
{
	static const char *const ptype[8] = {"not_reported", "resource", "thin"};

	if (n >= 5)
		put_u(o, "threshold_exponent", d[4]);
	if (n >= 6) {
		put_b(o, "lbpu", d[5] & 0x80);
		put_b(o, "lbpws", d[5] & 0x40);
		put_b(o, "lbpws10", d[5] & 0x20);
		put_u(o, "lbprz", d[5] >> 2 & 7);
		put_b(o, "anc_sup", d[5] & 2);
		put_b(o, "dp", d[5] & 1);
	}
	if (n >= 7)
		put_s(o, "provisioning_type", ptype[d[6] & 7] ? ptype[d[6] & 7] : "reserved");
}

/* A VPD page (SPC-4 r37 7.8): header, then the page's own fields. */
static void dec_vpd(struct out *o, const uint8_t *d, size_t n)
{
	if (n < 4) {
		put_hex(o, "bytes", d, n);
		return;
	}
	size_t len = fl_get_be16(d + 2), body = n - 4 < len ? n - 4 : len;
	put_x(o, "page", d[1]);
	put_u(o, "page_length", len);
	switch (d[1]) {
	case 0x00:
		open_(o, "pages", '[');
		for (size_t i = 0; i < body; i++)
			put_x(o, NULL, d[4 + i]);
		close_(o, '[');
		break;
	case 0x80:
		put_ascii(o, "serial_number", d + 4, body);
		break;
	case 0x83:
		dec_vpd83(o, d, n, len);
		break;
	case 0x86:
		dec_vpd86(o, d, 4 + body);
		break;
	case 0xb0:
		dec_vpdb0(o, d, 4 + body);
		break;
	case 0xb1:
		dec_vpdb1(o, d, 4 + body);
		break;
	case 0xb2:
		dec_vpdb2(o, d, 4 + body);
		break;
	default:
		/* vendor pages (C0h-FFh): no public layout; RDAC's open with a 4-letter tag */
		if (body >= 4 && isalnum(d[4]) && isalnum(d[5]) && isalnum(d[6]) && isalnum(d[7]))
			put_ascii(o, "signature", d + 4, 4);
		put_hex(o, "bytes", d + 4, body);
		break;
	}
	put_truncated(o, len, body);
}

/* REPORT TARGET PORT GROUPS parameter data (SPC-4 r37 6.36.2). */
static void dec_rtpg(struct out *o, const uint8_t *d, size_t n)
{
	if (n < 4)
		return;
	/* the returned data length counts the bytes after itself */
	size_t len = fl_get_be32(d), hdr = n >= 8 && (d[4] >> 4 & 7) == 1 ? 8 : 4;
	size_t end = len <= n - 4 ? 4 + len : n;
	size_t off = hdr;

	put_u(o, "returned_data_length", len);
	if (hdr == 8)
		put_u(o, "implicit_transition_time", d[5]);
	open_(o, "groups", '[');
	while (off + 8 <= end) {
		const uint8_t *g = d + off;
		size_t ports = g[7];

		open_(o, NULL, '{');
		put_u(o, "group", fl_get_be16(g + 2));
		put_s(o, "state", fl_alua_state_text(g[0] & 15));
		put_b(o, "pref", g[0] & 0x80);
		put_x(o, "supported", g[1]);
		put_u(o, "status_code", g[5]);
		open_(o, "relative_ports", '[');
		size_t i;
		for (i = 0; i < ports && off + 8 + 4 * i + 4 <= end; i++)
			put_u(o, NULL, fl_get_be16(g + 8 + 4 * i + 2));
		close_(o, '[');
		if (i < ports)
			put_b(o, "truncated", true);
		close_(o, '{');
		off += 8 + 4 * ports;
	}
	close_(o, '[');
	put_truncated(o, len, n - 4);
}

/* The mode pages after a mode parameter header (SPC-4 r37 7.5.7). */
static void dec_mode_pages(struct out *o, const uint8_t *d, size_t off, size_t end)
{
	open_(o, "pages", '[');
	while (off + 2 <= end) {
		const uint8_t *p = d + off;
		bool spf = p[0] & 0x40;
		size_t hl = spf ? 4 : 2;
		if (off + hl > end)
			break;
		size_t pl = spf ? fl_get_be16(p + 2) : p[1];
		size_t have = off + hl + pl <= end ? pl : end - off - hl;

		open_(o, NULL, '{');
		put_x(o, "page", p[0] & 0x3f);
		if (spf)
			put_x(o, "subpage", p[1]);
		put_b(o, "ps", p[0] & 0x80);
		put_u(o, "length", pl);
		if ((p[0] & 0x3f) == 0x08 && !spf && have >= 1) {
			put_b(o, "wce", p[2] & 4);
			put_b(o, "rcd", p[2] & 1);
		} else if ((p[0] & 0x3f) == 0x0a && !spf && have >= 2) {
			put_u(o, "tst", p[2] >> 5);
			put_b(o, "d_sense", p[2] & 4);
			put_u(o, "qerr", p[3] >> 1 & 3);
		} else if ((p[0] & 0x3f) == 0x01 && !spf && have >= 1) {
			put_b(o, "awre", p[2] & 0x80);
			put_b(o, "arre", p[2] & 0x40);
		}
		put_hex(o, "bytes", p + hl, have);
		if (have < pl)
			put_b(o, "truncated", true);
		close_(o, '{');
		off += hl + pl;
	}
	close_(o, '[');
}

/* MODE SENSE(6) or (10) parameter data (SPC-4 r37 7.5.4, 7.5.5). */
static void dec_mode_sense(struct out *o, const uint8_t *d, size_t n, bool ten)
{
	size_t hl = ten ? 8 : 4;
	if (n < hl)
		return;
	size_t mdl = ten ? fl_get_be16(d) : d[0], end = mdl + (ten ? 2 : 1);
	size_t bdl = ten ? fl_get_be16(d + 6) : d[3];
	bool longlba = ten && (d[4] & 1);

	if (end > n)
		end = n;
	put_u(o, "mode_data_length", mdl);
	put_x(o, "medium_type", d[ten ? 2 : 1]);
	put_b(o, "wp", d[ten ? 3 : 2] & 0x80);
	put_b(o, "dpofua", d[ten ? 3 : 2] & 0x10);
	put_u(o, "block_descriptor_length", bdl);
	open_(o, "block_descriptors", '[');
	for (size_t off = hl; off < hl + bdl && off + (longlba ? 16 : 8) <= end;
	     off += longlba ? 16 : 8) {
		open_(o, NULL, '{');
		if (longlba) {
			put_u(o, "blocks", fl_get_be64(d + off));
			put_u(o, "block_length", fl_get_be32(d + off + 12));
		} else {
			put_u(o, "blocks", fl_get_be32(d + off) & (ten ? 0xffffffffu : 0xffffffu));
			put_u(o, "block_length", fl_get_be32(d + off + 4) & 0xffffff);
		}
		close_(o, '{');
	}
	close_(o, '[');
	dec_mode_pages(o, d, hl + bdl, end);
	put_truncated(o, mdl + (ten ? 2 : 1), n);
}

/* REQUEST SENSE parameter data: sense data (SPC-4 r37 4.5.2, 4.5.3), read by fl_sense_decode. */
static void dec_request_sense(struct out *o, const uint8_t *d, size_t n)
{
	struct fl_sense_data s;
	char text[128];

	if (n < 1)
		return;
	fl_sense_decode(d, n, &s);
	put_x(o, "response_code", s.response_code);
	if (s.format == FL_SENSE_FORMAT_UNKNOWN) {
		put_hex(o, "bytes", d, n);
		return;
	}
	/* the header up to the sense key: byte 3 (descriptor) or byte 2 (fixed) */
	if (n < (s.format == FL_SENSE_FORMAT_DESCRIPTOR ? 4u : 3u))
		return;
	put_s(o, "format", fl_sense_format_name(s.format));
	if (s.format == FL_SENSE_FORMAT_FIXED && s.info_valid)
		put_u(o, "information", s.info);
	put_u(o, "key", s.key);
	put_u(o, "asc", s.asc);
	put_u(o, "ascq", s.ascq);
	fl_sense_text(s.key, s.asc, s.ascq, text, sizeof(text));
	put_s(o, "text", text);
}

/* True when the data-in of cdb has a decoder. */
bool fl_decode_known(const uint8_t *cdb, int cdb_len)
{
	if (cdb_len < 6)
		return false;
	switch (cdb[0]) {
	case 0x03: /* REQUEST SENSE */
	case 0x12: /* INQUIRY */
	case 0x1a: /* MODE SENSE(6) */
	case 0x5a: /* MODE SENSE(10) */
	case 0xa0: /* REPORT LUNS */
		return true;
	case 0x25: /* READ CAPACITY(10) */
		return cdb_len >= 10;
	case 0x9e: /* SERVICE ACTION IN(16): READ CAPACITY(16) */
		return cdb_len >= 16 && (cdb[1] & 0x1f) == 0x10;
	case 0xa3: /* MAINTENANCE IN: REPORT TARGET PORT GROUPS */
		return cdb_len >= 12 && (cdb[1] & 0x1f) == 0x0a;
	default:
		return false;
	}
}

/* Writes the decoded data-in of cdb. */
void fl_decode(FILE *f, bool json, const uint8_t *cdb, int cdb_len, const uint8_t *d, size_t n)
{
	struct out o = {.f = f, .json = json};

	if (!fl_decode_known(cdb, cdb_len))
		return;
	if (json)
		fputs(", \"decoded\": {", f);
	switch (cdb[0]) {
	case 0x03:
		dec_request_sense(&o, d, n);
		break;
	case 0x12:
		if (cdb[1] & 1)
			dec_vpd(&o, d, n);
		else
			dec_inquiry(&o, d, n);
		break;
	case 0x1a:
		dec_mode_sense(&o, d, n, false);
		break;
	case 0x5a:
		dec_mode_sense(&o, d, n, true);
		break;
	case 0xa0:
		dec_report_luns(&o, d, n);
		break;
	case 0x25:
		dec_readcap10(&o, d, n);
		break;
	case 0x9e:
		dec_readcap16(&o, d, n);
		break;
	case 0xa3:
		dec_rtpg(&o, d, n);
		break;
	}
	if (json)
		fputc('}', f);
	else if (o.started)
		fputc('\n', f);
}
