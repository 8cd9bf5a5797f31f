// SPDX-License-Identifier: MIT
/*
 * fuzz_import.c - libFuzzer target for `faultlun import`'s capture reader
 * (cli/import_*.c): link, IP and TCP headers, TCP reassembly, iSCSI framing
 * and resynchronisation, the SCSI answers and the scenario built from them.
 *
 * Input: u8 link type selector (Ethernet, Linux cooked, raw IP, loopback),
 * then frames, each a u16 length (big endian) and that many bytes; every
 * frame is one second after the previous one. A fresh import per input.
 */
#include "import.h"

#include <stdio.h>

/* One input: every frame handed in, then the scenario built and freed. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int linktypes[] = {1, 113, 12, 0};
	struct fl_import_opts o = {0};
	struct fl_import *im;
	json_t *s = NULL;
	uint64_t frame = 0;

	if (!size)
		return 0;
	im = fl_import_new(&o);
	if (!im)
		return 0;
	int lt = linktypes[data[0] % 4];
	data++;
	size--;
	while (size >= 2) {
		size_t n = (size_t)data[0] << 8 | data[1];
		data += 2;
		size -= 2;
		if (n > size)
			n = size;
		frame++;
		fl_import_frame(im, lt, frame, (int64_t)frame * 1000000, data, (uint32_t)n,
				(uint32_t)n);
		data += n;
		size -= n;
	}
	if (!fl_import_finish(im, "fuzz", &s))
		json_decref(s);
	fl_import_free(im);
	return 0;
}
