// SPDX-License-Identifier: MIT
/*
 * fuzz_mpath.c - libFuzzer target for what `faultlun check`'s model of
 * dm-multipath and the device handlers (cli/mpath.c) reads from a target:
 * the standard INQUIRY the handler is chosen from, the query answers (REPORT
 * TARGET PORT GROUPS, VPD C0h, VPD C9h, TEST UNIT READY) that decide a pg_init,
 * the activate command's answer, the sense a handler requeues on; and the path
 * map driven through a sequence of failures and reinstatements.
 *
 * Input: byte 0 bit 3 says the LUN supports explicit ALUA, bits 4-7 the
 * number of paths (1-16); byte 1 is the answer's status, bytes 2-4 its sense
 * key, ASC and ASCQ, bytes 5-6 the target port group asked for (big-endian),
 * bytes 7-22 the paths' groups (the low 2 bits of each); byte 23 a count of
 * map events, each a later byte (bit 7: reinstate, else fail; the rest: the
 * path); the data-in is every byte after the events. Oracles, besides the
 * sanitizers: a state is -1 or 0-15, a command fits its buffers, a chosen
 * path is one of the map's paths and is up, and a map with a path up always
 * chooses one.
 */
#include "mpath.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEAD 24

/* A handler's command must fit its own buffers. */
static void check_cmd(bool made, const struct fl_mp_cmd *c)
{
	if (made && (c->cdb_len == 0 || c->cdb_len > sizeof(c->cdb) ||
		     c->data_len > sizeof(c->data) || !c->name))
		abort();
}

/* Every handler's decisions on the answer a. */
static void handlers(const struct fl_mp_answer *a, uint16_t tpg, bool explicit_alua)
{
	static const enum fl_mp_handler all[] = {FL_MP_NONE, FL_MP_ALUA, FL_MP_EMC, FL_MP_RDAC,
						 FL_MP_HP_SW};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		struct fl_mp_cmd c;
		enum fl_mp_act_result r;

		memset(&c, 0, sizeof(c));
		check_cmd(fl_mp_query(all[i], &c), &c);
		memset(&c, 0, sizeof(c));
		check_cmd(fl_mp_checker(all[i], &c), &c);
		memset(&c, 0, sizeof(c));
		check_cmd(fl_mp_activate(all[i], tpg & 0xff, tpg, &c), &c);
		(void)fl_mp_needs_activate(all[i], a, tpg, explicit_alua);
		r = fl_mp_activate_result(all[i], a);
		if (r != FL_MP_ACT_DONE && r != FL_MP_ACT_RETRY && r != FL_MP_ACT_BUSY &&
		    r != FL_MP_ACT_FAILED)
			abort();
		(void)fl_mp_sense_requeue(all[i], a->key, a->asc, a->ascq);
		if (!fl_mp_handler_name(all[i]))
			abort();
	}
}

/* The path map through the input's events: a chosen path is always a path up. */
static void map(const uint8_t *data, size_t npaths, const uint8_t *ev, size_t nev)
{
	uint16_t groups[FL_MP_MAX_PATHS];
	struct fl_mp m;

	for (size_t i = 0; i < npaths; i++)
		groups[i] = data[7 + i] & 3;
	fl_mp_init(&m, groups, npaths);
	for (size_t k = 0; k <= nev; k++) {
		int p = fl_mp_select(&m);
		bool up = false;

		for (size_t i = 0; i < m.n; i++)
			up |= !m.path[i].failed;
		if (p < -1 || p >= (int)m.n || (p >= 0 && m.path[p].failed) || (p < 0 && up)) {
			fprintf(stderr, "fl_mp_select chose %d of %zu paths (one up: %d)\n", p, m.n,
				up);
			abort();
		}
		if (k == nev)
			break;
		int i = (int)((ev[k] & 0x7f) % npaths);
		if (ev[k] & 0x80)
			fl_mp_reinstate(&m, i);
		else
			fl_mp_fail(&m, i);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HEAD)
		return 0;
	bool explicit_alua = data[0] & 8;
	size_t npaths = (size_t)(data[0] >> 4) + 1;
	uint16_t tpg = (uint16_t)(data[5] << 8 | data[6]);
	size_t nev = data[23];
	if (nev > size - HEAD)
		nev = size - HEAD;
	const uint8_t *ev = data + HEAD, *d = ev + nev;
	size_t n = size - HEAD - nev;
	struct fl_mp_answer a = {.status = data[1],
				 .key = (uint8_t)(data[2] & 0xf),
				 .asc = data[3],
				 .ascq = data[4],
				 .data = n ? d : NULL,
				 .len = n};

	if (!fl_mp_handler_name(fl_mp_handler_of(d, n)))
		abort();
	int st = fl_mp_rtpg_state(d, n, tpg);
	if (st < -1 || st > 15) {
		fprintf(stderr, "fl_mp_rtpg_state: state %d\n", st);
		abort();
	}
	handlers(&a, tpg, explicit_alua);
	map(data, npaths, ev, nev);
	return 0;
}
