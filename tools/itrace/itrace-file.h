/* SPDX-License-Identifier: GPL-2.0 */
/*
 * itrace.data: the file written by "itrace record", read by "itrace decode".
 *
 * Format, version 1.  All integers are in the byte order of the machine that
 * recorded (x86-64: little endian); a reader on another byte order rejects
 * the file by its magic.
 *
 *   struct itrace_file_header        (header_size bytes, >= 64)
 *   struct itrace_section + payload  (repeated; payload padded to 8 bytes)
 *   ...
 *   ITRACE_SEC_END                   (size 0; its absence = truncated file)
 *
 * Sections (type):
 *   TRACE   raw trace bytes (Intel PT packets) copied from the trace fd.
 *           offset = position of the first byte in the trace stream
 *           (the value of data_tail when it was copied).  Chunks come in
 *           stream order; a chunk whose offset is not the end of the
 *           previous one marks a gap (lost trace), decoded separately.
 *   PERF    bytes of the event's perf stream (struct perf_event_header
 *           records: MMAP2, COMM, EXIT, ITRACE_LOST, AUX ...) in stream
 *           order; offset = stream position.  Records never straddle
 *           chunks.
 *   VDSO    the [vdso] ELF image of the recording kernel (offset unused).
 *   CMDLINE the traced command, NUL separated arguments.
 *   ATTR    the struct perf_event_attr used (attr.size bytes).
 *   END     last section.
 *
 * Unknown section types are skipped by readers (forward compatible);
 * a new incompatible layout bumps ITRACE_FILE_VERSION.
 */
#ifndef ITRACE_FILE_H
#define ITRACE_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ITRACE_FILE_MAGIC	"ITRCDATA"
#define ITRACE_FILE_VERSION	1

/* The kernel's <linux/bits.h>, which user space does not have. */
#ifndef BIT
#define BIT(nr)			(1UL << (nr))
#endif
#ifndef BIT_ULL
#define BIT_ULL(nr)		(1ULL << (nr))
#endif

/* header flags */
#define ITRACE_FLAG_SNAPSHOT	BIT(0)	/* overwrite-mode recording */

enum itrace_cpu_vendor {
	ITRACE_CPU_UNKNOWN	= 0,
	ITRACE_CPU_INTEL	= 1,
};

struct itrace_file_header {
	char		magic[8];	/* ITRACE_FILE_MAGIC */
	uint32_t	version;	/* ITRACE_FILE_VERSION */
	uint32_t	header_size;	/* sizeof this struct as written */
	uint32_t	page_size;	/* page size of the recording machine */
	uint32_t	flags;		/* ITRACE_FLAG_* */
	uint32_t	cpu_vendor;	/* enum itrace_cpu_vendor */
	uint16_t	cpu_family;	/* CPUID display family */
	uint8_t		cpu_model;	/* CPUID display model */
	uint8_t		cpu_stepping;
	uint32_t	pmu_type;	/* perf PMU type of intel_pt */
	uint32_t	trace_pages;	/* trace buffer pages (2^n) */
	uint64_t	config;		/* attr.config of the PT event */
	uint32_t	pid;		/* traced process */
	uint32_t	reserved[3];
};

enum itrace_section_type {
	ITRACE_SEC_END		= 0,
	ITRACE_SEC_TRACE	= 1,
	ITRACE_SEC_PERF		= 2,
	ITRACE_SEC_VDSO		= 3,
	ITRACE_SEC_CMDLINE	= 4,
	ITRACE_SEC_ATTR		= 5,
};

struct itrace_section {
	uint32_t	type;		/* enum itrace_section_type */
	uint32_t	flags;		/* 0 */
	uint64_t	size;		/* payload bytes, excluding padding */
	uint64_t	offset;		/* stream position (TRACE, PERF) */
};

/* Limit on one section: a corrupt size must not make us allocate 2^64. */
#define ITRACE_SEC_MAX		BIT_ULL(34)

/* A contiguous piece of the trace stream. */
struct itrace_segment {
	uint64_t	stream_offset;	/* position in the trace stream */
	size_t		buf_offset;	/* position in itrace_data.trace */
	size_t		size;
	uint32_t	buf_idx;	/* perf.data: the AUX buffer (CPU or thread) */
};

/* A recording, in memory. */
struct itrace_data {
	struct itrace_file_header hdr;
	uint8_t		*trace;		/* all TRACE chunks, concatenated */
	size_t		trace_size;
	struct itrace_segment *segs;	/* contiguous runs of trace */
	size_t		nr_segs;
	uint8_t		*perf;		/* all PERF chunks, concatenated */
	size_t		perf_size;
	uint8_t		*vdso;
	size_t		vdso_size;
	char		*cmdline;	/* NUL separated */
	size_t		cmdline_size;
	/* the file ends early (no END section, a section cut short) */
	int		truncated;
	char		truncated_why[160];
	int		is_perf_data;	/* read from a perf.data */
};

/* Writing (record). */
int itrace_write_header(FILE *f, const struct itrace_file_header *hdr);
int itrace_write_section(FILE *f, uint32_t type, uint64_t offset,
			 const void *data, size_t size);
/* Two-part payload (a ring buffer that wraps). */
int itrace_write_section2(FILE *f, uint32_t type, uint64_t offset,
			  const void *a, size_t asz, const void *b, size_t bsz);

/*
 * Reading.  Returns 0, or -1 with a message (no newline) in err.  A file
 * that ends early (a recording that was interrupted) is read as far as it
 * goes, a section cut short included: d->truncated says so and why.  Only a
 * file whose header is incomplete or wrong is refused.  path "-" reads
 * standard input.
 */
int itrace_parse(const uint8_t *buf, size_t size, struct itrace_data *d,
		 char *err, size_t errlen);
int itrace_read_file(const char *path, struct itrace_data *d,
		     char *err, size_t errlen);
void itrace_data_free(struct itrace_data *d);
/* All of a file ("-": standard input) in a malloc'd buffer: 0, or -1 and err. */
int itrace_read_all(const char *path, uint8_t **buf, size_t *size, char *err, size_t errlen);
/*
 * An itrace recording or a perf.data (a file, a perf record --kcore
 * directory, "-"): as itrace_read_file().  buildid_dir: perf's build-id
 * cache for a perf.data's [vdso] (NULL: $PERF_BUILDID_DIR, else ~/.debug).
 * In perf-data.c: itrace-file.c alone reads itrace recordings.
 */
int itrace_read_any(const char *path, struct itrace_data *d, const char *buildid_dir,
		    char *err, size_t errlen);

/* Header helpers */
void itrace_header_init(struct itrace_file_header *hdr);

#endif /* ITRACE_FILE_H */
