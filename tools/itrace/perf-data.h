/* SPDX-License-Identifier: GPL-2.0 */
/* perf.data (perf record -e intel_pt//) read as a recording; see perf-data.c. */
#ifndef ITRACE_PERF_DATA_H
#define ITRACE_PERF_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct itrace_data;

bool perf_data_is(const uint8_t *buf, size_t size);
/*
 * The trace, sideband and CPU of a perf.data in memory: 0, or -1 with a
 * message in err.  buildid_dir: perf's build-id cache, where the [vdso]
 * image is looked up (NULL: none).
 */
int perf_data_parse(const uint8_t *buf, size_t size, struct itrace_data *d,
		    const char *buildid_dir, char *err, size_t errlen);

#endif
