/* SPDX-License-Identifier: GPL-2.0 */
/* perf.data (perf record -e intel_pt//) read as a recording; see perf-data.c. */
#ifndef ITRACE_PERF_DATA_H
#define ITRACE_PERF_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "itrace-file.h"	/* BIT() */

struct itrace_data;

/*
 * perf's file format, version 2 (tools/perf/Documentation/
 * perf.data-file-format.txt): what perf-data.c reads and convert.c writes.
 */
#define PERF_MAGIC		0x32454c4946524550ULL	/* "PERFILE2" */
#define HEADER_BUILD_ID		2
#define HEADER_CPUID		9
#define HEADER_AUXTRACE		18
#define HEADER_FEAT_BITS	256
#define PERF_AUXTRACE_INTEL_PT	1
#define PERF_AUXTRACE_INTEL_BTS	2
#define PERF_RECORD_MISC_BUILD_ID_SIZE	BIT(15)

/*
 * perf's intel_pt AUXTRACE_INFO priv[] (tools/perf/util/intel-pt.h):
 * convert.c writes them, perf-data.c reads them.
 */
enum {
	PT_PMU_TYPE,
	PT_TIME_SHIFT,
	PT_TIME_MULT,
	PT_TIME_ZERO,
	PT_CAP_USER_TIME_ZERO,
	PT_TSC_BIT,
	PT_NORETCOMP_BIT,
	PT_HAVE_SCHED_SWITCH,
	PT_SNAPSHOT_MODE,
	PT_PER_CPU_MMAPS,
	PT_MTC_BIT,
	PT_MTC_FREQ_BITS,
	PT_TSC_CTC_N,
	PT_TSC_CTC_D,
	PT_CYC_BIT,
	PT_MAX_NONTURBO_RATIO,
	PT_FILTER_STR_LEN,
	PT_PRIV_MAX,
};

struct perf_file_section {
	uint64_t	offset, size;
};

struct perf_file_header {
	uint64_t			magic;
	uint64_t			size;
	uint64_t			attr_size;
	struct perf_file_section	attrs;
	struct perf_file_section	data;
	struct perf_file_section	event_types;
	uint64_t			features[HEADER_FEAT_BITS / 64];
};

bool perf_data_is(const uint8_t *buf, size_t size);
/*
 * perf's build-id cache: dir if not NULL, else $PERF_BUILDID_DIR, else
 * $HOME/.debug (allocated into *dflt, which the caller frees; *dflt is
 * set to NULL first).  NULL when none of them is known.
 */
const char *perf_buildid_dir(const char *dir, char **dflt);
/* n bytes of build-id as perf names it: lower-case hex into hex[2n + 1] */
void perf_buildid_hex(char *hex, const uint8_t *id, size_t n);
/*
 * Where perf's build-id cache dir keeps the [vdso] of build-id hex:
 * dir/[vdso]/HEX/vdso (perf record writes it there, perf script looks
 * there); the directory alone with file false.  Allocated, NULL: no
 * memory.
 */
char *perf_buildid_vdso_path(const char *dir, const char *hex, bool file);
/*
 * The trace, sideband and CPU of a perf.data in memory: 0, or -1 with a
 * message in err.  buildid_dir: perf's build-id cache, where the [vdso]
 * image is looked up (NULL: none).
 */
int perf_data_parse(const uint8_t *buf, size_t size, struct itrace_data *d,
		    const char *buildid_dir, char *err, size_t errlen);

#endif
