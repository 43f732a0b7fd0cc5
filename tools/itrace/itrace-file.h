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
 * A recording holds one or more buffers, each a trace stream and a perf
 * stream of its own: one per CPU (ITRACE_FLAG_PER_CPU: buffer = CPU), or
 * one (buffer 0) for a recording of one task without inherit.  Every
 * section says its buffer in "buf" (version 1 had a field "flags" there,
 * always 0: buffer 0).  Sections of different buffers interleave in the
 * file in the order they were read.
 *
 * Sections (type):
 *   TRACE   raw trace bytes (Intel PT packets, or BTS records with
 *           ITRACE_FLAG_BTS) copied from the trace fd.
 *           offset = position of the first byte in the buffer's trace
 *           stream (the value of data_tail when it was copied).  Chunks of
 *           a buffer come in stream order; a chunk whose offset is not the
 *           end of the buffer's previous one marks a gap (lost trace, or
 *           trace overwritten between two snapshots), decoded separately.
 *   PERF    bytes of the buffer's perf stream (struct perf_event_header
 *           records: MMAP2, COMM, EXIT, ITRACE_LOST, AUX, SWITCH ... with
 *           the sample_id trailer of the ATTR's sample_type) in stream
 *           order; offset = stream position.  Records never straddle
 *           chunks.  Records that record synthesized (the mappings of
 *           processes that already ran: -p, -a) have such a trailer too.
 *   VDSO    the [vdso] ELF image of the recording kernel (offset unused).
 *   CMDLINE the traced command, NUL separated arguments.
 *   ATTR    the struct perf_event_attr used (attr.size bytes).
 *   TIME    struct itrace_time: TSC to perf time conversion (from the
 *           event's user page) and the CPU's clock ratios (from the PMU's
 *           caps), which a decoder needs for timing packets (MTC, CYC).
 *   SNAPSHOT struct itrace_snapshot, before the TRACE sections of each
 *           snapshot of an overwrite-mode recording (--snapshot).
 *   EVENT   the sampled event as record -e was given it (SAMPLES), text.
 *   END     last section.
 *
 * Unknown section types are skipped by readers (forward compatible);
 * a new incompatible layout bumps ITRACE_FILE_VERSION.
 */
#ifndef ITRACE_FILE_H
#define ITRACE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ITRACE_FILE_MAGIC	"ITRCDATA"
#define ITRACE_FILE_VERSION	2
#define ITRACE_FILE_VERSION_MIN	1	/* oldest version read */

/* The kernel's <linux/bits.h>, which user space does not have. */
#ifndef BIT
#define BIT(nr)			(1UL << (nr))
#endif
#ifndef BIT_ULL
#define BIT_ULL(nr)		(1ULL << (nr))
#endif

/* header flags */
#define ITRACE_FLAG_SNAPSHOT	BIT(0)	/* overwrite-mode recording */
#define ITRACE_FLAG_PER_CPU	BIT(1)	/* one buffer per CPU: buf = CPU */
#define ITRACE_FLAG_CPU_WIDE	BIT(2)	/* CPU-wide events (-a, -C) */
/*
 * Samples with trace (record -e EVENT): no TRACE sections; the PERF
 * sections hold PERF_RECORD_SAMPLE records of the ATTR's event (attr.size
 * 160, PERF_SAMPLE_ITRACE), each ending in { u64 size; char data[size]; }
 * of trace of the PMU pmu_type, beside the sideband of a dummy event.
 */
#define ITRACE_FLAG_SAMPLES	BIT(3)
/*
 * The trace is Intel BTS's (record --pmu intel_bts): TRACE sections hold
 * 24-byte records { u64 from; u64 to; u64 flags; }, one per taken branch,
 * interrupt or exception; all-zero bytes are padding (bts.h).  pmu_type is
 * then intel_bts's type, config 0.  Without the flag: Intel PT packets.
 * Readers that do not know the flag would take the records for PT packets
 * and report decode errors; the layout is unchanged, so no new version.
 * With ITRACE_FLAG_SAMPLES (record --pmu intel_bts -e EVENT): there are no
 * TRACE sections; the trace of each sample is BTS records (the newest whole
 * ones, oldest first, then zeros), pmu_type and the ATTR's
 * itrace_sample_type are intel_bts's type.  The flag, not the type, says
 * so: PMU type numbers are dynamic, different from one machine (or boot)
 * to the next.
 */
#define ITRACE_FLAG_BTS		BIT(4)

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
	ITRACE_SEC_TIME		= 6,
	ITRACE_SEC_SNAPSHOT	= 7,
	ITRACE_SEC_EVENT	= 8,
};

