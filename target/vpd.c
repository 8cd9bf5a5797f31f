/* SPDX-License-Identifier: MIT */
/*
 * vpd.c - INQUIRY vital product data pages of the logical unit.
 *
 * Pages: 00h supported VPD pages (SPC-4 r37 7.8.16), 80h unit serial number
 * (7.8.17), 83h device identification (7.8.6: NAA, T10 vendor ID, relative
 * target port, target port group designators), B0h block limits (SBC-3 r36
 * 6.5.3), B1h block device characteristics (6.5.2), B2h logical block
 * provisioning (6.5.4), and the pages of a vendor personality (vendor.h),
 * which page 00h lists after these. The block limits are the ones sbc.c enforces
 * (target_internal.h), so what a host reads here is what it gets.
 *
 * Identity: cfg.naa is an NAA IEEE Registered designator (NAA 5); a value
 * given without its NAA nibble gets 5 put there; with cfg.naa16, an IEEE
 * Registered Extended designator (NAA 6, 16 bytes: cfg.naa then
 * cfg.naa_ext), as LIO's, which Linux prefers for the disk's wwid. Without cfg.naa, a locally
 * assigned NAA 3 designator is derived from vendor, product, serial and the
 * LUN number, so that two LUNs of one target never share an identifier.
 * Without cfg.serial, the serial number is the hexadecimal NAA value.
 */
#include "spc_internal.h"
#include "vendor.h"

#include <stdio.h>
#include <string.h>

/* The pages of 00h, ascending as SPC-4 r37 7.8.16 requires. */
static const uint8_t vpd_pages[] = {0x00, 0x80, 0x83, 0xb0, 0xb1, 0xb2};

bool fl_vpd_own_page(uint8_t code)
{
	return memchr(vpd_pages, code, sizeof(vpd_pages)) != NULL;
}

/* The page `code` of the LUN's vpd_raw (its header first), or NULL. */
static const uint8_t *vpd_raw_page(const struct fl_lun *lun, uint8_t code)
{
	const uint8_t *p = lun->cfg.vpd_raw, *end;

	if (!p)
		return NULL;
	end = p + lun->cfg.vpd_raw_len;
	while (p + 4 <= end && p + 4 + fl_get_be16(p + 2) <= end) {
		if (p[1] == code)
			return p;
		p += 4 + fl_get_be16(p + 2);
	}
	return NULL;
}

