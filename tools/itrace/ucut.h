/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user-mode part of a user+kernel Intel PT trace, for decoding it
 * without the kernel's code (ucut.c).
 */
#ifndef ITRACE_UCUT_H
#define ITRACE_UCUT_H

#include <intel-pt.h>
#include <stddef.h>
#include <stdint.h>

/* Where a run of the cut trace came from: bytes at out were at in. */
struct ucut_map {
	uint64_t	out;
	uint64_t	in;
};

struct ucut {
	uint8_t		*bytes;		/* the cut trace */
	size_t		size, cap;	/* bytes */
	struct ucut_map	*map;		/* ascending out */
	size_t		nr_map, map_cap;
	unsigned long	entries;	/* user-to-kernel transitions cut */
};

uint64_t ucut_last_ip(uint64_t last, const struct pt_packet_ip *p);
int ucut_trace(struct ucut *c, const uint8_t *trace, size_t size);
uint64_t ucut_offset(const struct ucut *c, uint64_t off);
void ucut_free(struct ucut *c);

#endif