/* ITRACE_SEC_TIME */
struct itrace_time {
	uint64_t	time_zero;	/* perf_event_mmap_page: TSC -> perf time */
	uint32_t	time_mult;
	uint16_t	time_shift;
	uint16_t	flags;		/* ITRACE_TIME_* */
	uint32_t	tsc_ratio_den;	/* CPUID 0x15 EAX (intel_pt caps/tsc_art_ratio) */
	uint32_t	tsc_ratio_num;	/* CPUID 0x15 EBX */
	uint32_t	nom_freq;	/* caps/max_nonturbo_ratio (100 MHz units) */
	uint32_t	reserved;
};

#define ITRACE_TIME_ZERO	BIT(0)	/* time_zero/mult/shift valid */

/* ITRACE_SEC_SNAPSHOT */
struct itrace_snapshot {
	uint32_t	index;		/* 1, 2, ... */
	uint32_t	reason;		/* ITRACE_SNAP_* */
	uint64_t	time;		/* perf time (ns) when it was taken */
};

enum {
	ITRACE_SNAP_EXIT	= 0,	/* at the end of the recording */
	ITRACE_SNAP_SIGNAL	= 1,	/* SIGUSR2 */
	ITRACE_SNAP_SYMBOL	= 2,	/* --snapshot-on SYMBOL reached */
};

struct itrace_section {
	uint32_t	type;		/* enum itrace_section_type */
	uint32_t	buf;		/* buffer (CPU); version 1: 0 */
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
	uint32_t	buf_idx;	/* the buffer (CPU, or perf.data's thread) */
	uint32_t	snapshot;	/* the snapshot it is part of, 0: none */
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
	/*
	 * perf.data of perf record --per-thread of several threads: a
	 * buffer each, by AUXTRACE idx; the CPU of each sideband record's
	 * sample id is its thread's buffer
	 */
	int		bufs_by_thread;
	/* the event's attr (ATTR section): sample_type of the sideband */
	uint8_t		*attr;
	size_t		attr_size;
	struct itrace_time time;	/* TIME section */
	int		has_time;
	char		*event;		/* EVENT section: record -e's EVENT (NUL terminated) */
	struct itrace_snapshot *snaps;	/* SNAPSHOT sections, in file order */
	size_t		nr_snaps;
};

/* Writing (record). */
int itrace_write_header(FILE *f, const struct itrace_file_header *hdr);
int itrace_write_section(FILE *f, uint32_t type, uint64_t offset,
			 const void *data, size_t size);
/* Two-part payload (a ring buffer that wraps). */
int itrace_write_section2(FILE *f, uint32_t type, uint64_t offset,
			  const void *a, size_t asz, const void *b, size_t bsz);
/* The same for buffer buf of a recording with several. */
int itrace_write_buf_section2(FILE *f, uint32_t type, uint32_t buf, uint64_t offset,
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

/* Each buffer's trace in one piece, in stream order (the parsers call it). */
int itrace_regroup(struct itrace_data *d);
/* The sample_type of the recording's sideband (its ATTR), 0 if unknown. */
/* The ATTR section's attr, zero-filled past what it holds; false if none */
struct perf_event_attr;
bool itrace_attr(const struct itrace_data *d, struct perf_event_attr *a);
uint64_t itrace_sample_type(const struct itrace_data *d);

/* Header helpers */
void itrace_header_init(struct itrace_file_header *hdr);

#endif /* ITRACE_FILE_H */
