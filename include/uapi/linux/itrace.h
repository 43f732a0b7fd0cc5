/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * itrace: instruction flow trace in ELF core dumps (RLIMIT_ITRACE)
 *
 * A process that sets RLIMIT_ITRACE keeps the newest trace of each of its
 * threads; its core dump carries one note per thread, after that thread's
 * register notes (NT_PRSTATUS ...):
 *
 *	Elf_Nhdr { n_namesz = 7, n_descsz, n_type = NT_ITRACE }
 *	"ITRACE\0" padded to 4 bytes
 *	struct itrace_note		(hdr_size bytes)
 *	trace				(trace_size bytes, oldest first)
 *
 * See Documentation/userspace-api/itrace.rst.
 */
#ifndef _UAPI_LINUX_ITRACE_H
#define _UAPI_LINUX_ITRACE_H

#include <linux/types.h>

/* Note owner and type: 'ITRC'; the plain numbers belong to CORE/LINUX. */
#define ITRACE_NOTE_NAME	"ITRACE"
#define NT_ITRACE		0x49545243

#define ITRACE_NOTE_VERSION	1

/*
 * struct itrace_note::flags
 * WRAPPED: older trace was overwritten; decode from the first PSB (intel_bts:
 *	from the first record, all are whole).
 * PAUSED: tracing paused at least once (a user's own event of the same
 *	PMU ran while the thread did): the trace has gaps.
 * ERROR: the PMU reported lost trace (an AUX transaction of the buffer
 *	ended PERF_AUX_FLAG_TRUNCATED or PERF_AUX_FLAG_PARTIAL).
 * CLAMPED: RLIMIT_CORE left no room for all of the trace: only the newest
 *	trace_size bytes are here; decode from the first PSB (intel_bts:
 *	whole records).
 */
#define ITRACE_NOTE_WRAPPED	(1U << 0)
#define ITRACE_NOTE_PAUSED	(1U << 1)
#define ITRACE_NOTE_ERROR	(1U << 2)
#define ITRACE_NOTE_CLAMPED	(1U << 3)

/* struct itrace_note::cpu_vendor */
#define ITRACE_CPU_UNKNOWN	0
#define ITRACE_CPU_INTEL	1

/**
 * struct itrace_note - header of an NT_ITRACE note
 * @hdr_size: bytes of this header; the trace starts at this offset into
 *	the note's descriptor. Later versions only append fields.
 * @version: ITRACE_NOTE_VERSION
 * @pmu_name: name of the PMU that wrote the trace ("intel_pt",
 *	"intel_bts"), NUL terminated; the trace format follows from it:
 *	Intel PT packets, or whole 24-byte BTS records { from, to, flags },
 *	oldest first, with every kernel address 0
 * @config: perf_event_attr::config of the trace event, as given (for
 *	intel_pt the IA32_RTIT_CTL bits TSCEn, MTCFreq, ...; 0 is the
 *	driver's default: control flow only, BranchEn)
 * @trace_size: bytes of trace after the header, oldest first
 * @buf_size: bytes of the thread's trace buffer (RLIMIT_ITRACE rounded up
 *	to a power-of-two number of pages)
 * @flags: ITRACE_NOTE_*
 * @tid: the thread, as seen in the dumping process's PID namespace
 * @cpu_vendor: ITRACE_CPU_*
 * @cpu_family: CPU family, as the decoder's errata tables want it
 * @cpu_model: CPU model
 * @cpu_stepping: CPU stepping
 * @tsc_ctc_den: CPUID.15H:EAX, denominator of the TSC/"core crystal
 *	clock" ratio (MTC/TMA decoding), 0 if unknown
 * @tsc_ctc_num: CPUID.15H:EBX, its numerator, 0 if unknown
 * @nom_freq: MSR_PLATFORM_INFO[15:8], the nominal frequency ratio (CBR
 *	and CYC decoding), 0 if unknown
 * @mtc_freq: IA32_RTIT_CTL.MTCFreq of the trace
 * @pauses: times the thread's trace paused because another event of the
 *	PMU held it while the thread ran (see ITRACE_NOTE_PAUSED)
 */
struct itrace_note {
	__u32	hdr_size;
	__u32	version;
	char	pmu_name[32];
	__u64	config;
	__u64	trace_size;
	__u64	buf_size;
	__u32	flags;
	__u32	tid;
	__u32	cpu_vendor;
	__u32	cpu_family;
	__u32	cpu_model;
	__u32	cpu_stepping;
	__u32	tsc_ctc_den;
	__u32	tsc_ctc_num;
	__u32	nom_freq;
	__u32	mtc_freq;
	__u64	pauses;
};

#endif /* _UAPI_LINUX_ITRACE_H */