/* Page 00h's list (SPC-4 r37 7.8.16: ascending) into out; returns its length. */
static uint32_t vpd_supported(const struct fl_lun *lun, uint8_t *out)
{
	const uint8_t *p = lun->cfg.vpd_raw, *end = p ? p + lun->cfg.vpd_raw_len : NULL;
	uint32_t n = sizeof(vpd_pages);

	memcpy(out, vpd_pages, n);
	if (lun->vops) {
		memcpy(out + n, lun->vops->vpd_codes, lun->vops->nvpd);
		n += (uint32_t)lun->vops->nvpd;
	}
	for (; p && p + 4 <= end && p + 4 + fl_get_be16(p + 2) <= end; p += 4 + fl_get_be16(p + 2))
		if (!memchr(out, p[1], n))
			out[n++] = p[1];
	/* insertion sort: a few dozen codes at most */
	for (uint32_t i = 1; i < n; i++)
		for (uint32_t j = i; j > 0 && out[j - 1] > out[j]; j--) {
			uint8_t t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

/* Folds a string into a 64-bit FNV-1a hash. */
static uint64_t fnv1a(uint64_t h, const char *s)
{
	for (; s && *s; s++) {
		h ^= (uint8_t)*s;
		h *= 0x100000001b3ull;
	}
	h ^= 0xff; /* field separator: ("ab","c") differs from ("a","bc") */
	h *= 0x100000001b3ull;
	return h;
}

/* The 8-byte NAA designator of the LUN (NAA 5 configured, NAA 3 derived). */
static uint64_t vpd_naa(const struct fl_lun *lun)
{
	uint64_t h = 0xcbf29ce484222325ull;
	char id[8];

	if (lun->cfg.naa) {
		if (lun->cfg.naa >> 60)
			return lun->cfg.naa;
		return 0x5ull << 60 | lun->cfg.naa;
	}
	h = fnv1a(h, lun->cfg.vendor);
	h = fnv1a(h, lun->cfg.product);
	h = fnv1a(h, lun->cfg.serial);
	snprintf(id, sizeof(id), "%u", (unsigned)lun->lun_id);
	h = fnv1a(h, id);
	/* SPC-4 r37 7.8.6.6.3: NAA 3h, locally assigned, 60 bits of our choosing */
	return 0x3ull << 60 | (h & 0x0fffffffffffffffull);
}

/* The unit serial number: cfg.serial, or the NAA value in hexadecimal. */
static void vpd_serial(const struct fl_lun *lun, char *out, size_t cap)
{
	if (lun->cfg.serial && lun->cfg.serial[0])
		snprintf(out, cap, "%s", lun->cfg.serial);
	else
		snprintf(out, cap, "%016llx", (unsigned long long)vpd_naa(lun));
}

/* The LUN's NAA designator (VPD 83h) and unit serial number (VPD 80h). */
void fl_lun_identity(const struct fl_lun *lun, uint64_t *naa, char *serial, size_t cap)
{
	if (naa)
		*naa = vpd_naa(lun);
	if (serial && cap)
		vpd_serial(lun, serial, cap);
}

/* Page 83h, device identification (SPC-4 r37 7.8.6). Returns its length. */
static uint32_t vpd_devid(struct exec_ctx *x, uint8_t *buf)
{
	const struct fl_lun *lun = x->lun;
	char serial[200];
	uint8_t *d = buf + 4;
	size_t slen;

	/* NAA designator: code set binary, association logical unit, type 3h */
	d[0] = 0x01;
	d[1] = 0x03;
	d[3] = lun->cfg.naa16 ? 16 : 8;
	fl_put_be64(d + 4, vpd_naa(lun));
	if (lun->cfg.naa16)
		fl_put_be64(d + 12, lun->cfg.naa_ext);
	d += 4 + d[3];
	/* T10 vendor ID (7.8.6.4): ASCII, vendor then vendor specific */
	vpd_serial(lun, serial, sizeof(serial));
	slen = strlen(serial);
	d[0] = 0x02;
	d[1] = 0x01;
	d[3] = (uint8_t)(8 + 16 + slen);
	spc_put_ascii(d + 4, lun->cfg.vendor, 8);
	spc_put_ascii(d + 12, lun->cfg.product, 16);
	memcpy(d + 28, serial, slen);
	d += 4 + 8 + 16 + slen;
	/* relative target port (7.8.6.7): association target port, type 4h */
	d[0] = 0x01;
	d[1] = 0x14;
	d[3] = 4;
	fl_put_be16(d + 6, spc_rel_port(x));
	d += 8;
	/* target port group (7.8.6.8): association target port, type 5h */
	d[0] = 0x01;
	d[1] = 0x15;
	d[3] = 4;
	fl_put_be16(d + 6, lun->cfg.tpgs[lun_tpg_index(lun, spc_rel_port(x))].id);
	d += 8;
	fl_put_be16(buf + 2, (uint32_t)(d - buf - 4));
	return (uint32_t)(d - buf);
}

/* Page B0h, block limits (SBC-3 r36 6.5.3, Table 206). */
static uint32_t vpd_block_limits(const struct fl_lun *lun, uint8_t *buf)
{
	uint32_t max_xfer = lun_max_xfer_blocks(lun);

	fl_put_be16(buf + 2, 0x3c);
	buf[4] = SBC_WSNZ ? 0x01 : 0x00; /* WSNZ */
	buf[5] = SBC_MAX_CAW_BLOCKS;	 /* MAXIMUM COMPARE AND WRITE LENGTH */
	fl_put_be16(buf + 6, 1);	 /* OPTIMAL TRANSFER LENGTH GRANULARITY */
	fl_put_be32(buf + 8, max_xfer);	 /* MAXIMUM TRANSFER LENGTH */
	fl_put_be32(buf + 12, max_xfer); /* OPTIMAL TRANSFER LENGTH */
	fl_put_be32(buf + 16, 0);	 /* MAXIMUM PREFETCH LENGTH: not reported */
	if (lun->cfg.thin) {
		/* "a MAXIMUM UNMAP LBA COUNT of 0 ... UNMAP is not supported" */
		fl_put_be32(buf + 20, SBC_MAX_UNMAP_LBA_COUNT);
		fl_put_be32(buf + 24, SBC_MAX_UNMAP_DESCRIPTORS);
		fl_put_be32(buf + 28, 1); /* OPTIMAL UNMAP GRANULARITY */
	}
	fl_put_be64(buf + 36, SBC_MAX_WS_BLOCKS); /* MAXIMUM WRITE SAME LENGTH */
	/* SBC-4: MAXIMUM ATOMIC TRANSFER LENGTH; ATOMIC ALIGNMENT, ATOMIC TRANSFER
	 * LENGTH GRANULARITY and the atomic boundary fields (48-63) stay 0 */
	fl_put_be32(buf + 44, max_xfer < SBC_MAX_ATOMIC_BLOCKS ? max_xfer : SBC_MAX_ATOMIC_BLOCKS);
	return 64;
}

/* Page B1h, block device characteristics (SBC-3 r36 6.5.2). */
static uint32_t vpd_characteristics(uint8_t *buf)
{
	fl_put_be16(buf + 2, 0x3c);
	fl_put_be16(buf + 4, 0x0001); /* MEDIUM ROTATION RATE: non-rotating medium */
	buf[7] = 0x00;		      /* NOMINAL FORM FACTOR: not reported */
	return 64;
}

/*
 * Page B2h, logical block provisioning (SBC-3 r36 6.5.4, Table 210). A thin
 * LUN supports UNMAP (LBPU) and WRITE SAME (16) / (10) with the UNMAP bit
 * (LBPWS, LBPWS10) and is of provisioning type 010b (thin); LBPRZ follows
 * cfg.lbprz, as READ CAPACITY (16) does. A fully provisioned LUN reports
 * none of these and provisioning type 000b.
 */
static uint32_t vpd_provisioning(const struct fl_lun *lun, uint8_t *buf)
{
	fl_put_be16(buf + 2, 4);
	buf[4] = 0; /* THRESHOLD EXPONENT: thresholds are not reported here */
	if (lun->cfg.thin) {
		buf[5] = 0x80 | 0x40 | 0x20 | (lun->cfg.lbprz ? 0x04 : 0);
		buf[6] = 0x02;
	}
	return 8;
}

/* INQUIRY with EVPD=1 (SPC-4 r37 6.6.1): one page, or 24/00 on PAGE CODE. */
enum sense_reason vpd_inquiry(struct exec_ctx *x, uint8_t page, uint32_t alloc)
{
	uint8_t buf[512];
	char serial[200];
	uint32_t len;

	memset(buf, 0, sizeof(buf));
	buf[0] = 0x00; /* peripheral qualifier 0, direct-access block device */
	buf[1] = page;
	switch (page) {
	case 0x00:
		len = vpd_supported(x->lun, buf + 4);
		fl_put_be16(buf + 2, (uint16_t)len);
		len += 4;
		break;
	case 0x80:
		vpd_serial(x->lun, serial, sizeof(serial));
		len = (uint32_t)strlen(serial);
		memcpy(buf + 4, serial, len);
		fl_put_be16(buf + 2, len);
		len += 4;
		break;
	case 0x83:
		len = vpd_devid(x, buf);
		break;
	case 0xb0:
		len = vpd_block_limits(x->lun, buf);
		break;
	case 0xb1:
		len = vpd_characteristics(buf);
		break;
	case 0xb2:
		len = vpd_provisioning(x->lun, buf);
		break;
	default:
		if (x->lun->vops && x->lun->vops->nvpd &&
		    memchr(x->lun->vops->vpd_codes, page, x->lun->vops->nvpd)) {
			len = x->lun->vops->vpd(x, page, buf, sizeof(buf));
			break;
		}
		const uint8_t *raw = vpd_raw_page(x->lun, page);
		if (raw) {
			len = 4 + fl_get_be16(raw + 2);
			memcpy(buf + 1, raw + 1, len - 1); /* byte 0: this LUN's device type */
			break;
		}
		return exec_invalid_field(x, SENSE_INVALID_FIELD_IN_CDB, 2, 7);
	}
	exec_data_in(x, buf, len, alloc);
	return SENSE_OK;
}
